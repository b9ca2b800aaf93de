//! An Advanced StatefulSet in the simulated cluster: the StatefulSet planner
//! ([`crate::statefulset::plan`]) and the readiness pass every shell runs after it, round by
//! round, with what the shell does around them (the update revision made to exist, the status
//! and history written, the PVCs the planner creates and owns kept so that it finds them).

use std::collections::BTreeMap;
use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};

use super::report::{Report, Round, Verdict};
use super::rounds;
use crate::api::statefulset::StatefulSet;
use crate::statefulset::ordinals::{ReplicaRange, ordinal_of};
use crate::statefulset::{Action, ListedPod, Plan, Snapshot};
use crate::workload::simulation::{Cluster, Simulated, SimulationError};
use crate::workload::{Workload, pod, readiness, revision};

/// Where the simulated clock starts (seconds since the epoch): any fixed time will do.
const T0: i64 = 1_700_000_000;

/// The StatefulSet, its history, its claims and the cluster its pods live in.
pub struct StatefulSetWorld {
    pub set: StatefulSet,
    pub history: Vec<ControllerRevision>,
    /// The PVCs the planner made, by name: the planner reads them back, the report leaves them
    /// out.
    pub claims: BTreeMap<String, Arc<PersistentVolumeClaim>>,
    pub cluster: Cluster,
    /// The controller's warnings of the last round that wrote.
    warnings: Vec<String>,
    uids: u64,
}

impl StatefulSetWorld {
    pub fn new(set: StatefulSet, history: Vec<ControllerRevision>) -> StatefulSetWorld {
        let mut history = history;
        revision::sort_history(&mut history);
        StatefulSetWorld {
            set,
            history,
            claims: BTreeMap::new(),
            cluster: Cluster::new(T0),
            warnings: Vec::new(),
            uids: 0,
        }
    }

    fn now(&self) -> Timestamp {
        self.cluster.at(self.cluster.now)
    }

    /// What the shell does before planning: make the update revision exist; its name.
    pub fn update_revision(&mut self) -> Result<String, SimulationError> {
        let collision = self.set.collision_count();
        revision::keep_update_revision(&self.set, &mut self.history, collision)
            .map_err(|e| SimulationError::Planner(e.to_string()))
    }

    /// The StatefulSet as `changed` has it, at the next generation; its status stays.
    pub fn change_to(&mut self, changed: &StatefulSet) {
        let generation = self.set.metadata.generation.unwrap_or(1);
        self.set.spec = changed.spec.clone();
        self.set.metadata.generation = Some(generation + 1);
        self.set.metadata.labels = changed.metadata.labels.clone();
        self.set.metadata.annotations = changed.metadata.annotations.clone();
    }

    fn active(&self) -> impl Iterator<Item = &Arc<Pod>> {
        self.cluster
            .pods
            .iter()
            .filter(|p| pod::is_active(p.as_ref()))
    }

    /// Active pods, and how many of them are at `revision`.
    pub fn at_revision(&self, revision: &str) -> (usize, usize) {
        rounds::at_revision::<StatefulSet>(&self.cluster.pods, revision)
    }

    /// The apiserver's side of the planner's PVC writes (the cluster keeps no PVCs).
    fn apply_claims(&mut self, actions: &[Action]) {
        for action in actions {
            match action {
                Action::CreatePvc { pvc, .. } => {
                    let mut claim = PersistentVolumeClaim::clone(pvc);
                    self.uids += 1;
                    claim.metadata.uid = Some(format!("claim-uid-{}", self.uids));
                    claim.metadata.resource_version = Some(self.cluster.next_version());
                    let name = claim.metadata.name.clone().unwrap_or_default();
                    self.claims.insert(name, Arc::new(claim));
                }
                Action::UpdatePvcOwners {
                    before,
                    owner_references,
                    ..
                } => {
                    let name = before.metadata.name.clone().unwrap_or_default();
                    let mut claim = PersistentVolumeClaim::clone(before);
                    claim.metadata.owner_references = Some(owner_references.clone());
                    claim.metadata.resource_version = Some(self.cluster.next_version());
                    self.claims.insert(name, Arc::new(claim));
                }
                _ => {}
            }
        }
    }

    /// New pods get the uid the apiserver gives them (a claim's owner names it).
    fn give_uids(&mut self) {
        for p in &mut self.cluster.pods {
            if p.metadata.uid.is_none() {
                self.uids += 1;
                Arc::make_mut(p).metadata.uid = Some(format!("pod-uid-{}", self.uids));
            }
        }
    }
}

impl Simulated for StatefulSetWorld {
    type Plan = Plan;

    fn plan(&mut self) -> Result<Plan, SimulationError> {
        let update = self.update_revision()?;
        let pods: Vec<ListedPod> = self
            .cluster
            .pods
            .iter()
            .cloned()
            .map(ListedPod::whole)
            .collect();
        let snapshot = Snapshot {
            set: &self.set,
            pods: &pods,
            claims: &self.claims,
            history: &self.history,
            update_revision: &update,
            collision_count: self.set.collision_count(),
            now: self.now(),
        };
        let mut planned = crate::statefulset::plan(&snapshot)
            .map_err(|e| SimulationError::Planner(e.to_string()))?;
        readiness::follow_lifecycle(&mut planned, &pods, self.set.lifecycle(), snapshot.now);
        Ok(planned)
    }

    fn apply(&mut self, plan: &Plan) -> Result<(), SimulationError> {
        self.apply_claims(&plan.actions);
        self.cluster.apply_actions(&plan.actions)?;
        self.give_uids();
        rounds::keep(plan, &mut self.set.status, &mut self.history);
        if !Self::writes_nothing(plan) {
            self.warnings = rounds::reported(plan);
        }
        Ok(())
    }

    fn writes_nothing(plan: &Plan) -> bool {
        rounds::writes_nothing(plan)
    }

    fn requeue_after(plan: &Plan) -> Option<std::time::Duration> {
        plan.requeue_after
    }

    fn cluster(&mut self) -> &mut Cluster {
        &mut self.cluster
    }
}

/// Runs `world` (already switched to the changed spec) round by round. A pod deleted and made
/// again under its name later is reported as recreated in the round that deleted it.
pub fn run(
    world: &mut StatefulSetWorld,
    max_rounds: usize,
    never_ready: &[String],
) -> Result<(Vec<Round>, Verdict), SimulationError> {
    let (mut rounds, settled) =
        rounds::run(world, max_rounds, never_ready, |world, plan, number| {
            let mut round = rounds::round_of(&plan.actions, number);
            let update = world.update_revision()?;
            (round.updated, round.total) = world.at_revision(&update);
            Ok(round)
        })?;
    rounds::mark_recreated(&mut rounds, |name| name);
    let verdict = verdict(world, settled, max_rounds, never_ready)?;
    Ok((rounds, verdict))
}

fn verdict(
    world: &mut StatefulSetWorld,
    settled: Option<usize>,
    max_rounds: usize,
    never_ready: &[String],
) -> Result<Verdict, SimulationError> {
    let update = world.update_revision()?;
    let replicas = usize::try_from(world.set.spec.replicas.unwrap_or(1)).unwrap_or(0);
    let blockers = blockers(world, &update, never_ready);
    Ok(rounds::replicas_verdict(
        &world.set,
        replicas,
        &world.cluster.pods,
        &update,
        world.now(),
        (settled, max_rounds),
        blockers,
    ))
}

/// Why a settled StatefulSet is short of its update revision: what its spec holds back, which
/// pods hold the budget, the order or a hook, and what the controller itself reported.
fn blockers(world: &StatefulSetWorld, update: &str, never_ready: &[String]) -> Vec<String> {
    let set = &world.set;
    let rolling = set.spec.update_strategy.rolling_update.as_ref();
    let mut reasons = Vec::new();
    if set.metadata.deletion_timestamp.is_some() {
        reasons.push("the StatefulSet is being deleted".to_string());
    }
    if rolling.and_then(|r| r.paused) == Some(true) {
        reasons.push("updateStrategy.rollingUpdate.paused is true: no pod is updated".to_string());
    }
    let name = set.metadata.name.as_deref().unwrap_or("");
    let behind: Vec<&Arc<Pod>> = world
        .active()
        .filter(|p| !StatefulSet::REVISIONS.pod_at(p.as_ref(), update))
        .collect();
    if let Some(partition) = rolling.and_then(|r| r.partition).filter(|p| *p > 0) {
        // The pods the partition keeps are those it names among the pods still behind: the
        // lowest replicas in order, any of them with `unorderedUpdate`.
        let unordered = rolling.is_some_and(|r| r.unordered_update.is_some());
        let range = ReplicaRange::of(set).ok();
        let mut kept: Vec<i64> = behind
            .iter()
            .filter_map(|p| ordinal_of(name, pod::name(p.as_ref())))
            .filter(|ordinal| {
                unordered
                    || range
                        .as_ref()
                        .and_then(|r| r.index_of(*ordinal))
                        .is_some_and(|index| {
                            i64::try_from(index).unwrap_or(i64::MAX) < i64::from(partition)
                        })
            })
            .collect();
        kept.sort_unstable();
        if !kept.is_empty() {
            let words: Vec<String> = kept.iter().map(i64::to_string).collect();
            let noun = if kept.len() == 1 {
                "ordinal"
            } else {
                "ordinals"
            };
            reasons.push(format!(
                "updateStrategy.rollingUpdate.partition {partition} keeps {noun} {} at the current revision",
                words.join(", ")
            ));
        }
    }
    let now = world.now();
    let min_ready = set.min_ready_seconds();
    let budget = rolling
        .and_then(|r| r.max_unavailable.as_ref())
        .map_or("1".to_string(), rounds::int_or_string);
    let ordered = set.spec.pod_management_policy.as_deref() != Some("Parallel");
    let mut first_waiting = None;
    let mut pods: Vec<&Arc<Pod>> = world.active().collect();
    pods.sort_by_key(|p| ordinal_of(name, pod::name(p.as_ref())));
    for p in pods {
        let pod_name = pod::name(p.as_ref());
        reasons.extend(rounds::hook_wait(p));
        if !pod::is_available(p.as_ref(), min_ready, now) {
            first_waiting.get_or_insert(pod_name);
            reasons.push(rounds::not_ready(
                pod_name,
                never_ready,
                "updateStrategy.rollingUpdate.maxUnavailable",
                &budget,
            ));
        }
    }
    let replicas = usize::try_from(set.spec.replicas.unwrap_or(1)).unwrap_or(0);
    if ordered
        && let Some(waiting) = first_waiting
        && world.active().count() < replicas
    {
        reasons.push(format!(
            "podManagementPolicy OrderedReady: the pods after {waiting} are not made until it is ready"
        ));
    }
    reasons.extend(world.warnings.iter().cloned());
    reasons
}

/// What `reserveOrdinals` holds back, in words, when it holds any.
fn reserved_note(set: &StatefulSet) -> Option<String> {
    let reserved = set
        .spec
        .reserve_ordinals
        .as_ref()
        .filter(|r| !r.is_empty())?;
    let written: Vec<String> = reserved.iter().map(rounds::int_or_string).collect();
    Some(format!(
        "reserveOrdinals {}: no pod is made at these ordinals, the replicas skip them",
        written.join(", ")
    ))
}

/// The plan of the change from `current` (or from nothing) to `changed`.
pub fn plan(
    changed: StatefulSet,
    current: Option<StatefulSet>,
    pods: Vec<Pod>,
    history: Vec<ControllerRevision>,
    never_ready: &[String],
    max_rounds: usize,
) -> Result<Report, String> {
    let object = rounds::object_name(&changed.metadata);
    let failed = |e: SimulationError| format!("simulating StatefulSet {object}: {e}");
    let had_current = current.is_some();
    let mut base = current.unwrap_or_else(|| changed.clone());
    base.status = None;
    if !had_current {
        base.spec.replicas = Some(0);
    }
    let mut world = StatefulSetWorld::new(base, history);
    let start_revision = world.update_revision().map_err(failed)?;
    let start = rounds::start(
        &mut world,
        pods,
        had_current,
        ("StatefulSet", &object),
        max_rounds,
        |world| {
            world.give_uids();
            let (at, total) = world.at_revision(&start_revision);
            Ok((at, total, start_revision.clone()))
        },
    )?;
    world.warnings.clear();
    world.change_to(&changed);
    let (rounds, verdict) = run(&mut world, max_rounds, never_ready).map_err(failed)?;
    Ok(Report {
        kind: "StatefulSet".into(),
        object,
        start,
        notes: reserved_note(&changed).into_iter().collect(),
        rounds,
        verdict,
    })
}

#[cfg(test)]
mod tests;
