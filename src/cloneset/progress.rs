//! The `Progressing` condition of a CloneSet (OpenKruise HEAD `calculateProgressingStatus`):
//! what rollout dashboards and Argo CD read to tell a rollout that goes on from one that is stuck.
//!
//! Only with `progressDeadlineSeconds` set (and not `2147483647`, Kubernetes' "no deadline");
//! otherwise the condition is removed. The first of these that holds wins:
//!
//! 1. available: every pod at the update revision and available → True `CloneSetAvailable`;
//! 2. `updateStrategy.paused` → True `CloneSetPaused`;
//! 3. the partition's share is updated and available → True `ProgressPartitionAvailable`;
//! 4. the deadline passed → False `ProgressDeadlineExceeded`;
//! 5. otherwise → True `CloneSetUpdated`, and the round asks to look again at the deadline.
//!
//! The deadline runs from the moment the condition became `CloneSetUpdated`, so time spent
//! available, paused or partition-available never counts, and it stays exceeded until one of 1–3
//! holds or a new update revision starts another rollout. (OpenKruise HEAD's controller measures
//! from whatever condition was there before, so a CloneSet available for longer than the deadline
//! turns `ProgressDeadlineExceeded` the moment it is scaled up or resumed; its own tests and the
//! field's documentation describe the behaviour here.)

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use crate::api::cloneset::{CloneSetCondition, CloneSetSpec, CloneSetStatus};

pub const PROGRESSING: &str = "Progressing";
/// The reasons of the `Progressing` condition, OpenKruise's words.
pub const AVAILABLE: &str = "CloneSetAvailable";
pub const PAUSED: &str = "CloneSetPaused";
pub const PARTITION_AVAILABLE: &str = "ProgressPartitionAvailable";
pub const DEADLINE_EXCEEDED: &str = "ProgressDeadlineExceeded";
pub const UPDATED: &str = "CloneSetUpdated";

/// `progressDeadlineSeconds` meaning "no deadline" (Kubernetes' and OpenKruise's convention).
const NO_DEADLINE: i32 = i32::MAX;

/// The deadline in seconds, if the CloneSet has one.
pub fn deadline_seconds(spec: &CloneSetSpec) -> Option<i32> {
    spec.progress_deadline_seconds.filter(|s| *s != NO_DEADLINE)
}

/// The `Progressing` condition of `status`, if any.
pub fn condition(status: &CloneSetStatus) -> Option<&CloneSetCondition> {
    status
        .conditions
        .iter()
        .flatten()
        .find(|c| c.type_ == PROGRESSING)
}

/// Sets (or removes) the `Progressing` condition of `status`, the round's new status whose
/// conditions start as the stored ones. `previous_update_revision`: the update revision the stored
/// status names. Returns when to look again for the deadline, if it is still ahead.
pub fn apply(
    status: &mut CloneSetStatus,
    spec: &CloneSetSpec,
    previous_update_revision: Option<&str>,
    now: Timestamp,
) -> Option<Duration> {
    let Some(seconds) = deadline_seconds(spec) else {
        remove(status);
        return None;
    };
    let replicas = spec.replicas.unwrap_or(1);
    let existing = condition(status);
    let same_rollout = previous_update_revision == status.update_revision.as_deref();
    let (true_, reason, message) = if available(status, replicas) {
        (true, AVAILABLE, "CloneSet is available".to_string())
    } else if spec.update_strategy.paused == Some(true) {
        (true, PAUSED, "CloneSet is paused".to_string())
    } else if partition_available(status, replicas) {
        (
            true,
            PARTITION_AVAILABLE,
            "CloneSet has been paused due to partition ready".to_string(),
        )
    } else if exceeded(existing, seconds, same_rollout, now) {
        let revision = status.update_revision.as_deref().unwrap_or("");
        (
            false,
            DEADLINE_EXCEEDED,
            format!("CloneSet revision {revision} has timed out progressing"),
        )
    } else {
        (true, UPDATED, "CloneSet is progressing".to_string())
    };
    set(status, true_, reason, message, now);
    if reason != UPDATED {
        return None;
    }
    let since = condition(status).and_then(started)?;
    requeue_at(since, seconds, now)
}

/// Whether the `Progressing` condition's status or reason differs between two statuses: such a
/// change is worth a status write on its own (OpenKruise's `hasProgressingConditionChanged`).
pub fn changed(previous: Option<&CloneSetStatus>, next: &CloneSetStatus) -> bool {
    let key = |c: &CloneSetCondition| (c.status.clone(), c.reason.clone());
    previous.and_then(condition).map(key) != condition(next).map(key)
}

fn available(status: &CloneSetStatus, replicas: i32) -> bool {
    status.current_revision == status.update_revision
        && status.replicas == replicas
        && status.updated_replicas == replicas
        && status.updated_available_replicas == replicas
}

/// A partition is set (fewer pods expected at the update revision than replicas) and that many
/// are updated and available.
fn partition_available(status: &CloneSetStatus, replicas: i32) -> bool {
    let expected = status.expected_updated_replicas.unwrap_or(replicas);
    expected < replicas && expected <= status.updated_available_replicas
}

/// When the deadline of `existing` started: its lastUpdateTime (a condition written without one
/// counts from its transition).
fn started(existing: &CloneSetCondition) -> Option<Timestamp> {
    existing
        .last_update_time
        .as_ref()
        .or(existing.last_transition_time.as_ref())
        .map(|t| t.0)
}

fn exceeded(
    existing: Option<&CloneSetCondition>,
    seconds: i32,
    same_rollout: bool,
    now: Timestamp,
) -> bool {
    let Some(existing) = existing else {
        return false;
    };
    match existing.reason.as_deref() {
        Some(DEADLINE_EXCEEDED) => same_rollout,
        // A condition without any time cannot say when progress started: timed out.
        Some(UPDATED) => started(existing).is_none_or(|since| {
            since
                .checked_add(SignedDuration::from_secs(seconds.into()))
                .is_ok_and(|deadline| deadline < now)
        }),
        _ => false,
    }
}

/// OpenKruise's `getRequeueSecondsFromCondition`: at the deadline, plus a second against clock
/// skew when it is a second or more away.
fn requeue_at(since: Timestamp, seconds: i32, now: Timestamp) -> Option<Duration> {
    let deadline = since
        .checked_add(SignedDuration::from_secs(seconds.into()))
        .ok()?;
    let after = Duration::try_from(deadline.duration_since(now)).unwrap_or(Duration::ZERO);
    Some(if after < Duration::from_secs(1) {
        after.max(Duration::from_millis(1))
    } else {
        after + Duration::from_secs(1)
    })
}

/// OpenKruise's `SetCloneSetCondition`: the same status and reason keep the condition as it is
/// (message and times included); the same status keeps its transition time; the new condition
/// goes last.
fn set(status: &mut CloneSetStatus, true_: bool, reason: &str, message: String, now: Timestamp) {
    let state = if true_ { "True" } else { "False" };
    let existing = condition(status);
    if existing.is_some_and(|c| c.status == state && c.reason.as_deref() == Some(reason)) {
        return;
    }
    let transition = existing
        .filter(|c| c.status == state)
        .and_then(|c| c.last_transition_time.clone())
        .unwrap_or(Time(now));
    remove(status);
    status
        .conditions
        .get_or_insert_with(Vec::new)
        .push(CloneSetCondition {
            type_: PROGRESSING.into(),
            status: state.into(),
            last_update_time: Some(Time(now)),
            last_transition_time: Some(transition),
            reason: Some(reason.into()),
            message: Some(message),
        });
}

fn remove(status: &mut CloneSetStatus) {
    if let Some(conditions) = &mut status.conditions {
        conditions.retain(|c| c.type_ != PROGRESSING);
        if conditions.is_empty() {
            status.conditions = None;
        }
    }
}

#[cfg(test)]
mod tests;
