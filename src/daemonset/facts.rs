//! What the steps of one round read of each claimed pod, computed once at the start of the round
//! into a small flat record (the pods themselves are summaries spread over the cache).

use std::cmp::Ordering;

use jiff::{SignedDuration, Timestamp};

use super::daemon_pod::is_updated;
use crate::api::keys;
use crate::podmarks::PodView;
use crate::workload::lifecycle::{LIFECYCLE_STATE, PREPARING_DELETE};

/// One claimed pod as the round sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DaemonPodFacts {
    /// `spec.nodeName` is set.
    pub scheduled: bool,
    /// `metadata.deletionTimestamp` is set.
    pub deleting: bool,
    /// `status.phase` is `Failed`.
    pub failed: bool,
    /// At the round's hash (or the DaemonSet's template generation): upstream `IsPodUpdated`.
    pub updated: bool,
    /// Kubernetes' `IsPodReady`: the first `Ready` condition is True.
    pub ready: bool,
    /// That condition's `lastTransitionTime`.
    pub ready_since: Option<Timestamp>,
    /// Lifecycle state `PreparingDelete`.
    pub pre_deleting: bool,
    /// The pod has the `InPlaceUpdateReady` gate and its condition is there and not True.
    pub in_place_pending: bool,
    pub created: Option<Timestamp>,
}

impl DaemonPodFacts {
    pub fn of(p: &impl PodView, hash: &str, generation: Option<i64>) -> DaemonPodFacts {
        let labels = p.labels();
        let label = |key: &str| labels.and_then(|l| l.get(key)).map(String::as_str);
        DaemonPodFacts {
            scheduled: p.scheduled(),
            deleting: p.deleting(),
            failed: p.phase() == "Failed",
            updated: is_updated(labels, hash, generation),
            ready: p.first_ready_true(),
            ready_since: p.ready_since().copied(),
            pre_deleting: label(LIFECYCLE_STATE) == Some(PREPARING_DELETE),
            in_place_pending: p.has_inplace_gate()
                && p.inplace_ready_status()
                    .is_some_and(|status| status != keys::CONDITION_TRUE),
            created: p.created().copied(),
        }
    }

    /// Kubernetes' `IsPodAvailable`: ready, for longer than `min_ready_seconds` (strictly).
    pub fn available(&self, min_ready_seconds: i32, now: Timestamp) -> bool {
        if !self.ready {
            return false;
        }
        if min_ready_seconds <= 0 {
            return true;
        }
        self.ready_since.is_some_and(|since| {
            since
                .checked_add(SignedDuration::from_secs(i64::from(min_ready_seconds)))
                .is_ok_and(|until| until < now)
        })
    }

    /// Counted in `numberAvailable`: available, and not held by an in-place update.
    pub fn daemon_available(&self, min_ready_seconds: i32, now: Timestamp) -> bool {
        self.available(min_ready_seconds, now) && !self.in_place_pending
    }

    /// How long until a ready pod becomes available (upstream `podAvailableWaitingTime`).
    pub fn available_in(&self, min_ready_seconds: i32, now: Timestamp) -> std::time::Duration {
        let wait = SignedDuration::from_secs(i64::from(min_ready_seconds.max(0)));
        let left = match self.ready_since {
            Some(since) => wait - now.duration_since(since),
            None => wait,
        };
        std::time::Duration::try_from(left).unwrap_or_default()
    }
}

/// Upstream `podByCreationTimestampAndPhase`: scheduled pods first, then the oldest, then by
/// name.
pub fn oldest_first(a: (&DaemonPodFacts, &str), b: (&DaemonPodFacts, &str)) -> Ordering {
    (!a.0.scheduled, a.0.created, a.1).cmp(&(!b.0.scheduled, b.0.created, b.1))
}

#[cfg(test)]
mod tests;
