//! A small simulated cluster that drives a workload planner round by round, for `plan` and for
//! the planners' tests: an apiserver that applies a round's pod [`Action`]s (and refuses two
//! writes of one round to one pod), a clock, and a kubelet that schedules, starts the spec images
//! and reports readiness. A kind's world holds a [`Cluster`] beside its workload and history and
//! implements [`Simulated`]; the rounds ([`round`], [`settle`]) are shared. A write the apiserver
//! would refuse is a [`SimulationError`], never a panic.

use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Container, ContainerStatus, Pod, PodCondition, PodStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::Action;

/// What the simulated apiserver refuses, or a planner's error in a round.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SimulationError {
    #[error("pod {0} created twice (the name is taken)")]
    NameReused(String),
    #[error("delete of pod {0}, which does not exist")]
    UnknownPodDeleted(String),
    #[error("write to pod {0}, which does not exist")]
    UnknownPodWritten(String),
    #[error("conflicting write to pod {0}: it changed since the round read it")]
    ConflictingWrite(String),
    #[error("write to pod {0} carries no pod")]
    EmptyWrite(String),
    #[error("the planner failed: {0}")]
    Planner(String),
}

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
        // Past the end of time the clock stops: no simulation runs that long.
        Timestamp::from_second(self.t0.saturating_add(seconds)).unwrap_or(Timestamp::MAX)
    }

    pub fn next_version(&mut self) -> String {
        self.version += 1;
        self.version.to_string()
    }

    /// Applies a round's pod actions as the apiserver would; a conflicting write (two writes of
    /// one round to the same pod), a taken name or an unknown pod is an error, and the actions
    /// before it stay applied.
    pub fn apply_actions(&mut self, actions: &[Action]) -> Result<(), SimulationError> {
        for action in actions {
            match action {
                Action::CreatePod { pod, .. } => {
                    let mut pod = Pod::clone(pod);
                    if self
                        .pods
                        .iter()
                        .any(|p| p.metadata.name == pod.metadata.name)
                    {
                        return Err(SimulationError::NameReused(name_of(&pod)));
                    }
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
                    if before == self.pods.len() {
                        return Err(SimulationError::UnknownPodDeleted(name.clone()));
                    }
                }
                Action::WritePod { before, writes, .. } => {
                    let last = writes
                        .last()
                        .ok_or_else(|| SimulationError::EmptyWrite(name_of(before)))?;
                    self.replace(before, last.pod.clone())?;
                }
                Action::UpdatePod { before, after } => self.replace(before, Pod::clone(after))?,
                // This cluster keeps no PVCs.
                Action::CreatePvc { .. } | Action::UpdatePvcOwners { .. } | Action::Event(_) => {}
            }
        }
        Ok(())
    }

    /// Replaces `before` with `after` at a new version; an error when the pod moved on since
    /// `before` (a conflicting write) or is gone.
    fn replace(&mut self, before: &Pod, mut after: Pod) -> Result<(), SimulationError> {
        let index = self
            .pods
            .iter()
            .position(|p| p.metadata.name == before.metadata.name)
            .ok_or_else(|| SimulationError::UnknownPodWritten(name_of(before)))?;
        if self.pods[index].metadata.resource_version != before.metadata.resource_version {
            return Err(SimulationError::ConflictingWrite(name_of(before)));
        }
        after.metadata.resource_version = Some(self.next_version());
        self.pods[index] = Arc::new(after);
        Ok(())
    }

    /// Kubelet: schedules, starts the spec images (new imageID on change), reports readiness
    /// from containers and readiness gates.
    pub fn kubelet(&mut self) {
        let now = self.at(self.now);
        for index in 0..self.pods.len() {
            let mut pod = Pod::clone(&self.pods[index]);
            if self.stuck.contains(&name_of(&pod)) {
                continue;
            }
            // A pod without a spec cannot run; the apiserver would not have taken it.
            let Some(spec) = pod.spec.as_mut() else {
                continue;
            };
            spec.node_name.get_or_insert_with(|| "node-1".into());
            let spec = spec.clone();
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

/// A kind's world: its planner over a [`Cluster`].
pub trait Simulated {
    type Plan;
    /// One reconcile's plan.
    fn plan(&mut self) -> Result<Self::Plan, SimulationError>;
    /// Applies the plan: its pod actions to the cluster, the rest to the workload.
    fn apply(&mut self, plan: &Self::Plan) -> Result<(), SimulationError>;
    /// Whether the plan writes nothing (the world has converged).
    fn writes_nothing(plan: &Self::Plan) -> bool;
    /// How long a plan that writes nothing asks the controller to wait before it looks again
    /// (a grace period, `minReadySeconds`): [`settle`] lets that time pass instead of stopping.
    fn requeue_after(_plan: &Self::Plan) -> Option<std::time::Duration> {
        None
    }
    fn cluster(&mut self) -> &mut Cluster;
}

/// One reconcile, then one second of kubelet.
pub fn round<S: Simulated>(world: &mut S) -> Result<S::Plan, SimulationError> {
    let plan = world.plan()?;
    world.apply(&plan)?;
    let cluster = world.cluster();
    cluster.now += 1;
    cluster.kubelet();
    Ok(plan)
}

/// Rounds until a reconcile writes nothing and waits for nothing: the number of rounds before
/// that one, `None` when `max_rounds` rounds all wrote or waited.
pub fn settle<S: Simulated>(
    world: &mut S,
    max_rounds: usize,
) -> Result<Option<usize>, SimulationError> {
    for n in 0..max_rounds {
        let plan = round(world)?;
        if S::writes_nothing(&plan) {
            match S::requeue_after(&plan) {
                None => return Ok(Some(n)),
                Some(wait) => wait_for(world.cluster(), wait),
            }
        }
    }
    Ok(None)
}

/// Lets `wait` pass on the cluster's clock (at least the second [`round`] already let pass).
pub fn wait_for(cluster: &mut Cluster, wait: std::time::Duration) {
    let seconds = i64::try_from(wait.as_secs()).unwrap_or(i64::MAX);
    cluster.now = cluster.now.saturating_add(seconds.saturating_sub(1).max(0));
    cluster.kubelet();
}

fn name_of(pod: &Pod) -> String {
    pod.metadata.name.clone().unwrap_or_default()
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

#[cfg(test)]
mod tests;
