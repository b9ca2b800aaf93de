use k8s_openapi::jiff::Timestamp;

use super::*;

fn at(seconds: i64) -> Time {
    Time(Timestamp::from_second(seconds).unwrap())
}

fn refusal(reason: RefusalReason, message: &str) -> Refusal {
    Refusal {
        reason,
        message: message.into(),
    }
}

fn other() -> Condition {
    Condition {
        type_: "Other".into(),
        status: "False".into(),
        reason: "Kept".into(),
        message: String::new(),
        observed_generation: None,
        last_transition_time: at(1),
    }
}

#[test]
fn a_refusal_sets_the_condition_once_and_keeps_its_start() {
    let missing = refusal(
        RefusalReason::RevisionNotFound,
        r#"controllerrevisions.apps "mesh-x" not found"#,
    );
    let change = injection_failure(&[other()], Some(&missing), Some(3), &at(10)).unwrap();
    let [kept, failure] = &change.conditions[..] else {
        panic!("{:?}", change.conditions)
    };
    assert_eq!(kept, &other());
    assert_eq!(failure.type_, "InjectionFailure");
    assert_eq!(
        (failure.status.as_str(), failure.reason.as_str()),
        ("True", "RevisionNotFound")
    );
    assert_eq!(
        failure.message,
        r#"the pod webhook refuses the new pods it matches: controllerrevisions.apps "mesh-x" not found"#
    );
    assert_eq!(
        (failure.observed_generation, &failure.last_transition_time),
        (Some(3), &at(10))
    );
    assert_eq!(change.event.type_, EventType::Warning);
    assert_eq!(change.event.reason, "RevisionNotFound");
    assert_eq!(change.event.about, Subject::SidecarSet);

    // Said already: nothing to write.
    assert!(injection_failure(&change.conditions, Some(&missing), Some(3), &at(20)).is_none());
    // Another reason: written again, the failure's start kept.
    let invalid = refusal(RefusalReason::Invalid, "spec.selector: Required value");
    let again = injection_failure(&change.conditions, Some(&invalid), Some(4), &at(30)).unwrap();
    let failure = again.conditions.last().unwrap();
    assert_eq!(failure.reason, "Invalid");
    assert!(failure.message.starts_with("the webhooks do not inject it"));
    assert_eq!(failure.last_transition_time, at(10));

    // Served again: the condition goes, the others stay, a Normal event says so.
    let cleared = injection_failure(&again.conditions, None, Some(5), &at(40)).unwrap();
    assert_eq!(cleared.conditions, [other()]);
    assert_eq!(cleared.event.type_, EventType::Normal);
    assert!(injection_failure(&cleared.conditions, None, Some(5), &at(50)).is_none());
}

#[test]
fn long_messages_are_cut() {
    let long = refusal(RefusalReason::Undecodable, &"é".repeat(2000));
    let change = injection_failure(&[], Some(&long), None, &at(1)).unwrap();
    let message = &change.conditions[0].message;
    assert!(message.len() <= 1024 && message.ends_with("..."));
}
