use serde_json::json;

use super::*;

fn pod(name: &str, image: &str) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": [{"name": "main", "image": image}]}
    }))
    .unwrap()
}

fn create(name: &str, image: &str) -> Action {
    Action::CreatePod {
        pod: Box::new(pod(name, image)),
        revision: "r1".into(),
    }
}

fn ready(pod: &Pod) -> bool {
    pod.status
        .iter()
        .flat_map(|s| s.conditions.iter().flatten())
        .any(|c| c.type_ == "Ready" && c.status == "True")
}

#[test]
fn created_pods_start_pending_and_the_kubelet_makes_them_ready() {
    let mut cluster = Cluster::new(1_700_000_000);
    cluster.apply_actions(&[create("a", "v1")]).unwrap();
    let a = &cluster.pods[0];
    assert_eq!(a.status.as_ref().unwrap().phase.as_deref(), Some("Pending"));
    assert!(!ready(a));
    cluster.kubelet();
    let a = &cluster.pods[0];
    assert!(ready(a));
    assert_eq!(
        a.spec.as_ref().unwrap().node_name.as_deref(),
        Some("node-1")
    );
    let statuses = a
        .status
        .as_ref()
        .unwrap()
        .container_statuses
        .as_ref()
        .unwrap();
    assert_eq!(statuses[0].image, "v1");
}

#[test]
fn a_stuck_pod_is_never_started() {
    let mut cluster = Cluster::new(0);
    cluster.stuck.push("a".into());
    cluster
        .apply_actions(&[create("a", "v1"), create("b", "v1")])
        .unwrap();
    cluster.kubelet();
    assert!(!ready(&cluster.pods[0]));
    assert!(ready(&cluster.pods[1]));
}

#[test]
fn a_taken_name_an_unknown_pod_and_a_stale_write_are_errors() {
    let mut cluster = Cluster::new(0);
    cluster.apply_actions(&[create("a", "v1")]).unwrap();
    assert_eq!(
        cluster.apply_actions(&[create("a", "v2")]),
        Err(SimulationError::NameReused("a".into()))
    );
    assert_eq!(
        cluster.apply_actions(&[Action::DeletePod { name: "b".into() }]),
        Err(SimulationError::UnknownPodDeleted("b".into()))
    );
    let before = Pod::clone(&cluster.pods[0]);
    let update = |image: &str| Action::UpdatePod {
        before: Arc::new(before.clone()),
        after: Box::new(pod("a", image)),
    };
    // Two writes of one round to one pod: the second read a version that is gone.
    assert_eq!(
        cluster.apply_actions(&[update("v2"), update("v3")]),
        Err(SimulationError::ConflictingWrite("a".into()))
    );
    let ghost = Action::UpdatePod {
        before: Arc::new(pod("ghost", "v1")),
        after: Box::new(pod("ghost", "v2")),
    };
    assert_eq!(
        cluster.apply_actions(&[ghost]),
        Err(SimulationError::UnknownPodWritten("ghost".into()))
    );
}

#[test]
fn a_changed_image_restarts_its_container() {
    let containers = pod("a", "v1").spec.unwrap().containers;
    let first = container_statuses(&containers, &[]);
    assert_eq!(first[0].restart_count, 0);
    assert_eq!(container_statuses(&containers, &first), first);
    let changed = pod("a", "v2").spec.unwrap().containers;
    let second = container_statuses(&changed, &first);
    assert_eq!(second[0].image, "v2");
    assert_eq!(second[0].image_id, "id-v2");
    assert_eq!(second[0].restart_count, 1);
}

#[test]
fn readiness_waits_for_the_readiness_gates() {
    let mut cluster = Cluster::new(0);
    let mut gated = pod("a", "v1");
    gated.spec.as_mut().unwrap().readiness_gates =
        Some(vec![k8s_openapi::api::core::v1::PodReadinessGate {
            condition_type: "Gate".into(),
        }]);
    cluster
        .apply_actions(&[Action::CreatePod {
            pod: Box::new(gated),
            revision: "r1".into(),
        }])
        .unwrap();
    cluster.kubelet();
    assert!(!ready(&cluster.pods[0]));
}

/// A world whose planner creates one pod every round and never stops.
struct Growing {
    cluster: Cluster,
}

impl Simulated for Growing {
    type Plan = Vec<Action>;
    fn plan(&mut self) -> Result<Vec<Action>, SimulationError> {
        let name = format!("p{}", self.cluster.pods.len());
        Ok(vec![create(&name, "v1")])
    }
    fn apply(&mut self, plan: &Vec<Action>) -> Result<(), SimulationError> {
        self.cluster.apply_actions(plan)
    }
    fn writes_nothing(plan: &Vec<Action>) -> bool {
        plan.is_empty()
    }
    fn cluster(&mut self) -> &mut Cluster {
        &mut self.cluster
    }
}

#[test]
fn settle_says_when_the_rounds_ran_out() {
    let mut world = Growing {
        cluster: Cluster::new(0),
    };
    assert_eq!(settle(&mut world, 3), Ok(None));
    assert_eq!(world.cluster.pods.len(), 3);
    assert_eq!(world.cluster.now, 3);
}
