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

use super::field::{
    FieldError, GoRepr, Path, dns1123_subdomain_errors, go_label_selector, go_quote,
    go_string_slice, validate_nonnegative, validate_object_meta,
};
use super::workload::{
    DEFAULT_REPLICAS, PatchOp, Selector, deletion_protection, differs, go_optional_int_or_string,
    int_or_string_text, is_container_image_path, kruise_scaled_value, pod_spec_patch,
    rollout_order_errors, template_labels_mismatch, template_pod_spec, validate_object_meta_update,
    validate_pod_template, validate_workload_selector, validate_workload_template_policies,
};
use crate::api::cloneset::{
    CloneSet, CloneSetScaleStrategy, CloneSetUpdateStrategy, IN_PLACE_IF_POSSIBLE, IN_PLACE_ONLY,
    RECREATE,
};

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
        let controller_uid = pod
            .metadata
            .owner_references
            .iter()
            .flatten()
            .find(|owner| owner.controller == Some(true))
            .map(|owner| owner.uid.clone());
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

    let selector_path = path.child("selector");
    match &spec.selector {
        None => errors.push(FieldError::required(&selector_path, "")),
        Some(selector) => errors.extend(validate_workload_selector(
            selector,
            "cloneset",
            &selector_path,
        )),
    }
    match Selector::convert(spec.selector.as_ref()) {
        Err(_) => errors.push(FieldError::invalid(
            &selector_path,
            GoRepr(
                spec.selector
                    .as_ref()
                    .map_or_else(|| "null".into(), go_label_selector),
            ),
            "",
        )),
        Ok(selector) => {
            errors.extend(template_labels_mismatch(selector, &spec.template, &path));
            errors.extend(validate_pod_template(
                &spec.template,
                &claim_volumes(set),
                &path.child("template"),
            ));
        }
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
    value: Option<&k8s_openapi::apimachinery::pkg::util::intstr::IntOrString>,
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
mod tests {
    use super::*;
    use crate::validate::field::aggregate;
    use serde_json::{Value, json};

    const UID: &str = "6a1c1b2e-0000-4000-8000-000000000001";

    fn cluster() -> BTreeMap<String, PodFacts> {
        BTreeMap::from([
            (
                "p0".to_string(),
                PodFacts {
                    controller_uid: Some(UID.into()),
                    terminating: false,
                },
            ),
            (
                "gone".to_string(),
                PodFacts {
                    controller_uid: Some(UID.into()),
                    terminating: true,
                },
            ),
            (
                "stranger".to_string(),
                PodFacts {
                    controller_uid: Some("someone-else".into()),
                    terminating: false,
                },
            ),
        ])
    }

    /// §5.7 base CloneSet.
    fn base() -> Value {
        json!({
            "apiVersion": "apps.kruise.io/v1alpha1",
            "kind": "CloneSet",
            "metadata": {"name": "cs-1", "namespace": "default", "uid": UID, "resourceVersion": "2"},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"a": "b"}},
                "template": {
                    "metadata": {"labels": {"a": "b"}},
                    "spec": {
                        "restartPolicy": "Always",
                        "dnsPolicy": "ClusterFirst",
                        "containers": [{"name": "abc", "image": "image", "imagePullPolicy": "IfNotPresent", "terminationMessagePolicy": "File"}]
                    }
                },
                "updateStrategy": {"type": "InPlaceIfPossible", "partition": 2, "maxUnavailable": 1}
            }
        })
    }

    /// `base` with a JSON merge patch applied (`null` removes a key).
    fn with(patch: Value) -> Value {
        let mut value = base();
        json_patch::merge(&mut value, &patch);
        value
    }

    fn decode(value: Value) -> CloneSet {
        serde_json::from_value(value).unwrap()
    }

    /// The sorted, distinct error paths of validating `new` (against `old` when given).
    fn paths(new: Value, old: Option<Value>) -> Vec<String> {
        let pods = cluster();
        let ctx = CloneSetContext::new(&pods);
        let old = old.map(decode);
        let errors = validate_cloneset(&decode(new), old.as_ref(), &ctx);
        let mut paths: Vec<String> = errors.iter().map(|e| e.path.clone()).collect();
        paths.sort();
        paths.dedup();
        paths
    }

    fn messages(new: Value, old: Option<Value>) -> String {
        let pods = cluster();
        let old = old.map(decode);
        aggregate(&validate_cloneset(
            &decode(new),
            old.as_ref(),
            &CloneSetContext::new(&pods),
        ))
    }

    struct Case {
        name: &'static str,
        new: Value,
        old: Option<Value>,
        /// Expected error paths; empty means accepted.
        expect: &'static [&'static str],
    }

    fn ok(name: &'static str, new: Value) -> Case {
        Case {
            name,
            new,
            old: None,
            expect: &[],
        }
    }

    fn err(name: &'static str, new: Value, expect: &'static [&'static str]) -> Case {
        Case {
            name,
            new,
            old: None,
            expect,
        }
    }

    fn update(name: &'static str, old: Value, new: Value, expect: &'static [&'static str]) -> Case {
        Case {
            name,
            new,
            old: Some(old),
            expect,
        }
    }

    fn run(cases: Vec<Case>) {
        for case in cases {
            let mut expect: Vec<String> = case.expect.iter().map(|p| p.to_string()).collect();
            expect.sort();
            expect.dedup();
            let got = paths(case.new.clone(), case.old.clone());
            assert_eq!(
                got,
                expect,
                "{}: {}",
                case.name,
                messages(case.new, case.old)
            );
        }
    }

    fn image_update(
        old_image: &str,
        old_pull: &str,
        new_image: &str,
        new_pull: &str,
        strategy: &str,
    ) -> (Value, Value) {
        let container = |image: &str, pull: &str| {
            json!({"spec": {"template": {"spec": {"containers": [{"name": "abc", "image": image, "imagePullPolicy": pull, "terminationMessagePolicy": "File"}]}}},
                   "metadata": {}})
        };
        let mut old = with(container(old_image, old_pull));
        old["metadata"]["resourceVersion"] = json!("1");
        let mut new = with(container(new_image, new_pull));
        new["spec"]["updateStrategy"]["type"] = json!(strategy);
        (old, new)
    }

    #[test]
    fn section_5_7_cases() {
        let (cs17_old, cs17_new) =
            image_update("image2", "Always", "image", "IfNotPresent", "InPlaceOnly");
        run(vec![
            ok(
                "CS-1 podsToDelete [p0]",
                with(json!({"spec": {"scaleStrategy": {"podsToDelete": ["p0"]}}})),
            ),
            ok(
                "CS-2 maxSurge 1",
                with(json!({"spec": {"updateStrategy": {"maxSurge": 1}}})),
            ),
            ok(
                "CS-3 maxUnavailable 0 maxSurge 1",
                with(json!({"spec": {"updateStrategy": {"maxUnavailable": 0, "maxSurge": 1}}})),
            ),
            ok(
                "CS-4 maxUnavailable 120%",
                with(json!({"spec": {"updateStrategy": {"maxUnavailable": "120%"}}})),
            ),
            ok(
                "CS-4 with weightPriority",
                with(
                    json!({"spec": {"updateStrategy": {"maxUnavailable": "120%", "priorityStrategy": {"weightPriority": [{"weight": 20, "matchSelector": {"matchLabels": {"key": "foo"}}}]}}}}),
                ),
            ),
            update(
                "CS-5 update: replicas, image, limit, podsToDelete, VCT, strategy",
                {
                    let mut old = with(json!({"spec": {
                        "replicas": 2,
                        "revisionHistoryLimit": 2,
                        "scaleStrategy": {"podsToDelete": ["p1"]},
                        "volumeClaimTemplates": [{"metadata": {"name": "foo"}, "spec": {"resources": {"requests": {"storage": "60Gi"}}}}],
                        "updateStrategy": {"type": "ReCreate"},
                        "template": {"spec": {"containers": [{"name": "abc", "image": "image1", "imagePullPolicy": "IfNotPresent", "terminationMessagePolicy": "File"}]}}
                    }}));
                    old["metadata"]["resourceVersion"] = json!("1");
                    old
                },
                with(json!({"spec": {
                    "replicas": 1,
                    "revisionHistoryLimit": 1,
                    "scaleStrategy": {"podsToDelete": ["p0"]},
                    "volumeClaimTemplates": [{"metadata": {"name": "foo"}, "spec": {"resources": {"requests": {"storage": "30Gi"}}}}],
                    "updateStrategy": {"type": "InPlaceOnly"}
                }})),
                &[],
            ),
            update(
                "CS-6 update progressDeadlineSeconds",
                {
                    let mut old = with(
                        json!({"spec": {"progressDeadlineSeconds": 10, "minReadySeconds": 5}}),
                    );
                    old["metadata"]["resourceVersion"] = json!("1");
                    old
                },
                with(
                    json!({"spec": {"progressDeadlineSeconds": 2147483647, "minReadySeconds": 2147483647}}),
                ),
                &[],
            ),
            err(
                "CS-7 replicas -1",
                with(json!({"spec": {"replicas": -1}})),
                &["spec.replicas"],
            ),
            err(
                "CS-8 bad template label key, no containers",
                with(
                    json!({"spec": {"template": {"metadata": {"labels": {"a": "b", "bad key": "v"}}, "spec": {"containers": null}}}}),
                ),
                &["spec.template.labels", "spec.template.spec.containers"],
            ),
            err(
                "CS-9 selector does not match",
                with(json!({"spec": {"selector": {"matchLabels": {"a": "b", "c": "d"}}}})),
                &["spec.template.metadata.labels"],
            ),
            err(
                "CS-10 type empty",
                with(json!({"spec": {"updateStrategy": {"type": ""}}})),
                &["spec.updateStrategy.type"],
            ),
            err(
                "CS-11 partition -1",
                with(json!({"spec": {"updateStrategy": {"partition": -1}}})),
                &["spec.updateStrategy.partition"],
            ),
            err(
                "CS-12 maxUnavailable 0",
                with(json!({"spec": {"updateStrategy": {"maxUnavailable": 0}}})),
                &["spec.updateStrategy.maxUnavailable"],
            ),
            err(
                "CS-13 maxUnavailable 0 maxSurge 0",
                with(json!({"spec": {"updateStrategy": {"maxUnavailable": 0, "maxSurge": 0}}})),
                &["spec.updateStrategy.maxUnavailable"],
            ),
            err(
                "CS-14 duplicated podsToDelete",
                with(json!({"spec": {"scaleStrategy": {"podsToDelete": ["p0", "p0"]}}})),
                &["spec.scaleStrategy.podsToDelete"],
            ),
            err(
                "CS-15 podsToDelete with a missing pod",
                with(json!({"spec": {"scaleStrategy": {"podsToDelete": ["p0", "p1"]}}})),
                &["spec.scaleStrategy.podsToDelete"],
            ),
            err(
                "CS-16 podsToDelete [p1]",
                with(json!({"spec": {"scaleStrategy": {"podsToDelete": ["p1"]}}})),
                &["spec.scaleStrategy.podsToDelete"],
            ),
            update(
                "CS-17 InPlaceOnly changes imagePullPolicy",
                cs17_old,
                cs17_new,
                &["spec"],
            ),
            err(
                "CS-18 maxSurge \"5\" (create)",
                with(json!({"spec": {"updateStrategy": {"type": "ReCreate", "maxSurge": "5"}}})),
                &["spec.updateStrategy.maxSurge"],
            ),
            update(
                "CS-18 maxSurge \"5\" (update)",
                {
                    let mut old = with(json!({"spec": {"updateStrategy": {"type": "ReCreate"}}}));
                    old["metadata"]["resourceVersion"] = json!("1");
                    old
                },
                with(json!({"spec": {"updateStrategy": {"type": "ReCreate", "maxSurge": "5"}}})),
                &["spec.updateStrategy.maxSurge"],
            ),
            err(
                "CS-19 maxUnavailable \"5\" (create)",
                with(json!({"spec": {"updateStrategy": {"maxUnavailable": "5"}}})),
                &["spec.updateStrategy.maxUnavailable"],
            ),
            update(
                "CS-19 maxUnavailable \"5\" (update)",
                {
                    let mut old = base();
                    old["metadata"]["resourceVersion"] = json!("1");
                    old
                },
                with(json!({"spec": {"updateStrategy": {"maxUnavailable": "5"}}})),
                &["spec.updateStrategy.maxUnavailable"],
            ),
            err(
                "CS-20 progressDeadlineSeconds -1",
                with(json!({"spec": {"progressDeadlineSeconds": -1}})),
                &["spec.progressDeadlineSeconds"],
            ),
            err(
                "CS-20 deadline equal to minReadySeconds",
                with(json!({"spec": {"progressDeadlineSeconds": 10, "minReadySeconds": 10}})),
                &["spec.progressDeadlineSeconds"],
            ),
            err(
                "CS-20 deadline below minReadySeconds",
                with(json!({"spec": {"progressDeadlineSeconds": 10, "minReadySeconds": 15}})),
                &["spec.progressDeadlineSeconds"],
            ),
            update(
                "CS-21 selector change",
                {
                    let mut old = with(
                        json!({"spec": {"selector": {"matchLabels": {"a": null, "app": "webserver"}}, "template": {"metadata": {"labels": {"app": "webserver", "a": "b"}}}}}),
                    );
                    old["metadata"]["resourceVersion"] = json!("1");
                    old
                },
                with(
                    json!({"spec": {"template": {"metadata": {"labels": {"app": "webserver", "a": "b"}}}}}),
                ),
                &["spec"],
            ),
        ]);
    }

    #[test]
    fn one_case_per_rule() {
        run(vec![
            // 1 replicas
            ok(
                "1 replicas 0",
                with(json!({"spec": {"replicas": 0, "updateStrategy": {"maxUnavailable": 0}}})),
            ),
            // 2 selector
            err(
                "2 no selector",
                with(json!({"spec": {"selector": null}})),
                &["spec.selector", "spec.template.metadata.labels"],
            ),
            err(
                "2 empty selector",
                with(json!({"spec": {"selector": {"matchLabels": null}}})),
                &["spec.selector"],
            ),
            err(
                "2 invalid selector value",
                with(
                    json!({"spec": {"selector": {"matchLabels": {"a": "b!"}}, "template": {"metadata": {"labels": {"a": "b!"}}}}}),
                ),
                &["spec.selector.matchLabels", "spec.selector"],
            ),
            ok(
                "2 expression selector",
                with(
                    json!({"spec": {"selector": {"matchExpressions": [{"key": "a", "operator": "In", "values": ["b", "c"]}]}}}),
                ),
            ),
            // 3 selector/labels
            err(
                "3 labels missing",
                with(json!({"spec": {"template": {"metadata": {"labels": null}}}})),
                &["spec.template.metadata.labels"],
            ),
            // 4 template, with claim templates as volumes
            ok(
                "4 mount of a claim template",
                with(json!({"spec": {
                    "volumeClaimTemplates": [{"metadata": {"name": "data"}}],
                    "template": {"spec": {"containers": [{"name": "abc", "image": "image", "imagePullPolicy": "IfNotPresent", "terminationMessagePolicy": "File", "volumeMounts": [{"name": "data", "mountPath": "/data"}]}]}}
                }})),
            ),
            err(
                "4 mount of nothing",
                with(
                    json!({"spec": {"template": {"spec": {"containers": [{"name": "abc", "image": "image", "imagePullPolicy": "IfNotPresent", "terminationMessagePolicy": "File", "volumeMounts": [{"name": "data", "mountPath": "/data"}]}]}}}}),
                ),
                &["spec.template.spec.containers[0].volumeMounts[0].name"],
            ),
            err(
                "4 missing image and dnsPolicy",
                with(
                    json!({"spec": {"template": {"spec": {"dnsPolicy": null, "containers": [{"name": "abc", "imagePullPolicy": "IfNotPresent", "terminationMessagePolicy": "File"}]}}}}),
                ),
                &[
                    "spec.template.spec.containers[0].image",
                    "spec.template.spec.dnsPolicy",
                ],
            ),
            // 5 restartPolicy
            err(
                "5 restartPolicy Never",
                with(json!({"spec": {"template": {"spec": {"restartPolicy": "Never"}}}})),
                &["spec.template.spec.restartPolicy"],
            ),
            // 6 activeDeadlineSeconds
            err(
                "6 activeDeadlineSeconds",
                with(json!({"spec": {"template": {"spec": {"activeDeadlineSeconds": 60}}}})),
                &["spec.template.spec.activeDeadlineSeconds"],
            ),
            // 7 podsToDelete
            err(
                "7 terminating pod",
                with(json!({"spec": {"scaleStrategy": {"podsToDelete": ["gone"]}}})),
                &["spec.scaleStrategy.podsToDelete"],
            ),
            err(
                "7 pod of another owner",
                with(json!({"spec": {"scaleStrategy": {"podsToDelete": ["stranger"]}}})),
                &["spec.scaleStrategy.podsToDelete"],
            ),
            // 8 type
            ok(
                "8 ReCreate",
                with(json!({"spec": {"updateStrategy": {"type": "ReCreate"}}})),
            ),
            err(
                "8 OnDelete",
                with(json!({"spec": {"updateStrategy": {"type": "OnDelete"}}})),
                &["spec.updateStrategy.type"],
            ),
            // 9 partition
            ok(
                "9 partition above replicas",
                with(json!({"spec": {"updateStrategy": {"partition": "150%"}}})),
            ),
            err(
                "9 partition not a percent",
                with(json!({"spec": {"updateStrategy": {"partition": "1"}}})),
                &["spec.updateStrategy.partition"],
            ),
            // 10 priority
            err(
                "10 both priorities",
                with(json!({"spec": {"updateStrategy": {"priorityStrategy": {
                    "weightPriority": [{"weight": 20, "matchSelector": {"matchLabels": {"key": "foo"}}}],
                    "orderPriority": [{"orderedKey": "k"}]
                }}}})),
                &["spec.updateStrategy.priorityStrategy"],
            ),
            ok(
                "10 order priority",
                with(
                    json!({"spec": {"updateStrategy": {"priorityStrategy": {"orderPriority": [{"orderedKey": "k"}]}}}}),
                ),
            ),
            // 11 scatter
            ok(
                "11 scatter",
                with(
                    json!({"spec": {"updateStrategy": {"scatterStrategy": [{"key": "zone", "value": "a"}]}}}),
                ),
            ),
            err(
                "11 duplicated scatter",
                with(
                    json!({"spec": {"updateStrategy": {"scatterStrategy": [{"key": "zone", "value": "a"}, {"key": "zone", "value": "a"}]}}}),
                ),
                &["spec.updateStrategy.scatterStrategy"],
            ),
            // 12 parseable maxUnavailable / maxSurge
            ok(
                "12 fractional percent",
                with(json!({"spec": {"updateStrategy": {"maxUnavailable": "12.5%"}}})),
            ),
            err(
                "12 garbage percent",
                with(json!({"spec": {"updateStrategy": {"maxSurge": "x%"}}})),
                &["spec.updateStrategy.maxSurge"],
            ),
            // 13 InPlaceOnly and surge
            err(
                "13 InPlaceOnly with maxSurge",
                with(
                    json!({"spec": {"updateStrategy": {"type": "InPlaceOnly", "maxSurge": "50%"}}}),
                ),
                &["spec.updateStrategy.maxSurge"],
            ),
            ok(
                "13 InPlaceOnly with maxSurge 0",
                with(json!({"spec": {"updateStrategy": {"type": "InPlaceOnly", "maxSurge": 0}}})),
            ),
            // 14 not both below 1
            err(
                "14 unset maxUnavailable",
                with(json!({"spec": {"updateStrategy": {"maxUnavailable": null}}})),
                &["spec.updateStrategy.maxUnavailable"],
            ),
            ok(
                "14 tiny percent rounds up",
                with(json!({"spec": {"updateStrategy": {"maxUnavailable": "1%"}}})),
            ),
            // 15 progress deadline
            ok(
                "15 deadline above minReadySeconds",
                with(json!({"spec": {"progressDeadlineSeconds": 600, "minReadySeconds": 10}})),
            ),
            // metadata
            err(
                "18 bad name",
                with(json!({"metadata": {"name": "Bad_Name"}})),
                &["metadata.name"],
            ),
            err(
                "18 no namespace",
                with(json!({"metadata": {"namespace": null}})),
                &["metadata.namespace"],
            ),
        ]);
    }

    fn stored(patch: Value) -> Value {
        let mut old = with(patch);
        old["metadata"]["resourceVersion"] = json!("1");
        old
    }

    #[test]
    fn update_rules() {
        let (image_only_old, image_only_new) = image_update(
            "image2",
            "IfNotPresent",
            "image",
            "IfNotPresent",
            "InPlaceOnly",
        );
        let (recreate_old, recreate_new) =
            image_update("image2", "Always", "image", "IfNotPresent", "ReCreate");
        run(vec![
            update(
                "16 metadata-only update",
                stored(json!({})),
                with(json!({"metadata": {"labels": {"x": "y"}}})),
                &[],
            ),
            update(
                "16 minReadySeconds and lifecycle may change",
                stored(json!({})),
                with(
                    json!({"spec": {"minReadySeconds": 5, "lifecycle": {"preDelete": {"finalizersHandler": ["example.com/x"]}}}}),
                ),
                &[],
            ),
            update(
                "16 selector expression change",
                stored(json!({})),
                with(
                    json!({"spec": {"selector": {"matchLabels": null, "matchExpressions": [{"key": "a", "operator": "In", "values": ["b"]}]}}}),
                ),
                &["spec"],
            ),
            update("17 image-only change", image_only_old, image_only_new, &[]),
            update(
                "17 any change without InPlaceOnly",
                recreate_old,
                recreate_new,
                &[],
            ),
            update(
                "17 template metadata is free",
                stored(json!({"spec": {"updateStrategy": {"type": "InPlaceOnly"}}})),
                with(
                    json!({"spec": {"updateStrategy": {"type": "InPlaceOnly"}, "template": {"metadata": {"labels": {"a": "b", "new": "label"}}}}}),
                ),
                &[],
            ),
            update(
                "17 adding a container",
                stored(json!({"spec": {"updateStrategy": {"type": "InPlaceOnly"}}})),
                with(
                    json!({"spec": {"updateStrategy": {"type": "InPlaceOnly"}, "template": {"spec": {"containers": [
                        {"name": "abc", "image": "image", "imagePullPolicy": "IfNotPresent", "terminationMessagePolicy": "File"},
                        {"name": "def", "image": "image", "imagePullPolicy": "IfNotPresent", "terminationMessagePolicy": "File"}
                    ]}}}}),
                ),
                &["spec"],
            ),
            update(
                "18 rename",
                stored(json!({})),
                with(json!({"metadata": {"name": "cs-2"}})),
                &["metadata.name"],
            ),
            update(
                "18 no resourceVersion",
                stored(json!({})),
                with(json!({"metadata": {"resourceVersion": null}})),
                &["metadata.resourceVersion"],
            ),
            update(
                "7 names already listed are not looked up again",
                stored(json!({"spec": {"scaleStrategy": {"podsToDelete": ["p1"]}}})),
                with(json!({"spec": {"scaleStrategy": {"podsToDelete": ["p1", "p0"]}}})),
                &[],
            ),
        ]);
    }

    #[test]
    fn messages_match_openkruise() {
        let cases = [
            (
                with(json!({"spec": {"updateStrategy": {"type": ""}}})),
                "spec.updateStrategy.type: Invalid value: \"\": must be 'ReCreate', InPlaceIfPossible or 'InPlaceOnly'",
            ),
            (
                with(json!({"spec": {"updateStrategy": {"maxUnavailable": "5", "maxSurge": 1}}})),
                "spec.updateStrategy.maxUnavailable: Invalid value: \"5\": failed GetScaledValueFromIntOrPercent for maxUnavailable: invalid type: string is not a percentage",
            ),
            (
                with(json!({"spec": {"scaleStrategy": {"podsToDelete": ["p0", "p0"]}}})),
                "spec.scaleStrategy.podsToDelete: Invalid value: []string{\"p0\", \"p0\"}: duplicated items [p0]",
            ),
            (
                with(json!({"spec": {"scaleStrategy": {"podsToDelete": ["p1"]}}})),
                "spec.scaleStrategy.podsToDelete: Invalid value: \"p1\": find pod p1 failed: pods \"p1\" not found",
            ),
            (
                with(json!({"spec": {"scaleStrategy": {"podsToDelete": ["stranger"]}}})),
                "spec.scaleStrategy.podsToDelete: Invalid value: \"stranger\": find pod stranger owner is not this CloneSet",
            ),
            (
                with(json!({"spec": {"scaleStrategy": {"podsToDelete": ["gone"]}}})),
                "spec.scaleStrategy.podsToDelete: Invalid value: \"gone\": find pod gone already terminating",
            ),
            (
                with(json!({"spec": {"updateStrategy": {"maxUnavailable": 0}}})),
                "spec.updateStrategy.maxUnavailable: Invalid value: intstr.IntOrString{Type:0, IntVal:0, StrVal:\"\"}: maxUnavailable and maxSurge should not both be less than 1",
            ),
            (
                with(json!({"spec": {"updateStrategy": {"type": "InPlaceOnly", "maxSurge": 1}}})),
                "spec.updateStrategy.maxSurge: Invalid value: \"1\": can not use maxSurge with strategy type InPlaceOnly",
            ),
            (
                with(json!({"spec": {"template": {"spec": {"activeDeadlineSeconds": 60}}}})),
                "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in cloneset is not Supported",
            ),
            (
                with(json!({"spec": {"selector": {"matchLabels": {"a": "b", "c": "d"}}}})),
                "spec.template.metadata.labels: Invalid value: map[string]string{\"a\":\"b\"}: `selector` does not match template `labels`",
            ),
            (
                with(
                    json!({"spec": {"updateStrategy": {"priorityStrategy": {"weightPriority": [{"weight": 101, "matchSelector": {"matchLabels": {"k": "v"}}}]}}}}),
                ),
                "spec.updateStrategy.priorityStrategy: Required value: weight must be valid number in the range 1-100",
            ),
            (
                with(json!({"spec": {"progressDeadlineSeconds": 10, "minReadySeconds": 10}})),
                "spec.progressDeadlineSeconds: Invalid value: 10: must be greater than minReadySeconds",
            ),
        ];
        for (new, expected) in cases {
            assert_eq!(messages(new, None), expected);
        }
        let (old, new) = image_update("image2", "Always", "image", "IfNotPresent", "InPlaceOnly");
        assert_eq!(
            messages(new, Some(old)),
            "spec: Forbidden: only allowed to update images in spec for InPlaceOnly, but found replace /containers/0/imagePullPolicy"
        );
    }

    #[test]
    fn default_context_knows_no_pods() {
        let set = decode(with(
            json!({"spec": {"scaleStrategy": {"podsToDelete": ["p0"]}}}),
        ));
        let errors = validate_cloneset(&set, None, &CloneSetContext::default());
        assert_eq!(
            aggregate(&errors),
            "spec.scaleStrategy.podsToDelete: Invalid value: \"p0\": find pod p0 failed: pods \"p0\" not found"
        );
    }

    #[test]
    fn pod_facts_from_a_pod() {
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": "p0", "deletionTimestamp": "2024-01-02T03:04:05Z", "ownerReferences": [
                {"apiVersion": "v1", "kind": "X", "name": "x", "uid": "not-controller"},
                {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "cs", "uid": UID, "controller": true}
            ]}
        }))
        .unwrap();
        assert_eq!(
            PodFacts::of(&pod),
            PodFacts {
                controller_uid: Some(UID.into()),
                terminating: true
            }
        );
        assert_eq!(PodFacts::of(&Pod::default()), PodFacts::default());
    }

    #[test]
    fn deletion_protection_and_warnings() {
        let protected = decode(with(
            json!({"metadata": {"labels": {"policy.kruise.io/delete-protection": "Cascading"}}, "spec": {"replicas": 2}}),
        ));
        assert_eq!(
            cloneset_deletion_protection(&protected).as_deref(),
            Some(
                "forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Cascading and replicas 2>0"
            )
        );
        assert_eq!(cloneset_deletion_protection(&decode(base())), None);

        assert!(
            cloneset_warnings(&decode(with(
                json!({"spec": {"updateStrategy": {"partition": 0}}})
            )))
            .is_empty()
        );
        let risky = decode(with(json!({"spec": {"replicas": 4, "updateStrategy": {
            "partition": "100%", "maxUnavailable": "100%", "paused": true,
            "priorityStrategy": {"orderPriority": [{"orderedKey": "k"}]},
            "scatterStrategy": [{"key": "zone", "value": "a"}]
        }}})));
        let warnings = cloneset_warnings(&risky);
        assert_eq!(warnings.len(), 4, "{warnings:#?}");
        assert!(warnings[0].starts_with("spec.updateStrategy.partition 100% keeps all 4 pods"));
        assert!(warnings[1].starts_with("spec.updateStrategy.maxUnavailable 100% lets all 4 pods"));
    }

    #[test]
    fn unknown_replicas_defaults_to_one() {
        // With replicas unset (defaulted to 1), maxUnavailable 0 and no surge cannot update anything.
        let paths = paths(
            with(json!({"spec": {"replicas": null, "updateStrategy": {"maxUnavailable": 0}}})),
            None,
        );
        assert_eq!(paths, ["spec.updateStrategy.maxUnavailable"]);
    }
}
