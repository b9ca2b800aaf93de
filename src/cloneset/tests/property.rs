//! Random rollouts keep within the budgets and settle; instance ids never repeat.

use super::*;
use proptest::prelude::*;

fn strategy() -> impl Strategy<Value = (i32, Value, Value)> {
    (
        1i32..6,
        prop_oneof![
            Just(json!(null)),
            (0i32..4).prop_map(|p| json!(p)),
            Just(json!("40%"))
        ],
        prop_oneof![Just(json!(1)), Just(json!(2)), Just(json!("50%"))],
        0i32..2,
        prop_oneof![
            Just("ReCreate"),
            Just("InPlaceIfPossible"),
            Just("InPlaceOnly")
        ],
    )
        .prop_map(|(replicas, partition, unavailable, surge, kind)| {
            let surge = if kind == "InPlaceOnly" { 0 } else { surge };
            let mut strategy =
                json!({"type": kind, "maxUnavailable": unavailable, "maxSurge": surge});
            if !partition.is_null() {
                strategy["partition"] = partition;
            }
            (replicas, strategy, json!(surge))
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// From a settled CloneSet, an image change (and sometimes an env change) rolls out within
    /// the budgets and settles into writing nothing.
    #[test]
    fn rollouts_respect_budgets_and_converge(
        (replicas, strategy, surge) in strategy(),
        env_change in any::<bool>(),
        stuck_one in any::<bool>(),
    ) {
        let set = cloneset(replicas, template("img:v1"), strategy.clone());
        let limits = numbers::Limits::of(&set.spec);
        let in_place_only = strategy["type"] == "InPlaceOnly";
        let mut world = World::new(set);
        world.settle(40);
        let mut t = template("img:v2");
        if env_change {
            t["spec"]["containers"][0]["env"] = json!([{"name": "A", "value": "1"}]);
        }
        world.set_template(t);
        if stuck_one {
            // A pod whose containers never come back after an update: the rollout must stall,
            // not spread unavailability.
            let first = pod::name(&world.pods[0]).to_string();
            world.stuck.push(first);
        }
        let r = i64::from(replicas);
        let max_pods = (r + surge.as_i64().unwrap()) as usize;
        let mut settled = false;
        for _ in 0..150 {
            let plan = world.plan();
            world.apply(&plan);
            prop_assert!(world.pods.len() <= max_pods, "{} pods > {max_pods}", world.pods.len());
            let unavailable = r - world.available() as i64;
            prop_assert!(unavailable <= limits.max_unavailable.max(1) + i64::from(stuck_one),
                "{unavailable} unavailable > {} {:?}", limits.max_unavailable, world.summary());
            prop_assert!(world.at_update() as i64 <= r - limits.partition + (max_pods as i64 - r),
                "partition {} broken: {:?}", limits.partition, world.summary());
            world.now += 1;
            world.kubelet();
            if plan.actions.is_empty() && !plan.write_status {
                settled = true;
                break;
            }
        }
        if stuck_one {
            return Ok(());
        }
        prop_assert!(settled, "{:?}", world.summary());
        prop_assert_eq!(world.pods.len(), replicas as usize);
        if in_place_only && env_change {
            prop_assert_eq!(world.at_update(), 0);
        } else {
            prop_assert_eq!(world.at_update() as i64, r - limits.partition);
            prop_assert_eq!(world.status().updated_ready_replicas as i64, r - limits.partition);
        }
        // Settled means settled: another reconcile writes nothing.
        let again = world.plan();
        prop_assert!(again.actions.is_empty() && !again.write_status);
    }
}

#[test]
fn revisions_and_pods_survive_seeds() {
    // Instance ids never repeat, even with a generator that keeps drawing the same values.
    let mut world = World::new(cloneset(30, template("img:v1"), json!({})));
    world.rng = fastrand::Rng::with_seed(1);
    world.settle(40);
    let mut ids: Vec<&str> = world
        .pods
        .iter()
        .map(|p| pod::label(p, pvc::INSTANCE_ID).unwrap())
        .collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 30);
}
