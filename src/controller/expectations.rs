//! Writes the controller has made but its cache has not shown yet (OpenKruise's scale and
//! resourceVersion expectations). While any is outstanding for a CloneSet, a reconcile would
//! plan on a stale picture and create or delete twice, so it waits instead. The workload's own
//! writes (its status) are kept here too ([`OwnWrites`]), so no round computes a status from an
//! object older than the last one written.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use prometheus_client::metrics::counter::Counter;

use super::own_writes::OwnWrites;
pub use super::own_writes::TIMEOUT;

/// How long a CloneSet waits for another look once its expectations timed out (upstream's
/// `ForceDeleteTimeoutExpectationGate`): whatever was lost, the next round plans on the cache.
pub const AFTER_TIMEOUT: Duration = Duration::from_secs(10);

/// What an event of a CloneSet's pod or PVC tells (§5.1): it exists or existed, so its create
/// happened; being deleted or gone, its delete happened too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Told {
    Exists,
    /// It carries a deletionTimestamp.
    Deleting,
    Deleted,
}

/// What the cache says about a pod name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    Absent,
    /// Present; `deleting` when it carries a deletionTimestamp; its resourceVersion.
    Present {
        deleting: bool,
        version: Option<u64>,
    },
}

#[derive(Debug, Default)]
struct Pending {
    creates: BTreeSet<String>,
    deletes: BTreeSet<String>,
    /// Pod name → the resourceVersion our last write returned.
    versions: BTreeMap<String, u64>,
    /// The first check that found them unsatisfied: the timeout counts from there (spec §5.1,
    /// as OpenKruise), not from the first write expected.
    unsatisfied_since: Option<Instant>,
}

impl Pending {
    fn is_empty(&self) -> bool {
        self.creates.is_empty() && self.deletes.is_empty() && self.versions.is_empty()
    }
}

#[derive(Debug, Default)]
pub struct Expectations {
    by_key: BTreeMap<String, Pending>,
    /// Counts the expectations given up on (`controller_expectation_timeouts_total`).
    timeouts: Counter,
    /// The resourceVersions the workloads' own writes returned.
    own: OwnWrites,
}

impl Expectations {
    /// Expectations whose timeouts are counted in `timeouts`.
    pub fn counting_timeouts(timeouts: Counter) -> Self {
        Expectations {
            by_key: BTreeMap::new(),
            timeouts,
            own: OwnWrites::default(),
        }
    }

    /// Records the resourceVersion a write of the workload `key` itself (its status, its spec)
    /// returned ([`OwnWrites::wrote`]).
    pub fn expect_own_write(&mut self, key: &str, version: Option<&str>) {
        self.own.wrote(key, version, Instant::now());
    }

    /// Whether the workload `key`, observed at resourceVersion `observed`, is older than its own
    /// last write, and how long that record still holds ([`OwnWrites::behind`]).
    pub fn behind_own_write(
        &mut self,
        key: &str,
        observed: Option<&str>,
        now: Instant,
    ) -> Option<Duration> {
        self.own.behind(key, observed, now)
    }

    fn pending(&mut self, key: &str) -> &mut Pending {
        self.by_key.entry(key.to_string()).or_default()
    }

    pub fn expect_create(&mut self, key: &str, pod: &str) {
        self.pending(key).creates.insert(pod.to_string());
    }

    pub fn expect_delete(&mut self, key: &str, pod: &str) {
        self.pending(key).deletes.insert(pod.to_string());
    }

    /// Records the resourceVersion a write returned (non-numeric versions are not tracked).
    pub fn expect_version(&mut self, key: &str, pod: &str, version: Option<&str>) {
        if let Some(version) = version.and_then(|v| v.parse().ok()) {
            self.pending(key).versions.insert(pod.to_string(), version);
        }
    }

    /// The write failed: nothing will show up.
    pub fn forget(&mut self, key: &str, pod: &str) {
        self.release(key, |pending| {
            pending.creates.remove(pod);
            pending.deletes.remove(pod);
            pending.versions.remove(pod);
        });
    }

    /// An event of `key`'s pod (or PVC) `pod`. The cache alone cannot tell of a pod created and
    /// deleted between two looks: it shows no pod, as before the create; the events do.
    pub fn observe(&mut self, key: &str, pod: &str, told: Told) {
        self.release(key, |pending| {
            pending.creates.remove(pod);
            if told != Told::Exists {
                pending.deletes.remove(pod);
            }
            if told == Told::Deleted {
                pending.versions.remove(pod);
            }
        });
    }

    /// Applies `release` to what `key` waits for; nothing left, its clock goes too.
    fn release(&mut self, key: &str, release: impl FnOnce(&mut Pending)) {
        if let Some(pending) = self.by_key.get_mut(key) {
            release(pending);
            if pending.is_empty() {
                self.by_key.remove(key);
            }
        }
    }

    /// Drops everything of a CloneSet that is gone.
    pub fn clear(&mut self, key: &str) {
        self.by_key.remove(key);
    }

    /// `None` when the cache shows every write of `key` (the expectations are then dropped);
    /// otherwise how long to wait before looking again: until they time out, or once they have
    /// (they are then dropped), [`AFTER_TIMEOUT`].
    pub fn unsatisfied(
        &mut self,
        key: &str,
        now: Instant,
        seen: impl Fn(&str) -> Seen,
    ) -> Option<Duration> {
        let pending = self.by_key.get_mut(key)?;
        pending.creates.retain(|pod| seen(pod) == Seen::Absent);
        pending.deletes.retain(|pod| {
            matches!(
                seen(pod),
                Seen::Present {
                    deleting: false,
                    ..
                }
            )
        });
        pending.versions.retain(|pod, wanted| match seen(pod) {
            Seen::Absent => false,
            Seen::Present { version, .. } => version.is_none_or(|v| v < *wanted),
        });
        if pending.is_empty() {
            self.by_key.remove(key);
            return None;
        }
        let since = *pending.unsatisfied_since.get_or_insert(now);
        let elapsed = now.saturating_duration_since(since);
        if elapsed >= TIMEOUT {
            tracing::warn!(
                cloneset = key,
                creates = ?pending.creates,
                deletes = ?pending.deletes,
                versions = ?pending.versions,
                "expectations unsatisfied for 5 minutes: dropped"
            );
            self.timeouts.inc();
            self.by_key.remove(key);
            return Some(AFTER_TIMEOUT);
        }
        tracing::debug!(
            cloneset = key,
            creates = ?pending.creates,
            deletes = ?pending.deletes,
            versions = ?pending.versions,
            "waiting for the cache to show these writes"
        );
        Some(TIMEOUT - elapsed)
    }
}

#[cfg(test)]
mod tests;
