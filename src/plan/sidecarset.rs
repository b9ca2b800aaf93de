//! A SidecarSet in the simulated cluster: each round matches its pods, plans the round
//! ([`crate::rollout::plan_round`], [`crate::rollout::round_actions`]) and writes what the
//! controller writes: the status, the upgraded pods, idle hot-upgrade copies reset, pods marked
//! not upgradable.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Container, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::report::{Report, Round, Verdict};
use crate::api::{SidecarSet, SidecarSetUpdateStrategy, keys};
use crate::k8s::selector::Labels;
use crate::rollout::{self, Halt, RoundActions};
use crate::updatesort::budget::{max_unavailable_count, partition_count};
use crate::workload::Action;
use crate::workload::simulation::{self, Cluster, Simulated, SimulationError};

/// Where the simulated clock starts (seconds since the epoch): any fixed time will do.
const T0: i64 = 1_700_000_000;

/// The SidecarSet, the Namespaces' labels and the cluster its pods live in.
pub struct SidecarSetWorld {
    pub set: SidecarSet,
    pub namespaces: BTreeMap<String, Labels>,
    pub cluster: Cluster,
}

/// One round: what the controller decided, over which pods.
pub struct SidecarRound {
    pub matched: Vec<Arc<Pod>>,
    pub halted: Option<Halt>,
    pub actions: RoundActions,
    /// The pod writes the round makes, with the number of launch-priority batches of each
    /// upgrade.
    pub writes: Vec<Action>,
    pub batches: usize,
}

impl SidecarSetWorld {
    fn now_text(&self) -> String {
        crate::workload::rfc3339(self.cluster.at(self.cluster.now))
    }

    fn names(round: &SidecarRound, indexes: &[usize]) -> Vec<String> {
        indexes
            .iter()
            .filter_map(|&i| round.matched.get(i))
            .map(|p| p.metadata.name.clone().unwrap_or_default())
            .collect()
    }

    /// Matched pods, and how many of them record the SidecarSet's current hash.
    fn updated(&self) -> Result<(usize, usize), SimulationError> {
        let matched = self.matched()?;
        let facts = rollout::facts_of(&self.set, &matched);
        Ok((facts.iter().filter(|f| f.updated).count(), matched.len()))
    }

    fn matched(&self) -> Result<Vec<Arc<Pod>>, SimulationError> {
        rollout::matched_pods(&self.set, &self.cluster.pods, |ns| self.namespaces.get(ns))
            .map_err(|e| SimulationError::Planner(e.to_string()))
    }
}

impl Simulated for SidecarSetWorld {
    type Plan = SidecarRound;

    fn plan(&mut self) -> Result<SidecarRound, SimulationError> {
        let matched = self.matched()?;
        let plan = rollout::plan_round(&self.set, &matched);
        let halted = plan.halted;
        let actions = rollout::round_actions(&self.set, &matched, plan);
        let now = self.now_text();
        let time = Time(self.cluster.at(self.cluster.now));
        let mut writes = Vec::new();
        let mut batches = 1;
        for &i in &actions.not_upgradable {
            if let Some(marked) =
                rollout::with_upgradable_condition(&matched[i], self.set.name(), false, &time)
            {
                writes.push(update(&matched[i], marked));
            }
        }
        for &i in &actions.reset_idle {
            let reset = rollout::reset_idle_copies(&matched[i], &self.set, &now);
            writes.push(update(&matched[i], reset));
        }
        for &i in &actions.upgrade {
            let upgrade = rollout::upgrade_pod(&matched[i], &self.set, &now)
                .map_err(|e| SimulationError::Planner(e.to_string()))?;
            batches = batches.max(upgrade.batches.len());
            writes.push(update(&matched[i], upgrade.pod));
        }
        Ok(SidecarRound {
            matched,
            halted,
            actions,
            writes,
            batches,
        })
    }

    fn apply(&mut self, round: &SidecarRound) -> Result<(), SimulationError> {
        if let Some(status) = &round.actions.status {
            self.set.status = Some(status.clone());
        }
        self.cluster.apply_actions(&round.writes)
    }

    fn writes_nothing(round: &SidecarRound) -> bool {
        round.actions.status.is_none() && round.writes.is_empty()
    }

    fn cluster(&mut self) -> &mut Cluster {
        &mut self.cluster
    }
}

fn update(before: &Arc<Pod>, after: Pod) -> Action {
    Action::UpdatePod {
        before: Arc::clone(before),
        after: Box::new(after),
    }
}

fn text(value: &IntOrString) -> String {
    match value {
        IntOrString::Int(n) => n.to_string(),
        IntOrString::String(s) => s.clone(),
    }
}

/// Runs `world` (already holding the changed SidecarSet) round by round.
pub fn run(
    world: &mut SidecarSetWorld,
    max_rounds: usize,
    never_ready: &[String],
) -> Result<(Vec<Round>, Verdict, Vec<String>), SimulationError> {
    world.cluster.stuck = never_ready.to_vec();
    let mut rounds = Vec::new();
    let mut notes = Vec::new();
    let mut last = None;
    let mut settled = None;
    for number in 1..=max_rounds {
        let planned = simulation::round(world)?;
        if planned.batches > 1 && notes.is_empty() {
            notes.push("upgrades in several launch-priority batches are written whole here; the controller writes one batch per round".to_string());
        }
        let mut round = Round {
            round: number,
            updated_in_place: SidecarSetWorld::names(&planned, &planned.actions.upgrade),
            not_upgradable: SidecarSetWorld::names(&planned, &planned.actions.not_upgradable),
            ..Round::default()
        };
        (round.updated, round.total) = world.updated()?;
        if round.changed_pods() {
            rounds.push(round);
        }
        let quiet = SidecarSetWorld::writes_nothing(&planned);
        last = Some(planned);
        if quiet {
            settled = Some(number - 1);
            break;
        }
    }
    let verdict = verdict(world, last.as_ref(), settled, max_rounds, never_ready)?;
    Ok((rounds, verdict, notes))
}

fn verdict(
    world: &SidecarSetWorld,
    last: Option<&SidecarRound>,
    settled: Option<usize>,
    max_rounds: usize,
    never_ready: &[String],
) -> Result<Verdict, SimulationError> {
    let matched = world.matched()?;
    let facts = rollout::facts_of(&world.set, &matched);
    let done = facts.iter().all(|f| f.updated && f.available());
    match settled {
        Some(rounds) if done => Ok(Verdict::Completes { rounds }),
        Some(rounds) => Ok(Verdict::Blocked {
            rounds,
            reasons: blockers(world, last, &matched, never_ready),
        }),
        None => {
            let mut reasons = vec![format!(
                "not settled after {max_rounds} rounds (--max-rounds): the controller still writes"
            )];
            reasons.extend(blockers(world, last, &matched, never_ready));
            Ok(Verdict::Blocked {
                rounds: max_rounds,
                reasons,
            })
        }
    }
}

/// Why a settled rollout is short of every matched pod updated and ready: the planner's halt,
/// then what the strategy holds back and which pods hold the budget.
fn blockers(
    world: &SidecarSetWorld,
    last: Option<&SidecarRound>,
    matched: &[Arc<Pod>],
    never_ready: &[String],
) -> Vec<String> {
    let default_strategy = SidecarSetUpdateStrategy::default();
    let strategy = world
        .set
        .spec
        .update_strategy
        .as_ref()
        .unwrap_or(&default_strategy);
    let mut reasons = Vec::new();
    match last.and_then(|r| r.halted) {
        Some(Halt::NotUpdate) => reasons.push(format!(
            "updateStrategy.type is {}: pods are updated only when re-created",
            keys::NOT_UPDATE
        )),
        Some(Halt::Paused) => {
            reasons.push("updateStrategy.paused is true: no pod is upgraded".to_string())
        }
        _ => {}
    }
    let facts = rollout::facts_of(&world.set, matched);
    let waiting = facts.iter().filter(|f| !f.updated).count();
    let partition = partition_count(strategy.partition.as_ref(), matched.len());
    if partition > 0 && waiting > 0 {
        reasons.push(format!(
            "updateStrategy.partition {} keeps {partition} of {} pods on the old sidecars",
            strategy.partition.as_ref().map(text).unwrap_or_default(),
            matched.len()
        ));
    }
    let budget = max_unavailable_count(strategy.max_unavailable.as_ref(), matched.len());
    if budget == 0 && waiting > 0 {
        let value = strategy
            .max_unavailable
            .as_ref()
            .map_or("1".to_string(), text);
        reasons.push(format!(
            "updateStrategy.maxUnavailable {value} of {} pods rounds to 0: no ready pod may be upgraded",
            matched.len()
        ));
    }
    if let Some(canary) = &strategy.selector {
        let left_out = matched
            .iter()
            .zip(&facts)
            .filter(|(p, f)| {
                !f.updated
                    && !crate::k8s::selector::matches(
                        canary,
                        p.metadata.labels.as_ref(),
                        "spec.updateStrategy.selector",
                    )
                    .unwrap_or(false)
            })
            .count();
        if left_out > 0 {
            reasons.push(format!(
                "updateStrategy.selector leaves out {left_out} of the pods not yet updated"
            ));
        }
    }
    for (p, f) in matched.iter().zip(&facts) {
        let name = p.metadata.name.as_deref().unwrap_or("");
        if !f.updated && !f.upgradable {
            reasons.push(format!(
                "pod {name}: its sidecars changed in more than their images, so it cannot be upgraded in place (SidecarSetUpgradable False): it takes the new sidecars when re-created"
            ));
        }
        if !f.available() {
            let why = if never_ready.iter().any(|n| n == name) {
                " (--never-ready)"
            } else {
                ""
            };
            reasons.push(format!(
                "pod {name} is not ready{why}: it counts against updateStrategy.maxUnavailable ({budget} pods)"
            ));
        }
    }
    if reasons.is_empty() {
        reasons.push(format!(
            "the controller stops with {} of {} pods updated",
            facts.iter().filter(|f| f.updated).count(),
            matched.len()
        ));
    }
    reasons
}

/// `count` pods as the SidecarSet `current` selects and injects them: the selector's and
/// namespace selector's `matchLabels`, one application container.
pub fn pods_injected_by(
    current: &SidecarSet,
    count: usize,
    cluster: &mut Cluster,
    namespaces: &mut BTreeMap<String, Labels>,
) -> Result<(), String> {
    let selector = current.spec.selector.as_ref().ok_or(
        "spec.selector: Required value: a SidecarSet without a selector matches no pod, so there is nothing to plan",
    )?;
    if selector
        .match_expressions
        .as_ref()
        .is_some_and(|e| !e.is_empty())
    {
        return Err(
            "spec.selector uses matchExpressions: give the SidecarSet's pods with --pods".into(),
        );
    }
    let namespace_selector = current.spec.namespace_selector.as_ref();
    if namespace_selector
        .and_then(|s| s.match_expressions.as_ref())
        .is_some_and(|e| !e.is_empty())
    {
        return Err(
            "spec.namespaceSelector uses matchExpressions: give the SidecarSet's pods with --pods"
                .into(),
        );
    }
    let namespace_labels: Labels = namespace_selector
        .and_then(|s| s.match_labels.clone())
        .unwrap_or_default();
    let namespace = namespace_labels
        .get("kubernetes.io/metadata.name")
        .cloned()
        .unwrap_or_else(|| "default".to_string());
    namespaces.insert(
        namespace.clone(),
        crate::k8s::selector::namespace_labels(namespace.clone(), Some(namespace_labels)),
    );
    let now = crate::workload::rfc3339(cluster.at(cluster.now));
    let mut creates = Vec::new();
    for index in 0..count {
        let mut pod = Pod {
            metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                name: Some(format!("pod-{index}")),
                namespace: Some(namespace.clone()),
                labels: selector.match_labels.clone(),
                ..Default::default()
            },
            spec: Some(k8s_openapi::api::core::v1::PodSpec {
                containers: vec![Container {
                    name: "app".into(),
                    image: Some("app:1".into()),
                    ..Default::default()
                }],
                ..Default::default()
            }),
            status: None,
        };
        crate::inject::sidecar::inject_chosen(&mut pod, &[current], &now, false, None)
            .map_err(|e| format!("injecting the current SidecarSet into a pod: {e}"))?;
        creates.push(Action::CreatePod {
            pod: Box::new(pod),
            revision: String::new(),
        });
    }
    cluster.apply_actions(&creates).map_err(|e| e.to_string())?;
    cluster.kubelet();
    Ok(())
}

/// The plan of the change from `current` to `changed` over `pods` (in `namespaces`, labelled;
/// a namespace not there carries its name label only), or over `matched_pods` pods injected by
/// `current` when none are given.
pub fn plan(
    changed: SidecarSet,
    current: Option<SidecarSet>,
    pods: Vec<Pod>,
    mut namespaces: BTreeMap<String, Labels>,
    matched_pods: Option<usize>,
    never_ready: &[String],
    max_rounds: usize,
) -> Result<Report, String> {
    let object = changed.name().to_string();
    let failed = |e: SimulationError| format!("simulating SidecarSet {object}: {e}");
    let mut cluster = Cluster::new(T0);
    let start = if !pods.is_empty() {
        let count = pods.len();
        for p in &pods {
            let ns = p
                .metadata
                .namespace
                .clone()
                .unwrap_or_else(|| "default".into());
            namespaces
                .entry(ns.clone())
                .or_insert_with(|| crate::k8s::selector::namespace_labels(ns, None));
        }
        cluster.pods = pods
            .into_iter()
            .map(|mut p| {
                p.metadata.resource_version = Some(cluster.next_version());
                Arc::new(p)
            })
            .collect();
        format!("{count} pods given")
    } else {
        let base = current.as_ref().ok_or(
            "a SidecarSet's rollout needs its pods: give --pods, or --current with the SidecarSet as it is now",
        )?;
        let count = matched_pods
            .or_else(|| {
                base.status
                    .as_ref()
                    .and_then(|s| usize::try_from(s.matched_pods).ok())
                    .filter(|&n| n > 0)
            })
            .ok_or("how many pods the SidecarSet matches is unknown: give --matched-pods N (or --pods, or a --current object whose status.matchedPods says it)")?;
        pods_injected_by(base, count, &mut cluster, &mut namespaces)?;
        format!("no pods given: {count} pods injected by the current SidecarSet, all Ready")
    };
    let mut set = changed;
    set.status = current.and_then(|c| c.status);
    let mut world = SidecarSetWorld {
        set,
        namespaces,
        cluster,
    };
    let (rounds, verdict, notes) = run(&mut world, max_rounds, never_ready).map_err(failed)?;
    Ok(Report {
        kind: "SidecarSet".into(),
        object,
        start,
        notes,
        rounds,
        verdict,
    })
}
