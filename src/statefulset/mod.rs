//! The Advanced StatefulSet controller's pure core (OpenKruise `pkg/controller/statefulset`):
//! given snapshots of a set, the pods it owns, the PVCs of the namespace, its
//! ControllerRevisions and the time, the writes of one reconcile. No I/O, no clock: the shell
//! lists, calls [`plan`] and sends what it returns, in order, stopping at the first failure.
//!
//! - [`ordinals`]: the replica range, `reserveOrdinals`, which pod is in which slot;
//! - [`pod`]: what a round reads of each pod ([`pod::StatefulPodFacts`]);
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

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::PersistentVolumeClaim;

use crate::api::statefulset::{StatefulSet, StatefulSetStatus};
use crate::workload::Workload;
pub use crate::workload::{Action, Event, ListedPod, PlanError, PodWrite, Purpose, PvcFix};
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

/// The result of one round.
pub type Plan = crate::workload::Plan<StatefulSetStatus>;

impl From<TooManySlots> for PlanError {
    fn from(error: TooManySlots) -> Self {
        PlanError::Unplannable(error.to_string())
    }
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
