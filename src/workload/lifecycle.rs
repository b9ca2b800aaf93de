//! The lifecycle of a workload's pod (OpenKruise `pkg/util/lifecycle`, `apps/pub`): the state
//! label `lifecycle.apps.kruise.io/state` with its timestamp annotation, the transitions the
//! update step makes by itself, and the hooks (`spec.lifecycle`) through which a user's controller
//! holds a pod in `PreparingDelete` / `PreparingUpdate` by leaving the hook's labels or finalizers
//! on it, lets it go by removing them, and puts them back to let an updated pod return to
//! `Normal`.
//!
//! | state | moves on to | when |
//! |---|---|---|
//! | `PreparingNormal` | `Normal` | the preNormal hook's markers are all on, or (no hook) scheduled |
//! | `PreparingUpdate` | `Updated` / `Normal` | at the update revision |
//! | `Updating` | `Updated` / `Normal` | the in-place update completed |
//! | `Updated` | `Normal` | the inPlaceUpdate hook's markers are all on again (or no hook) |
//!
//! After an update a pod waits in `Updated` until the inPlaceUpdate hook's markers are back.
//! The Advanced StatefulSet's table differs in two places ([`Table::StatefulSet`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;

use super::{Action, PodWrite, Purpose};
use crate::api::cloneset::{Lifecycle, LifecycleHook};
use crate::podmarks::PodView;

/// Pod label: lifecycle state; annotation: when it last changed.
pub const LIFECYCLE_STATE: &str = "lifecycle.apps.kruise.io/state";
pub const LIFECYCLE_TIMESTAMP: &str = "lifecycle.apps.kruise.io/timestamp";

/// Lifecycle states (`lifecycle.apps.kruise.io/state`).
pub const PREPARING_NORMAL: &str = "PreparingNormal";
pub const NORMAL: &str = "Normal";
pub const PREPARING_UPDATE: &str = "PreparingUpdate";
pub const UPDATING: &str = "Updating";
pub const UPDATED: &str = "Updated";
pub const PREPARING_DELETE: &str = "PreparingDelete";

/// `lifecycle.apps.kruise.io/state` as a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LifecycleState {
    /// No label, or an empty one.
    Unset,
    PreparingNormal,
    Normal,
    PreparingUpdate,
    Updating,
    Updated,
    PreparingDelete,
    /// A value the controller does not know.
    Other,
}

impl LifecycleState {
    pub fn of(label: &str) -> LifecycleState {
        match label {
            "" => LifecycleState::Unset,
            PREPARING_NORMAL => LifecycleState::PreparingNormal,
            NORMAL => LifecycleState::Normal,
            PREPARING_UPDATE => LifecycleState::PreparingUpdate,
            UPDATING => LifecycleState::Updating,
            UPDATED => LifecycleState::Updated,
            PREPARING_DELETE => LifecycleState::PreparingDelete,
            _ => LifecycleState::Other,
        }
    }

    /// The states the update step moves on from by itself, once what they wait for is there.
    pub fn moves_on_by_itself(self) -> bool {
        matches!(
            self,
            LifecycleState::PreparingNormal
                | LifecycleState::PreparingUpdate
                | LifecycleState::Updating
                | LifecycleState::Updated
        )
    }

    /// The states from which an in-place update may start (any other refuses it).
    pub fn allows_in_place_update(self) -> bool {
        matches!(
            self,
            LifecycleState::Unset
                | LifecycleState::PreparingNormal
                | LifecycleState::Normal
                | LifecycleState::Updated
                | LifecycleState::PreparingUpdate
                | LifecycleState::Updating
        )
    }
}

/// The pod's state label (`""` without one).
pub fn state<P: PodView + ?Sized>(pod: &P) -> &str {
    pod.labels()
        .and_then(|l| l.get(LIFECYCLE_STATE))
        .map_or("", String::as_str)
}

/// Writes the state label and its timestamp.
pub fn set_lifecycle(pod: &mut Pod, state: &str, now: &str) {
    pod.metadata
        .labels
        .get_or_insert_with(BTreeMap::new)
        .insert(LIFECYCLE_STATE.into(), state.into());
    pod.metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(LIFECYCLE_TIMESTAMP.into(), now.into());
}

/// A write of the state label and its timestamp.
pub fn lifecycle_write(before: &Arc<Pod>, state: &str, now: &str, purpose: Purpose) -> Action {
    let mut after = Pod::clone(before);
    set_lifecycle(&mut after, state, now);
    Action::WritePod {
        before: before.clone(),
        writes: vec![PodWrite::spec(after)],
        purpose,
    }
}

/// Whose transition table a workload's pods follow, where OpenKruise's controllers differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    /// The CloneSet's (and the table above).
    CloneSet,
    /// The Advanced StatefulSet's `refreshPodState`: without a preNormal hook a pod leaves
    /// `PreparingNormal` at once (scheduled or not); with any `spec.lifecycle` an updated pod
    /// waits in `Updated` unless it carries all of the inPlaceUpdate hook's markers, so with
    /// only a preDelete hook it passes through `Updated` for one round.
    StatefulSet,
}

/// The state `p` moves on to by itself now, if any (the table above, as `table` reads it).
/// `at_update_revision`: the pod is at the update revision; `update_completed`: its in-place
/// update has completed (asked only in `Updating`).
pub fn next_state(
    p: &Pod,
    hooks: Option<&Lifecycle>,
    table: Table,
    at_update_revision: bool,
    update_completed: impl FnOnce() -> bool,
) -> Option<&'static str> {
    let update_hook = in_place_update(hooks);
    let after_update = || match (table, update_hook) {
        (_, Some(hook)) if all_hooked(p, hook) => NORMAL,
        (Table::CloneSet, Some(_)) => UPDATED,
        (Table::CloneSet, None) => NORMAL,
        (Table::StatefulSet, _) if hooks.is_some() => UPDATED,
        (Table::StatefulSet, _) => NORMAL,
    };
    match state(p) {
        PREPARING_NORMAL => match pre_normal(hooks) {
            Some(hook) => all_hooked(p, hook).then_some(NORMAL),
            None if table == Table::StatefulSet => Some(NORMAL),
            None => p.scheduled().then_some(NORMAL),
        },
        PREPARING_UPDATE if at_update_revision => Some(after_update()),
        UPDATING if update_completed() => Some(after_update()),
        // Both tables: once the inPlaceUpdate hook (if any) has all its markers back.
        UPDATED => update_hook
            .is_none_or(|hook| all_hooked(p, hook))
            .then_some(NORMAL),
        _ => None,
    }
}

/// The hooks a workload sets.
pub fn pre_delete(hooks: Option<&Lifecycle>) -> Option<&LifecycleHook> {
    hooks?.pre_delete.as_ref()
}

pub fn in_place_update(hooks: Option<&Lifecycle>) -> Option<&LifecycleHook> {
    hooks?.in_place_update.as_ref()
}

pub fn pre_normal(hooks: Option<&Lifecycle>) -> Option<&LifecycleHook> {
    hooks?.pre_normal.as_ref()
}

fn has_label(pod: &Pod, key: &str, value: &str) -> bool {
    pod.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(key))
        .is_some_and(|v| v == value)
}

fn has_finalizer(pod: &Pod, finalizer: &str) -> bool {
    pod.metadata
        .finalizers
        .iter()
        .flatten()
        .any(|f| f == finalizer)
}

fn labels(hook: &LifecycleHook) -> impl Iterator<Item = (&String, &String)> {
    hook.labels_handler.iter().flatten()
}

fn finalizers(hook: &LifecycleHook) -> impl Iterator<Item = &String> {
    hook.finalizers_handler.iter().flatten()
}

/// The pod carries **any** of the hook's labels or finalizers: the hook holds it.
pub fn hooked(pod: &Pod, hook: &LifecycleHook) -> bool {
    labels(hook).any(|(k, v)| has_label(pod, k, v))
        || finalizers(hook).any(|f| has_finalizer(pod, f))
}

/// The pod carries **all** of them (an empty hook counts as all).
pub fn all_hooked(pod: &Pod, hook: &LifecycleHook) -> bool {
    labels(hook).all(|(k, v)| has_label(pod, k, v))
        && finalizers(hook).all(|f| has_finalizer(pod, f))
}

/// Puts the hook's labels and finalizers (back) on the pod.
pub fn add_markers(pod: &mut Pod, hook: &LifecycleHook) {
    let pod_labels = pod.metadata.labels.get_or_insert_with(BTreeMap::new);
    for (k, v) in labels(hook) {
        pod_labels.insert(k.clone(), v.clone());
    }
    for finalizer in finalizers(hook) {
        if !has_finalizer(pod, finalizer) {
            pod.metadata
                .finalizers
                .get_or_insert_with(Vec::new)
                .push(finalizer.clone());
        }
    }
}

#[cfg(test)]
mod tests;
