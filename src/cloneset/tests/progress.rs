//! The `Progressing` condition over a rollout in the simulated cluster: available, progressing,
//! the deadline passing while the updated pods never become ready, available again.

use super::*;
use crate::cloneset::progress::{self, AVAILABLE, DEADLINE_EXCEEDED, UPDATED};

fn reason(world: &World) -> Option<String> {
    progress::condition(world.status()).and_then(|c| c.reason.clone())
}

/// One round in which the kubelet never starts a pod: every pod there is stays as it is.
fn round_never_ready(world: &mut World) -> Plan {
    let plan = world.plan();
    world.apply(&plan);
    world.stuck = world.pods.iter().map(|p| pod::name(p).into()).collect();
    world.now += 1;
    world.kubelet();
    plan
}

#[test]
fn a_rollout_whose_pods_never_become_ready_exceeds_its_deadline() {
    let mut set = cloneset(2, template("nginx:v1"), json!({"maxUnavailable": 2}));
    set.spec.progress_deadline_seconds = Some(30);
    let mut world = World::new(set);
    world.settle(30);
    assert_eq!(reason(&world).as_deref(), Some(AVAILABLE));
    assert_eq!(world.status().updated_available_replicas, 2);

    // Recreated at the new revision, the pods never start.
    world.set_template(template("nginx:v2"));
    let started = world.now;
    let plan = round_never_ready(&mut world);
    assert!(plan.write_status);
    assert_eq!(reason(&world).as_deref(), Some(UPDATED));
    let requeue = plan.requeue_after.expect("a look at the deadline");
    assert!(requeue <= std::time::Duration::from_secs(31), "{requeue:?}");
    let mut exceeded_at = None;
    for _ in 0..40 {
        let plan = round_never_ready(&mut world);
        if reason(&world).as_deref() == Some(DEADLINE_EXCEEDED) {
            // The planner computed it at `now - 1` (a round advances the clock after it).
            assert!(plan.write_status, "a change of reason is written");
            exceeded_at = Some(world.now - 1);
            break;
        }
    }
    // Past the deadline (lastUpdateTime + 30 s), not before.
    assert_eq!(exceeded_at, Some(started + 31));
    assert_eq!(world.status().updated_replicas, 2);
    assert_eq!(world.status().updated_available_replicas, 0);
    let condition = progress::condition(world.status()).unwrap();
    assert_eq!(condition.status, "False");
    let update = world.status().update_revision.clone().unwrap();
    assert_eq!(
        condition.message.as_deref(),
        Some(format!("CloneSet revision {update} has timed out progressing").as_str())
    );

    // The kubelet starts the new image: available again.
    world.stuck.clear();
    world.kubelet();
    world.settle(60);
    assert_eq!(reason(&world).as_deref(), Some(AVAILABLE));
    assert_eq!(world.status().updated_available_replicas, 2);

    // No deadline: the condition goes.
    world.set.spec.progress_deadline_seconds = None;
    world.settle(5);
    assert_eq!(progress::condition(world.status()), None);
}

/// `updatedAvailableReplicas` waits for `minReadySeconds`, as `availableReplicas` does.
#[test]
fn updated_available_replicas_respect_min_ready_seconds() {
    let mut set = cloneset(
        2,
        template("nginx:v1"),
        json!({"type": "InPlaceIfPossible", "maxUnavailable": 2}),
    );
    set.spec.min_ready_seconds = Some(10);
    let mut world = World::new(set);
    let mut seen_ready_not_available = false;
    for _ in 0..30 {
        world.round();
        let status = world.status();
        assert!(status.updated_available_replicas <= status.updated_ready_replicas);
        assert!(status.updated_available_replicas <= status.available_replicas);
        seen_ready_not_available |=
            status.updated_ready_replicas == 2 && status.updated_available_replicas == 0;
    }
    assert!(seen_ready_not_available);
    assert_eq!(world.status().updated_available_replicas, 2);
}
