//! SidecarSet validation: every rejection of OpenKruise's SidecarSet validating webhook
//! (spec §5 A–E), as a list of Kubernetes-style field errors.
//!
//! The checks run in OpenKruise's order: metadata (A), canary annotations (B), spec (C) and, on
//! UPDATE, container immutability (D). Conflicts with other SidecarSets (E) are only looked for
//! when everything before passed. The validator sees *defaulted* objects (the mutating webhook
//! runs first); field paths reproduce upstream's, quirks included (`spec.container.podInjectPolicy`,
//! `spec[0].transferEnv.fieldRef`), because clients and tests match on them.
//!
//! Where this server differs from a full OpenKruise installation:
//! * it keeps no ControllerRevisions, so `injectionStrategy.revision` always reports the revision
//!   as missing, with the message OpenKruise gives for a missing one;
//! * it reads no `kruise-configuration` ConfigMap, so `patchPodMetadata` behaves as with the
//!   `SidecarSetPatchPodMetadataDefaultsAllowed` gate on and no whitelist: only the per-entry rules
//!   apply;
//! * it cannot inject `resourcesPolicy` yet, so such a policy is checked like upstream *and*
//!   refused with a Forbidden error.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Container, ObjectFieldSelector};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::field::{
    FieldError, GoRepr, LabelSelectorOptions, Path, go_label_selector, go_quote, go_string_map,
    label_selector_conversion_error, max_len_error, qualified_name_errors, regex_error,
    validate_label_selector, validate_object_meta, validate_positive_int_or_percent,
};
use super::pod::{split_subscripted_path, validate_pod_containers_and_volumes};
use super::workload::rollout_order_errors;
use crate::api::keys;
use crate::api::{ResourcesPolicy, SidecarSet, SidecarSetInjectRevision, SidecarSetUpdateStrategy};
use crate::inject::selector::is_empty;

const NAME_MAX_LENGTH: usize = 63;
const NAME_FORMAT: &str = "^[a-zA-Z0-9\\-]+$";
const NAME_MESSAGE: &str = "sidecarset name must consist of alphanumeric characters or '-'";
/// Upstream validates the fake pod with the default grace period.
const DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS: i64 = 30;

/// Every reason to reject `new` (CREATE: `old` is `None`; UPDATE: the stored object).
/// `others` is the cluster's SidecarSets; it may contain `new` itself, which is ignored.
pub fn validate_sidecarset(
    new: &SidecarSet,
    old: Option<&SidecarSet>,
    others: &[Arc<SidecarSet>],
) -> Vec<FieldError> {
    let mut errors = validate_object_meta(
        &new.metadata,
        false,
        sidecarset_name_errors,
        &Path::new("metadata"),
    );
    errors.extend(validate_canary(new, old, others));
    errors.extend(validate_spec(new));
    if let Some(old) = old {
        errors.extend(validate_container_immutability(new, old));
    }
    if !errors.is_empty() {
        return errors;
    }
    validate_conflicts(new, others)
}

/// Whether some pod could match both selectors, by OpenKruise's deliberately rough test: two
/// selectors are disjoint when one pins a key to values the other cannot have (see
/// [`is_disjoint`]); otherwise they overlap.
pub fn selectors_overlap(a: &LabelSelector, b: &LabelSelector) -> bool {
    !(is_disjoint(a, b) || is_disjoint(b, a))
}

// ---------------------------------------------------------------------------------------------
// A. Metadata

/// SidecarSet names are looser than DNS names (upper case passes) but at most 63 characters.
fn sidecarset_name_errors(name: &str) -> Vec<String> {
    let mut errors = Vec::new();
    let valid = !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    if !valid {
        errors.push(regex_error(NAME_MESSAGE, NAME_FORMAT, &["example-com"]));
    }
    if name.len() > NAME_MAX_LENGTH {
        errors.push(max_len_error(NAME_MAX_LENGTH));
    }
    errors
}

// ---------------------------------------------------------------------------------------------
// B. Canary

/// A canary overrides one existing, non-canary base, keeps it for life and never rolls pods.
fn validate_canary(
    set: &SidecarSet,
    old: Option<&SidecarSet>,
    others: &[Arc<SidecarSet>],
) -> Vec<FieldError> {
    let Some(base) = set.canary_base() else {
        return Vec::new();
    };
    let reject = |detail: String| {
        vec![FieldError::invalid(
            &Path::new("metadata"),
            GoRepr(go_string_map(set.metadata.annotations.as_ref())),
            detail,
        )]
    };
    if base == set.name() {
        return reject("base sidecarSet cannot be itself".into());
    }
    if let Some(old) = old
        && old.annotation(keys::SIDECARSET_BASE).unwrap_or("") != base
    {
        return reject(format!(
            "annotations[{}] is immutable",
            keys::SIDECARSET_BASE
        ));
    }
    let Some(base_set) = others.iter().find(|other| other.name() == base) else {
        return reject(format!(
            "fetch base sidecarSet[{base}] failed: sidecarsets.{} {} not found",
            keys::GROUP,
            go_quote(base)
        ));
    };
    if base_set.canary_base().is_some() {
        return reject("base sidecarSet cannot be canary".into());
    }
    if strategy_type(set) != keys::NOT_UPDATE {
        return reject("RollingUpdate is not supported for canary sidecarSet".into());
    }
    Vec::new()
}

// ---------------------------------------------------------------------------------------------
// C. Spec

fn strategy_type(set: &SidecarSet) -> &str {
    set.spec
        .update_strategy
        .as_ref()
        .and_then(|s| s.type_.as_deref())
        .unwrap_or("")
}

fn validate_spec(set: &SidecarSet) -> Vec<FieldError> {
    let spec = Path::new("spec");
    let mut errors = Vec::new();
    let rolling = strategy_type(set) == keys::ROLLING_UPDATE;

    // C.1 Native sidecars cannot be upgraded in place yet.
    for init in set.init_containers() {
        if init.is_native_sidecar() && rolling {
            errors.push(FieldError::required(
                &spec.child("updateStrategy"),
                "The initContainer in-place upgrade is not currently supported.",
            ));
        }
    }

    // C.2 Pod and namespace selectors.
    match &set.spec.selector {
        None => errors.push(FieldError::required(
            &spec.child("selector"),
            "no selector defined for SidecarSet",
        )),
        Some(selector) => errors.extend(validate_selector(selector, &spec.child("selector"))),
    }
    if let Some(selector) = namespace_selector(set) {
        errors.extend(validate_selector(
            &selector,
            &spec.child("namespaceSelector"),
        ));
    }

    // C.3 and C.4
    errors.extend(validate_injection_revision(set));
    if rolling && let Some(strategy) = &set.spec.update_strategy {
        errors.extend(validate_rolling_update(
            strategy,
            &spec.child("updateStrategy"),
        ));
    }

    // C.6–C.9 Containers (C.5, converting volumes to the internal form, cannot fail here).
    if set.init_containers().is_empty() && set.containers().is_empty() {
        errors.push(FieldError::required(
            &spec,
            "no initContainer or container defined for SidecarSet",
        ));
    } else {
        errors.extend(validate_sidecar_containers(set, &spec));
    }

    // C.10
    errors.extend(validate_patch_pod_metadata(
        set,
        &spec.child("patchPodMetadata"),
    ));
    errors
}

/// The namespace selector OpenKruise sees: a v1alpha1 `spec.namespace` becomes (and replaces)
/// `namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: <ns>}}`.
fn namespace_selector(set: &SidecarSet) -> Option<Cow<'_, LabelSelector>> {
    match set.spec.namespace.as_deref().filter(|ns| !ns.is_empty()) {
        Some(namespace) => Some(Cow::Owned(LabelSelector {
            match_labels: Some(BTreeMap::from([(
                keys::NAMESPACE_NAME_LABEL.to_string(),
                namespace.to_string(),
            )])),
            match_expressions: None,
        })),
        None => set.spec.namespace_selector.as_ref().map(Cow::Borrowed),
    }
}

/// Label-selector syntax, non-empty, and convertible (a bad value is reported twice: once by the
/// syntax check and once, at `<path>.selector`, by the conversion).
fn validate_selector(selector: &LabelSelector, path: &Path) -> Vec<FieldError> {
    let mut errors = validate_label_selector(selector, LabelSelectorOptions::default(), path);
    let rendered = || GoRepr(go_label_selector(selector));
    if is_empty(selector) {
        errors.push(FieldError::invalid(
            path,
            rendered(),
            "empty selector is not valid for sidecarset.",
        ));
    }
    // Upstream reports the failed conversion without its reason.
    if label_selector_conversion_error(selector).is_some() {
        errors.push(FieldError::invalid(&path.child("selector"), rendered(), ""));
    }
    errors
}

fn go_optional_string(value: Option<&String>) -> String {
    match value {
        None => "(*string)(nil)".to_string(),
        Some(value) => format!("(*string)({})", go_quote(value)),
    }
}

fn go_revision(revision: &SidecarSetInjectRevision) -> GoRepr {
    GoRepr(format!(
        "v1alpha1.SidecarSetInjectRevision{{CustomVersion:{}, RevisionName:{}, Policy:{}}}",
        go_optional_string(revision.custom_version.as_ref()),
        go_optional_string(revision.revision_name.as_ref()),
        go_quote(revision.policy.as_deref().unwrap_or(""))
    ))
}

/// C.3: the revision to inject must be named, restorable and paired with a known policy.
fn validate_injection_revision(set: &SidecarSet) -> Vec<FieldError> {
    let Some(revision) = set
        .spec
        .injection_strategy
        .as_ref()
        .and_then(|s| s.revision.as_ref())
    else {
        return Vec::new();
    };
    // Upstream reports these at `revision`, without the `spec.injectionStrategy` prefix.
    let path = Path::new("revision");
    let mut errors = Vec::new();
    match (&revision.revision_name, &revision.custom_version) {
        (None, None) => errors.push(FieldError::invalid(
            &path,
            go_revision(revision),
            "revisionName and customVersion cannot be empty simultaneously",
        )),
        (revision_name, _) => {
            // No ControllerRevision is stored by this server: answer as OpenKruise does when the
            // named revision (GET) or the custom version (LIST by labels) is absent.
            let cause = match revision_name {
                Some(name) if name.is_empty() => "resource name may not be empty".to_string(),
                Some(name) => format!("controllerrevisions.apps {} not found", go_quote(name)),
                None => format!("ControllerRevision.apps {} not found", go_quote(set.name())),
            };
            errors.push(FieldError::invalid(
                &path,
                "null",
                format!("Cannot find specific ControllerRevision, err: {cause}"),
            ));
        }
    }
    let policy = revision.policy.as_deref().unwrap_or("");
    if !matches!(policy, "" | "Always" | "Partial") {
        errors.push(FieldError::invalid(
            &path.child("policy"),
            go_revision(revision),
            format!("Invalid policy {policy}, supported: [Always, Partial]"),
        ));
    }
    errors
}

/// Go's `%+v` of the strategy, which upstream puts in the partition/selector error.
fn go_strategy(strategy: &SidecarSetUpdateStrategy) -> String {
    let int_or_string = |value: Option<&IntOrString>| match value {
        None => "<nil>".to_string(),
        Some(IntOrString::Int(n)) => n.to_string(),
        Some(IntOrString::String(s)) => s.clone(),
    };
    format!(
        "&{{Type:{} Paused:{} Selector:{} Partition:{} MaxUnavailable:{}}}",
        strategy.type_.as_deref().unwrap_or(""),
        strategy.paused.unwrap_or(false),
        strategy
            .selector
            .as_ref()
            .map_or_else(|| "nil".to_string(), go_label_selector),
        int_or_string(strategy.partition.as_ref()),
        int_or_string(strategy.max_unavailable.as_ref()),
    )
}

/// C.4: the rollout knobs, checked only for `RollingUpdate`.
fn validate_rolling_update(strategy: &SidecarSetUpdateStrategy, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let partition_set = match &strategy.partition {
        None => false,
        Some(IntOrString::String(_)) => true,
        Some(IntOrString::Int(n)) => *n != 0,
    };
    if partition_set && strategy.selector.is_some() {
        // Upstream's path here is a bare `updateStrategy`.
        errors.push(FieldError::invalid(
            &Path::new("updateStrategy"),
            go_strategy(strategy),
            "Partition and Selector cannot be used together",
        ));
    }
    if let Some(selector) = &strategy.selector {
        errors.extend(validate_selector(selector, &path.child("selector")));
    }
    if let Some(partition) = &strategy.partition {
        errors.extend(validate_positive_int_or_percent(
            partition,
            &path.child("partition"),
        ));
    }
    if let Some(max_unavailable) = &strategy.max_unavailable {
        errors.extend(validate_positive_int_or_percent(
            max_unavailable,
            &path.child("maxUnavailable"),
        ));
    }
    errors.extend(rollout_order_errors(
        strategy.priority_strategy.as_ref(),
        strategy.scatter_strategy.as_deref(),
        path,
    ));
    errors
}

/// C.7–C.9: the Kruise-only fields of each sidecar, then Kubernetes' own pod validation of all
/// sidecars and volumes as if they formed one pod.
fn validate_sidecar_containers(set: &SidecarSet, spec: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    // Upstream indexes the spec path itself (`spec[0].…`) for per-container fields.
    for (i, init) in set.init_containers().iter().enumerate() {
        if let Some(policy) = &init.resources_policy {
            let policy_path = spec.index(i).child("resourcesPolicy");
            if !init.is_native_sidecar() {
                errors.push(FieldError::forbidden(
                    &policy_path,
                    "resourcesPolicy is only supported for containers with RestartPolicy Always",
                ));
            }
            errors.extend(validate_resources_policy(
                &init.container,
                policy,
                &policy_path,
            ));
        }
    }
    for (i, sidecar) in set.containers().iter().enumerate() {
        let policy = sidecar.pod_inject_policy();
        if policy != keys::BEFORE_APP_CONTAINER && policy != keys::AFTER_APP_CONTAINER {
            errors.push(FieldError::invalid(
                &spec.child("container").child("podInjectPolicy"),
                policy,
                "unsupported pod inject policy",
            ));
        }
        let share = sidecar
            .share_volume_policy
            .as_ref()
            .and_then(|p| p.type_.as_deref())
            .unwrap_or("");
        if share != keys::SHARE_VOLUME_ENABLED && share != keys::SHARE_VOLUME_DISABLED {
            errors.push(FieldError::invalid(
                &spec.child("container").child("shareVolumePolicy"),
                GoRepr(format!(
                    "v1alpha1.ShareVolumePolicy{{Type:{}}}",
                    go_quote(share)
                )),
                "unsupported share volume policy",
            ));
        }
        let transfer_path = spec.index(i).child("transferEnv").child("fieldRef");
        for entry in sidecar.transfer_env.iter().flatten() {
            let field_ref = entry
                .source_container_name_from
                .as_ref()
                .and_then(|from| from.field_ref.as_ref());
            if let Some(field_ref) = field_ref {
                errors.extend(validate_transfer_env_field_ref(field_ref, &transfer_path));
            }
        }
        if let Some(resources_policy) = &sidecar.resources_policy {
            errors.extend(validate_resources_policy(
                &sidecar.container,
                resources_policy,
                &spec.index(i).child("resourcesPolicy"),
            ));
        }
    }
    errors.extend(validate_as_pod(set));
    errors
}

/// `sourceContainerNameFrom.fieldRef` may only read a pod label or annotation.
fn validate_transfer_env_field_ref(selector: &ObjectFieldSelector, path: &Path) -> Vec<FieldError> {
    let api_version = selector.api_version.as_deref().unwrap_or("");
    if api_version.is_empty() {
        return vec![FieldError::required(&path.child("apiVersion"), "")];
    }
    let field_path = selector.field_path.as_str();
    if field_path.is_empty() {
        return vec![FieldError::required(&path.child("fieldPath"), "")];
    }
    let conversion_error = |cause: String| {
        vec![FieldError::invalid(
            &path.child("fieldPath"),
            field_path,
            format!("error converting fieldPath: {cause}"),
        )]
    };
    if api_version != "v1" {
        return conversion_error(format!("unsupported pod version: {api_version}"));
    }
    // OpenKruise's converter accepts only subscripted label/annotation paths; even a bare
    // `metadata.name` fails to convert.
    match split_subscripted_path(field_path) {
        Some(("metadata.annotations", key)) => qualified_name_errors(&key.to_lowercase())
            .into_iter()
            .map(|m| FieldError::invalid(path, key.as_str(), m))
            .collect(),
        Some(("metadata.labels", key)) => qualified_name_errors(&key)
            .into_iter()
            .map(|m| FieldError::invalid(path, key.as_str(), m))
            .collect(),
        Some((base, _)) => conversion_error(format!("field path not supported: {base}")),
        None => conversion_error(format!("field label not supported: {field_path}")),
    }
}

fn go_resources_policy(policy: &ResourcesPolicy) -> GoRepr {
    GoRepr(format!(
        "v1alpha1.ResourcesPolicy{{TargetContainersMode:{}, TargetContainersNameRegex:{}}}",
        go_quote(&policy.target_containers_mode),
        go_quote(policy.target_containers_name_regex.as_deref().unwrap_or(""))
    ))
}

/// C.8d (and C.7): the structural checks of a `resourcesPolicy`, plus this server's refusal.
fn validate_resources_policy(
    container: &Container,
    policy: &ResourcesPolicy,
    path: &Path,
) -> Vec<FieldError> {
    // This server cannot compute sidecar resources at injection yet; accepting the policy would
    // silently inject the sidecar without resources, so it is refused outright.
    let mut errors = vec![FieldError::forbidden(
        path,
        "resourcesPolicy is not supported by this server yet",
    )];
    let resources = container.resources.as_ref();
    let has_resources = resources.is_some_and(|r| {
        r.limits.as_ref().is_some_and(|l| !l.is_empty())
            || r.requests.as_ref().is_some_and(|q| !q.is_empty())
    });
    if has_resources {
        errors.push(FieldError::invalid(
            path,
            go_resources_policy(policy),
            "resourcesPolicy and resources cannot be configured together",
        ));
        return errors;
    }
    let regex_path = path.child("targetContainersNameRegex");
    match policy.target_containers_name_regex.as_deref().unwrap_or("") {
        "" => errors.push(FieldError::required(&regex_path, "invalid empty regex")),
        pattern => {
            if let Err(error) = regex::Regex::new(pattern) {
                errors.push(FieldError::invalid(
                    &regex_path,
                    pattern,
                    format!("invalid regex pattern: {}", regex_error_summary(&error)),
                ));
            }
        }
    }
    let expr_path = path.child("resourcesExpr");
    let expr = policy.resources_expr.as_ref();
    let limits = expr.and_then(|e| e.limits.as_ref());
    let requests = expr.and_then(|e| e.requests.as_ref());
    if limits.is_none() && requests.is_none() {
        errors.push(FieldError::invalid(
            &expr_path,
            GoRepr(
                "v1alpha1.ResourcesExpr{Limits:(*v1alpha1.ResourceExprLimits)(nil), Requests:(*v1alpha1.ResourceExprRequests)(nil)}"
                    .into(),
            ),
            "at least one of limits or requests must be configured",
        ));
        return errors;
    }
    for (kind, pair) in [("limits", limits), ("requests", requests)] {
        let Some(pair) = pair else { continue };
        for (variable, expression) in [("cpu", &pair.cpu), ("memory", &pair.memory)] {
            let expression = expression.as_deref().unwrap_or("");
            if expression.is_empty() {
                continue;
            }
            if let Err(cause) = expression::check(expression, variable) {
                errors.push(FieldError::invalid(
                    &expr_path.child(kind).child(variable),
                    expression,
                    format!("invalid expression: {cause}"),
                ));
            }
        }
    }
    errors
}

/// A one-line regex error in the style of Go's `error parsing regexp: …`.
fn regex_error_summary(error: &regex::Error) -> String {
    let text = error.to_string();
    let reason = text
        .lines()
        .rev()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or("")
        .trim_start_matches("error: ");
    format!("error parsing regexp: {reason}")
}

/// C.9: OpenKruise validates the sidecars as a pod (`ValidatePodCreate`) holding all of them and
/// the SidecarSet's volumes; with no containers a placeholder stands in, as pods need one.
fn validate_as_pod(set: &SidecarSet) -> Vec<FieldError> {
    let placeholder = Container {
        name: "test".into(),
        image: Some("busybox".into()),
        image_pull_policy: Some("IfNotPresent".into()),
        termination_message_policy: Some("File".into()),
        ..Default::default()
    };
    let init: Vec<&Container> = set.init_containers().iter().map(|c| &c.container).collect();
    let mut containers: Vec<&Container> = set.containers().iter().map(|c| &c.container).collect();
    if containers.is_empty() {
        containers.push(&placeholder);
    }
    validate_pod_containers_and_volumes(
        &init,
        &containers,
        set.volumes(),
        "Always",
        Some(DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS),
        &Path::new("spec"),
    )
}

/// C.10 with no whitelist ConfigMap (the `SidecarSetPatchPodMetadataDefaultsAllowed` behaviour):
/// each entry needs annotations with valid keys and a policy, and no key may appear twice.
fn validate_patch_pod_metadata(set: &SidecarSet, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut keys_seen = BTreeSet::new();
    for patch in set.spec.patch_pod_metadata.iter().flatten() {
        let annotations = patch.annotations.as_ref().filter(|a| !a.is_empty());
        match annotations {
            None => errors.push(FieldError::required(
                path,
                "no annotations defined for SidecarSet",
            )),
            Some(annotations) => {
                // Upstream validates a throwaway ObjectMeta rooted at `patchPodMetadata`.
                let meta = ObjectMeta {
                    name: Some("fake-name".into()),
                    annotations: Some(annotations.clone()),
                    ..Default::default()
                };
                errors.extend(validate_object_meta(
                    &meta,
                    false,
                    sidecarset_name_errors,
                    &Path::new("patchPodMetadata"),
                ));
            }
        }
        if patch.patch_policy.as_deref().unwrap_or("").is_empty() {
            errors.push(FieldError::required(
                path,
                "no patchPolicy defined for patchPodMetadata",
            ));
        }
        for key in annotations.into_iter().flat_map(BTreeMap::keys) {
            if !keys_seen.insert(key.as_str()) {
                errors.push(FieldError::required(
                    path,
                    format!("patch annotation[{key}] already exist"),
                ));
            }
        }
    }
    errors
}

// ---------------------------------------------------------------------------------------------
// D. Container immutability on UPDATE

/// Containers may be removed but not added or renamed, and keep their upgrade type.
fn validate_container_immutability(new: &SidecarSet, old: &SidecarSet) -> Vec<FieldError> {
    let path = Path::new("spec.containers");
    let old_upgrade_types: BTreeMap<&str, &str> = old
        .containers()
        .iter()
        .map(|c| (c.name(), c.upgrade_type()))
        .collect();
    let mut errors = Vec::new();
    for container in new.containers() {
        let name = container.name();
        match old_upgrade_types.get(name) {
            Some(&old_type) => {
                if !old_type.is_empty() && container.upgrade_type() != old_type {
                    errors.push(FieldError::invalid(
                        &path.child("upgradeStrategy").child("upgradeType"),
                        name,
                        format!("container {name} upgradeType is immutable"),
                    ));
                }
            }
            None => errors.push(FieldError::invalid(
                &path.child("name"),
                name,
                format!("container {name} is not found"),
            )),
        }
    }
    errors
}

// ---------------------------------------------------------------------------------------------
// E. Conflicts with other SidecarSets

/// Two SidecarSets that may select the same pod must not both inject a container (or init
/// container) of the same name, define a shared volume name differently, or fight over an
/// annotation where either side overwrites it.
fn validate_conflicts(set: &SidecarSet, others: &[Arc<SidecarSet>]) -> Vec<FieldError> {
    let spec = Path::new("spec");
    let canary_base = set.canary_base();
    let empty = LabelSelector::default();
    let selector = set.spec.selector.as_ref().unwrap_or(&empty);
    let own_namespaces = namespace_selector(set);

    // Later SidecarSets win a name, as upstream fills one map per kind.
    let mut init_owners: BTreeMap<&str, &SidecarSet> = BTreeMap::new();
    let mut container_owners: BTreeMap<&str, &SidecarSet> = BTreeMap::new();
    let mut volume_owners: BTreeMap<&str, &SidecarSet> = BTreeMap::new();
    let mut annotation_owners: BTreeMap<&str, (&str, &str)> = BTreeMap::new();
    for other in others.iter().map(Arc::as_ref) {
        if other.name() == set.name() || canary_base == Some(other.name()) {
            continue;
        }
        let namespaces_disjoint = match (&own_namespaces, namespace_selector(other)) {
            (Some(own), Some(theirs)) => !selectors_overlap(own, &theirs),
            _ => false,
        };
        let pods_overlap =
            selectors_overlap(selector, other.spec.selector.as_ref().unwrap_or(&empty));
        if namespaces_disjoint || !pods_overlap {
            continue;
        }
        for container in other.init_containers() {
            init_owners.insert(container.name(), other);
        }
        for container in other.containers() {
            container_owners.insert(container.name(), other);
        }
        for volume in other.volumes() {
            volume_owners.insert(volume.name.as_str(), other);
        }
        for patch in other.spec.patch_pod_metadata.iter().flatten() {
            let policy = patch.patch_policy.as_deref().unwrap_or("");
            if policy == keys::PATCH_POLICY_RETAIN {
                continue;
            }
            for key in patch.annotations.iter().flat_map(BTreeMap::keys) {
                annotation_owners.insert(key.as_str(), (other.name(), policy));
            }
        }
    }

    let mut errors = Vec::new();
    let containers_path = spec.child("containers");
    for (own, owners) in [
        (set.init_containers(), &init_owners),
        (set.containers(), &container_owners),
    ] {
        for container in own {
            let name = container.name();
            if let Some(other) = owners.get(name) {
                errors.push(FieldError::invalid(
                    &containers_path,
                    name,
                    format!("container {name} already exist in {}", other.name()),
                ));
            }
        }
    }
    for volume in set.volumes() {
        let Some(other) = volume_owners.get(volume.name.as_str()) else {
            continue;
        };
        let theirs = other.volumes().iter().find(|v| v.name == volume.name);
        if theirs != Some(volume) {
            errors.push(FieldError::invalid(
                &spec.child("volumes"),
                volume.name.as_str(),
                format!(
                    "volume {} is in conflict with sidecarset {}",
                    volume.name,
                    other.name()
                ),
            ));
        }
    }
    for patch in set.spec.patch_pod_metadata.iter().flatten() {
        let policy = patch.patch_policy.as_deref().unwrap_or("");
        if policy == keys::PATCH_POLICY_RETAIN {
            continue;
        }
        for key in patch.annotations.iter().flat_map(BTreeMap::keys) {
            let Some(&(other, other_policy)) = annotation_owners.get(key.as_str()) else {
                continue;
            };
            if policy == keys::PATCH_POLICY_OVERWRITE
                || other_policy == keys::PATCH_POLICY_OVERWRITE
            {
                errors.push(FieldError::invalid(
                    &spec.child("patchPodMetadata"),
                    key.as_str(),
                    format!("annotation {key} is in conflict with sidecarset {other}"),
                ));
            }
        }
    }
    errors
}

/// Whether `first` pins some key to values `second` cannot take. From `first`: `matchLabels`
/// k=v gives k → [v], `In` adds its values, `Exists` makes k → [ALL]; `NotIn` and
/// `DoesNotExist` are ignored. `second` is then disjoint on a pinned key (without ALL) where its
/// label or `In` values miss the list, where its `NotIn` covers the whole list, where it requires
/// `Exists` on a key `first` does not pin, or `DoesNotExist` on one it does.
fn is_disjoint(first: &LabelSelector, second: &LabelSelector) -> bool {
    const ALL: &str = "ALL";
    let mut pinned: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (key, value) in first.match_labels.iter().flatten() {
        pinned.insert(key.as_str(), vec![value.as_str()]);
    }
    for requirement in first.match_expressions.iter().flatten() {
        let values = requirement.values.iter().flatten().map(String::as_str);
        match requirement.operator.as_str() {
            "In" => pinned
                .entry(requirement.key.as_str())
                .or_default()
                .extend(values),
            "Exists" => {
                pinned.insert(requirement.key.as_str(), vec![ALL]);
            }
            _ => {}
        }
    }
    let any_value = |values: &[&str]| values.contains(&ALL);
    for (key, value) in second.match_labels.iter().flatten() {
        if let Some(values) = pinned.get(key.as_str())
            && !any_value(values)
            && !values.contains(&value.as_str())
        {
            return true;
        }
    }
    for requirement in second.match_expressions.iter().flatten() {
        let pinned_values = pinned.get(requirement.key.as_str());
        let theirs: Vec<&str> = requirement
            .values
            .iter()
            .flatten()
            .map(String::as_str)
            .collect();
        let disjoint = match requirement.operator.as_str() {
            "In" => pinned_values.is_some_and(|values| {
                !any_value(values) && !theirs.iter().any(|v| values.contains(v))
            }),
            "NotIn" => {
                pinned_values.is_some_and(|values| values.iter().all(|v| theirs.contains(v)))
            }
            "Exists" => pinned_values.is_none(),
            "DoesNotExist" => pinned_values.is_some(),
            _ => false,
        };
        if disjoint {
            return true;
        }
    }
    false
}

// ---------------------------------------------------------------------------------------------
// resourcesPolicy expressions

/// A check of `resourcesPolicy` expressions that mirrors OpenKruise's calculator
/// (pkg/util/calculator): the expression is lexed as upstream does, parsed
/// (`+ - * /`, unary minus, parentheses, `max`/`min` of two arguments, numbers, percentages,
/// quantities and one variable) and evaluated once with the variable bound to the number 1, so
/// that unknown names, wrong arities, quantity × quantity, division by a quantity or by zero are
/// refused just like upstream refuses them.
mod expression {
    use crate::inject::quantity::Quantity;

    /// Only the kind of a quantity matters for the checks; numbers keep their value because
    /// division by zero depends on it.
    #[derive(Debug, Clone, Copy)]
    enum Value {
        Number(f64),
        Quantity,
    }

    #[derive(Debug, Clone, PartialEq)]
    enum Token {
        Number(f64),
        Quantity(String),
        Ident(String),
        Symbol(u8),
    }

    /// Kubernetes quantity suffixes the calculator recognises after a number.
    const UNITS: [&str; 11] = ["m", "k", "M", "G", "T", "P", "Ki", "Mi", "Gi", "Ti", "Pi"];

    /// `Ok` when `expression` (over the variable `variable`, `cpu` or `memory`) would evaluate.
    pub fn check(expression: &str, variable: &str) -> Result<(), String> {
        let tokens = lex(expression.as_bytes());
        let mut parser = Parser {
            tokens: &tokens,
            position: 0,
            variable,
        };
        parser.expression()?;
        match parser.peek() {
            None => Ok(()),
            Some(_) => Err("syntax error".into()),
        }
    }

    // Upstream's lexer works on bytes, each taken as a Latin-1 character.
    fn is_letter(byte: u8) -> bool {
        char::from(byte).is_alphabetic()
    }

    fn is_space(byte: u8) -> bool {
        char::from(byte).is_whitespace()
    }

    fn lex(input: &[u8]) -> Vec<Token> {
        let mut tokens = Vec::new();
        let mut position = 0;
        while position < input.len() {
            let byte = input[position];
            if is_space(byte) {
                position += 1;
            } else if byte.is_ascii_digit() || byte == b'.' {
                let end = number_end(input, position);
                tokens.push(number_token(&input[position..end]));
                position = end;
            } else if is_letter(byte) {
                let end = position
                    + input[position..]
                        .iter()
                        .take_while(|&&b| is_letter(b) || b.is_ascii_digit() || b == b'_')
                        .count();
                tokens.push(Token::Ident(
                    String::from_utf8_lossy(&input[position..end]).into_owned(),
                ));
                position = end;
            } else {
                tokens.push(Token::Symbol(byte));
                position += 1;
            }
        }
        tokens
    }

    /// Digits with one dot, an optional exponent with sign, then either `%` or a run of letters.
    fn number_end(input: &[u8], start: usize) -> usize {
        let (mut seen_dot, mut seen_exponent, mut expect_exponent_digit) = (false, false, false);
        let mut position = start;
        while let Some(&byte) = input.get(position) {
            match byte {
                b'0'..=b'9' => expect_exponent_digit = false,
                b'.' if !seen_dot && !seen_exponent => seen_dot = true,
                b'e' | b'E' if !seen_exponent => {
                    seen_exponent = true;
                    expect_exponent_digit = true;
                }
                b'+' | b'-' if expect_exponent_digit => expect_exponent_digit = false,
                b'%' => return position + 1,
                b if is_letter(b) && !expect_exponent_digit && b != b'e' && b != b'E' => {
                    return position
                        + input[position..]
                            .iter()
                            .take_while(|&&b| is_letter(b))
                            .count();
                }
                _ => return position,
            }
            position += 1;
        }
        position
    }

    fn number_token(text: &[u8]) -> Token {
        let text = String::from_utf8_lossy(text).into_owned();
        let numeric_end = text
            .bytes()
            .position(|b| !(b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-')));
        if let Some(end) = numeric_end.filter(|&end| end > 0)
            && UNITS.contains(&text.get(end..).unwrap_or(""))
        {
            return Token::Quantity(text);
        }
        // Upstream ignores a number that does not parse and uses 0.
        let value = match text.strip_suffix('%') {
            Some(percent) => percent.parse::<f64>().map(|v| v / 100.0),
            None => text.parse::<f64>(),
        };
        Token::Number(value.unwrap_or(0.0))
    }

    struct Parser<'a> {
        tokens: &'a [Token],
        position: usize,
        variable: &'a str,
    }

    impl Parser<'_> {
        fn peek(&self) -> Option<&Token> {
            self.tokens.get(self.position)
        }

        fn next(&mut self) -> Option<&Token> {
            let token = self.tokens.get(self.position);
            self.position += 1;
            token
        }

        fn eat(&mut self, symbol: u8) -> bool {
            if self.peek() == Some(&Token::Symbol(symbol)) {
                self.position += 1;
                true
            } else {
                false
            }
        }

        fn require(&mut self, symbol: u8) -> Result<(), String> {
            if self.eat(symbol) {
                Ok(())
            } else {
                Err("syntax error".into())
            }
        }

        fn expression(&mut self) -> Result<Value, String> {
            let mut left = self.term()?;
            loop {
                if self.eat(b'+') {
                    left = add(left, self.term()?);
                } else if self.eat(b'-') {
                    left = add(left, negate(self.term()?));
                } else {
                    return Ok(left);
                }
            }
        }

        fn term(&mut self) -> Result<Value, String> {
            let mut left = self.factor()?;
            loop {
                if self.eat(b'*') {
                    left = multiply(left, self.factor()?)?;
                } else if self.eat(b'/') {
                    left = divide(left, self.factor()?)?;
                } else {
                    return Ok(left);
                }
            }
        }

        fn factor(&mut self) -> Result<Value, String> {
            match self.next().cloned() {
                Some(Token::Number(value)) => Ok(Value::Number(value)),
                Some(Token::Quantity(text)) => match Quantity::parse(&text) {
                    Ok(_) => Ok(Value::Quantity),
                    Err(error) => Err(error.to_string()),
                },
                Some(Token::Ident(name)) if self.eat(b'(') => {
                    let mut arguments = vec![self.expression()?];
                    if self.eat(b',') {
                        arguments.push(self.expression()?);
                    }
                    self.require(b')')?;
                    call(&name, &arguments)
                }
                Some(Token::Ident(name)) => {
                    if name.to_lowercase() == self.variable {
                        Ok(Value::Number(1.0))
                    } else {
                        Err(format!("undefined variable: {}", name.to_lowercase()))
                    }
                }
                Some(Token::Symbol(b'(')) => {
                    let value = self.expression()?;
                    self.require(b')')?;
                    Ok(value)
                }
                Some(Token::Symbol(b'-')) => Ok(negate(self.factor()?)),
                _ => Err("syntax error".into()),
            }
        }
    }

    fn negate(value: Value) -> Value {
        match value {
            Value::Number(n) => Value::Number(-n),
            Value::Quantity => Value::Quantity,
        }
    }

    fn add(left: Value, right: Value) -> Value {
        match (left, right) {
            (Value::Number(a), Value::Number(b)) => Value::Number(a + b),
            _ => Value::Quantity,
        }
    }

    fn multiply(left: Value, right: Value) -> Result<Value, String> {
        match (left, right) {
            (Value::Number(a), Value::Number(b)) => Ok(Value::Number(a * b)),
            (Value::Quantity, Value::Quantity) => Err("multiplication of two quantities".into()),
            _ => Ok(Value::Quantity),
        }
    }

    fn divide(left: Value, right: Value) -> Result<Value, String> {
        match (left, right) {
            (_, Value::Quantity) => Err("division by quantity".into()),
            (_, Value::Number(0.0)) => Err("division by zero".into()),
            (Value::Number(a), Value::Number(b)) => Ok(Value::Number(a / b)),
            (Value::Quantity, Value::Number(_)) => Ok(Value::Quantity),
        }
    }

    fn call(name: &str, arguments: &[Value]) -> Result<Value, String> {
        let lower = name.to_lowercase();
        if lower != "max" && lower != "min" {
            return Err(format!("unknown function: {name}"));
        }
        let [left, right] = arguments else {
            return Err(format!(
                "{lower} function requires exactly 2 arguments, got {}",
                arguments.len()
            ));
        };
        Ok(match (*left, *right) {
            (Value::Number(a), Value::Number(b)) => {
                Value::Number(if (lower == "max") == (a >= b) { a } else { b })
            }
            _ => Value::Quantity,
        })
    }

    #[cfg(test)]
    mod tests {
        use super::check;

        #[test]
        fn accepts_what_upstream_accepts() {
            for (expression, variable) in [
                ("cpu*50%", "cpu"),
                ("max(cpu*50%, 50m)", "cpu"),
                ("min(cpu*50%, 100m)", "cpu"),
                ("0.5*cpu - 0.3*max(0, cpu-4) + 0.3*max(0, cpu-8)", "cpu"),
                ("max( cpu * 0.5 , 50m )", "cpu"),
                ("memory*50%", "memory"),
                ("max(memory*50%, 100Mi)", "memory"),
                ("max(min(cpu*50%, 100m), 50m)", "cpu"),
                ("100Mi", "memory"),
                ("-cpu + 2", "cpu"),
                ("CPU/2", "cpu"),
                ("1.5", "cpu"),
            ] {
                assert_eq!(check(expression, variable), Ok(()), "{expression}");
            }
        }

        #[test]
        fn refuses_what_upstream_refuses() {
            for (expression, variable) in [
                ("invalid expression @#$", "cpu"),
                ("max(cpu*50%, 50m", "cpu"),
                ("max(cpu*50%)", "cpu"),
                ("invalidvar * 50%", "cpu"),
                ("cpu +*/ 50%", "cpu"),
                ("invalid_cpu_expr", "cpu"),
                ("bad_memory_expr", "memory"),
                ("memory*50%", "cpu"),
                ("50m*100Mi", "cpu"),
                ("1/50m", "cpu"),
                ("cpu/(cpu-1)", "cpu"),
                ("avg(cpu, 1)", "cpu"),
                ("", "cpu"),
                ("1.2.3", "cpu"),
                ("5e3m", "cpu"),
                ("1.5e3m", "cpu"),
            ] {
                assert!(check(expression, variable).is_err(), "{expression}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{
        ResourceExprPair, ResourcesExpr, ShareVolumePolicy, SidecarContainer,
        SidecarContainerUpgradeStrategy, SidecarSetInjectionStrategy, SidecarSetPatchPodMetadata,
        SidecarSetSpec, SourceContainerNameSource, TransferEnvVar, UpdatePriorityOrderTerm,
        UpdatePriorityStrategy, UpdatePriorityWeightTerm, UpdateScatterTerm,
    };
    use crate::validate::field::aggregate;
    use k8s_openapi::api::core::v1::{
        EmptyDirVolumeSource, EnvVar, HostPathVolumeSource, PersistentVolumeClaimVolumeSource,
        ProjectedVolumeSource, ResourceRequirements, ServiceAccountTokenProjection, Volume,
        VolumeDevice, VolumeMount, VolumeProjection,
    };
    use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement;

    // ----- builders -----------------------------------------------------------------------

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn match_labels(pairs: &[(&str, &str)]) -> LabelSelector {
        LabelSelector {
            match_labels: Some(labels(pairs)),
            match_expressions: None,
        }
    }

    fn expression(key: &str, operator: &str, values: &[&str]) -> LabelSelectorRequirement {
        LabelSelectorRequirement {
            key: key.into(),
            operator: operator.into(),
            values: (!values.is_empty()).then(|| values.iter().map(|v| v.to_string()).collect()),
        }
    }

    fn with_expressions(
        mut selector: LabelSelector,
        expressions: Vec<LabelSelectorRequirement>,
    ) -> LabelSelector {
        selector.match_expressions = Some(expressions);
        selector
    }

    /// A sidecar as the defaulting webhook leaves it.
    fn sidecar(name: &str) -> SidecarContainer {
        SidecarContainer {
            container: Container {
                name: name.into(),
                image: Some("test-image".into()),
                image_pull_policy: Some("IfNotPresent".into()),
                termination_message_policy: Some("File".into()),
                ..Default::default()
            },
            pod_inject_policy: Some(keys::BEFORE_APP_CONTAINER.into()),
            upgrade_strategy: Some(SidecarContainerUpgradeStrategy {
                upgrade_type: Some(keys::COLD_UPGRADE.into()),
                hot_upgrade_empty_image: None,
            }),
            share_volume_policy: Some(ShareVolumePolicy {
                type_: Some(keys::SHARE_VOLUME_DISABLED.into()),
            }),
            ..Default::default()
        }
    }

    fn native_sidecar(name: &str) -> SidecarContainer {
        let mut init = sidecar(name);
        init.container.restart_policy = Some("Always".into());
        init
    }

    fn strategy(type_: &str) -> Option<SidecarSetUpdateStrategy> {
        Some(SidecarSetUpdateStrategy {
            type_: Some(type_.into()),
            ..Default::default()
        })
    }

    /// The "valid base" of the V table: name `test-sidecarset`, selector `a=b`, one container
    /// `test-sidecar`/`test-image`, updateStrategy `NotUpdate`.
    fn base() -> SidecarSet {
        named("test-sidecarset")
    }

    fn named(name: &str) -> SidecarSet {
        SidecarSet::new(
            name,
            SidecarSetSpec {
                selector: Some(match_labels(&[("a", "b")])),
                containers: Some(vec![sidecar("test-sidecar")]),
                update_strategy: strategy(keys::NOT_UPDATE),
                ..Default::default()
            },
        )
    }

    fn canary(mut set: SidecarSet, base_name: &str) -> SidecarSet {
        set.metadata.annotations = Some(labels(&[
            (keys::SIDECARSET_CANARY, "true"),
            (keys::SIDECARSET_BASE, base_name),
        ]));
        set
    }

    fn empty_dir(name: &str) -> Volume {
        Volume {
            name: name.into(),
            empty_dir: Some(EmptyDirVolumeSource::default()),
            ..Default::default()
        }
    }

    fn host_path(name: &str, path: &str) -> Volume {
        Volume {
            name: name.into(),
            host_path: Some(HostPathVolumeSource {
                path: path.into(),
                type_: Some(String::new()),
            }),
            ..Default::default()
        }
    }

    fn pvc(name: &str, claim: &str) -> Volume {
        Volume {
            name: name.into(),
            persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                claim_name: claim.into(),
                read_only: None,
            }),
            ..Default::default()
        }
    }

    fn patch(policy: &str, pairs: &[(&str, &str)]) -> SidecarSetPatchPodMetadata {
        SidecarSetPatchPodMetadata {
            annotations: Some(labels(pairs)),
            patch_policy: Some(policy.into()),
        }
    }

    fn revision(
        custom_version: Option<&str>,
        revision_name: Option<&str>,
        policy: &str,
    ) -> Option<SidecarSetInjectionStrategy> {
        Some(SidecarSetInjectionStrategy {
            paused: None,
            revision: Some(SidecarSetInjectRevision {
                custom_version: custom_version.map(Into::into),
                revision_name: revision_name.map(Into::into),
                policy: Some(policy.into()),
            }),
        })
    }

    fn resources_policy(regex: &str, cpu_limit: Option<&str>) -> Option<ResourcesPolicy> {
        Some(ResourcesPolicy {
            target_containers_mode: "sum".into(),
            target_containers_name_regex: Some(regex.into()),
            resources_expr: Some(ResourcesExpr {
                limits: cpu_limit.map(|cpu| ResourceExprPair {
                    cpu: Some(cpu.into()),
                    memory: None,
                }),
                requests: None,
            }),
        })
    }

    fn transfer_env(api_version: Option<&str>, field_path: &str) -> Option<Vec<TransferEnvVar>> {
        Some(vec![TransferEnvVar {
            source_container_name_from: Some(SourceContainerNameSource {
                field_ref: Some(ObjectFieldSelector {
                    api_version: api_version.map(Into::into),
                    field_path: field_path.into(),
                }),
            }),
            env_name: Some("PROXY".into()),
            ..Default::default()
        }])
    }

    fn others(sets: Vec<SidecarSet>) -> Vec<Arc<SidecarSet>> {
        sets.into_iter().map(Arc::new).collect()
    }

    /// The other SidecarSet of the conflict cases: `sidecarset1`, selector `a=b`.
    fn other() -> SidecarSet {
        let mut set = named("sidecarset1");
        set.spec.containers = Some(vec![sidecar("other-sidecar")]);
        set
    }

    // ----- the V table ----------------------------------------------------------------------

    /// The object under validation, the stored object on UPDATE, and the cluster's SidecarSets.
    type Request = (SidecarSet, Option<SidecarSet>, Vec<Arc<SidecarSet>>);

    struct Case {
        id: &'static str,
        build: fn() -> Request,
        errors: usize,
        contains: &'static str,
    }

    fn create(set: SidecarSet) -> Request {
        (set, None, Vec::new())
    }

    fn v_table() -> Vec<Case> {
        vec![
            Case {
                id: "V1 no selector",
                build: || {
                    let mut set = base();
                    set.spec.selector = None;
                    create(set)
                },
                errors: 1,
                contains: "spec.selector: Required value: no selector defined for SidecarSet",
            },
            Case {
                id: "V2 empty selector",
                build: || {
                    let mut set = base();
                    set.spec.selector = Some(LabelSelector::default());
                    create(set)
                },
                errors: 1,
                contains: "empty selector is not valid for sidecarset.",
            },
            Case {
                id: "V3 invalid selector value",
                build: || {
                    let mut set = base();
                    set.spec.selector = Some(with_expressions(
                        match_labels(&[("a", "b")]),
                        vec![expression("app-name", "NotIn", &["app-group", "app-risk-"])],
                    ));
                    create(set)
                },
                errors: 2,
                contains: "spec.selector.selector: Invalid value: v1.LabelSelector{",
            },
            Case {
                id: "V4 invalid namespaceSelector",
                build: || {
                    let mut set = base();
                    set.spec.selector = Some(with_expressions(
                        match_labels(&[("a", "b")]),
                        vec![expression("app-name", "NotIn", &["app-group", "app-risk"])],
                    ));
                    set.spec.namespace_selector = Some(with_expressions(
                        match_labels(&[("a", "b")]),
                        vec![expression("app-name", "NotIn", &["app-group", "app-risk-"])],
                    ));
                    create(set)
                },
                errors: 2,
                contains: "spec.namespaceSelector.matchExpressions[0].values[1]: Invalid value: \"app-risk-\"",
            },
            Case {
                id: "V5 valid namespaceSelector",
                build: || {
                    let mut set = base();
                    set.spec.namespace_selector = Some(match_labels(&[("a", "b")]));
                    create(set)
                },
                errors: 0,
                contains: "",
            },
            Case {
                id: "V6 duplicated scatter term",
                build: || {
                    let mut set = base();
                    let term = || UpdateScatterTerm {
                        key: "key-1".into(),
                        value: "value-1".into(),
                    };
                    set.spec.update_strategy = Some(SidecarSetUpdateStrategy {
                        type_: Some(keys::ROLLING_UPDATE.into()),
                        scatter_strategy: Some(vec![term(), term()]),
                        ..Default::default()
                    });
                    create(set)
                },
                errors: 1,
                contains: "spec.updateStrategy.scatterStrategy: Required value: duplicated key=key-1 value=value-1",
            },
            Case {
                id: "V7 init container without image",
                build: || {
                    let mut set = base();
                    let mut init = SidecarContainer::default();
                    init.container.name = "test-sidecar".into();
                    init.container.image_pull_policy = Some("IfNotPresent".into());
                    init.container.termination_message_policy = Some("File".into());
                    set.spec.init_containers = Some(vec![init]);
                    set.spec.containers = None;
                    create(set)
                },
                errors: 1,
                contains: "spec.initContainers[0].image: Required value",
            },
            Case {
                id: "V8 no containers",
                build: || {
                    let mut set = base();
                    set.spec.containers = None;
                    create(set)
                },
                errors: 1,
                contains: "spec: Required value: no initContainer or container defined for SidecarSet",
            },
            Case {
                id: "V9 empty shareVolumePolicy",
                build: || {
                    let mut set = base();
                    set.spec.containers = Some(vec![SidecarContainer {
                        share_volume_policy: None,
                        ..sidecar("test-sidecar")
                    }]);
                    create(set)
                },
                errors: 1,
                contains: "spec.container.shareVolumePolicy: Invalid value: v1alpha1.ShareVolumePolicy{Type:\"\"}: unsupported share volume policy",
            },
            Case {
                id: "V10 unknown podInjectPolicy",
                build: || {
                    let mut set = base();
                    set.spec.containers = Some(vec![SidecarContainer {
                        pod_inject_policy: Some("Middle".into()),
                        ..sidecar("test-sidecar")
                    }]);
                    create(set)
                },
                errors: 1,
                contains: "spec.container.podInjectPolicy: Invalid value: \"Middle\": unsupported pod inject policy",
            },
            Case {
                id: "V11 volume without source (not defaulted)",
                build: || {
                    let mut set = base();
                    let token = Volume {
                        name: "istio-token".into(),
                        projected: Some(ProjectedVolumeSource {
                            default_mode: Some(420),
                            sources: Some(vec![VolumeProjection {
                                service_account_token: Some(ServiceAccountTokenProjection {
                                    audience: Some("istio-ca".into()),
                                    expiration_seconds: Some(43200),
                                    path: "istio-token".into(),
                                }),
                                ..Default::default()
                            }]),
                        }),
                        ..Default::default()
                    };
                    set.spec.volumes = Some(vec![
                        Volume {
                            name: "test-volume".into(),
                            ..Default::default()
                        },
                        token,
                    ]);
                    create(set)
                },
                errors: 1,
                contains: "spec.volumes[0]: Required value: must specify a volume type",
            },
            Case {
                id: "V12 volumeDevice without volume",
                build: || {
                    let mut set = base();
                    let mut container = sidecar("test-sidecar");
                    container.container.volume_devices = Some(vec![VolumeDevice {
                        name: "disk0".into(),
                        device_path: "/dev/nvme1".into(),
                    }]);
                    set.spec.containers = Some(vec![container]);
                    create(set)
                },
                errors: 1,
                contains: "spec.containers[0].volumeDevices[0].name: Not found: \"disk0\"",
            },
            Case {
                id: "V13 volumeDevice with PVC volume",
                build: || {
                    let mut set = base();
                    let mut container = sidecar("test-sidecar");
                    container.container.volume_devices = Some(vec![VolumeDevice {
                        name: "disk0".into(),
                        device_path: "/dev/nvme1".into(),
                    }]);
                    set.spec.containers = Some(vec![container]);
                    set.spec.volumes = Some(vec![pvc("disk0", "pvc-0")]);
                    create(set)
                },
                errors: 0,
                contains: "",
            },
            Case {
                id: "V14 device path equals mount path",
                build: || {
                    let mut set = base();
                    let mut container = sidecar("test-sidecar");
                    container.container.volume_devices = Some(vec![VolumeDevice {
                        name: "disk0".into(),
                        device_path: "/home/admin/log".into(),
                    }]);
                    container.container.volume_mounts = Some(vec![VolumeMount {
                        name: "log".into(),
                        mount_path: "/home/admin/log".into(),
                        ..Default::default()
                    }]);
                    set.spec.containers = Some(vec![container]);
                    set.spec.volumes = Some(vec![pvc("disk0", "pvc-0"), empty_dir("log")]);
                    create(set)
                },
                errors: 2,
                contains: "must not already exist as a path in volumeMounts",
            },
            Case {
                id: "V15 duplicate patch annotation",
                build: || {
                    let mut set = base();
                    set.spec.patch_pod_metadata = Some(vec![
                        patch(keys::PATCH_POLICY_MERGE_PATCH_JSON, &[("key1", "value1")]),
                        patch(keys::PATCH_POLICY_OVERWRITE, &[("key1", "value1")]),
                    ]);
                    create(set)
                },
                errors: 1,
                contains: "spec.patchPodMetadata: Required value: patch annotation[key1] already exist",
            },
            Case {
                id: "V16 customVersion without revision",
                build: || {
                    let mut set = base();
                    set.spec.injection_strategy =
                        revision(Some("normal-sidecarset-01234"), None, "Always");
                    create(set)
                },
                errors: 1,
                contains: "revision: Invalid value: \"null\": Cannot find specific ControllerRevision, err: ControllerRevision.apps \"test-sidecarset\" not found",
            },
            Case {
                id: "V17 revisionName without revision",
                build: || {
                    let mut set = base();
                    set.spec.injection_strategy =
                        revision(None, Some("test-sidecarset-678235"), "Always");
                    create(set)
                },
                errors: 1,
                contains: "Cannot find specific ControllerRevision, err: controllerrevisions.apps \"test-sidecarset-678235\" not found",
            },
            Case {
                id: "V18 revision without name or version",
                build: || {
                    let mut set = base();
                    set.spec.injection_strategy = revision(None, None, "Always");
                    create(set)
                },
                errors: 1,
                contains: "revisionName and customVersion cannot be empty simultaneously",
            },
            Case {
                id: "V19 native init container with RollingUpdate",
                build: || {
                    let mut set = base();
                    set.spec.update_strategy = strategy(keys::ROLLING_UPDATE);
                    set.spec.init_containers = Some(vec![native_sidecar("test-init")]);
                    create(set)
                },
                errors: 1,
                contains: "spec.updateStrategy: Required value: The initContainer in-place upgrade is not currently supported.",
            },
            Case {
                // + this server's Forbidden
                id: "V20 resourcesPolicy with resources",
                build: || {
                    let mut set = base();
                    let mut container = sidecar("test-sidecar");
                    container.container.resources = Some(ResourceRequirements {
                        limits: Some(BTreeMap::from([
                            ("cpu".to_string(), K8sQuantity("100m".into())),
                            ("memory".to_string(), K8sQuantity("100Mi".into())),
                        ])),
                        ..Default::default()
                    });
                    container.resources_policy = resources_policy("", Some("cpu*50%"));
                    set.spec.containers = Some(vec![container]);
                    create(set)
                },
                errors: 2,
                contains: "spec[0].resourcesPolicy: Invalid value: v1alpha1.ResourcesPolicy{TargetContainersMode:\"sum\", TargetContainersNameRegex:\"\"}: resourcesPolicy and resources cannot be configured together",
            },
            Case {
                // + this server's Forbidden
                id: "V21 invalid mode and empty regex",
                build: || {
                    let mut set = base();
                    let mut container = sidecar("test-sidecar");
                    container.resources_policy = resources_policy("", Some("cpu*50%"));
                    if let Some(policy) = container.resources_policy.as_mut() {
                        policy.target_containers_mode = "invalid".into();
                    }
                    set.spec.containers = Some(vec![container]);
                    create(set)
                },
                errors: 2,
                contains: "spec[0].resourcesPolicy.targetContainersNameRegex: Required value: invalid empty regex",
            },
            Case {
                // + this server's Forbidden
                id: "V22 plain init container with resourcesPolicy",
                build: || {
                    let mut set = base();
                    let mut init = sidecar("test-init");
                    init.resources_policy = resources_policy(".*", Some("cpu*50%"));
                    set.spec.init_containers = Some(vec![init]);
                    set.spec.containers = None;
                    create(set)
                },
                errors: 2,
                contains: "spec[0].resourcesPolicy: Forbidden: resourcesPolicy is only supported for containers with RestartPolicy Always",
            },
            Case {
                // upstream: 0 errors; here: only this server's Forbidden
                id: "V23 native init container with resourcesPolicy",
                build: || {
                    let mut set = base();
                    let mut init = native_sidecar("test-init");
                    init.resources_policy = resources_policy(".*", Some("cpu*50%"));
                    set.spec.init_containers = Some(vec![init]);
                    set.spec.containers = None;
                    create(set)
                },
                errors: 1,
                contains: "spec[0].resourcesPolicy: Forbidden: resourcesPolicy is not supported by this server yet",
            },
            Case {
                id: "V24 partition with selector",
                build: || {
                    let mut set = base();
                    set.spec.update_strategy = Some(SidecarSetUpdateStrategy {
                        type_: Some(keys::ROLLING_UPDATE.into()),
                        partition: Some(IntOrString::Int(1)),
                        selector: Some(match_labels(&[("canary", "true")])),
                        ..Default::default()
                    });
                    create(set)
                },
                errors: 1,
                contains: "updateStrategy: Invalid value: \"&{Type:RollingUpdate Paused:false Selector:v1.LabelSelector{",
            },
            Case {
                id: "V24 partition 0 with selector",
                build: || {
                    let mut set = base();
                    set.spec.update_strategy = Some(SidecarSetUpdateStrategy {
                        type_: Some(keys::ROLLING_UPDATE.into()),
                        partition: Some(IntOrString::Int(0)),
                        selector: Some(match_labels(&[("canary", "true")])),
                        ..Default::default()
                    });
                    create(set)
                },
                errors: 0,
                contains: "",
            },
            Case {
                id: "V25 partition abc%",
                build: || {
                    let mut set = base();
                    set.spec.update_strategy = Some(SidecarSetUpdateStrategy {
                        type_: Some(keys::ROLLING_UPDATE.into()),
                        partition: Some(IntOrString::String("abc%".into())),
                        ..Default::default()
                    });
                    create(set)
                },
                errors: 1,
                contains: "spec.updateStrategy.partition: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"abc%\"}: a valid percent string must be a numeric string followed by an ending '%'",
            },
            Case {
                id: "V25 maxUnavailable -1",
                build: || {
                    let mut set = base();
                    set.spec.update_strategy = Some(SidecarSetUpdateStrategy {
                        type_: Some(keys::ROLLING_UPDATE.into()),
                        max_unavailable: Some(IntOrString::Int(-1)),
                        ..Default::default()
                    });
                    create(set)
                },
                errors: 1,
                contains: "spec.updateStrategy.maxUnavailable: Invalid value: -1: must be greater than or equal to 0",
            },
            Case {
                id: "V26 container and init container names taken",
                build: || {
                    let mut set = named("sidecarset2");
                    set.spec.containers = Some(vec![sidecar("container-name")]);
                    set.spec.init_containers = Some(vec![sidecar("init-name")]);
                    set.spec.volumes = Some(vec![empty_dir("volume-name")]);
                    let mut theirs = other();
                    theirs.spec.containers = Some(vec![sidecar("container-name")]);
                    theirs.spec.init_containers = Some(vec![sidecar("init-name")]);
                    theirs.spec.volumes = Some(vec![empty_dir("volume-name")]);
                    (set, None, others(vec![theirs]))
                },
                errors: 2,
                contains: "spec.containers: Invalid value: \"init-name\": container init-name already exist in sidecarset1",
            },
            Case {
                id: "V27 same namespaceSelector, same container",
                build: || {
                    let mut set = base();
                    set.spec.namespace_selector = Some(match_labels(&[("app", "nginx")]));
                    let mut theirs = other();
                    theirs.spec.namespace_selector = Some(match_labels(&[("app", "nginx")]));
                    theirs.spec.containers = Some(vec![sidecar("test-sidecar")]);
                    (set, None, others(vec![theirs]))
                },
                errors: 1,
                contains: "container test-sidecar already exist in sidecarset1",
            },
            Case {
                id: "V28 disjoint namespaceSelectors",
                build: || {
                    let mut set = base();
                    set.spec.namespace_selector = Some(match_labels(&[("app", "nginx")]));
                    let mut theirs = other();
                    theirs.spec.namespace_selector = Some(match_labels(&[("app", "redis")]));
                    theirs.spec.containers = Some(vec![sidecar("test-sidecar")]);
                    (set, None, others(vec![theirs]))
                },
                errors: 0,
                contains: "",
            },
            Case {
                id: "V29 same volume name, different definition",
                build: || {
                    let mut set = base();
                    set.spec.volumes = Some(vec![
                        empty_dir("volume-1"),
                        host_path("volume-2", "/home/work-1"),
                    ]);
                    let mut theirs = other();
                    theirs.spec.volumes = Some(vec![
                        host_path("volume-2", "/home/work-2"),
                        empty_dir("volume-3"),
                    ]);
                    (set, None, others(vec![theirs]))
                },
                errors: 1,
                contains: "spec.volumes: Invalid value: \"volume-2\": volume volume-2 is in conflict with sidecarset sidecarset1",
            },
            Case {
                id: "V30 same volume, same definition",
                build: || {
                    let mut set = base();
                    set.spec.volumes = Some(vec![
                        empty_dir("volume-1"),
                        host_path("volume-2", "/home/work"),
                    ]);
                    let mut theirs = other();
                    theirs.spec.volumes = Some(vec![
                        host_path("volume-2", "/home/work"),
                        empty_dir("volume-3"),
                    ]);
                    (set, None, others(vec![theirs]))
                },
                errors: 0,
                contains: "",
            },
            Case {
                id: "V31 Overwrite vs MergePatchJson",
                build: || {
                    let mut set = base();
                    set.spec.patch_pod_metadata =
                        Some(vec![patch(keys::PATCH_POLICY_OVERWRITE, &[("key1", "v")])]);
                    let mut theirs = other();
                    theirs.spec.patch_pod_metadata = Some(vec![patch(
                        keys::PATCH_POLICY_MERGE_PATCH_JSON,
                        &[("key1", "v")],
                    )]);
                    (set, None, others(vec![theirs]))
                },
                errors: 1,
                contains: "spec.patchPodMetadata: Invalid value: \"key1\": annotation key1 is in conflict with sidecarset sidecarset1",
            },
            Case {
                id: "V32 Retain vs Overwrite of another key",
                build: || {
                    let mut set = base();
                    set.spec.patch_pod_metadata =
                        Some(vec![patch(keys::PATCH_POLICY_RETAIN, &[("key1", "v")])]);
                    let mut theirs = other();
                    theirs.spec.patch_pod_metadata =
                        Some(vec![patch(keys::PATCH_POLICY_OVERWRITE, &[("key2", "v")])]);
                    (set, None, others(vec![theirs]))
                },
                errors: 0,
                contains: "",
            },
            Case {
                id: "V33 MergePatchJson vs MergePatchJson",
                build: || {
                    let mut set = base();
                    set.spec.patch_pod_metadata = Some(vec![patch(
                        keys::PATCH_POLICY_MERGE_PATCH_JSON,
                        &[("oom-score", "{\"log-agent\": 1}")],
                    )]);
                    let mut theirs = other();
                    theirs.spec.patch_pod_metadata = Some(vec![patch(
                        keys::PATCH_POLICY_MERGE_PATCH_JSON,
                        &[("oom-score", "{\"envoy\": 1}")],
                    )]);
                    (set, None, others(vec![theirs]))
                },
                errors: 0,
                contains: "",
            },
            Case {
                id: "V34 upgradeType changed",
                build: || {
                    let old = base();
                    let mut set = base();
                    if let Some(containers) = set.spec.containers.as_mut() {
                        containers[0].upgrade_strategy = Some(SidecarContainerUpgradeStrategy {
                            upgrade_type: Some(keys::HOT_UPGRADE.into()),
                            hot_upgrade_empty_image: Some("empty:1.0".into()),
                        });
                    }
                    (set, Some(old), Vec::new())
                },
                errors: 1,
                contains: "spec.containers.upgradeStrategy.upgradeType: Invalid value: \"test-sidecar\": container test-sidecar upgradeType is immutable",
            },
            Case {
                id: "V35 container added on update",
                build: || {
                    let old = base();
                    let mut set = base();
                    set.spec
                        .containers
                        .get_or_insert_with(Vec::new)
                        .push(sidecar("new"));
                    (set, Some(old), Vec::new())
                },
                errors: 1,
                contains: "spec.containers.name: Invalid value: \"new\": container new is not found",
            },
            Case {
                id: "V36 canary of itself",
                build: || {
                    let set = canary(base(), "test-sidecarset");
                    let stored = Arc::new(base());
                    (set, None, vec![stored])
                },
                errors: 1,
                contains: "base sidecarSet cannot be itself",
            },
            Case {
                id: "V37 base is a canary",
                build: || {
                    let set = canary(base(), "base1-sidecarset");
                    let base1 = canary(named("base1-sidecarset"), "other-base-sidecarset");
                    (set, None, others(vec![base1]))
                },
                errors: 1,
                contains: "metadata: Invalid value: map[string]string{\"apps.kruise.io/sidecarset-base\":\"base1-sidecarset\", \"apps.kruise.io/sidecarset-canary\":\"true\"}: base sidecarSet cannot be canary",
            },
            Case {
                id: "V38 base does not exist",
                build: || create(canary(base(), "nonexistent-sidecarset")),
                errors: 1,
                contains: "fetch base sidecarSet[nonexistent-sidecarset] failed: sidecarsets.apps.kruise.io \"nonexistent-sidecarset\" not found",
            },
            Case {
                id: "V39 base changed on update",
                build: || {
                    let old = canary(base(), "old-base-sidecarset");
                    let set = canary(base(), "new-base-sidecarset");
                    let bases = others(vec![
                        named("old-base-sidecarset"),
                        named("new-base-sidecarset"),
                    ]);
                    (set, Some(old), bases)
                },
                errors: 1,
                contains: "annotations[apps.kruise.io/sidecarset-base] is immutable",
            },
            Case {
                id: "V40 canary with RollingUpdate",
                build: || {
                    let mut set = canary(base(), "base-sidecarset");
                    set.spec.update_strategy = strategy(keys::ROLLING_UPDATE);
                    (set, None, others(vec![named("base-sidecarset")]))
                },
                errors: 1,
                contains: "RollingUpdate is not supported for canary sidecarSet",
            },
            Case {
                id: "V41 invalid name",
                build: || create(named("Bad_Name")),
                errors: 1,
                contains: "metadata.name: Invalid value: \"Bad_Name\": sidecarset name must consist of alphanumeric characters or '-' (e.g. 'example-com', regex used for validation is '^[a-zA-Z0-9\\-]+$')",
            },
            Case {
                id: "V41 name longer than 63",
                build: || create(named(&"A".repeat(64))),
                errors: 1,
                contains: "must be no more than 63 characters",
            },
            Case {
                // No whitelist ConfigMap here: the DefaultsAllowed behaviour admits any valid key.
                id: "V42 key outside any whitelist",
                build: || {
                    let mut set = base();
                    set.spec.patch_pod_metadata = Some(vec![patch(
                        keys::PATCH_POLICY_RETAIN,
                        &[("not-whitelisted/key", "v")],
                    )]);
                    create(set)
                },
                errors: 0,
                contains: "",
            },
        ]
    }

    #[test]
    fn v_table_cases() {
        let mut failures = Vec::new();
        for case in v_table() {
            let (set, old, others) = (case.build)();
            let errors = validate_sidecarset(&set, old.as_ref(), &others);
            let message = aggregate(&errors);
            if errors.len() != case.errors || !message.contains(case.contains) {
                failures.push(format!(
                    "{}: expected {} error(s) containing {:?}, got {}: {}",
                    case.id,
                    case.errors,
                    case.contains,
                    errors.len(),
                    message
                ));
            }
        }
        assert!(failures.is_empty(), "\n{}", failures.join("\n"));
    }

    // ----- rules the table does not cover: one passing and one failing case each --------------

    fn check(set: &SidecarSet) -> Vec<String> {
        validate_sidecarset(set, None, &[])
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn the_valid_base_passes() {
        assert_eq!(check(&base()), Vec::<String>::new());
    }

    #[test]
    fn metadata_rules() {
        let mut set = base();
        set.metadata.annotations = Some(labels(&[("Example.com/Fine", "x")]));
        set.metadata.labels = Some(labels(&[("app", "web")]));
        assert!(check(&set).is_empty());

        set.metadata.labels = Some(labels(&[("app", "bad value!")]));
        set.metadata.namespace = Some("default".into());
        let errors = check(&set);
        assert_eq!(errors.len(), 2, "{errors:#?}");
        assert_eq!(
            errors[0],
            "metadata.namespace: Forbidden: not allowed on this type"
        );
        assert!(errors[1].starts_with("metadata.labels: Invalid value: \"bad value!\""));
    }

    #[test]
    fn canary_with_a_valid_base_passes_and_skips_the_base_in_conflicts() {
        let mut set = canary(base(), "base-sidecarset");
        set.spec.volumes = Some(vec![host_path("shared", "/a")]);
        let mut base_set = named("base-sidecarset");
        base_set.spec.volumes = Some(vec![host_path("shared", "/b")]);
        let stored = others(vec![base_set]);
        assert!(validate_sidecarset(&set, None, &stored).is_empty());
        // Any other SidecarSet does conflict with the base (here: the container name).
        assert_eq!(validate_sidecarset(&base(), None, &stored).len(), 1);
        let errors = validate_sidecarset(&named("x"), None, &stored);
        assert_eq!(
            aggregate(&errors),
            "spec.containers: Invalid value: \"test-sidecar\": container test-sidecar already exist in base-sidecarset"
        );
    }

    #[test]
    fn canary_marker_needs_both_annotations() {
        let mut set = base();
        set.metadata.annotations = Some(labels(&[(keys::SIDECARSET_CANARY, "true")]));
        assert!(check(&set).is_empty());
        set.metadata.annotations = Some(labels(&[
            (keys::SIDECARSET_CANARY, "false"),
            (keys::SIDECARSET_BASE, "nope"),
        ]));
        assert!(check(&set).is_empty());
    }

    #[test]
    fn v1alpha1_namespace_acts_as_a_namespace_selector() {
        let mut set = base();
        set.spec.namespace = Some("default".into());
        assert!(check(&set).is_empty());

        set.spec.namespace = Some("Bad_NS!".into());
        let errors = check(&set);
        assert_eq!(errors.len(), 2, "{errors:#?}");
        assert!(
            errors[0].starts_with("spec.namespaceSelector.matchLabels: Invalid value: \"Bad_NS!\"")
        );
        assert!(errors[1].starts_with("spec.namespaceSelector.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"kubernetes.io/metadata.name\":\"Bad_NS!\"}"));

        // Conflicts: different namespaces never overlap; the same one does, even against a selector.
        let mut mine = base();
        mine.spec.namespace = Some("ns-a".into());
        let mut theirs = other();
        theirs.spec.containers = Some(vec![sidecar("test-sidecar")]);
        theirs.spec.namespace = Some("ns-b".into());
        assert!(validate_sidecarset(&mine, None, &others(vec![theirs.clone()])).is_empty());
        theirs.spec.namespace = None;
        theirs.spec.namespace_selector =
            Some(match_labels(&[(keys::NAMESPACE_NAME_LABEL, "ns-a")]));
        assert_eq!(
            validate_sidecarset(&mine, None, &others(vec![theirs])).len(),
            1
        );
    }

    #[test]
    fn update_strategy_selector_is_checked_only_for_rolling_update() {
        let bad_selector = with_expressions(
            LabelSelector::default(),
            vec![expression("k", "In", &["bad-"])],
        );
        let mut set = base();
        set.spec.update_strategy = Some(SidecarSetUpdateStrategy {
            type_: Some(keys::NOT_UPDATE.into()),
            selector: Some(bad_selector.clone()),
            partition: Some(IntOrString::String("x".into())),
            ..Default::default()
        });
        assert!(check(&set).is_empty());
        if let Some(strategy) = set.spec.update_strategy.as_mut() {
            strategy.type_ = Some(keys::ROLLING_UPDATE.into());
            strategy.partition = None;
        }
        let errors = check(&set);
        assert_eq!(errors.len(), 2, "{errors:#?}");
        assert!(errors[0].starts_with(
            "spec.updateStrategy.selector.matchExpressions[0].values[0]: Invalid value: \"bad-\""
        ));
        assert!(errors[1].starts_with("spec.updateStrategy.selector.selector: Invalid value:"));
    }

    #[test]
    fn revision_policy_must_be_known() {
        let mut set = base();
        set.spec.injection_strategy = revision(None, Some("rev"), "Sometimes");
        let errors = check(&set);
        assert_eq!(errors.len(), 2, "{errors:#?}");
        assert_eq!(
            errors[1],
            "revision.policy: Invalid value: v1alpha1.SidecarSetInjectRevision{CustomVersion:(*string)(nil), RevisionName:(*string)(\"rev\"), Policy:\"Sometimes\"}: Invalid policy Sometimes, supported: [Always, Partial]"
        );
        // Without any revision there is nothing to check.
        set.spec.injection_strategy = Some(SidecarSetInjectionStrategy {
            paused: Some(true),
            revision: None,
        });
        assert!(check(&set).is_empty());
    }

    #[test]
    fn priority_strategy_rules() {
        let weight = |weight, selector: LabelSelector| UpdatePriorityWeightTerm {
            weight,
            match_selector: selector,
        };
        let order = |key: &str| UpdatePriorityOrderTerm {
            ordered_key: key.into(),
        };
        let cases: Vec<(UpdatePriorityStrategy, Option<&str>)> = vec![
            (
                UpdatePriorityStrategy {
                    weight_priority: Some(vec![weight(50, match_labels(&[("a", "b")]))]),
                    order_priority: None,
                },
                None,
            ),
            (
                UpdatePriorityStrategy {
                    weight_priority: None,
                    order_priority: Some(vec![order("rank")]),
                },
                None,
            ),
            (
                UpdatePriorityStrategy {
                    weight_priority: Some(vec![weight(50, match_labels(&[("a", "b")]))]),
                    order_priority: Some(vec![order("rank")]),
                },
                Some("only one of weightPriority and orderPriority can be used"),
            ),
            (
                UpdatePriorityStrategy {
                    weight_priority: Some(vec![weight(101, match_labels(&[("a", "b")]))]),
                    order_priority: None,
                },
                Some("weight must be valid number in the range 1-100"),
            ),
            (
                UpdatePriorityStrategy {
                    weight_priority: Some(vec![weight(10, LabelSelector::default())]),
                    order_priority: None,
                },
                Some("selector can not be empty"),
            ),
            (
                UpdatePriorityStrategy {
                    weight_priority: Some(vec![weight(
                        10,
                        with_expressions(
                            LabelSelector::default(),
                            vec![expression("a", "In", &[])],
                        ),
                    )]),
                    order_priority: None,
                },
                Some(
                    "invalid selector values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty",
                ),
            ),
            (
                UpdatePriorityStrategy {
                    weight_priority: None,
                    order_priority: Some(vec![order("")]),
                },
                Some("order key can not be empty"),
            ),
        ];
        for (priority, expected) in cases {
            let mut set = base();
            set.spec.update_strategy = Some(SidecarSetUpdateStrategy {
                type_: Some(keys::ROLLING_UPDATE.into()),
                priority_strategy: Some(priority),
                ..Default::default()
            });
            let message = aggregate(&validate_sidecarset(&set, None, &[]));
            match expected {
                None => assert_eq!(message, ""),
                Some(detail) => assert_eq!(
                    message,
                    format!("spec.updateStrategy.priorityStrategy: Required value: {detail}")
                ),
            }
        }
    }

    #[test]
    fn scatter_terms_need_a_key() {
        let mut set = base();
        let term = |key: &str, value: &str| UpdateScatterTerm {
            key: key.into(),
            value: value.into(),
        };
        set.spec.update_strategy = Some(SidecarSetUpdateStrategy {
            type_: Some(keys::ROLLING_UPDATE.into()),
            scatter_strategy: Some(vec![term("zone", "a"), term("zone", "*")]),
            ..Default::default()
        });
        assert!(check(&set).is_empty());
        if let Some(strategy) = set.spec.update_strategy.as_mut() {
            strategy.scatter_strategy = Some(vec![term("", "a")]);
        }
        assert_eq!(
            check(&set),
            vec!["spec.updateStrategy.scatterStrategy: Required value: key should not be empty"]
        );
    }

    #[test]
    fn transfer_env_field_refs() {
        let run = |api_version: Option<&str>, field_path: &str| {
            let mut set = base();
            if let Some(containers) = set.spec.containers.as_mut() {
                containers[0].transfer_env = transfer_env(api_version, field_path);
            }
            check(&set)
        };
        assert!(run(Some("v1"), "metadata.labels['app.kubernetes.io/name']").is_empty());
        assert!(run(Some("v1"), "metadata.annotations['Example.com/Sidecar']").is_empty());
        assert_eq!(
            run(None, "metadata.labels['a']"),
            vec!["spec[0].transferEnv.fieldRef.apiVersion: Required value"]
        );
        assert_eq!(
            run(Some("v1"), ""),
            vec!["spec[0].transferEnv.fieldRef.fieldPath: Required value"]
        );
        assert_eq!(
            run(Some("v2"), "metadata.labels['a']"),
            vec![
                "spec[0].transferEnv.fieldRef.fieldPath: Invalid value: \"metadata.labels['a']\": error converting fieldPath: unsupported pod version: v2"
            ]
        );
        assert_eq!(
            run(Some("v1"), "metadata.name"),
            vec![
                "spec[0].transferEnv.fieldRef.fieldPath: Invalid value: \"metadata.name\": error converting fieldPath: field label not supported: metadata.name"
            ]
        );
        assert_eq!(
            run(Some("v1"), "spec.containers['x']"),
            vec![
                "spec[0].transferEnv.fieldRef.fieldPath: Invalid value: \"spec.containers['x']\": error converting fieldPath: field path not supported: spec.containers"
            ]
        );
        let errors = run(Some("v1"), "metadata.labels['bad key']");
        assert_eq!(errors.len(), 1);
        assert!(errors[0].starts_with(
            "spec[0].transferEnv.fieldRef: Invalid value: \"bad key\": name part must consist of"
        ));
    }

    #[test]
    fn resources_policy_structure() {
        let run = |policy: Option<ResourcesPolicy>| {
            let mut set = base();
            if let Some(containers) = set.spec.containers.as_mut() {
                containers[0].resources_policy = policy;
            }
            check(&set)
        };
        let forbidden = "spec[0].resourcesPolicy: Forbidden: resourcesPolicy is not supported by this server yet";
        assert_eq!(
            run(resources_policy("^app.*$", Some("max(cpu*50%, 50m)"))),
            vec![forbidden]
        );

        let errors = run(resources_policy("[invalid(regex", Some("cpu*50%")));
        assert_eq!(errors.len(), 2, "{errors:#?}");
        assert!(errors[1].starts_with("spec[0].resourcesPolicy.targetContainersNameRegex: Invalid value: \"[invalid(regex\": invalid regex pattern: error parsing regexp:"), "{}", errors[1]);

        let errors = run(resources_policy(".*", Some("max(cpu*50%)")));
        assert_eq!(errors.len(), 2, "{errors:#?}");
        assert_eq!(
            errors[1],
            "spec[0].resourcesPolicy.resourcesExpr.limits.cpu: Invalid value: \"max(cpu*50%)\": invalid expression: max function requires exactly 2 arguments, got 1"
        );

        let mut no_expressions = resources_policy(".*", None);
        if let Some(policy) = no_expressions.as_mut() {
            policy.resources_expr = None;
        }
        let errors = run(no_expressions);
        assert_eq!(errors.len(), 2, "{errors:#?}");
        assert!(errors[1].ends_with("at least one of limits or requests must be configured"));

        let mut requests_only = resources_policy(".*", None);
        if let Some(policy) = requests_only.as_mut() {
            policy.resources_expr = Some(ResourcesExpr {
                limits: None,
                requests: Some(ResourceExprPair {
                    cpu: Some("".into()),
                    memory: Some("bad_memory_expr".into()),
                }),
            });
        }
        let errors = run(requests_only);
        assert_eq!(errors.len(), 2, "{errors:#?}");
        assert!(errors[1].starts_with("spec[0].resourcesPolicy.resourcesExpr.requests.memory: Invalid value: \"bad_memory_expr\": invalid expression: undefined variable"));
    }

    #[test]
    fn sidecars_are_validated_as_a_pod() {
        let mut set = base();
        let mut a = sidecar("dup");
        a.container.env = Some(vec![EnvVar {
            name: "1BAD".into(),
            value: Some("x".into()),
            value_from: None,
        }]);
        let b = sidecar("dup");
        let init = sidecar("dup");
        set.spec.containers = Some(vec![a, b]);
        set.spec.init_containers = Some(vec![init]);
        set.spec.volumes = Some(vec![empty_dir("v"), empty_dir("v")]);
        let errors = check(&set);
        assert_eq!(errors.len(), 4, "{errors:#?}");
        assert_eq!(errors[0], "spec.volumes[1].name: Duplicate value: \"v\"");
        assert!(errors[1].starts_with("spec.containers[0].env[0].name: Invalid value: \"1BAD\""));
        assert_eq!(
            errors[2],
            "spec.containers[1].name: Duplicate value: \"dup\""
        );
        assert_eq!(
            errors[3],
            "spec.initContainers[0].name: Duplicate value: \"dup\""
        );

        // Init containers' own podInjectPolicy is not validated, and a lone init container is fine.
        let mut set = base();
        set.spec.containers = None;
        let mut init = sidecar("init");
        init.pod_inject_policy = Some("Sideways".into());
        set.spec.init_containers = Some(vec![init]);
        assert!(check(&set).is_empty());
    }

    #[test]
    fn patch_pod_metadata_entries() {
        let mut set = base();
        set.spec.patch_pod_metadata = Some(vec![
            patch(keys::PATCH_POLICY_RETAIN, &[("a", "1")]),
            patch(keys::PATCH_POLICY_OVERWRITE, &[("b", "2")]),
        ]);
        assert!(check(&set).is_empty());

        set.spec.patch_pod_metadata = Some(vec![
            SidecarSetPatchPodMetadata {
                annotations: None,
                patch_policy: Some(keys::PATCH_POLICY_RETAIN.into()),
            },
            SidecarSetPatchPodMetadata {
                annotations: Some(labels(&[("ok", "1")])),
                patch_policy: None,
            },
            patch(keys::PATCH_POLICY_RETAIN, &[("bad key", "1")]),
        ]);
        let errors = check(&set);
        assert_eq!(errors.len(), 3, "{errors:#?}");
        assert_eq!(
            errors[0],
            "spec.patchPodMetadata: Required value: no annotations defined for SidecarSet"
        );
        assert_eq!(
            errors[1],
            "spec.patchPodMetadata: Required value: no patchPolicy defined for patchPodMetadata"
        );
        assert!(errors[2].starts_with("patchPodMetadata.annotations: Invalid value: \"bad key\""));
    }

    #[test]
    fn updates_may_remove_containers_and_change_init_containers() {
        let mut old = base();
        old.spec
            .containers
            .get_or_insert_with(Vec::new)
            .push(sidecar("second"));
        let mut set = base();
        set.spec.init_containers = Some(vec![sidecar("added-init")]);
        assert!(validate_sidecarset(&set, Some(&old), &[]).is_empty());

        // An old container without an upgrade type may take one.
        let mut old = base();
        if let Some(containers) = old.spec.containers.as_mut() {
            containers[0].upgrade_strategy = None;
        }
        assert!(validate_sidecarset(&base(), Some(&old), &[]).is_empty());
    }

    #[test]
    fn conflicts_need_overlapping_pods_and_are_skipped_after_earlier_errors() {
        let mut theirs = other();
        theirs.spec.containers = Some(vec![sidecar("test-sidecar")]);
        theirs.spec.selector = Some(match_labels(&[("a", "c")]));
        assert!(validate_sidecarset(&base(), None, &others(vec![theirs.clone()])).is_empty());

        theirs.spec.selector = Some(match_labels(&[("a", "b")]));
        let stored = others(vec![theirs]);
        assert_eq!(validate_sidecarset(&base(), None, &stored).len(), 1);

        // The SidecarSet being updated appears in the list itself and is ignored.
        let mut same = base();
        same.spec.volumes = Some(vec![host_path("v", "/other")]);
        let mut set = base();
        set.spec.volumes = Some(vec![host_path("v", "/mine")]);
        assert!(validate_sidecarset(&set, Some(&base()), &others(vec![same])).is_empty());

        // With a spec error, conflicts are not reported.
        let mut broken = base();
        broken.spec.selector = None;
        let errors = validate_sidecarset(&broken, None, &stored);
        assert_eq!(
            aggregate(&errors),
            "spec.selector: Required value: no selector defined for SidecarSet"
        );
    }

    #[test]
    fn init_container_names_only_clash_with_init_containers() {
        let mut set = base();
        set.spec.init_containers = Some(vec![sidecar("shared")]);
        let mut theirs = other();
        theirs.spec.containers = Some(vec![sidecar("shared")]);
        assert!(validate_sidecarset(&set, None, &others(vec![theirs])).is_empty());
    }

    #[test]
    fn the_last_overlapping_owner_of_a_name_is_reported() {
        let mut set = base();
        set.spec.volumes = Some(vec![host_path("v", "/a")]);
        let mut first = named("first");
        first.spec.containers = Some(vec![sidecar("c1")]);
        first.spec.volumes = Some(vec![host_path("v", "/b")]);
        let mut second = named("second");
        second.spec.containers = Some(vec![sidecar("c2")]);
        second.spec.volumes = Some(vec![host_path("v", "/a")]);
        // `second` defines the volume identically and owns the name last: no conflict.
        assert!(
            validate_sidecarset(&set, None, &others(vec![first.clone(), second.clone()]))
                .is_empty()
        );
        let errors = validate_sidecarset(&set, None, &others(vec![second, first]));
        assert_eq!(
            aggregate(&errors),
            "spec.volumes: Invalid value: \"v\": volume v is in conflict with sidecarset first"
        );
    }

    #[test]
    fn selector_overlap_truth_table() {
        let labels_of = |pairs: &[(&str, &str)]| match_labels(pairs);
        let exprs =
            |list: Vec<LabelSelectorRequirement>| with_expressions(LabelSelector::default(), list);
        let cases = [
            (labels_of(&[("a", "h")]), labels_of(&[("a", "h")]), true),
            (labels_of(&[("a", "h")]), labels_of(&[("a", "i")]), false),
            (labels_of(&[("a", "h")]), labels_of(&[("b", "i")]), true),
            (
                labels_of(&[("a", "h"), ("b", "i"), ("c", "j")]),
                labels_of(&[("a", "h"), ("b", "x"), ("c", "j")]),
                false,
            ),
            (
                labels_of(&[("a", "h")]),
                exprs(vec![expression("a", "In", &["h", "i", "j"])]),
                true,
            ),
            (
                labels_of(&[("a", "h")]),
                exprs(vec![expression("a", "In", &["i", "j"])]),
                false,
            ),
            (
                exprs(vec![expression("a", "NotIn", &["h", "i"])]),
                labels_of(&[("a", "h")]),
                false,
            ),
            (
                labels_of(&[("a", "h")]),
                exprs(vec![expression("a", "Exists", &[])]),
                true,
            ),
            (
                exprs(vec![expression("a", "DoesNotExist", &[])]),
                labels_of(&[("a", "h")]),
                false,
            ),
            // The rough edge the spec calls out: `Exists` on a key the other does not pin.
            (
                labels_of(&[("a", "h")]),
                exprs(vec![expression("b", "Exists", &[])]),
                false,
            ),
            (LabelSelector::default(), labels_of(&[("a", "h")]), true),
        ];
        for (a, b, expected) in cases {
            assert_eq!(selectors_overlap(&a, &b), expected, "{a:?} vs {b:?}");
            assert_eq!(selectors_overlap(&b, &a), expected, "{b:?} vs {a:?}");
        }
    }

    // ----- never panics --------------------------------------------------------------------------

    mod fuzz {
        use super::*;
        use proptest::prelude::*;

        fn text() -> impl Strategy<Value = String> {
            prop_oneof![
                "[a-z0-9-]{0,8}",
                "[A-Za-z0-9_./ %'\\[\\]-]{0,12}",
                any::<String>().prop_map(|s| s.chars().take(12).collect()),
            ]
        }

        fn pick(options: &'static [&'static str]) -> impl Strategy<Value = Option<String>> {
            proptest::option::of(proptest::sample::select(options).prop_map(String::from))
        }

        fn selector() -> impl Strategy<Value = Option<LabelSelector>> {
            let requirement = (
                text(),
                pick(&["In", "NotIn", "Exists", "DoesNotExist", "Near"]),
                proptest::collection::vec(text(), 0..3),
            )
                .prop_map(|(key, operator, values)| LabelSelectorRequirement {
                    key,
                    operator: operator.unwrap_or_default(),
                    values: Some(values),
                });
            proptest::option::of((
                proptest::option::of(proptest::collection::btree_map(text(), text(), 0..3)),
                proptest::option::of(proptest::collection::vec(requirement, 0..3)),
            ))
            .prop_map(|s| {
                s.map(|(match_labels, match_expressions)| LabelSelector {
                    match_labels,
                    match_expressions,
                })
            })
        }

        fn int_or_string() -> impl Strategy<Value = Option<IntOrString>> {
            proptest::option::of(prop_oneof![
                (-3i32..5).prop_map(IntOrString::Int),
                text().prop_map(IntOrString::String),
            ])
        }

        fn sidecar_container() -> impl Strategy<Value = SidecarContainer> {
            (
                (
                    text(),
                    proptest::option::of(text()),
                    pick(&["Always", "IfNotPresent", "Never", "Sometimes"]),
                    pick(&["Always", "OnFailure"]),
                ),
                (
                    pick(&["BeforeAppContainer", "AfterAppContainer", "Middle"]),
                    pick(&["enabled", "disabled", "on"]),
                    pick(&["ColdUpgrade", "HotUpgrade"]),
                ),
                (
                    proptest::collection::vec((text(), text()), 0..3),
                    proptest::collection::vec((text(), text()), 0..2),
                    proptest::collection::vec(text(), 0..2),
                ),
                (
                    proptest::option::of((pick(&["v1", "v2"]), text())),
                    proptest::option::of((text(), text(), text())),
                ),
            )
                .prop_map(
                    |(
                        (name, image, pull, restart),
                        (inject, share, upgrade),
                        (mounts, devices, env),
                        (field_ref, policy),
                    )| {
                        let mut container = sidecar(&name);
                        container.container.image = image;
                        container.container.image_pull_policy = pull;
                        container.container.restart_policy = restart;
                        container.container.volume_mounts = Some(
                            mounts
                                .into_iter()
                                .map(|(name, mount_path)| VolumeMount {
                                    name,
                                    mount_path,
                                    ..Default::default()
                                })
                                .collect(),
                        );
                        container.container.volume_devices = Some(
                            devices
                                .into_iter()
                                .map(|(name, device_path)| VolumeDevice { name, device_path })
                                .collect(),
                        );
                        container.container.env = Some(
                            env.into_iter()
                                .map(|name| EnvVar {
                                    name,
                                    value: None,
                                    value_from: None,
                                })
                                .collect(),
                        );
                        container.pod_inject_policy = inject;
                        container.share_volume_policy = Some(ShareVolumePolicy { type_: share });
                        container.upgrade_strategy = Some(SidecarContainerUpgradeStrategy {
                            upgrade_type: upgrade,
                            hot_upgrade_empty_image: None,
                        });
                        if let Some((api_version, field_path)) = field_ref {
                            container.transfer_env =
                                transfer_env(api_version.as_deref(), &field_path);
                        }
                        container.resources_policy =
                            policy.map(|(regex, cpu, memory)| ResourcesPolicy {
                                target_containers_mode: "sum".into(),
                                target_containers_name_regex: Some(regex),
                                resources_expr: Some(ResourcesExpr {
                                    limits: Some(ResourceExprPair {
                                        cpu: Some(cpu),
                                        memory: Some(memory),
                                    }),
                                    requests: None,
                                }),
                            });
                        container
                    },
                )
        }

        fn volume() -> impl Strategy<Value = Volume> {
            (text(), 0u8..4, text()).prop_map(|(name, kind, path)| match kind {
                0 => Volume {
                    name,
                    ..Default::default()
                },
                1 => empty_dir(&name),
                2 => host_path(&name, &path),
                _ => pvc(&name, &path),
            })
        }

        fn sidecarset() -> impl Strategy<Value = SidecarSet> {
            (
                (text(), selector(), selector(), proptest::option::of(text())),
                (
                    proptest::collection::vec(sidecar_container(), 0..3),
                    proptest::collection::vec(sidecar_container(), 0..2),
                    proptest::collection::vec(volume(), 0..3),
                ),
                (
                    pick(&["RollingUpdate", "NotUpdate", "Other"]),
                    int_or_string(),
                    int_or_string(),
                    selector(),
                    proptest::collection::vec((text(), text()), 0..3),
                ),
                (
                    proptest::option::of((
                        proptest::option::of(text()),
                        proptest::option::of(text()),
                        pick(&["Always", "Partial", "Odd"]),
                    )),
                    proptest::collection::vec(
                        (
                            pick(&["Retain", "Overwrite", "MergePatchJson"]),
                            proptest::collection::btree_map(text(), text(), 0..3),
                        ),
                        0..3,
                    ),
                ),
                (proptest::option::of(text()), any::<bool>()),
            )
                .prop_map(
                    |(
                        (name, pods, namespaces, namespace),
                        (containers, inits, volumes),
                        (kind, partition, max_unavailable, update_selector, scatter),
                        (injection, patches),
                        (base, canary_flag),
                    )| {
                        let mut set = named(&name);
                        set.spec.selector = pods;
                        set.spec.namespace_selector = namespaces;
                        set.spec.namespace = namespace;
                        set.spec.containers = Some(containers);
                        set.spec.init_containers = Some(inits);
                        set.spec.volumes = Some(volumes);
                        set.spec.update_strategy = Some(SidecarSetUpdateStrategy {
                            type_: kind,
                            partition,
                            max_unavailable,
                            selector: update_selector,
                            scatter_strategy: Some(
                                scatter
                                    .into_iter()
                                    .map(|(key, value)| UpdateScatterTerm { key, value })
                                    .collect(),
                            ),
                            priority_strategy: Some(UpdatePriorityStrategy {
                                weight_priority: Some(vec![UpdatePriorityWeightTerm {
                                    weight: 50,
                                    match_selector: LabelSelector::default(),
                                }]),
                                order_priority: None,
                            }),
                            ..Default::default()
                        });
                        set.spec.injection_strategy =
                            injection.map(|(custom_version, revision_name, policy)| {
                                SidecarSetInjectionStrategy {
                                    paused: None,
                                    revision: Some(SidecarSetInjectRevision {
                                        custom_version,
                                        revision_name,
                                        policy,
                                    }),
                                }
                            });
                        set.spec.patch_pod_metadata = Some(
                            patches
                                .into_iter()
                                .map(|(patch_policy, annotations)| SidecarSetPatchPodMetadata {
                                    annotations: Some(annotations),
                                    patch_policy,
                                })
                                .collect(),
                        );
                        if let Some(base) = base {
                            set.metadata.annotations = Some(labels(&[
                                (
                                    keys::SIDECARSET_CANARY,
                                    if canary_flag { "true" } else { "false" },
                                ),
                                (keys::SIDECARSET_BASE, &base),
                            ]));
                        }
                        set
                    },
                )
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(256))]

            #[test]
            fn validation_never_panics(
                set in sidecarset(),
                old in proptest::option::of(sidecarset()),
                stored in proptest::collection::vec(sidecarset(), 0..3),
            ) {
                let stored = others(stored);
                let errors = validate_sidecarset(&set, old.as_ref(), &stored);
                let _ = aggregate(&errors);
                for a in stored.iter() {
                    if let (Some(x), Some(y)) = (&a.spec.selector, &set.spec.selector) {
                        prop_assert_eq!(selectors_overlap(x, y), selectors_overlap(y, x));
                    }
                }
            }

            #[test]
            fn expressions_never_panic(input in any::<String>(), bytes in proptest::collection::vec(any::<u8>(), 0..24)) {
                let _ = expression::check(&input, "cpu");
                let latin1: String = bytes.iter().map(|&b| char::from(b)).collect();
                let _ = expression::check(&latin1, "memory");
            }
        }
    }
}
