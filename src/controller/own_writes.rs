//! A status is never written from an object older than the controller's own last write of it.
//!
//! A round computes an object's status from what the watch cache holds. Right after the
//! controller wrote the object (its status, a spec patch) the cache may hold the version before
//! that write for a few more milliseconds; a round started then (a pod event) computes from the
//! old object and writes back what the last write replaced: a `collisionCount` of 1 overwritten
//! with 0, and the next template hashed with the wrong count. So every controller records the
//! resourceVersion each write of an object returned ([`OwnWrites::wrote`]), and a round whose
//! object is older ([`OwnWrites::behind`]) writes nothing and waits: the watch event of that very
//! write is on its way and starts the next round.
//!
//! resourceVersions are compared as numbers (etcd's revisions, as the expectations of pod writes
//! compare them); one that is not a number is not tracked.

use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Upstream's `--expectation-timeout`: after this a write the cache has not shown is no longer
/// waited for (a lost watch event cannot stall a workload for ever). The expectations of pod and
/// PVC writes ([`super::expectations`]) wait as long.
pub const TIMEOUT: Duration = Duration::from_secs(300);

/// Below this many records no clean-up runs.
const PRUNE_FLOOR: usize = 64;

/// The resourceVersion of each object's last write by this controller, until its cache shows it.
#[derive(Debug)]
pub struct OwnWrites {
    by_key: HashMap<String, Written>,
    /// Records older than [`TIMEOUT`] (of objects deleted right after a write: no round comes to
    /// drop them) are swept once the map reaches this size.
    prune_at: usize,
}

#[derive(Debug, Clone, Copy)]
struct Written {
    version: u64,
    at: Instant,
}

impl Default for OwnWrites {
    fn default() -> Self {
        OwnWrites {
            by_key: HashMap::new(),
            prune_at: PRUNE_FLOOR,
        }
    }
}

fn parse(version: Option<&str>) -> Option<u64> {
    version.and_then(|v| v.parse().ok())
}

impl OwnWrites {
    /// Records the resourceVersion a write of the object `key` returned.
    pub fn wrote(&mut self, key: &str, version: Option<&str>, now: Instant) {
        let Some(version) = parse(version) else {
            return;
        };
        let written = self
            .by_key
            .entry(key.to_string())
            .or_insert(Written { version, at: now });
        if version >= written.version {
            *written = Written { version, at: now };
        }
        if self.by_key.len() >= self.prune_at {
            self.by_key
                .retain(|_, w| now.saturating_duration_since(w.at) < TIMEOUT);
            self.prune_at = (self.by_key.len() * 2).max(PRUNE_FLOOR);
        }
    }

    /// `Some(left)` when `observed`, the resourceVersion of the object `key` as a round sees it, is
    /// older than this controller's last write of it: the round must not compute a status from it.
    /// `left` is how long the record still holds. `None` once the cache shows the write (the
    /// record is dropped), when nothing is recorded, or after [`TIMEOUT`] (a lost watch event
    /// cannot stall the object for ever).
    pub fn behind(&mut self, key: &str, observed: Option<&str>, now: Instant) -> Option<Duration> {
        let written = *self.by_key.get(key)?;
        let observed = parse(observed);
        let elapsed = now.saturating_duration_since(written.at);
        let caught_up = observed.is_none_or(|v| v >= written.version);
        if caught_up || elapsed >= TIMEOUT {
            // A write whose own event started no reconcile is found caught up much later.
            if !caught_up {
                tracing::warn!(
                    object = key,
                    written = written.version,
                    observed,
                    "the cache did not show our last write within 5 minutes: going on"
                );
            }
            self.by_key.remove(key);
            return None;
        }
        tracing::debug!(
            object = key,
            written = written.version,
            observed,
            "the cache is behind our last write: waiting for it"
        );
        Some(TIMEOUT - elapsed)
    }
}

#[cfg(test)]
mod tests;
