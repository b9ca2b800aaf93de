//! Advanced DaemonSet (v1alpha1) validation: every rejection of OpenKruise's DaemonSet validating
//! webhook (spec §3.3, HEAD behaviour), as Kubernetes-style field errors, in OpenKruise's order.
//!
//! CREATE checks the metadata and the spec; UPDATE checks the metadata update rules, that only
//! mutable spec fields changed, and the spec again. (OpenKruise answers a failed CREATE with HTTP
//! 500 and a failed UPDATE with 422; that mapping belongs to the caller.) As for CloneSet, the pod
//! template is checked by Kubernetes' rules and must be defaulted (`restartPolicy`, `dnsPolicy`,
//! `imagePullPolicy`, `terminationMessagePolicy`).
//!
//! Two upstream field paths are reproduced as they are, quirk included:
//! `spec.updateStrategy.rollingUpdate.rollingUpdate.type` and `….rollingUpdate.partition`.
//! Not implemented: v1.1's refusal of read-write cloud persistent disks, which HEAD dropped.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::field::{
    FieldError, GoRepr, Path, dns1123_subdomain_errors, go_int_or_string, go_quote,
    validate_label_selector, validate_nonnegative, validate_object_meta,
    validate_positive_int_or_percent,
};
use super::workload::{
    Selector, differs, empty_selector_error, go_optional_int_or_string, int_or_percent_number,
    not_more_than_100_percent, template_labels_mismatch, validate_object_meta_update,
    validate_pod_template, validate_workload_template_policies,
};
use crate::api::daemonset::{
    DaemonSet, DaemonSetSpec, DaemonSetUpdateStrategy, IN_PLACE_IF_POSSIBLE,
    RollingUpdateDaemonSet, STANDARD, SURGING,
};
use crate::api::statefulset::{ON_DELETE, ROLLING_UPDATE};
use crate::k8s::selector::is_empty;

/// Every reason to reject `new` (CREATE: `old` is `None`; UPDATE: the stored object).
pub fn validate_daemonset(new: &DaemonSet, old: Option<&DaemonSet>) -> Vec<FieldError> {
    let mut errors = match old {
        None => validate_object_meta(
            &new.metadata,
            true,
            dns1123_subdomain_errors,
            &Path::new("metadata"),
        ),
        Some(old) => validate_update(new, old),
    };
    errors.extend(validate_spec(&new.spec, &Path::new("spec")));
    errors
}

/// Accepted but probably not what the author meant.
pub fn daemonset_warnings(set: &DaemonSet) -> Vec<String> {
    let mut warnings = Vec::new();
    let Some(rolling) = &set.spec.update_strategy.rolling_update else {
        return warnings;
    };
    let surges = rolling
        .max_surge
        .as_ref()
        .is_some_and(|s| int_or_percent_number(s) > 0);
    let pod_spec = set.spec.template.spec.as_ref();
    let uses_host_port = pod_spec.is_some_and(|spec| {
        spec.containers
            .iter()
            .chain(spec.init_containers.iter().flatten())
            .flat_map(|c| c.ports.iter().flatten())
            .any(|p| p.host_port.unwrap_or(0) > 0)
    });
    if surges && uses_host_port {
        // OpenKruise's own warning, word for word.
        warnings.push("spec.updateStrategy.rollingUpdate.maxSurge is set with a HostPort container, which can cause port conflicts when old and new pods run simultaneously during rolling updates. See https://github.com/kubernetes/kubernetes/issues/106417".into());
    }
    if rolling.max_unavailable == Some(IntOrString::String("100%".into())) {
        warnings.push(
            "spec.updateStrategy.rollingUpdate.maxUnavailable 100% lets every daemon pod be unavailable at once during an update"
                .into(),
        );
    }
    if rolling.partition == Some(IntOrString::String("100%".into())) {
        warnings.push(
            "spec.updateStrategy.rollingUpdate.partition 100% keeps every pod at the old revision: template changes will not roll out"
                .into(),
        );
    }
    if rolling.paused == Some(true) {
        warnings.push(
            "spec.updateStrategy.rollingUpdate.paused is true: no pod is updated until it is unset"
                .into(),
        );
    }
    if rolling.rolling_update_type.as_deref() == Some(SURGING) {
        warnings.push(
            "spec.updateStrategy.rollingUpdate.rollingUpdateType Surging is deprecated: use Standard with maxSurge"
                .into(),
        );
    }
    warnings
}

// ---------------------------------------------------------------------------------------------
// UPDATE-only rules

fn validate_update(new: &DaemonSet, old: &DaemonSet) -> Vec<FieldError> {
    let mut errors =
        validate_object_meta_update(&new.metadata, &old.metadata, &Path::new("metadata"));
    if changes_immutable_fields(&new.spec, &old.spec) {
        // Upstream's message, its double space included.
        errors.push(FieldError::forbidden(
            &Path::new("spec"),
            "updates to daemonset spec for fields other than 'BurstReplicas', 'template', 'lifecycle',  'updateStrategy', 'minReadySeconds', and 'revisionHistoryLimit' are forbidden",
        ));
    }
    errors
}

fn changes_immutable_fields(new: &DaemonSetSpec, old: &DaemonSetSpec) -> bool {
    let mut masked = new.clone();
    masked.template = old.template.clone();
    masked.update_strategy = old.update_strategy.clone();
    masked.lifecycle = old.lifecycle.clone();
    masked.burst_replicas = old.burst_replicas.clone();
    masked.min_ready_seconds = old.min_ready_seconds;
    masked.revision_history_limit = old.revision_history_limit;
    differs(&masked, old)
}

// ---------------------------------------------------------------------------------------------
// Spec rules

fn validate_spec(spec: &DaemonSetSpec, path: &Path) -> Vec<FieldError> {
    let selector_path = path.child("selector");
    let mut errors = Vec::new();
    if let Some(selector) = &spec.selector {
        errors.extend(validate_label_selector(
            selector,
            Default::default(),
            &selector_path,
        ));
    }
    if let Ok(selector) = Selector::convert(spec.selector.as_ref()) {
        errors.extend(template_labels_mismatch(selector, &spec.template, path));
    }
    if let Some(selector) = spec.selector.as_ref().filter(|s| is_empty(s)) {
        errors.push(empty_selector_error(selector, "daemonset", &selector_path));
    }
    errors.extend(validate_pod_template(
        &spec.template,
        &[],
        &path.child("template"),
    ));
    // Unlike CloneSet and StatefulSet, an unset restart policy is refused too.
    errors.extend(validate_workload_template_policies(
        &spec.template,
        false,
        "DaemonSet",
        path,
    ));
    errors.extend(validate_nonnegative(
        i64::from(spec.min_ready_seconds.unwrap_or(0)),
        &path.child("minReadySeconds"),
    ));
    errors.extend(validate_update_strategy(
        &spec.update_strategy,
        &path.child("updateStrategy"),
    ));
    if let Some(limit) = spec.revision_history_limit {
        errors.extend(validate_nonnegative(
            i64::from(limit),
            &path.child("revisionHistoryLimit"),
        ));
    }
    if spec
        .lifecycle
        .as_ref()
        .is_some_and(|l| l.in_place_update.is_some())
    {
        errors.push(FieldError::forbidden(
            &path.child("lifecycle").child("inPlaceUpdate"),
            "inPlaceUpdate hook has not supported yet",
        ));
    }
    errors
}

fn validate_update_strategy(strategy: &DaemonSetUpdateStrategy, path: &Path) -> Vec<FieldError> {
    match strategy.type_.as_deref().unwrap_or("") {
        ON_DELETE => Vec::new(),
        ROLLING_UPDATE => match &strategy.rolling_update {
            None => vec![FieldError::required(&path.child("rollingUpdate"), "")],
            Some(rolling) => validate_rolling_update(rolling, &path.child("rollingUpdate")),
        },
        _ => vec![FieldError::not_supported(
            path,
            go_update_strategy(strategy),
            &[ROLLING_UPDATE, ON_DELETE],
        )],
    }
}

/// A bound that is "set" when present and non-zero must be a valid int/percentage ≤ 100%.
fn check_bound(value: Option<&IntOrString>, path: &Path, errors: &mut Vec<FieldError>) -> bool {
    let Some(value) = value.filter(|v| int_or_percent_number(v) != 0) else {
        return false;
    };
    errors.extend(validate_positive_int_or_percent(value, path));
    errors.extend(not_more_than_100_percent(value, path));
    true
}

fn validate_rolling_update(rolling: &RollingUpdateDaemonSet, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let unavailable_path = path.child("maxUnavailable");
    let surge_path = path.child("maxSurge");
    let has_unavailable = check_bound(
        rolling.max_unavailable.as_ref(),
        &unavailable_path,
        &mut errors,
    );
    let has_surge = check_bound(rolling.max_surge.as_ref(), &surge_path, &mut errors);
    match (has_unavailable, has_surge) {
        (true, true) => errors.push(FieldError::invalid(
            &surge_path,
            go_optional_int_or_string(rolling.max_surge.as_ref()),
            "may not be set when maxUnavailable is non-zero",
        )),
        (false, false) => errors.push(FieldError::required(
            &unavailable_path,
            "cannot be 0 when maxSurge is 0",
        )),
        _ => {}
    }

    match rolling.rolling_update_type.as_deref().unwrap_or("") {
        "" | STANDARD => {}
        IN_PLACE_IF_POSSIBLE => {
            if has_surge {
                errors.push(FieldError::required(
                    &surge_path,
                    "must be 0 for InPlaceIfPossible type",
                ));
            }
        }
        SURGING => {
            if has_unavailable {
                errors.push(FieldError::required(
                    &unavailable_path,
                    "must be 0 for Surging type",
                ));
            }
        }
        other => errors.push(FieldError::not_supported(
            &path.child("rollingUpdate").child("type"),
            other,
            &[STANDARD, SURGING, IN_PLACE_IF_POSSIBLE],
        )),
    }

    if let Some(partition) = &rolling.partition {
        let partition_path = path.child("rollingUpdate").child("partition");
        errors.extend(validate_positive_int_or_percent(partition, &partition_path));
        errors.extend(not_more_than_100_percent(partition, &partition_path));
    }
    errors
}

fn go_update_strategy(strategy: &DaemonSetUpdateStrategy) -> GoRepr {
    let rolling = match &strategy.rolling_update {
        None => "(*v1alpha1.RollingUpdateDaemonSet)(nil)".to_string(),
        Some(rolling) => {
            let optional = |value: Option<&IntOrString>| {
                value.map_or_else(
                    || "(*intstr.IntOrString)(nil)".to_string(),
                    |v| format!("&{}", go_int_or_string(v)),
                )
            };
            format!(
                "&v1alpha1.RollingUpdateDaemonSet{{Type:{}, MaxUnavailable:{}, MaxSurge:{}, Partition:{}}}",
                go_quote(rolling.rolling_update_type.as_deref().unwrap_or("")),
                optional(rolling.max_unavailable.as_ref()),
                optional(rolling.max_surge.as_ref()),
                optional(rolling.partition.as_ref()),
            )
        }
    };
    GoRepr(format!(
        "v1alpha1.DaemonSetUpdateStrategy{{Type:{}, RollingUpdate:{rolling}}}",
        go_quote(strategy.type_.as_deref().unwrap_or(""))
    ))
}

#[cfg(test)]
mod tests;
