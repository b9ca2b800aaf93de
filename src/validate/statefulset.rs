//! Advanced StatefulSet validation: every rejection of OpenKruise's StatefulSet validating
//! webhook (spec §3.2), as Kubernetes-style field errors, in OpenKruise's order. `v1alpha1`
//! objects are validated by converting them to `v1beta1`, as OpenKruise does.
//!
//! On UPDATE, the spec rules and the update rules both run and their errors are concatenated;
//! only when both pass is the `InPlaceOnly` template check made. OpenKruise answers that one with
//! a bare message (HTTP 422, no field path); here it is a Forbidden error on
//! `spec.template.spec` whose detail is that message ([`statefulset_in_place_only_error`] gives
//! the bare message).
//!
//! Unlike CloneSet, the pod spec is *not* validated: Kubernetes' StatefulSet template check only
//! looks at labels, annotations and the selector, and OpenKruise adds the restart policy and
//! active deadline rules.
//!
//! Not implemented: rule 12, the volume-claim-template resize checks, which need the cluster's
//! StorageClasses and only run behind OpenKruise's `StatefulSetAutoResizePVCGate` (off by default).

use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::field::{
    FieldError, GoRepr, Path, dns1123_subdomain_errors, go_int_or_string, go_quote,
    validate_annotations, validate_labels, validate_nonnegative, validate_object_meta,
    validate_positive_int_or_percent,
};
use super::workload::{
    IN_PLACE_UPDATE_READY, PatchOp, Selector, checked_workload_selector,
    contains_container_image_path, deletion_protection, differs, legacy_scaled_value,
    pod_spec_patch, priority_strategy_error, template_labels_mismatch, template_pod_spec,
    validate_object_meta_update, validate_workload_template_policies,
};
use crate::api::cloneset::{IN_PLACE_IF_POSSIBLE, IN_PLACE_ONLY, RECREATE};
use crate::api::statefulset::{
    DELETE, ON_DELETE, ORDERED_READY, PARALLEL, RETAIN, ROLLING_UPDATE,
    RollingUpdateStatefulSetStrategy, StatefulSet, StatefulSetPersistentVolumeClaimRetentionPolicy,
    StatefulSetSpec, StatefulSetUpdateStrategy, v1alpha1,
};
use crate::convert::statefulset::{V1BETA1_FIELDS_ANNOTATION, to_v1beta1, v1beta1_fields};
use crate::k8s::intstr::parse_range;

/// Upper bound of `rollingUpdate.minReadySeconds`.
const MAX_MIN_READY_SECONDS: i32 = 300;

/// Every reason to reject `new` (CREATE: `old` is `None`; UPDATE: the stored object).
pub fn validate_statefulset(new: &StatefulSet, old: Option<&StatefulSet>) -> Vec<FieldError> {
    let mut errors = validate_object_meta(
        &new.metadata,
        true,
        dns1123_subdomain_errors,
        &Path::new("metadata"),
    );
    errors.extend(validate_spec(&new.spec, &Path::new("spec")));
    errors.extend(validate_carried_fields(new));
    let Some(old) = old else {
        return errors;
    };
    errors.extend(validate_update(new, old));
    if errors.is_empty()
        && let Some(message) = statefulset_in_place_only_error(new, old)
    {
        errors.push(FieldError::forbidden(
            &Path::new("spec").child("template").child("spec"),
            message,
        ));
    }
    errors
}

/// The annotation a `v1alpha1` writer carries the `v1beta1`-only fields in must decode:
/// conversion keeps one that does not, so that it is refused here rather than dropped.
fn validate_carried_fields(set: &StatefulSet) -> Vec<FieldError> {
    let annotations = set.metadata.annotations.as_ref();
    match v1beta1_fields(annotations) {
        Ok(_) => Vec::new(),
        Err(message) => {
            let text = annotations
                .and_then(|a| a.get(V1BETA1_FIELDS_ANNOTATION))
                .map_or("", String::as_str);
            let path = Path::new("metadata")
                .child("annotations")
                .key(V1BETA1_FIELDS_ANNOTATION);
            vec![FieldError::invalid(&path, text, message)]
        }
    }
}

/// [`validate_statefulset`] for `v1alpha1` objects, through their `v1beta1` form.
pub fn validate_statefulset_v1alpha1(
    new: &v1alpha1::StatefulSet,
    old: Option<&v1alpha1::StatefulSet>,
) -> Vec<FieldError> {
    let new = to_v1beta1(new.clone());
    let old = old.map(|old| to_v1beta1(old.clone()));
    validate_statefulset(&new, old.as_ref())
}

/// OpenKruise's message when an `InPlaceOnly` update changes more than images. Its check is
/// loose: any replace whose path *contains* `/containers/<n>/image` passes, so
/// `imagePullPolicy` changes slip through, as upstream.
pub fn statefulset_in_place_only_error(new: &StatefulSet, old: &StatefulSet) -> Option<String> {
    if new.pod_update_policy() != IN_PLACE_ONLY {
        return None;
    }
    let PatchOp { op, path } = pod_spec_patch(
        &template_pod_spec(&old.spec.template),
        &template_pod_spec(&new.spec.template),
    )
    .into_iter()
    .find(|op| op.op != "replace" || !contains_container_image_path(&op.path))?;
    Some(format!(
        "invalid template modified with InPlaceOnly strategy: {op} {path}, currently only image update is allowed for InPlaceOnly"
    ))
}

/// Why deleting `set` is refused (HTTP 403), if it is.
pub fn statefulset_deletion_protection(set: &StatefulSet) -> Option<String> {
    deletion_protection(
        set.metadata.labels.as_ref(),
        set.spec.replicas,
        set.metadata.deletion_timestamp.is_some(),
    )
}

/// Accepted but probably not what the author meant.
pub fn statefulset_warnings(set: &StatefulSet) -> Vec<String> {
    let mut warnings = Vec::new();
    let replicas = set
        .spec
        .replicas
        .unwrap_or(super::workload::DEFAULT_REPLICAS);
    if let Some(rolling) = &set.spec.update_strategy.rolling_update {
        let partition = rolling.partition.unwrap_or(0);
        // Ordered updates compare ordinals with the partition; unordered ones count pods.
        let start = set.spec.ordinals.as_ref().map_or(0, |o| o.start);
        let untouched_from = if rolling.unordered_update.is_some() {
            i64::from(replicas)
        } else {
            i64::from(start) + i64::from(replicas)
        };
        let reserves_none = set.spec.reserve_ordinals.as_ref().is_none_or(Vec::is_empty);
        if replicas > 0 && reserves_none && i64::from(partition) >= untouched_from {
            warnings.push(format!(
                "spec.updateStrategy.rollingUpdate.partition {partition} covers all {replicas} pods: template changes will not roll out"
            ));
        }
        if rolling.paused == Some(true) {
            warnings.push(
                "spec.updateStrategy.rollingUpdate.paused is true: no pod is updated until it is unset".into(),
            );
        }
    }
    if let Some(policy) = &set.spec.persistent_volume_claim_retention_policy {
        if policy.when_deleted.as_deref() == Some(DELETE) {
            warnings.push(
                "spec.persistentVolumeClaimRetentionPolicy.whenDeleted is Delete: deleting the StatefulSet deletes its PVCs and their data"
                    .into(),
            );
        }
        if policy.when_scaled.as_deref() == Some(DELETE) {
            warnings.push(
                "spec.persistentVolumeClaimRetentionPolicy.whenScaled is Delete: scaling down deletes the PVCs of the removed pods"
                    .into(),
            );
        }
    }
    warnings
}

// ---------------------------------------------------------------------------------------------
// Spec rules

fn validate_spec(spec: &StatefulSetSpec, path: &Path) -> Vec<FieldError> {
    let policy = spec.pod_management_policy.as_deref().unwrap_or("");
    let mut errors = Vec::new();
    let policy_path = path.child("podManagementPolicy");
    match policy {
        "" => errors.push(FieldError::required(&policy_path, "")),
        ORDERED_READY | PARALLEL => {}
        other => errors.push(FieldError::invalid(
            &policy_path,
            other,
            format!("must be '{ORDERED_READY}' or '{PARALLEL}'"),
        )),
    }
    errors.extend(validate_reserve_ordinals(
        spec.reserve_ordinals.as_deref(),
        path,
    ));
    if let Some(max_unavailable) = spec
        .scale_strategy
        .as_ref()
        .and_then(|s| s.max_unavailable.as_ref())
    {
        errors.extend(validate_max_unavailable(
            max_unavailable,
            policy,
            &path.child("scaleStrategy").child("maxUnavailable"),
        ));
    }
    errors.extend(validate_update_strategy(spec, policy, path));
    errors.extend(validate_retention_policy(
        spec.persistent_volume_claim_retention_policy.as_ref(),
        &path.child("persistentVolumeClaimRetentionPolicy"),
    ));
    errors.extend(validate_nonnegative(
        i64::from(spec.replicas.unwrap_or(super::workload::DEFAULT_REPLICAS)),
        &path.child("replicas"),
    ));

    if let Some(selector) = checked_workload_selector(
        spec.selector.as_ref(),
        "statefulset",
        &path.child("selector"),
        &mut errors,
    ) {
        errors.extend(validate_template_for_statefulset(
            selector,
            &spec.template,
            path,
        ));
    }
    errors.extend(validate_workload_template_policies(
        &spec.template,
        true,
        "StatefulSet",
        path,
    ));
    errors
}

/// Kubernetes' `ValidatePodTemplateSpecForStatefulSet`: the selector matches the labels, and the
/// labels and annotations are valid. The pod spec itself is not checked.
fn validate_template_for_statefulset(
    selector: Selector<'_>,
    template: &PodTemplateSpec,
    spec: &Path,
) -> Vec<FieldError> {
    let template_path = spec.child("template");
    let meta = template.metadata.as_ref();
    let mut errors: Vec<FieldError> = template_labels_mismatch(selector, template, spec)
        .into_iter()
        .collect();
    errors.extend(validate_labels(
        meta.and_then(|m| m.labels.as_ref()),
        &template_path.child("labels"),
    ));
    errors.extend(validate_annotations(
        meta.and_then(|m| m.annotations.as_ref()),
        &template_path.child("annotations"),
    ));
    errors
}

/// `reserveOrdinals`: non-negative ints and `"start-end"` ranges with start ≤ end. Upstream
/// reports these on `spec` itself, with the whole list as the value.
fn validate_reserve_ordinals(ordinals: Option<&[IntOrString]>, spec: &Path) -> Vec<FieldError> {
    let ordinals = ordinals.unwrap_or(&[]);
    let shown = || {
        let items: Vec<String> = ordinals.iter().map(go_int_or_string).collect();
        GoRepr(format!("[]intstr.IntOrString{{{}}}", items.join(", ")))
    };
    let mut errors = Vec::new();
    for (i, ordinal) in ordinals.iter().enumerate() {
        match ordinal {
            IntOrString::String(range) => {
                if !is_range_syntax(range) {
                    errors.push(FieldError::invalid(
                        spec,
                        shown(),
                        format!("{i} th reserve ordinal is not a valid range: {range}"),
                    ));
                }
                if let Err(cause) = parse_range(range) {
                    errors.push(FieldError::invalid(
                        spec,
                        shown(),
                        format!("{i} th reserve ordinal is invalid: {range}, err = {cause}"),
                    ));
                }
            }
            IntOrString::Int(n) if *n < 0 => errors.push(FieldError::invalid(
                spec,
                shown(),
                format!("{i} th reserve ordinal is negative: {n}"),
            )),
            IntOrString::Int(_) => {}
        }
    }
    errors
}

/// `^\d+-\d+$`
fn is_range_syntax(range: &str) -> bool {
    range.split_once('-').is_some_and(|(start, end)| {
        [start, end]
            .iter()
            .all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// maxUnavailable (rolling update or scale strategy): a valid int/percentage, at least 1 once
/// scaled on a total of 1 (so `0` and `"0%"` fail, `"1%"` passes), and exactly 1 unless pods
/// are managed in parallel.
fn validate_max_unavailable(value: &IntOrString, policy: &str, path: &Path) -> Vec<FieldError> {
    let mut errors = validate_positive_int_or_percent(value, path);
    match legacy_scaled_value(value, 1, true) {
        // Upstream shows the scaled int here (0 after a failure), not the field.
        Err(cause) => errors.push(FieldError::invalid(
            path,
            0i64,
            format!("getValueFromIntOrPercent error: {cause}"),
        )),
        Ok(scaled) if scaled < 1 => errors.push(FieldError::invalid(
            path,
            scaled,
            "should not be less than 1",
        )),
        Ok(_) => {}
    }
    if policy != PARALLEL && *value != IntOrString::Int(1) {
        errors.push(FieldError::invalid(
            path,
            GoRepr(go_int_or_string(value)),
            "can only work with Parallel PodManagementPolicyType",
        ));
    }
    errors
}

fn validate_update_strategy(spec: &StatefulSetSpec, policy: &str, path: &Path) -> Vec<FieldError> {
    let strategy = &spec.update_strategy;
    let strategy_path = path.child("updateStrategy");
    let rolling_path = strategy_path.child("rollingUpdate");
    match strategy.type_.as_deref().unwrap_or("") {
        "" => vec![FieldError::required(&strategy_path, "")],
        ON_DELETE => match &strategy.rolling_update {
            Some(rolling) => vec![FieldError::invalid(
                &rolling_path,
                go_rolling_update(rolling),
                format!("only allowed for updateStrategy '{ROLLING_UPDATE}'"),
            )],
            None => Vec::new(),
        },
        ROLLING_UPDATE => match &strategy.rolling_update {
            Some(rolling) => validate_rolling_update(rolling, &spec.template, policy, path),
            None => Vec::new(),
        },
        _ => vec![FieldError::invalid(
            &strategy_path,
            go_update_strategy(strategy),
            format!("must be '{ROLLING_UPDATE}' or '{ON_DELETE}'"),
        )],
    }
}

/// The rolling-update knobs. Unset partition and minReadySeconds count as their defaults (0).
fn validate_rolling_update(
    rolling: &RollingUpdateStatefulSetStrategy,
    template: &PodTemplateSpec,
    policy: &str,
    spec: &Path,
) -> Vec<FieldError> {
    let path = spec.child("updateStrategy").child("rollingUpdate");
    let mut errors = validate_nonnegative(
        i64::from(rolling.partition.unwrap_or(0)),
        &path.child("partition"),
    );
    let min_ready_path = path.child("minReadySeconds");
    let min_ready = rolling.min_ready_seconds.unwrap_or(0);
    errors.extend(validate_nonnegative(i64::from(min_ready), &min_ready_path));
    if min_ready > MAX_MIN_READY_SECONDS {
        errors.push(FieldError::invalid(
            &min_ready_path,
            min_ready,
            "must be no more than 300 seconds",
        ));
    }
    let max_unavailable_path = path.child("maxUnavailable");
    match &rolling.max_unavailable {
        None => errors.push(FieldError::required(&max_unavailable_path, "")),
        Some(value) => errors.extend(validate_max_unavailable(
            value,
            policy,
            &max_unavailable_path,
        )),
    }

    let update_policy_path = path.child("podUpdatePolicy");
    match rolling.pod_update_policy.as_deref().unwrap_or("") {
        "" => errors.push(FieldError::required(&update_policy_path, "")),
        RECREATE => {}
        in_place @ (IN_PLACE_IF_POSSIBLE | IN_PLACE_ONLY) => {
            let gates = template
                .spec
                .as_ref()
                .and_then(|s| s.readiness_gates.as_deref());
            if !gates
                .unwrap_or(&[])
                .iter()
                .any(|g| g.condition_type == IN_PLACE_UPDATE_READY)
            {
                errors.push(FieldError::invalid(
                    &spec.child("template").child("spec").child("readinessGates"),
                    go_readiness_gates(gates),
                    format!(
                        "must contains {IN_PLACE_UPDATE_READY} when podUpdatePolicy is {in_place}"
                    ),
                ));
            }
        }
        other => errors.push(FieldError::invalid(
            &update_policy_path,
            other,
            format!("must be '{RECREATE}', {IN_PLACE_IF_POSSIBLE} or '{IN_PLACE_ONLY}'"),
        )),
    }

    if let Some(unordered) = &rolling.unordered_update {
        let unordered_path = path.child("unorderedUpdate");
        if policy != PARALLEL {
            errors.push(FieldError::required(
                &unordered_path,
                "unorderedUpdate can only work with Parallel PodManagementPolicyType",
            ));
        }
        if let Some(message) = unordered
            .priority_strategy
            .as_ref()
            .and_then(priority_strategy_error)
        {
            errors.push(FieldError::required(
                &unordered_path.child("priorityStrategy"),
                message,
            ));
        }
    }
    errors
}

/// Both retention policies must be `Retain` or `Delete`; unset is refused (the defaulting
/// webhook fills them in).
fn validate_retention_policy(
    policy: Option<&StatefulSetPersistentVolumeClaimRetentionPolicy>,
    path: &Path,
) -> Vec<FieldError> {
    let Some(policy) = policy else {
        return Vec::new();
    };
    [
        ("whenDeleted", &policy.when_deleted),
        ("whenScaled", &policy.when_scaled),
    ]
    .into_iter()
    .filter_map(|(field, value)| {
        let value = value.as_deref().unwrap_or("");
        (value != RETAIN && value != DELETE)
            .then(|| FieldError::not_supported(&path.child(field), value, &[RETAIN, DELETE]))
    })
    .collect()
}

// ---------------------------------------------------------------------------------------------
// Update rules

fn validate_update(new: &StatefulSet, old: &StatefulSet) -> Vec<FieldError> {
    let mut errors =
        validate_object_meta_update(&new.metadata, &old.metadata, &Path::new("metadata"));
    if changes_immutable_fields(&new.spec, &old.spec) {
        errors.push(FieldError::forbidden(
            &Path::new("spec"),
            "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'reserveOrdinals', 'lifecycle', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy', `volumeClaimTemplates`, `VolumeClaimUpdateStrategy` and 'updateStrategy' are forbidden",
        ));
    }
    let spec = Path::new("spec");
    errors.extend(validate_nonnegative(
        i64::from(
            new.spec
                .replicas
                .unwrap_or(super::workload::DEFAULT_REPLICAS),
        ),
        &spec.child("replicas"),
    ));
    errors.extend(validate_retention_policy(
        new.spec.persistent_volume_claim_retention_policy.as_ref(),
        &spec.child("persistentVolumeClaimRetentionPolicy"),
    ));
    errors
}

/// The spec with every mutable field taken from `old` must equal `old`'s (`scaleStrategy` is
/// mutable too, though upstream's message does not name it).
fn changes_immutable_fields(new: &StatefulSetSpec, old: &StatefulSetSpec) -> bool {
    let mut masked = new.clone();
    masked.replicas = old.replicas;
    masked.template = old.template.clone();
    masked.update_strategy = old.update_strategy.clone();
    masked.persistent_volume_claim_retention_policy =
        old.persistent_volume_claim_retention_policy.clone();
    masked.scale_strategy = old.scale_strategy.clone();
    masked.volume_claim_templates = old.volume_claim_templates.clone();
    masked.volume_claim_update_strategy = old.volume_claim_update_strategy.clone();
    masked.reserve_ordinals = old.reserve_ordinals.clone();
    masked.lifecycle = old.lifecycle.clone();
    masked.revision_history_limit = old.revision_history_limit;
    masked.ordinals = old.ordinals.clone();
    differs(&masked, old)
}

// ---------------------------------------------------------------------------------------------
// Go renderings of rejected values

fn go_optional<T>(value: Option<T>, type_name: &str, render: impl FnOnce(T) -> String) -> String {
    value.map_or_else(|| format!("({type_name})(nil)"), render)
}

fn go_rolling_update(rolling: &RollingUpdateStatefulSetStrategy) -> GoRepr {
    GoRepr(format!(
        "v1beta1.RollingUpdateStatefulSetStrategy{{Partition:{}, MaxUnavailable:{}, PodUpdatePolicy:{}, Paused:{}, UnorderedUpdate:{}, InPlaceUpdateStrategy:{}, MinReadySeconds:{}}}",
        go_optional(rolling.partition, "*int32", |p| format!("&{p}")),
        go_optional(
            rolling.max_unavailable.as_ref(),
            "*intstr.IntOrString",
            |v| format!("&{}", go_int_or_string(v))
        ),
        go_quote(rolling.pod_update_policy.as_deref().unwrap_or("")),
        rolling.paused.unwrap_or(false),
        go_optional(
            rolling.unordered_update.as_ref(),
            "*v1beta1.UnorderedUpdateStrategy",
            |_| { "&v1beta1.UnorderedUpdateStrategy{…}".into() }
        ),
        go_optional(
            rolling.in_place_update_strategy.as_ref(),
            "*pub.InPlaceUpdateStrategy",
            |s| {
                format!(
                    "&pub.InPlaceUpdateStrategy{{GracePeriodSeconds:{}}}",
                    s.grace_period_seconds.unwrap_or(0)
                )
            }
        ),
        go_optional(rolling.min_ready_seconds, "*int32", |s| format!("&{s}")),
    ))
}

fn go_update_strategy(strategy: &StatefulSetUpdateStrategy) -> GoRepr {
    let rolling = go_optional(
        strategy.rolling_update.as_ref(),
        "*v1beta1.RollingUpdateStatefulSetStrategy",
        |r| format!("&{}", go_rolling_update(r).0),
    );
    GoRepr(format!(
        "v1beta1.StatefulSetUpdateStrategy{{Type:{}, RollingUpdate:{rolling}}}",
        go_quote(strategy.type_.as_deref().unwrap_or(""))
    ))
}

fn go_readiness_gates(gates: Option<&[k8s_openapi::api::core::v1::PodReadinessGate]>) -> GoRepr {
    GoRepr(match gates {
        None => "[]v1.PodReadinessGate(nil)".into(),
        Some(gates) => {
            let items: Vec<String> = gates
                .iter()
                .map(|g| {
                    format!(
                        "v1.PodReadinessGate{{ConditionType:{}}}",
                        go_quote(&g.condition_type)
                    )
                })
                .collect();
            format!("[]v1.PodReadinessGate{{{}}}", items.join(", "))
        }
    })
}

#[cfg(test)]
mod tests;
