//! The planner in a small simulated cluster (apiserver, scheduler, kubelet), shared by the
//! scenario and property tests in `tests/`.

use std::sync::Arc;

use k8s_openapi::api::core::v1::{Pod, PodCondition, PodStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::*;
use crate::api::keys;
use crate::podmarks::PodView;
use crate::workload::Purpose;
use crate::workload::lifecycle::{LIFECYCLE_STATE, PREPARING_DELETE};
use crate::workload::revision::{UpdateRevision, sort_history, update_revision};
use crate::workload::simulation;
use fixtures::*;

mod property;
mod scenarios;

/// One DaemonSet, its nodes, pods and revisions, a clock, and the parts of a cluster that act on
/// pods: the scheduler binds them, the kubelet starts, readies, restarts and removes them.
struct World {
    set: DaemonSet,
    nodes: Vec<NodeSummary>,
    pods: Vec<Arc<Pod>>,
    history: Vec<ControllerRevision>,
    backoff: FailedPodBackoff,
    now: i64,
    created: u64,
    version: u64,
    /// Pods the kubelet does not make ready.
    stuck: Vec<String>,
    events: Vec<String>,
}

impl World {
    fn new(set: DaemonSet, nodes: Vec<NodeSummary>) -> World {
        World {
            set,
            nodes,
            pods: Vec::new(),
            history: Vec::new(),
            backoff: FailedPodBackoff::default(),
            now: 0,
            created: 0,
            version: 1,
            stuck: Vec::new(),
            events: Vec::new(),
        }
    }

    /// What the shell does before planning: the current revision exists, numbered last.
    fn sync_revision(&mut self) -> String {
        let collisions = self
            .set
            .status
            .as_ref()
            .and_then(|s| s.collision_count)
            .unwrap_or(0);
        // The core's choice, as `ensure_update_revision` sends it (no collisions here).
        let name = match update_revision(&self.set, &self.history, collisions).unwrap() {
            UpdateRevision::Latest { name } => name,
            UpdateRevision::Renumber { name, revision } => {
                let r = self
                    .history
                    .iter_mut()
                    .find(|r| r.metadata.name.as_deref() == Some(&name))
                    .unwrap();
                r.revision = revision;
                name
            }
            UpdateRevision::Create(revision) => {
                let name = revision.metadata.name.clone().unwrap();
                self.history.push(*revision);
                name
            }
        };
        sort_history(&mut self.history);
        name
    }

    fn hash(&mut self) -> String {
        let current = self.sync_revision();
        let revision = self
            .history
            .iter()
            .find(|r| r.metadata.name.as_deref() == Some(&current))
            .unwrap();
        in_place::revision_hash(revision).to_string()
    }

    fn plan(&mut self) -> Plan {
        let current = self.sync_revision();
        let pods: Vec<DaemonPod> = self.pods.iter().cloned().map(DaemonPod::whole).collect();
        let nodes: Vec<Arc<NodeSummary>> = self.nodes.iter().cloned().map(Arc::new).collect();
        let snapshot = Snapshot {
            set: &self.set,
            nodes: &nodes,
            pods: &pods,
            history: &self.history,
            current: &current,
            backoff: &self.backoff,
            settled: true,
            now: at(self.now),
        };
        let whole = plan(&snapshot).unwrap();
        assert!(whole.needs_whole.is_empty());
        // As the shell plans: summaries only, then once more with what the round asked for.
        let summaries: Vec<DaemonPod> = pods
            .iter()
            .map(|p| DaemonPod::summary(p.summary.clone(), p.node.clone()))
            .collect();
        let first = plan(&Snapshot {
            pods: &summaries,
            ..snapshot
        })
        .unwrap();
        let again: Vec<DaemonPod> = pods
            .iter()
            .zip(&summaries)
            .map(|(whole, summary)| {
                if first.needs_whole.iter().any(|n| n == whole.summary.name()) {
                    whole.clone()
                } else {
                    summary.clone()
                }
            })
            .collect();
        let second = plan(&Snapshot {
            pods: &again,
            ..snapshot
        })
        .unwrap();
        assert_eq!(second, whole, "a plan from summaries differs");
        whole
    }

    fn bump(&mut self) -> String {
        self.version += 1;
        self.version.to_string()
    }

    /// The apiserver: applies a plan.
    fn apply(&mut self, plan: &Plan) {
        for action in &plan.actions {
            match action {
                Action::CreatePod { pod, .. } => {
                    self.created += 1;
                    let mut pod = Pod::clone(pod);
                    let name = format!(
                        "{}{}",
                        pod.metadata.generate_name.clone().unwrap(),
                        self.created
                    );
                    pod.metadata.uid = Some(format!("uid-{name}"));
                    pod.metadata.name = Some(name);
                    pod.metadata.resource_version = Some(self.bump());
                    pod.metadata.creation_timestamp = Some(Time(at(self.now)));
                    pod.status = Some(PodStatus {
                        phase: Some("Pending".into()),
                        ..Default::default()
                    });
                    self.pods.push(Arc::new(pod));
                }
                Action::DeletePod { name } => {
                    let now = at(self.now);
                    let scheduled =
                        |p: &Pod| p.spec.as_ref().and_then(|s| s.node_name.as_ref()).is_some();
                    self.pods
                        .retain(|p| p.metadata.name.as_ref() != Some(name) || scheduled(p));
                    if let Some(p) = self
                        .pods
                        .iter_mut()
                        .find(|p| p.metadata.name.as_ref() == Some(name))
                    {
                        // The pod does not hold while a finalizer of the preDelete hook is on it.
                        Arc::make_mut(p)
                            .metadata
                            .deletion_timestamp
                            .get_or_insert(Time(now));
                    }
                }
                Action::WritePod { before, writes, .. } => {
                    let name = before.metadata.name.clone();
                    let version = self.bump();
                    let slot = self
                        .pods
                        .iter_mut()
                        .find(|p| p.metadata.name == name)
                        .unwrap();
                    assert_eq!(
                        slot.metadata.resource_version, before.metadata.resource_version,
                        "a write on a stale pod"
                    );
                    let mut after = Pod::clone(&writes.last().unwrap().pod);
                    after.metadata.resource_version = Some(version);
                    *slot = Arc::new(after);
                }
                Action::Event(event) => self
                    .events
                    .push(format!("{}: {}", event.reason, event.message)),
                other => panic!("a DaemonSet plans no {other:?}"),
            }
        }
        if plan.write_status {
            self.set.status = Some(plan.status.clone());
        }
        for key in &plan.extra.backoff {
            self.backoff.advance(key, at(self.now));
        }
        self.history.retain(|r| {
            !plan
                .revisions_to_delete
                .iter()
                .any(|n| r.metadata.name.as_ref() == Some(n))
        });
    }

    /// The scheduler and the kubelet, after `seconds`: pods are bound to their node, started
    /// and ready (unless stuck), run the image their spec names, and leave once deleted.
    fn settle(&mut self, seconds: i64) {
        self.now += seconds;
        let now = at(self.now);
        self.pods.retain(|p| {
            p.metadata.deletion_timestamp.is_none()
                || p.metadata
                    .finalizers
                    .as_ref()
                    .is_some_and(|f| !f.is_empty())
        });
        let stuck = self.stuck.clone();
        for p in &mut self.pods {
            let pod = Arc::make_mut(p);
            let target = daemon_pod::target_node(pod).map(str::to_string);
            let spec = pod.spec.as_mut().unwrap();
            if spec.node_name.is_none() {
                spec.node_name = target;
            }
            let containers = spec.containers.clone();
            let name = pod.metadata.name.clone().unwrap();
            let status = pod.status.get_or_insert_with(Default::default);
            if status.phase.as_deref() == Some("Failed") {
                continue;
            }
            status.phase = Some("Running".into());
            let old = status.container_statuses.clone().unwrap_or_default();
            status.container_statuses = Some(simulation::container_statuses(&containers, &old));
            let conditions = status.conditions.get_or_insert_with(Vec::new);
            let gate_false = conditions
                .iter()
                .any(|c| c.type_ == keys::INPLACE_UPDATE_READY && c.status == "False");
            let ready = !stuck.contains(&name) && !gate_false;
            let status_text = if ready { "True" } else { "False" };
            match conditions
                .iter_mut()
                .find(|c| c.type_ == keys::CONDITION_READY)
            {
                Some(c) if c.status == status_text => {}
                Some(c) => {
                    c.status = status_text.into();
                    c.last_transition_time = Some(Time(now));
                }
                None => conditions.push(PodCondition {
                    type_: keys::CONDITION_READY.into(),
                    status: status_text.into(),
                    last_transition_time: Some(Time(now)),
                    ..Default::default()
                }),
            }
        }
    }

    /// Plans, applies, settles: one reconcile and its aftermath.
    fn step(&mut self, seconds: i64) -> Plan {
        let plan = self.plan();
        self.apply(&plan);
        self.settle(seconds);
        plan
    }

    /// Steps until a round writes nothing and waits for nothing; panics after `limit` rounds.
    fn converge(&mut self, limit: usize) {
        for _ in 0..limit {
            let plan = self.step(1);
            if plan.actions.is_empty() && !plan.write_status && plan.requeue_after.is_none() {
                return;
            }
        }
        panic!("no convergence in {limit} rounds: {:#?}", self.pods);
    }

    fn pod_named(&self, name: &str) -> &Pod {
        self.pods
            .iter()
            .find(|p| p.metadata.name.as_deref() == Some(name))
            .unwrap()
    }

    fn pods_on(&self, node: &str) -> Vec<&Pod> {
        self.pods
            .iter()
            .map(|p| &**p)
            .filter(|p| daemon_pod::target_node(p) == Some(node))
            .collect()
    }

    fn label(pod: &Pod, key: &str) -> Option<String> {
        pod.metadata.labels.as_ref()?.get(key).cloned()
    }

    fn set_label(&mut self, pod: &str, key: &str, value: Option<&str>) {
        let version = self.bump();
        let p = self
            .pods
            .iter_mut()
            .find(|p| p.metadata.name.as_deref() == Some(pod))
            .unwrap();
        let p = Arc::make_mut(p);
        let labels = p.metadata.labels.get_or_insert_with(Default::default);
        match value {
            Some(v) => labels.insert(key.into(), v.into()),
            None => labels.remove(key),
        };
        p.metadata.resource_version = Some(version);
    }
}

fn pre_deleting(pod: &Pod) -> bool {
    World::label(pod, LIFECYCLE_STATE).as_deref() == Some(PREPARING_DELETE)
}

fn in_place_purpose(plan: &Plan) -> usize {
    plan.actions
        .iter()
        .filter(|a| {
            matches!(
                a,
                Action::WritePod {
                    purpose: Purpose::InPlace { .. },
                    ..
                }
            )
        })
        .count()
}

pub(crate) mod fixtures;
