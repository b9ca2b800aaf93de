//! What the counting and choosing steps of one round read of each active pod, computed once per
//! pod at the start of the round into a small flat record.
//!
//! Without it every step (the two sides of the update, candidates, the unavailability budget,
//! the status) looked the same labels and conditions up again in the pods' maps, spread over
//! megabytes of cache; with 10,000 pods most of those lookups missed the processor's caches.
//! The records are parallel to the round's active pods (same index) and answer exactly what the
//! predicates of [`super::pod`] answer for the round's revision, `minReadySeconds` and time.

use jiff::Timestamp;

use super::lifecycle::{self, LifecycleState};
use super::pod;
use super::revision::RevisionScheme;
use crate::podmarks::{EngineOwner, PodSummary, PodView};

/// One active pod as the round's counting steps see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PodFacts {
    /// [`RevisionScheme::pod_at`] the update revision.
    pub at_update_revision: bool,
    pub lifecycle: LifecycleState,
    /// [`pod::is_ready`].
    pub ready: bool,
    /// [`pod::is_available`] with the CloneSet's `minReadySeconds`.
    pub available: bool,
    /// [`pod::is_specified_delete`].
    pub specified_delete: bool,
    /// The in-place grace annotation is set.
    pub has_grace: bool,
    /// [`super::engine::engine_at_rest`]: `inplace::next_step` answers `Idle` and no update of
    /// any owner is in flight.
    pub engine_idle: bool,
    /// [`pod::missing_template_hash`], where the scheme writes `pod-template-hash` (the refresh
    /// adds it).
    pub missing_template_hash: bool,
}

impl PodFacts {
    /// `engine_idle` is the summary's verdict, made once per pod change
    /// ([`super::listed::summarize`]): reading the update state is the costly part.
    pub fn of(
        p: &PodSummary,
        scheme: RevisionScheme,
        update_revision: &str,
        pods_to_delete: &[String],
        min_ready_seconds: i32,
        now: Timestamp,
    ) -> PodFacts {
        let lifecycle = LifecycleState::of(lifecycle::state(p));
        let ready = pod::in_place_ready(p) && pod::running_available(p, 0, now);
        // `is_available`: a lifecycle of "" or Normal, and ready for long enough.
        let available = ready
            && matches!(lifecycle, LifecycleState::Unset | LifecycleState::Normal)
            && (min_ready_seconds <= 0 || pod::running_available(p, min_ready_seconds, now));
        let has_grace = p.has_inplace_grace();
        PodFacts {
            at_update_revision: scheme.pod_at(p, update_revision),
            lifecycle,
            ready,
            available,
            specified_delete: pod::is_specified_delete(p, pods_to_delete),
            has_grace,
            engine_idle: p.engine_at_rest(EngineOwner::Workload),
            missing_template_hash: scheme.template_hash && pod::missing_template_hash(p),
        }
    }

    pub fn pre_deleting(&self) -> bool {
        self.lifecycle == LifecycleState::PreparingDelete
    }
}

#[cfg(test)]
mod tests;
