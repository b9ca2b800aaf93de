//! A small simulated cluster for planner tests of any workload kind: an apiserver that applies
//! a round's pod [`Action`]s (and refuses two writes of one round to one pod), a clock, and a
//! kubelet that schedules, starts the spec images and reports readiness. A kind's test world
//! holds a [`Cluster`] beside its workload and history and implements [`Simulated`]; the
//! rounds ([`round`], [`settle`]) are shared.

use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Container, ContainerStatus, Pod, PodCondition, PodStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::Action;

/// The pods, the clock and the kubelet.
pub struct Cluster {
    pub pods: Vec<Arc<Pod>>,
    /// Seconds since `t0`.
    pub now: i64,
    pub t0: i64,
    pub version: u64,
    /// Pods the kubelet leaves alone (not started / never ready).
    pub stuck: Vec<String>,
}

impl Cluster {
    pub fn new(t0: i64) -> Cluster {
        Cluster {
            pods: Vec::new(),
            now: 0,
            t0,
            version: 1,
            stuck: Vec::new(),
        }
    }

    /// The time `seconds` after `t0`.
    pub fn at(&self, seconds: i64) -> Timestamp {
        Timestamp::from_second(self.t0 + seconds).unwrap()
    }

    pub fn next_version(&mut self) -> String {
        self.version += 1;
        self.version.to_string()
    }

    /// Applies a round's pod actions as the apiserver would; panics on a conflicting write (two
    /// writes of one round to the same pod).
    pub fn apply_actions(&mut self, actions: &[Action]) {
        for action in actions {
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
                    pod.metadata.creation_timestamp = Some(Time(self.at(self.now)));
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
                    self.replace(before, writes.last().unwrap().pod.clone());
                }
                Action::UpdatePod { before, after } => self.replace(before, Pod::clone(after)),
                // This cluster keeps no PVCs.
                Action::CreatePvc { .. } | Action::UpdatePvcOwners { .. } | Action::Event(_) => {}
            }
        }
    }

    /// Replaces `before` with `after` at a new version; panics when the pod moved on since
    /// `before` (a conflicting write).
    fn replace(&mut self, before: &Pod, mut after: Pod) {
        let index = self
            .pods
            .iter()
            .position(|p| p.metadata.name == before.metadata.name)
            .unwrap();
        assert_eq!(
            self.pods[index].metadata.resource_version, before.metadata.resource_version,
            "conflicting write to {:?}",
            before.metadata.name
        );
        after.metadata.resource_version = Some(self.next_version());
        self.pods[index] = Arc::new(after);
    }

    /// Kubelet: schedules, starts the spec images (new imageID on change), reports readiness
    /// from containers and readiness gates.
    pub fn kubelet(&mut self) {
        let now = self.at(self.now);
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
            status.container_statuses = Some(container_statuses(&spec.containers, &old));
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
}

/// A kind's test world: its planner over a [`Cluster`].
pub trait Simulated {
    type Plan;
    /// One reconcile's plan.
    fn plan(&mut self) -> Self::Plan;
    /// Applies the plan: its pod actions to the cluster, the rest to the workload.
    fn apply(&mut self, plan: &Self::Plan);
    /// Whether the plan writes nothing (the world has converged).
    fn writes_nothing(plan: &Self::Plan) -> bool;
    fn cluster(&mut self) -> &mut Cluster;
    /// What a failed convergence prints.
    fn describe(&self) -> String;
}

/// One reconcile, then one second of kubelet.
pub fn round<S: Simulated>(world: &mut S) -> S::Plan {
    let plan = world.plan();
    world.apply(&plan);
    let cluster = world.cluster();
    cluster.now += 1;
    cluster.kubelet();
    plan
}

/// Rounds until a reconcile writes nothing; the number of rounds it took.
pub fn settle<S: Simulated>(world: &mut S, max_rounds: usize) -> usize {
    for n in 0..max_rounds {
        let plan = round(world);
        if S::writes_nothing(&plan) {
            return n;
        }
    }
    panic!(
        "no convergence after {max_rounds} rounds: {}",
        world.describe()
    );
}

/// What a kubelet reports of `containers` after it ran them, given what it reported before: a
/// container whose image changed was restarted (restart count up by one); a new one runs.
pub fn container_statuses(
    containers: &[Container],
    old: &[ContainerStatus],
) -> Vec<ContainerStatus> {
    containers
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
        .collect()
}
