//! Random sets, scales and rollouts in the simulated cluster keep the controller's invariants:
//!
//! - OrderedReady never creates the pod of an ordinal before every lower one is running and
//!   ready, and creates one pod per round;
//! - a rolling update never has more than `maxUnavailable` replicas unavailable;
//! - once settled, every claim's owners are the retention policy's for the current replicas
//!   (claims of scaled-in ordinals gone under `whenScaled: Delete`);
//! - every scenario settles, and a settled set plans no writes.

use proptest::prelude::*;

use super::*;
use crate::statefulset::ordinals::{ReplicaRange, parent_and_ordinal};
use crate::statefulset::retention::Policy;

#[derive(Debug, Clone)]
struct Scenario {
    replicas: i32,
    next_replicas: i32,
    reserved: Vec<i32>,
    parallel: bool,
    policy: (&'static str, &'static str),
    partition: i32,
    max_unavailable: Value,
    scale_budget: Option<i32>,
    change_template: bool,
    update_policy: &'static str,
    /// The template change is an env change too (not possible in place).
    env_change: bool,
}

fn scenario() -> impl Strategy<Value = Scenario> {
    (
        (0i32..6, 0i32..6),
        proptest::collection::vec(0i32..7, 0..3),
        any::<bool>(),
        (
            prop_oneof![Just("Retain"), Just("Delete")],
            prop_oneof![Just("Retain"), Just("Delete")],
        ),
        0i32..4,
        prop_oneof![Just(json!(1)), Just(json!(2)), Just(json!("40%"))],
        prop_oneof![Just(None), Just(Some(1)), Just(Some(2))],
        any::<bool>(),
        (
            prop_oneof![
                Just("ReCreate"),
                Just("InPlaceIfPossible"),
                Just("InPlaceOnly")
            ],
            any::<bool>(),
        ),
    )
        .prop_map(
            |(
                (replicas, next_replicas),
                reserved,
                parallel,
                policy,
                partition,
                max_unavailable,
                scale_budget,
                change_template,
                (update_policy, env_change),
            )| {
                Scenario {
                    replicas,
                    next_replicas,
                    reserved,
                    parallel,
                    policy,
                    partition,
                    // Anything but 1 needs Parallel (the validator's rule).
                    max_unavailable: if parallel { max_unavailable } else { json!(1) },
                    scale_budget: scale_budget.filter(|_| parallel),
                    change_template,
                    update_policy,
                    env_change,
                }
            },
        )
}

fn set_of(s: &Scenario) -> StatefulSet {
    let mut spec = json!({
        "reserveOrdinals": s.reserved,
        "podManagementPolicy": if s.parallel { "Parallel" } else { "OrderedReady" },
        "persistentVolumeClaimRetentionPolicy":
            {"whenScaled": s.policy.0, "whenDeleted": s.policy.1},
        "updateStrategy": {"rollingUpdate": {"partition": s.partition,
            "maxUnavailable": s.max_unavailable, "podUpdatePolicy": s.update_policy}}
    });
    if let Some(budget) = s.scale_budget {
        spec["scaleStrategy"] = json!({"maxUnavailable": budget});
    }
    statefulset(s.replicas, spec)
}

fn ordinal(name: &str) -> i64 {
    parent_and_ordinal(name).unwrap().1
}

/// Running, `Ready` and, while an in-place update runs, its gate not False.
fn running_ready(p: &Pod) -> bool {
    let status = p.status.as_ref();
    let condition = |kind: &str| {
        status
            .and_then(|s| s.conditions.as_ref())
            .into_iter()
            .flatten()
            .find(|c| c.type_ == kind)
            .map(|c| c.status.as_str())
    };
    p.metadata.deletion_timestamp.is_none()
        && status.and_then(|s| s.phase.as_deref()) == Some("Running")
        && condition("Ready") == Some("True")
        && condition("InPlaceUpdateReady") != Some("False")
}

/// OrderedReady: at most one creation, and only above running, ready pods.
fn check_ordered_creation(world: &World, plan: &Plan) -> Result<(), TestCaseError> {
    let made = creates(plan);
    prop_assert!(made.len() <= 1, "{made:?}");
    let range = ReplicaRange::of(&world.set).unwrap();
    for name in made {
        for below in range.start..ordinal(name) {
            if !range.holds(below) {
                continue;
            }
            let pod = world
                .pods
                .iter()
                .find(|p| p.metadata.name.as_deref() == Some(&format!("web-{below}")));
            prop_assert!(
                pod.is_some_and(|p| running_ready(p)),
                "{name} made before web-{below} ran: {:?}",
                world.summary()
            );
        }
    }
    Ok(())
}

/// Replicas of the range without a running, ready pod.
fn unavailable(world: &World) -> usize {
    let range = ReplicaRange::of(&world.set).unwrap();
    (range.start..range.end)
        .filter(|o| range.holds(*o))
        .filter(|o| {
            !world.pods.iter().any(|p| {
                p.metadata.name.as_deref() == Some(&format!("web-{o}")) && running_ready(p)
            })
        })
        .count()
}

/// Every claim's owners are the policy's.
fn check_claims(world: &World) -> Result<(), TestCaseError> {
    let policy = Policy::of(&world.set);
    let range = ReplicaRange::of(&world.set).unwrap();
    for (name, claim) in &world.claims {
        let k = ordinal(name);
        let pod = world
            .pods
            .iter()
            .find(|p| p.metadata.name.as_deref() == Some(&format!("web-{k}")));
        let refs = claim.metadata.owner_references.as_deref().unwrap_or(&[]);
        let scaled_down = !range.holds(k);
        match pod {
            Some(pod) => {
                let uid = pod.metadata.uid.as_deref().unwrap();
                prop_assert!(
                    retention::matches(policy, refs, "set-uid", uid, scaled_down),
                    "{name}: {refs:?} under {policy:?} (scaled down: {scaled_down})"
                );
            }
            None => {
                // The pod is gone: only claims kept on scale-in remain, owned by the set alone
                // under whenDeleted: Delete.
                prop_assert!(
                    scaled_down && !policy.delete_when_scaled,
                    "{name} left behind"
                );
                let (want_set, _) = policy.owners(true);
                let owners: Vec<&str> = refs.iter().map(|r| r.uid.as_str()).collect();
                let want: Vec<&str> = if want_set { vec!["set-uid"] } else { vec![] };
                prop_assert_eq!(owners, want, "{}", name);
            }
        }
    }
    Ok(())
}

/// Rounds until one writes nothing, checking the invariants of every round.
fn settle_checked(
    world: &mut World,
    budget: Option<usize>,
    monotonic: bool,
) -> Result<(), TestCaseError> {
    for _ in 0..80 {
        let plan = world.plan();
        if monotonic {
            check_ordered_creation(world, &plan)?;
        }
        world.apply(&plan);
        if let Some(budget) = budget {
            let down = unavailable(world);
            prop_assert!(
                down <= budget,
                "{down} unavailable > {budget}: {:?}",
                world.summary()
            );
        }
        world.now += 1;
        world.kubelet();
        if plan.actions.is_empty() && !plan.write_status {
            let again = world.plan();
            prop_assert!(
                again.actions.is_empty() && !again.write_status,
                "settled, then: {:?}",
                again.actions
            );
            return check_claims(world);
        }
    }
    Err(TestCaseError::fail(format!(
        "no convergence: {:?}",
        world.summary()
    )))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn rounds_keep_the_invariants_and_settle(s in scenario()) {
        let monotonic = !s.parallel;
        let mut world = World::new(set_of(&s));
        settle_checked(&mut world, None, monotonic)?;
        let range = ReplicaRange::of(&world.set).unwrap();
        let mut expected: Vec<String> = (range.start..range.end)
            .filter(|o| range.holds(*o))
            .map(|o| format!("web-{o}"))
            .collect();
        expected.sort();
        prop_assert_eq!(world.names(), expected);

        // InPlaceOnly cannot apply an env change: the update is refused and nothing moves.
        let refused = s.update_policy == "InPlaceOnly" && s.env_change;
        if s.change_template {
            let mut changed = template("nginx:2");
            if s.env_change {
                changed["spec"]["containers"][0]["env"] = json!([{"name": "MODE", "value": "b"}]);
            }
            world.set_template(changed);
            let max = crate::k8s::intstr::legacy_scaled_value(
                &serde_json::from_value(s.max_unavailable.clone()).unwrap(),
                s.replicas,
                false,
            )
            .unwrap()
            .max(1) as usize;
            settle_checked(&mut world, Some(max), monotonic)?;
            let status = world.status();
            let updated = if refused && s.replicas > 0 { 0 } else { (s.replicas - s.partition).max(0) };
            prop_assert_eq!(status.updated_replicas, updated);
            if !refused {
                prop_assert_eq!(
                    status.current_revision == status.update_revision,
                    s.partition == 0 || s.replicas == 0
                );
            }
        }

        world.scale(s.next_replicas);
        settle_checked(&mut world, None, monotonic)?;
        let range = ReplicaRange::of(&world.set).unwrap();
        let mut expected: Vec<String> = (range.start..range.end)
            .filter(|o| range.holds(*o))
            .map(|o| format!("web-{o}"))
            .collect();
        expected.sort();
        prop_assert_eq!(world.names(), expected);
        let status = world.status();
        prop_assert_eq!(status.replicas, s.next_replicas);
        prop_assert_eq!(status.ready_replicas, s.next_replicas);
        if s.change_template && !refused {
            // A finished rollout (no pods, or partition 0) made the new revision current: every
            // pod is made at it.
            let expected = if status.current_revision == status.update_revision {
                s.next_replicas
            } else {
                (s.next_replicas - s.partition).max(0)
            };
            prop_assert_eq!(status.updated_replicas, expected);
        }
    }
}
