//! What the CloneSet, Advanced StatefulSet and Advanced DaemonSet validators share: pod-template
//! validation, selector/template matching, the two int-or-percent scalers, update-strategy
//! sub-checks, the in-place-only template diff, object-metadata update rules and deletion
//! protection.
//!
//! Pod templates are checked as Kubernetes' `ValidatePodTemplateSpec` does, built on
//! [`super::pod`]: template labels and annotations, volumes, containers and init containers, and
//! these pod-level fields: `restartPolicy`, `dnsPolicy`, `nodeSelector`, `readinessGates`,
//! `serviceAccountName`, `nodeName`, `activeDeadlineSeconds`, `hostname`, `subdomain`,
//! `priorityClassName`, and no ephemeral containers. Not covered (as in `pod.rs`): security
//! contexts, affinity, tolerations, topology spread, DNS config and host aliases.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec, Volume};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde::Serialize;
use serde_json::Value;

use super::field::{
    FieldError, GoRepr, LabelSelectorOptions, Path, dns1123_subdomain_errors, go_int_or_string,
    go_label_selector, go_string_map, go_string_slice, inclusive_range_error,
    label_selector_conversion_error, validate_annotations, validate_dns1123_label,
    validate_label_selector, validate_labels, validate_qualified_name,
};
use super::pod::{PodContext, validate_containers, validate_init_containers, validate_volumes};
use crate::api::{UpdatePriorityStrategy, UpdateScatterTerm};
use crate::k8s::intstr::valid_percent;
pub use crate::k8s::intstr::{int_or_percent_number, kruise_scaled_value, legacy_scaled_value};
use crate::k8s::selector::{is_empty, matches};

/// Readiness gate a pod needs before it can be updated in place.
pub const IN_PLACE_UPDATE_READY: &str = "InPlaceUpdateReady";
pub use super::deletion::{
    DELETION_PROTECTION_ALWAYS, DELETION_PROTECTION_CASCADING, DELETION_PROTECTION_LABEL,
    deletion_protection,
};
/// `replicas` when unset: the defaulting webhook fills in 1 before validation runs.
pub const DEFAULT_REPLICAS: i32 = 1;
/// Kubernetes' message for a changed immutable field.
pub const FIELD_IMMUTABLE: &str = "field is immutable";

// ---------------------------------------------------------------------------------------------
// Selectors

/// What `metav1.LabelSelectorAsSelector` makes of a selector.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Selector<'a> {
    /// No selector at all: selects nothing.
    Nothing,
    /// A selector without requirements: selects everything.
    Everything,
    Requirements(&'a LabelSelector),
}

impl Selector<'_> {
    /// The selector, or the conversion error OpenKruise would get.
    pub fn convert(selector: Option<&LabelSelector>) -> Result<Selector<'_>, String> {
        match selector {
            None => Ok(Selector::Nothing),
            Some(selector) if is_empty(selector) => Ok(Selector::Everything),
            Some(selector) => match label_selector_conversion_error(selector) {
                Some(error) => Err(error),
                None => Ok(Selector::Requirements(selector)),
            },
        }
    }

    pub fn matches(&self, labels: Option<&BTreeMap<String, String>>) -> bool {
        match self {
            Selector::Nothing => false,
            Selector::Everything => true,
            // Conversion succeeded, so every operator is known and matching cannot fail.
            Selector::Requirements(selector) => {
                matches(selector, labels, "selector").unwrap_or(false)
            }
        }
    }
}

/// `ValidateLabelSelector`, plus OpenKruise's refusal of a selector without requirements.
pub fn validate_workload_selector(
    selector: &LabelSelector,
    kind: &str,
    path: &Path,
) -> Vec<FieldError> {
    let mut errors = validate_label_selector(selector, LabelSelectorOptions::default(), path);
    if is_empty(selector) {
        errors.push(empty_selector_error(selector, kind, path));
    }
    errors
}

/// A workload's `spec.selector`: required, valid ([`validate_workload_selector`]) and convertible.
/// Pushes what is wrong to `errors`; the converted selector when it converts.
pub fn checked_workload_selector<'s>(
    selector: Option<&'s LabelSelector>,
    kind: &str,
    path: &Path,
    errors: &mut Vec<FieldError>,
) -> Option<Selector<'s>> {
    match selector {
        None => errors.push(FieldError::required(path, "")),
        Some(selector) => errors.extend(validate_workload_selector(selector, kind, path)),
    }
    match Selector::convert(selector) {
        Ok(converted) => Some(converted),
        Err(_) => {
            let shown = selector.map_or_else(|| "null".into(), go_label_selector);
            errors.push(FieldError::invalid(path, GoRepr(shown), ""));
            None
        }
    }
}

/// `empty selector is invalid for <kind>`.
pub fn empty_selector_error(selector: &LabelSelector, kind: &str, path: &Path) -> FieldError {
    FieldError::invalid(
        path,
        GoRepr(go_label_selector(selector)),
        format!("empty selector is invalid for {kind}"),
    )
}

/// The template must carry labels the selector selects (unless it selects everything).
pub fn template_labels_mismatch(
    selector: Selector<'_>,
    template: &PodTemplateSpec,
    spec: &Path,
) -> Option<FieldError> {
    let labels = template_labels(template);
    if selector == Selector::Everything || selector.matches(labels) {
        return None;
    }
    Some(FieldError::invalid(
        &spec.child("template").child("metadata").child("labels"),
        GoRepr(go_string_map(labels)),
        "`selector` does not match template `labels`",
    ))
}

pub fn template_labels(template: &PodTemplateSpec) -> Option<&BTreeMap<String, String>> {
    template.metadata.as_ref().and_then(|m| m.labels.as_ref())
}

pub fn template_pod_spec(template: &PodTemplateSpec) -> PodSpec {
    template.spec.clone().unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------
// Pod templates

/// `ValidatePodTemplateSpec`: labels, annotations and the pod spec (see the module docs for what
/// is covered). `extra_volumes` are appended to the template's own volumes, as OpenKruise mocks
/// a CloneSet's volume claim templates into the pod so that mounts of them are valid.
pub fn validate_pod_template(
    template: &PodTemplateSpec,
    extra_volumes: &[Volume],
    path: &Path,
) -> Vec<FieldError> {
    let meta = template.metadata.as_ref();
    let mut errors = validate_labels(meta.and_then(|m| m.labels.as_ref()), &path.child("labels"));
    errors.extend(validate_annotations(
        meta.and_then(|m| m.annotations.as_ref()),
        &path.child("annotations"),
    ));
    let default_spec = PodSpec::default();
    let spec = template.spec.as_ref().unwrap_or(&default_spec);
    let spec_path = path.child("spec");
    errors.extend(validate_pod_spec(spec, extra_volumes, &spec_path));
    if spec
        .ephemeral_containers
        .as_ref()
        .is_some_and(|c| !c.is_empty())
    {
        errors.push(FieldError::forbidden(
            &spec_path.child("ephemeralContainers"),
            "ephemeral containers not allowed in pod template",
        ));
    }
    errors
}

fn validate_pod_spec(spec: &PodSpec, extra_volumes: &[Volume], path: &Path) -> Vec<FieldError> {
    let volumes: Vec<Volume> = spec
        .volumes
        .iter()
        .flatten()
        .chain(extra_volumes)
        .cloned()
        .collect();
    let (index, mut errors) = validate_volumes(&volumes, &path.child("volumes"));
    let restart_policy = spec.restart_policy.as_deref().unwrap_or("");
    let context = PodContext {
        volumes: &index,
        restart_policy,
        termination_grace_period_seconds: spec.termination_grace_period_seconds,
    };
    let containers: Vec<&Container> = spec.containers.iter().collect();
    let init_containers: Vec<&Container> = spec.init_containers.iter().flatten().collect();
    errors.extend(validate_containers(
        &containers,
        context,
        &path.child("containers"),
    ));
    errors.extend(validate_init_containers(
        &init_containers,
        &containers,
        context,
        &path.child("initContainers"),
    ));

    let restart_path = path.child("restartPolicy");
    match restart_policy {
        "Always" | "OnFailure" | "Never" => {}
        "" => errors.push(FieldError::required(&restart_path, "")),
        other => errors.push(FieldError::not_supported(
            &restart_path,
            other,
            &["Always", "OnFailure", "Never"],
        )),
    }
    let dns_path = path.child("dnsPolicy");
    match spec.dns_policy.as_deref().unwrap_or("") {
        "ClusterFirst" | "ClusterFirstWithHostNet" | "Default" | "None" => {}
        "" => errors.push(FieldError::required(&dns_path, "")),
        other => errors.push(FieldError::not_supported(
            &dns_path,
            other,
            &["ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"],
        )),
    }
    errors.extend(validate_labels(
        spec.node_selector.as_ref(),
        &path.child("nodeSelector"),
    ));
    for (i, gate) in spec.readiness_gates.iter().flatten().enumerate() {
        errors.extend(validate_qualified_name(
            &gate.condition_type,
            &path.child("readinessGates").index(i).child("conditionType"),
        ));
    }
    for (field, value) in [
        ("serviceAccountName", &spec.service_account_name),
        ("nodeName", &spec.node_name),
    ] {
        let value = value.as_deref().unwrap_or("");
        if !value.is_empty() {
            for message in dns1123_subdomain_errors(value) {
                errors.push(FieldError::invalid(&path.child(field), value, message));
            }
        }
    }
    if let Some(seconds) = spec.active_deadline_seconds
        && !(1..=i64::from(i32::MAX)).contains(&seconds)
    {
        errors.push(FieldError::invalid(
            &path.child("activeDeadlineSeconds"),
            seconds,
            inclusive_range_error(1, i64::from(i32::MAX)),
        ));
    }
    for (field, value) in [("hostname", &spec.hostname), ("subdomain", &spec.subdomain)] {
        let value = value.as_deref().unwrap_or("");
        if !value.is_empty() {
            errors.extend(validate_dns1123_label(value, &path.child(field)));
        }
    }
    let priority_class = spec.priority_class_name.as_deref().unwrap_or("");
    if !priority_class.is_empty() {
        for message in dns1123_subdomain_errors(priority_class) {
            errors.push(FieldError::invalid(
                &path.child("priorityClassName"),
                priority_class,
                message,
            ));
        }
    }
    errors
}

/// The workload-level template rules all three kinds share: `restartPolicy` must be `Always`
/// (`allow_empty`: or unset) and `activeDeadlineSeconds` unset. `kind` names the workload in the
/// message as OpenKruise spells it (`cloneset`, `StatefulSet`, `DaemonSet`).
pub fn validate_workload_template_policies(
    template: &PodTemplateSpec,
    allow_empty_restart_policy: bool,
    kind: &str,
    spec_path: &Path,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let pod_spec = template.spec.as_ref();
    let restart_policy = pod_spec
        .and_then(|s| s.restart_policy.as_deref())
        .unwrap_or("");
    if restart_policy != "Always" && !(allow_empty_restart_policy && restart_policy.is_empty()) {
        errors.push(FieldError::not_supported(
            &spec_path
                .child("template")
                .child("spec")
                .child("restartPolicy"),
            restart_policy,
            &["Always"],
        ));
    }
    if pod_spec.is_some_and(|s| s.active_deadline_seconds.is_some()) {
        errors.push(FieldError::forbidden(
            &spec_path
                .child("template")
                .child("spec")
                .child("activeDeadlineSeconds"),
            format!("activeDeadlineSeconds in {kind} is not Supported"),
        ));
    }
    errors
}

// ---------------------------------------------------------------------------------------------
// Int-or-percent values

/// Go's `IntOrString.String()`: the int in decimal, or the string as is.
pub fn int_or_string_text(value: &IntOrString) -> String {
    match value {
        IntOrString::Int(n) => n.to_string(),
        IntOrString::String(s) => s.clone(),
    }
}

/// How Kubernetes prints an `*intstr.IntOrString` it rejects (`null` when unset).
pub fn go_optional_int_or_string(value: Option<&IntOrString>) -> GoRepr {
    GoRepr(value.map_or_else(|| "null".to_string(), go_int_or_string))
}

/// `IsNotMoreThan100Percent`: a valid percentage above 100% is refused (ints are unbounded).
pub fn not_more_than_100_percent(value: &IntOrString, path: &Path) -> Option<FieldError> {
    match value {
        IntOrString::String(text) if valid_percent(text).is_some_and(|p| p > 100) => {
            Some(FieldError::invalid(
                path,
                GoRepr(go_int_or_string(value)),
                "must not be greater than 100%",
            ))
        }
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// Update-strategy sub-checks (OpenKruise `FieldsValidation`)

/// The first problem of a priority strategy: not both kinds of terms, weights within 0..=100
/// (the message says 1-100, upstream accepts 0), non-empty valid selectors, non-empty keys.
/// The `priorityStrategy` and `scatterStrategy` errors of an update strategy at `path`, as
/// CloneSet and SidecarSet report them.
pub fn rollout_order_errors(
    priority: Option<&UpdatePriorityStrategy>,
    scatter: Option<&[UpdateScatterTerm]>,
    path: &Path,
) -> Vec<FieldError> {
    let priority = priority
        .and_then(priority_strategy_error)
        .map(|message| FieldError::required(&path.child("priorityStrategy"), message));
    let scatter = scatter
        .and_then(scatter_strategy_error)
        .map(|message| FieldError::required(&path.child("scatterStrategy"), message));
    priority.into_iter().chain(scatter).collect()
}

pub fn priority_strategy_error(strategy: &UpdatePriorityStrategy) -> Option<String> {
    let weights = strategy.weight_priority.as_deref().unwrap_or(&[]);
    let orders = strategy.order_priority.as_deref().unwrap_or(&[]);
    if !weights.is_empty() && !orders.is_empty() {
        return Some("only one of weightPriority and orderPriority can be used".into());
    }
    for term in weights {
        if !(0..=100).contains(&term.weight) {
            return Some("weight must be valid number in the range 1-100".into());
        }
        if is_empty(&term.match_selector) {
            return Some("selector can not be empty".into());
        }
        if let Some(error) = label_selector_conversion_error(&term.match_selector) {
            return Some(format!("invalid selector {error}"));
        }
    }
    if orders.iter().any(|term| term.ordered_key.is_empty()) {
        return Some("order key can not be empty".into());
    }
    None
}

/// The first problem of a scatter strategy: an empty key or a repeated key/value pair.
pub fn scatter_strategy_error(terms: &[UpdateScatterTerm]) -> Option<String> {
    let mut seen = BTreeSet::new();
    for term in terms {
        if term.key.is_empty() {
            return Some("key should not be empty".into());
        }
        if !seen.insert((term.key.as_str(), term.value.as_str())) {
            return Some(format!("duplicated key={} value={}", term.key, term.value));
        }
    }
    None
}

// ---------------------------------------------------------------------------------------------
// Spec comparisons

/// JSON with the values Go's encoder would leave out or that OpenKruise's semantic comparison
/// treats as unset (null, `""`, empty lists and objects) removed, so that `Some("")` and `None`
/// compare equal as they do for OpenKruise's Go structs.
pub fn normalized_json<T: Serialize>(value: &T) -> Value {
    let mut json = serde_json::to_value(value).unwrap_or(Value::Null);
    prune(&mut json);
    json
}

fn prune(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for child in map.values_mut() {
                prune(child);
            }
            map.retain(|_, child| !is_unset(child));
        }
        Value::Array(items) => items.iter_mut().for_each(prune),
        _ => {}
    }
}

fn is_unset(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(items) => items.is_empty(),
        Value::Object(map) => map.is_empty(),
        _ => false,
    }
}

/// Whether two values differ once unset fields are ignored.
pub fn differs<T: Serialize>(a: &T, b: &T) -> bool {
    normalized_json(a) != normalized_json(b)
}

/// One operation of the JSON patch between two pod specs, as OpenKruise computes it (a field
/// diff where lists of objects are compared index by index).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchOp {
    pub op: &'static str,
    pub path: String,
}

/// The patch from `old` to `new` pod spec: in-place-only strategies accept only image replaces.
/// Object keys are visited in sorted order, so the first offending operation is deterministic.
pub fn pod_spec_patch(old: &PodSpec, new: &PodSpec) -> Vec<PatchOp> {
    let mut ops = Vec::new();
    diff_values(&normalized_json(old), &normalized_json(new), "", &mut ops);
    ops
}

fn diff_values(old: &Value, new: &Value, path: &str, ops: &mut Vec<PatchOp>) {
    match (old, new) {
        (Value::Object(old), Value::Object(new)) => {
            for (key, new_value) in new {
                let child = format!("{path}/{}", escape_pointer(key));
                match old.get(key) {
                    None => ops.push(PatchOp {
                        op: "add",
                        path: child,
                    }),
                    Some(old_value) => diff_values(old_value, new_value, &child, ops),
                }
            }
            for key in old.keys().filter(|k| !new.contains_key(*k)) {
                ops.push(PatchOp {
                    op: "remove",
                    path: format!("{path}/{}", escape_pointer(key)),
                });
            }
        }
        (Value::Array(old), Value::Array(new)) => diff_arrays(old, new, path, ops),
        _ if old != new => ops.push(PatchOp {
            op: "replace",
            path: path.to_string(),
        }),
        _ => {}
    }
}

/// Lists of scalars are compared as sets (removals at their old index, additions at their new
/// one); other lists element by element, extra elements removed or added at the end.
fn diff_arrays(old: &[Value], new: &[Value], path: &str, ops: &mut Vec<PatchOp>) {
    let simple = |items: &[Value]| items.iter().all(|v| !v.is_object() && !v.is_array());
    if simple(old) && simple(new) {
        for (i, value) in old.iter().enumerate() {
            if !new.contains(value) {
                ops.push(PatchOp {
                    op: "remove",
                    path: format!("{path}/{i}"),
                });
            }
        }
        for (i, value) in new.iter().enumerate() {
            if !old.contains(value) {
                ops.push(PatchOp {
                    op: "add",
                    path: format!("{path}/{i}"),
                });
            }
        }
        return;
    }
    let common = old.len().min(new.len());
    for i in (common..old.len()).rev() {
        ops.push(PatchOp {
            op: "remove",
            path: format!("{path}/{i}"),
        });
    }
    for i in common..new.len() {
        ops.push(PatchOp {
            op: "add",
            path: format!("{path}/{i}"),
        });
    }
    for i in 0..common {
        diff_values(&old[i], &new[i], &format!("{path}/{i}"), ops);
    }
}

fn escape_pointer(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// `/containers/<n>/image` exactly.
pub fn is_container_image_path(path: &str) -> bool {
    path.strip_prefix("/containers/")
        .and_then(|rest| rest.strip_suffix("/image"))
        .is_some_and(|index| !index.is_empty() && index.bytes().all(|b| b.is_ascii_digit()))
}

/// `/containers/<n>/image` anywhere in the path (Advanced StatefulSet's unanchored regex, so
/// `/containers/0/imagePullPolicy` passes too).
pub fn contains_container_image_path(path: &str) -> bool {
    path.match_indices("/containers/").any(|(start, matched)| {
        let rest = &path[start + matched.len()..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        digits > 0 && rest[digits..].starts_with("/image")
    })
}

// ---------------------------------------------------------------------------------------------
// Object metadata on UPDATE

/// `ValidateObjectMetaUpdate`: identity fields are immutable, a resource version is required,
/// the generation never decreases, a deleted object gains no finalizers, and labels and
/// annotations stay valid.
pub fn validate_object_meta_update(
    new: &ObjectMeta,
    old: &ObjectMeta,
    path: &Path,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if old.deletion_timestamp.is_some() {
        let old_finalizers: BTreeSet<&str> = old
            .finalizers
            .iter()
            .flatten()
            .map(String::as_str)
            .collect();
        let added: BTreeSet<String> = new
            .finalizers
            .iter()
            .flatten()
            .filter(|f| !old_finalizers.contains(f.as_str()))
            .cloned()
            .collect();
        if !added.is_empty() {
            let added: Vec<String> = added.into_iter().collect();
            errors.push(FieldError::forbidden(
                &path.child("finalizers"),
                format!(
                    "no new finalizers can be added if the object is being deleted, found new finalizers {}",
                    go_string_slice(Some(&added))
                ),
            ));
        }
    }
    let resource_version = new.resource_version.as_deref().unwrap_or("");
    if resource_version.is_empty() {
        errors.push(FieldError::invalid(
            &path.child("resourceVersion"),
            resource_version,
            "must be specified for an update",
        ));
    }
    let (new_generation, old_generation) =
        (new.generation.unwrap_or(0), old.generation.unwrap_or(0));
    if new_generation < old_generation {
        errors.push(FieldError::invalid(
            &path.child("generation"),
            new_generation,
            "must not be decremented",
        ));
    }
    let text = |value: &Option<String>| value.clone().unwrap_or_default();
    for (field, new_value, old_value) in [
        ("name", text(&new.name), text(&old.name)),
        ("namespace", text(&new.namespace), text(&old.namespace)),
        ("uid", text(&new.uid), text(&old.uid)),
    ] {
        if new_value != old_value {
            errors.push(FieldError::invalid(
                &path.child(field),
                new_value,
                FIELD_IMMUTABLE,
            ));
        }
    }
    let time = |value: &Option<k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>| {
        value.as_ref().map(|t| t.0.to_string())
    };
    for (field, new_value, old_value) in [
        (
            "creationTimestamp",
            time(&new.creation_timestamp),
            time(&old.creation_timestamp),
        ),
        (
            "deletionTimestamp",
            time(&new.deletion_timestamp),
            time(&old.deletion_timestamp),
        ),
        (
            "deletionGracePeriodSeconds",
            new.deletion_grace_period_seconds.map(|s| s.to_string()),
            old.deletion_grace_period_seconds.map(|s| s.to_string()),
        ),
    ] {
        if new_value != old_value {
            let shown = GoRepr(new_value.unwrap_or_else(|| "null".to_string()));
            errors.push(FieldError::invalid(
                &path.child(field),
                shown,
                FIELD_IMMUTABLE,
            ));
        }
    }
    errors.extend(validate_labels(new.labels.as_ref(), &path.child("labels")));
    errors.extend(validate_annotations(
        new.annotations.as_ref(),
        &path.child("annotations"),
    ));
    errors
}

#[cfg(test)]
mod tests;
