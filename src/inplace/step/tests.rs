use super::*;

#[test]
fn an_update_is_in_flight_until_gate_grace_and_batches_are_done() {
    use k8s_openapi::api::core::v1::{PodCondition, PodStatus};
    let with = |state: &str, gate: Option<&str>| {
        let mut pod = Pod::default();
        pod.metadata.annotations = Some(BTreeMap::from([(
            keys::INPLACE_UPDATE_STATE.to_string(),
            state.to_string(),
        )]));
        pod.status = Some(PodStatus {
            conditions: gate.map(|status| {
                vec![PodCondition {
                    type_: keys::INPLACE_UPDATE_READY.into(),
                    status: status.into(),
                    ..Default::default()
                }]
            }),
            ..Default::default()
        });
        pod
    };
    let done = r#"{"revision":"r1"}"#;
    let pending = r#"{"revision":"r1","nextContainerImages":{"c":"i"}}"#;
    assert_eq!(in_flight_revision(&Pod::default()), None);
    assert_eq!(in_flight_revision(&with(done, Some("True"))), None);
    assert_eq!(in_flight_revision(&with(done, None)), None);
    assert_eq!(
        in_flight_revision(&with(done, Some("False"))).as_deref(),
        Some("r1")
    );
    assert_eq!(
        in_flight_revision(&with(pending, Some("True"))).as_deref(),
        Some("r1")
    );
    let mut grace = with(done, Some("True"));
    grace.metadata.annotations.as_mut().unwrap().insert(
        keys::INPLACE_UPDATE_GRACE.to_string(),
        r#"{"revision":"r1"}"#.to_string(),
    );
    assert_eq!(in_flight_revision(&grace).as_deref(), Some("r1"));
    assert_eq!(in_flight_revision(&with("{not json", Some("False"))), None);
}

#[test]
fn requeues_round_up_to_the_millisecond() {
    assert_eq!(
        millis_up(SignedDuration::from_secs(20)),
        Duration::from_secs(20)
    );
    assert_eq!(
        millis_up(SignedDuration::from_nanos(19_000_000_001)),
        Duration::from_millis(19_001)
    );
    assert_eq!(
        millis_up(SignedDuration::from_nanos(1)),
        Duration::from_millis(1)
    );
    assert_eq!(millis_up(SignedDuration::from_secs(-1)), Duration::ZERO);
}

#[test]
fn a_whole_second_stamp_counts_from_the_next_second() {
    let whole: Timestamp = "2026-07-02T09:00:05Z".parse().unwrap();
    let exact: Timestamp = "2026-07-02T09:00:05.25Z".parse().unwrap();
    assert_eq!(
        grace_start(whole),
        "2026-07-02T09:00:06Z".parse::<Timestamp>().unwrap()
    );
    assert_eq!(grace_start(exact), exact);
}
