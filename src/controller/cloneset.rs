//! The CloneSet controller: the I/O around [`crate::cloneset`], on the workload shell
//! ([`super::workload`]) with the CloneSet's seam ([`CloneSetSeam`]).
//!
//! Each reconcile of a CloneSet waits until the pod cache shows its own earlier writes
//! ([`super::expectations`]), reads its pods from the shared pod cache (adopting and releasing
//! as [`crate::workload::claim`] says) and its ControllerRevisions from the apiserver, makes
//! sure the update revision exists, plans one round and sends what the plan says. The cache
//! holds most pods as their summaries only ([`crate::workload::listed`]); when the plan acts on
//! such a pod it names it, the shell reads it from the apiserver and plans again with it whole
//! (at most three plans a round). The plan's writes are: pods created
//! through the API (so admission webhooks apply to them), deleted, or patched with
//! resourceVersion-guarded JSON patches ([`super::pod_write`]); then the status through the
//! status subresource, the `podsToDelete` clean-up and history truncation. All progress lives in
//! the pods and the CloneSet, so a new leader carries on where the last stopped.
//!
//! PVCs of `volumeClaimTemplates` come from a cache of their own: a metadata-only watch of the
//! PVCs carrying the instance-id label (names, labels, owners and versions are all the planner
//! reads). A list per reconcile would be one more apiserver round trip each time any pod of the
//! CloneSet changes; the cache costs a few hundred bytes per PVC, and the same expectations as for
//! pods keep a slow cache from creating or deleting a PVC twice. Each new pod's missing PVCs are
//! created just before it (AlreadyExists counts as done), a deleted pod's PVCs once its deletion
//! is accepted.

use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Pod;
use kube::api::Api;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Resource, ResourceExt};
use serde_json::json;

use super::runtime::Term;
use super::workload::adoption::workloads_to_sync;
use super::workload::{
    Executed, Listing, Observed, Plan, PvcMeta, PvcWrites, Seam, SendPolicy, Shell, StatusWrite,
    controller_for, controlling, error_policy, observe, reconcile,
};
use crate::api::cloneset::{CloneSet, CloneSetStatus, Lifecycle};
use crate::cloneset::events::CloneSetWording;
use crate::cloneset::pvc::INSTANCE_ID;
use crate::cloneset::{self as planner, PlanExtra};
use crate::workload::events::Wording;
use crate::workload::{ListedPod, PlanError, Workload};

pub use super::workload::{Context, WorkloadError as CloneSetError};

/// The component this controller's events carry, as Kruise names it.
pub const COMPONENT: &str = "cloneset-controller";

/// The CloneSet on the workload shell: its PVCs from a metadata-only cache.
pub struct CloneSetSeam {
    pub pvcs: Store<PvcMeta>,
}

impl Seam for CloneSetSeam {
    type Set = CloneSet;
    type Status = CloneSetStatus;
    type Extra = PlanExtra;
    type Pvcs = Store<PvcMeta>;

    const COMPONENT: &'static str = COMPONENT;
    const SEND: SendPolicy = SendPolicy {
        creations_first: true,
        stop_at_first_failure: false,
        parallel_deletes: false,
    };
    const WORDING: &'static dyn Wording = &CloneSetWording;
    const PLAN_ERROR_REASON: Option<&'static str> = Some("FailedUpdate");
    const LISTING: Listing = Listing::Owned;

    fn pvcs(&self) -> &Store<PvcMeta> {
        &self.pvcs
    }

    fn hooks(set: &CloneSet) -> Option<&Lifecycle> {
        set.spec.lifecycle.as_ref()
    }

    fn plan(
        &self,
        set: &CloneSet,
        observed: &Observed,
        pods: &[ListedPod],
    ) -> Result<Plan<Self>, PlanError> {
        let pvcs = owned_pvcs(&self.pvcs, set);
        let pvcs: Vec<_> = pvcs.iter().map(|c| &c.metadata).collect();
        let snapshot = planner::Snapshot {
            cloneset: set,
            pods,
            history: &observed.history,
            update_revision: &observed.update_revision,
            collision_count: observed.collision_count,
            now: observed.now,
        };
        planner::plan_with_claims(&snapshot, &pvcs, &mut fastrand::Rng::new())
    }

    fn pvc_writes(plan: &Plan<Self>) -> PvcWrites<'_> {
        let claims = &plan.extra.claims;
        PvcWrites {
            create: &claims.create,
            delete_with_pod: &claims.delete_with_pod,
            hand_over: &claims.hand_over,
            clean_up: &claims.delete,
        }
    }

    /// OpenKruise: an error of Scale sets `FailedScale` in the status, written if this round
    /// writes one (a condition alone is no reason to, `status::changed`).
    fn after_send(
        &self,
        _set: &CloneSet,
        plan: &mut Plan<Self>,
        executed: &Executed,
        now: Timestamp,
    ) -> bool {
        if let Some((kind, message)) = executed.failure.as_ref().and_then(|f| f.condition.as_ref())
        {
            planner::status::record_failure(&mut plan.status, kind, message, now);
        }
        false
    }

    /// A merge patch keeps what it does not mention, so the conditions go as `null` once none
    /// is left (the `Progressing` condition removed with the deadline).
    fn status_write(_set: &CloneSet, status: &CloneSetStatus) -> StatusWrite<CloneSet> {
        let mut body = serde_json::to_value(status).unwrap_or_default();
        if status.conditions.is_none()
            && let Some(map) = body.as_object_mut()
        {
            map.insert("conditions".into(), serde_json::Value::Null);
        }
        StatusWrite::Merge(body)
    }

    /// `scaleStrategy.podsToDelete` without the pods that are gone.
    fn own_patch(plan: &Plan<Self>) -> Option<serde_json::Value> {
        let kept = plan.extra.pods_to_delete.as_ref()?;
        let list = (!kept.is_empty()).then_some(kept);
        Some(json!({"spec": {"scaleStrategy": {"podsToDelete": list}}}))
    }

    fn unfinished(set: &CloneSet, status: &CloneSetStatus) -> bool {
        status.updated_ready_replicas != status.replicas
            || i64::from(status.replicas) != i64::from(set.spec.replicas.unwrap_or(1))
    }
}

/// The PVCs (metadata) whose ownerReferences name `set` (by uid), from the cache, terminating
/// ones included, by name.
fn owned_pvcs(pvcs: &Store<PvcMeta>, set: &CloneSet) -> Vec<Arc<PvcMeta>> {
    let namespace = set.meta().namespace.as_deref();
    let uid = Workload::uid(set);
    let mut owned: Vec<Arc<PvcMeta>> = pvcs
        .state()
        .into_iter()
        .filter(|c| c.metadata.namespace.as_deref() == namespace)
        .filter(|c| c.owner_references().iter().any(|o| o.uid == uid))
        .collect();
    owned.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    owned
}

/// The CloneSet that controls a pod, if any.
pub fn owner_of(pod: &Pod) -> Option<ObjectRef<CloneSet>> {
    controlling(&pod.metadata)
}

/// The CloneSets a pod event concerns: its controller; for a pod nobody controls, every CloneSet
/// one of its ownerReferences names (it may adopt the pod).
pub fn clonesets_to_sync(pod: &Pod) -> Vec<ObjectRef<CloneSet>> {
    workloads_to_sync::<CloneSet>(pod)
}

/// Runs until the term ends; `pod_events` is a subscription to the watch behind `context.pods`,
/// deleted pods included (a pod deleted behind the CloneSet's back is replaced).
pub async fn run(
    context: Arc<Context>,
    pod_events: impl futures::Stream<Item = Arc<Pod>> + Send + 'static,
    term: &Term,
) {
    let (pvcs, pvc_writer) = reflector::store::<PvcMeta>();
    // The reflector runs inside the trigger stream, so it lives exactly as long as the controller.
    let pvc_events = reflector::reflector(
        pvc_writer,
        watcher(
            Api::<PvcMeta>::all(context.client.clone()),
            watcher::Config::default()
                .labels(INSTANCE_ID)
                .any_semantic(),
        ),
    )
    .default_backoff()
    .touched_objects();
    let controller = controller_for::<CloneSet>(&context);
    let (pod_observer, pvc_observer) = (context.clone(), context.clone());
    let pvcs_held = pvcs.clone();
    let shell = Arc::new(Shell {
        context,
        seam: CloneSetSeam { pvcs },
    });
    let controller = controller
        .watches_shared_stream(pod_events, move |pod| {
            observe::pod_event::<CloneSet>(&pod_observer, &pod);
            clonesets_to_sync(&pod)
        })
        .watches_stream(pvc_events, move |pvc| {
            let owner: Vec<ObjectRef<CloneSet>> = controlling(&pvc.metadata).into_iter().collect();
            observe::pvc_event(&pvc_observer, &owner, &pvcs_held, &pvc);
            owner
        });
    term.run(
        COMPONENT,
        controller,
        reconcile::<CloneSetSeam>,
        error_policy::<CloneSetSeam>,
        shell,
    )
    .await;
}

#[cfg(test)]
mod tests;
