use super::*;
use kube::runtime::events::EventType;

#[test]
fn an_event_told_once_is_named_by_its_object_and_cause() {
    let name = once_event_name("web-0", "mesh/uid-1");
    assert!(name.starts_with("web-0."), "{name}");
    assert_eq!(name.len(), "web-0.".len() + 16);
    assert_eq!(name, once_event_name("web-0", "mesh/uid-1"));
    assert_ne!(name, once_event_name("web-0", "mesh/uid-2"));
    assert_ne!(name, once_event_name("web-0", "other/uid-1"));
}

#[test]
fn a_long_object_name_is_cut_to_a_valid_event_name() {
    let long = format!("{}-{}", "a".repeat(235), "b".repeat(17));
    let name = once_event_name(&long, "mesh/uid");
    assert!(name.len() <= 253, "{}", name.len());
    // Cut right after the dash: the label before the digest does not end with it.
    assert!(!name.contains("-."), "{name}");
    assert_eq!(once_event_name("", "c").len(), 16);
}

#[test]
fn the_event_told_once_is_filled_as_kubes_recorder_fills_it() {
    let reporter = Reporter {
        controller: "sidecarset-controller".into(),
        instance: Some("replica-1".into()),
    };
    let reference = ObjectReference {
        api_version: Some("v1".into()),
        kind: Some("Pod".into()),
        name: Some("web-0".into()),
        namespace: Some("shop".into()),
        uid: Some("uid-1".into()),
        ..ObjectReference::default()
    };
    let event = Event {
        type_: EventType::Warning,
        reason: "SidecarsMissing".into(),
        note: Some("n".into()),
        action: "Inject".into(),
        secondary: None,
    };
    let once = once_event(
        &reporter,
        &reference,
        &event,
        "mesh/uid-1",
        Timestamp::UNIX_EPOCH,
    );
    assert_eq!(once.metadata.namespace.as_deref(), Some("shop"));
    assert_eq!(
        once.metadata.name,
        Some(once_event_name("web-0", "mesh/uid-1"))
    );
    assert_eq!(once.regarding, Some(reference));
    assert_eq!(once.type_.as_deref(), Some("Warning"));
    assert_eq!(
        once.reporting_controller.as_deref(),
        Some("sidecarset-controller")
    );
    assert_eq!(once.reporting_instance.as_deref(), Some("replica-1"));
    assert_eq!(once.event_time, Some(MicroTime(Timestamp::UNIX_EPOCH)));
}
