//! Expectations: what releases them, and their clock.

use super::*;

#[test]
fn creates_wait_for_the_pod_and_deletes_for_its_absence() {
    let t = Instant::now();
    let mut e = Expectations::default();
    e.expect_create("ns/cs", "cs-a");
    e.expect_delete("ns/cs", "cs-b");
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
    e.expect_delete("k", "p");
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
    e.expect_version("k", "p", Some("42"));
    let at = |v: u64| {
        move |_: &str| Seen::Present {
            deleting: false,
            version: Some(v),
        }
    };
    assert!(e.unsatisfied("k", t, at(41)).is_some());
    assert_eq!(e.unsatisfied("k", t, at(43)), None);
    e.expect_version("k", "p", Some("not-a-number"));
    assert_eq!(e.unsatisfied("k", t, at(1)), None);
}

#[test]
fn failures_and_timeouts_release_the_cloneset() {
    let t = Instant::now();
    let timeouts = prometheus_client::metrics::counter::Counter::default();
    let mut e = Expectations::counting_timeouts(timeouts.clone());
    e.expect_create("k", "p");
    e.forget("k", "p");
    assert_eq!(e.unsatisfied("k", t, |_| Seen::Absent), None);
    e.expect_create("k", "q");
    assert_eq!(e.unsatisfied("k", t, |_| Seen::Absent), Some(TIMEOUT));
    let left = e.unsatisfied("k", t + Duration::from_secs(100), |_| Seen::Absent);
    assert_eq!(left, Some(Duration::from_secs(200)));
    // Timed out: dropped, and a look again shortly, which plans.
    assert_eq!(timeouts.get(), 0);
    let left = e.unsatisfied("k", t + TIMEOUT, |_| Seen::Absent);
    assert_eq!(left, Some(AFTER_TIMEOUT));
    assert_eq!(timeouts.get(), 1, "the timeout is counted");
    assert_eq!(e.unsatisfied("k", t + TIMEOUT, |_| Seen::Absent), None);
    assert_eq!(timeouts.get(), 1);
}

#[test]
fn the_clock_starts_at_the_first_unsatisfied_check() {
    let t = Instant::now();
    let mut e = Expectations::default();
    // Expected long before anyone looks (a reconcile that wrote, then a quiet CloneSet).
    e.expect_create("k", "p");
    let first_look = t + TIMEOUT * 2;
    assert_eq!(
        e.unsatisfied("k", first_look, |_| Seen::Absent),
        Some(TIMEOUT)
    );
    let later = first_look + Duration::from_secs(60);
    assert_eq!(
        e.unsatisfied("k", later, |_| Seen::Absent),
        Some(TIMEOUT - Duration::from_secs(60))
    );
    assert_eq!(
        e.unsatisfied("k", first_look + TIMEOUT, |_| Seen::Absent),
        Some(AFTER_TIMEOUT)
    );
}

#[test]
fn a_satisfied_check_stops_the_clock() {
    let t = Instant::now();
    let mut e = Expectations::default();
    e.expect_create("k", "p");
    assert!(e.unsatisfied("k", t, |_| Seen::Absent).is_some());
    e.observe("k", "p", Told::Exists);
    assert_eq!(e.unsatisfied("k", t, |_| Seen::Absent), None);
    // New writes much later wait their full time again.
    e.expect_create("k", "q");
    let later = t + TIMEOUT * 3;
    assert_eq!(e.unsatisfied("k", later, |_| Seen::Absent), Some(TIMEOUT));
}

#[test]
fn a_pod_created_and_deleted_between_two_looks_releases_its_create() {
    let t = Instant::now();
    let mut e = Expectations::default();
    e.expect_create("k", "p");
    // The cache shows nothing, as before the create; the delete event says it existed.
    e.observe("k", "p", Told::Deleted);
    assert_eq!(e.unsatisfied("k", t, |_| Seen::Absent), None);
}

#[test]
fn events_release_what_they_show() {
    let t = Instant::now();
    // The cache, lagging: it still shows every pod as before the writes.
    let stale = |_: &str| Seen::Present {
        deleting: false,
        version: Some(1),
    };
    let mut e = Expectations::default();
    e.expect_delete("k", "gone");
    e.expect_delete("k", "going");
    e.expect_version("k", "written", Some("5"));
    e.observe("k", "gone", Told::Exists);
    e.observe("k", "going", Told::Deleting);
    // An event of an existing pod does not answer its delete; a deleting one does.
    assert!(e.unsatisfied("k", t, stale).is_some());
    e.observe("k", "written", Told::Deleting);
    e.observe("k", "gone", Told::Deleted);
    // The version waits on while the pod is there; its delete event drops it (§5.2).
    assert!(e.unsatisfied("k", t, stale).is_some());
    e.observe("k", "written", Told::Deleted);
    assert_eq!(e.unsatisfied("k", t, stale), None);
    // Events of CloneSets or pods nobody waits for change nothing.
    e.observe("other", "p", Told::Deleted);
    assert_eq!(e.unsatisfied("other", t, stale), None);
}
