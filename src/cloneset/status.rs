//! `status` of a CloneSet (OpenKruise `cloneset_status.go`), counted over the active pods listed
//! at the start of the round.

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::progress;
use crate::api::cloneset::CloneSetStatus;
use crate::workload::facts::PodFacts;
use crate::workload::status::{self as conditions, selector_string, set_condition};

/// Everything the status is computed from.
pub struct StatusInput<'a> {
    pub generation: Option<i64>,
    pub replicas: i64,
    pub partition: i64,
    /// The active pods (readiness and availability taken with `minReadySeconds` and the time).
    pub active: &'a [PodFacts],
    pub current_revision: &'a str,
    pub update_revision: &'a str,
    pub collision_count: i32,
    pub selector: Option<&'a LabelSelector>,
    pub previous: Option<&'a CloneSetStatus>,
    /// `(type, message)` of this round's failure, if any.
    pub failure: Option<(&'a str, &'a str)>,
    pub now: Timestamp,
}

pub fn compute(input: &StatusInput<'_>) -> CloneSetStatus {
    let count = |f: fn(&PodFacts) -> bool| input.active.iter().filter(|p| f(p)).count() as i32;
    let updated = |p: &PodFacts| p.at_update_revision;
    let replicas = input.active.len() as i32;
    let updated_replicas = count(updated);
    let all_updated = updated_replicas == replicas && i64::from(replicas) == input.replicas;
    let mut conditions = input
        .previous
        .and_then(|s| s.conditions.clone())
        .unwrap_or_default();
    if let Some((kind, message)) = input.failure {
        set_condition(&mut conditions, kind, message, input.now);
    }
    CloneSetStatus {
        observed_generation: input.generation,
        replicas,
        ready_replicas: count(|p| p.ready),
        available_replicas: count(|p| p.available),
        updated_replicas,
        updated_ready_replicas: count(|p| p.at_update_revision && p.ready),
        updated_available_replicas: count(|p| p.at_update_revision && p.available),
        expected_updated_replicas: Some((input.replicas - input.partition).max(0) as i32),
        update_revision: Some(input.update_revision.to_string()),
        current_revision: Some(if all_updated {
            input.update_revision.to_string()
        } else {
            input.current_revision.to_string()
        }),
        collision_count: Some(input.collision_count),
        conditions: (!conditions.is_empty()).then_some(conditions),
        label_selector: input.selector.map(selector_string),
    }
}

/// Records a failure of the round (`FailedScale`, `FailedUpdate`) in `status`, as the planner
/// does for its own; the shell uses it for the writes that failed.
pub fn record_failure(status: &mut CloneSetStatus, kind: &str, message: &str, now: Timestamp) {
    conditions::record_failure(&mut status.conditions, kind, message, now);
}

/// Whether the new status is worth a write (OpenKruise's `inconsistentStatus`): observedGeneration
/// increased, or a counter, a revision, the label selector or the `Progressing` condition's status
/// or reason differs. The other conditions and `collisionCount` go along with such a write but are
/// never written on their own, so a failure repeated every round costs no write.
pub fn changed(previous: Option<&CloneSetStatus>, next: &CloneSetStatus) -> bool {
    let none = CloneSetStatus::default();
    let old = previous.unwrap_or(&none);
    next.observed_generation.unwrap_or(0) > old.observed_generation.unwrap_or(0)
        || next.replicas != old.replicas
        || next.ready_replicas != old.ready_replicas
        || next.available_replicas != old.available_replicas
        || next.updated_replicas != old.updated_replicas
        || next.updated_ready_replicas != old.updated_ready_replicas
        || next.updated_available_replicas != old.updated_available_replicas
        || next.expected_updated_replicas != old.expected_updated_replicas
        || next.update_revision != old.update_revision
        || next.current_revision != old.current_revision
        || next.label_selector != old.label_selector
        || progress::changed(previous, next)
}

#[cfg(test)]
mod tests;
