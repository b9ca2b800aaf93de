//! When is a patched batch done? Kubelet gives no "image applied" flag, so OpenKruise infers it:
//! from kruise-daemon's runtime hashes when they are there, otherwise from the container's imageID
//! moving away from the one recorded just before the patch.

use k8s_openapi::api::core::v1::{Container, ContainerStatus, Pod};
use serde::{Deserialize, Serialize};

use super::state::{self, InPlaceUpdateState};
use crate::api::keys;

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

/// The imageID rule: a recorded container is done when its imageID changed, or when kubelet
/// reports exactly the spec image (same digest behind a new tag).
fn image_ids_changed(pod: &Pod, state: &InPlaceUpdateState) -> Result<(), Incomplete> {
    let Some(recorded) = state.last_container_statuses.as_ref() else {
        return Ok(());
    };
    let mut unseen: Vec<&String> = recorded.keys().collect();
    for status in container_statuses(pod) {
        let Some(old) = recorded.get(&status.name) else {
            continue;
        };
        if old.image_id == status.image_id {
            let spec_image = spec_containers(pod)
                .iter()
                .find(|c| c.name == status.name)
                .map(|c| normalised_image(c.image.as_deref().unwrap_or("")))
                .unwrap_or_default();
            if spec_image != status.image {
                return Err(Incomplete::ImageIdNotChanged(status.name.clone()));
            }
        }
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

/// Kubelet reports `name:latest` for an image given without any `:`.
fn normalised_image(image: &str) -> String {
    if image.contains(':') {
        image.to_string()
    } else {
        format!("{image}:latest")
    }
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
mod tests {
    use super::*;
    use crate::inplace::state::LastContainerStatus;
    use k8s_openapi::api::core::v1::{PodSpec, PodStatus};
    use std::collections::BTreeMap;

    fn pod(spec: &[(&str, &str)], statuses: &[(&str, &str, &str)]) -> Pod {
        Pod {
            spec: Some(PodSpec {
                containers: spec
                    .iter()
                    .map(|(name, image)| Container {
                        name: name.to_string(),
                        image: Some(image.to_string()),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            }),
            status: Some(PodStatus {
                container_statuses: Some(
                    statuses
                        .iter()
                        .map(|(name, image, id)| ContainerStatus {
                            name: name.to_string(),
                            image: image.to_string(),
                            image_id: id.to_string(),
                            container_id: Some(format!("containerd://{name}")),
                            ..Default::default()
                        })
                        .collect(),
                ),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn state(recorded: &[(&str, &str)]) -> InPlaceUpdateState {
        InPlaceUpdateState {
            last_container_statuses: Some(
                recorded
                    .iter()
                    .map(|(n, id)| {
                        (
                            n.to_string(),
                            LastContainerStatus {
                                image_id: id.to_string(),
                            },
                        )
                    })
                    .collect(),
            ),
            ..Default::default()
        }
    }

    #[test]
    fn image_id_change_completes() {
        let p = pod(&[("c1", "nginx:2")], &[("c1", "nginx:1", "id-2")]);
        assert_eq!(
            batch_completed(&p, &state(&[("c1", "id-1")]), &NoRuntimeHashes),
            Ok(())
        );
    }

    #[test]
    fn same_image_id_completes_only_when_status_shows_spec_image() {
        let recorded = state(&[("c1", "id-1")]);
        let waiting = pod(&[("c1", "nginx:2")], &[("c1", "nginx:1", "id-1")]);
        assert_eq!(
            batch_completed(&waiting, &recorded, &NoRuntimeHashes),
            Err(Incomplete::ImageIdNotChanged("c1".into()))
        );
        let retagged = pod(&[("c1", "nginx:2")], &[("c1", "nginx:2", "id-1")]);
        assert_eq!(
            batch_completed(&retagged, &recorded, &NoRuntimeHashes),
            Ok(())
        );
        // No tag at all means `:latest`.
        let latest = pod(&[("c1", "nginx")], &[("c1", "nginx:latest", "id-1")]);
        assert_eq!(
            batch_completed(&latest, &recorded, &NoRuntimeHashes),
            Ok(())
        );
        // A registry port is a colon too: no `:latest` is added.
        let port = pod(
            &[("c1", "reg:5000/nginx")],
            &[("c1", "reg:5000/nginx:latest", "id-1")],
        );
        assert!(batch_completed(&port, &recorded, &NoRuntimeHashes).is_err());
    }

    #[test]
    fn missing_status_is_incomplete_and_unrecorded_containers_are_ignored() {
        let p = pod(&[("c1", "a"), ("c2", "b")], &[("c2", "b", "same")]);
        assert_eq!(
            batch_completed(&p, &state(&[("c1", "x")]), &NoRuntimeHashes),
            Err(Incomplete::StatusesMissing(vec!["c1".into()]))
        );
        assert_eq!(
            batch_completed(&p, &state(&[("c2", "other")]), &NoRuntimeHashes),
            Ok(())
        );
        assert_eq!(
            batch_completed(&p, &InPlaceUpdateState::default(), &NoRuntimeHashes),
            Ok(())
        );
    }

    struct Fixed(u64);
    impl ContainerHasher for Fixed {
        fn plain_hash(&self, _: &Container) -> Option<u64> {
            Some(self.0)
        }
        fn env_from_metadata_hash(&self, _: &Pod, _: &Container) -> Option<u64> {
            Some(self.0 + 1)
        }
    }

    fn with_runtime_meta(mut p: Pod, plain: u64, env: u64) -> Pod {
        let meta = RuntimeContainersMeta {
            containers: spec_containers(&p)
                .iter()
                .map(|c| RuntimeContainerMeta {
                    name: c.name.clone(),
                    container_id: format!("containerd://{}", c.name),
                    restart_count: 0,
                    hashes: RuntimeContainerHashes {
                        plain_hash: plain,
                        extracted_env_from_metadata_hash: env,
                    },
                })
                .collect(),
        };
        p.metadata.annotations = Some(BTreeMap::from([(
            keys::RUNTIME_CONTAINERS_META.to_string(),
            serde_json::to_string(&meta).unwrap(),
        )]));
        p
    }

    #[test]
    fn consistent_runtime_hashes_short_circuit() {
        let stuck = pod(&[("c1", "nginx:2")], &[("c1", "nginx:1", "id-1")]);
        let recorded = state(&[("c1", "id-1")]);
        let p = with_runtime_meta(stuck.clone(), 7, 0);
        assert_eq!(batch_completed(&p, &recorded, &Fixed(7)), Ok(()));
        assert!(batch_completed(&p, &recorded, &Fixed(8)).is_err());
        assert!(batch_completed(&p, &recorded, &NoRuntimeHashes).is_err());
    }

    #[test]
    fn env_from_metadata_needs_the_daemon() {
        let done = pod(&[("c1", "a")], &[("c1", "a", "id")]);
        let mut env_state = state(&[]);
        env_state.update_env_from_metadata = true;
        assert_eq!(
            batch_completed(&done, &env_state, &Fixed(7)),
            Err(Incomplete::RuntimeMetaMissing)
        );
        let stale = with_runtime_meta(done.clone(), 7, 1);
        assert_eq!(
            batch_completed(&stale, &env_state, &Fixed(7)),
            Err(Incomplete::HashesInconsistent)
        );
        let fresh = with_runtime_meta(done, 7, 8);
        assert_eq!(batch_completed(&fresh, &env_state, &Fixed(7)), Ok(()));
    }

    /// The agent's side as the controllers use it: env steps judged by the agent's record, images
    /// still by imageID (kubelet's plain hash is not reproduced).
    #[test]
    fn metadata_env_hasher_judges_env_by_record_and_images_by_image_id() {
        use crate::inplace::env_hash::MetadataEnvHasher;
        const NO_ENV: u64 = 86_995_377;
        let mut env_only = state(&[]);
        env_only.update_env_from_metadata = true;
        let running = pod(&[("c1", "nginx:1")], &[("c1", "nginx:1", "id-1")]);
        assert_eq!(
            batch_completed(
                &with_runtime_meta(running.clone(), 5, NO_ENV),
                &env_only,
                &MetadataEnvHasher
            ),
            Ok(())
        );
        assert_eq!(
            batch_completed(
                &with_runtime_meta(running.clone(), 5, 1),
                &env_only,
                &MetadataEnvHasher
            ),
            Err(Incomplete::HashesInconsistent)
        );
        let mut image_batch = state(&[("c1", "id-1")]);
        image_batch.update_env_from_metadata = true;
        let not_yet = pod(&[("c1", "nginx:2")], &[("c1", "nginx:1", "id-1")]);
        assert_eq!(
            batch_completed(
                &with_runtime_meta(not_yet, 5, NO_ENV),
                &image_batch,
                &MetadataEnvHasher
            ),
            Err(Incomplete::ImageIdNotChanged("c1".into()))
        );
        let done = pod(&[("c1", "nginx:2")], &[("c1", "nginx:2", "id-2")]);
        assert_eq!(
            batch_completed(
                &with_runtime_meta(done, 5, NO_ENV),
                &image_batch,
                &MetadataEnvHasher
            ),
            Ok(())
        );
    }

    #[test]
    fn pod_level_check_order() {
        let mut p = pod(&[("c1", "a")], &[("c1", "a", "id")]);
        assert_eq!(pod_update_completed(&p, &NoRuntimeHashes), Ok(()));
        let mut s = state(&[]);
        s.next_container_images.insert("c2".into(), "b".into());
        state::write_state(&mut p, &s).unwrap();
        assert_eq!(
            pod_update_completed(&p, &NoRuntimeHashes),
            Err(Incomplete::NextBatchesPending)
        );
        state::write_grace(&mut p, &Default::default()).unwrap();
        assert_eq!(
            pod_update_completed(&p, &NoRuntimeHashes),
            Err(Incomplete::InGracePeriod)
        );
    }
}
