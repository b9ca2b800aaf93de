use super::*;
use k8s_openapi::api::core::v1::{NodeSpec, NodeStatus, Taint};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use std::collections::BTreeMap;

fn condition(type_: &str, status: &str, heartbeat: i64) -> NodeCondition {
    NodeCondition {
        type_: type_.into(),
        status: status.into(),
        last_heartbeat_time: Some(Time(
            k8s_openapi::jiff::Timestamp::from_second(heartbeat).unwrap(),
        )),
        ..Default::default()
    }
}

fn node(conditions: Vec<NodeCondition>) -> Node {
    Node {
        metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
            name: Some("n1".into()),
            resource_version: Some("1".into()),
            labels: Some(BTreeMap::from([("role".into(), "agent".into())])),
            ..Default::default()
        },
        spec: Some(NodeSpec {
            taints: Some(vec![
                Taint {
                    key: "dedicated".into(),
                    value: Some("infra".into()),
                    effect: "NoSchedule".into(),
                    time_added: None,
                },
                Taint {
                    key: "soft".into(),
                    value: None,
                    effect: "PreferNoSchedule".into(),
                    time_added: None,
                },
                Taint {
                    key: "gone".into(),
                    value: None,
                    effect: "NoExecute".into(),
                    time_added: None,
                },
            ]),
            ..Default::default()
        }),
        status: Some(NodeStatus {
            conditions: Some(conditions),
            ..Default::default()
        }),
    }
}

#[test]
fn the_summary_keeps_name_labels_and_the_placement_taints() {
    let summary = NodeSummary::of(&node(vec![]));
    assert_eq!(summary.name(), "n1");
    assert_eq!(
        summary.labels.get("role").map(String::as_str),
        Some("agent")
    );
    assert_eq!(
        summary.taints.as_ref(),
        [
            NodeTaint {
                key: "dedicated".into(),
                value: "infra".into(),
                effect: TaintEffect::NoSchedule
            },
            NodeTaint {
                key: "gone".into(),
                value: "".into(),
                effect: TaintEffect::NoExecute
            },
        ]
    );
    assert_eq!(NodeSummary::of(&Node::default()), NodeSummary::default());
}

#[test]
fn heartbeats_alone_are_ignored_anything_else_is_not() {
    let old = node(vec![
        condition("Ready", "True", 1),
        condition("MemoryPressure", "False", 1),
    ]);
    let mut beat = node(vec![
        condition("Ready", "True", 2),
        condition("MemoryPressure", "False", 2),
    ]);
    beat.metadata.resource_version = Some("2".into());
    assert!(only_heartbeat_changed(&old, &beat));

    // A condition turning True, or Ready turning False, is news.
    let pressure = node(vec![
        condition("Ready", "True", 2),
        condition("MemoryPressure", "True", 2),
    ]);
    assert!(!only_heartbeat_changed(&old, &pressure));
    let not_ready = node(vec![condition("Ready", "False", 2)]);
    assert!(!only_heartbeat_changed(&old, &not_ready));
    assert!(!only_heartbeat_changed(&not_ready, &old));
    // Ready duplicated as True in the new list: Go's map walk refuses it.
    let doubled = node(vec![
        condition("Ready", "True", 2),
        condition("Ready", "True", 3),
    ]);
    assert!(!only_heartbeat_changed(&old, &doubled));

    let mut labelled = beat.clone();
    labelled
        .metadata
        .labels
        .as_mut()
        .unwrap()
        .insert("zone".into(), "a".into());
    assert!(!only_heartbeat_changed(&old, &labelled));
    let mut cordoned = beat.clone();
    cordoned.spec.as_mut().unwrap().unschedulable = Some(true);
    assert!(!only_heartbeat_changed(&old, &cordoned));

    // No status at all reads as an empty one.
    let mut bare = old.clone();
    bare.status = None;
    let mut empty = old.clone();
    empty.status = Some(NodeStatus::default());
    assert!(only_heartbeat_changed(&bare, &empty));
    assert!(only_heartbeat_changed(&empty, &bare));
}
