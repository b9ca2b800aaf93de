//! The Advanced StatefulSet controller's pure core (OpenKruise `pkg/controller/statefulset`):
//! given snapshots of a set, the pods it owns, the PVCs of the namespace, its
//! ControllerRevisions and the time, the writes of one reconcile. No I/O, no clock: the shell
//! lists, calls [`plan`] and sends what it returns, in order, stopping at the first failure.
//!
//! - [`ordinals`]: the replica range, `reserveOrdinals`, which pod is in which slot;
//! - [`pod`]: what a round reads of each pod ([`pod::PodFacts`]);
//! - [`identity`]: new pods, their revision, identity and storage checks;
//! - [`retention`]: `persistentVolumeClaimRetentionPolicy` as PVC ownerReferences;
//! - [`scale`]: the scale phase (create, delete, fix), monotonic or Parallel;
//! - [`update`]: the rolling update;
//! - [`status`], [`events`].
//!
//! A round runs the scale phase, then, unless it stopped there, the rolling update. Repeated
//! rounds over an unchanged world converge and then write nothing.
//!
//! OpenKruise's update expectations (a rolling update waits until the cache shows the pods it
//! updated in place at the new revision) are the shell's: a round starts only once the cache
//! shows every write of the earlier ones, at its resourceVersion.

pub mod events;
pub mod identity;
pub mod ordinals;
pub mod pod;
pub mod retention;
mod round;
mod round_claims;
pub mod scale;
pub mod status;
pub mod update;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

use crate::api::statefulset::{StatefulSet, StatefulSetStatus};
use crate::workload::Workload;
use crate::workload::revision::RevisionError;
pub use crate::workload::{Event, ListedPod, PodWrite, Purpose};
use ordinals::TooManySlots;

/// The PVCs of the set's namespace, by name (the shell's cache).
pub trait Claims {
    fn get(&self, name: &str) -> Option<Arc<PersistentVolumeClaim>>;
}

impl Claims for BTreeMap<String, Arc<PersistentVolumeClaim>> {
    fn get(&self, name: &str) -> Option<Arc<PersistentVolumeClaim>> {
        BTreeMap::get(self, name).cloned()
    }
}

/// What one reconcile sees.
pub struct Snapshot<'a> {
    pub set: &'a StatefulSet,
    /// The pods the set controls (claimed), in any state.
    pub pods: &'a [ListedPod],
    pub claims: &'a dyn Claims,
    /// The set's revisions in history order (`workload::revision::sort_history`); holds the
    /// update revision.
    pub history: &'a [ControllerRevision],
    pub update_revision: &'a str,
    pub collision_count: i32,
    pub now: Timestamp,
}

/// For which pod a claim is created or its owners rewritten, and so what a failure means
/// (OpenKruise reports each path its own way).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaimFix {
    /// A pod created this round (`CreateStatefulPod`): the pod's `FailedCreate` (creation) or
    /// `FailedUpdate` (owners) event and condition `FailedCreatePod`.
    NewPod,
    /// A pending pod's claims (`createMissingPersistentVolumeClaims`): the round's error, and a
    /// `FailedUpdate` event when the owners failed.
    Pending,
    /// With the pod's identity (`UpdateStatefulPod`): `FailedUpdate` and condition
    /// `FailedUpdatePod`.
    Identity,
    /// A condemned pod's claims: the round's error only.
    Condemned,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// A claim of `pod` that does not exist yet (an AlreadyExists answer counts as done).
    CreateClaim {
        claim: Box<PersistentVolumeClaim>,
        pod: String,
        when: ClaimFix,
    },
    CreatePod {
        pod: Box<Pod>,
        revision: String,
    },
    /// A claim's ownerReferences rewritten (PUT of the claim as cached, guarded by its
    /// resourceVersion).
    UpdateClaim {
        before: Arc<PersistentVolumeClaim>,
        owner_references: Vec<OwnerReference>,
        pod: String,
        when: ClaimFix,
    },
    DeletePod {
        name: String,
    },
    /// A write of the in-place engine or of the lifecycle state (`Refresh`, `Lifecycle`,
    /// `ScaleLifecycle` for `PreparingDelete`, `InPlace`).
    WritePod {
        /// The pod as listed: the writes are guarded by its resourceVersion.
        before: Arc<Pod>,
        writes: Vec<PodWrite>,
        purpose: Purpose,
    },
    /// `UpdateStatefulPod`: the identity labels and volumes fixed (`after` equals `before` when
    /// only the claims' owners needed a fix): event `SuccessfulUpdate` either way.
    UpdatePod {
        before: Arc<Pod>,
        after: Box<Pod>,
    },
    Event(Event),
}

impl From<crate::workload::Action> for Action {
    /// The in-place steps' actions (writes and events) as the set's.
    fn from(action: crate::workload::Action) -> Action {
        use crate::workload::Action as Core;
        match action {
            Core::CreatePod { pod, revision } => Action::CreatePod { pod, revision },
            Core::DeletePod { name } => Action::DeletePod { name },
            Core::WritePod {
                before,
                writes,
                purpose,
            } => Action::WritePod {
                before,
                writes,
                purpose,
            },
            Core::Event(event) => Action::Event(event),
        }
    }
}

/// The result of one round.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub actions: Vec<Action>,
    pub status: StatefulSetStatus,
    /// Write `status` (it differs from the set's in what OpenKruise compares).
    pub write_status: bool,
    /// Revisions beyond `revisionHistoryLimit`.
    pub revisions_to_delete: Vec<String>,
    /// The round's error, after its actions and the status: retried with backoff.
    pub error: Option<String>,
    pub requeue_after: Option<Duration>,
    /// Pods the round acts on that it was given as summaries only, by name, sorted. Unless it is
    /// empty the plan is not to be sent: plan again with these pods whole.
    pub needs_whole: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error(transparent)]
    Revision(#[from] RevisionError),
    #[error("update revision {0} is not in the StatefulSet's history")]
    MissingUpdateRevision(String),
    #[error(transparent)]
    TooManySlots(#[from] TooManySlots),
}

/// Kubernetes timestamps: seconds, UTC.
pub fn rfc3339(now: Timestamp) -> String {
    crate::workload::rfc3339(now)
}

/// One reconcile.
pub fn plan(snapshot: &Snapshot<'_>) -> Result<Plan, PlanError> {
    round::plan(snapshot)
}

/// Revisions of `history` to delete: the oldest of those that are neither `live` nor worn by a
/// pod, until `revisionHistoryLimit` of them remain (`truncateHistory`).
fn truncate(
    set: &StatefulSet,
    history: &[ControllerRevision],
    live: [&str; 2],
    pods: &[ListedPod],
) -> Vec<String> {
    let limit = usize::try_from(set.revision_history_limit()).unwrap_or(0);
    if history.len() <= limit {
        return Vec::new();
    }
    let labels: Vec<&str> = pods
        .iter()
        .filter_map(|p| crate::workload::pod::label(p, crate::api::keys::CONTROLLER_REVISION_HASH))
        .collect();
    StatefulSet::REVISIONS
        .history_to_truncate(history, &live, &labels, limit)
        .into_iter()
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests;
