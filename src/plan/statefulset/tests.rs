//! The StatefulSet plan: what the partition keeps, what pauses and blocks it, and random
//! changes whose verdict is what settling the simulation says, every round within the budget.

use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::defaults::workload::default_statefulset;
use crate::workload::simulation;

fn statefulset(replicas: i32, image: &str, policy: &str, rolling: &Value) -> StatefulSet {
    let mut set: StatefulSet = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": "db", "uid": "set-uid", "generation": 1},
        "spec": {
            "replicas": replicas,
            "serviceName": "web",
            "podManagementPolicy": policy,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "main", "image": image}]}
            },
            "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}}}}],
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": rolling}
        }
    }))
    .unwrap();
    default_statefulset(&mut set);
    set
}

fn change(rolling: Value, never_ready: &[String]) -> Report {
    let current = statefulset(4, "img:v1", "OrderedReady", &rolling);
    let changed = statefulset(4, "img:v2", "OrderedReady", &rolling);
    plan(
        changed,
        Some(current),
        Vec::new(),
        Vec::new(),
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

#[test]
fn a_rollout_without_partition_recreates_every_pod_highest_first_and_completes() {
    let report = change(json!({}), &[]);
    assert!(report.verdict.completes(), "{report:?}");
    assert!(
        report
            .start
            .contains("4 pods of the current StatefulSet, 4 Ready")
    );
    let recreated: Vec<&str> = report
        .rounds
        .iter()
        .flat_map(|r| r.recreated.iter().map(String::as_str))
        .collect();
    assert_eq!(recreated, ["web-3", "web-2", "web-1", "web-0"]);
    assert_eq!(report.rounds.last().unwrap().updated, 4);
}

#[test]
fn the_partition_keeps_the_lowest_ordinals() {
    let report = change(json!({"partition": 2}), &[]);
    assert!(!report.verdict.completes());
    assert_eq!(
        reasons(&report),
        ["updateStrategy.rollingUpdate.partition 2 keeps ordinals 0, 1 at the current revision"]
    );
    assert_eq!(report.rounds.last().unwrap().updated, 2);
}

#[test]
fn a_paused_set_updates_nothing_and_says_so() {
    let report = change(json!({"paused": true}), &[]);
    assert!(report.rounds.is_empty(), "{report:?}");
    assert_eq!(
        reasons(&report),
        ["updateStrategy.rollingUpdate.paused is true: no pod is updated"]
    );
}

#[test]
fn a_pod_that_never_comes_up_holds_the_budget() {
    let report = change(json!({"maxUnavailable": 1}), &["web-3".to_string()]);
    assert_eq!(
        reasons(&report),
        [
            "pod web-3 is not ready (--never-ready): it counts against updateStrategy.rollingUpdate.maxUnavailable (1)"
        ]
    );
    assert_eq!(report.rounds.last().unwrap().updated, 1);
}

#[test]
fn ordered_ready_waits_on_the_ordinal_that_never_comes_up() {
    let changed = statefulset(3, "img:v2", "OrderedReady", &json!({}));
    let report = plan(
        changed,
        None,
        Vec::new(),
        Vec::new(),
        &["web-0".to_string()],
        100,
    )
    .unwrap();
    assert_eq!(report.rounds.len(), 1, "{report:?}");
    assert_eq!(report.rounds[0].created, ["web-0"]);
    assert_eq!(
        reasons(&report)[1],
        "podManagementPolicy OrderedReady: the pods after web-0 are not made until it is ready"
    );
}

#[test]
fn reserved_ordinals_are_noted_and_skipped() {
    let mut changed = statefulset(3, "img:v2", "Parallel", &json!({}));
    changed.spec.reserve_ordinals = Some(vec![
        k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(1),
    ]);
    let report = plan(changed, None, Vec::new(), Vec::new(), &[], 100).unwrap();
    assert!(report.verdict.completes(), "{report:?}");
    assert_eq!(report.rounds[0].created, ["web-0", "web-2", "web-3"]);
    assert!(report.notes[0].starts_with("reserveOrdinals 1: no pod is made"));
}

fn changes() -> impl Strategy<Value = (i32, &'static str, Value)> {
    (
        1i32..6,
        0i32..4,
        1i32..4,
        prop_oneof![Just("OrderedReady"), Just("Parallel")],
        prop_oneof![Just("ReCreate"), Just("InPlaceIfPossible")],
    )
        .prop_map(|(replicas, partition, unavailable, policy, update)| {
            let rolling = json!({"partition": partition, "maxUnavailable": unavailable,
                "podUpdatePolicy": update});
            (replicas, policy, rolling)
        })
}

fn available(world: &StatefulSetWorld) -> i64 {
    let now = world.now();
    let count = world
        .active()
        .filter(|p| pod::is_available(p.as_ref(), 0, now))
        .count();
    i64::try_from(count).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn the_verdict_is_the_settled_simulation_and_every_round_keeps_the_budget(
        (replicas, policy, rolling) in changes(),
    ) {
        let current = statefulset(replicas, "img:v1", policy, &rolling);
        let changed = statefulset(replicas, "img:v2", policy, &rolling);
        let partition = i64::from(rolling["partition"].as_i64().unwrap() as i32);
        let budget = rolling["maxUnavailable"].as_i64().unwrap();
        let report = plan(changed.clone(), Some(current.clone()), Vec::new(), Vec::new(), &[], 300)
            .unwrap();

        let mut world = StatefulSetWorld::new(current, Vec::new());
        prop_assert!(simulation::settle(&mut world, 300).unwrap().is_some());
        world.change_to(&changed);
        let r = i64::from(replicas);
        let mut settled = false;
        for _ in 0..300 {
            let planned = simulation::round(&mut world).unwrap();
            let unavailable = r - available(&world).min(r);
            prop_assert!(unavailable <= budget, "{unavailable} unavailable > {budget}");
            if StatefulSetWorld::writes_nothing(&planned) {
                match planned.requeue_after {
                    Some(wait) => simulation::wait_for(&mut world.cluster, wait),
                    None => { settled = true; break; }
                }
            }
        }
        prop_assert!(settled);
        let update = world.update_revision().unwrap();
        let (at, total) = world.at_revision(&update);
        let completes = total == replicas as usize && at == total && available(&world) == r;
        prop_assert_eq!(report.verdict.completes(), completes, "{:?}", report);
        // Every pod comes up: only the partition holds pods back, the lowest ordinals.
        prop_assert_eq!(at as i64, (r - partition).max(0), "{:?}", report);
        for p in world.active() {
            let ordinal = ordinal_of("web", pod::name(p.as_ref())).unwrap();
            let kept = ordinal < partition;
            prop_assert_eq!(StatefulSet::REVISIONS.pod_at(p.as_ref(), &update), !kept);
        }
    }
}
