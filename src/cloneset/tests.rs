//! The planner in a small simulated cluster (apiserver + kubelet), shared by the tests in `tests/`.

use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{Pod, PodStatus};
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
use crate::workload::simulation::{self, Cluster, Simulated};
use crate::workload::{Workload, listed, readiness, sort};

mod lifecycle;
mod progress;
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

/// The simulated cluster ([`Cluster`]: pods, clock, kubelet) with one CloneSet and its history.
struct World {
    set: CloneSet,
    history: Vec<ControllerRevision>,
    rng: fastrand::Rng,
    cluster: Cluster,
}

impl std::ops::Deref for World {
    type Target = Cluster;
    fn deref(&self) -> &Cluster {
        &self.cluster
    }
}

impl std::ops::DerefMut for World {
    fn deref_mut(&mut self) -> &mut Cluster {
        &mut self.cluster
    }
}

impl Simulated for World {
    type Plan = Plan;
    fn plan(&mut self) -> Result<Plan, simulation::SimulationError> {
        Ok(World::plan(self))
    }
    fn apply(&mut self, plan: &Plan) -> Result<(), simulation::SimulationError> {
        World::apply(self, plan);
        Ok(())
    }
    fn writes_nothing(plan: &Plan) -> bool {
        plan.actions.is_empty() && !plan.write_status
    }
    fn cluster(&mut self) -> &mut Cluster {
        &mut self.cluster
    }
}

impl World {
    fn new(set: CloneSet) -> World {
        let mut world = World {
            set,
            history: Vec::new(),
            rng: fastrand::Rng::with_seed(7),
            cluster: Cluster::new(T0),
        };
        world.sync_revision();
        world
    }

    /// What the shell does before planning: make the update revision exist.
    fn sync_revision(&mut self) -> String {
        let collision = self.set.collision_count();
        revision::keep_update_revision(&self.set, &mut self.history, collision).unwrap()
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
        // The planner, then the readiness pass every shell runs after it.
        let plan = |snapshot: &Snapshot<'_>, rng: &mut fastrand::Rng| {
            let mut planned = plan(snapshot, rng).unwrap();
            let hooks = snapshot.cloneset.spec.lifecycle.as_ref();
            readiness::follow_lifecycle(&mut planned, snapshot.pods, hooks, snapshot.now);
            planned
        };
        let mut rng = self.rng.clone();
        let mut same_draws = self.rng.clone();
        let planned = plan(&snapshot(self, &update, &whole), &mut rng);
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
        let mut as_shell = plan(&snapshot(self, &update, &cached), &mut draws);
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
            as_shell = plan(&snapshot(self, &update, &cached), &mut same_draws);
        }
        assert_eq!(as_shell, planned);
        self.rng = rng;
        planned
    }

    /// Applies a plan as the apiserver would ([`Cluster::apply_actions`]), then its status,
    /// `podsToDelete` and history truncation.
    fn apply(&mut self, plan: &Plan) {
        self.cluster.apply_actions(&plan.actions).unwrap();
        if plan.write_status {
            self.set.status = Some(plan.status.clone());
        }
        if let Some(kept) = &plan.extra.pods_to_delete {
            self.set.spec.scale_strategy.pods_to_delete = Some(kept.clone());
        }
        self.history.retain(|r| {
            !plan
                .revisions_to_delete
                .contains(r.metadata.name.as_ref().unwrap())
        });
    }

    fn kubelet(&mut self) {
        self.cluster.kubelet();
    }

    /// One reconcile, then one second of kubelet ([`simulation::round`]).
    fn round(&mut self) -> Plan {
        simulation::round(self).unwrap()
    }

    /// Rounds until a reconcile writes nothing; the number of rounds it took.
    fn settle(&mut self, max_rounds: usize) -> usize {
        simulation::settle(self, max_rounds)
            .unwrap()
            .unwrap_or_else(|| {
                panic!(
                    "no convergence after {max_rounds} rounds: {:#?}",
                    self.summary()
                )
            })
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
