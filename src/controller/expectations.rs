//! Writes the controller has made but its cache has not shown yet (OpenKruise's scale and
//! resourceVersion expectations). While any is outstanding for a CloneSet, a reconcile would
//! plan on a stale picture and create or delete twice, so it waits instead.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// Upstream's `--expectation-timeout`: after this an expectation is dropped, so a lost watch
/// event cannot stall a CloneSet for ever.
pub const TIMEOUT: Duration = Duration::from_secs(300);

/// How long a CloneSet waits for another look once its expectations timed out (upstream's
/// `ForceDeleteTimeoutExpectationGate`): whatever was lost, the next round plans on the cache.
pub const AFTER_TIMEOUT: Duration = Duration::from_secs(10);

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
    since: Option<Instant>,
}

impl Pending {
    fn is_empty(&self) -> bool {
        self.creates.is_empty() && self.deletes.is_empty() && self.versions.is_empty()
    }
}

#[derive(Debug, Default)]
pub struct Expectations {
    by_key: BTreeMap<String, Pending>,
}

impl Expectations {
    fn pending(&mut self, key: &str, now: Instant) -> &mut Pending {
        let pending = self.by_key.entry(key.to_string()).or_default();
        pending.since.get_or_insert(now);
        pending
    }

    pub fn expect_create(&mut self, key: &str, pod: &str, now: Instant) {
        self.pending(key, now).creates.insert(pod.to_string());
    }

    pub fn expect_delete(&mut self, key: &str, pod: &str, now: Instant) {
        self.pending(key, now).deletes.insert(pod.to_string());
    }

    /// Records the resourceVersion a write returned (non-numeric versions are not tracked).
    pub fn expect_version(&mut self, key: &str, pod: &str, version: Option<&str>, now: Instant) {
        if let Some(version) = version.and_then(|v| v.parse().ok()) {
            self.pending(key, now)
                .versions
                .insert(pod.to_string(), version);
        }
    }

    /// The write failed: nothing will show up.
    pub fn forget(&mut self, key: &str, pod: &str) {
        if let Some(pending) = self.by_key.get_mut(key) {
            pending.creates.remove(pod);
            pending.deletes.remove(pod);
            pending.versions.remove(pod);
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
        let elapsed = pending
            .since
            .map_or(Duration::ZERO, |s| now.duration_since(s));
        if elapsed >= TIMEOUT {
            tracing::warn!(
                cloneset = key,
                creates = ?pending.creates,
                deletes = ?pending.deletes,
                versions = ?pending.versions,
                "expectations unsatisfied for 5 minutes: dropped"
            );
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
mod tests {
    use super::*;

    #[test]
    fn creates_wait_for_the_pod_and_deletes_for_its_absence() {
        let t = Instant::now();
        let mut e = Expectations::default();
        e.expect_create("ns/cs", "cs-a", t);
        e.expect_delete("ns/cs", "cs-b", t);
        let seen_none = |_: &str| Seen::Absent;
        // cs-a not seen yet, cs-b already gone.
        assert!(e.unsatisfied("ns/cs", t, seen_none).is_some());
        let seen_a = |p: &str| {
            if p == "cs-a" {
                Seen::Present {
                    deleting: false,
                    version: Some(1),
                }
            } else {
                Seen::Absent
            }
        };
        assert_eq!(e.unsatisfied("ns/cs", t, seen_a), None);
        // Nothing left: later checks are free.
        assert_eq!(e.unsatisfied("ns/cs", t, seen_none), None);
    }

    #[test]
    fn a_terminating_pod_counts_as_deleted() {
        let t = Instant::now();
        let mut e = Expectations::default();
        e.expect_delete("k", "p", t);
        let still = |_: &str| Seen::Present {
            deleting: false,
            version: None,
        };
        assert!(e.unsatisfied("k", t, still).is_some());
        let terminating = |_: &str| Seen::Present {
            deleting: true,
            version: None,
        };
        assert_eq!(e.unsatisfied("k", t, terminating), None);
    }

    #[test]
    fn versions_wait_for_the_cache_to_catch_up() {
        let t = Instant::now();
        let mut e = Expectations::default();
        e.expect_version("k", "p", Some("42"), t);
        let at = |v: u64| {
            move |_: &str| Seen::Present {
                deleting: false,
                version: Some(v),
            }
        };
        assert!(e.unsatisfied("k", t, at(41)).is_some());
        assert_eq!(e.unsatisfied("k", t, at(43)), None);
        e.expect_version("k", "p", Some("not-a-number"), t);
        assert_eq!(e.unsatisfied("k", t, at(1)), None);
    }

    #[test]
    fn failures_and_timeouts_release_the_cloneset() {
        let t = Instant::now();
        let mut e = Expectations::default();
        e.expect_create("k", "p", t);
        e.forget("k", "p");
        assert_eq!(e.unsatisfied("k", t, |_| Seen::Absent), None);
        e.expect_create("k", "q", t);
        let left = e.unsatisfied("k", t + Duration::from_secs(100), |_| Seen::Absent);
        assert_eq!(left, Some(Duration::from_secs(200)));
        // Timed out: dropped, and a look again shortly, which plans.
        let left = e.unsatisfied("k", t + TIMEOUT, |_| Seen::Absent);
        assert_eq!(left, Some(AFTER_TIMEOUT));
        assert_eq!(e.unsatisfied("k", t + TIMEOUT, |_| Seen::Absent), None);
    }
}
