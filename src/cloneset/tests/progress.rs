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

/// What starts a reconcile in a cluster, after a round at `now`: a pod it created, deleted or
/// wrote, or its own status write (their watch events, a second later here); or the requeue it
/// asked for, as the shell turns a finished round into one (at most the in-flight look of 15 s,
/// which also comes while pods are not all updated and ready).
fn next_round_after(world: &World, plan: &Plan, now: i64) -> Option<i64> {
    if !plan.actions.is_empty() || plan.write_status {
        return Some(now + 1);
    }
    let status = world.status();
    let unfinished = status.updated_ready_replicas != status.replicas
        || Some(status.replicas) != world.set.spec.replicas;
    let requeue = match plan.requeue_after {
        Some(after) => Some(after.min(std::time::Duration::from_secs(15))),
        None => unfinished.then_some(std::time::Duration::from_secs(15)),
    };
    // Rounds run on whole seconds here: a requeue runs at the first second not before it.
    requeue.map(|after| now + i64::try_from(after.as_millis().div_ceil(1000)).unwrap())
}

/// A new CloneSet with a deadline, driven as a controller is: a round only when an event or a
/// requeue starts one, the kubelet working every second. Returns the second at which every pod
/// was available and the one at which the status first said `CloneSetAvailable`.
fn created_then_available(min_ready_seconds: i32, kruise_pod_ready: bool) -> (i64, i64) {
    let mut template = template("nginx:v1");
    if kruise_pod_ready {
        // What the pod webhook adds to every new pod of a CloneSet.
        template["spec"]["readinessGates"] = json!([{"conditionType": keys::KRUISE_POD_READY}]);
    }
    let mut set = cloneset(6, template, json!({}));
    set.spec.progress_deadline_seconds = Some(600);
    set.spec.min_ready_seconds = Some(min_ready_seconds);
    let mut world = World::new(set);
    let mut next_round = Some(0);
    let mut pods_available = None;
    let mut pods_change = world.version;
    for _ in 0..120 {
        if pods_available.is_none() && world.pods.len() == 6 {
            let all = world.pods.iter().all(|p| {
                pod::is_available(p, min_ready_seconds, at(world.now))
                    && CloneSet::REVISIONS
                        .pod_at(p, world.status().update_revision.as_ref().unwrap())
            });
            pods_available = all.then_some(world.now);
        }
        if next_round.is_some_and(|t| t <= world.now) {
            let plan = world.plan();
            world.apply(&plan);
            next_round = next_round_after(&world, &plan, world.now);
            if reason(&world).as_deref() == Some(AVAILABLE) {
                let all = pods_available.expect("CloneSetAvailable before every pod is available");
                let gated = world.pods.iter().all(|p| {
                    p.status
                        .as_ref()
                        .and_then(|s| s.conditions.as_ref())
                        .is_some_and(|c| {
                            c.iter()
                                .any(|c| c.type_ == keys::KRUISE_POD_READY && c.status == "True")
                        })
                });
                assert_eq!(gated, kruise_pod_ready, "KruisePodReady True on every pod");
                return (all, world.now);
            }
        }
        world.now += 1;
        world.kubelet();
        // A pod the kubelet changed is an event.
        if world.version != pods_change {
            pods_change = world.version;
            next_round = Some(next_round.map_or(world.now, |t| t.min(world.now)));
        }
    }
    panic!(
        "never CloneSetAvailable: {:?}, pods available at {pods_available:?}, next round {next_round:?}",
        progress::condition(world.status())
    );
}

/// Issue 48: a CloneSet created with a deadline says `CloneSetAvailable` as soon as its pods
/// are, with and without `minReadySeconds` — the round that sees it is started by the pods'
/// events or by the requeue at `minReadySeconds`, not by the in-flight look 15 s later; with the
/// `KruisePodReady` gate the pod webhook adds, too.
#[test]
fn a_new_cloneset_turns_available_when_its_pods_do() {
    for kruise_pod_ready in [false, true] {
        for min_ready_seconds in [0, 3, 10] {
            let (pods, condition) = created_then_available(min_ready_seconds, kruise_pod_ready);
            assert!(
                condition - pods <= 1,
                "minReadySeconds {min_ready_seconds}, KruisePodReady gate {kruise_pod_ready}: \
                 pods available at {pods} s, CloneSetAvailable at {condition} s"
            );
        }
    }
}
