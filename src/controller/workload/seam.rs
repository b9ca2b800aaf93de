//! What a workload kind brings to the one shell ([`Seam`]): everything that differs between the
//! CloneSet, the Advanced StatefulSet and the Advanced DaemonSet, and nothing else; and the
//! vocabulary the seam and the shell share (what a round observed, what its sending met). A
//! fourth pod-owning kind needs its planner and its seam.

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use kube::Resource;

use super::{Kind, PvcCache};
use crate::api::cloneset::Lifecycle;
use crate::workload::events::{Failure, Wording};
use crate::workload::pvc::HandOver;
use crate::workload::{ListedPod, PlanError};

/// A plan of the kind of seam `S`.
pub type Plan<S> = crate::workload::Plan<<S as Seam>::Status, <S as Seam>::Extra>;

/// Which pods a round lists for the claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listing {
    /// The pods naming the workload in an ownerReference (OpenKruise lists a CloneSet's by its
    /// owner index: a pod without the reference is never adopted).
    Owned,
    /// Those, and the active pods of the namespace that nobody controls and the selector
    /// selects: upstream's `ClaimPods` over every pod, which adopts such orphans.
    OwnedAndOrphans,
}

/// In which order a round's actions go, and what a failure does to the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SendPolicy {
    /// Pod creations first, in slow-start batches (1, 2, 4, …; a batch with a failure stops the
    /// rest), then the other actions in plan order; `false`: every action in plan order.
    pub creations_first: bool,
    /// The round stops at its first conflict or failure, and the failure is its error
    /// (OpenKruise's StatefulSet returns there); otherwise the round goes on.
    pub stop_at_first_failure: bool,
    /// A run of deletions goes at once (upstream's DaemonSet deletes in parallel).
    pub parallel_deletes: bool,
}

/// How a kind writes its status.
#[derive(Debug, Clone)]
pub enum StatusWrite<K> {
    /// A merge patch of the status subresource with this `status`.
    Merge(serde_json::Value),
    /// A PUT of the status subresource: the object as observed (its resourceVersion guards the
    /// write) with the round's status.
    Replace(Box<K>),
}

/// What a round observed before planning, besides the pods.
pub struct Observed {
    /// Its revisions in history order, the update revision among them.
    pub history: Vec<ControllerRevision>,
    pub update_revision: String,
    pub collision_count: i32,
    pub now: Timestamp,
}

/// The PVC side of a plan besides its actions (the CloneSet's): created before each new pod,
/// deleted once a pod's deletion is accepted, and its clean-up before the pods.
#[derive(Debug, Clone, Copy)]
pub struct PvcWrites<'p> {
    /// New pod name → the PVCs to create before it (those that do not exist yet).
    pub create: &'p BTreeMap<String, Vec<PersistentVolumeClaim>>,
    /// Pod name → the PVCs to delete once that pod's deletion is accepted.
    pub delete_with_pod: &'p BTreeMap<String, Vec<String>>,
    /// PVCs handed to their finished pods, before the pod actions.
    pub hand_over: &'p [HandOver],
    /// PVCs of no pod, deleted before the pod actions.
    pub clean_up: &'p [String],
}

static NO_CREATES: BTreeMap<String, Vec<PersistentVolumeClaim>> = BTreeMap::new();
static NO_DELETES: BTreeMap<String, Vec<String>> = BTreeMap::new();

impl PvcWrites<'static> {
    /// A plan without PVC writes of this kind.
    pub const NONE: PvcWrites<'static> = PvcWrites {
        create: &NO_CREATES,
        delete_with_pod: &NO_DELETES,
        hand_over: &[],
        clean_up: &[],
    };
}

/// What sending a plan met.
#[derive(Debug, Default)]
pub struct Executed {
    /// Some write met a newer object (409).
    pub conflicted: bool,
    /// The first refused request the kind counts as the round's failure.
    pub failure: Option<Failure>,
}

impl Executed {
    pub fn stopped(&self, policy: SendPolicy) -> bool {
        policy.stop_at_first_failure && (self.conflicted || self.failure.is_some())
    }
}

/// A workload kind as the shell runs it.
pub trait Seam: Sized + Send + Sync + 'static {
    /// The workload.
    type Set: Kind + Resource<Scope = NamespaceResourceScope>;
    /// Its status, as the planner computes it.
    type Status: Send + Sync;
    /// What only its planner plans ([`crate::workload::Plan::extra`]).
    type Extra: Send + Sync;
    /// The PVCs it reads, or [`super::NoPvcs`].
    type Pvcs: PvcCache;

    /// The component its events carry, as Kruise names the controller.
    const COMPONENT: &'static str;
    /// How its rounds are sent.
    const SEND: SendPolicy;
    /// Its events' words, and what a refused request means for its round.
    const WORDING: &'static dyn Wording;
    /// The reason of the warning that reports the plan's error (`None`: the plan's error is
    /// reported by the planner's own events).
    const PLAN_ERROR_REASON: Option<&'static str>;
    /// Which pods its rounds list.
    const LISTING: Listing;

    /// Its PVC cache.
    fn pvcs(&self) -> &Self::Pvcs;

    /// Whether its own caches (beyond pods and PVCs) have listed everything.
    fn ready(&self) -> bool {
        true
    }

    /// Whether the listed pod `pod` may belong to `set` at all (OpenKruise's StatefulSet claims
    /// only pods named `<set>-<ordinal>`).
    fn is_member(_set: &Self::Set, _pod: &str) -> bool {
        true
    }

    /// The pods to read whole before the first plan (the DaemonSet's pods not yet bound name
    /// their node only in their affinity, which the summary does not keep).
    fn read_first(_pods: &[ListedPod]) -> Vec<String> {
        Vec::new()
    }

    /// Its lifecycle hooks (`spec.lifecycle`), which `markPodNotReady` reads.
    fn hooks(set: &Self::Set) -> Option<&Lifecycle>;

    /// The planner: one round over the claimed `pods`.
    fn plan(
        &self,
        set: &Self::Set,
        observed: &Observed,
        pods: &[ListedPod],
    ) -> Result<Plan<Self>, PlanError>;

    /// The PVCs created and deleted with the plan's pods.
    fn pvc_writes(_plan: &Plan<Self>) -> PvcWrites<'_> {
        PvcWrites::NONE
    }

    /// Folds what sending met into the plan (a failure's condition into the status, the
    /// DaemonSet's backoff); `true` when the status is to be written even if the plan does not
    /// say so.
    fn after_send(
        &self,
        _set: &Self::Set,
        _plan: &mut Plan<Self>,
        _executed: &Executed,
        _now: Timestamp,
    ) -> bool {
        false
    }

    /// How the round's status is written.
    fn status_write(set: &Self::Set, status: &Self::Status) -> StatusWrite<Self::Set>;

    /// A merge patch of the workload itself, sent after its status (the CloneSet's
    /// `podsToDelete` clean-up).
    fn own_patch(_plan: &Plan<Self>) -> Option<serde_json::Value> {
        None
    }

    /// Whether the rollout is unfinished by the round's status (then the round looks again).
    fn unfinished(set: &Self::Set, status: &Self::Status) -> bool;
}
