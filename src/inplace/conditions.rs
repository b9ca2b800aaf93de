//! The `InPlaceUpdateReady` readiness gate and the pod `Ready` condition it feeds.
//!
//! Kruise recomputes `Ready` itself when it turns the gate False, so that the pod leaves Service
//! endpoints at once instead of whenever kubelet next syncs its status.

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Pod, PodCondition, PodStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use crate::api::keys;
use crate::k8s::pod::has_readiness_gate;

/// Whether the pod lists `InPlaceUpdateReady` among its readiness gates. Pods without it are still
/// updated in place; they just never get the condition.
pub fn has_inplace_readiness_gate(pod: &Pod) -> bool {
    has_readiness_gate(pod, keys::INPLACE_UPDATE_READY)
}

/// The pod condition of the given type, if any.
pub fn pod_condition<'a>(pod: &'a Pod, condition_type: &str) -> Option<&'a PodCondition> {
    pod.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == condition_type)
}

/// The status write that starts an update: `InPlaceUpdateReady=False` and `Ready` recomputed in the
/// same write. `None` when the pod has no gate or the write would change nothing.
pub fn mark_not_ready(pod: &Pod, now: Timestamp) -> Option<Pod> {
    if !has_inplace_readiness_gate(pod) {
        return None;
    }
    let mut next = pod.clone();
    let status = next.status.get_or_insert_with(PodStatus::default);
    set_condition(
        status,
        PodCondition {
            type_: keys::INPLACE_UPDATE_READY.to_string(),
            status: keys::CONDITION_FALSE.to_string(),
            reason: Some(keys::REASON_START_INPLACE_UPDATE.to_string()),
            last_transition_time: Some(Time(now)),
            ..Default::default()
        },
    );
    recompute_ready(&mut next, now);
    // Only the conditions can have changed: comparing them is enough (and far cheaper).
    (conditions(&next) != conditions(pod)).then_some(next)
}

/// Whether [`mark_not_ready`] returns a write, mostly without building it: a gate condition that
/// is not False yet always changes; only one already False needs `Ready` recomputed to tell.
pub fn marks_not_ready(pod: &Pod, now: Timestamp) -> bool {
    if !has_inplace_readiness_gate(pod) {
        return false;
    }
    match pod_condition(pod, keys::INPLACE_UPDATE_READY) {
        Some(gate) if gate.status == keys::CONDITION_FALSE => mark_not_ready(pod, now).is_some(),
        _ => true,
    }
}

fn conditions(pod: &Pod) -> Option<&Vec<PodCondition>> {
    pod.status.as_ref()?.conditions.as_ref()
}

/// The status write that ends an update: `InPlaceUpdateReady=True`. `None` when the pod has no
/// gate or the condition is already True. `Ready` is left to kubelet here.
pub fn mark_ready(pod: &Pod, now: Timestamp) -> Option<Pod> {
    if !has_inplace_readiness_gate(pod) {
        return None;
    }
    if pod_condition(pod, keys::INPLACE_UPDATE_READY)
        .is_some_and(|c| c.status == keys::CONDITION_TRUE)
    {
        return None;
    }
    let mut next = pod.clone();
    set_condition(
        next.status.get_or_insert_with(PodStatus::default),
        PodCondition {
            type_: keys::INPLACE_UPDATE_READY.to_string(),
            status: keys::CONDITION_TRUE.to_string(),
            last_transition_time: Some(Time(now)),
            ..Default::default()
        },
    );
    Some(next)
}

/// Kruise's "set condition": an existing condition of the type is replaced only when its status
/// differs (otherwise its reason, message and time stay); a missing one is appended.
fn set_condition(status: &mut PodStatus, condition: PodCondition) {
    let conditions = status.conditions.get_or_insert_with(Vec::new);
    match conditions.iter_mut().find(|c| c.type_ == condition.type_) {
        Some(existing) if existing.status == condition.status => {}
        Some(existing) => *existing = condition,
        None => conditions.push(condition),
    }
}

/// Recomputes `Ready` from the readiness gates, only when a `Ready` condition exists and
/// `ContainersReady` is True (otherwise kubelet's verdict stands).
pub fn recompute_ready(pod: &mut Pod, now: Timestamp) {
    let containers_ready = pod_condition(pod, keys::CONDITION_CONTAINERS_READY)
        .is_some_and(|c| c.status == keys::CONDITION_TRUE);
    if !containers_ready || pod_condition(pod, keys::CONDITION_READY).is_none() {
        return;
    }
    let messages: Vec<String> = pod
        .spec
        .as_ref()
        .and_then(|s| s.readiness_gates.as_ref())
        .into_iter()
        .flatten()
        .filter_map(|gate| match pod_condition(pod, &gate.condition_type) {
            None => Some(format!(
                "corresponding condition of pod readiness gate {:?} does not exist.",
                gate.condition_type
            )),
            Some(c) if c.status != keys::CONDITION_TRUE => Some(format!(
                "the status of pod readiness gate {:?} is not \"True\", but {}",
                gate.condition_type, c.status
            )),
            Some(_) => None,
        })
        .collect();
    let ready = if messages.is_empty() {
        PodCondition {
            type_: keys::CONDITION_READY.to_string(),
            status: keys::CONDITION_TRUE.to_string(),
            ..Default::default()
        }
    } else {
        PodCondition {
            type_: keys::CONDITION_READY.to_string(),
            status: keys::CONDITION_FALSE.to_string(),
            reason: Some(keys::REASON_READINESS_GATES_NOT_READY.to_string()),
            message: Some(messages.join(", ")),
            ..Default::default()
        }
    };
    if let Some(status) = pod.status.as_mut() {
        update_condition(status, ready, now);
    }
}

/// Kubernetes' `UpdatePodCondition`: the condition replaces the old one whole, keeping the old
/// transition time when the status did not change.
fn update_condition(status: &mut PodStatus, mut condition: PodCondition, now: Timestamp) {
    let conditions = status.conditions.get_or_insert_with(Vec::new);
    condition.last_transition_time = Some(Time(now));
    match conditions.iter_mut().find(|c| c.type_ == condition.type_) {
        Some(existing) => {
            if existing.status == condition.status {
                condition.last_transition_time = existing.last_transition_time.clone();
            }
            *existing = condition;
        }
        None => conditions.push(condition),
    }
}

#[cfg(test)]
mod tests;
