//! The in-place update as a state machine: given a pod as it is now, the one write to make next
//! (or why to wait). OpenKruise's `Update()` and `Refresh()` flows, with every write returned as
//! data so the caller decides how to send it and calls again on the fresh pod afterwards.
//!
//! All progress lives in the pod (revision label, state and grace annotations, the
//! `InPlaceUpdateReady` condition), so a restarted controller resumes where the last one stopped.

use std::collections::BTreeMap;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::batch::{self, BatchError};
use super::completion::{self, ContainerHasher, Incomplete, NoRuntimeHashes};
use super::conditions;
use super::state::{self, AnnotationError, InPlaceUpdateState, UpdateSpec};
use crate::api::keys;

/// How the engine is wired into one kind of workload.
#[derive(Clone, Copy)]
pub struct EngineOptions<'a> {
    /// The pod label holding the pod's revision, written when an update starts and compared when a
    /// grace period ends (a rollback cancels it). `None` for callers that must not touch the
    /// workload's label, such as a SidecarSet updating pods owned by someone else; the state's
    /// revision is then the pod's revision.
    pub revision_label: Option<&'a str>,
    /// Source of kruise-daemon-compatible hashes for the completion check.
    pub hasher: &'a dyn ContainerHasher,
}

impl Default for EngineOptions<'static> {
    fn default() -> Self {
        EngineOptions {
            revision_label: Some(keys::CONTROLLER_REVISION_HASH),
            hasher: &NoRuntimeHashes,
        }
    }
}

impl std::fmt::Debug for EngineOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EngineOptions")
            .field("revision_label", &self.revision_label)
            .finish_non_exhaustive()
    }
}

/// Which batch a [`Step::PatchBatch`] applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchKind {
    /// The update starts with no grace period: first batch right away.
    First,
    /// The grace period is over: first batch.
    AfterGrace,
    /// The previous batch is running and ready: the next priority level.
    Next,
}

/// The next thing to do for one pod.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Status write: `InPlaceUpdateReady=False` with `Ready` recomputed. Nothing else changes yet.
    SetNotReady { pod: Pod },
    /// Pod update: revision label, fresh state and the grace annotation; images untouched until
    /// `until`. Call again after `requeue_after`.
    StartGrace {
        pod: Pod,
        until: Timestamp,
        requeue_after: Duration,
    },
    /// Pod update: one batch of images/metadata applied and recorded in the state annotation.
    PatchBatch {
        pod: Pod,
        kind: BatchKind,
        containers: Vec<String>,
    },
    /// Pod update: the grace annotation is dropped because the pod's revision moved on (rollback).
    CancelGrace { pod: Pod },
    /// Nothing to write; call again after `requeue_after`.
    WaitGrace {
        until: Timestamp,
        requeue_after: Duration,
    },
    /// Nothing to write: the last patched batch is not running its new spec yet.
    WaitBatch { reason: Incomplete },
    /// Nothing to write: these containers of the last batch are not ready yet.
    WaitReady { containers: Vec<String> },
    /// Status write: `InPlaceUpdateReady=True`; the update is finished.
    Complete { pod: Pod },
    /// Nothing to do: no update in flight, or finished and already marked.
    Idle,
    /// The update cannot be applied to this pod in place; nothing was changed.
    NeedsRecreate { reason: String },
}

/// How a step's pod must be sent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Write<'a> {
    /// `PUT` of the pod (metadata and spec).
    Pod(&'a Pod),
    /// `PUT` of the pod's `status` subresource.
    Status(&'a Pod),
}

impl Step {
    /// The write this step asks for, if any.
    pub fn write(&self) -> Option<Write<'_>> {
        match self {
            Step::SetNotReady { pod } | Step::Complete { pod } => Some(Write::Status(pod)),
            Step::StartGrace { pod, .. }
            | Step::PatchBatch { pod, .. }
            | Step::CancelGrace { pod } => Some(Write::Pod(pod)),
            Step::WaitGrace { .. }
            | Step::WaitBatch { .. }
            | Step::WaitReady { .. }
            | Step::Idle
            | Step::NeedsRecreate { .. } => None,
        }
    }

    /// The pod of [`Step::write`], taken out of the step without a copy.
    pub fn into_pod(self) -> Option<Pod> {
        match self {
            Step::SetNotReady { pod }
            | Step::Complete { pod }
            | Step::StartGrace { pod, .. }
            | Step::PatchBatch { pod, .. }
            | Step::CancelGrace { pod } => Some(pod),
            Step::WaitGrace { .. }
            | Step::WaitBatch { .. }
            | Step::WaitReady { .. }
            | Step::Idle
            | Step::NeedsRecreate { .. } => None,
        }
    }

    /// When to look at the pod again if no event arrives sooner.
    pub fn requeue_after(&self) -> Option<Duration> {
        match self {
            Step::StartGrace { requeue_after, .. } | Step::WaitGrace { requeue_after, .. } => {
                Some(*requeue_after)
            }
            _ => None,
        }
    }
}

/// The pod's annotations cannot be interpreted; the caller should report it and retry later.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(
        "pod has {grace} but {state} not found",
        grace = keys::INPLACE_UPDATE_GRACE,
        state = keys::INPLACE_UPDATE_STATE
    )]
    GraceWithoutState,
    #[error(transparent)]
    Annotation(#[from] AnnotationError),
}

impl From<BatchError> for Step {
    fn from(error: BatchError) -> Self {
        Step::NeedsRecreate {
            reason: error.to_string(),
        }
    }
}

/// One reconcile of one pod. `target` is the update the pod should end up on (`None`: just carry
/// on with whatever is in flight). Each call returns at most one write; after making it, call
/// again with the pod as the apiserver returned it.
pub fn next_step(
    pod: &Pod,
    target: Option<&UpdateSpec>,
    options: &EngineOptions<'_>,
    now: Timestamp,
) -> Result<Step, EngineError> {
    if let Some(spec) = target
        && !on_revision(pod, &spec.revision, options)
    {
        // The pod leaves Service endpoints before its spec is touched.
        if let Some(pod) = conditions::mark_not_ready(pod, now) {
            return Ok(Step::SetNotReady { pod });
        }
        return start_update(pod, spec, options, now);
    }
    refresh(pod, options, now)
}

/// The revision of an in-place update still in progress on the pod (grace period running, a batch
/// pending, or the readiness gate still False), if any.
///
/// One pod can be upgraded by its workload (a CloneSet) and by a SidecarSet, and both record their
/// progress in the same `apps.kruise.io/inplace-update-state`. The rule: **one in-place update at a
/// time per pod**. A controller starts or drives an update only when no update of another owner is
/// in progress; otherwise it waits for that one to finish. An unreadable state counts as none (it
/// is reported elsewhere).
pub fn in_flight_revision(pod: &Pod) -> Option<String> {
    let state = state::read_state(pod)?.ok()?;
    let gate_false = conditions::pod_condition(pod, keys::INPLACE_UPDATE_READY)
        .is_some_and(|c| c.status == "False");
    (state::has_grace(pod) || state.has_next_batch() || gate_false).then_some(state.revision)
}

/// How a SidecarSet's multi-batch upgrades run the engine: a SidecarSet does not own its pods'
/// revision label, and confirms a batch by image IDs.
pub const SIDECARSET_ENGINE: EngineOptions<'static> = EngineOptions {
    revision_label: None,
    hasher: &NoRuntimeHashes,
};

/// Whether the engine has nothing to do on the pod and no update of any owner is in flight there:
/// no grace period, the `InPlaceUpdateReady` gate (if the pod has it) True, and either no update
/// state or one whose last batch is done with none left and the condition not False. Then
/// [`next_step`]`(pod, None, options, now)` answers `Idle` at any `now` and [`in_flight_revision`]
/// `None` (tested in `workload::facts`). It reads the pod only, not the time.
pub fn at_rest(pod: &Pod, options: &EngineOptions<'_>) -> bool {
    match state::read_state(pod) {
        None => at_rest_on(pod, None, options),
        Some(Err(_)) => false,
        Some(Ok(update)) => at_rest_on(pod, Some(&update), options),
    }
}

/// [`at_rest`] under each of `options`, with the state read once.
pub fn at_rest_each<const N: usize>(pod: &Pod, options: [&EngineOptions<'_>; N]) -> [bool; N] {
    match state::read_state(pod) {
        None => options.map(|options| at_rest_on(pod, None, options)),
        Some(Err(_)) => [false; N],
        Some(Ok(update)) => options.map(|options| at_rest_on(pod, Some(&update), options)),
    }
}

/// Whether an in-place update is in flight on the pod: it has a readable update state and the
/// engine is not [`at_rest`] on it. The state is read once.
pub fn update_in_flight(pod: &Pod, options: &EngineOptions<'_>) -> bool {
    matches!(state::read_state(pod), Some(Ok(update)) if !at_rest_on(pod, Some(&update), options))
}

/// [`at_rest`] with the pod's update state already read (`None`: the pod has none).
fn at_rest_on(pod: &Pod, update: Option<&InPlaceUpdateState>, options: &EngineOptions<'_>) -> bool {
    if state::has_grace(pod) {
        return false;
    }
    let condition = conditions::pod_condition(pod, keys::INPLACE_UPDATE_READY).map(|c| &c.status);
    let gate_true_or_none = !conditions::has_inplace_readiness_gate(pod)
        || condition.is_some_and(|status| status == keys::CONDITION_TRUE);
    if !gate_true_or_none {
        return false;
    }
    match update {
        None => true,
        Some(update) => {
            !update.has_next_batch()
                && condition.is_none_or(|status| status != keys::CONDITION_FALSE)
                && completion::batch_completed(pod, update, options.hasher).is_ok()
        }
    }
}

/// Whether the pod has already been moved to `revision` (it may still be mid-update).
pub fn on_revision(pod: &Pod, revision: &str, options: &EngineOptions<'_>) -> bool {
    match options.revision_label {
        Some(label) => pod_label(pod, label) == Some(revision),
        None => matches!(state::read_state(pod), Some(Ok(s)) if s.revision == revision),
    }
}

/// `Update()` after the status write: revision label, a fresh state, then either the grace
/// annotation or the first batch. Caller-specific bookkeeping (lifecycle labels) can be added to
/// the returned pod before it is written.
pub fn start_update(
    pod: &Pod,
    spec: &UpdateSpec,
    options: &EngineOptions<'_>,
    now: Timestamp,
) -> Result<Step, EngineError> {
    start_update_owned(pod.clone(), spec, options, now)
}

/// [`start_update`] on a pod the caller no longer needs: the step's pod is made from it without a
/// copy (a large CloneSet starts thousands of updates per round).
pub fn start_update_owned(
    mut next: Pod,
    spec: &UpdateSpec,
    options: &EngineOptions<'_>,
    now: Timestamp,
) -> Result<Step, EngineError> {
    if let Some(label) = options.revision_label {
        next.metadata
            .labels
            .get_or_insert_with(BTreeMap::new)
            .insert(label.to_string(), spec.revision.clone());
    }
    // A fresh record: statuses and batches of an earlier revision no longer mean anything.
    let fresh = InPlaceUpdateState {
        revision: spec.revision.clone(),
        update_timestamp: Some(Time(now)),
        update_env_from_metadata: spec.update_env_from_metadata,
        update_images: !spec.container_images.is_empty(),
        update_resources: !spec.container_resources.is_empty(),
        ..Default::default()
    };
    if spec.grace_seconds > 0 {
        if let Err(error) = batch::check_containers(&next, spec) {
            return Ok(error.into());
        }
        state::write_state(&mut next, &fresh)?;
        state::write_grace(&mut next, spec)?;
        let wait = SignedDuration::from_secs(i64::from(spec.grace_seconds));
        return Ok(Step::StartGrace {
            pod: next,
            until: now.saturating_add(wait).unwrap_or(now),
            requeue_after: Duration::from_secs(spec.grace_seconds.unsigned_abs().into()),
        });
    }
    state::remove_grace(&mut next);
    match batch::patch_batch_owned(next, spec, fresh, now) {
        Ok((pod, containers)) => Ok(Step::PatchBatch {
            pod,
            kind: BatchKind::First,
            containers,
        }),
        Err(BatchError::Annotation(e)) => Err(e.into()),
        Err(error) => Ok(error.into()),
    }
}

/// `Refresh()`: moves an update in flight forward — ends the grace period, patches the next batch
/// once the previous one runs and is ready, marks the pod ready at the end.
pub fn refresh(
    pod: &Pod,
    options: &EngineOptions<'_>,
    now: Timestamp,
) -> Result<Step, EngineError> {
    if let Some(grace) = state::read_grace(pod) {
        return finish_grace(pod, grace?, options, now);
    }
    if let Some(parsed) = state::read_state(pod) {
        let state = parsed?;
        if let Err(reason) = completion::batch_completed(pod, &state, options.hasher) {
            return Ok(Step::WaitBatch { reason });
        }
        if state.has_next_batch() {
            return next_batch(pod, state, now);
        }
    }
    Ok(match conditions::mark_ready(pod, now) {
        Some(pod) => Step::Complete { pod },
        None => Step::Idle,
    })
}

fn finish_grace(
    pod: &Pod,
    spec: UpdateSpec,
    options: &EngineOptions<'_>,
    now: Timestamp,
) -> Result<Step, EngineError> {
    let state = state::read_state(pod).ok_or(EngineError::GraceWithoutState)??;
    if let Some(label) = options.revision_label
        && pod_label(pod, label) != Some(spec.revision.as_str())
    {
        let mut next = pod.clone();
        state::remove_grace(&mut next);
        return Ok(Step::CancelGrace { pod: next });
    }
    if let Some(stamp) = state.update_timestamp.as_ref() {
        let grace = SignedDuration::from_secs(i64::from(spec.grace_seconds));
        let until = grace_start(stamp.0).saturating_add(grace).unwrap_or(now);
        if now < until {
            return Ok(Step::WaitGrace {
                until,
                requeue_after: millis_up(until.duration_since(now)),
            });
        }
    }
    let mut next = pod.clone();
    state::remove_grace(&mut next);
    match batch::patch_batch(&next, &spec, state, now) {
        Ok((pod, containers)) => Ok(Step::PatchBatch {
            pod,
            kind: BatchKind::AfterGrace,
            containers,
        }),
        Err(BatchError::Annotation(e)) => Err(e.into()),
        Err(error) => Ok(error.into()),
    }
}

fn next_batch(pod: &Pod, state: InPlaceUpdateState, now: Timestamp) -> Result<Step, EngineError> {
    let not_ready: Vec<String> = state
        .pre_check_before_next
        .iter()
        .flat_map(|p| p.containers_required_ready.iter())
        .filter(|name| !completion::container_status(pod, name).is_some_and(|s| s.ready))
        .cloned()
        .collect();
    if !not_ready.is_empty() {
        return Ok(Step::WaitReady {
            containers: not_ready,
        });
    }
    let spec = UpdateSpec {
        container_images: state.next_container_images.clone(),
        container_ref_metadata: state.next_container_ref_metadata.clone(),
        container_resources: state.next_container_resources.clone(),
        update_env_from_metadata: state.update_env_from_metadata,
        ..Default::default()
    };
    match batch::patch_batch(pod, &spec, state, now) {
        Ok((pod, containers)) => Ok(Step::PatchBatch {
            pod,
            kind: BatchKind::Next,
            containers,
        }),
        Err(BatchError::Annotation(e)) => Err(e.into()),
        Err(error) => Ok(error.into()),
    }
}

fn pod_label<'a>(pod: &'a Pod, key: &str) -> Option<&'a str> {
    pod.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(key))
        .map(String::as_str)
}

/// The moment a grace period counts from, given the state's `updateTimestamp`: the stamp itself
/// when it has a fraction of a second (this engine writes it so), else one second later. A whole
/// second may be an instant cut to the second (OpenKruise writes them so, and this engine did),
/// up to a second after the stamp, and the grace must never be shorter than asked. The stamp is
/// taken once the `InPlaceUpdateReady` gate is False (or in the round that turns it False), so the
/// pod leaves Service endpoints at least the whole grace before its first batch is patched.
fn grace_start(stamp: Timestamp) -> Timestamp {
    if stamp.subsec_nanosecond() != 0 {
        return stamp;
    }
    stamp
        .saturating_add(SignedDuration::from_secs(1))
        .unwrap_or(stamp)
}

/// When to look again, rounded up to the millisecond: never before the grace has ended.
fn millis_up(remaining: SignedDuration) -> Duration {
    let nanos = u128::try_from(remaining.as_nanos()).unwrap_or(0);
    let millis = nanos.div_ceil(1_000_000);
    Duration::from_millis(u64::try_from(millis).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests;
