//! CloneSet (v1alpha1) validation: every rejection of OpenKruise's CloneSet validating webhook
//! (spec §3.1), as Kubernetes-style field errors, in OpenKruise's order.
//!
//! On UPDATE the update-only rules run first (metadata, immutable spec fields, in-place-only
//! template changes), then every CREATE rule on the new object. The validator sees defaulted
//! objects, as OpenKruise's does after its mutating webhook: the pod template is checked by
//! Kubernetes' rules, which require `restartPolicy`, `dnsPolicy`, `imagePullPolicy` and
//! `terminationMessagePolicy`; an unset `replicas` counts as the default 1. `scaleStrategy.podsToDelete` needs the
//! pods themselves, which the caller provides through [`CloneSetContext`].
//! DELETE is only [`cloneset_deletion_protection`].

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{PersistentVolumeClaimVolumeSource, Pod, Volume};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::field::{
    FieldError, GoRepr, Path, dns1123_subdomain_errors, go_quote, go_string_slice,
    validate_nonnegative, validate_object_meta,
};
use super::workload::{
    DEFAULT_REPLICAS, PatchOp, checked_workload_selector, deletion_protection, differs,
    go_optional_int_or_string, int_or_string_text, is_container_image_path, kruise_scaled_value,
    pod_spec_patch, rollout_order_errors, template_labels_mismatch, template_pod_spec,
    validate_object_meta_update, validate_pod_template, validate_workload_template_policies,
};
use crate::api::cloneset::{
    CloneSet, CloneSetScaleStrategy, CloneSetUpdateStrategy, IN_PLACE_IF_POSSIBLE, IN_PLACE_ONLY,
    RECREATE,
};
use crate::k8s::owner;

/// `progressDeadlineSeconds` meaning "no deadline".
const NO_PROGRESS_DEADLINE: i32 = i32::MAX;

/// What the validator needs to know about a pod named in `scaleStrategy.podsToDelete`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PodFacts {
    /// UID in the pod's controller owner reference, if it has one.
    pub controller_uid: Option<String>,
    /// The pod already has a deletion timestamp.
    pub terminating: bool,
}

impl PodFacts {
    pub fn of(pod: &Pod) -> PodFacts {
        let controller_uid = owner::controller_of(&pod.metadata).map(|o| o.uid.clone());
        PodFacts {
            controller_uid,
            terminating: pod.metadata.deletion_timestamp.is_some(),
        }
    }
}

/// Pods of the CloneSet's namespace, by name. `Err` is the lookup failure worded as the
/// apiserver words it (`pods "p1" not found`).
pub trait PodLookup {
    fn pod(&self, name: &str) -> Result<PodFacts, String>;
}

impl PodLookup for BTreeMap<String, PodFacts> {
    fn pod(&self, name: &str) -> Result<PodFacts, String> {
        self.get(name)
            .cloned()
            .ok_or_else(|| format!("pods {} not found", go_quote(name)))
    }
}

static NO_PODS: BTreeMap<String, PodFacts> = BTreeMap::new();

/// What OpenKruise looks up in the cluster while validating a CloneSet.
#[derive(Clone, Copy)]
pub struct CloneSetContext<'a> {
    /// `Sync` so that a context can be held across an `.await` in a request handler. `None`:
    /// the caller does not know the pods, and pods newly named in `podsToDelete` are not looked
    /// up (only duplicates are refused, as for v1beta1).
    pub pods: Option<&'a (dyn PodLookup + Sync)>,
}

impl<'a> CloneSetContext<'a> {
    pub fn new(pods: &'a (dyn PodLookup + Sync)) -> CloneSetContext<'a> {
        CloneSetContext { pods: Some(pods) }
    }

    /// A context for a caller that does not watch pods.
    pub fn without_pods() -> CloneSetContext<'static> {
        CloneSetContext { pods: None }
    }
}

/// A context that knows no pods: every pod newly named in `podsToDelete` is "not found".
impl Default for CloneSetContext<'static> {
    fn default() -> Self {
        CloneSetContext {
            pods: Some(&NO_PODS),
        }
    }
}

/// Every reason to reject `new` (CREATE: `old` is `None`; UPDATE: the stored object).
pub fn validate_cloneset(
    new: &CloneSet,
    old: Option<&CloneSet>,
    ctx: &CloneSetContext<'_>,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if let Some(old) = old {
        errors.extend(validate_update(new, old));
    }
    errors.extend(validate_object_meta(
        &new.metadata,
        true,
        dns1123_subdomain_errors,
        &Path::new("metadata"),
    ));
    errors.extend(validate_spec(new, old, ctx));
    errors
}

/// Why deleting `set` is refused (HTTP 403), if it is.
pub fn cloneset_deletion_protection(set: &CloneSet) -> Option<String> {
    deletion_protection(
        set.metadata.labels.as_ref(),
        set.spec.replicas,
        set.metadata.deletion_timestamp.is_some(),
    )
}

/// Accepted but probably not what the author meant.
pub fn cloneset_warnings(set: &CloneSet) -> Vec<String> {
    let mut warnings = Vec::new();
    let replicas = set.spec.replicas.unwrap_or(DEFAULT_REPLICAS);
    let strategy = &set.spec.update_strategy;
    if replicas > 0 {
        if let Some(partition) = &strategy.partition
            && kruise_scaled_value(Some(partition), replicas, true)
                .is_ok_and(|p| p >= i64::from(replicas))
        {
            warnings.push(format!(
                "spec.updateStrategy.partition {} keeps all {replicas} pods at the old revision: template changes will not roll out",
                int_or_string_text(partition)
            ));
        }
        if let Some(max_unavailable) = &strategy.max_unavailable
            && replicas > 1
            && kruise_scaled_value(Some(max_unavailable), replicas, true)
                .is_ok_and(|m| m >= i64::from(replicas))
        {
            warnings.push(format!(
                "spec.updateStrategy.maxUnavailable {} lets all {replicas} pods be unavailable at once during an update",
                int_or_string_text(max_unavailable)
            ));
        }
    }
    warnings.extend(fractional_percent_warnings(set));
    if strategy.paused == Some(true) {
        warnings
            .push("spec.updateStrategy.paused is true: no pod is updated until it is unset".into());
    }
    if strategy.priority_strategy.is_some()
        && strategy
            .scatter_strategy
            .as_ref()
            .is_some_and(|s| !s.is_empty())
    {
        warnings.push(
            "spec.updateStrategy sets both priorityStrategy and scatterStrategy: pods are scattered after the priority sort, which makes the update order hard to predict"
                .into(),
        );
    }
    warnings
}

/// A fractional percentage (`"12.5%"`) is valid for OpenKruise's webhook, which parses it as a
/// float, but OpenKruise's controller reads these fields with Kubernetes' integer-only parser:
/// it fails, uses 0 and moves nothing. This controller rounds the update and scale budgets as the
/// webhook does, and rolls; `maxSurge` it reads as 0 too. Each warning names the value and both
/// behaviours, so that a manifest that rolls here is not mistaken for one that rolls on
/// OpenKruise.
fn fractional_percent_warnings(set: &CloneSet) -> Vec<String> {
    let fractional = |value: Option<&IntOrString>| -> Option<String> {
        let Some(IntOrString::String(text)) = value else {
            return None;
        };
        let integer = text
            .strip_suffix('%')
            .is_some_and(|number| number.parse::<i64>().is_ok());
        (!integer && kruise_scaled_value(value, 1, true).is_ok()).then(|| text.clone())
    };
    let strategy = &set.spec.update_strategy;
    let mut warnings = Vec::new();
    if let Some(text) = fractional(strategy.max_unavailable.as_ref()) {
        warnings.push(format!(
            "spec.updateStrategy.maxUnavailable: {text:?} is a fractional percentage: OpenKruise's controller cannot parse it, uses 0 and updates no pod (unless maxSurge adds pods first); this controller takes {text} of the replicas, rounded up (down when maxSurge is set), and rolls the update"
        ));
    }
    if let Some(text) = fractional(strategy.max_surge.as_ref()) {
        warnings.push(format!(
            "spec.updateStrategy.maxSurge: {text:?} is a fractional percentage: OpenKruise's controller and this one both cannot parse it and use 0, so no pod is added for the update"
        ));
    }
    if let Some(text) = fractional(set.spec.scale_strategy.max_unavailable.as_ref()) {
        warnings.push(format!(
            "spec.scaleStrategy.maxUnavailable: {text:?} is a fractional percentage: OpenKruise's controller cannot parse it, uses 0 and creates no pod when scaling up; this controller takes {text} of the replicas, rounded up, and scales"
        ));
    }
    warnings
}

// ---------------------------------------------------------------------------------------------
// UPDATE-only rules

fn validate_update(new: &CloneSet, old: &CloneSet) -> Vec<FieldError> {
    let mut errors =
        validate_object_meta_update(&new.metadata, &old.metadata, &Path::new("metadata"));
    let spec = Path::new("spec");
    if changes_immutable_fields(new, old) {
        errors.push(FieldError::forbidden(
            &spec,
            "updates to cloneset spec for fields other than 'replicas', 'template', 'lifecycle', 'scaleStrategy', 'updateStrategy', 'minReadySeconds', 'volumeClaimTemplates', 'progressDeadlineSeconds' and 'revisionHistoryLimit' are forbidden",
        ));
    }
    if let Some(op) = in_place_only_violation(new, old) {
        errors.push(FieldError::forbidden(
            &spec,
            format!(
                "only allowed to update images in spec for {IN_PLACE_ONLY}, but found {} {}",
                op.op, op.path
            ),
        ));
    }
    errors
}

/// The spec with every mutable field taken from `old` must equal `old`'s.
fn changes_immutable_fields(new: &CloneSet, old: &CloneSet) -> bool {
    let mut masked = new.spec.clone();
    masked.replicas = old.spec.replicas;
    masked.template = old.spec.template.clone();
    masked.volume_claim_templates = old.spec.volume_claim_templates.clone();
    masked.scale_strategy = old.spec.scale_strategy.clone();
    masked.update_strategy = old.spec.update_strategy.clone();
    masked.min_ready_seconds = old.spec.min_ready_seconds;
    masked.lifecycle = old.spec.lifecycle.clone();
    masked.revision_history_limit = old.spec.revision_history_limit;
    masked.progress_deadline_seconds = old.spec.progress_deadline_seconds;
    differs(&masked, &old.spec)
}

/// With `InPlaceOnly` the pod spec may only change container images.
fn in_place_only_violation(new: &CloneSet, old: &CloneSet) -> Option<PatchOp> {
    if new.update_type() != IN_PLACE_ONLY {
        return None;
    }
    pod_spec_patch(
        &template_pod_spec(&old.spec.template),
        &template_pod_spec(&new.spec.template),
    )
    .into_iter()
    .find(|op| op.op != "replace" || !is_container_image_path(&op.path))
}

// ---------------------------------------------------------------------------------------------
// Spec rules (CREATE and UPDATE)

fn validate_spec(
    set: &CloneSet,
    old: Option<&CloneSet>,
    ctx: &CloneSetContext<'_>,
) -> Vec<FieldError> {
    let spec = &set.spec;
    let path = Path::new("spec");
    let replicas = spec.replicas.unwrap_or(DEFAULT_REPLICAS);
    let mut errors = validate_nonnegative(i64::from(replicas), &path.child("replicas"));

    if let Some(selector) = checked_workload_selector(
        spec.selector.as_ref(),
        "cloneset",
        &path.child("selector"),
        &mut errors,
    ) {
        errors.extend(template_labels_mismatch(selector, &spec.template, &path));
        errors.extend(validate_pod_template(
            &spec.template,
            &claim_volumes(set),
            &path.child("template"),
        ));
    }
    errors.extend(validate_workload_template_policies(
        &spec.template,
        true,
        "cloneset",
        &path,
    ));

    errors.extend(validate_scale_strategy(
        &spec.scale_strategy,
        old.map(|o| &o.spec.scale_strategy),
        set.metadata.uid.as_deref().unwrap_or(""),
        ctx,
        &path.child("scaleStrategy"),
    ));
    errors.extend(validate_update_strategy(
        &spec.update_strategy,
        replicas,
        &path.child("updateStrategy"),
    ));
    errors.extend(validate_progress_deadline(set, &path));
    errors
}

/// Each volume claim template becomes a PVC volume of the same name, so the template may mount it.
fn claim_volumes(set: &CloneSet) -> Vec<Volume> {
    set.spec
        .volume_claim_templates
        .iter()
        .flatten()
        .map(|claim| {
            let name = claim.metadata.name.clone().unwrap_or_default();
            Volume {
                name: name.clone(),
                persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                    claim_name: name,
                    read_only: Some(false),
                }),
                ..Default::default()
            }
        })
        .collect()
}

/// `podsToDelete`: no duplicates; every pod newly named must exist, not be terminating and be
/// controlled by this CloneSet.
fn validate_scale_strategy(
    strategy: &CloneSetScaleStrategy,
    old: Option<&CloneSetScaleStrategy>,
    uid: &str,
    ctx: &CloneSetContext<'_>,
    path: &Path,
) -> Vec<FieldError> {
    let names = strategy.pods_to_delete.as_deref().unwrap_or(&[]);
    let list_path = path.child("podsToDelete");
    let mut seen = BTreeSet::new();
    let duplicates: Vec<&str> = names
        .iter()
        .filter(|name| !seen.insert(name.as_str()))
        .map(String::as_str)
        .collect();
    if !duplicates.is_empty() {
        return vec![FieldError::invalid(
            &list_path,
            GoRepr(go_string_slice(Some(names))),
            format!("duplicated items [{}]", duplicates.join(" ")),
        )];
    }
    let already_named: BTreeSet<&str> = old
        .and_then(|o| o.pods_to_delete.as_deref())
        .into_iter()
        .flatten()
        .map(String::as_str)
        .collect();
    let Some(pods) = ctx.pods else {
        return Vec::new();
    };
    let mut errors = Vec::new();
    // `seen` is sorted, as upstream walks `sets.String.List()`.
    for name in seen.into_iter().filter(|n| !already_named.contains(n)) {
        let problem = match pods.pod(name) {
            Err(cause) => Some(format!("find pod {name} failed: {cause}")),
            Ok(pod) if pod.terminating => Some(format!("find pod {name} already terminating")),
            Ok(pod) if pod.controller_uid.as_deref() != Some(uid) => {
                Some(format!("find pod {name} owner is not this CloneSet"))
            }
            Ok(_) => None,
        };
        if let Some(problem) = problem {
            errors.push(FieldError::invalid(&list_path, name, problem));
        }
    }
    errors
}

fn validate_update_strategy(
    strategy: &CloneSetUpdateStrategy,
    replicas: i32,
    path: &Path,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let strategy_type = strategy.type_.as_deref().unwrap_or("");
    if ![RECREATE, IN_PLACE_IF_POSSIBLE, IN_PLACE_ONLY].contains(&strategy_type) {
        errors.push(FieldError::invalid(
            &path.child("type"),
            strategy_type,
            format!("must be '{RECREATE}', {IN_PLACE_IF_POSSIBLE} or '{IN_PLACE_ONLY}'"),
        ));
    }

    let partition_path = path.child("partition");
    let partition = scaled_or_error(
        strategy.partition.as_ref(),
        replicas,
        "partition",
        &partition_path,
        &mut errors,
    );
    errors.extend(validate_nonnegative(partition, &partition_path));

    errors.extend(rollout_order_errors(
        strategy.priority_strategy.as_ref(),
        strategy.scatter_strategy.as_deref(),
        path,
    ));

    let unavailable_path = path.child("maxUnavailable");
    let max_unavailable = scaled_or_error(
        strategy.max_unavailable.as_ref(),
        replicas,
        "maxUnavailable",
        &unavailable_path,
        &mut errors,
    );
    let surge_path = path.child("maxSurge");
    let max_surge = scaled_or_error(
        strategy.max_surge.as_ref(),
        replicas,
        "maxSurge",
        &surge_path,
        &mut errors,
    );
    if let Some(surge) = &strategy.max_surge
        && strategy_type == IN_PLACE_ONLY
        && max_surge > 0
    {
        errors.push(FieldError::invalid(
            &surge_path,
            int_or_string_text(surge),
            format!("can not use maxSurge with strategy type {IN_PLACE_ONLY}"),
        ));
    }
    // Unset values count as 0 here; the defaulting webhook sets maxUnavailable 20%.
    if replicas > 0 && max_unavailable < 1 && max_surge < 1 {
        errors.push(FieldError::invalid(
            &unavailable_path,
            go_optional_int_or_string(strategy.max_unavailable.as_ref()),
            "maxUnavailable and maxSurge should not both be less than 1",
        ));
    }
    errors
}

/// The value scaled with OpenKruise's scaler (rounding up), or 0 after reporting why it cannot be.
fn scaled_or_error(
    value: Option<&IntOrString>,
    replicas: i32,
    field: &str,
    path: &Path,
    errors: &mut Vec<FieldError>,
) -> i64 {
    match kruise_scaled_value(value, replicas, true) {
        Ok(scaled) => scaled,
        Err(cause) => {
            errors.push(FieldError::invalid(
                path,
                value.map(int_or_string_text).unwrap_or_default(),
                format!("failed GetScaledValueFromIntOrPercent for {field}: {cause}"),
            ));
            0
        }
    }
}

/// OpenKruise HEAD: a deadline must be non-negative and, unless it is "none" (MaxInt32), longer
/// than `minReadySeconds`.
fn validate_progress_deadline(set: &CloneSet, spec: &Path) -> Vec<FieldError> {
    let Some(deadline) = set.spec.progress_deadline_seconds else {
        return Vec::new();
    };
    let path = spec.child("progressDeadlineSeconds");
    let mut errors = validate_nonnegative(i64::from(deadline), &path);
    if deadline != NO_PROGRESS_DEADLINE && deadline <= set.spec.min_ready_seconds.unwrap_or(0) {
        errors.push(FieldError::invalid(
            &path,
            deadline,
            "must be greater than minReadySeconds",
        ));
    }
    errors
}

#[cfg(test)]
mod tests;
