//! What the Advanced StatefulSet controller asks of one pod (OpenKruise `stateful_set_utils.go`:
//! `isCreated`, `isHealthy`, `isRunningAndReady`, `isRunningAndAvailable`, `getPodRevision`),
//! computed once per pod and round into [`StatefulPodFacts`].
//!
//! Unlike the CloneSet's predicates these do not read the `InPlaceUpdateReady` condition: an
//! Advanced StatefulSet's template lists it as a readiness gate, so the kubelet's `Ready` already
//! says it.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

use crate::api::keys;
use crate::podmarks::PodView;
use crate::workload::lifecycle::{self, LifecycleState as Lifecycle};
use crate::workload::pod::{SPECIFIED_DELETE, label};
use crate::workload::revision::label_names_revision;

/// `status.phase`, as the round distinguishes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// No phase: a pod the round is about to create (or one the apiserver has not given a phase).
    None,
    Pending,
    Running,
    Succeeded,
    Failed,
    /// `Unknown`, or a value Kubernetes does not define.
    Other,
}

impl Phase {
    pub fn of(phase: &str) -> Phase {
        match phase {
            "" => Phase::None,
            "Pending" => Phase::Pending,
            "Running" => Phase::Running,
            "Succeeded" => Phase::Succeeded,
            "Failed" => Phase::Failed,
            _ => Phase::Other,
        }
    }
}

/// `isRunningAndAvailable` with `minReadySeconds`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Availability {
    Available,
    /// Ready, not for long enough yet: available after this long.
    After(Duration),
    /// Not running, not ready, or in a lifecycle state other than `Normal`.
    No,
}

impl Availability {
    pub fn is_available(self) -> bool {
        self == Availability::Available
    }

    /// How long until the pod is available, if it only waits for time.
    pub fn wait(self) -> Option<Duration> {
        match self {
            Availability::After(wait) => Some(wait),
            _ => None,
        }
    }
}

/// One pod as the round's steps see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatefulPodFacts {
    pub phase: Phase,
    pub terminating: bool,
    pub lifecycle: Lifecycle,
    /// Running and `Ready` (`isRunningAndReady`), whatever the lifecycle state.
    pub running_ready: bool,
    /// `isHealthy`: lifecycle unset or `Normal`, running and ready, not terminating.
    pub healthy: bool,
    pub availability: Availability,
    /// `controller-revision-hash` is exactly the update / current revision's name.
    pub at_update: bool,
    pub at_current: bool,
    /// `controller-revision-hash` names the update revision by full name or short hash
    /// (OpenKruise `revision.IsPodUpdate`).
    pub names_update: bool,
    /// Labelled `apps.kruise.io/specified-delete` (any value).
    pub specified_delete: bool,
}

impl StatefulPodFacts {
    pub fn of(
        pod: &(impl PodView + ?Sized),
        current_revision: &str,
        update_revision: &str,
        min_ready_seconds: i32,
        now: Timestamp,
    ) -> StatefulPodFacts {
        let phase = Phase::of(pod.phase());
        let terminating = pod.deleting();
        let lifecycle = Lifecycle::of(lifecycle::state(pod));
        let running_ready = phase == Phase::Running && pod.first_ready_true();
        let normal = matches!(lifecycle, Lifecycle::Unset | Lifecycle::Normal);
        let revision = label(pod, keys::CONTROLLER_REVISION_HASH).unwrap_or("");
        StatefulPodFacts {
            phase,
            terminating,
            lifecycle,
            running_ready,
            healthy: normal && running_ready && !terminating,
            availability: availability(
                normal && running_ready,
                pod.ready_since(),
                min_ready_seconds,
                now,
            ),
            at_update: revision == update_revision,
            at_current: revision == current_revision,
            names_update: label_names_revision(revision, update_revision),
            specified_delete: label(pod, SPECIFIED_DELETE).is_some(),
        }
    }

    /// The facts of a pod the round creates: no phase, no status.
    pub fn new_pod(at_current: bool, at_update: bool) -> StatefulPodFacts {
        StatefulPodFacts {
            phase: Phase::None,
            terminating: false,
            lifecycle: Lifecycle::Normal,
            running_ready: false,
            healthy: false,
            availability: Availability::No,
            at_update,
            at_current,
            names_update: at_update,
            specified_delete: false,
        }
    }

    /// `isCreated`: the apiserver has given it a phase.
    pub fn created(&self) -> bool {
        self.phase != Phase::None
    }

    pub fn finished(&self) -> bool {
        matches!(self.phase, Phase::Failed | Phase::Succeeded)
    }
}

/// `isRunningAndAvailable`: `ready` (running, `Ready`, lifecycle unset or `Normal`) for at least
/// `min_ready_seconds`; a ready pod without a transition time waits the whole of it.
fn availability(
    ready: bool,
    since: Option<&Timestamp>,
    min_ready_seconds: i32,
    now: Timestamp,
) -> Availability {
    if !ready {
        return Availability::No;
    }
    if min_ready_seconds <= 0 {
        return Availability::Available;
    }
    let min_ready = SignedDuration::from_secs(i64::from(min_ready_seconds));
    let Some(since) = since else {
        return Availability::After(Duration::from_secs(min_ready_seconds.unsigned_abs().into()));
    };
    let left = since
        .saturating_add(min_ready)
        .map(|at| at.duration_since(now))
        .unwrap_or(SignedDuration::ZERO);
    match Duration::try_from(left) {
        Ok(wait) if !wait.is_zero() => Availability::After(wait),
        _ => Availability::Available,
    }
}

#[cfg(test)]
mod tests;
