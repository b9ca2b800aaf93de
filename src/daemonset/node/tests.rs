use super::*;
use k8s_openapi::api::core::v1::{NodeCondition, NodeSpec, NodeStatus, Taint};
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
fn heartbeats_and_status_leave_the_summary_alone_labels_and_taints_do_not() {
    let old = node(vec![condition("Ready", "True", 1)]);
    let mut beat = node(vec![condition("Ready", "False", 2)]);
    beat.metadata.resource_version = Some("2".into());
    beat.spec.as_mut().unwrap().unschedulable = Some(true);
    assert_eq!(NodeSummary::of(&old), NodeSummary::of(&beat));

    let mut labelled = old.clone();
    labelled
        .metadata
        .labels
        .as_mut()
        .unwrap()
        .insert("zone".into(), "a".into());
    assert_ne!(NodeSummary::of(&old), NodeSummary::of(&labelled));
    let mut tainted = old.clone();
    tainted
        .spec
        .as_mut()
        .unwrap()
        .taints
        .as_mut()
        .unwrap()
        .push(Taint {
            key: "node.kubernetes.io/not-ready".into(),
            value: None,
            effect: "NoExecute".into(),
            time_added: None,
        });
    assert_ne!(NodeSummary::of(&old), NodeSummary::of(&tainted));
    // A PreferNoSchedule taint does not matter to placement.
    let mut soft = old.clone();
    soft.spec
        .as_mut()
        .unwrap()
        .taints
        .as_mut()
        .unwrap()
        .push(Taint {
            key: "other".into(),
            value: None,
            effect: "PreferNoSchedule".into(),
            time_added: None,
        });
    assert_eq!(NodeSummary::of(&old), NodeSummary::of(&soft));
}

#[test]
fn a_pruned_node_keeps_its_summary_identity_and_version_only() {
    let mut whole: Node = serde_json::from_value(serde_json::json!({
        "metadata": {
            "name": "n1", "uid": "u1", "resourceVersion": "7",
            "labels": {"role": "agent", "topology.kubernetes.io/zone": "a"},
            "annotations": {"node.alpha.kubernetes.io/ttl": "0"},
            "managedFields": [{"manager": "kubelet", "operation": "Update", "apiVersion": "v1"}]
        },
        "spec": {
            "podCIDR": "10.0.1.0/24", "providerID": "aws:///a/i-1", "unschedulable": true,
            "taints": [{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}]
        },
        "status": {
            "conditions": [{"type": "Ready", "status": "True"}],
            "capacity": {"cpu": "8"},
            "addresses": [{"type": "InternalIP", "address": "172.20.0.1"}],
            "images": [{"names": ["registry.example.com/app@sha256:00", "registry.example.com/app:v1"], "sizeBytes": 1}]
        }
    }))
    .unwrap();
    let summary = NodeSummary::of(&whole);
    prune(&mut whole);
    assert_eq!(NodeSummary::of(&whole), summary);
    assert_eq!(
        serde_json::to_value(&whole).unwrap(),
        serde_json::json!({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {
                "name": "n1", "uid": "u1", "resourceVersion": "7",
                "labels": {"role": "agent", "topology.kubernetes.io/zone": "a"}
            },
            "spec": {"taints": [{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}]}
        })
    );
}
