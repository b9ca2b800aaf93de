//! The budget property (issue 33 item 2): over random node sets, readiness flips and
//! back-to-back template changes, no planned round leaves more nodes without an available pod
//! than maxUnavailable allows (or than were without one before the round), and every rollout
//! finishes once the world is quiet.

use std::collections::BTreeSet;

use proptest::prelude::*;

use super::*;
use crate::daemonset::round::Round;

#[derive(Debug, Clone)]
enum Event {
    /// The template's image changes.
    Update,
    /// The pod on node `n % nodes` stops (or starts again) being ready.
    Flip(usize),
    /// One reconcile, then the cluster moves on by `seconds`.
    Round(i64),
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        1 => Just(Event::Update),
        2 => (0usize..16).prop_map(Event::Flip),
        6 => (0i64..4).prop_map(Event::Round),
    ]
}

/// Desired nodes whose pods are all gone, going, held or not available, with the round's
/// deletions, preDelete moves and in-place starts counted as gone.
fn nodes_without_available_pod(world: &World, touched: &BTreeSet<String>) -> usize {
    let pods: Vec<DaemonPod> = world.pods.iter().cloned().map(DaemonPod::whole).collect();
    let hash = "-";
    let round = Round::new(&world.set, hash, &world.nodes, &pods, at(world.now));
    let min_ready = world.set.spec.min_ready_seconds.unwrap_or(0);
    round
        .nodes
        .iter()
        .filter(|n| n.fit.should_run)
        .filter(|n| {
            !round.on_node(n.name()).iter().any(|p| {
                let facts = &round.facts[*p];
                !facts.deleting
                    && !facts.pre_deleting
                    && !touched.contains(round.name(*p))
                    && facts.daemon_available(min_ready, round.now)
            })
        })
        .count()
}

fn touched(plan: &Plan) -> BTreeSet<String> {
    plan.actions
        .iter()
        .filter_map(|a| match a {
            Action::DeletePod { name } => Some(name.clone()),
            Action::WritePod {
                before,
                purpose: Purpose::InPlace { .. } | Purpose::ScaleLifecycle,
                ..
            } => before.metadata.name.clone(),
            _ => None,
        })
        .collect()
}

fn max_unavailable(world: &World) -> usize {
    let pods: Vec<DaemonPod> = world.pods.iter().cloned().map(DaemonPod::whole).collect();
    let round = Round::new(&world.set, "-", &world.nodes, &pods, at(world.now));
    usize::try_from(rolling::budget(&round).unwrap().max_unavailable).unwrap()
}

fn configured(
    nodes: usize,
    unavailable: i32,
    surge: bool,
    in_place: bool,
    min_ready: i32,
    partition: i32,
) -> World {
    let mut set = agent();
    set.spec.min_ready_seconds = Some(min_ready);
    let r = rolling(&mut set);
    if surge {
        r.max_surge = int(1);
        r.max_unavailable = int(0);
    } else {
        r.max_unavailable = if unavailable == 0 {
            percent("30%")
        } else {
            int(unavailable)
        };
    }
    if in_place && !surge {
        r.rolling_update_type = Some(crate::api::daemonset::IN_PLACE_IF_POSSIBLE.into());
    }
    r.partition = int(partition);
    let nodes = (0..nodes).map(|i| node(&format!("n{i}"))).collect();
    World::new(set, nodes)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn no_round_exceeds_the_budget_and_every_rollout_finishes(
        nodes in 1usize..8,
        unavailable in 0i32..3,
        surge in any::<bool>(),
        in_place in any::<bool>(),
        min_ready in prop_oneof![Just(0), Just(3)],
        partition in prop_oneof![3 => Just(0), 1 => 0i32..3],
        events in proptest::collection::vec(event(), 1..60),
    ) {
        let mut world = configured(nodes, unavailable, surge, in_place, min_ready, partition);
        world.converge(20);
        let mut image = 1;
        for event in events {
            match event {
                Event::Update => {
                    image += 1;
                    world.set = with_image(world.set.clone(), &format!("agent:v{image}"));
                }
                Event::Flip(n) => {
                    let node = format!("n{}", n % nodes);
                    let name = world.pods_on(&node).first().and_then(|p| p.metadata.name.clone());
                    if let Some(name) = name {
                        if let Some(at) = world.stuck.iter().position(|s| *s == name) {
                            world.stuck.remove(at);
                        } else {
                            world.stuck.push(name);
                        }
                        world.settle(0);
                    }
                }
                Event::Round(seconds) => {
                    let before = nodes_without_available_pod(&world, &BTreeSet::new());
                    let budget = max_unavailable(&world);
                    let plan = world.plan();
                    let after = nodes_without_available_pod(&world, &touched(&plan));
                    prop_assert!(
                        after <= before.max(budget),
                        "{after} nodes without an available pod after the round, {before} before, budget {budget}: {:?}",
                        plan.actions
                    );
                    world.apply(&plan);
                    world.settle(seconds);
                }
            }
        }
        // Quiet: every pod becomes ready again and the rollout finishes.
        world.stuck.clear();
        world.settle(0);
        world.converge(200);
        let hash = world.hash();
        let status = world.set.status.clone().unwrap();
        let held = usize::try_from(partition).unwrap().min(nodes);
        prop_assert_eq!(status.desired_number_scheduled as usize, nodes);
        prop_assert_eq!(status.number_available, Some(nodes as i32));
        prop_assert!(status.updated_number_scheduled as usize >= nodes - held);
        prop_assert_eq!(status.update_revision, hash);
    }
}
