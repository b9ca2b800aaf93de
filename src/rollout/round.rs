//! What the controller does in one round, decided from the [`RoundPlan`] and the engine's progress
//! on the matched pods: the status to write, the pods to drive, mark, reset and upgrade (the
//! budget pods between two batches hold already taken off), the events to record and when to look
//! again. The controller executes this and decides nothing.

use std::sync::Arc;
use std::time::Duration;

use kube::runtime::events::EventType;

use super::engine::{between_batches, engine_in_flight, engine_revision};
use super::plan::RoundPlan;
use super::upgrade::PodUpgrade;
use crate::api::{SidecarSet, SidecarSetStatus};
use crate::podmarks::PodView;

/// When to look again after a round wrote to pods, in case the cache lags behind the writes.
pub const IN_FLIGHT_REQUEUE: Duration = Duration::from_secs(5);
/// When to look again before the shared stores have listed everything once (a store looks empty
/// before its first full list, which would report zero matched pods).
pub const NOT_SYNCED_REQUEUE: Duration = Duration::from_secs(1);
/// When to look again after a round failed.
pub const FAILED_REQUEUE: Duration = Duration::from_secs(10);

/// One round's work. Pods are named by their index in the matched-pod slice.
#[derive(Debug, Clone, PartialEq)]
pub struct RoundActions {
    /// The status to write, `None` when the stored one already says it.
    pub status: Option<SidecarSetStatus>,
    /// The revision this SidecarSet's multi-batch upgrades record (see [`engine_revision`]).
    pub revision: Option<String>,
    /// Pods with an in-place update of `revision` in flight: the engine moves them on.
    pub drive: Vec<usize>,
    /// Pods that need a recreate: their `SidecarSetUpgradable` condition goes False.
    pub not_upgradable: Vec<usize>,
    /// Pods whose idle hot-upgrade copies go back to the empty image.
    pub reset_idle: Vec<usize>,
    /// Pods to upgrade now, in upgrade order.
    pub upgrade: Vec<usize>,
    /// This round writes to pods (upgrades or resets): the next one looks at their outcome.
    acting: bool,
}

impl RoundActions {
    /// When to look again, `None` to wait for a change. `engine_going`: some driven pod's
    /// update is still in flight after this round's steps.
    ///
    /// A rollout that waits on its pods (not yet ready, held by the budget, in need of a
    /// recreate) waits for a change: every change of a pod it selects reconciles it again. A
    /// timer there would look at every such set forever while nothing changes.
    pub fn requeue_after(&self, engine_going: bool) -> Option<Duration> {
        (self.acting || engine_going).then_some(IN_FLIGHT_REQUEUE)
    }
}

/// Turns the plan of a round over `matched` into the round's work.
pub fn round_actions<P: PodView>(
    set: &SidecarSet,
    matched: &[Arc<P>],
    plan: RoundPlan,
) -> RoundActions {
    let revision = engine_revision(set);
    let (drive, held) = match revision.as_deref() {
        None => (Vec::new(), 0),
        Some(revision) => {
            let drive = (0..matched.len())
                .filter(|&i| engine_in_flight(matched[i].as_ref(), revision))
                .collect();
            let held = matched
                .iter()
                .zip(&plan.facts)
                .filter(|(pod, f)| f.available() && between_batches(pod.as_ref(), revision))
                .count();
            (drive, held)
        }
    };
    let facts = &plan.facts;
    let upgrade = hold_budget_for_batches(
        &plan.upgrade,
        |i| facts.get(i).is_some_and(|f| f.ready),
        held,
    );
    let acting = !upgrade.is_empty() || !plan.reset_idle.is_empty();
    RoundActions {
        status: (set.status.as_ref() != Some(&plan.status)).then(|| plan.status.clone()),
        revision,
        drive,
        not_upgradable: plan.not_upgradable,
        reset_idle: plan.reset_idle,
        upgrade,
        acting,
    }
}

/// `plan_round` counts a pod between two batches as available (its later sidecars still run the
/// old image, consistent and ready), yet the next batch takes it down again: such pods keep
/// holding budget. Drops the last `held` ready candidates; not-ready candidates cost nothing.
pub fn hold_budget_for_batches(
    upgrade: &[usize],
    ready: impl Fn(usize) -> bool,
    held: usize,
) -> Vec<usize> {
    let ready_count = upgrade.iter().filter(|i| ready(**i)).count();
    let mut allowance = ready_count.saturating_sub(held);
    upgrade
        .iter()
        .copied()
        .filter(|&i| {
            if !ready(i) {
                return true;
            }
            let take = allowance > 0;
            allowance = allowance.saturating_sub(1);
            take
        })
        .collect()
}

/// What an event is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subject {
    /// The pod the round wrote to.
    Pod,
    /// The SidecarSet itself.
    SidecarSet,
}

/// An event the round records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedEvent {
    pub about: Subject,
    pub type_: EventType,
    pub reason: &'static str,
    pub note: String,
    pub action: &'static str,
}

impl PlannedEvent {
    fn upgrade(about: Subject, type_: EventType, reason: &'static str, note: String) -> Self {
        PlannedEvent {
            about,
            type_,
            reason,
            note,
            action: "Upgrade",
        }
    }
}

/// The changes an upgrade makes, `container=image` each.
pub fn image_changes(upgrade: &PodUpgrade) -> Vec<String> {
    upgrade
        .batches
        .iter()
        .flatten()
        .map(|c| format!("{}={}", c.container, c.image))
        .collect()
}

/// The event of a pod whose sidecars were upgraded (or whose first batch was started).
pub fn upgraded_event(set: &SidecarSet, upgrade: &PodUpgrade) -> PlannedEvent {
    let note = format!(
        "sidecarset {} upgrades {}",
        set.name(),
        image_changes(upgrade).join(", ")
    );
    PlannedEvent::upgrade(Subject::Pod, EventType::Normal, "SidecarSetUpgrade", note)
}

/// The event of a pod whose idle hot-upgrade copies went back to the empty image: OpenKruise's
/// reason and text.
pub fn idle_reset_event() -> PlannedEvent {
    PlannedEvent::upgrade(
        Subject::Pod,
        EventType::Normal,
        "ResetContainerSucceed",
        "reset sidecar container image empty successfully".to_string(),
    )
}

/// The event of a pod whose idle hot-upgrade copies could not be reset, with the write's error:
/// OpenKruise's reason and text.
pub fn idle_reset_failed_event(error: &str) -> PlannedEvent {
    PlannedEvent::upgrade(
        Subject::Pod,
        EventType::Warning,
        "ResetContainerFailed",
        format!("reset sidecar container image empty failed: {error}"),
    )
}

/// The events of a pod newly marked not upgradable (`pod`: its `namespace/name`): one on the
/// pod, one on the SidecarSet.
pub fn not_upgradable_events(set: &SidecarSet, pod: &str) -> [PlannedEvent; 2] {
    let on_pod = format!(
        "sidecarset {} changed more than images; the pod must be recreated to get it",
        set.name()
    );
    let on_set = format!("pod {pod} cannot be upgraded in place");
    let warning =
        |about, note| PlannedEvent::upgrade(about, EventType::Warning, "NotUpgradablePods", note);
    [
        warning(Subject::Pod, on_pod),
        warning(Subject::SidecarSet, on_set),
    ]
}

#[cfg(test)]
mod tests;
