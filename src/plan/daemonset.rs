//! An Advanced DaemonSet in the simulated cluster: the DaemonSet planner
//! ([`crate::daemonset::plan`]) over a fixed set of Nodes and the readiness pass every shell runs
//! after it, round by round, with what the shell does around them (the current revision made to
//! exist, created pods named as `generateName` would, the status, history and failed-pod backoff
//! written) and the scheduler, which binds each pod to the node it is meant for.

use std::collections::BTreeMap;
use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{Node, Pod, PodSpec};

use super::report::{Report, Round, Verdict};
use super::rounds;
use crate::api::daemonset::DaemonSet;
use crate::daemonset::affinity::RequiredNodeAffinity;
use crate::daemonset::daemon_pod::{name_creations, target_node};
use crate::daemonset::placement::Placement;
use crate::daemonset::tolerations::{add_default_tolerations, tolerates};
use crate::daemonset::{
    DaemonPod, FailedPodBackoff, NodeSummary, Plan, Snapshot, in_place, numbers,
};
use crate::workload::simulation::{Cluster, Simulated, SimulationError};
use crate::workload::{Action, ListedPod, Workload, pod, readiness, revision};

/// Where the simulated clock starts (seconds since the epoch): any fixed time will do.
const T0: i64 = 1_700_000_000;

/// How many plain Nodes there are when none are given.
pub const DEFAULT_NODE_COUNT: usize = 3;

/// The DaemonSet, its history, the Nodes and the cluster its pods live in.
pub struct DaemonSetWorld {
    pub set: DaemonSet,
    pub history: Vec<ControllerRevision>,
    pub nodes: Vec<Arc<NodeSummary>>,
    pub cluster: Cluster,
    backoff: FailedPodBackoff,
    /// The last round's actions with the names its creations got.
    named: Vec<Action>,
    /// The controller's warnings of the last round that wrote.
    warnings: Vec<String>,
    /// The node of every pod seen, by name (a deleted pod's too).
    node_of_pod: BTreeMap<String, String>,
    /// Names of new pods; seeded, so that a plan is the same every time.
    rng: fastrand::Rng,
}

impl DaemonSetWorld {
    pub fn new(
        set: DaemonSet,
        history: Vec<ControllerRevision>,
        nodes: Vec<NodeSummary>,
    ) -> DaemonSetWorld {
        let mut history = history;
        revision::sort_history(&mut history);
        DaemonSetWorld {
            set,
            history,
            nodes: nodes.into_iter().map(Arc::new).collect(),
            cluster: Cluster::new(T0),
            backoff: FailedPodBackoff::default(),
            named: Vec::new(),
            warnings: Vec::new(),
            node_of_pod: BTreeMap::new(),
            rng: fastrand::Rng::with_seed(7),
        }
    }

    fn now(&self) -> Timestamp {
        self.cluster.at(self.cluster.now)
    }

    /// What the shell does before planning: make the current revision exist; its name.
    pub fn update_revision(&mut self) -> Result<String, SimulationError> {
        let collision = self.set.collision_count();
        revision::keep_update_revision(&self.set, &mut self.history, collision)
            .map_err(|e| SimulationError::Planner(e.to_string()))
    }

    /// The hash the pods of the current revision carry.
    pub fn update_hash(&mut self) -> Result<String, SimulationError> {
        let name = self.update_revision()?;
        self.history
            .iter()
            .find(|r| r.metadata.name.as_deref() == Some(&name))
            .map(|r| in_place::revision_hash(r).to_string())
            .ok_or_else(|| SimulationError::Planner(format!("revision {name} is missing")))
    }

    /// The DaemonSet as `changed` has it, at the next generation; its status stays.
    pub fn change_to(&mut self, changed: &DaemonSet) {
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

    /// Active pods, and how many of them carry `hash`.
    pub fn at_revision(&self, hash: &str) -> (usize, usize) {
        rounds::at_revision::<DaemonSet>(&self.cluster.pods, hash)
    }

    fn remember_nodes(&mut self) {
        for p in &self.cluster.pods {
            if let Some(node) = target_node(p) {
                self.node_of_pod
                    .insert(pod::name(p.as_ref()).to_string(), node.to_string());
            }
        }
    }

    /// `name on node`, as the report names a daemon pod.
    fn placed(&self, name: &str) -> String {
        match self.node_of_pod.get(name) {
            Some(node) => format!("{name} on {node}"),
            None => name.to_string(),
        }
    }

    /// What one round did, each pod named with its node; a pod created on a node that still runs
    /// an older one is a surge.
    fn describe(&mut self, number: usize) -> Result<Round, SimulationError> {
        let mut round = rounds::round_of(&self.named, number);
        let hash = self.update_hash()?;
        (round.updated, round.total) = self.at_revision(&hash);
        let beside_old = |name: &String| {
            let node = self.node_of_pod.get(name);
            self.active().any(|p| {
                pod::name(p.as_ref()) != name
                    && target_node(p) == node.map(String::as_str)
                    && !DaemonSet::REVISIONS.pod_at(p.as_ref(), &hash)
            })
        };
        let (surged, created): (Vec<String>, Vec<String>) =
            round.created.drain(..).partition(beside_old);
        round.created = created;
        round.surged = surged;
        for names in [
            &mut round.updated_in_place,
            &mut round.recreated,
            &mut round.created,
            &mut round.surged,
            &mut round.deleted,
            &mut round.not_upgradable,
        ] {
            for name in names.iter_mut() {
                *name = self.placed(name);
            }
        }
        Ok(round)
    }

    /// The scheduler: every pod not bound yet goes to the node it is meant for.
    fn bind(&mut self) {
        for index in 0..self.cluster.pods.len() {
            let p = &self.cluster.pods[index];
            let bound = p.spec.as_ref().and_then(|s| s.node_name.as_ref()).is_some();
            let Some(node) = target_node(p).map(str::to_string).filter(|_| !bound) else {
                continue;
            };
            let version = self.cluster.next_version();
            let p = Arc::make_mut(&mut self.cluster.pods[index]);
            p.spec.get_or_insert_with(Default::default).node_name = Some(node);
            p.metadata.resource_version = Some(version);
        }
    }
}

impl Simulated for DaemonSetWorld {
    type Plan = Plan;

    fn plan(&mut self) -> Result<Plan, SimulationError> {
        let current = self.update_revision()?;
        let listed: Vec<ListedPod> = self
            .cluster
            .pods
            .iter()
            .cloned()
            .map(ListedPod::whole)
            .collect();
        let pods: Vec<DaemonPod> = self
            .cluster
            .pods
            .iter()
            .cloned()
            .map(DaemonPod::whole)
            .collect();
        let now = self.now();
        let mut planned = crate::daemonset::plan(&Snapshot {
            set: &self.set,
            nodes: &self.nodes,
            pods: &pods,
            history: &self.history,
            current: &current,
            backoff: &self.backoff,
            settled: true,
            now,
        })
        .map_err(|e| SimulationError::Planner(e.to_string()))?;
        readiness::follow_lifecycle(&mut planned, &listed, self.set.lifecycle(), now);
        Ok(planned)
    }

    fn apply(&mut self, plan: &Plan) -> Result<(), SimulationError> {
        let mut actions = plan.actions.clone();
        name_creations(&mut actions, &mut self.rng);
        self.remember_nodes();
        self.cluster.apply_actions(&actions)?;
        self.bind();
        self.remember_nodes();
        self.named = actions;
        rounds::keep(plan, &mut self.set.status, &mut self.history);
        let now = self.now();
        for key in &plan.extra.backoff {
            self.backoff.advance(key, now);
        }
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

/// Runs `world` (already switched to the changed spec) round by round.
pub fn run(
    world: &mut DaemonSetWorld,
    max_rounds: usize,
    never_ready: &[String],
) -> Result<(Vec<Round>, Verdict), SimulationError> {
    let (mut rounds, settled) = rounds::run(world, max_rounds, never_ready, |world, _, number| {
        world.describe(number)
    })?;
    // A pod deleted on a node that a later round gives a new one was recreated.
    rounds::mark_recreated(&mut rounds, |placed| {
        placed.split_once(" on ").map_or(placed, |(_, node)| node)
    });
    let verdict = verdict(world, settled, max_rounds, never_ready)?;
    Ok((rounds, verdict))
}

fn verdict(
    world: &mut DaemonSetWorld,
    settled: Option<usize>,
    max_rounds: usize,
    never_ready: &[String],
) -> Result<Verdict, SimulationError> {
    let hash = world.update_hash()?;
    let status = world.set.status.clone().unwrap_or_default();
    let desired = usize::try_from(status.desired_number_scheduled).unwrap_or(0);
    let (at, total) = world.at_revision(&hash);
    // The controller's own count of what is done, and no pod left behind it.
    let done = status.updated_number_scheduled == status.desired_number_scheduled
        && status.number_available.unwrap_or(0) == status.desired_number_scheduled
        && at == total
        && total == desired;
    Ok(rounds::verdict(
        settled,
        max_rounds,
        done,
        blockers(world, &hash, never_ready),
        || {
            format!(
                "the controller stops with {at} of {total} pods at revision {hash} ({desired} nodes should run one)"
            )
        },
    ))
}

/// The node a pod runs on or is meant for.
fn node_of(p: &Pod) -> &str {
    target_node(p).unwrap_or("")
}

/// Why a settled DaemonSet is short of its current revision: what its spec holds back, which
/// pods hold the budget or wait for a hook, and what the controller itself reported.
fn blockers(world: &DaemonSetWorld, hash: &str, never_ready: &[String]) -> Vec<String> {
    let set = &world.set;
    let rolling = set.spec.update_strategy.rolling_update.as_ref();
    let mut reasons = Vec::new();
    if set.metadata.deletion_timestamp.is_some() {
        reasons.push("the DaemonSet is being deleted".to_string());
    }
    if numbers::paused(set) {
        reasons.push("updateStrategy.rollingUpdate.paused is true: no pod is updated".to_string());
    }
    let behind: Vec<&str> = world
        .active()
        .filter(|p| !DaemonSet::REVISIONS.pod_at(p.as_ref(), hash))
        .map(|p| node_of(p))
        .collect();
    let partition = rolling
        .and_then(|r| r.partition.as_ref())
        .map(rounds::int_or_string)
        .filter(|p| p != "0" && p != "0%");
    if let Some(partition) = partition
        && !behind.is_empty()
        && !numbers::paused(set)
    {
        let mut nodes = behind.clone();
        nodes.sort_unstable();
        let noun = if nodes.len() == 1 { "node" } else { "nodes" };
        reasons.push(format!(
            "updateStrategy.rollingUpdate.partition {partition} keeps the pods of {noun} {} at the current revision",
            nodes.join(", ")
        ));
    }
    let budget = budget(set);
    let min_ready = set.min_ready_seconds();
    let now = world.now();
    let mut pods: Vec<&Arc<Pod>> = world.active().collect();
    pods.sort_by_key(|p| node_of(p).to_string());
    for p in pods {
        reasons.extend(rounds::hook_wait(p));
        if !pod::is_available(p.as_ref(), min_ready, now) {
            let name = pod::name(p.as_ref());
            let placed = format!("{name} on {}", node_of(p));
            reasons.push(
                rounds::not_ready(name, never_ready, &budget.0, &budget.1)
                    .replacen(name, &placed, 1),
            );
        }
    }
    reasons.extend(world.warnings.iter().cloned());
    reasons
}

/// The update budget's field and value in words.
fn budget(set: &DaemonSet) -> (String, String) {
    let rolling = set.spec.update_strategy.rolling_update.as_ref();
    let written = |v: Option<&k8s_openapi::apimachinery::pkg::util::intstr::IntOrString>| {
        v.map_or("0".to_string(), rounds::int_or_string)
    };
    let unavailable = written(rolling.and_then(|r| r.max_unavailable.as_ref()));
    if numbers::allows_surge(set) {
        let surge = written(rolling.and_then(|r| r.max_surge.as_ref()));
        return (
            "updateStrategy.rollingUpdate.maxUnavailable and maxSurge".into(),
            format!("{unavailable} and {surge}"),
        );
    }
    (
        "updateStrategy.rollingUpdate.maxUnavailable".into(),
        unavailable,
    )
}

/// The nodes that get no pod, each with the placement rule that keeps it away.
fn placement_notes(set: &DaemonSet, nodes: &[Arc<NodeSummary>]) -> Vec<String> {
    let placement = Placement::of(set);
    let spec = set.spec.template.spec.clone().unwrap_or_default();
    let affinity = RequiredNodeAffinity::of(&spec);
    let mut tolerated = PodSpec {
        tolerations: spec.tolerations.clone(),
        host_network: spec.host_network,
        ..Default::default()
    };
    add_default_tolerations(&mut tolerated);
    let tolerations = tolerated.tolerations.unwrap_or_default();
    nodes
        .iter()
        .filter(|node| !placement.fit(node).should_run)
        .map(|node| {
            let name = node.name();
            let why = match spec.node_name.as_deref().filter(|n| !n.is_empty()) {
                Some(only) if only != name => format!("the template's nodeName is {only}"),
                _ if !affinity.matches(node) => {
                    "the template's nodeSelector or required node affinity does not match it"
                        .to_string()
                }
                _ => {
                    let taints: Vec<String> = node
                        .taints
                        .iter()
                        .filter(|t| !tolerations.iter().any(|tol| tolerates(tol, t)))
                        .map(|t| format!("{}={}:{}", t.key, t.value, t.effect.as_str()))
                        .collect();
                    format!("the pod does not tolerate its taints {}", taints.join(", "))
                }
            };
            format!("node {name} gets no pod: {why}")
        })
        .collect()
}

/// `count` plain Nodes, `node-0` on.
pub fn plain_nodes(count: usize) -> Vec<NodeSummary> {
    (0..count)
        .map(|i| NodeSummary {
            name: format!("node-{i}").into(),
            ..Default::default()
        })
        .collect()
}

/// The Nodes as placement reads them.
pub fn summaries(nodes: &[Node]) -> Vec<NodeSummary> {
    nodes.iter().map(NodeSummary::of).collect()
}

/// The plan of the change from `current` (or from nothing) to `changed` over `nodes`
/// (`nodes_given` words where they came from).
#[allow(clippy::too_many_arguments)]
pub fn plan(
    changed: DaemonSet,
    current: Option<DaemonSet>,
    pods: Vec<Pod>,
    history: Vec<ControllerRevision>,
    nodes: Vec<NodeSummary>,
    nodes_given: String,
    never_ready: &[String],
    max_rounds: usize,
) -> Result<Report, String> {
    let object = rounds::object_name(&changed.metadata);
    let failed = |e: SimulationError| format!("simulating DaemonSet {object}: {e}");
    let had_current = current.is_some();
    let mut world = DaemonSetWorld::new(
        current.clone().unwrap_or_else(|| changed.clone()),
        history,
        nodes.clone(),
    );
    world.set.status = None;
    let start_hash = world.update_hash().map_err(failed)?;
    let start = rounds::start(
        &mut world,
        pods,
        had_current,
        ("DaemonSet", &object),
        max_rounds,
        |world| {
            world.bind();
            world.remember_nodes();
            let (at, total) = world.at_revision(&start_hash);
            Ok((at, total, start_hash.clone()))
        },
    )?;
    let start = format!("{nodes_given}; {start}");
    world.warnings.clear();
    world.change_to(&changed);
    let (rounds, verdict) = run(&mut world, max_rounds, never_ready).map_err(failed)?;
    let nodes: Vec<Arc<NodeSummary>> = nodes.into_iter().map(Arc::new).collect();
    Ok(Report {
        kind: "DaemonSet".into(),
        object,
        start,
        notes: placement_notes(&changed, &nodes),
        rounds,
        verdict,
    })
}

#[cfg(test)]
mod tests;
