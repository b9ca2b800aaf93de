//! Test support for injection and the cores built on it.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::hash::{sidecarset_hash, sidecarset_hash_without_image};
use crate::api::{SidecarSet, keys};

/// What the SidecarSet webhook stores for a set of the tests: OpenKruise's defaults of the fields they
/// use, then both hash annotations. (Written out: `defaults` builds on this module, and
/// `defaults::sidecarset`'s own tests check the full defaulting.)
pub(crate) fn default_and_hash(set: &mut SidecarSet) {
    let spec = &mut set.spec;
    let update = spec.update_strategy.get_or_insert_default();
    update
        .type_
        .get_or_insert_with(|| keys::ROLLING_UPDATE.into());
    update.max_unavailable.get_or_insert(IntOrString::Int(1));
    update.partition.get_or_insert(IntOrString::Int(0));
    spec.revision_history_limit.get_or_insert(10);
    let sidecars = [
        (
            spec.init_containers.iter_mut().flatten(),
            keys::AFTER_APP_CONTAINER,
        ),
        (
            spec.containers.iter_mut().flatten(),
            keys::BEFORE_APP_CONTAINER,
        ),
    ];
    for (sidecars, inject_policy) in sidecars {
        for sidecar in sidecars {
            sidecar
                .pod_inject_policy
                .get_or_insert_with(|| inject_policy.into());
            let upgrade = sidecar.upgrade_strategy.get_or_insert_default();
            upgrade
                .upgrade_type
                .get_or_insert_with(|| keys::COLD_UPGRADE.into());
            let share = sidecar.share_volume_policy.get_or_insert_default();
            share
                .type_
                .get_or_insert_with(|| keys::SHARE_VOLUME_DISABLED.into());
            let container = &mut sidecar.container;
            container
                .image_pull_policy
                .get_or_insert_with(|| "IfNotPresent".into());
            container
                .termination_message_path
                .get_or_insert_with(|| "/dev/termination-log".into());
            container
                .termination_message_policy
                .get_or_insert_with(|| "File".into());
        }
    }
    for patch in spec.patch_pod_metadata.iter_mut().flatten() {
        patch
            .patch_policy
            .get_or_insert_with(|| keys::PATCH_POLICY_RETAIN.into());
    }
    if let Some(revision) = spec
        .injection_strategy
        .as_mut()
        .and_then(|s| s.revision.as_mut())
    {
        revision.policy.get_or_insert_with(|| "Always".into());
    }
    let hashes = [
        (keys::SIDECARSET_HASH, sidecarset_hash(&set.spec)),
        (
            keys::SIDECARSET_HASH_WITHOUT_IMAGE,
            sidecarset_hash_without_image(&set.spec),
        ),
    ];
    let annotations = set.metadata.annotations.get_or_insert_default();
    for (key, hash) in hashes {
        annotations.insert(key.to_string(), hash);
    }
}
