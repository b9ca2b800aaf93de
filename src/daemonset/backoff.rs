//! The failed-pod backoff (client-go `flowcontrol.Backoff`, 1 s doubling to 15 min): a node whose
//! daemon pod keeps failing gets its failed pod deleted at most once per step, so the controller
//! does not fight a kubelet that rejects the pod. The state lives in the shell across rounds; a
//! round reads it and says which keys to advance.

use std::collections::HashMap;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

pub const INITIAL: Duration = Duration::from_secs(1);
pub const MAX: Duration = Duration::from_secs(15 * 60);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    backoff: Duration,
    last_update: Timestamp,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FailedPodBackoff {
    entries: HashMap<String, Entry>,
}

/// `<DaemonSet uid>/<status.observedGeneration>/<node>`: a new generation starts afresh.
pub fn key(uid: &str, observed_generation: i64, node: &str) -> String {
    format!("{uid}/{observed_generation}/{node}")
}

/// An entry untouched for twice the maximum is forgotten.
fn expired(now: Timestamp, last_update: Timestamp) -> bool {
    now.duration_since(last_update)
        > SignedDuration::try_from(MAX * 2).unwrap_or(SignedDuration::MAX)
}

impl FailedPodBackoff {
    /// The time left in `key`'s window at `now`; `None` when it is not backing off.
    pub fn remaining(&self, key: &str, now: Timestamp) -> Option<Duration> {
        let entry = self.entries.get(key)?;
        if expired(now, entry.last_update) {
            return None;
        }
        let elapsed = now.duration_since(entry.last_update);
        let window = SignedDuration::try_from(entry.backoff).ok()?;
        (elapsed < window).then(|| Duration::try_from(window - elapsed).unwrap_or(entry.backoff))
    }

    /// `Next`: start the window at `INITIAL`, or double it (up to `MAX`).
    pub fn advance(&mut self, key: &str, now: Timestamp) {
        let backoff = match self.entries.get(key) {
            Some(entry) if !expired(now, entry.last_update) => (entry.backoff * 2).min(MAX),
            _ => INITIAL,
        };
        self.entries.insert(
            key.to_string(),
            Entry {
                backoff,
                last_update: now,
            },
        );
    }

    /// The current window of `key` (zero without one).
    pub fn window(&self, key: &str) -> Duration {
        self.entries.get(key).map_or(Duration::ZERO, |e| e.backoff)
    }

    /// Forgets expired entries (`GC`).
    pub fn collect_garbage(&mut self, now: Timestamp) {
        self.entries.retain(|_, e| !expired(now, e.last_update));
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests;
