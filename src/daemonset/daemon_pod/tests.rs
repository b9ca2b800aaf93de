use super::*;
use crate::api::daemonset::{DaemonSetSpec, DaemonSetUpdateStrategy, RollingUpdateDaemonSet};
use k8s_openapi::api::core::v1::{Container, PodSpec, PreferredSchedulingTerm};
use serde_json::json;
use std::collections::BTreeMap;

fn seed(rolling_update_type: &str) -> DaemonSet {
    let template: PodTemplateSpec = serde_json::from_value(json!({
        "metadata": {
            "labels": {"app": "agent", "example.io/block-deleting": "true"},
            "annotations": {"note": "x"},
            "finalizers": ["example.io/hold"]
        },
        "spec": {
            "nodeSelector": {"role": "agent"},
            "containers": [{"name": "main", "image": "agent:v1"}],
            "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "infra", "effect": "NoSchedule"}],
            "affinity": {"nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
                ]},
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 1, "preference": {"matchExpressions": [{"key": "fast", "operator": "Exists"}]}}
                ]
            }}
        }
    }))
    .unwrap();
    let mut set = DaemonSet::new(
        "agent",
        DaemonSetSpec {
            template,
            update_strategy: DaemonSetUpdateStrategy {
                type_: Some("RollingUpdate".into()),
                rolling_update: Some(RollingUpdateDaemonSet {
                    rolling_update_type: Some(rolling_update_type.into()),
                    ..Default::default()
                }),
            },
            ..Default::default()
        },
    );
    set.metadata.namespace = Some("sys".into());
    set.metadata.uid = Some("uid-1".into());
    set
}

#[test]
fn ds1_the_created_pod() {
    let set = seed("Standard");
    let template = pod_template(&set, "h1");
    let pod = new_pod(&set, &template, "n1");
    let value = serde_json::to_value(&pod).unwrap();
    assert_eq!(value["metadata"]["generateName"], "agent-");
    assert!(value["metadata"].get("name").is_none());
    assert_eq!(value["metadata"]["namespace"], "sys");
    assert_eq!(
        value["metadata"]["labels"],
        json!({"app": "agent", "example.io/block-deleting": "true", "controller-revision-hash": "h1"})
    );
    assert_eq!(value["metadata"]["annotations"], json!({"note": "x"}));
    assert_eq!(value["metadata"]["finalizers"], json!(["example.io/hold"]));
    assert_eq!(
        value["metadata"]["ownerReferences"],
        json!([{"apiVersion": "apps.kruise.io/v1beta1", "kind": "DaemonSet", "name": "agent",
                "uid": "uid-1", "controller": true, "blockOwnerDeletion": true}])
    );
    let spec = &value["spec"];
    assert_eq!(spec["nodeSelector"], json!({"role": "agent"}));
    assert_eq!(
        spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"],
        json!({"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]})
    );
    assert_eq!(
        spec["affinity"]["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]["weight"],
        1
    );
    let tolerations: Vec<&str> = spec["tolerations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["key"].as_str().unwrap())
        .collect();
    assert_eq!(
        tolerations,
        [
            "dedicated",
            "node.kubernetes.io/not-ready",
            "node.kubernetes.io/unreachable",
            "node.kubernetes.io/disk-pressure",
            "node.kubernetes.io/memory-pressure",
            "node.kubernetes.io/pid-pressure",
            "node.kubernetes.io/unschedulable",
        ]
    );
    assert!(spec.get("readinessGates").is_none());
    assert!(spec.get("nodeName").is_none());
    assert_eq!(target_node(&pod), Some("n1"));
}

#[test]
fn in_place_if_possible_appends_the_gate_even_when_present() {
    let mut set = seed(IN_PLACE_IF_POSSIBLE);
    let gates = |set: &DaemonSet| {
        pod_template(set, "h")
            .spec
            .unwrap()
            .readiness_gates
            .unwrap_or_default()
            .len()
    };
    assert_eq!(gates(&set), 1);
    set.spec.template.spec.as_mut().unwrap().readiness_gates = Some(vec![PodReadinessGate {
        condition_type: keys::INPLACE_UPDATE_READY.into(),
    }]);
    assert_eq!(gates(&set), 2);
    // OnDelete, or no rollingUpdate: no gate added.
    set.spec.update_strategy.type_ = Some("OnDelete".into());
    assert_eq!(gates(&set), 1);
    let mut bare = seed(IN_PLACE_IF_POSSIBLE);
    bare.spec.update_strategy.rolling_update = None;
    assert_eq!(gates(&bare), 0);
}

#[test]
fn template_generation_labels_pods_and_counts_as_updated() {
    let mut set = seed("Standard");
    assert_eq!(template_generation(&set), None);
    set.metadata.annotations = Some(BTreeMap::from([(
        TEMPLATE_GENERATION_ANNOTATION.to_string(),
        "7".to_string(),
    )]));
    assert_eq!(template_generation(&set), Some(7));
    let labels = pod_template(&set, "h").metadata.unwrap().labels.unwrap();
    assert_eq!(
        labels.get(TEMPLATE_GENERATION_LABEL).map(String::as_str),
        Some("7")
    );

    let with = |pairs: &[(&str, &str)]| -> crate::k8s::selector::Labels {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    assert!(is_updated(
        Some(&with(&[(keys::CONTROLLER_REVISION_HASH, "h")])),
        "h",
        None
    ));
    assert!(!is_updated(
        Some(&with(&[(keys::CONTROLLER_REVISION_HASH, "g")])),
        "h",
        None
    ));
    assert!(!is_updated(
        Some(&with(&[(keys::CONTROLLER_REVISION_HASH, "")])),
        "",
        None
    ));
    assert!(is_updated(
        Some(&with(&[(TEMPLATE_GENERATION_LABEL, "7")])),
        "h",
        Some(7)
    ));
    assert!(!is_updated(
        Some(&with(&[(TEMPLATE_GENERATION_LABEL, "6")])),
        "h",
        Some(7)
    ));
    assert!(!is_updated(None, "h", Some(7)));

    set.metadata.annotations = Some(BTreeMap::from([(
        TEMPLATE_GENERATION_ANNOTATION.to_string(),
        "seven".to_string(),
    )]));
    assert_eq!(template_generation(&set), None);
}

#[test]
fn the_node_name_affinity_is_added_wherever_the_template_has_none() {
    let mut set = seed("Standard");
    set.spec.template.spec = Some(PodSpec {
        containers: vec![Container::default()],
        ..Default::default()
    });
    let pod = new_pod(&set, &pod_template(&set, "h"), "n9");
    assert_eq!(target_node(&pod), Some("n9"));
    // An affinity with only pod anti-affinity keeps it.
    set.spec.template.spec.as_mut().unwrap().affinity = Some(Affinity {
        pod_anti_affinity: Some(Default::default()),
        node_affinity: Some(NodeAffinity {
            preferred_during_scheduling_ignored_during_execution: Some(vec![
                PreferredSchedulingTerm::default(),
            ]),
            ..Default::default()
        }),
        ..Default::default()
    });
    let pod = new_pod(&set, &pod_template(&set, "h"), "n9");
    let affinity = pod.spec.as_ref().unwrap().affinity.as_ref().unwrap();
    assert!(affinity.pod_anti_affinity.is_some());
    assert!(
        affinity
            .node_affinity
            .as_ref()
            .unwrap()
            .preferred_during_scheduling_ignored_during_execution
            .is_some()
    );
    assert_eq!(target_node(&pod), Some("n9"));
}

#[test]
fn target_node_reads_node_name_first_then_the_first_name_field() {
    let mut pod = Pod::default();
    assert_eq!(target_node(&pod), None);
    pod.spec = Some(PodSpec::default());
    assert_eq!(target_node(&pod), None);
    let terms = |fields: Vec<NodeSelectorRequirement>| {
        Some(Affinity {
            node_affinity: Some(NodeAffinity {
                required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                    node_selector_terms: vec![
                        NodeSelectorTerm {
                            match_expressions: Some(vec![NodeSelectorRequirement {
                                key: NODE_NAME_FIELD.into(),
                                operator: "In".into(),
                                values: Some(vec!["label-not-field".into()]),
                            }]),
                            match_fields: None,
                        },
                        NodeSelectorTerm {
                            match_expressions: None,
                            match_fields: Some(fields),
                        },
                    ],
                }),
                ..Default::default()
            }),
            ..Default::default()
        })
    };
    let field = |operator: &str, values: &[&str]| NodeSelectorRequirement {
        key: NODE_NAME_FIELD.into(),
        operator: operator.into(),
        values: Some(values.iter().map(|v| v.to_string()).collect()),
    };
    pod.spec.as_mut().unwrap().affinity = terms(vec![field("NotIn", &["x"]), field("In", &["n2"])]);
    assert_eq!(target_node(&pod), Some("n2"));
    pod.spec.as_mut().unwrap().affinity = terms(vec![field("In", &["n2", "n3"])]);
    assert_eq!(target_node(&pod), None);
    pod.spec.as_mut().unwrap().node_name = Some("n1".into());
    assert_eq!(target_node(&pod), Some("n1"));
    pod.spec.as_mut().unwrap().node_name = Some(String::new());
    assert_eq!(target_node(&pod), None);
}

#[test]
fn a_name_too_long_for_a_dash_is_its_own_prefix() {
    assert_eq!(generate_name("agent"), "agent-");
    let long = "a".repeat(253);
    assert_eq!(generate_name(&long), long);
    let fits = "a".repeat(252);
    assert_eq!(generate_name(&fits), format!("{fits}-"));
}
