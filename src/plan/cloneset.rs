//! A CloneSet in the simulated cluster: the CloneSet planner ([`crate::cloneset::plan`]) and the
//! readiness pass every shell runs after it, round by round, with what the shell does around
//! them (the update revision made to exist, the status, `podsToDelete` and the history written).

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::Pod;

use super::report::{Report, Round, Verdict};
use super::rounds;
use crate::api::cloneset::CloneSet;
use crate::cloneset::{ListedPod, Plan, Snapshot};
use crate::workload::simulation::{Cluster, Simulated, SimulationError};
use crate::workload::{Workload, pod, readiness, revision};

/// Where the simulated clock starts (seconds since the epoch): any fixed time will do.
const T0: i64 = 1_700_000_000;

/// The CloneSet, its history and the cluster its pods live in.
pub struct CloneSetWorld {
    pub set: CloneSet,
    pub history: Vec<ControllerRevision>,
    pub cluster: Cluster,
    /// Instance ids of new pods; seeded, so that a plan is the same every time.
    rng: fastrand::Rng,
}

impl CloneSetWorld {
    pub fn new(set: CloneSet, history: Vec<ControllerRevision>) -> CloneSetWorld {
        let mut history = history;
        revision::sort_history(&mut history);
        CloneSetWorld {
            set,
            history,
            cluster: Cluster::new(T0),
            rng: fastrand::Rng::with_seed(7),
        }
    }

    fn now(&self) -> Timestamp {
        self.cluster.at(self.cluster.now)
    }

    /// What the shell does before planning: make the update revision exist; its name.
    pub fn sync_revision(&mut self) -> Result<String, SimulationError> {
        let collision = self.set.collision_count();
        revision::keep_update_revision(&self.set, &mut self.history, collision)
            .map_err(|e| SimulationError::Planner(e.to_string()))
    }

    /// The CloneSet as `changed` has it, at the next generation; its status stays.
    pub fn change_to(&mut self, changed: &CloneSet) {
        let generation = self.set.metadata.generation.unwrap_or(1);
        self.set.spec = changed.spec.clone();
        self.set.metadata.generation = Some(generation + 1);
        self.set.metadata.labels = changed.metadata.labels.clone();
        self.set.metadata.annotations = changed.metadata.annotations.clone();
    }

    /// The name of the revision the pods are updated to.
    pub fn update_revision(&mut self) -> Result<String, SimulationError> {
        self.sync_revision()
    }

    /// Active pods, and how many of them are at `revision`.
    pub fn at_revision(&self, revision: &str) -> (usize, usize) {
        rounds::at_revision::<CloneSet>(&self.cluster.pods, revision)
    }
}

impl Simulated for CloneSetWorld {
    type Plan = Plan;

    fn plan(&mut self) -> Result<Plan, SimulationError> {
        let update = self.sync_revision()?;
        let pods: Vec<ListedPod> = self
            .cluster
            .pods
            .iter()
            .cloned()
            .map(ListedPod::whole)
            .collect();
        let snapshot = Snapshot {
            cloneset: &self.set,
            pods: &pods,
            history: &self.history,
            update_revision: &update,
            collision_count: 0,
            now: self.now(),
        };
        let mut planned = crate::cloneset::plan(&snapshot, &mut self.rng)
            .map_err(|e| SimulationError::Planner(e.to_string()))?;
        readiness::follow_lifecycle(&mut planned, &pods, self.set.lifecycle(), snapshot.now);
        Ok(planned)
    }

    fn apply(&mut self, plan: &Plan) -> Result<(), SimulationError> {
        self.cluster.apply_actions(&plan.actions)?;
        rounds::keep(plan, &mut self.set.status, &mut self.history);
        if let Some(kept) = &plan.extra.pods_to_delete {
            self.set.spec.scale_strategy.pods_to_delete = Some(kept.clone());
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

/// What one CloneSet round did to pods.
pub fn round_of(plan: &Plan, number: usize) -> Round {
    rounds::round_of(&plan.actions, number)
}

/// Runs `world` (already switched to the changed spec) round by round.
pub fn run(
    world: &mut CloneSetWorld,
    max_rounds: usize,
    never_ready: &[String],
) -> Result<(Vec<Round>, Verdict), SimulationError> {
    let (rounds, settled) = rounds::run(world, max_rounds, never_ready, |world, plan, number| {
        let mut round = round_of(plan, number);
        let update = world.update_revision()?;
        (round.updated, round.total) = world.at_revision(&update);
        Ok(round)
    })?;
    let verdict = verdict(world, settled, max_rounds, never_ready)?;
    Ok((rounds, verdict))
}

fn verdict(
    world: &mut CloneSetWorld,
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

/// Why a settled CloneSet is short of its update revision: what its spec holds back and which
/// pods hold the budget or wait for a hook.
fn blockers(world: &CloneSetWorld, update: &str, never_ready: &[String]) -> Vec<String> {
    let spec = &world.set.spec;
    let strategy = &spec.update_strategy;
    let mut reasons = Vec::new();
    if world.set.metadata.deletion_timestamp.is_some() {
        reasons.push("the CloneSet is being deleted".to_string());
    }
    if strategy.paused == Some(true) {
        reasons.push("updateStrategy.paused is true: no pod is updated".to_string());
    }
    let (at, total) = world.at_revision(update);
    if let Some(partition) = &strategy.partition
        && at < total
    {
        let value = rounds::int_or_string(partition);
        reasons.push(format!(
            "updateStrategy.partition {value} keeps {} of {total} pods at the current revision",
            total - at
        ));
    }
    let now = world.now();
    let min_ready = spec.min_ready_seconds.unwrap_or(0);
    for p in world
        .cluster
        .pods
        .iter()
        .filter(|p| pod::is_active(p.as_ref()))
    {
        let name = pod::name(p.as_ref());
        reasons.extend(rounds::hook_wait(p));
        if !pod::is_available(p.as_ref(), min_ready, now) {
            let budget = strategy
                .max_unavailable
                .as_ref()
                .map_or("default 20%".to_string(), rounds::int_or_string);
            reasons.push(rounds::not_ready(
                name,
                never_ready,
                "updateStrategy.maxUnavailable",
                &budget,
            ));
        }
    }
    if let Some(Some(error)) = world
        .set
        .status
        .as_ref()
        .map(|s| failed_update_message(s.conditions.as_deref()))
    {
        reasons.push(format!("the controller reports FailedUpdate: {error}"));
    }
    reasons
}

fn failed_update_message(
    conditions: Option<&[crate::api::cloneset::CloneSetCondition]>,
) -> Option<String> {
    conditions?
        .iter()
        .find(|c| c.type_ == "FailedUpdate" && c.status == "True")
        .and_then(|c| c.message.clone())
}

/// The plan of the change from `current` (or from nothing) to `changed`.
pub fn plan(
    changed: CloneSet,
    current: Option<CloneSet>,
    pods: Vec<Pod>,
    history: Vec<ControllerRevision>,
    never_ready: &[String],
    max_rounds: usize,
) -> Result<Report, String> {
    let object = rounds::object_name(&changed.metadata);
    let failed = |e: SimulationError| format!("simulating CloneSet {object}: {e}");
    let had_current = current.is_some();
    let mut base = current.unwrap_or_else(|| changed.clone());
    base.status = None;
    if !had_current {
        base.spec.replicas = Some(0);
    }
    let mut world = CloneSetWorld::new(base, history);
    let start_revision = world.sync_revision().map_err(failed)?;
    let start = rounds::start(
        &mut world,
        pods,
        had_current,
        ("CloneSet", &object),
        max_rounds,
        |world| {
            let (at, total) = world.at_revision(&start_revision);
            Ok((at, total, start_revision.clone()))
        },
    )?;
    world.change_to(&changed);
    let (rounds, verdict) = run(&mut world, max_rounds, never_ready).map_err(failed)?;
    Ok(Report {
        kind: "CloneSet".into(),
        object,
        start,
        notes: Vec::new(),
        rounds,
        verdict,
    })
}

#[cfg(test)]
mod tests;
