//! Each reason of the `Progressing` condition, the order they are checked in, the deadline and
//! its requeue, and the removal without a deadline (OpenKruise's `TestSyncProgressingStatus`
//! cases, on the status this project computes).

use std::time::Duration;

use super::*;
use crate::api::cloneset::CloneSetUpdateStrategy;

const T0: i64 = 1_700_000_000;

fn at(seconds: i64) -> Timestamp {
    Timestamp::from_second(T0 + seconds).unwrap()
}

fn spec(replicas: i32, deadline: Option<i32>) -> CloneSetSpec {
    CloneSetSpec {
        replicas: Some(replicas),
        progress_deadline_seconds: deadline,
        ..CloneSetSpec::default()
    }
}

fn paused(mut spec: CloneSetSpec) -> CloneSetSpec {
    spec.update_strategy = CloneSetUpdateStrategy {
        paused: Some(true),
        ..CloneSetUpdateStrategy::default()
    };
    spec
}

/// A round's status: `replicas` pods, `updated` of them at the update revision `v2`, `available`
/// of those available; `expected` = replicas - partition.
fn status(replicas: i32, updated: i32, available: i32, expected: i32) -> CloneSetStatus {
    let all_updated = updated == replicas;
    CloneSetStatus {
        replicas,
        updated_replicas: updated,
        updated_available_replicas: available,
        ready_replicas: replicas,
        available_replicas: replicas,
        expected_updated_replicas: Some(expected),
        update_revision: Some("v2".into()),
        current_revision: Some(if all_updated { "v2" } else { "v1" }.into()),
        ..CloneSetStatus::default()
    }
}

fn with(mut status: CloneSetStatus, existing: CloneSetCondition) -> CloneSetStatus {
    status.conditions = Some(vec![existing]);
    status
}

fn stored(true_: bool, reason: &str, since: i64) -> CloneSetCondition {
    CloneSetCondition {
        type_: PROGRESSING.into(),
        status: if true_ { "True" } else { "False" }.into(),
        last_update_time: Some(Time(at(since))),
        last_transition_time: Some(Time(at(since))),
        reason: Some(reason.into()),
        message: Some("stored".into()),
    }
}

fn progressing(status: &CloneSetStatus) -> (&str, &str, &str) {
    let c = condition(status).expect("a Progressing condition");
    (
        c.status.as_str(),
        c.reason.as_deref().unwrap(),
        c.message.as_deref().unwrap(),
    )
}

#[test]
fn each_reason_with_its_status_and_message() {
    let cases = [
        (
            spec(4, Some(60)),
            status(4, 4, 4, 4),
            ("True", AVAILABLE, "CloneSet is available"),
        ),
        (
            paused(spec(4, Some(60))),
            status(4, 1, 0, 4),
            ("True", PAUSED, "CloneSet is paused"),
        ),
        (
            spec(4, Some(60)),
            status(4, 2, 2, 2),
            (
                "True",
                PARTITION_AVAILABLE,
                "CloneSet has been paused due to partition ready",
            ),
        ),
        (
            spec(4, Some(60)),
            status(4, 2, 1, 4),
            ("True", UPDATED, "CloneSet is progressing"),
        ),
    ];
    for (spec, mut status, wanted) in cases {
        apply(&mut status, &spec, Some("v2"), at(0));
        assert_eq!(progressing(&status), wanted);
        let c = condition(&status).unwrap();
        assert_eq!(c.last_update_time, Some(Time(at(0))));
        assert_eq!(c.last_transition_time, Some(Time(at(0))));
    }
}

#[test]
fn reasons_are_checked_in_kruise_order() {
    // Available wins over paused.
    let mut s = status(3, 3, 3, 3);
    apply(&mut s, &paused(spec(3, Some(60))), Some("v2"), at(0));
    assert_eq!(progressing(&s).1, AVAILABLE);
    // Paused wins over partition-available and over a passed deadline.
    let mut s = with(status(4, 2, 2, 2), stored(true, UPDATED, -600));
    apply(&mut s, &paused(spec(4, Some(60))), Some("v2"), at(0));
    assert_eq!(progressing(&s).1, PAUSED);
    // Partition-available wins over a passed deadline.
    let mut s = with(status(4, 2, 2, 2), stored(true, UPDATED, -600));
    apply(&mut s, &spec(4, Some(60)), Some("v2"), at(0));
    assert_eq!(progressing(&s).1, PARTITION_AVAILABLE);
    // All pods updated but the replica count not reached: not available.
    let mut s = status(3, 3, 3, 4);
    apply(&mut s, &spec(4, Some(60)), Some("v2"), at(0));
    assert_eq!(progressing(&s).1, UPDATED);
    // The partition's share updated but not yet available: progressing.
    let mut s = status(4, 2, 1, 2);
    apply(&mut s, &spec(4, Some(60)), Some("v2"), at(0));
    assert_eq!(progressing(&s).1, UPDATED);
}

#[test]
fn the_deadline_passes_from_progressing_to_exceeded_and_the_round_asks_to_look_at_it() {
    let spec = spec(4, Some(60));
    // First round of the rollout: a new condition, a look at the deadline (+1 s of skew).
    let mut s = status(4, 1, 0, 4);
    let requeue = apply(&mut s, &spec, Some("v1"), at(0));
    assert_eq!(requeue, Some(Duration::from_secs(61)));
    let first = condition(&s).unwrap().clone();
    // Later rounds keep the condition as it is; the look comes closer.
    let mut s = with(status(4, 2, 1, 4), first.clone());
    let requeue = apply(&mut s, &spec, Some("v2"), at(45));
    assert_eq!(condition(&s), Some(&first));
    assert_eq!(requeue, Some(Duration::from_secs(16)));
    // Less than a second before: at the deadline, without the extra second.
    let mut s = with(status(4, 2, 1, 4), first.clone());
    let now = at(59)
        .checked_add(SignedDuration::from_millis(700))
        .unwrap();
    let requeue = apply(&mut s, &spec, Some("v2"), now);
    assert_eq!(requeue, Some(Duration::from_millis(300)));
    // At the deadline itself: not yet past.
    let mut s = with(status(4, 2, 1, 4), first.clone());
    apply(&mut s, &spec, Some("v2"), at(60));
    assert_eq!(progressing(&s).1, UPDATED);
    // Past it: False, with the revision in the message, and no further look.
    let mut s = with(status(4, 2, 1, 4), first.clone());
    let requeue = apply(&mut s, &spec, Some("v2"), at(61));
    assert_eq!(
        progressing(&s),
        (
            "False",
            DEADLINE_EXCEEDED,
            "CloneSet revision v2 has timed out progressing"
        )
    );
    assert_eq!(requeue, None);
    let exceeded = condition(&s).unwrap();
    assert_eq!(exceeded.last_transition_time, Some(Time(at(61))));
    assert_eq!(exceeded.last_update_time, Some(Time(at(61))));
    // The change of reason is worth a status write of its own.
    assert!(changed(Some(&with(status(4, 2, 1, 4), first)), &s));
}

#[test]
fn exceeded_stays_until_available_paused_or_a_new_revision() {
    let spec4 = spec(4, Some(60));
    let timed_out = stored(false, DEADLINE_EXCEEDED, 0);
    // More pods ready, same revision: still exceeded, the condition untouched.
    let mut s = with(status(4, 3, 3, 4), timed_out.clone());
    apply(&mut s, &spec4, Some("v2"), at(500));
    assert_eq!(condition(&s), Some(&timed_out));
    // A new update revision is a new rollout: progressing again, from now.
    let mut s = with(status(4, 0, 0, 4), timed_out.clone());
    let requeue = apply(&mut s, &spec4, Some("v1"), at(500));
    assert_eq!(progressing(&s).1, UPDATED);
    assert_eq!(
        condition(&s).unwrap().last_transition_time,
        Some(Time(at(500)))
    );
    assert_eq!(requeue, Some(Duration::from_secs(61)));
    // Available at last.
    let mut s = with(status(4, 4, 4, 4), timed_out.clone());
    apply(&mut s, &spec4, Some("v2"), at(500));
    assert_eq!(progressing(&s).1, AVAILABLE);
    // Paused.
    let mut s = with(status(4, 3, 3, 4), timed_out);
    apply(&mut s, &paused(spec4), Some("v2"), at(500));
    assert_eq!(progressing(&s).1, PAUSED);
}

/// Time spent available, paused or partition-available is not progress time: the deadline runs
/// from when the rollout (or the scale-up) started.
#[test]
fn time_available_or_paused_does_not_count_against_the_deadline() {
    let spec4 = spec(4, Some(60));
    for (true_, reason) in [
        (true, AVAILABLE),
        (true, PAUSED),
        (true, PARTITION_AVAILABLE),
    ] {
        // Scaled up (or resumed) an hour after the condition was last set.
        let mut s = with(status(4, 2, 2, 4), stored(true_, reason, 0));
        let requeue = apply(&mut s, &spec4, Some("v2"), at(3600));
        assert_eq!(
            progressing(&s),
            ("True", UPDATED, "CloneSet is progressing")
        );
        let c = condition(&s).unwrap();
        assert_eq!(c.last_update_time, Some(Time(at(3600))));
        // Same status: the transition time stays.
        assert_eq!(c.last_transition_time, Some(Time(at(0))));
        assert_eq!(requeue, Some(Duration::from_secs(61)));
    }
}

#[test]
fn no_deadline_removes_the_condition_and_keeps_the_others() {
    let failure = CloneSetCondition {
        type_: "FailedUpdate".into(),
        status: "True".into(),
        message: Some("refused".into()),
        ..CloneSetCondition::default()
    };
    for deadline in [None, Some(i32::MAX)] {
        let mut s = status(4, 2, 1, 4);
        s.conditions = Some(vec![stored(true, UPDATED, 0), failure.clone()]);
        assert_eq!(apply(&mut s, &spec(4, deadline), Some("v2"), at(10)), None);
        assert_eq!(s.conditions, Some(vec![failure.clone()]));
        let mut s = with(status(4, 2, 1, 4), stored(false, DEADLINE_EXCEEDED, 0));
        apply(&mut s, &spec(4, deadline), Some("v2"), at(10));
        assert_eq!(s.conditions, None, "nothing left: no empty list");
        assert!(changed(
            Some(&with(status(4, 2, 1, 4), stored(true, UPDATED, 0))),
            &s
        ));
    }
}

#[test]
fn a_progressing_condition_without_times_has_timed_out() {
    let mut bare = stored(true, UPDATED, 0);
    bare.last_update_time = None;
    bare.last_transition_time = None;
    let mut s = with(status(4, 2, 1, 4), bare);
    apply(&mut s, &spec(4, Some(60)), Some("v2"), at(0));
    assert_eq!(progressing(&s).1, DEADLINE_EXCEEDED);
}

#[test]
fn only_status_and_reason_changes_are_worth_a_write() {
    let before = with(status(4, 2, 1, 4), stored(true, UPDATED, 0));
    let mut message = before.clone();
    message.conditions.as_mut().unwrap()[0].message = Some("other".into());
    message.conditions.as_mut().unwrap()[0].last_update_time = Some(Time(at(9)));
    assert!(!changed(Some(&before), &message));
    assert!(!changed(None, &status(4, 2, 1, 4)));
    assert!(changed(None, &before));
    assert!(changed(Some(&before), &status(4, 2, 1, 4)));
    let reason = with(status(4, 2, 1, 4), stored(true, PAUSED, 0));
    assert!(changed(Some(&before), &reason));
    let state = with(status(4, 2, 1, 4), stored(false, UPDATED, 0));
    assert!(changed(Some(&before), &state));
}
