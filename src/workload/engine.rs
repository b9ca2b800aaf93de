//! The in-place engine's options for the workloads' own updates.

use k8s_openapi::api::core::v1::Pod;

use crate::api::keys;
use crate::inplace::{self, EngineOptions, env_hash};

/// A workload owns its pods' revision label. Image batches complete on imageID changes; env
/// changes read from metadata complete when the node agent's record shows the restarted
/// container with the env hash the pod's metadata gives.
pub const ENGINE: EngineOptions<'static> = EngineOptions {
    revision_label: Some(keys::CONTROLLER_REVISION_HASH),
    hasher: &env_hash::MetadataEnvHasher,
};

/// [`inplace::at_rest`] with the workloads' engine options: whether the in-place engine has
/// nothing to do on `p` and no update of any owner is in flight there. It reads the pod only,
/// not the time.
///
/// The update state stays on a pod after its update, so after one in-place rollout every pod
/// carries one; reading it (two JSON documents) is most of a round's work on such a workload.
pub fn engine_at_rest(p: &Pod) -> bool {
    inplace::at_rest(p, &ENGINE)
}
