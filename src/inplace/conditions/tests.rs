use super::*;
use k8s_openapi::api::core::v1::{PodReadinessGate, PodSpec};

fn at(second: i64) -> Timestamp {
    Timestamp::from_second(second).expect("test time")
}

fn condition(type_: &str, status: &str, second: i64) -> PodCondition {
    PodCondition {
        type_: type_.into(),
        status: status.into(),
        last_transition_time: Some(Time(at(second))),
        ..Default::default()
    }
}

fn pod(gates: &[&str], conditions: Vec<PodCondition>) -> Pod {
    Pod {
        spec: Some(PodSpec {
            readiness_gates: Some(
                gates
                    .iter()
                    .map(|g| PodReadinessGate {
                        condition_type: g.to_string(),
                    })
                    .collect(),
            ),
            ..Default::default()
        }),
        status: Some(PodStatus {
            conditions: Some(conditions),
            ..Default::default()
        }),
        ..Default::default()
    }
}

#[test]
fn not_ready_flips_ready_with_every_gate_message() {
    let before = pod(
        &[keys::INPLACE_UPDATE_READY, "custom"],
        vec![
            condition("Ready", "True", 1),
            condition("ContainersReady", "True", 1),
            condition(keys::INPLACE_UPDATE_READY, "True", 1),
        ],
    );
    let after = mark_not_ready(&before, at(100)).expect("a write");
    let gate = pod_condition(&after, keys::INPLACE_UPDATE_READY).unwrap();
    assert_eq!(gate.status, "False");
    assert_eq!(gate.reason.as_deref(), Some("StartInPlaceUpdate"));
    assert_eq!(gate.last_transition_time, Some(Time(at(100))));
    let ready = pod_condition(&after, "Ready").unwrap();
    assert_eq!(ready.status, "False");
    assert_eq!(ready.reason.as_deref(), Some("ReadinessGatesNotReady"));
    assert_eq!(
        ready.message.as_deref(),
        Some(
            "the status of pod readiness gate \"InPlaceUpdateReady\" is not \"True\", but False, corresponding condition of pod readiness gate \"custom\" does not exist."
        )
    );
    assert_eq!(ready.last_transition_time, Some(Time(at(100))));
}

#[test]
fn ready_left_alone_unless_containers_ready() {
    let before = pod(
        &[keys::INPLACE_UPDATE_READY],
        vec![
            condition("Ready", "True", 1),
            condition("ContainersReady", "False", 1),
        ],
    );
    let after = mark_not_ready(&before, at(100)).expect("gate condition appended");
    assert_eq!(pod_condition(&after, "Ready").unwrap().status, "True");
    let no_ready = pod(
        &[keys::INPLACE_UPDATE_READY],
        vec![condition("ContainersReady", "True", 1)],
    );
    let after = mark_not_ready(&no_ready, at(100)).unwrap();
    assert!(pod_condition(&after, "Ready").is_none());
}

#[test]
fn same_status_keeps_reason_and_time() {
    let mut existing = condition(keys::INPLACE_UPDATE_READY, "False", 5);
    existing.reason = Some("Other".into());
    let before = pod(&[keys::INPLACE_UPDATE_READY], vec![existing.clone()]);
    assert_eq!(mark_not_ready(&before, at(100)), None);
}

#[test]
fn no_gate_no_condition() {
    let before = pod(&[], vec![]);
    assert_eq!(mark_not_ready(&before, at(1)), None);
    assert_eq!(mark_ready(&before, at(1)), None);
}

#[test]
fn ready_replaces_false_and_skips_true() {
    let before = pod(
        &[keys::INPLACE_UPDATE_READY],
        vec![{
            let mut c = condition(keys::INPLACE_UPDATE_READY, "False", 5);
            c.reason = Some("StartInPlaceUpdate".into());
            c
        }],
    );
    let after = mark_ready(&before, at(9)).unwrap();
    assert_eq!(
        pod_condition(&after, keys::INPLACE_UPDATE_READY),
        Some(&condition(keys::INPLACE_UPDATE_READY, "True", 9))
    );
    assert_eq!(mark_ready(&after, at(10)), None);
}

#[test]
fn marks_not_ready_answers_whether_mark_not_ready_writes() {
    let statuses = [None, Some("True"), Some("False"), Some("Unknown")];
    for gates in [
        &[][..],
        &[keys::INPLACE_UPDATE_READY][..],
        &[keys::INPLACE_UPDATE_READY, "custom"][..],
    ] {
        for gate in statuses {
            for ready in statuses {
                for containers in statuses {
                    for custom in statuses {
                        let mut conditions = Vec::new();
                        for (type_, status) in [
                            (keys::INPLACE_UPDATE_READY, gate),
                            ("Ready", ready),
                            ("ContainersReady", containers),
                            ("custom", custom),
                        ] {
                            if let Some(status) = status {
                                conditions.push(condition(type_, status, 1));
                            }
                        }
                        let before = pod(gates, conditions);
                        assert_eq!(
                            marks_not_ready(&before, at(100)),
                            mark_not_ready(&before, at(100)).is_some(),
                            "{before:?}"
                        );
                    }
                }
            }
        }
    }
}
