use super::*;

const LEASE: Duration = Duration::from_secs(15);

fn view(holder: Option<&str>, renewed: Option<i64>, duration: Option<i32>) -> LeaseView {
    LeaseView {
        holder: holder.map(str::to_string),
        renew_time: renewed.map(|s| Timestamp::from_second(1_700_000_000 + s).unwrap()),
        duration_seconds: duration,
        transitions: None,
    }
}

/// `lease` first seen at `t0`, decided `seconds` later.
fn decide_after(lease: LeaseView, seconds: u64, t0: Instant) -> LeaseDecision {
    let observed = observe(None, lease, t0);
    decide(&observed, "me", t0 + Duration::from_secs(seconds), LEASE)
}

#[test]
fn free_lease_is_taken() {
    let t0 = Instant::now();
    assert_eq!(
        decide_after(view(None, None, None), 0, t0),
        LeaseDecision::Acquire
    );
    assert_eq!(
        decide_after(view(None, Some(0), Some(15)), 1, t0),
        LeaseDecision::Acquire
    );
}

#[test]
fn own_lease_is_renewed_even_if_expired() {
    assert_eq!(
        decide_after(view(Some("me"), Some(0), Some(15)), 100, Instant::now()),
        LeaseDecision::Renew
    );
}

#[test]
fn a_foreign_lease_is_followed_until_unchanged_for_its_duration() {
    let t0 = Instant::now();
    let lease = view(Some("other"), Some(0), Some(15));
    assert_eq!(
        decide_after(lease.clone(), 15, t0),
        LeaseDecision::Follow {
            holder_expires: t0 + LEASE
        }
    );
    assert_eq!(decide_after(lease, 16, t0), LeaseDecision::Acquire);
}

#[test]
fn each_change_restarts_the_count_and_a_reread_without_change_does_not() {
    let t0 = Instant::now();
    let first = observe(None, view(Some("other"), Some(0), Some(15)), t0);
    let same = observe(
        Some(&first),
        view(Some("other"), Some(0), Some(15)),
        t0 + Duration::from_secs(10),
    );
    assert_eq!(same.changed_at, t0);
    let renewed = observe(
        Some(&same),
        view(Some("other"), Some(2), Some(15)),
        t0 + Duration::from_secs(12),
    );
    assert_eq!(renewed.changed_at, t0 + Duration::from_secs(12));
    assert_eq!(
        decide(&renewed, "me", t0 + Duration::from_secs(20), LEASE),
        LeaseDecision::Follow {
            holder_expires: t0 + Duration::from_secs(27)
        }
    );
}

#[test]
fn the_holders_clock_does_not_matter() {
    let t0 = Instant::now();
    // Renewed "a year ago" or "in a year" by the holder's clock: only changes count.
    for renewed in [-365 * 86_400, 365 * 86_400] {
        let lease = view(Some("other"), Some(renewed), Some(15));
        assert!(matches!(
            decide_after(lease.clone(), 5, t0),
            LeaseDecision::Follow { .. }
        ));
        assert_eq!(decide_after(lease, 16, t0), LeaseDecision::Acquire);
    }
}

#[test]
fn missing_or_zero_duration_uses_the_default() {
    let t0 = Instant::now();
    let lease = view(Some("other"), Some(0), None);
    assert!(matches!(
        decide_after(lease.clone(), 10, t0),
        LeaseDecision::Follow { .. }
    ));
    assert_eq!(decide_after(lease, 16, t0), LeaseDecision::Acquire);
    let zero = view(Some("other"), Some(0), Some(0));
    assert!(matches!(
        decide_after(zero, 10, t0),
        LeaseDecision::Follow { .. }
    ));
}

#[test]
fn released_lease_expires_after_one_second() {
    let lease = view(Some("other"), Some(0), Some(1));
    assert_eq!(
        decide_after(lease, 2, Instant::now()),
        LeaseDecision::Acquire
    );
}

#[test]
fn a_leader_leads_only_within_the_renew_deadline() {
    let t0 = Instant::now();
    let deadline = Duration::from_secs(10);
    assert!(!leads(None, t0, deadline));
    assert!(leads(Some(t0), t0 + Duration::from_secs(9), deadline));
    assert!(!leads(Some(t0), t0 + Duration::from_secs(10), deadline));
    // Stepping down happens before anyone else may take over.
    assert!(deadline < LEASE);
    let config = LeaseConfig::new("l", "ns", "me");
    assert!(config.renew_deadline < config.lease_duration);
    assert!(config.renew_period < config.renew_deadline);
}

/// The defect of an elector that never led again: once the deadline had passed, every later
/// round was given a deadline already over and timed out without asking the apiserver.
#[test]
fn a_round_after_a_missed_deadline_gets_a_whole_round() {
    let config = LeaseConfig::new("l", "ns", "me");
    let renewed = Instant::now();
    for late in [10, 11, 30, 3600] {
        let started = renewed + Duration::from_secs(late);
        assert_eq!(
            current_renewal(Some(renewed), started, config.renew_deadline),
            None
        );
        assert_eq!(
            round_end(started, Some(renewed), &config),
            started + config.renew_period,
            "{late} s after the renewal"
        );
    }
    // Within the deadline a round ends at the deadline if that comes first.
    let started = renewed + Duration::from_secs(9);
    assert_eq!(
        round_end(started, Some(renewed), &config),
        renewed + config.renew_deadline
    );
    let started = renewed + Duration::from_secs(1);
    assert_eq!(
        round_end(started, Some(renewed), &config),
        started + config.renew_period
    );
    assert_eq!(
        round_end(started, None, &config),
        started + config.renew_period
    );
}

#[test]
fn health_says_who_leads_and_how_recent_the_renewal_is() {
    let health = LeaseHealth::new();
    let t0 = std::time::Instant::now();
    assert_eq!(health.describe(t0), "lease: no election round yet");
    assert_eq!(health.stalled(t0), None);
    health.started(t0);
    health.round(t0, true, true, Some("me".into()), None);
    assert_eq!(
        health.describe(t0 + Duration::from_millis(1500)),
        "lease: leading, last renewal 1.5 s ago"
    );
    health.round(
        t0 + Duration::from_secs(12),
        false,
        false,
        None,
        Some("no answer".into()),
    );
    assert_eq!(
        health.describe(t0 + Duration::from_secs(12)),
        "lease: not leading, last renewal 12.0 s ago; last round failed 0.0 s ago: no answer"
    );
    health.round(
        t0 + Duration::from_secs(14),
        false,
        false,
        Some("other".into()),
        None,
    );
    assert_eq!(
        health.describe(t0 + Duration::from_secs(14)),
        "lease: not leading, held by other (seen 0.0 s ago); last renewal 14.0 s ago"
    );
    assert_eq!(health.stalled(t0 + Duration::from_secs(70)), None);
    assert_eq!(
        health.stalled(t0 + Duration::from_secs(80)).as_deref(),
        Some("leader election stalled: no round for 66 s")
    );
}

#[test]
fn view_treats_empty_holder_as_free_and_falls_back_to_acquire_time() {
    let at = Timestamp::from_second(1_700_000_003).unwrap();
    let lease = Lease {
        spec: Some(LeaseSpec {
            holder_identity: Some(String::new()),
            acquire_time: Some(MicroTime(at)),
            ..Default::default()
        }),
        ..Default::default()
    };
    let v = LeaseView::of(&lease);
    assert_eq!(v.holder, None);
    assert_eq!(v.renew_time, Some(at));
}

#[test]
fn acquire_counts_a_transition_and_renew_does_not() {
    let at = |s: i64| Timestamp::from_second(1_700_000_000 + s).unwrap();
    let config = LeaseConfig::new("l", "ns", "me");
    let current = Lease {
        spec: Some(LeaseSpec {
            holder_identity: Some("other".into()),
            lease_transitions: Some(4),
            acquire_time: Some(MicroTime(at(0))),
            ..Default::default()
        }),
        ..Default::default()
    };
    let taken = next_lease(&current, LeaseDecision::Acquire, &config, at(20)).unwrap();
    let spec = taken.spec.as_ref().unwrap();
    assert_eq!(spec.holder_identity.as_deref(), Some("me"));
    assert_eq!(spec.lease_transitions, Some(5));
    assert_eq!(spec.acquire_time, Some(MicroTime(at(20))));
    assert_eq!(spec.lease_duration_seconds, Some(15));

    let renewed = next_lease(&taken, LeaseDecision::Renew, &config, at(25)).unwrap();
    let spec = renewed.spec.as_ref().unwrap();
    assert_eq!(spec.lease_transitions, Some(5));
    assert_eq!(spec.acquire_time, Some(MicroTime(at(20))));
    assert_eq!(spec.renew_time, Some(MicroTime(at(25))));
    assert!(
        next_lease(
            &taken,
            LeaseDecision::Follow {
                holder_expires: Instant::now()
            },
            &config,
            at(25)
        )
        .is_none()
    );
}

/// The elector against a fake apiserver.
mod shell;
