//! What the controller keeps of a pod in its cache.
//!
//! Every pod of the cluster is held in memory for as long as this replica leads, as the
//! planners' compact [`PodSummary`] ([`summarize`]), made from the full pod: what a SidecarSet
//! reconcile reads for every matched pod, and a CloneSet round for every pod of the CloneSet. A
//! k8s-openapi `Pod`, even pruned, is kilobytes of sparsely filled structs (a `Container` alone is
//! 2 KiB), so the pod itself, passed through [`prune`], is kept only when a controller reads it
//! whole every round ([`held`]): a CloneSet's pods with an update in flight or a lifecycle state
//! to move on, the launch barriers still to open, and pods in the middle of a SidecarSet's
//! in-place update. They read only a small part of it: identity, owners, labels and annotations,
//! container names, images and launch-priority env, the readiness gates, and the container
//! statuses (with the running container's start time) and conditions. The SidecarSet hash and sidecar state annotations are only read by the
//! planner, from the summary, and are dropped too.
//!
//! `cargo bench --bench rollout` reports the memory of both.
//!
//! Writes are resourceVersion-guarded patches (see [`super::pod_write`]). Both controllers read
//! a pod that is not held from the apiserver when they have a write to make, and decide again on
//! that read.

use std::borrow::Cow;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{
    Container, ContainerState, ContainerStateRunning, ContainerStatus, EnvVar, Pod, PodSpec,
    PodStatus,
};
use kube::runtime::reflector::{Lookup, ObjectRef};
use kube::runtime::watcher::Event;

use crate::api::keys;
use crate::barrier::{self, BarrierDecision};
use crate::inplace;
use crate::podmarks::{EngineOwner, PlannerAnnotation, PodSummary, PodView};
use crate::workload::{engine, listed};

/// Stored by `namespace/name` like the pod it summarises.
impl Lookup for PodSummary {
    type DynamicType = ();

    fn kind(_: &()) -> Cow<'_, str> {
        "Pod".into()
    }

    fn group(_: &()) -> Cow<'_, str> {
        "".into()
    }

    fn version(_: &()) -> Cow<'_, str> {
        "v1".into()
    }

    fn plural(_: &()) -> Cow<'_, str> {
        "pods".into()
    }

    fn name(&self) -> Option<Cow<'_, str>> {
        self.name_field().map(Cow::Borrowed)
    }

    fn namespace(&self) -> Option<Cow<'_, str>> {
        self.namespace_field().map(Cow::Borrowed)
    }

    // Left out of the store's keys, though the summary has them: store keys compare namespace and
    // name only, and each key would carry two more strings.
    fn resource_version(&self) -> Option<Cow<'_, str>> {
        None
    }

    fn uid(&self) -> Option<Cow<'_, str>> {
        None
    }
}

/// The same watcher event for the summary store.
pub fn summarize(event: &Event<Pod>) -> Event<PodSummary> {
    match event {
        Event::Apply(pod) => Event::Apply(summary(pod)),
        Event::Delete(pod) => Event::Delete(summary(pod)),
        Event::Init => Event::Init,
        Event::InitApply(pod) => Event::InitApply(summary(pod)),
        Event::InitDone => Event::InitDone,
    }
}

/// The summary of `pod`, with whether the in-place engine is at rest on it under a SidecarSet's
/// options and under the workloads'.
pub fn summary(pod: &Pod) -> PodSummary {
    let [sidecarset, workload] =
        inplace::at_rest_each(pod, [&inplace::SIDECARSET_ENGINE, &engine::ENGINE]);
    PodSummary::of(pod)
        .with_engine_at_rest(EngineOwner::SidecarSet, sidecarset)
        .with_engine_at_rest(EngineOwner::Workload, workload)
}

/// Whether a controller reads `pod` whole from the cache, so that the cache keeps it. `summary`
/// is the pod's ([`summary`]).
/// - a pod naming a workload (CloneSet, Advanced StatefulSet or DaemonSet) among its owners that
///   every round of that kind reads whole ([`listed::workload_reads_whole`]: an update in
///   flight, a lifecycle state to move on); the controller reads any other pod it acts on from
///   the apiserver;
/// - a pod whose launch barrier is still to open (once it opened, or for a pod without one, the
///   barrier controller has nothing more to do with it, ever);
/// - a pod with an in-place update in flight, which the SidecarSet controller drives each round.
///   The update state stays on the pod once the update is done; the pod is then at rest
///   ([`inplace::at_rest`]) and, from then on, no longer held.
pub fn held(pod: &Pod, summary: &PodSummary) -> bool {
    listed::workload_reads_whole(pod, summary)
        || barrier::decide(pod) != BarrierDecision::Ignore
        || (summary.engine_progress().is_some() && !summary.engine_at_rest(EngineOwner::SidecarSet))
}

/// The key of `pod` (a pod or a summary) in a store of `K` (pods or summaries): its namespace and
/// name. (A stored pod always has a namespace.)
pub fn store_key<K>(pod: &impl PodView) -> ObjectRef<K>
where
    K: Lookup,
    K::DynamicType: Default,
{
    let key = ObjectRef::new(pod.name());
    match pod.namespace() {
        "" => key,
        namespace => key.within(namespace),
    }
}

/// A pod standing in for one the cache holds only as its summary, when the subscribers are told
/// of every pod after a relist: its identity (uid and version included), owners, labels and
/// injected list, what they map and observe events by.
pub fn stand_in(summary: &PodSummary) -> Pod {
    let mut pod = Pod::default();
    let text = |value: &str| (!value.is_empty()).then(|| value.to_string());
    pod.metadata.namespace = summary.namespace_field().map(str::to_string);
    pod.metadata.name = summary.name_field().map(str::to_string);
    pod.metadata.uid = text(PodView::uid(summary));
    pod.metadata.resource_version = text(PodView::resource_version(summary));
    pod.metadata.owner_references = summary.owner_references();
    pod.metadata.labels = summary.labels().cloned();
    pod.metadata.annotations = summary
        .annotation(PlannerAnnotation::InjectedList)
        .map(|list| [(keys::SIDECARSET_INJECTED_LIST.to_string(), list.to_string())].into());
    pod
}

/// `summaries` in the order they lie in memory. A store hands them out in hash order, and a pass
/// over 10,000 in that order waits on memory: 20 ms, against 9 ms in memory order (`cargo bench
/// --bench rollout`). A summary's parts are allocated with it, so its address orders them too.
/// Nothing the planner decides depends on the order it is given the pods in.
pub fn in_memory_order(mut summaries: Vec<Arc<PodSummary>>) -> Vec<Arc<PodSummary>> {
    summaries.sort_unstable_by_key(|summary| Arc::as_ptr(summary).addr());
    summaries
}

/// The env every controller decision can read: launch priority and its barrier, and the values
/// read from pod metadata (the in-place engine compares their hash with the node agent's record).
fn read_by_controllers(env: &EnvVar) -> bool {
    env.name == keys::ENV_CONTAINER_PRIORITY
        || env.name == keys::ENV_CONTAINER_BARRIER
        || env
            .value_from
            .as_ref()
            .and_then(|from| from.field_ref.as_ref())
            .is_some_and(|r| r.field_path.starts_with("metadata."))
}

/// Drops from `pod` everything the controllers never read.
pub fn prune(pod: &mut Pod) {
    pod.metadata.managed_fields = None;
    if let Some(annotations) = pod.metadata.annotations.as_mut() {
        for key in [
            keys::LAST_APPLIED_CONFIGURATION,
            keys::SIDECARSET_HASH,
            keys::SIDECARSET_HASH_WITHOUT_IMAGE,
            keys::SIDECARSET_INPLACE_UPDATE_STATE,
        ] {
            annotations.remove(key);
        }
    }
    if let Some(spec) = pod.spec.take() {
        pod.spec = Some(PodSpec {
            containers: spec.containers.into_iter().map(container).collect(),
            init_containers: spec
                .init_containers
                .map(|c| c.into_iter().map(container).collect()),
            node_name: spec.node_name,
            readiness_gates: spec.readiness_gates,
            ..Default::default()
        });
    }
    if let Some(status) = pod.status.take() {
        pod.status = Some(PodStatus {
            phase: status.phase,
            // Conditions are few and small, and all of their fields are read.
            conditions: status.conditions,
            container_statuses: status
                .container_statuses
                .map(|s| s.into_iter().map(container_status).collect()),
            ..Default::default()
        });
    }
}

fn container(full: Container) -> Container {
    let env: Vec<EnvVar> = full
        .env
        .into_iter()
        .flatten()
        .filter(read_by_controllers)
        .collect();
    Container {
        name: full.name,
        image: full.image,
        env: (!env.is_empty()).then_some(env),
        ..Default::default()
    }
}

fn container_status(full: ContainerStatus) -> ContainerStatus {
    ContainerStatus {
        name: full.name,
        image: full.image,
        image_id: full.image_id,
        container_id: full.container_id,
        ready: full.ready,
        started: full.started,
        restart_count: full.restart_count,
        // When the running container started: in-place completion reads it (a new tag of the
        // same digest is told by the restart since the patch).
        state: full
            .state
            .and_then(|s| s.running)
            .map(|running| ContainerState {
                running: Some(ContainerStateRunning {
                    started_at: running.started_at,
                }),
                ..Default::default()
            }),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests;
