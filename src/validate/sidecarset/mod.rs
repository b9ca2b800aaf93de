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
//! * the revision `injectionStrategy.revision` names is looked up in the history the caller
//!   gives ([`RevisionHistory`]): the cluster's ControllerRevisions as the catalogue watches
//!   them, or none at all (a directory), where it is missing, with OpenKruise's message;
//! * it reads no `kruise-configuration` ConfigMap, so `patchPodMetadata` behaves as with the
//!   `SidecarSetPatchPodMetadataDefaultsAllowed` gate on and no whitelist: only the per-entry rules
//!   apply.

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
use super::pod::{
    field_path_conversion_error, split_subscripted_path, v1_field_path,
    validate_pod_containers_and_volumes,
};
use super::workload::rollout_order_errors;
use crate::api::keys;
use crate::api::{ResourcesPolicy, SidecarSet, SidecarSetInjectRevision, SidecarSetUpdateStrategy};
use crate::k8s::selector::is_empty;

mod conflicts;
mod containers;
mod injection;
mod strategy;
pub use conflicts::*;
use containers::*;
use injection::*;
pub use injection::{AnyHistory, NoHistory, RevisionHistory, namespace_selector};
use strategy::*;

const NAME_MAX_LENGTH: usize = 63;
const NAME_FORMAT: &str = "^[a-zA-Z0-9\\-]+$";
const NAME_MESSAGE: &str = "sidecarset name must consist of alphanumeric characters or '-'";
/// Upstream validates the fake pod with the default grace period.
const DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS: i64 = 30;

/// Every reason to reject `new` (CREATE: `old` is `None`; UPDATE: the stored object).
/// `others` is the cluster's SidecarSets; it may contain `new` itself, which is ignored. No
/// revision history: a revision to inject is always missing ([`validate_sidecarset_with`]).
pub fn validate_sidecarset(
    new: &SidecarSet,
    old: Option<&SidecarSet>,
    others: &[Arc<SidecarSet>],
) -> Vec<FieldError> {
    validate_sidecarset_with(new, old, others, &NoHistory)
}

/// [`validate_sidecarset`], the revision to inject looked up in `history`.
pub fn validate_sidecarset_with(
    new: &SidecarSet,
    old: Option<&SidecarSet>,
    others: &[Arc<SidecarSet>],
    history: &dyn RevisionHistory,
) -> Vec<FieldError> {
    let mut errors = validate_object_meta(
        &new.metadata,
        false,
        sidecarset_name_errors,
        &Path::new("metadata"),
    );
    errors.extend(validate_canary(new, old, others));
    errors.extend(validate_spec(new, history));
    if let Some(old) = old {
        errors.extend(validate_container_immutability(new, old));
    }
    if !errors.is_empty() {
        return errors;
    }
    validate_conflicts(new, others)
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

fn validate_spec(set: &SidecarSet, history: &dyn RevisionHistory) -> Vec<FieldError> {
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
    errors.extend(validate_injection_revision(set, history));
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

#[cfg(test)]
mod tests;
