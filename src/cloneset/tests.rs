//! The planner against the worked examples of the contract (CC-…, W1), and a small simulated
//! cluster (apiserver + kubelet) for multi-round cases and the property tests.

use std::collections::BTreeMap;
use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{ContainerStatus, Pod, PodCondition, PodStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::api::cloneset::CloneSet;
use crate::api::keys;
use crate::cloneset::pod::{NORMAL, PREPARING_DELETE, PREPARING_UPDATE, UPDATED};
use crate::inject::launch_priority::barrier_env;

const T0: i64 = 1_700_000_000;

fn at(seconds: i64) -> Timestamp {
    Timestamp::from_second(T0 + seconds).unwrap()
}

fn template(image: &str) -> Value {
    json!({
        "metadata": {"labels": {"app": "cs"}},
        "spec": {"containers": [{"name": "main", "image": image}]}
    })
}

fn cloneset(replicas: i32, template: Value, strategy: Value) -> CloneSet {
    let mut set: CloneSet = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "cs", "namespace": "default", "uid": "cs-uid", "generation": 1},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "cs"}},
            "template": template,
            "updateStrategy": strategy
        }
    }))
    .unwrap();
    set.status = None;
    set
}

/// The simulated cluster: one CloneSet, its pods, its history, a clock, a kubelet.
struct World {
    set: CloneSet,
    pods: Vec<Arc<Pod>>,
    history: Vec<ControllerRevision>,
    now: i64,
    version: u64,
    rng: fastrand::Rng,
    /// Pods the kubelet leaves alone (not started / never ready).
    stuck: Vec<String>,
}

impl World {
    fn new(set: CloneSet) -> World {
        let mut world = World {
            set,
            pods: Vec::new(),
            history: Vec::new(),
            now: 0,
            version: 1,
            rng: fastrand::Rng::with_seed(7),
            stuck: Vec::new(),
        };
        world.sync_revision();
        world
    }

    /// What the shell does before planning: make the update revision exist.
    fn sync_revision(&mut self) -> String {
        let collision = self
            .set
            .status
            .as_ref()
            .and_then(|s| s.collision_count)
            .unwrap_or(0);
        match revision::update_revision(&self.set, &self.history, collision).unwrap() {
            revision::UpdateRevision::Latest { name } => name,
            revision::UpdateRevision::Renumber { name, revision } => {
                let r = self
                    .history
                    .iter_mut()
                    .find(|r| r.metadata.name.as_deref() == Some(&name))
                    .unwrap();
                r.revision = revision;
                revision::sort_history(&mut self.history);
                name
            }
            revision::UpdateRevision::Create(r) => {
                let name = r.metadata.name.clone().unwrap();
                self.history.push(*r);
                revision::sort_history(&mut self.history);
                name
            }
        }
    }

    /// The round with every pod whole. Every round of every scenario also plans as the shell
    /// does, and checks that it gives the same plan: first with whole pods only where the cache
    /// keeps them ([`listed::read_whole_every_round`]), then once more with the pods that plan
    /// asked for read whole.
    fn plan(&mut self) -> Plan {
        let update = self.sync_revision();
        let whole: Vec<ListedPod> = self.pods.iter().cloned().map(ListedPod::whole).collect();
        fn snapshot<'a>(world: &'a World, update: &'a str, pods: &'a [ListedPod]) -> Snapshot<'a> {
            Snapshot {
                cloneset: &world.set,
                pods,
                history: &world.history,
                update_revision: update,
                collision_count: 0,
                now: at(world.now),
            }
        }
        let mut rng = self.rng.clone();
        let mut same_draws = self.rng.clone();
        let planned = plan(&snapshot(self, &update, &whole), &mut rng).unwrap();
        assert!(planned.needs_whole.is_empty());

        let mut cached: Vec<ListedPod> = whole
            .iter()
            .map(|p| match listed::read_whole_every_round(&p.summary) {
                true => p.clone(),
                false => ListedPod::summary(p.summary.clone()),
            })
            .collect();
        let mut draws = same_draws.clone();
        let mut as_shell = plan(&snapshot(self, &update, &cached), &mut draws).unwrap();
        if !as_shell.needs_whole.is_empty() {
            for p in &mut cached {
                if as_shell.needs_whole.iter().any(|n| n == pod::name(p)) {
                    p.whole = whole
                        .iter()
                        .find(|w| w.summary == p.summary)
                        .unwrap()
                        .whole
                        .clone();
                }
            }
            as_shell = plan(&snapshot(self, &update, &cached), &mut same_draws).unwrap();
        }
        assert_eq!(as_shell, planned);
        self.rng = rng;
        planned
    }

    fn next_version(&mut self) -> String {
        self.version += 1;
        self.version.to_string()
    }

    /// Applies a plan as the apiserver would; panics on a conflicting write (two writes of one
    /// round to the same pod).
    fn apply(&mut self, plan: &Plan) {
        for action in &plan.actions {
            match action {
                Action::CreatePod { pod, .. } => {
                    let mut pod = Pod::clone(pod);
                    assert!(
                        !self
                            .pods
                            .iter()
                            .any(|p| p.metadata.name == pod.metadata.name),
                        "name reused"
                    );
                    pod.metadata.resource_version = Some(self.next_version());
                    pod.metadata.creation_timestamp = Some(Time(at(self.now)));
                    pod.status = Some(PodStatus {
                        phase: Some("Pending".into()),
                        ..Default::default()
                    });
                    self.pods.push(Arc::new(pod));
                }
                Action::DeletePod { name } => {
                    let before = self.pods.len();
                    self.pods
                        .retain(|p| p.metadata.name.as_deref() != Some(name));
                    assert_eq!(before, self.pods.len() + 1, "delete of unknown pod {name}");
                }
                Action::WritePod { before, writes, .. } => {
                    let index = self
                        .pods
                        .iter()
                        .position(|p| p.metadata.name == before.metadata.name)
                        .unwrap();
                    assert_eq!(
                        self.pods[index].metadata.resource_version,
                        before.metadata.resource_version,
                        "conflicting write to {:?}",
                        before.metadata.name
                    );
                    let mut pod = writes.last().unwrap().pod.clone();
                    pod.metadata.resource_version = Some(self.next_version());
                    self.pods[index] = Arc::new(pod);
                }
                Action::Event(_) => {}
            }
        }
        if plan.write_status {
            self.set.status = Some(plan.status.clone());
        }
        if let Some(kept) = &plan.pods_to_delete {
            self.set.spec.scale_strategy.pods_to_delete = Some(kept.clone());
        }
        self.history.retain(|r| {
            !plan
                .revisions_to_delete
                .contains(r.metadata.name.as_ref().unwrap())
        });
    }

    /// Kubelet: schedules, starts the spec images (new imageID on change), reports readiness
    /// from containers and readiness gates.
    fn kubelet(&mut self) {
        let now = at(self.now);
        for index in 0..self.pods.len() {
            let mut pod = Pod::clone(&self.pods[index]);
            if self.stuck.contains(pod.metadata.name.as_ref().unwrap()) {
                continue;
            }
            let spec = pod.spec.clone().unwrap();
            pod.spec
                .as_mut()
                .unwrap()
                .node_name
                .get_or_insert_with(|| "node-1".into());
            let status = pod.status.get_or_insert_with(Default::default);
            status.phase = Some("Running".into());
            let old = status.container_statuses.clone().unwrap_or_default();
            status.container_statuses = Some(
                spec.containers
                    .iter()
                    .map(|c| {
                        let image = c.image.clone().unwrap_or_default();
                        match old.iter().find(|s| s.name == c.name) {
                            Some(s) if s.image == image => s.clone(),
                            Some(s) => ContainerStatus {
                                image: image.clone(),
                                image_id: format!("id-{image}"),
                                restart_count: s.restart_count + 1,
                                ..s.clone()
                            },
                            None => ContainerStatus {
                                name: c.name.clone(),
                                image: image.clone(),
                                image_id: format!("id-{image}"),
                                ready: true,
                                container_id: Some(format!("containerd://{}", c.name)),
                                ..Default::default()
                            },
                        }
                    })
                    .collect(),
            );
            let gates_ok = spec.readiness_gates.iter().flatten().all(|g| {
                status
                    .conditions
                    .iter()
                    .flatten()
                    .any(|c| c.type_ == g.condition_type && c.status == "True")
            });
            let ready = if gates_ok { "True" } else { "False" };
            let conditions = status.conditions.get_or_insert_with(Vec::new);
            match conditions.iter_mut().find(|c| c.type_ == "Ready") {
                Some(c) if c.status == ready => {}
                Some(c) => {
                    c.status = ready.into();
                    c.last_transition_time = Some(Time(now));
                }
                None => conditions.push(PodCondition {
                    type_: "Ready".into(),
                    status: ready.into(),
                    last_transition_time: Some(Time(now)),
                    ..Default::default()
                }),
            }
            if *self.pods[index] != pod {
                pod.metadata.resource_version = Some(self.next_version());
                self.pods[index] = Arc::new(pod);
            }
        }
    }

    /// One reconcile, then one second of kubelet.
    fn round(&mut self) -> Plan {
        let plan = self.plan();
        self.apply(&plan);
        self.now += 1;
        self.kubelet();
        plan
    }

    /// Rounds until a reconcile writes nothing; the number of rounds it took.
    fn settle(&mut self, max_rounds: usize) -> usize {
        for n in 0..max_rounds {
            let plan = self.round();
            if plan.actions.is_empty() && !plan.write_status {
                return n;
            }
        }
        panic!(
            "no convergence after {max_rounds} rounds: {:#?}",
            self.summary()
        );
    }

    fn summary(&self) -> Vec<(String, String, String)> {
        self.pods
            .iter()
            .map(|p| {
                (
                    pod::name(p).to_string(),
                    pod::label(p, keys::CONTROLLER_REVISION_HASH)
                        .unwrap_or("")
                        .to_string(),
                    pod::lifecycle(p).to_string(),
                )
            })
            .collect()
    }

    fn set_template(&mut self, template: Value) {
        self.set.spec.template = serde_json::from_value(template).unwrap();
        self.set.metadata.generation = Some(self.set.metadata.generation.unwrap_or(1) + 1);
    }

    fn available(&self) -> usize {
        self.pods
            .iter()
            .filter(|p| pod::is_active(p) && pod::is_available(p, 0, at(self.now)))
            .count()
    }

    fn at_update(&self) -> usize {
        let update = self
            .set
            .status
            .as_ref()
            .and_then(|s| s.update_revision.clone())
            .unwrap();
        self.pods
            .iter()
            .filter(|p| pod::at_revision(p, &update))
            .count()
    }

    fn status(&self) -> &crate::api::cloneset::CloneSetStatus {
        self.set.status.as_ref().unwrap()
    }
}

fn creates(plan: &Plan) -> Vec<&Pod> {
    plan.actions
        .iter()
        .filter_map(|a| match a {
            Action::CreatePod { pod, .. } => Some(pod.as_ref()),
            _ => None,
        })
        .collect()
}

fn deletes(plan: &Plan) -> Vec<&str> {
    plan.actions
        .iter()
        .filter_map(|a| match a {
            Action::DeletePod { name } => Some(name.as_str()),
            _ => None,
        })
        .collect()
}

fn writes(plan: &Plan) -> Vec<(&str, &Purpose, &[PodWrite])> {
    plan.actions
        .iter()
        .filter_map(|a| match a {
            Action::WritePod {
                before,
                writes,
                purpose,
            } => Some((pod::name(before), purpose, writes.as_slice())),
            _ => None,
        })
        .collect()
}

fn image_of(p: &Pod, container: &str) -> String {
    p.spec
        .as_ref()
        .unwrap()
        .containers
        .iter()
        .find(|c| c.name == container)
        .and_then(|c| c.image.clone())
        .unwrap()
}

#[test]
fn cc1_scale_up_from_zero_creates_labelled_pods_and_counts_nothing_yet() {
    let mut world = World::new(cloneset(3, template("nginx:alpine"), json!({})));
    let plan = world.plan();
    let revision = world.history[0].metadata.name.clone().unwrap();
    let created = creates(&plan);
    assert_eq!(created.len(), 3);
    for p in &created {
        let name = pod::name(p);
        let id = pod::label(p, pod::INSTANCE_ID).unwrap();
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
        assert_eq!(pod::lifecycle(p), pod::PREPARING_NORMAL);
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
    assert!(world.pods.iter().all(|p| pod::lifecycle(p) == pod::NORMAL));
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
    scale::sort_for_deletion(&mut order, 0, at(0));
    let names: Vec<&str> = order.iter().map(pod::name).collect();
    assert_eq!(names, ["b", "c", "e", "d", "a"]);
}

#[test]
fn cc3_partition_keeps_the_longest_ready_pods_at_the_old_revision() {
    for partition in [json!(2), json!("40%"), json!("30%")] {
        let mut world = World::new(cloneset(
            5,
            template("nginx:v1"),
            json!({"type": "InPlaceIfPossible", "partition": partition}),
        ));
        world.settle(30);
        let old = world.status().update_revision.clone().unwrap();
        // Make the ready order known: the lower the index, the longer ready.
        let names: Vec<String> = world
            .pods
            .iter()
            .map(|p| pod::name(p).to_string())
            .collect();
        for (i, p) in world.pods.iter_mut().enumerate() {
            let mut next = Pod::clone(p);
            let ready = next.status.as_mut().unwrap().conditions.as_mut().unwrap();
            let ready = ready.iter_mut().find(|c| c.type_ == "Ready").unwrap();
            ready.last_transition_time = Some(Time(at(-100 + i as i64)));
            *p = Arc::new(next);
        }
        world.set_template(template("nginx:v2"));
        world.settle(60);
        let status = world.status();
        assert_eq!(status.updated_replicas, 3, "partition {partition}");
        assert_eq!(status.expected_updated_replicas, Some(3));
        assert_eq!(status.current_revision.as_deref(), Some(old.as_str()));
        let kept: Vec<&str> = world
            .pods
            .iter()
            .filter(|p| pod::at_revision(p, &old))
            .map(pod::name)
            .collect();
        assert_eq!(kept, [names[0].as_str(), names[1].as_str()]);
    }
}

#[test]
fn cc4_max_unavailable_one_in_place_never_two_pods_in_flight() {
    let mut world = World::new(cloneset(
        4,
        template("nginx:v1"),
        json!({"type": "InPlaceIfPossible", "maxUnavailable": 1}),
    ));
    world.settle(30);
    let uids: Vec<String> = world
        .pods
        .iter()
        .map(|p| pod::name(p).to_string())
        .collect();
    world.set_template(template("nginx:v2"));
    let mut saw_gate_false_before_image = false;
    for _ in 0..80 {
        let plan = world.plan();
        for (_, purpose, ws) in writes(&plan) {
            if matches!(purpose, Purpose::InPlace { .. }) {
                // The readiness gate goes False before the image changes, in the same action.
                assert_eq!(ws.len(), 2);
                assert!(ws[0].status);
                assert_eq!(image_of(&ws[0].pod, "main"), "nginx:v1");
                assert_eq!(image_of(&ws[1].pod, "main"), "nginx:v2");
                saw_gate_false_before_image = true;
            }
        }
        world.apply(&plan);
        assert!(4 - world.available() <= 1, "{:?}", world.summary());
        world.now += 1;
        world.kubelet();
        if plan.actions.is_empty() && !plan.write_status {
            break;
        }
    }
    assert!(saw_gate_false_before_image);
    let status = world.status();
    assert_eq!(
        (status.updated_replicas, status.updated_ready_replicas),
        (4, 4)
    );
    assert_eq!(status.current_revision, status.update_revision);
    // Same pods, updated in place.
    let names: Vec<String> = world
        .pods
        .iter()
        .map(|p| pod::name(p).to_string())
        .collect();
    assert_eq!(names, uids);
    assert!(world.pods.iter().all(|p| image_of(p, "main") == "nginx:v2"));
}

#[test]
fn cc5_surge_recreate_never_drops_below_replicas_available() {
    let mut world = World::new(cloneset(
        3,
        template("nginx:v1"),
        json!({"type": "ReCreate", "maxSurge": 1, "maxUnavailable": 0}),
    ));
    world.settle(30);
    let old_names: Vec<String> = world
        .pods
        .iter()
        .map(|p| pod::name(p).to_string())
        .collect();
    let mut t = template("nginx:v1");
    t["spec"]["containers"][0]["env"] = json!([{"name": "A", "value": "1"}]);
    world.set_template(t);
    let first = world.plan();
    assert_eq!(creates(&first).len(), 1, "surge pod first");
    world.apply(&first);
    world.now += 1;
    world.kubelet();
    for _ in 0..80 {
        let plan = world.round();
        assert!(world.pods.len() <= 4);
        assert!(
            world.available() >= 3
                || !plan
                    .actions
                    .iter()
                    .any(|a| matches!(a, Action::DeletePod { .. }))
        );
        if plan.actions.is_empty() && !plan.write_status {
            break;
        }
    }
    assert_eq!(world.pods.len(), 3);
    assert_eq!(world.at_update(), 3);
    assert!(
        world
            .pods
            .iter()
            .all(|p| !old_names.contains(&pod::name(p).to_string()))
    );
}

#[test]
fn cc6_in_place_only_refuses_a_non_image_change_without_touching_pods() {
    let mut world = World::new(cloneset(
        2,
        template("nginx:v1"),
        json!({"type": "InPlaceOnly"}),
    ));
    world.settle(30);
    let mut t = template("nginx:v1");
    t["spec"]["containers"][0]["env"] = json!([{"name": "A", "value": "1"}]);
    world.set_template(t);
    let plan = world.plan();
    assert!(writes(&plan).is_empty());
    let error = plan.error.clone().unwrap();
    assert!(
        error.starts_with("find Pod cs-")
            && error.contains("update strategy is InPlaceOnly but can not update in-place"),
        "{error}"
    );
    let condition = &plan.status.conditions.as_ref().unwrap()[0];
    assert_eq!(
        (condition.type_.as_str(), condition.status.as_str()),
        ("FailedUpdate", "True")
    );
    // A condition alone is never written; here it goes with the generation the round observed.
    assert!(plan.write_status);
    world.apply(&plan);
    // Repeating the round writes no new condition.
    let again = world.plan();
    assert!(!again.write_status);
}

#[test]
fn cc7_in_place_if_possible_falls_back_to_recreate() {
    let mut world = World::new(cloneset(
        3,
        template("nginx:v1"),
        json!({"type": "InPlaceIfPossible"}),
    ));
    world.settle(30);
    let mut t = template("nginx:v1");
    t["spec"]["containers"][0]["ports"] = json!([{"containerPort": 80}]);
    world.set_template(t);
    let plan = world.round();
    let marked = writes(&plan);
    assert_eq!(marked.len(), 1);
    assert!(matches!(marked[0].1, Purpose::Recreate { .. }));
    assert_eq!(
        pod::label(&*marked[0].2[0].pod, pod::SPECIFIED_DELETE),
        Some("true")
    );
    let victim = marked[0].0.to_string();
    let plan = world.round();
    assert_eq!(deletes(&plan), [victim.as_str()]);
    let plan = world.round();
    assert_eq!(creates(&plan).len(), 1);
    world.settle(80);
    assert_eq!(world.at_update(), 3);
}

/// W1 with both images changed: a sidecar of launch priority 10 goes first, main after it is ready.
#[test]
fn w1_two_priorities_update_in_two_batches_sidecar_first() {
    let w1 = |sidecar: &str, main: &str| {
        json!({
            "metadata": {"labels": {"app": "cs"}, "annotations": {"app-config": "config v1"}},
            "spec": {"containers": [
                {"name": "sidecar", "image": sidecar, "env": [
                    {"name": "KRUISE_CONTAINER_PRIORITY", "value": "10"},
                    serde_json::to_value(barrier_env("x-barrier", 10)).unwrap()
                ]},
                {"name": "main", "image": main, "env": [
                    serde_json::to_value(barrier_env("x-barrier", 0)).unwrap()
                ]}
            ]}
        })
    };
    let mut world = World::new(cloneset(
        1,
        w1("sidecar:v1", "main:v1"),
        json!({"type": "InPlaceIfPossible"}),
    ));
    world.settle(30);
    let uid = pod::name(&world.pods[0]).to_string();
    world.set_template(w1("sidecar:v2", "main:v2"));
    let plan = world.plan();
    let started = writes(&plan);
    assert_eq!(started.len(), 1);
    let after = &started[0].2.last().unwrap().pod;
    assert_eq!(image_of(after, "sidecar"), "sidecar:v2");
    assert_eq!(
        image_of(after, "main"),
        "main:v1",
        "main waits for the next batch"
    );
    assert_eq!(pod::lifecycle(&**after), pod::UPDATING);
    let state: Value =
        serde_json::from_str(pod::annotation(after, keys::INPLACE_UPDATE_STATE).unwrap()).unwrap();
    assert_eq!(state["nextContainerImages"], json!({"main": "main:v2"}));
    assert_eq!(
        state["preCheckBeforeNext"],
        json!({"containersRequiredReady": ["sidecar"]})
    );
    assert_eq!(
        plan.status.updated_replicas, 0,
        "counted from the pods listed at the start"
    );
    world.apply(&plan);
    world.now += 1;
    world.kubelet();
    let mut batches = Vec::new();
    for _ in 0..30 {
        let plan = world.round();
        for (_, purpose, ws) in writes(&plan) {
            if *purpose == Purpose::Refresh && !ws[0].status {
                batches.push(image_of(&ws[0].pod, "main"));
            }
        }
        if plan.actions.is_empty() && !plan.write_status {
            break;
        }
    }
    assert_eq!(batches, ["main:v2"]);
    let p = &world.pods[0];
    assert_eq!(pod::name(p), uid);
    assert_eq!(pod::lifecycle(p), pod::NORMAL);
    let restarts: BTreeMap<String, i32> = p
        .status
        .as_ref()
        .unwrap()
        .container_statuses
        .iter()
        .flatten()
        .map(|s| (s.name.clone(), s.restart_count))
        .collect();
    assert_eq!(
        restarts,
        [("main".to_string(), 1), ("sidecar".to_string(), 1)].into()
    );
    let status = world.status();
    assert_eq!((status.updated_ready_replicas, status.replicas), (1, 1));
    let state: Value =
        serde_json::from_str(pod::annotation(p, keys::INPLACE_UPDATE_STATE).unwrap()).unwrap();
    let record: Vec<Value> = state["containerBatchesRecord"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["containers"].clone())
        .collect();
    assert_eq!(record, [json!(["sidecar"]), json!(["main"])]);
}

/// W1 proper: a changed annotation read by the sidecar's env. Without a node agent nothing can
/// restart the sidecar, so InPlaceIfPossible recreates and InPlaceOnly says why it cannot.
#[test]
fn w1_env_from_metadata_recreates_or_is_refused() {
    let w1 = |config: &str, main: &str| {
        json!({
            "metadata": {"labels": {"app": "cs"}, "annotations": {"app-config": config}},
            "spec": {"containers": [
                {"name": "sidecar", "image": "sidecar:v1", "env": [
                    {"name": "KRUISE_CONTAINER_PRIORITY", "value": "10"},
                    {"name": "APP_CONFIG", "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations['app-config']"}}}
                ]},
                {"name": "main", "image": main}
            ]}
        })
    };
    for (strategy, recreated) in [("InPlaceIfPossible", true), ("InPlaceOnly", false)] {
        let mut world = World::new(cloneset(
            1,
            w1("config v1", "main:v1"),
            json!({"type": strategy}),
        ));
        world.settle(30);
        world.set_template(w1("config v2", "main:v2"));
        let plan = world.plan();
        if recreated {
            let w = writes(&plan);
            assert!(matches!(w[0].1, Purpose::Recreate { .. }));
            world.apply(&plan);
            world.settle(40);
            assert_eq!(world.at_update(), 1);
            assert_eq!(
                pod::annotation(&world.pods[0], "app-config"),
                Some("config v2")
            );
        } else {
            assert!(writes(&plan).is_empty());
            let error = plan.error.unwrap();
            assert!(
                error.contains("container \"sidecar\" reads metadata.annotations['app-config']"),
                "{error}"
            );
        }
    }
}

/// With a current node agent record on the pod, the v1.1 example's env change goes in place: the
/// first batch is the sidecar, carried by the pod's annotation; main's image waits.
#[test]
fn w1_env_from_metadata_in_place_on_a_pod_the_node_agent_reports() {
    use crate::inplace::completion::{
        RuntimeContainerHashes, RuntimeContainerMeta, RuntimeContainersMeta,
    };
    let w1 = |config: &str, main: &str| {
        json!({
            "metadata": {"labels": {"app": "cs"}, "annotations": {"app-config": config}},
            "spec": {"containers": [
                {"name": "sidecar", "image": "sidecar:v1", "env": [
                    {"name": "KRUISE_CONTAINER_PRIORITY", "value": "10"},
                    // what the launch-priority webhook adds at creation
                    serde_json::to_value(barrier_env("x-barrier", 10)).unwrap(),
                    {"name": "APP_CONFIG", "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations['app-config']"}}}
                ]},
                {"name": "main", "image": main, "env": [
                    serde_json::to_value(barrier_env("x-barrier", 0)).unwrap()
                ]}
            ]}
        })
    };
    let mut world = World::new(cloneset(
        1,
        w1("config v1", "main:v1"),
        json!({"type": "InPlaceOnly"}),
    ));
    world.settle(30);
    let record = RuntimeContainersMeta {
        containers: ["main", "sidecar"]
            .iter()
            .map(|name| RuntimeContainerMeta {
                name: name.to_string(),
                container_id: format!("containerd://{name}"),
                restart_count: 0,
                hashes: RuntimeContainerHashes {
                    plain_hash: 1,
                    extracted_env_from_metadata_hash: 7,
                },
            })
            .collect(),
    };
    Arc::make_mut(&mut world.pods[0])
        .metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert(
            keys::RUNTIME_CONTAINERS_META.into(),
            serde_json::to_string(&record).unwrap(),
        );
    world.set_template(w1("config v2", "main:v2"));
    let plan = world.plan();
    assert_eq!(plan.error, None);
    let w = writes(&plan);
    assert!(matches!(w[0].1, Purpose::InPlace { .. }), "{w:?}");
    let patched = &w[0].2.last().unwrap().pod;
    assert_eq!(pod::annotation(patched, "app-config"), Some("config v2"));
    assert_eq!(image_of(patched, "main"), "main:v1");
    let state = crate::inplace::state::read_state(patched).unwrap().unwrap();
    assert!(state.update_env_from_metadata);
    assert_eq!(
        state.next_container_images.get("main").map(String::as_str),
        Some("main:v2")
    );
}

/// One in-place update at a time per pod: a SidecarSet's batches in progress are neither driven
/// nor overtaken by the CloneSet; the pod is taken once they are done.
#[test]
fn an_in_place_update_of_another_owner_is_waited_for() {
    let mut world = World::new(cloneset(
        1,
        template("nginx:v1"),
        json!({"type": "InPlaceIfPossible"}),
    ));
    world.settle(30);
    let foreign = r#"{"revision":"mesh-h2","updateTimestamp":"2024-05-01T10:00:00Z","lastContainerStatuses":{},"nextContainerImages":{"proxy":"proxy:v2"}}"#;
    Arc::make_mut(&mut world.pods[0])
        .metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert(keys::INPLACE_UPDATE_STATE.into(), foreign.into());
    world.set_template(template("nginx:v2"));
    let plan = world.plan();
    assert!(writes(&plan).is_empty(), "{:?}", writes(&plan));
    assert!(plan.requeue_after.is_some());
    // Done: the gate is True and no batch is left.
    let done = r#"{"revision":"mesh-h2","updateTimestamp":"2024-05-01T10:00:00Z","lastContainerStatuses":{}}"#;
    Arc::make_mut(&mut world.pods[0])
        .metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert(keys::INPLACE_UPDATE_STATE.into(), done.into());
    let plan = world.plan();
    assert!(
        writes(&plan)
            .iter()
            .any(|(_, purpose, _)| matches!(purpose, Purpose::InPlace { .. })),
        "{:?}",
        writes(&plan)
    );
}

#[test]
fn cc9_grace_period_waits_before_the_image_patch() {
    let mut world = World::new(cloneset(
        1,
        template("img:v1"),
        json!({"type": "InPlaceIfPossible", "inPlaceUpdateStrategy": {"gracePeriodSeconds": 10}}),
    ));
    world.settle(30);
    world.set_template(template("img:v2"));
    let start = world.now;
    let plan = world.plan();
    let w = writes(&plan);
    let after = &w[0].2.last().unwrap().pod;
    assert_eq!(image_of(after, "main"), "img:v1");
    assert!(pod::annotation(after, keys::INPLACE_UPDATE_GRACE).is_some());
    assert_eq!(plan.requeue_after, Some(std::time::Duration::from_secs(10)));
    world.apply(&plan);
    world.now = start + 4;
    let plan = world.plan();
    assert!(plan.actions.is_empty(), "{:?}", plan.actions);
    assert_eq!(plan.requeue_after, Some(std::time::Duration::from_secs(6)));
    assert_eq!(plan.status.updated_replicas, 1);
    world.now = start + 10;
    let plan = world.plan();
    let w = writes(&plan);
    assert_eq!(w.len(), 1);
    assert_eq!(image_of(&w[0].2[0].pod, "main"), "img:v2");
    assert!(pod::annotation(&w[0].2[0].pod, keys::INPLACE_UPDATE_GRACE).is_none());
}

#[test]
fn cc10_paused_finishes_in_flight_pods_and_starts_none() {
    let mut world = World::new(cloneset(
        4,
        template("img:v1"),
        json!({"type": "InPlaceIfPossible", "maxUnavailable": 1}),
    ));
    world.settle(30);
    world.set_template(template("img:v2"));
    world.round();
    assert_eq!(world.at_update(), 1);
    world.set.spec.update_strategy.paused = Some(true);
    world.settle(30);
    assert_eq!(world.at_update(), 1);
    assert!(world.pods.iter().all(|p| pod::lifecycle(p) == pod::NORMAL));
    world.set.spec.replicas = Some(5);
    world.settle(30);
    assert_eq!(world.pods.len(), 5);
    world.set.spec.update_strategy.paused = None;
    world.settle(60);
    assert_eq!(world.at_update(), 5);
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
    assert_eq!(plan.pods_to_delete, Some(vec![]));
    assert!(world.pods.iter().all(|p| pod::name(p) != b));
}

#[test]
fn cc12_rollback_mid_update_moves_updated_pods_back_in_place() {
    let mut world = World::new(cloneset(
        4,
        template("img:v1"),
        json!({"type": "InPlaceIfPossible", "maxUnavailable": 1}),
    ));
    world.settle(30);
    let rev1 = world.status().update_revision.clone().unwrap();
    world.set_template(template("img:v2"));
    for _ in 0..40 {
        world.round();
        if world.at_update() == 2 && world.pods.iter().all(|p| pod::lifecycle(p) == pod::NORMAL) {
            break;
        }
    }
    assert_eq!(world.at_update(), 2);
    world.set_template(template("img:v1"));
    let plan = world.round();
    assert_eq!(plan.status.update_revision.as_deref(), Some(rev1.as_str()));
    assert_eq!(
        world.history.last().unwrap().metadata.name.as_deref(),
        Some(rev1.as_str())
    );
    assert_eq!(world.history.last().unwrap().revision, 3);
    world.settle(60);
    assert!(
        world
            .pods
            .iter()
            .all(|p| pod::at_revision(p, &rev1) && image_of(p, "main") == "img:v1")
    );
    assert_eq!(world.pods.len(), 4);
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
    world.stuck.push(pod::name(&world.pods[0]).to_string());
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

#[test]
fn unreadable_state_annotation_is_reported_not_fatal() {
    let mut world = World::new(cloneset(
        1,
        template("img:v1"),
        json!({"type": "InPlaceIfPossible"}),
    ));
    world.settle(30);
    let mut p = Pod::clone(&world.pods[0]);
    p.metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert(keys::INPLACE_UPDATE_STATE.into(), "{not json".into());
    world.pods[0] = Arc::new(p);
    let plan = world.plan();
    assert!(
        plan.actions
            .iter()
            .any(|a| matches!(a, Action::Event(e) if e.reason == "InvalidInPlaceUpdateState"))
    );
}

#[test]
fn history_is_truncated_to_the_limit() {
    let mut world = World::new(cloneset(
        1,
        template("img:v0"),
        json!({"type": "InPlaceIfPossible"}),
    ));
    world.set.spec.revision_history_limit = Some(2);
    for n in 1..=4 {
        world.set_template(template(&format!("img:v{n}")));
        world.settle(40);
    }
    // The live revision and at most 2 others: OpenKruise counts only revisions no pod wears
    // against the limit.
    assert_eq!(world.history.len(), 3);
    let update = world.status().update_revision.clone().unwrap();
    assert!(
        world
            .history
            .iter()
            .any(|r| r.metadata.name.as_deref() == Some(update.as_str()))
    );
}

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
            world.stuck.push(pod::name(&world.pods[0]).to_string());
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
        .map(|p| pod::label(p, pod::INSTANCE_ID).unwrap())
        .collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 30);
}

fn with_lifecycle(mut set: CloneSet, lifecycle: Value) -> CloneSet {
    set.spec.lifecycle = Some(serde_json::from_value(lifecycle).unwrap());
    set
}

fn held_template(image: &str) -> Value {
    json!({
        "metadata": {"labels": {"app": "cs", "hold": "true"}},
        "spec": {"containers": [{"name": "main", "image": image}]}
    })
}

fn without_label(world: &mut World, name: &str, key: &str) {
    let index = world
        .pods
        .iter()
        .position(|p| pod::name(p) == name)
        .unwrap();
    let version = world.next_version();
    let pod = Arc::make_mut(&mut world.pods[index]);
    pod.metadata.labels.as_mut().unwrap().remove(key);
    pod.metadata.resource_version = Some(version);
}

/// preDelete: a hooked pod chosen for scale-in waits in PreparingDelete, counted and not deleted,
/// until its hook label is removed; then it is deleted.
#[test]
fn pre_delete_hook_holds_a_pod_in_preparing_delete_until_released() {
    let mut world = World::new(with_lifecycle(
        cloneset(3, held_template("nginx:v1"), json!({})),
        json!({"preDelete": {"labelsHandler": {"hold": "true"}}}),
    ));
    world.settle(30);
    world.set.spec.replicas = Some(2);
    let plan = world.round();
    assert!(deletes(&plan).is_empty(), "a hooked pod is not deleted");
    let purposes: Vec<&Purpose> = writes(&plan).into_iter().map(|(_, p, _)| p).collect();
    // The shell reports a failure of this write as a failed scale.
    assert_eq!(purposes, vec![&Purpose::ScaleLifecycle]);
    let held: Vec<String> = world
        .pods
        .iter()
        .filter(|p| pod::lifecycle(p) == PREPARING_DELETE)
        .map(|p| pod::name(p).to_string())
        .collect();
    assert_eq!(held.len(), 1, "{:?}", world.summary());
    // Held: nothing else happens however many rounds pass.
    world.settle(10);
    assert_eq!(world.pods.len(), 3);
    assert_eq!(world.status().replicas, 3);
    without_label(&mut world, &held[0], "hold");
    let plan = world.round();
    assert_eq!(deletes(&plan), vec![held[0].as_str()]);
    world.settle(10);
    assert_eq!(world.pods.len(), 2);
}

/// inPlaceUpdate: a hooked pod goes to PreparingUpdate and keeps its image while hooked; released,
/// it is updated in place, waits in Updated until the hook's label is back, then returns to Normal.
#[test]
fn in_place_update_hook_holds_before_and_after_the_update() {
    let mut world = World::new(with_lifecycle(
        cloneset(
            1,
            held_template("nginx:v1"),
            json!({"type": "InPlaceIfPossible"}),
        ),
        json!({"inPlaceUpdate": {"labelsHandler": {"hold": "true"}}}),
    ));
    world.settle(30);
    let name = pod::name(&world.pods[0]).to_string();
    world.set_template(held_template("nginx:v2"));
    world.settle(10);
    assert_eq!(pod::lifecycle(&world.pods[0]), PREPARING_UPDATE);
    assert_eq!(image_of(&world.pods[0], "main"), "nginx:v1");
    without_label(&mut world, &name, "hold");
    world.settle(30);
    assert_eq!(pod::name(&world.pods[0]), name, "updated in place");
    assert_eq!(image_of(&world.pods[0], "main"), "nginx:v2");
    assert_eq!(pod::lifecycle(&world.pods[0]), UPDATED);
    // The user's controller puts the marker back: the pod returns to Normal.
    let version = world.next_version();
    let pod = Arc::make_mut(&mut world.pods[0]);
    pod.metadata
        .labels
        .as_mut()
        .unwrap()
        .insert("hold".into(), "true".into());
    pod.metadata.resource_version = Some(version);
    world.settle(10);
    assert_eq!(pod::lifecycle(&world.pods[0]), NORMAL);
    assert_eq!(world.status().updated_ready_replicas, 1);
}

/// An Updated pod facing the next revision goes back to PreparingUpdate with the hook's markers
/// re-added in the same write.
#[test]
fn an_updated_pod_gets_its_markers_back_for_the_next_update() {
    let mut world = World::new(with_lifecycle(
        cloneset(
            1,
            held_template("nginx:v1"),
            json!({"type": "InPlaceIfPossible"}),
        ),
        json!({"inPlaceUpdate": {"labelsHandler": {"hold": "true"}}}),
    ));
    world.settle(30);
    let name = pod::name(&world.pods[0]).to_string();
    world.set_template(held_template("nginx:v2"));
    world.settle(10);
    without_label(&mut world, &name, "hold");
    world.settle(30);
    assert_eq!(pod::lifecycle(&world.pods[0]), UPDATED);
    world.set_template(held_template("nginx:v3"));
    world.round();
    assert_eq!(pod::lifecycle(&world.pods[0]), PREPARING_UPDATE);
    assert_eq!(pod::label(&world.pods[0], "hold"), Some("true"));
    assert_eq!(image_of(&world.pods[0], "main"), "nginx:v2");
}
