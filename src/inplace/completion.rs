//! When is a patched batch done? Kubelet gives no "image applied" flag, so OpenKruise infers it:
//! from kruise-daemon's runtime hashes when they are there, otherwise from the container's imageID
//! moving away from the one recorded just before the patch.

use k8s_openapi::api::core::v1::{Container, ContainerStatus, Pod};
use serde::{Deserialize, Serialize};

use jiff::Timestamp;

use super::restart_record::{self, ContainerStart};
use super::state::{self, InPlaceUpdateState};
use crate::api::keys;
use crate::podmarks::codec::canonical_reference;

/// `apps.kruise.io/runtime-containers-meta`, written by kruise-daemon.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuntimeContainersMeta {
    #[serde(default)]
    pub containers: Vec<RuntimeContainerMeta>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeContainerMeta {
    pub name: String,
    #[serde(rename = "containerID")]
    pub container_id: String,
    #[serde(default)]
    pub restart_count: i32,
    #[serde(default)]
    pub hashes: RuntimeContainerHashes,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeContainerHashes {
    #[serde(default)]
    pub plain_hash: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub extracted_env_from_metadata_hash: u64,
}

fn is_zero(value: &u64) -> bool {
    *value == 0
}

/// The hashes kruise-daemon reports, computed the way the daemon does, for comparison.
///
/// Reproducing them means reproducing kubelet's container hash and the daemon's env hash (FNV-32a
/// over Go's deep-hash printing); a caller that runs next to such a daemon supplies them. `None`
/// means "cannot tell", which never counts as consistent.
pub trait ContainerHasher {
    /// Kubelet's hash of the container spec (`plainHash`).
    fn plain_hash(&self, container: &Container) -> Option<u64>;
    /// The hash of the env values the container reads from pod metadata
    /// (`extractedEnvFromMetadataHash`).
    fn env_from_metadata_hash(&self, pod: &Pod, container: &Container) -> Option<u64>;
}

/// No node agent: runtime hashes are never trusted, completion is judged by imageID alone.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoRuntimeHashes;

impl ContainerHasher for NoRuntimeHashes {
    fn plain_hash(&self, _: &Container) -> Option<u64> {
        None
    }
    fn env_from_metadata_hash(&self, _: &Pod, _: &Container) -> Option<u64> {
        None
    }
}

/// Why an update (or its current batch) is not finished yet.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Incomplete {
    #[error("still in grace period of in-place update")]
    InGracePeriod,
    #[error("existing containers to in-place update in next batches")]
    NextBatchesPending,
    #[error("waiting for all containers hash consistent, but runtime-container-meta not found")]
    RuntimeMetaMissing,
    #[error("waiting for all containers hash consistent")]
    HashesInconsistent,
    #[error("container {0} has not restarted since its image was patched")]
    NotRestarted(String),
    #[error("container {0} imageID not changed")]
    ImageIdNotChanged(String),
    #[error("not found statuses of containers {0:?}")]
    StatusesMissing(Vec<String>),
    #[error("in-place update state cannot be read: {0}")]
    UnreadableState(String),
}

/// Whether the whole in-place update of the pod is done (grace over, no batch left, last batch
/// applied). A pod without a state annotation has nothing in flight.
pub fn pod_update_completed(pod: &Pod, hasher: &dyn ContainerHasher) -> Result<(), Incomplete> {
    if state::has_grace(pod) {
        return Err(Incomplete::InGracePeriod);
    }
    let Some(parsed) = state::read_state(pod) else {
        return Ok(());
    };
    let state = parsed.map_err(|e| Incomplete::UnreadableState(e.to_string()))?;
    if state.has_next_batch() {
        return Err(Incomplete::NextBatchesPending);
    }
    batch_completed(pod, &state, hasher)
}

/// Whether the most recently patched batch is running its new spec.
pub fn batch_completed(
    pod: &Pod,
    state: &InPlaceUpdateState,
    hasher: &dyn ContainerHasher,
) -> Result<(), Incomplete> {
    // An unreadable record is treated as absent: waiting on it would never end.
    let runtime = runtime_meta(pod);
    if state.update_env_from_metadata {
        let Some(runtime) = runtime.as_ref() else {
            return Err(Incomplete::RuntimeMetaMissing);
        };
        let consistent = all_hashes_consistent(pod, runtime, |c, meta| {
            hasher.env_from_metadata_hash(pod, c)
                == Some(meta.hashes.extracted_env_from_metadata_hash)
        });
        if !consistent {
            return Err(Incomplete::HashesInconsistent);
        }
    }
    // A hasher that cannot reproduce kubelet's plain hash leaves images to the imageID rule.
    let plain_hashes_known = spec_containers(pod)
        .iter()
        .all(|c| hasher.plain_hash(c).is_some());
    if let Some(runtime) = runtime.as_ref().filter(|_| plain_hashes_known) {
        if all_hashes_consistent(pod, runtime, |c, meta| {
            hasher.plain_hash(c) == Some(meta.hashes.plain_hash)
        }) {
            return Ok(());
        }
        // Env changes can only be confirmed by the daemon; images can fall back to imageIDs, in
        // case the daemon is down and its record stale.
        if state.update_env_from_metadata {
            return Err(Incomplete::HashesInconsistent);
        }
    }
    image_ids_changed(pod, state)
}

/// The runtime record of the pod, if it has one that reads; an unreadable one counts as absent.
pub fn runtime_meta(pod: &Pod) -> Option<RuntimeContainersMeta> {
    let raw = pod
        .metadata
        .annotations
        .as_ref()?
        .get(keys::RUNTIME_CONTAINERS_META)?;
    serde_json::from_str(raw).ok()
}

/// Every spec container has a status and a runtime record for the same container ID, and `check`
/// accepts the record.
fn all_hashes_consistent(
    pod: &Pod,
    runtime: &RuntimeContainersMeta,
    check: impl Fn(&Container, &RuntimeContainerMeta) -> bool,
) -> bool {
    spec_containers(pod).iter().all(|container| {
        let Some(status) = container_status(pod, &container.name) else {
            return false;
        };
        let Some(meta) = runtime.containers.iter().find(|m| m.name == container.name) else {
            return false;
        };
        status.container_id.as_deref().unwrap_or("") == meta.container_id && check(container, meta)
    })
}

/// The image rule, per container whose image was patched:
///
/// - With this project's restart record (written at patch time): the container must have
///   restarted since (new container ID or higher restart count) — never done before — and then
///   it runs the spec when its imageID moved, or the runtime reports the spec image (both
///   normalised as the CRI normalises references), or it started no earlier than the patch. The
///   last covers a new tag of the same digest, which the runtime may report under the old tag.
/// - Without it (state written by OpenKruise): OpenKruise's rule, imageID moved or the reported
///   image is the spec image, with the CRI's normalisation instead of only `:latest`.
fn image_ids_changed(pod: &Pod, state: &InPlaceUpdateState) -> Result<(), Incomplete> {
    let Some(recorded) = state.last_container_statuses.as_ref() else {
        return Ok(());
    };
    let restarts = restart_record::read_record(pod).filter(|r| r.revision == state.revision);
    let mut unseen: Vec<&String> = recorded.keys().collect();
    for status in container_statuses(pod) {
        let Some(old) = recorded.get(&status.name) else {
            continue;
        };
        let spec_image = spec_containers(pod)
            .iter()
            .find(|c| c.name == status.name)
            .and_then(|c| c.image.as_deref())
            .unwrap_or("");
        let evidence = RestartEvidence {
            start: restarts
                .as_ref()
                .and_then(|r| Some((r.containers.get(&status.name)?, r.patched_at.as_str()))),
            image_id_before: &old.image_id,
        };
        evidence.runs_spec(status, spec_image)?;
        unseen.retain(|name| **name != status.name);
    }
    if unseen.is_empty() {
        Ok(())
    } else {
        Err(Incomplete::StatusesMissing(
            unseen.into_iter().cloned().collect(),
        ))
    }
}

/// What was known about one container when its image was patched.
#[derive(Debug, Clone, Copy)]
pub struct RestartEvidence<'a> {
    /// This project's record of the container and the patch time, when it was written.
    pub start: Option<(&'a ContainerStart, &'a str)>,
    /// The imageID OpenKruise's state recorded before the patch.
    pub image_id_before: &'a str,
}

impl RestartEvidence<'_> {
    /// Whether the container in `status` runs `spec_image`.
    pub fn runs_spec(&self, status: &ContainerStatus, spec_image: &str) -> Result<(), Incomplete> {
        let reports_spec_image = !status.image.is_empty()
            && canonical_reference(&status.image) == canonical_reference(spec_image);
        let image_id_moved = self.image_id_before != status.image_id;
        let Some((start, patched_at)) = self.start else {
            return if image_id_moved || reports_spec_image {
                Ok(())
            } else {
                Err(Incomplete::ImageIdNotChanged(status.name.clone()))
            };
        };
        if !start.restarted_in(status) {
            return Err(Incomplete::NotRestarted(status.name.clone()));
        }
        if image_id_moved || reports_spec_image || started_since(status, patched_at) {
            Ok(())
        } else {
            Err(Incomplete::ImageIdNotChanged(status.name.clone()))
        }
    }
}

/// The running container started at or after `patched_at` (second precision, as kubelet
/// reports it). An unreadable time is no evidence.
fn started_since(status: &ContainerStatus, patched_at: &str) -> bool {
    let Ok(patched) = patched_at.parse::<Timestamp>() else {
        return false;
    };
    let started = status
        .state
        .as_ref()
        .and_then(|s| s.running.as_ref())
        .and_then(|r| r.started_at.as_ref());
    started.is_some_and(|t| t.0.as_second() >= patched.as_second())
}

pub(crate) fn spec_containers(pod: &Pod) -> &[Container] {
    pod.spec
        .as_ref()
        .map(|s| s.containers.as_slice())
        .unwrap_or(&[])
}

pub(crate) fn container_statuses(pod: &Pod) -> &[ContainerStatus] {
    pod.status
        .as_ref()
        .and_then(|s| s.container_statuses.as_deref())
        .unwrap_or(&[])
}

pub(crate) fn container_status<'a>(pod: &'a Pod, name: &str) -> Option<&'a ContainerStatus> {
    container_statuses(pod).iter().find(|s| s.name == name)
}

#[cfg(test)]
mod tests;
