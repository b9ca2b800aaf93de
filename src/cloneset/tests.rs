//! The planner in a small simulated cluster (apiserver + kubelet), shared by the tests in `tests/`.

use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{ContainerStatus, Pod, PodCondition, PodStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde_json::{Value, json};

use super::*;
use crate::api::cloneset::CloneSet;
use crate::api::keys;
#[allow(unused_imports)]
use crate::workload::lifecycle::{
    LIFECYCLE_STATE, NORMAL, PREPARING_DELETE, PREPARING_NORMAL, PREPARING_UPDATE, UPDATED,
    UPDATING,
};
use crate::workload::{Workload, listed, sort};

mod lifecycle;
mod property;
mod scaling;
mod updating;
mod w1;

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
            .map(
                |p| match listed::read_whole_every_round(&p.summary, CloneSet::REVISIONS) {
                    true => p.clone(),
                    false => ListedPod::summary(p.summary.clone()),
                },
            )
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
            .filter(|p| CloneSet::REVISIONS.pod_at(p, &update))
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
