//! The spec's worked cases (DS-n) as rounds of the simulated cluster.

use super::*;
use crate::api::cloneset::{Lifecycle, LifecycleHook};
use crate::api::daemonset::IN_PLACE_IF_POSSIBLE;
use crate::daemonset::node::TaintEffect;
use k8s_openapi::api::core::v1::Toleration;

const BLOCK: &str = "example.io/block-deleting";

/// The release note's DaemonSet: nodeSelector `role: agent`, the block-deleting label on its
/// pods and as its preDelete hook.
fn seed() -> DaemonSet {
    let mut set = agent();
    let template = &mut set.spec.template;
    template
        .metadata
        .as_mut()
        .unwrap()
        .labels
        .as_mut()
        .unwrap()
        .insert(BLOCK.into(), "true".into());
    template.spec.as_mut().unwrap().node_selector =
        Some([("role".to_string(), "agent".to_string())].into());
    set.spec.lifecycle = Some(Lifecycle {
        pre_delete: Some(LifecycleHook {
            labels_handler: Some([(BLOCK.to_string(), "true".to_string())].into()),
            ..Default::default()
        }),
        ..Default::default()
    });
    set
}

fn seed_nodes() -> Vec<NodeSummary> {
    let mut n2 = tainted("n2", "dedicated", TaintEffect::NoSchedule);
    n2.taints = Box::new([crate::daemonset::node::NodeTaint {
        key: "dedicated".into(),
        value: "infra".into(),
        effect: TaintEffect::NoSchedule,
    }]);
    n2.labels.insert("role".into(), "agent".into());
    vec![labelled("n1", &[("role", "agent")]), n2, node("n3")]
}

fn counters(set: &DaemonSet) -> [i32; 5] {
    let s = set.status.as_ref().unwrap();
    [
        s.desired_number_scheduled,
        s.current_number_scheduled,
        s.number_ready,
        s.updated_number_scheduled,
        s.number_available.unwrap_or(0),
    ]
}

#[test]
fn ds1_creation_then_observed() {
    let mut world = World::new(seed(), seed_nodes());
    let hash = world.hash();
    let plan = world.plan();
    let [Action::CreatePod { pod, revision }] = plan.actions.as_slice() else {
        panic!("{:?}", plan.actions)
    };
    assert_eq!(revision, &hash);
    assert_eq!(daemon_pod::target_node(pod), Some("n1"));
    assert_eq!(
        World::label(pod, keys::CONTROLLER_REVISION_HASH),
        Some(hash.clone())
    );
    assert_eq!(
        pod.spec
            .as_ref()
            .unwrap()
            .tolerations
            .as_ref()
            .unwrap()
            .len(),
        6
    );
    // Manage acted: the status is written without the generation.
    assert!(plan.write_status);
    assert_eq!(plan.status.desired_number_scheduled, 1);
    assert_eq!(plan.status.number_unavailable, Some(1));
    assert_eq!(plan.status.update_revision, hash);
    assert_eq!(plan.status.observed_generation, None);
    world.apply(&plan);
    world.settle(1);
    let plan = world.step(1);
    assert!(plan.actions.is_empty());
    assert_eq!(plan.status.observed_generation, Some(1));
    assert_eq!(counters(&world.set), [1, 1, 1, 1, 1]);
    // Nothing more to write.
    assert!(!world.step(1).write_status);
}

#[test]
fn ds2_an_update_held_by_the_pre_delete_hook() {
    let mut world = World::new(seed(), seed_nodes());
    world.converge(10);
    let old = world.pods_on("n1")[0].metadata.name.clone().unwrap();
    world.set.spec.template.spec.as_mut().unwrap().tolerations = Some(vec![Toleration {
        key: Some("dedicated".into()),
        operator: Some("Equal".into()),
        value: Some("infra".into()),
        effect: Some("NoSchedule".into()),
        ..Default::default()
    }]);
    let h2 = world.hash();
    // Manage creates n2's pod at h2.
    let plan = world.step(1);
    assert!(matches!(
        plan.actions.as_slice(),
        [Action::CreatePod { .. }]
    ));
    // Once n2's pod is available the n1 pod is the candidate: moved to PreparingDelete.
    let plan = world.step(1);
    assert_eq!(plan.actions.len(), 1, "{:?}", plan.actions);
    assert!(pre_deleting(world.pod_named(&old)));
    // Held: nothing else happens, and the node counts as unavailable.
    for _ in 0..3 {
        let plan = world.step(1);
        assert!(plan.actions.is_empty(), "{:?}", plan.actions);
    }
    assert!(world.pods_on("n1").len() == 1);
    // The user's controller lets it go: deleted, then replaced at h2.
    world.set_label(&old, BLOCK, None);
    let plan = world.step(1);
    assert_eq!(plan.actions, [Action::DeletePod { name: old.clone() }]);
    world.converge(10);
    let n1 = world.pods_on("n1");
    assert_eq!(
        World::label(n1[0], keys::CONTROLLER_REVISION_HASH),
        Some(h2)
    );
    assert_eq!(counters(&world.set), [2, 2, 2, 2, 2]);
}

#[test]
fn ds8_surge_never_goes_below_the_node_count() {
    let mut set = agent();
    let r = rolling(&mut set);
    r.max_surge = int(1);
    r.max_unavailable = int(0);
    let mut world = World::new(set, vec![node("n1"), node("n2"), node("n3")]);
    world.converge(10);
    world.set = with_image(world.set.clone(), "agent:v2");
    let h2 = world.hash();
    let mut rounds = 0;
    while world
        .pods
        .iter()
        .any(|p| World::label(p, keys::CONTROLLER_REVISION_HASH) != Some(h2.clone()))
    {
        world.step(1);
        let ready = ["n1", "n2", "n3"]
            .iter()
            .filter(|n| {
                world.pods_on(n).iter().any(|p| {
                    p.metadata.deletion_timestamp.is_none()
                        && p.status
                            .as_ref()
                            .unwrap()
                            .conditions
                            .iter()
                            .flatten()
                            .any(|c| c.type_ == "Ready" && c.status == "True")
                })
            })
            .count();
        assert_eq!(ready, 3);
        rounds += 1;
        assert!(rounds < 30);
    }
    // One node at a time, highest name first.
    assert!(world.pods.len() == 3);
}

#[test]
fn ds9_a_partition_keeps_the_lowest_node_at_the_old_revision() {
    let mut set = agent();
    rolling(&mut set).partition = int(1);
    let mut world = World::new(set, vec![node("n1"), node("n2"), node("n3")]);
    world.converge(10);
    let h1 = world.hash();
    world.set = with_image(world.set.clone(), "agent:v2");
    let h2 = world.hash();
    world.converge(20);
    let at = |world: &World, node: &str| {
        World::label(world.pods_on(node)[0], keys::CONTROLLER_REVISION_HASH)
    };
    assert_eq!(at(&world, "n1"), Some(h1));
    assert_eq!(at(&world, "n2"), Some(h2.clone()));
    assert_eq!(at(&world, "n3"), Some(h2));
    assert_eq!(
        world.set.status.as_ref().unwrap().updated_number_scheduled,
        2
    );
}

#[test]
fn ds11_paused_still_places_new_nodes_at_the_new_revision() {
    let mut world = World::new(agent(), vec![node("n1"), node("n2")]);
    world.converge(10);
    let h1 = world.hash();
    rolling(&mut world.set).paused = Some(true);
    world.set = with_image(world.set.clone(), "agent:v2");
    let h2 = world.hash();
    world.nodes.push(node("n4"));
    world.converge(10);
    assert_eq!(
        World::label(world.pods_on("n1")[0], keys::CONTROLLER_REVISION_HASH),
        Some(h1)
    );
    assert_eq!(
        World::label(world.pods_on("n4")[0], keys::CONTROLLER_REVISION_HASH),
        Some(h2)
    );
    assert_eq!(
        world.set.status.as_ref().unwrap().updated_number_scheduled,
        1
    );
}

#[test]
fn ds12_a_node_that_stops_matching_waits_for_the_hook() {
    let mut world = World::new(seed(), seed_nodes());
    world.converge(10);
    let pod = world.pods_on("n1")[0].metadata.name.clone().unwrap();
    world.nodes[0].labels.clear();
    let plan = world.step(1);
    assert!(matches!(
        plan.actions.as_slice(),
        [Action::WritePod {
            purpose: Purpose::ScaleLifecycle,
            ..
        }]
    ));
    world.converge(5);
    let status = world.set.status.as_ref().unwrap();
    assert_eq!(
        (status.desired_number_scheduled, status.number_misscheduled),
        (0, 1)
    );
    world.set_label(&pod, BLOCK, None);
    world.converge(5);
    assert!(world.pods.is_empty());
    assert_eq!(world.set.status.as_ref().unwrap().number_misscheduled, 0);
}

#[test]
fn ds13_in_place_updates_keep_the_pods() {
    let mut set = agent();
    rolling(&mut set).rolling_update_type = Some(IN_PLACE_IF_POSSIBLE.into());
    let mut world = World::new(set, vec![node("n1"), node("n2")]);
    world.converge(10);
    let names: Vec<_> = world.pods.iter().map(|p| p.metadata.name.clone()).collect();
    world.set = with_image(world.set.clone(), "agent:v2");
    let h2 = world.hash();
    let plan = world.step(1);
    assert_eq!(in_place_purpose(&plan), 1);
    world.converge(20);
    let after: Vec<_> = world.pods.iter().map(|p| p.metadata.name.clone()).collect();
    assert_eq!(after, names, "the same pods");
    for p in &world.pods {
        assert_eq!(
            World::label(p, keys::CONTROLLER_REVISION_HASH),
            Some(h2.clone())
        );
        assert_eq!(
            p.spec.as_ref().unwrap().containers[0].image.as_deref(),
            Some("agent:v2")
        );
    }
    assert_eq!(counters(&world.set), [2, 2, 2, 2, 2]);
}

#[test]
fn ds15_a_failed_pod_is_replaced_and_backs_off() {
    let mut world = World::new(agent(), vec![node("n1")]);
    world.converge(10);
    let first = world.pods[0].metadata.name.clone().unwrap();
    Arc::make_mut(&mut world.pods[0])
        .status
        .as_mut()
        .unwrap()
        .phase = Some("Failed".into());
    let plan = world.step(0);
    assert!(
        world
            .events
            .iter()
            .any(|e| e.starts_with("FailedDaemonPod: Found failed daemon pod sys/"))
    );
    assert_eq!(plan.actions.len(), 2, "{:?}", plan.actions);
    assert!(
        world
            .pods
            .iter()
            .all(|p| p.metadata.name.as_deref() != Some(first.as_str()))
    );
    let plan = world.step(0);
    assert!(matches!(
        plan.actions.as_slice(),
        [Action::CreatePod { .. }]
    ));
    // Fails again at once: inside the one-second step nothing is deleted.
    world.settle(0);
    Arc::make_mut(&mut world.pods[0])
        .status
        .as_mut()
        .unwrap()
        .phase = Some("Failed".into());
    let plan = world.step(0);
    assert!(plan.actions.is_empty(), "{:?}", plan.actions);
    assert_eq!(plan.requeue_after, Some(std::time::Duration::from_secs(1)));
}

#[test]
fn a_selector_of_everything_is_refused_and_a_deleted_set_left_alone() {
    let mut set = agent();
    set.spec.selector = Some(Default::default());
    let mut world = World::new(set, vec![node("n1")]);
    let plan = world.plan();
    assert_eq!(
        plan.actions,
        [Action::Event(Event::warning(
            "SelectingAll",
            "This DaemonSet is selecting all pods. A non-empty selector is required.".into()
        ))]
    );
    assert!(!plan.write_status);
    let mut world = World::new(agent(), vec![node("n1")]);
    world.set.metadata.deletion_timestamp = Some(Time(at(0)));
    let plan = world.plan();
    assert!(plan.actions.is_empty() && !plan.write_status);
}

#[test]
fn an_unsettled_round_writes_the_status_only() {
    let mut world = World::new(agent(), vec![node("n1")]);
    let current = world.sync_revision();
    let nodes: Vec<Arc<NodeSummary>> = world.nodes.iter().cloned().map(Arc::new).collect();
    let snapshot = Snapshot {
        set: &world.set,
        nodes: &nodes,
        pods: &[],
        history: &world.history,
        current: &current,
        backoff: &world.backoff,
        settled: false,
        now: at(0),
    };
    let plan = plan(&snapshot).unwrap();
    assert!(plan.actions.is_empty());
    assert!(plan.write_status);
    assert_eq!(plan.status.observed_generation, None);
    let missing = Snapshot {
        current: "agent-gone",
        ..snapshot
    };
    assert!(matches!(
        super::plan(&missing).unwrap_err(),
        PlanError::MissingUpdateRevision { name, .. } if name == "agent-gone"
    ));
}
