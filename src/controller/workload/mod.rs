//! The shell every workload controller (CloneSet, Advanced StatefulSet, Advanced DaemonSet)
//! runs its pure planner in, generic over the kind ([`Kind`]).
//!
//! A round is a [`Round`]: the shared [`Context`], the workload and its expectation key, with
//! methods instead of functions taking `context, set, key`. Its skeleton ([`reconcile`]) is
//! observe → plan → send → settle:
//!
//! - observe ([`Round::observe`]): the caches are ready, the workload is not older than the
//!   shell's own last write of it ([`Round::behind_own_write`]), the expectations of earlier
//!   writes are met, the pods are claimed (adopted, released), the history is read and the update revision
//!   exists;
//! - plan ([`Round::plan_whole`]): the kind's planner, again with the pods it asked for whole;
//! - send ([`Round::send`]): pods created (slow start, their PVCs first), deleted, written,
//!   events per [`crate::workload::Purpose`];
//! - settle: the kind writes its status ([`Round::write_status`]; any other write of the
//!   workload itself is recorded with [`Round::wrote`]) and what else it owns, and
//!   [`requeue`] turns the round's [`Outcome`] into when to look again (one rule for all).

pub mod adoption;
pub mod error;
pub mod history;
pub mod observe;
pub mod reconcile;
pub mod round;

use std::sync::{Arc, Mutex};

use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::api::PartialObjectMeta;
use kube::runtime::events::Recorder;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Resource, ResourceExt};

use super::expectations::{Expectations, Seen};
use super::pod_cache;
use crate::metrics::Metrics;
use crate::podmarks::{PodSummary, PodView};
use crate::workload::{ListedPod, Workload};
pub use error::{ApiError, WorkloadError, api_error, error_text, status_code};
#[cfg(test)]
use kube::runtime::controller::Action as Requeue;
pub use reconcile::{Observed, Outcome, requeue};
pub use round::{Executed, PvcWrites, Round};

/// What every workload controller shares.
pub struct Context {
    pub client: kube::Client,
    /// The shared store of the pods some controller reads whole (pruned; writes are patches,
    /// so pruned fields survive): of a workload's, those every round reads whole.
    pub pods: Store<Pod>,
    /// Every pod's summary: what a round reads of the others.
    pub summaries: Store<PodSummary>,
    pub recorder: Recorder,
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

/// What the cache keeps of a PVC.
pub type PvcMeta = PartialObjectMeta<PersistentVolumeClaim>;

/// What a reconcile works with: the shared context and the kind's PVC cache.
pub struct Shell {
    pub context: Arc<Context>,
    pub pvcs: Store<PvcMeta>,
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

/// Whether `owner` names a workload of kind `K` (its API group, any version).
pub fn names_kind<K: Resource<DynamicType = ()>>(owner: &OwnerReference) -> bool {
    owner.kind == K::kind(&()) && owner.api_version.split('/').next() == Some(&*K::group(&()))
}

/// The workload of kind `K` that controls an object (a pod, a PVC), if any.
pub fn controlling<K: Resource<DynamicType = ()>>(meta: &ObjectMeta) -> Option<ObjectRef<K>> {
    let owner = meta
        .owner_references
        .iter()
        .flatten()
        .find(|o| o.controller == Some(true))?;
    let namespace = meta.namespace.as_deref()?;
    names_kind::<K>(owner).then(|| ObjectRef::new(&owner.name).within(namespace))
}

/// What the caches say about an expected name: a pod, or a PVC behind [`pvc_key`].
pub fn seen(shell: &Shell, namespace: &str, name: &str) -> Seen {
    match name.strip_prefix(PVC_KEY) {
        Some(claim) => {
            let cached = shell.pvcs.get(&ObjectRef::new(claim).within(namespace));
            seen_in(cached.as_deref().map(|c| &c.metadata))
        }
        None => {
            let cached = shell
                .context
                .summaries
                .get(&ObjectRef::new(name).within(namespace));
            match cached {
                None => Seen::Absent,
                Some(summary) => Seen::Present {
                    deleting: summary.deleting(),
                    version: summary.resource_version().parse().ok(),
                },
            }
        }
    }
}

fn seen_in(meta: Option<&ObjectMeta>) -> Seen {
    match meta {
        None => Seen::Absent,
        Some(meta) => Seen::Present {
            deleting: meta.deletion_timestamp.is_some(),
            version: meta
                .resource_version
                .as_deref()
                .and_then(|v| v.parse().ok()),
        },
    }
}

/// The pods whose ownerReferences name `set` (by uid), from the cache: what OpenKruise lists for
/// the claim step. Each is its summary, and the held pod where the cache holds it at the
/// summary's version.
pub fn owned_pods<K: Workload>(context: &Context, set: &K) -> Vec<ListedPod> {
    let namespace = set.namespace();
    let uid = set.uid();
    let mut pods: Vec<ListedPod> = context
        .summaries
        .state()
        .into_iter()
        .filter(|p| p.namespace() == namespace && p.owner_uids().any(|o| o == uid))
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

/// The PVCs (metadata) whose ownerReferences name `set` (by uid), from the cache, terminating
/// ones included, by name.
pub fn owned_pvcs<K: Workload>(shell: &Shell, set: &K) -> Vec<Arc<PvcMeta>> {
    let namespace = set.meta().namespace.as_deref();
    let uid = set.uid();
    let mut pvcs: Vec<Arc<PvcMeta>> = shell
        .pvcs
        .state()
        .into_iter()
        .filter(|c| c.metadata.namespace.as_deref() == namespace)
        .filter(|c| c.owner_references().iter().any(|o| o.uid == uid))
        .collect();
    pvcs.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    pvcs
}

#[cfg(test)]
mod tests;
