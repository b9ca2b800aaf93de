//! The Advanced StatefulSet controller: the I/O around [`crate::statefulset`], on the workload
//! shell ([`super::workload`]) with the StatefulSet's seam ([`StatefulSetSeam`]).
//!
//! A round waits until the caches show the controller's own earlier writes (expectations: pods
//! created, deleted or written, PVCs created or rewritten, each at its resourceVersion — which
//! also covers OpenKruise's update expectations), claims the pods named `<set>-<ordinal>` that
//! name the set (adopting and releasing as [`crate::workload::claim`] says), reads the history and
//! makes the update revision exist, plans (again with the pods the plan asked for whole), sends
//! the plan's actions in order and stops at the first that fails, writes the status (PUT of the
//! status subresource at the set's resourceVersion, so never from an object older than the last
//! write) and truncates the history.
//!
//! PVCs come from a cache of every PVC (whole, without managedFields): a set finds its claims by
//! name (`<template>-<set>-<ordinal>`), reads what `volumeClaims` compares, and rewrites a claim's
//! ownerReferences with a PUT of the cached claim, guarded by its resourceVersion. A PVC event
//! wakes the sets whose claim it is by name.

use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use kube::ResourceExt;
use kube::api::Api;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};

use super::runtime::Term;
use super::workload::adoption::workloads_to_sync;
use super::workload::{
    Context, Executed, Listing, Observed, Plan, Seam, SendPolicy, Shell, StatusWrite,
    controller_for, error_policy, observe, reconcile,
};
use crate::api::cloneset::Lifecycle;
use crate::api::statefulset::{StatefulSet, StatefulSetStatus};
use crate::statefulset::events::StatefulSetWording;
use crate::statefulset::ordinals::parent_and_ordinal;
use crate::statefulset::{self as planner, Claims};
use crate::workload::events::Wording;
use crate::workload::{ListedPod, PlanError, Workload};

/// The component this controller's events carry, as Kruise names it.
pub const COMPONENT: &str = planner::events::COMPONENT;

/// The Advanced StatefulSet on the workload shell: every PVC from a cache of whole PVCs.
pub struct StatefulSetSeam {
    pub pvcs: Store<PersistentVolumeClaim>,
}

/// The PVC cache as the planner reads it: the PVCs of one namespace, by name.
struct NamespacePvcs<'a> {
    store: &'a Store<PersistentVolumeClaim>,
    namespace: &'a str,
}

impl Claims for NamespacePvcs<'_> {
    fn get(&self, name: &str) -> Option<Arc<PersistentVolumeClaim>> {
        self.store.get(&ObjectRef::new(name).within(self.namespace))
    }
}

impl Seam for StatefulSetSeam {
    type Set = StatefulSet;
    type Status = StatefulSetStatus;
    type Extra = ();
    type Pvcs = Store<PersistentVolumeClaim>;

    const COMPONENT: &'static str = COMPONENT;
    /// In order, stopping at the first failure: OpenKruise ends its round there.
    const SEND: SendPolicy = SendPolicy {
        creations_first: false,
        stop_at_first_failure: true,
        parallel_deletes: false,
    };
    const WORDING: &'static dyn Wording = &StatefulSetWording;
    /// The planner reports a failed update with the pod's own event.
    const PLAN_ERROR_REASON: Option<&'static str> = None;
    const LISTING: Listing = Listing::Owned;

    fn pvcs(&self) -> &Store<PersistentVolumeClaim> {
        &self.pvcs
    }

    /// OpenKruise claims only the pods named `<set>-<ordinal>` (`isMemberOf`).
    fn is_member(set: &StatefulSet, pod: &str) -> bool {
        parent_and_ordinal(pod).is_some_and(|(parent, _)| parent == set.name())
    }

    fn hooks(set: &StatefulSet) -> Option<&Lifecycle> {
        set.spec.lifecycle.as_ref()
    }

    fn plan(
        &self,
        set: &StatefulSet,
        observed: &Observed,
        pods: &[ListedPod],
    ) -> Result<Plan<Self>, PlanError> {
        let pvcs = NamespacePvcs {
            store: &self.pvcs,
            namespace: Workload::namespace(set),
        };
        planner::plan(&planner::Snapshot {
            set,
            pods,
            claims: &pvcs,
            history: &observed.history,
            update_revision: &observed.update_revision,
            collision_count: observed.collision_count,
            now: observed.now,
        })
    }

    /// A failure's condition goes into the status, and is written even when nothing OpenKruise
    /// compares changed: the set says why it does not move.
    fn after_send(
        &self,
        set: &StatefulSet,
        plan: &mut Plan<Self>,
        executed: &Executed,
        now: Timestamp,
    ) -> bool {
        let Some((kind, message)) = executed.failure.as_ref().and_then(|f| f.condition.as_ref())
        else {
            return false;
        };
        planner::status::record_failure(&mut plan.status, kind, message, now);
        let shown = set
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|c| {
                c.iter()
                    .any(|c| c.type_ == *kind && c.message.as_deref() == Some(message))
            });
        !shown
    }

    /// A PUT of the status subresource: the set as observed with the round's status in full.
    fn status_write(set: &StatefulSet, status: &StatefulSetStatus) -> StatusWrite<StatefulSet> {
        let mut set = set.clone();
        set.status = Some(status.clone());
        StatusWrite::Replace(Box::new(set))
    }

    fn unfinished(set: &StatefulSet, status: &StatefulSetStatus) -> bool {
        status.replicas != set.spec.replicas.unwrap_or(1)
            || status.updated_replicas != status.replicas
            || status.ready_replicas != status.replicas
    }
}

/// The sets in `sets` whose PVC `pvc` is by its name (`<template>-<set>-<ordinal>`).
pub fn pvc_owners(
    sets: &Store<StatefulSet>,
    pvc: &PersistentVolumeClaim,
) -> Vec<ObjectRef<StatefulSet>> {
    let name = pvc.name_any();
    let namespace = pvc.metadata.namespace.as_deref().unwrap_or("");
    let Some((prefix, _)) = parent_and_ordinal(&name) else {
        return Vec::new();
    };
    sets.state()
        .iter()
        .filter(|set| Workload::namespace(&***set) == namespace)
        .filter(|set| {
            set.volume_claim_templates().iter().any(|t| {
                let template = t.metadata.name.as_deref().unwrap_or("");
                prefix
                    .strip_prefix(template)
                    .and_then(|r| r.strip_prefix('-'))
                    == Some(set.name())
            })
        })
        .map(|set| ObjectRef::from_obj(&**set))
        .collect()
}

/// Runs until the term ends; `pod_events` is a subscription to the watch behind `context.pods`,
/// deleted pods included (a pod deleted behind the set's back is made again).
pub async fn run(
    context: Arc<Context>,
    pod_events: impl futures::Stream<Item = Arc<Pod>> + Send + 'static,
    term: &Term,
) {
    let (pvcs, pvc_writer) = reflector::store::<PersistentVolumeClaim>();
    // The reflector runs inside the trigger stream, so it lives exactly as long as the controller.
    let pvc_events = reflector::reflector(
        pvc_writer,
        watcher(
            Api::<PersistentVolumeClaim>::all(context.client.clone()),
            watcher::Config::default().any_semantic(),
        )
        .modify(|pvc| pvc.managed_fields_mut().clear()),
    )
    .default_backoff()
    .touched_objects();
    let controller = controller_for::<StatefulSet>(&context);
    let sets = controller.store();
    let (pod_observer, pvc_observer) = (context.clone(), context.clone());
    let pvcs_held = pvcs.clone();
    let shell = Arc::new(Shell {
        context,
        seam: StatefulSetSeam { pvcs },
    });
    let controller = controller
        .watches_shared_stream(pod_events, move |pod| {
            observe::pod_event::<StatefulSet>(&pod_observer, &pod);
            workloads_to_sync::<StatefulSet>(&pod)
        })
        .watches_stream(pvc_events, move |pvc| {
            let owners = pvc_owners(&sets, &pvc);
            observe::pvc_event(&pvc_observer, &owners, &pvcs_held, &pvc);
            owners
        });
    term.run(
        COMPONENT,
        controller,
        reconcile::<StatefulSetSeam>,
        error_policy::<StatefulSetSeam>,
        shell,
    )
    .await;
}

#[cfg(test)]
mod tests;
