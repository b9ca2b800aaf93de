//! The DaemonSet plan: what the partition keeps, what pauses and blocks it, where a pod cannot
//! go, and random changes whose verdict is what settling the simulation says, every round within
//! the budgets.

use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::daemonset::node::{NodeTaint, TaintEffect};
use crate::defaults::workload::default_daemonset;
use crate::workload::simulation;

fn daemonset(image: &str, rolling: &Value) -> DaemonSet {
    let mut set: DaemonSet = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": "sys", "uid": "ds-uid", "generation": 1},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {
                "metadata": {"labels": {"app": "agent"}},
                "spec": {"containers": [{"name": "main", "image": image}]}
            },
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": rolling}
        }
    }))
    .unwrap();
    default_daemonset(&mut set);
    set
}

fn change(rolling: Value, nodes: Vec<NodeSummary>, never_ready: &[String]) -> Report {
    let current = daemonset("agent:v1", &rolling);
    let changed = daemonset("agent:v2", &rolling);
    let given = "test nodes".to_string();
    plan(
        changed,
        Some(current),
        Vec::new(),
        Vec::new(),
        nodes,
        given,
        never_ready,
        300,
    )
    .unwrap()
}

fn reasons(report: &Report) -> Vec<String> {
    match &report.verdict {
        Verdict::Blocked { reasons, .. } => reasons.clone(),
        Verdict::Completes { .. } => Vec::new(),
    }
}

fn node_names(names: &[String]) -> Vec<&str> {
    names
        .iter()
        .map(|n| n.split_once(" on ").unwrap().1)
        .collect()
}

#[test]
fn a_rollout_recreates_the_pod_of_every_node_and_completes() {
    let report = change(json!({"maxUnavailable": 1}), plain_nodes(3), &[]);
    assert!(report.verdict.completes(), "{report:?}");
    let mut recreated: Vec<&str> = report
        .rounds
        .iter()
        .flat_map(|r| node_names(&r.recreated))
        .collect();
    recreated.sort_unstable();
    assert_eq!(recreated, ["node-0", "node-1", "node-2"]);
}

#[test]
fn a_surge_creates_beside_the_old_pod_first() {
    let report = change(
        json!({"maxUnavailable": 0, "maxSurge": 1}),
        plain_nodes(2),
        &[],
    );
    assert!(report.verdict.completes(), "{report:?}");
    assert_eq!(report.rounds[0].surged.len(), 1, "{report:?}");
    assert_eq!(report.rounds[0].total, 3);
}

#[test]
fn the_partition_keeps_the_pods_of_some_nodes() {
    let report = change(
        json!({"maxUnavailable": 1, "partition": 2}),
        plain_nodes(3),
        &[],
    );
    let reasons = reasons(&report);
    assert_eq!(reasons.len(), 1, "{reasons:?}");
    assert!(
        reasons[0].starts_with("updateStrategy.rollingUpdate.partition 2 keeps the pods of nodes "),
        "{reasons:?}"
    );
    assert_eq!(report.rounds.last().unwrap().updated, 1);
}

#[test]
fn a_paused_set_updates_nothing_and_says_so() {
    let report = change(
        json!({"maxUnavailable": 1, "paused": true}),
        plain_nodes(3),
        &[],
    );
    assert!(report.rounds.is_empty(), "{report:?}");
    assert_eq!(
        reasons(&report),
        ["updateStrategy.rollingUpdate.paused is true: no pod is updated"]
    );
}

#[test]
fn a_pod_that_never_comes_up_holds_the_budget() {
    let first = change(json!({"maxUnavailable": 1}), plain_nodes(3), &[]);
    let new_pod = first.rounds[1].created[0]
        .split_once(" on ")
        .unwrap()
        .0
        .to_string();
    let report = change(
        json!({"maxUnavailable": 1}),
        plain_nodes(3),
        std::slice::from_ref(&new_pod),
    );
    let reasons = reasons(&report);
    assert_eq!(reasons.len(), 1, "{reasons:?}");
    assert!(
        reasons[0].starts_with(&format!("pod {new_pod} on node-")),
        "{reasons:?}"
    );
    assert!(
        reasons[0].ends_with(
            "is not ready (--never-ready): it counts against updateStrategy.rollingUpdate.maxUnavailable (1)"
        ),
        "{reasons:?}"
    );
}

#[test]
fn a_tainted_node_gets_no_pod_and_is_named() {
    let mut nodes = plain_nodes(2);
    nodes[1].taints = vec![NodeTaint {
        key: "dedicated".into(),
        value: "gpu".into(),
        effect: TaintEffect::NoSchedule,
    }]
    .into();
    let report = change(json!({"maxUnavailable": 1}), nodes, &[]);
    assert!(report.verdict.completes(), "{report:?}");
    assert_eq!(
        report.notes,
        ["node node-1 gets no pod: the pod does not tolerate its taints dedicated=gpu:NoSchedule"]
    );
    assert_eq!(report.rounds.last().unwrap().total, 1);
}

fn changes() -> impl Strategy<Value = (usize, Value)> {
    (
        1usize..6,
        0i32..3,
        0i32..3,
        0i32..3,
        prop_oneof![Just("Standard"), Just("InPlaceIfPossible")],
    )
        .prop_map(|(nodes, unavailable, surge, partition, kind)| {
            // The API refuses both budgets at 0.
            let unavailable = if unavailable == 0 && surge == 0 {
                1
            } else {
                unavailable
            };
            let rolling = json!({"rollingUpdateType": kind, "maxUnavailable": unavailable,
                "maxSurge": surge, "partition": partition});
            (nodes, rolling)
        })
}

fn available(world: &DaemonSetWorld) -> usize {
    let now = world.now();
    let mut nodes: Vec<&str> = world
        .active()
        .filter(|p| pod::is_available(p.as_ref(), 0, now))
        .map(|p| node_of(p))
        .collect();
    nodes.sort_unstable();
    nodes.dedup();
    nodes.len()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn the_verdict_is_the_settled_simulation_and_every_round_keeps_the_budgets(
        (count, rolling) in changes(),
    ) {
        let current = daemonset("agent:v1", &rolling);
        let changed = daemonset("agent:v2", &rolling);
        let unavailable_budget = rolling["maxUnavailable"].as_u64().unwrap() as usize;
        let surge = rolling["maxSurge"].as_u64().unwrap() as usize;
        let partition = rolling["partition"].as_u64().unwrap() as usize;
        let report = plan(changed.clone(), Some(current.clone()), Vec::new(), Vec::new(),
            plain_nodes(count), String::new(), &[], 300).unwrap();

        let mut world = DaemonSetWorld::new(current, Vec::new(), plain_nodes(count));
        prop_assert!(simulation::settle(&mut world, 300).unwrap().is_some());
        world.change_to(&changed);
        let mut settled = false;
        for _ in 0..300 {
            let planned = simulation::round(&mut world).unwrap();
            if surge == 0 {
                prop_assert!(count - available(&world) <= unavailable_budget,
                    "{} nodes unavailable", count - available(&world));
            }
            prop_assert!(world.active().count() <= count + surge);
            if DaemonSetWorld::writes_nothing(&planned) {
                match planned.requeue_after {
                    Some(wait) => simulation::wait_for(&mut world.cluster, wait),
                    None => { settled = true; break; }
                }
            }
        }
        prop_assert!(settled);
        let hash = world.update_hash().unwrap();
        let (at, total) = world.at_revision(&hash);
        let completes = total == count && at == total && available(&world) == count;
        prop_assert_eq!(report.verdict.completes(), completes, "{:?}", report);
        // Every pod comes up: only the partition holds pods back.
        prop_assert_eq!(at, count.saturating_sub(partition), "{:?}", report);
    }
}
