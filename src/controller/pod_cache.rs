//! What the controller keeps of a pod in its cache.
//!
//! Every pod of the cluster is held in memory for as long as this replica leads, twice:
//! - the rollout planner's compact [`PodSummary`] ([`summarize`]), made from the full pod, which
//!   is what a SidecarSet reconcile reads for every matched pod;
//! - the pod itself, passed through [`prune`], for the controllers that act on single pods (the
//!   launch barriers, the in-place engine, the upgrade condition). They read only a small part
//!   of it: identity, labels and annotations, container names, images and launch-priority env,
//!   the readiness gates, and the container statuses and conditions. The SidecarSet hash and
//!   sidecar state annotations are only read by the planner, from the summary, and are dropped
//!   too.
//!
//! `cargo bench --bench rollout` reports the memory of both.
//!
//! Nothing is ever written from a pruned copy: writes are patches computed on a fresh read (see
//! [`super::pod_write`]), and decisions taken on the cache are taken again on that read.

use std::borrow::Cow;

use k8s_openapi::api::core::v1::{Container, ContainerStatus, EnvVar, Pod, PodSpec, PodStatus};
use kube::runtime::reflector::Lookup;
use kube::runtime::watcher::Event;

use crate::api::keys;
use crate::podmarks::PodSummary;

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

    // Not kept: store keys compare namespace and name only, and a summary is never turned into
    // an owner or event reference.
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
        Event::Apply(pod) => Event::Apply(PodSummary::of(pod)),
        Event::Delete(pod) => Event::Delete(PodSummary::of(pod)),
        Event::Init => Event::Init,
        Event::InitApply(pod) => Event::InitApply(PodSummary::of(pod)),
        Event::InitDone => Event::InitDone,
    }
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
        ..Default::default()
    }
}

#[cfg(test)]
mod tests;
