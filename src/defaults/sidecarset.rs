//! SidecarSet defaulting, as OpenKruise's SidecarSet mutating webhook does it, then hashing.
//!
//! The defaults matter twice: users see them in the stored object, and the hashes (computed on
//! the defaulted containers) must match OpenKruise's, so every default below is one OpenKruise
//! applies, no more: for instance startup probes and `shareVolumeDevicePolicy` stay untouched.
//! Kubernetes' container and volume defaults come from [`super::pod`].

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::pod::{default_container, default_field_ref, default_volume, set_if_empty};
use crate::api::keys;
use crate::api::{SidecarContainer, SidecarSet, SidecarSetUpdateStrategy};
use crate::inject::hash::{sidecarset_hash, sidecarset_hash_without_image};

/// `injectionStrategy.revision.policy` default.
const INJECT_REVISION_POLICY_ALWAYS: &str = "Always";
/// `resourcesPolicy.targetContainersNameRegex` default (from the CRD schema).
const TARGET_CONTAINERS_NAME_REGEX_ALL: &str = ".*";
const DEFAULT_REVISION_HISTORY_LIMIT: i32 = 10;

/// Applies every default OpenKruise's SidecarSet webhook applies (identical for v1alpha1 and
/// v1beta1), in place.
pub fn apply_defaults(set: &mut SidecarSet) {
    let spec = &mut set.spec;
    default_update_strategy(spec.update_strategy.get_or_insert_default());
    for container in spec.init_containers.iter_mut().flatten() {
        default_sidecar_container(container, keys::AFTER_APP_CONTAINER);
    }
    for container in spec.containers.iter_mut().flatten() {
        default_sidecar_container(container, keys::BEFORE_APP_CONTAINER);
    }
    for volume in spec.volumes.iter_mut().flatten() {
        default_volume(volume);
    }
    spec.revision_history_limit
        .get_or_insert(DEFAULT_REVISION_HISTORY_LIMIT);
    for patch in spec.patch_pod_metadata.iter_mut().flatten() {
        set_if_empty(&mut patch.patch_policy, keys::PATCH_POLICY_RETAIN);
    }
    let revision = spec
        .injection_strategy
        .as_mut()
        .and_then(|strategy| strategy.revision.as_mut());
    if let Some(revision) = revision {
        set_if_empty(&mut revision.policy, INJECT_REVISION_POLICY_ALWAYS);
    }
}

/// [`apply_defaults`], then (re)writes both hash annotations, replacing any value the user gave.
pub fn default_and_hash(set: &mut SidecarSet) {
    apply_defaults(set);
    let hash = sidecarset_hash(&set.spec);
    let hash_without_image = sidecarset_hash_without_image(&set.spec);
    let annotations = set.metadata.annotations.get_or_insert_with(BTreeMap::new);
    annotations.insert(keys::SIDECARSET_HASH.to_string(), hash);
    annotations.insert(
        keys::SIDECARSET_HASH_WITHOUT_IMAGE.to_string(),
        hash_without_image,
    );
}

fn default_update_strategy(strategy: &mut SidecarSetUpdateStrategy) {
    set_if_empty(&mut strategy.type_, keys::ROLLING_UPDATE);
    strategy.max_unavailable.get_or_insert(IntOrString::Int(1));
    strategy.partition.get_or_insert(IntOrString::Int(0));
}

fn default_sidecar_container(sidecar: &mut SidecarContainer, inject_policy: &str) {
    set_if_empty(&mut sidecar.pod_inject_policy, inject_policy);
    set_if_empty(
        &mut sidecar
            .upgrade_strategy
            .get_or_insert_default()
            .upgrade_type,
        keys::COLD_UPGRADE,
    );
    set_if_empty(
        &mut sidecar.share_volume_policy.get_or_insert_default().type_,
        keys::SHARE_VOLUME_DISABLED,
    );
    default_container(&mut sidecar.container);
    for transfer in sidecar.transfer_env.iter_mut().flatten() {
        // OpenKruise dereferences fieldRef without a nil check here; we skip a missing one.
        let field_ref = transfer
            .source_container_name_from
            .as_mut()
            .and_then(|from| from.field_ref.as_mut());
        if let Some(field_ref) = field_ref {
            default_field_ref(field_ref);
        }
    }
    if let Some(policy) = sidecar.resources_policy.as_mut() {
        // A CRD schema default: applies when the field is absent, not when it is "".
        policy
            .target_containers_name_regex
            .get_or_insert_with(|| TARGET_CONTAINERS_NAME_REGEX_ALL.to_string());
    }
}

#[cfg(test)]
mod tests;
