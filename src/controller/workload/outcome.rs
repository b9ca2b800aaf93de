//! How a workload round ended, and the one rule that says when to look again.

use std::time::Duration;

use kube::runtime::controller::Action as Requeue;

/// When nothing happens, look again after this long while a rollout is unfinished.
pub const IN_FLIGHT_REQUEUE: Duration = Duration::from_secs(15);
/// After a conflicting write: the cache is about to deliver the newer object.
pub const CONFLICT_REQUEUE: Duration = Duration::from_secs(1);
/// Before the caches have listed everything.
const NOT_SYNCED_REQUEUE: Duration = Duration::from_secs(1);
/// After a failed update (reported as an event and a condition).
const FAILED_REQUEUE: Duration = Duration::from_secs(10);

/// How a round ended, for [`requeue`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A cache has not listed everything yet.
    CachesNotReady,
    /// Earlier writes are not in the cache yet; they are due within this long (their events
    /// trigger a round; this is the fallback).
    Waiting(Duration),
    /// A write met a newer object, or the pods kept changing while read.
    Conflict,
    /// The spec cannot be acted on (an unusable selector): nothing to retry until it changes.
    InvalidSpec,
    /// The planned update failed (reported as an event and a condition).
    Failed,
    /// The round ran: its planner's wish to look again, and whether the rollout is unfinished.
    Done {
        requeue_after: Option<Duration>,
        unfinished: bool,
    },
}

/// When to look again after a round.
pub fn requeue(outcome: Outcome) -> Requeue {
    match outcome {
        Outcome::CachesNotReady => Requeue::requeue(NOT_SYNCED_REQUEUE),
        Outcome::Waiting(left) => Requeue::requeue(left.min(IN_FLIGHT_REQUEUE)),
        Outcome::Conflict => Requeue::requeue(CONFLICT_REQUEUE),
        Outcome::InvalidSpec => Requeue::await_change(),
        Outcome::Failed => Requeue::requeue(FAILED_REQUEUE),
        Outcome::Done {
            requeue_after: Some(after),
            ..
        } => Requeue::requeue(after.min(IN_FLIGHT_REQUEUE)),
        Outcome::Done {
            requeue_after: None,
            unfinished: true,
        } => Requeue::requeue(IN_FLIGHT_REQUEUE),
        Outcome::Done {
            requeue_after: None,
            unfinished: false,
        } => Requeue::await_change(),
    }
}
