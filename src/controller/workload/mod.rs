//! The one shell every workload controller (CloneSet, Advanced StatefulSet, Advanced DaemonSet)
//! runs its pure planner in. What differs between the kinds is each kind's [`Seam`]: the PVCs it
//! reads (or none), when its caches are ready, which pods it lists, its planner, its events'
//! words ([`crate::workload::events::Wording`]), its send policy and how it writes its status.
//!
//! A round is a [`Round`] (the shell, the workload and its expectation key, with methods); its
//! skeleton ([`reconcile`]) is observe → plan → send → settle, the same for every kind:
//!
//! - observe ([`Round::observe`]): the caches are ready, the workload is not older than the
//!   shell's own last write of it ([`Round::behind_own_write`]), the expectations of earlier
//!   writes are met, the pods are claimed (adopted, released), the history is read and the update
//!   revision exists;
//! - plan ([`Round::plan_whole`]): the kind's planner, again with the pods it asked for whole;
//! - send ([`Round::send`]): PVCs, pods created, deleted, written, as the kind's
//!   [`SendPolicy`] orders them, each reported in the kind's words;
//! - settle ([`Round::settle`]): the status, the kind's own write of itself, history truncation,
//!   the plan's error; and [`requeue`] turns the round's [`Outcome`] into when to look again
//!   (one rule for all).
//!
//! Every reconcile runs in a span naming the kind, namespace and name; a failed one is counted
//! by kind and reason ([`error_policy`]).

pub mod adoption;
pub mod error;
pub mod history;
pub mod observe;
pub mod outcome;
pub mod reconcile;
pub mod round;
pub mod seam;
pub mod send;

use std::sync::{Arc, Mutex};

use crate::controller::events::EventRecorder;
use crate::k8s::owner;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::Resource;
use kube::api::PartialObjectMeta;
use kube::runtime::reflector::{ObjectRef, Store};

use futures::FutureExt;

use kube::runtime::controller::Controller;
use kube::runtime::watcher;

use super::expectations::{Expectations, Seen};
use super::guarded_watch::{self, UndecodableReporter};
use super::pod_cache;
use crate::k8s::selector;
use crate::metrics::Metrics;
use crate::podmarks::{PodSummary, PodView};
use crate::workload::{ListedPod, Workload, pod};
pub use error::{ApiError, WorkloadError, api_error, error_text, status_code};
#[cfg(test)]
use kube::runtime::controller::Action as Requeue;
pub use outcome::{Outcome, requeue};
pub use reconcile::{error_policy, reconcile};
pub use round::Round;
pub use seam::{Executed, Listing, Observed, Plan, PvcWrites, Seam, SendPolicy, StatusWrite};

/// What every workload controller shares.
pub struct Context {
    pub client: kube::Client,
    /// The shared store of the pods some controller reads whole (pruned; writes are patches,
    /// so pruned fields survive): of a workload's, those every round reads whole.
    pub pods: Store<Pod>,
    /// Every pod's summary: what a round reads of the others.
    pub summaries: Store<PodSummary>,
    pub recorder: EventRecorder,
    pub expectations: Mutex<Expectations>,
    /// Where stored objects the types refuse are counted.
    pub metrics: Arc<Metrics>,
}

impl Context {
    /// The expectations, locked (a poisoned lock means a reconcile panicked: nothing sane is left).
    pub fn lock_expectations(&self) -> std::sync::MutexGuard<'_, Expectations> {
        self.expectations.lock().expect("expectations lock")
    }
}

/// What the CloneSet's cache keeps of a PVC.
pub type PvcMeta = PartialObjectMeta<PersistentVolumeClaim>;

/// What a reconcile works with: the shared context and the kind's seam (its own caches).
pub struct Shell<S> {
    pub context: Arc<Context>,
    pub seam: S,
}

/// Expectations share one name space per workload: PVC names get this prefix (a pod name cannot
/// contain `/`).
const PVC_KEY: &str = "persistentvolumeclaim/";

/// The expectation name of PVC `name`.
pub fn pvc_key(name: &str) -> String {
    format!("{PVC_KEY}{name}")
}

/// A workload kind the shell runs.
pub trait Kind:
    Workload
    + Clone
    + std::fmt::Debug
    + serde::de::DeserializeOwned
    + serde::Serialize
    + Send
    + Sync
    + 'static
{
}

impl<K> Kind for K where
    K: Workload
        + Clone
        + std::fmt::Debug
        + serde::de::DeserializeOwned
        + serde::Serialize
        + Send
        + Sync
        + 'static
{
}

/// The controller of kind `K` on a guarded watch of its objects: a stored object the types
/// refuse is reported and skipped, never fatal to the others.
pub fn controller_for<K: Kind + Resource<DynamicType = ()>>(context: &Context) -> Controller<K> {
    let reporter = UndecodableReporter::new::<K>(context.metrics.clone(), context.recorder.clone());
    let (store, objects) = guarded_watch::watch::<K>(
        context.client.clone(),
        watcher::Config::default().any_semantic(),
        reporter,
    );
    Controller::for_stream(objects, store)
}

/// Whether `owner` names a workload of kind `K` (its API group, any version).
pub fn names_kind<K: Resource<DynamicType = ()>>(owner: &OwnerReference) -> bool {
    owner.kind == K::kind(&()) && owner::in_group(owner, &K::group(&()))
}

/// The workload of kind `K` that controls an object (a pod, a PVC), if any.
pub fn controlling<K: Resource<DynamicType = ()>>(meta: &ObjectMeta) -> Option<ObjectRef<K>> {
    let owner = owner::controller_of(meta)?;
    let namespace = meta.namespace.as_deref()?;
    names_kind::<K>(owner).then(|| ObjectRef::new(&owner.name).within(namespace))
}

/// What the caches say about an expected name: a pod, or a PVC behind [`pvc_key`].
pub fn seen(context: &Context, pvcs: &impl PvcCache, namespace: &str, name: &str) -> Seen {
    match name.strip_prefix(PVC_KEY) {
        Some(pvc) => pvcs.seen(namespace, pvc),
        None => match context
            .summaries
            .get(&ObjectRef::new(name).within(namespace))
        {
            None => Seen::Absent,
            Some(summary) => Seen::Present {
                deleting: summary.deleting(),
                version: summary.resource_version().parse().ok(),
            },
        },
    }
}

/// The pods a round of `set` claims from, from the cache: those whose ownerReferences name it
/// (by uid), and with [`Listing::OwnedAndOrphans`] also the active pods of its namespace that no
/// one controls and its selector selects ([`adopts`]). Each is its summary, and the held pod
/// where the cache holds it at the summary's version; by name.
pub fn listed_pods<K: Workload>(context: &Context, set: &K, listing: Listing) -> Vec<ListedPod> {
    let namespace = set.namespace();
    let uid = set.uid();
    let orphan = |p: &PodSummary| listing == Listing::OwnedAndOrphans && adopts(set, p);
    let mut pods: Vec<ListedPod> = context
        .summaries
        .state()
        .into_iter()
        .filter(|p| p.namespace() == namespace && (p.owner_uids().any(|o| o == uid) || orphan(p)))
        .map(|summary| {
            let whole = context
                .pods
                .get(&pod_cache::store_key(&summary))
                .filter(|pod| pod.resource_version() == summary.resource_version());
            ListedPod { summary, whole }
        })
        .collect();
    pods.sort_by(|a, b| a.name().cmp(b.name()));
    pods
}

/// Whether `set` would adopt `pod` as an orphan: nobody controls it, it is active, and `set`'s
/// selector selects it. An empty selector selects no orphan: upstream refuses to act on it
/// (`SelectingAll`), and it must not take every pod of the namespace.
pub fn adopts<K: Workload, P: PodView + ?Sized>(set: &K, pod: &P) -> bool {
    pod.controller_uid().is_none()
        && pod::is_active(pod)
        && !set.deleting()
        && set.selector().is_some_and(|s| {
            !selector::is_empty(s)
                && selector::matches(s, pod.labels(), "spec.selector").unwrap_or(false)
        })
}

/// A PVC cache, as the shell reads it for expectations.
pub trait PvcCache: Send + Sync + 'static {
    /// Whether it has listed everything.
    fn ready(&self) -> bool;
    /// What it holds of the PVC `name` of `namespace`.
    fn seen(&self, namespace: &str, name: &str) -> Seen;
}

impl<K> PvcCache for Store<K>
where
    K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
{
    fn ready(&self) -> bool {
        self.wait_until_ready().now_or_never().is_some()
    }

    fn seen(&self, namespace: &str, name: &str) -> Seen {
        match self.get(&ObjectRef::new(name).within(namespace)) {
            None => Seen::Absent,
            Some(pvc) => Seen::Present {
                deleting: pvc.meta().deletion_timestamp.is_some(),
                version: pvc
                    .meta()
                    .resource_version
                    .as_deref()
                    .and_then(|v| v.parse().ok()),
            },
        }
    }
}

/// The PVC cache of a kind without PVCs (the DaemonSet): ready, and empty.
pub struct NoPvcs;

impl PvcCache for NoPvcs {
    fn ready(&self) -> bool {
        true
    }

    fn seen(&self, _namespace: &str, _name: &str) -> Seen {
        Seen::Absent
    }
}

#[cfg(test)]
mod tests;
