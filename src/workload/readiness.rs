//! `markPodNotReady` (OpenKruise `pkg/util/lifecycle`, `pkg/util/podreadiness`): while a pod waits
//! in a lifecycle hook whose `markPodNotReady` is true, its `KruisePodReady` condition holds the
//! lifecycle's key and is False, so kubelet marks the pod not Ready and Services stop sending it
//! traffic before the update or deletion goes on; when it leaves, the key goes and the condition
//! is True again.
//!
//! The condition follows the lifecycle state declaratively ([`wanted_keys`]): every round
//! compares each gated pod's condition with what its state (after the round's own writes) asks
//! and adds the status write that makes them agree — before the pod's other writes, as OpenKruise
//! writes the condition before the label. A gated pod without the condition gets it True (what
//! OpenKruise's pod-readiness controller does), so the gate never keeps a new pod out of service.

use std::collections::BTreeSet;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Pod, PodCondition, PodStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::lifecycle::{self, LifecycleState};
use super::{Action, ListedPod, Plan, PodWrite, Purpose};
use crate::api::cloneset::{Lifecycle, LifecycleHook};
use crate::api::keys;
use crate::inplace::conditions::recompute_ready;
use crate::podmarks::PodView;
use crate::podmarks::kruise_ready::{self, LifecycleKeys};

/// The lifecycle's keys a pod in `state` carries under `hooks`: `preDeleteHook` in
/// `PreparingDelete`, `preUpdateHook` in `PreparingUpdate` and `Updating` (the update itself is
/// the reason the pod was drained), each only when its hook sets `markPodNotReady`.
pub fn wanted_keys(state: &str, hooks: Option<&Lifecycle>) -> LifecycleKeys {
    let marks =
        |hook: Option<&LifecycleHook>| hook.is_some_and(|h| h.mark_pod_not_ready == Some(true));
    let state = LifecycleState::of(state);
    LifecycleKeys {
        pre_delete: state == LifecycleState::PreparingDelete && marks(lifecycle::pre_delete(hooks)),
        pre_update: matches!(
            state,
            LifecycleState::PreparingUpdate | LifecycleState::Updating
        ) && marks(lifecycle::in_place_update(hooks)),
    }
}

/// Whether the inPlaceUpdate hook wants `pod` drained before its update and it is not yet: the
/// in-place start waits for the condition to hold `preUpdateHook` (a pod without the gate cannot
/// be drained this way and is not held).
pub fn must_drain_before_update(pod: &Pod, hooks: Option<&Lifecycle>) -> bool {
    let marks =
        lifecycle::in_place_update(hooks).is_some_and(|h| h.mark_pod_not_ready == Some(true));
    marks && pod.kruise_ready().is_some_and(|m| !m.lifecycle.pre_update)
}

/// `pod` with its `KruisePodReady` condition saying `wanted` (the other writers' keys kept), and
/// `Ready` recomputed when the condition turns False; `None` when the pod has no gate or the
/// condition already says so.
pub fn with_condition(pod: &Pod, wanted: LifecycleKeys, now: Timestamp) -> Option<Pod> {
    if pod.kruise_ready()?.agrees_with(wanted) {
        return None;
    }
    let messages = kruise_ready::with_lifecycle_keys(kruise_ready::condition(pod), wanted);
    let ready = messages.is_empty();
    let had_condition = kruise_ready::condition(pod).is_some();
    let condition = PodCondition {
        type_: keys::KRUISE_POD_READY.to_string(),
        status: if ready {
            keys::CONDITION_TRUE
        } else {
            keys::CONDITION_FALSE
        }
        .to_string(),
        // A condition first made True has no message, as OpenKruise's pod-readiness controller
        // writes it; any later one carries the list (`[]` when empty).
        message: (had_condition || !ready).then(|| kruise_ready::dump(messages)),
        last_transition_time: Some(Time(now)),
        ..Default::default()
    };
    let mut next = pod.clone();
    let conditions = next
        .status
        .get_or_insert_with(PodStatus::default)
        .conditions
        .get_or_insert_with(Vec::new);
    match conditions
        .iter_mut()
        .find(|c| c.type_ == keys::KRUISE_POD_READY)
    {
        Some(existing) => *existing = condition,
        None => conditions.push(condition),
    }
    if !ready {
        // Out of endpoints now rather than at kubelet's next status sync.
        recompute_ready(&mut next, now);
    }
    Some(next)
}

/// The readiness pass over a planned round, which every kind's shell runs after its planner:
/// [`add_condition_writes`], and the pods it needs whole added to the plan's.
pub fn follow_lifecycle<S, X>(
    plan: &mut Plan<S, X>,
    pods: &[ListedPod],
    hooks: Option<&Lifecycle>,
    now: Timestamp,
) {
    let whole = add_condition_writes(&mut plan.actions, pods, hooks, now);
    if !whole.is_empty() {
        plan.needs_whole.extend(whole);
        plan.needs_whole.sort();
        plan.needs_whole.dedup();
    }
}

/// Makes every gated pod's condition agree with its lifecycle state after the round: a status
/// write goes first in each pod write whose condition must change, and a status-only write is
/// added for each other pod that needs one. Pods created, deleted or fixed this round are left
/// to the next. Returns the pods that need one but were given as summaries only (to plan again
/// with them whole).
pub fn add_condition_writes(
    actions: &mut Vec<Action>,
    pods: &[ListedPod],
    hooks: Option<&Lifecycle>,
    now: Timestamp,
) -> Vec<String> {
    let mut touched = BTreeSet::new();
    for action in actions.iter_mut() {
        match action {
            Action::WritePod { before, writes, .. } => {
                touched.insert(before.name().to_string());
                let state_after = writes.iter().rev().find(|w| !w.status).map_or_else(
                    || lifecycle::state(&**before).to_string(),
                    |w| lifecycle::state(&*w.pod).to_string(),
                );
                let Some(marked) = with_condition(before, wanted_keys(&state_after, hooks), now)
                else {
                    continue;
                };
                let carried = carried_conditions(&marked);
                for write in writes.iter_mut() {
                    let carried = carried.clone();
                    let pod =
                        std::mem::replace(&mut write.pod, super::PodAfter::built(Pod::default()));
                    write.pod = pod.then(move |p| carry_conditions(p, &carried));
                }
                writes.insert(0, PodWrite::status(marked));
            }
            Action::DeletePod { name } => {
                touched.insert(name.clone());
            }
            Action::UpdatePod { before, .. } => {
                touched.insert(before.name().to_string());
            }
            _ => {}
        }
    }
    let mut needs_whole = Vec::new();
    for listed in pods {
        if touched.contains(listed.name()) || !listed.is_active() {
            continue;
        }
        let Some(marks) = listed.kruise_ready() else {
            continue;
        };
        let wanted = wanted_keys(lifecycle::state(listed), hooks);
        if marks.agrees_with(wanted) {
            continue;
        }
        let Some(whole) = &listed.whole else {
            needs_whole.push(listed.name().to_string());
            continue;
        };
        if let Some(marked) = with_condition(whole, wanted, now) {
            actions.push(Action::WritePod {
                before: whole.clone(),
                writes: vec![PodWrite::status(marked)],
                purpose: Purpose::Lifecycle,
            });
        }
    }
    needs_whole.sort();
    needs_whole
}

/// The conditions a status write of the readiness sets (`KruisePodReady`, `Ready`).
fn carried_conditions(pod: &Pod) -> Vec<PodCondition> {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .into_iter()
        .flatten()
        .filter(|c| c.type_ == keys::KRUISE_POD_READY || c.type_ == keys::CONDITION_READY)
        .cloned()
        .collect()
}

/// The later writes of the pod start from the status write's pod: they carry its conditions, so
/// that their own patches do not undo them.
fn carry_conditions(pod: &mut Pod, carried: &[PodCondition]) {
    let conditions = pod
        .status
        .get_or_insert_with(PodStatus::default)
        .conditions
        .get_or_insert_with(Vec::new);
    for condition in carried {
        match conditions.iter_mut().find(|c| c.type_ == condition.type_) {
            Some(existing) => *existing = condition.clone(),
            None => conditions.push(condition.clone()),
        }
    }
}

#[cfg(test)]
mod tests;
