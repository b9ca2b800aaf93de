//! What the node agent decides, without I/O: which pods it looks at, the runtime record to
//! publish on a pod, and which containers to stop so the kubelet starts them with new env values.

use k8s_openapi::api::core::v1::{Container, Pod};

use crate::api::keys;
use crate::inplace::completion::{
    RuntimeContainerHashes, RuntimeContainerMeta, RuntimeContainersMeta, container_statuses,
    runtime_meta, spec_containers,
};
use crate::inplace::conditions::pod_condition;
use crate::inplace::env_hash::expected_hash;
use crate::k8s::owner;

/// A pod is the agent's business when a Kruise workload controls it or a SidecarSet injected it.
pub fn is_of_interest(pod: &Pod) -> bool {
    let kruise_owned =
        owner::controller_of(&pod.metadata).is_some_and(|o| owner::in_group(o, keys::GROUP));
    kruise_owned
        || pod
            .metadata
            .annotations
            .as_ref()
            .is_some_and(|a| a.contains_key(keys::SIDECARSET_HASH))
}

/// The runtime's view of one container of the pod (the newest one of its name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuntimeContainer {
    pub name: String,
    /// `<runtime>://<id>`, the form of `status.containerStatuses[].containerID`.
    pub container_id: String,
    pub running: bool,
    pub restart_count: i32,
    /// Kubelet's hash of the container spec (`io.kubernetes.container.hash`).
    pub plain_hash: u64,
}

/// The record to publish, and the containers whose env hash is still to be read from the runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetaPlan {
    pub meta: RuntimeContainersMeta,
    /// Indexes into `meta.containers` of running containers with no env hash yet.
    pub env_hash_missing: Vec<usize>,
}

/// Builds the record in the kubelet's status order: an entry already recorded for the same
/// container ID is kept (its hashes were read from that very container), any other is new.
pub fn plan_meta(pod: &Pod, runtime: &[RuntimeContainer]) -> MetaPlan {
    let old = runtime_meta(pod).unwrap_or_default();
    let mut meta = RuntimeContainersMeta::default();
    let mut env_hash_missing = Vec::new();
    for status in container_statuses(pod) {
        let Some(current) = runtime.iter().find(|c| c.name == status.name) else {
            continue;
        };
        if spec_container(pod, &status.name).is_none() {
            continue;
        }
        let entry = old
            .containers
            .iter()
            .find(|m| m.container_id == current.container_id)
            .cloned()
            .unwrap_or_else(|| RuntimeContainerMeta {
                name: current.name.clone(),
                container_id: current.container_id.clone(),
                restart_count: current.restart_count,
                hashes: RuntimeContainerHashes {
                    plain_hash: current.plain_hash,
                    extracted_env_from_metadata_hash: 0,
                },
            });
        if entry.hashes.extracted_env_from_metadata_hash == 0 && current.running {
            env_hash_missing.push(meta.containers.len());
        }
        meta.containers.push(entry);
    }
    MetaPlan {
        meta,
        env_hash_missing,
    }
}

/// The annotation value to write, or `None` when the pod already carries this record.
pub fn meta_to_write(pod: &Pod, meta: &RuntimeContainersMeta) -> Option<String> {
    if runtime_meta(pod).as_ref() == Some(meta) {
        return None;
    }
    Some(serde_json::to_string(meta).expect("runtime meta serializes"))
}

/// A container to stop: it was started with env values the pod's metadata no longer has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restart {
    pub container: String,
    pub container_id: String,
    /// The env hash the running container was started with.
    pub recorded_hash: u64,
    /// The env hash the restarted container will have; a container is stopped at most once per
    /// (container ID, this hash).
    pub expected_hash: u64,
}

/// Containers to stop: only while an in-place update holds the pod's `InPlaceUpdateReady`
/// condition False (the controller patched the metadata in the container's batch), and only
/// those whose recorded env hash differs from the one the current metadata gives.
pub fn restarts(pod: &Pod, meta: &RuntimeContainersMeta) -> Vec<Restart> {
    let updating =
        pod_condition(pod, keys::INPLACE_UPDATE_READY).is_some_and(|c| c.status == "False");
    if !updating {
        return Vec::new();
    }
    meta.containers
        .iter()
        .filter_map(|entry| {
            let container = spec_container(pod, &entry.name)?;
            let recorded = entry.hashes.extracted_env_from_metadata_hash;
            let expected = expected_hash(pod, container);
            (recorded > 0 && recorded != expected).then(|| Restart {
                container: entry.name.clone(),
                container_id: entry.container_id.clone(),
                recorded_hash: recorded,
                expected_hash: expected,
            })
        })
        .collect()
}

/// Seconds the runtime gives a stopped container: the pod's deletion grace, else its termination
/// grace (30 s by default), less what a preStop hook already used, at least 2 s.
pub fn stop_timeout(pod: &Pod, pre_stop_seconds: i64) -> i64 {
    let grace = pod
        .metadata
        .deletion_grace_period_seconds
        .or_else(|| {
            pod.spec
                .as_ref()
                .and_then(|s| s.termination_grace_period_seconds)
        })
        .unwrap_or(30);
    (grace - pre_stop_seconds).max(2)
}

fn spec_container<'a>(pod: &'a Pod, name: &str) -> Option<&'a Container> {
    spec_containers(pod).iter().find(|c| c.name == name)
}

#[cfg(test)]
mod tests;
