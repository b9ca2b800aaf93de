//! Scaling by the contract's worked examples (CC1, CC2, CC11, CC14) and over several sizes.

use super::*;

#[test]
fn cc1_scale_up_from_zero_creates_labelled_pods_and_counts_nothing_yet() {
    let mut world = World::new(cloneset(3, template("nginx:alpine"), json!({})));
    let plan = world.plan();
    let revision = world.history[0].metadata.name.clone().unwrap();
    let created = creates(&plan);
    assert_eq!(created.len(), 3);
    for p in &created {
        let name = pod::name(p);
        let id = pod::label(p, pvc::INSTANCE_ID).unwrap();
        assert_eq!(name, format!("cs-{id}"));
        assert_eq!(id.len(), 5);
        assert_eq!(
            pod::label(p, keys::CONTROLLER_REVISION_HASH),
            Some(revision.as_str())
        );
        assert_eq!(
            pod::label(p, pod::POD_TEMPLATE_HASH),
            Some(revision::short_hash(&revision))
        );
        assert_eq!(pod::lifecycle(p), PREPARING_NORMAL);
        assert_eq!(pod::label(p, "app"), Some("cs"));
        let owner = &p.metadata.owner_references.as_ref().unwrap()[0];
        assert_eq!(
            (owner.kind.as_str(), owner.uid.as_str(), owner.controller),
            ("CloneSet", "cs-uid", Some(true))
        );
        let gates = p.spec.as_ref().unwrap().readiness_gates.as_ref().unwrap();
        assert_eq!(gates[0].condition_type, keys::INPLACE_UPDATE_READY);
    }
    assert_eq!(plan.status.replicas, 0);
    assert_eq!(
        plan.status.current_revision.as_deref(),
        Some(revision.as_str())
    );
    assert_eq!(
        plan.status.update_revision.as_deref(),
        Some(revision.as_str())
    );
    assert_eq!(plan.status.observed_generation, Some(1));
    assert_eq!(plan.status.label_selector.as_deref(), Some("app=cs"));
    world.apply(&plan);
    let plan = world.plan();
    assert!(creates(&plan).is_empty());
    assert_eq!(
        (
            plan.status.replicas,
            plan.status.ready_replicas,
            plan.status.updated_replicas
        ),
        (3, 0, 3)
    );
    world.settle(20);
    assert_eq!(world.status().ready_replicas, 3);
    assert!(world.pods.iter().all(|p| pod::lifecycle(p) == NORMAL));
}

/// A running, ready, scheduled pod of the world's current revision.
fn ready_pod(world: &World, name: &str, node: &str, ready_at: i64) -> Pod {
    let revision = world.history.last().unwrap().metadata.name.clone().unwrap();
    let template = world.set.spec.template.clone();
    let mut pod: Pod = serde_json::from_value(json!({
        "metadata": {
            "name": name, "namespace": "default", "resourceVersion": "1",
            "creationTimestamp": "2023-11-14T00:00:00Z",
            "labels": {
                "app": "cs", "controller-revision-hash": revision,
                "pod-template-hash": revision::short_hash(&revision),
                "lifecycle.apps.kruise.io/state": "Normal"
            }
        },
        "spec": {
            "nodeName": node,
            "readinessGates": [{"conditionType": "InPlaceUpdateReady"}],
            "containers": serde_json::to_value(&template.spec.unwrap().containers).unwrap()
        },
        "status": {
            "phase": "Running",
            "conditions": [
                {"type": "InPlaceUpdateReady", "status": "True"},
                {"type": "Ready", "status": "True", "lastTransitionTime": Time(at(ready_at))}
            ]
        }
    }))
    .unwrap();
    if node.is_empty() {
        pod.spec.as_mut().unwrap().node_name = None;
    }
    pod
}

#[test]
fn cc2_scale_down_deletes_in_upstream_order_within_the_ready_budget() {
    let mut world = World::new(cloneset(2, template("nginx:alpine"), json!({})));
    let a = ready_pod(&world, "a", "n1", -100);
    let mut b = ready_pod(&world, "b", "", 0);
    b.status = Some(PodStatus {
        phase: Some("Pending".into()),
        ..Default::default()
    });
    let mut c = ready_pod(&world, "c", "n2", 0);
    c.status.as_mut().unwrap().conditions.as_mut().unwrap()[1].status = "False".into();
    let d = ready_pod(&world, "d", "n1", -50);
    let mut e = ready_pod(&world, "e", "n3", -10);
    e.metadata.annotations = Some([(pod::DELETION_COST.to_string(), "-10".to_string())].into());
    world.pods = [a, b, c, d, e].into_iter().map(Arc::new).collect();
    let plan = world.plan();
    let mut deleted = deletes(&plan);
    deleted.sort();
    assert_eq!(deleted, ["b", "c", "e"]);

    let mut order: Vec<&Pod> = world.pods.iter().map(|p| p.as_ref()).collect();
    sort::sort_for_deletion(&mut order, 0, at(0));
    let names: Vec<&str> = order.iter().map(pod::name).collect();
    assert_eq!(names, ["b", "c", "e", "d", "a"]);
}

#[test]
fn cc11_pods_to_delete_deletes_replaces_and_forgets() {
    let mut world = World::new(cloneset(3, template("img:v1"), json!({})));
    world.settle(30);
    let b = pod::name(&world.pods[1]).to_string();
    world.set.spec.scale_strategy.pods_to_delete = Some(vec![b.clone()]);
    let plan = world.round();
    assert_eq!(deletes(&plan), [b.as_str()]);
    let plan = world.round();
    assert_eq!(creates(&plan).len(), 1);
    assert_eq!(plan.extra.pods_to_delete, Some(vec![]));
    assert!(world.pods.iter().all(|p| pod::name(p) != b));
}

#[test]
fn cc14_scale_max_unavailable_limits_creations() {
    let mut world = World::new(cloneset(5, template("img:v1"), json!({})));
    world.set.spec.scale_strategy.max_unavailable =
        Some(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(2));
    let plan = world.plan();
    assert_eq!(creates(&plan).len(), 2);
    assert!(plan.actions.iter().any(|a| matches!(a, Action::Event(e) if e.reason == "ScaleUpLimited" && e.message.ends_with("limit: 2"))));
    world.apply(&plan);
    let plan = world.plan();
    assert!(creates(&plan).is_empty());
    assert!(
        plan.actions
            .iter()
            .any(|a| matches!(a, Action::Event(e) if e.message.ends_with("limit: 0")))
    );
    let first = pod::name(&world.pods[0]).to_string();
    world.stuck.push(first);
    world.now += 1;
    world.kubelet();
    world.round(); // marks the started pod Normal and ready
    let mut created = 0;
    for _ in 0..3 {
        created += creates(&world.round()).len();
    }
    assert!(created >= 1);
    assert!(world.pods.len() <= 5);
}

#[test]
fn scale_zero_three_five_two() {
    let mut world = World::new(cloneset(0, template("img:v1"), json!({})));
    for replicas in [3, 5, 2] {
        world.set.spec.replicas = Some(replicas);
        world.settle(40);
        assert_eq!(world.pods.len(), replicas as usize);
        assert_eq!(world.status().ready_replicas, replicas);
    }
}
