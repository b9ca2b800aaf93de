use super::*;
use crate::api::daemonset::{DaemonSetSpec, DaemonSetUpdateStrategy, RollingUpdateDaemonSet};
use crate::daemonset::node::NodeTaint;
use k8s_openapi::api::core::v1::{PodTemplateSpec, Toleration};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

fn node(name: &str, labels: &[(&str, &str)], taints: &[(&str, &str, TaintEffect)]) -> NodeSummary {
    NodeSummary {
        name: name.into(),
        labels: labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        taints: taints
            .iter()
            .map(|(k, v, effect)| NodeTaint {
                key: (*k).into(),
                value: (*v).into(),
                effect: *effect,
            })
            .collect(),
    }
}

fn spec_with(tolerations: Vec<Toleration>) -> PodSpec {
    PodSpec {
        tolerations: (!tolerations.is_empty()).then_some(tolerations),
        ..Default::default()
    }
}

fn exists(key: &str, effect: Option<&str>) -> Toleration {
    Toleration {
        key: Some(key.into()),
        operator: Some("Exists".into()),
        effect: effect.map(str::to_string),
        ..Default::default()
    }
}

const RUN: Fit = Fit {
    should_run: true,
    should_continue_running: true,
};
const KEEP: Fit = Fit {
    should_run: false,
    should_continue_running: true,
};

#[test]
fn ds1_the_seed_nodes() {
    let mut spec = spec_with(vec![]);
    spec.node_selector = Some([("role".to_string(), "agent".to_string())].into());
    let placement = Placement::of_spec(&spec);
    let n1 = node("n1", &[("role", "agent")], &[]);
    let n2 = node(
        "n2",
        &[("role", "agent")],
        &[("dedicated", "infra", TaintEffect::NoSchedule)],
    );
    let n3 = node("n3", &[], &[]);
    assert_eq!(placement.fit(&n1), RUN);
    assert_eq!(placement.fit(&n2), KEEP);
    assert_eq!(placement.fit(&n3), Fit::NO);
}

#[test]
fn ds4_no_schedule_taints_against_tolerations() {
    let n1 = node("n1", &[], &[("k", "v", TaintEffect::NoSchedule)]);
    assert_eq!(Placement::of_spec(&spec_with(vec![])).fit(&n1), KEEP);
    assert_eq!(
        Placement::of_spec(&spec_with(vec![exists("k", None)])).fit(&n1),
        RUN
    );
    let wrong_value = Toleration {
        key: Some("k".into()),
        operator: Some("Equal".into()),
        value: Some("w".into()),
        ..Default::default()
    };
    assert_eq!(
        Placement::of_spec(&spec_with(vec![wrong_value])).fit(&n1),
        KEEP
    );
}

#[test]
fn ds5_no_execute_taints_evict_unless_tolerated() {
    let n1 = node("n1", &[], &[("k", "v", TaintEffect::NoExecute)]);
    assert_eq!(Placement::of_spec(&spec_with(vec![])).fit(&n1), Fit::NO);
    let mut with_seconds = exists("k", Some("NoExecute"));
    with_seconds.toleration_seconds = Some(60);
    assert_eq!(
        Placement::of_spec(&spec_with(vec![with_seconds])).fit(&n1),
        RUN
    );
    // Tolerated NoExecute but untolerated NoSchedule: stays, no new pod.
    let both = node(
        "n1",
        &[],
        &[
            ("k", "v", TaintEffect::NoExecute),
            ("s", "", TaintEffect::NoSchedule),
        ],
    );
    assert_eq!(
        Placement::of_spec(&spec_with(vec![exists("k", None)])).fit(&both),
        KEEP
    );
}

#[test]
fn ds6_ds7_default_tolerations_place_on_cordoned_and_troubled_nodes() {
    let placement = Placement::of_spec(&spec_with(vec![]));
    let cordoned = node(
        "n",
        &[],
        &[(
            "node.kubernetes.io/unschedulable",
            "",
            TaintEffect::NoSchedule,
        )],
    );
    assert_eq!(placement.fit(&cordoned), RUN);
    for key in [
        "node.kubernetes.io/disk-pressure",
        "node.kubernetes.io/memory-pressure",
        "node.kubernetes.io/pid-pressure",
    ] {
        assert_eq!(
            placement.fit(&node("n", &[], &[(key, "", TaintEffect::NoSchedule)])),
            RUN
        );
    }
    // The node lifecycle controller's taints: kept, not placed, on NoSchedule.
    let not_ready = node(
        "n",
        &[],
        &[
            ("node.kubernetes.io/not-ready", "", TaintEffect::NoSchedule),
            ("node.kubernetes.io/not-ready", "", TaintEffect::NoExecute),
        ],
    );
    assert_eq!(placement.fit(&not_ready), KEEP);
    let unreachable = node(
        "n",
        &[],
        &[("node.kubernetes.io/unreachable", "", TaintEffect::NoExecute)],
    );
    assert_eq!(placement.fit(&unreachable), RUN);
    // network-unavailable only with hostNetwork.
    let network = node(
        "n",
        &[],
        &[(
            "node.kubernetes.io/network-unavailable",
            "",
            TaintEffect::NoSchedule,
        )],
    );
    assert_eq!(placement.fit(&network), KEEP);
    let mut host = spec_with(vec![]);
    host.host_network = Some(true);
    assert_eq!(Placement::of_spec(&host).fit(&network), RUN);
}

#[test]
fn the_template_node_name_pins_the_pod() {
    let mut spec = spec_with(vec![]);
    spec.node_name = Some("n2".into());
    let placement = Placement::of_spec(&spec);
    assert_eq!(placement.fit(&node("n1", &[], &[])), Fit::NO);
    assert_eq!(placement.fit(&node("n2", &[], &[])), RUN);
    // Affinity decides before taints: an unmatched node is (false, false) whatever its taints.
    let mut selecting = spec_with(vec![]);
    selecting.node_selector = Some([("a".to_string(), "b".to_string())].into());
    let tainted = node("n", &[], &[("k", "", TaintEffect::NoExecute)]);
    assert_eq!(Placement::of_spec(&selecting).fit(&tainted), Fit::NO);
}

fn set_with_selector(type_: &str, selector: Option<LabelSelector>) -> DaemonSet {
    DaemonSet::new(
        "agent",
        DaemonSetSpec {
            template: PodTemplateSpec::default(),
            update_strategy: DaemonSetUpdateStrategy {
                type_: Some(type_.into()),
                rolling_update: Some(RollingUpdateDaemonSet {
                    selector,
                    ..Default::default()
                }),
            },
            ..Default::default()
        },
    )
}

#[test]
fn the_rolling_update_selector_chooses_nodes() {
    let canary = LabelSelector {
        match_labels: Some([("canary".to_string(), "true".to_string())].into()),
        ..Default::default()
    };
    let n = node("n", &[("canary", "true")], &[]);
    let other = node("m", &[], &[]);
    let set = set_with_selector("RollingUpdate", Some(canary.clone()));
    assert!(selected_for_update(&set, &n));
    assert!(!selected_for_update(&set, &other));
    assert!(!selected_for_update(
        &set_with_selector("OnDelete", Some(canary)),
        &n
    ));
    assert!(!selected_for_update(
        &set_with_selector("RollingUpdate", None),
        &n
    ));
    let empty = set_with_selector("RollingUpdate", Some(LabelSelector::default()));
    assert!(!selected_for_update(&empty, &n));
}

#[test]
fn placement_of_a_daemonset_reads_its_template() {
    let mut set = set_with_selector("RollingUpdate", None);
    set.spec.template.spec = Some(spec_with(vec![exists("k", None)]));
    let n = node("n", &[], &[("k", "", TaintEffect::NoSchedule)]);
    assert_eq!(Placement::of(&set).fit(&n), RUN);
    set.spec.template.spec = None;
    assert_eq!(Placement::of(&set).fit(&n), KEEP);
}
