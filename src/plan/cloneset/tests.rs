//! Random CloneSet changes: `plan`'s verdict is what settling the simulation says, and what the
//! partition alone predicts; every round keeps within the budgets.

use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::cloneset::numbers::Limits;
use crate::defaults::workload::default_cloneset;
use crate::workload::simulation;

fn cloneset(replicas: i32, image: &str, strategy: &Value) -> CloneSet {
    let mut set: CloneSet = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "cs", "namespace": "default", "uid": "cs-uid", "generation": 1},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "cs"}},
            "template": {
                "metadata": {"labels": {"app": "cs"}},
                "spec": {"containers": [{"name": "main", "image": image}]}
            },
            "updateStrategy": strategy
        }
    }))
    .unwrap();
    default_cloneset(&mut set);
    set
}

fn strategy() -> impl Strategy<Value = (i32, Value)> {
    (
        1i32..7,
        prop_oneof![
            Just(json!(null)),
            (0i32..4).prop_map(|p| json!(p)),
            Just(json!("40%")),
            Just(json!("0%"))
        ],
        prop_oneof![Just(json!(1)), Just(json!(2)), Just(json!("50%"))],
        0i32..3,
        prop_oneof![Just("ReCreate"), Just("InPlaceIfPossible")],
    )
        .prop_map(|(replicas, partition, unavailable, surge, kind)| {
            let mut strategy =
                json!({"type": kind, "maxUnavailable": unavailable, "maxSurge": surge});
            if !partition.is_null() {
                strategy["partition"] = partition;
            }
            (replicas, strategy)
        })
}

fn available(world: &CloneSetWorld) -> i64 {
    let now = world.now();
    let count = world
        .cluster
        .pods
        .iter()
        .filter(|p| pod::is_active(p.as_ref()) && pod::is_available(p.as_ref(), 0, now))
        .count();
    i64::try_from(count).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn the_verdict_is_the_settled_simulation_and_every_round_keeps_the_budget(
        (replicas, strategy) in strategy(),
    ) {
        let current = cloneset(replicas, "img:v1", &strategy);
        let changed = cloneset(replicas, "img:v2", &strategy);
        let limits = Limits::of(&changed.spec);
        let report = plan(changed.clone(), Some(current.clone()), Vec::new(), Vec::new(), &[], 300)
            .unwrap();

        // The same change, settled directly, checking every round.
        let mut world = CloneSetWorld::new(current, Vec::new());
        prop_assert!(simulation::settle(&mut world, 300).unwrap().is_some());
        world.change_to(&changed);
        let r = i64::from(replicas);
        let surge = limits.max_surge;
        let mut settled = false;
        for _ in 0..300 {
            let planned = simulation::round(&mut world).unwrap();
            let unavailable = r - available(&world).min(r);
            prop_assert!(unavailable <= limits.max_unavailable.max(1),
                "{unavailable} unavailable > {}", limits.max_unavailable);
            prop_assert!(world.cluster.pods.len() as i64 <= r + surge);
            if CloneSetWorld::writes_nothing(&planned) {
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
        // With every pod coming up, only the partition holds pods back.
        prop_assert_eq!(completes, limits.partition == 0, "{:?}", report);
        for round in &report.rounds {
            prop_assert!(round.updated as i64 <= r - limits.partition + surge, "{:?}", round);
        }
    }
}

/// Pods given (here: the ones the current CloneSet settles into) plan as the pods `plan` makes
/// itself from the current object.
#[test]
fn given_pods_plan_like_the_made_ones() {
    let strategy = json!({"type": "InPlaceIfPossible", "maxUnavailable": 1});
    let current = cloneset(3, "img:v1", &strategy);
    let changed = cloneset(3, "img:v2", &strategy);
    let mut world = CloneSetWorld::new(current.clone(), Vec::new());
    simulation::settle(&mut world, 100).unwrap().unwrap();
    let pods: Vec<Pod> = world.cluster.pods.iter().map(|p| Pod::clone(p)).collect();
    let made = plan(
        changed.clone(),
        Some(current.clone()),
        Vec::new(),
        Vec::new(),
        &[],
        300,
    )
    .unwrap();
    let given = plan(changed, Some(current), pods, Vec::new(), &[], 300).unwrap();
    assert!(
        given
            .start
            .starts_with("3 pods given, 3 at the current revision"),
        "{}",
        given.start
    );
    assert_eq!(given.rounds, made.rounds);
    assert_eq!(given.verdict, made.verdict);
    assert!(made.verdict.completes());
}
