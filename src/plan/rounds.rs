//! What every workload kind's plan shares: the loop that runs a world round by round and keeps
//! the rounds that changed pods, what a round's pod actions were, the verdict, and the words of
//! the blockers the kinds have in common (a hook not released, a pod not ready).

use std::sync::Arc;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::report::{Round, Verdict};
use crate::workload::lifecycle::{PREPARING_DELETE, PREPARING_UPDATE};
use crate::workload::simulation::{self, Simulated, SimulationError};
use crate::workload::{Action, Plan as WorkloadPlan, Purpose, Workload, pod};

/// What one round's actions did to pods.
pub fn round_of(actions: &[Action], number: usize) -> Round {
    let mut round = Round {
        round: number,
        ..Round::default()
    };
    for action in actions {
        match action {
            Action::CreatePod { pod: p, .. } => round.created.push(pod::name(p.as_ref()).into()),
            Action::DeletePod { name } => round.deleted.push(name.clone()),
            Action::WritePod {
                before, purpose, ..
            } => match purpose {
                Purpose::InPlace { .. } => round.updated_in_place.push(pod::name(before).into()),
                Purpose::Recreate { .. } => round.recreated.push(pod::name(before).into()),
                Purpose::Refresh | Purpose::Lifecycle | Purpose::ScaleLifecycle => {}
            },
            Action::UpdatePod { .. }
            | Action::CreatePvc { .. }
            | Action::UpdatePvcOwners { .. }
            | Action::Event(_) => {}
        }
    }
    round
}

/// Runs `world` (already switched to the changed spec) round by round, `never_ready` pods left
/// alone by the kubelet: the rounds that changed pods (`describe` words each, with the world as
/// the round left it) and the number of rounds before the one that wrote nothing, `None` when
/// all `max_rounds` wrote or waited.
pub fn run<S: Simulated>(
    world: &mut S,
    max_rounds: usize,
    never_ready: &[String],
    mut describe: impl FnMut(&mut S, &S::Plan, usize) -> Result<Round, SimulationError>,
) -> Result<(Vec<Round>, Option<usize>), SimulationError> {
    world.cluster().stuck = never_ready.to_vec();
    let mut rounds = Vec::new();
    for number in 1..=max_rounds {
        let plan = simulation::round(world)?;
        if S::writes_nothing(&plan) {
            match S::requeue_after(&plan) {
                // The controller looks again after the time it asked for.
                Some(wait) => simulation::wait_for(world.cluster(), wait),
                None => return Ok((rounds, Some(number - 1))),
            }
            continue;
        }
        let round = describe(world, &plan, number)?;
        if round.changed_pods() {
            rounds.push(round);
        }
    }
    Ok((rounds, None))
}

/// The end of a run: complete when it settled `done`; otherwise blocked for `blockers`, or for
/// `short` (where the controller stopped) when nothing names a cause.
pub fn verdict(
    settled: Option<usize>,
    max_rounds: usize,
    done: bool,
    blockers: Vec<String>,
    short: impl FnOnce() -> String,
) -> Verdict {
    let Some(rounds) = settled else {
        let mut reasons = vec![format!(
            "not settled after {max_rounds} rounds (--max-rounds): the controller still writes"
        )];
        reasons.extend(blockers);
        return Verdict::Blocked {
            rounds: max_rounds,
            reasons,
        };
    };
    if done {
        return Verdict::Completes { rounds };
    }
    let mut reasons = blockers;
    if reasons.is_empty() {
        reasons.push(short());
    }
    Verdict::Blocked { rounds, reasons }
}

/// A pod held by a lifecycle hook, in words.
pub fn hook_wait(p: &Pod) -> Option<String> {
    let name = pod::name(p);
    match pod::lifecycle(p) {
        PREPARING_UPDATE => Some(format!(
            "pod {name} waits in PreparingUpdate: the lifecycle.inPlaceUpdate hook is not released (its label or finalizer is still set)"
        )),
        PREPARING_DELETE => Some(format!(
            "pod {name} waits in PreparingDelete: the lifecycle.preDelete hook is not released (its label or finalizer is still set)"
        )),
        _ => None,
    }
}

/// A pod that is not ready, in words: what holds it (`--never-ready`) and the budget it uses
/// (`field` at `budget`).
pub fn not_ready(name: &str, never_ready: &[String], field: &str, budget: &str) -> String {
    let why = if never_ready.iter().any(|n| n == name) {
        " (--never-ready)"
    } else {
        ""
    };
    format!("pod {name} is not ready{why}: it counts against {field} ({budget})")
}

/// An int-or-percent field as written.
pub fn int_or_string(value: &IntOrString) -> String {
    match value {
        IntOrString::Int(n) => n.to_string(),
        IntOrString::String(s) => s.clone(),
    }
}

/// The warnings of a round's events, as the controller words them.
pub fn warnings(actions: &[Action]) -> Vec<String> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Event(e) if e.warning => Some(format!(
                "the controller reports {}: {}",
                e.reason, e.message
            )),
            _ => None,
        })
        .collect()
}

/// Moves each deleted pod whose place (`place`: its name, its node) a later round fills again to
/// `recreated`.
pub fn mark_recreated(rounds: &mut [Round], place: impl Fn(&str) -> &str) {
    for index in 0..rounds.len() {
        let (this, later) = rounds.split_at_mut(index + 1);
        let round = &mut this[index];
        let filled = |name: &String| {
            later.iter().any(|r| {
                r.created
                    .iter()
                    .chain(&r.surged)
                    .any(|made| place(made) == place(name))
            })
        };
        let (again, gone): (Vec<String>, Vec<String>) = round.deleted.drain(..).partition(filled);
        round.deleted = gone;
        round.recreated.extend(again);
    }
}

/// Whether a workload round writes nothing (the world has converged).
pub fn writes_nothing<St, X>(plan: &WorkloadPlan<St, X>) -> bool {
    plan.actions.is_empty() && !plan.write_status
}

/// What the shell writes of a workload round besides its pod actions: the status, and the
/// history without the revisions the round deletes.
pub fn keep<St: Clone, X>(
    plan: &WorkloadPlan<St, X>,
    status: &mut Option<St>,
    history: &mut Vec<ControllerRevision>,
) {
    if plan.write_status {
        *status = Some(plan.status.clone());
    }
    history.retain(|r| {
        r.metadata
            .name
            .as_ref()
            .is_none_or(|name| !plan.revisions_to_delete.contains(name))
    });
}

/// What the controller reports of a round: its warnings and its error.
pub fn reported<St, X>(plan: &WorkloadPlan<St, X>) -> Vec<String> {
    let mut out = warnings(&plan.actions);
    out.extend(
        plan.error
            .iter()
            .map(|e| format!("the controller reports an error: {e}")),
    );
    out
}

/// Where a world starts: the `given` pods put in its cluster, else (with a current object) the
/// pods its planner makes, settled and Ready, else none; in words. `progress` counts the pods at
/// the current revision, of all, and names the revision.
pub fn start<S: Simulated>(
    world: &mut S,
    given: Vec<Pod>,
    had_current: bool,
    (kind, object): (&str, &str),
    max_rounds: usize,
    progress: impl Fn(&mut S) -> Result<(usize, usize, String), SimulationError>,
) -> Result<String, String> {
    let failed = |e: SimulationError| format!("simulating {kind} {object}: {e}");
    if !given.is_empty() {
        let count = given.len();
        let cluster = world.cluster();
        cluster.pods = given
            .into_iter()
            .map(|mut p| {
                p.metadata.resource_version = Some(cluster.next_version());
                Arc::new(p)
            })
            .collect();
        let (at, _, revision) = progress(world).map_err(failed)?;
        return Ok(format!(
            "{count} pods given, {at} at the current revision {revision}"
        ));
    }
    if !had_current {
        return Ok(format!(
            "no current object given: the {kind} starts with no pods"
        ));
    }
    // The current object's pods, made by the same planner and all Ready.
    if simulation::settle(world, max_rounds)
        .map_err(failed)?
        .is_none()
    {
        return Err(format!(
            "the current {kind} {object} does not settle in {max_rounds} rounds"
        ));
    }
    let (at, total, revision) = progress(world).map_err(failed)?;
    Ok(format!(
        "no pods given: {total} pods of the current {kind}, {at} Ready at its revision {revision}"
    ))
}

/// Active pods of kind `W`, and how many of them are at `revision`.
pub fn at_revision<W: Workload>(pods: &[Arc<Pod>], revision: &str) -> (usize, usize) {
    let active = pods.iter().filter(|p| pod::is_active(p.as_ref()));
    let at = active
        .clone()
        .filter(|p| W::REVISIONS.pod_at(p.as_ref(), revision))
        .count();
    (at, active.count())
}

/// The end of a run of a workload that wants `replicas` pods: complete when it settled with
/// exactly those, each at `update` and available (`set`'s `minReadySeconds`).
pub fn replicas_verdict<W: Workload>(
    set: &W,
    replicas: usize,
    pods: &[Arc<Pod>],
    update: &str,
    now: jiff::Timestamp,
    (settled, max_rounds): (Option<usize>, usize),
    blockers: Vec<String>,
) -> Verdict {
    let min_ready = set.min_ready_seconds();
    let active: Vec<&Arc<Pod>> = pods.iter().filter(|p| pod::is_active(p.as_ref())).collect();
    let done = active.len() == replicas
        && active.iter().all(|p| {
            W::REVISIONS.pod_at(p.as_ref(), update) && pod::is_available(p.as_ref(), min_ready, now)
        });
    let (at, total) = at_revision::<W>(pods, update);
    verdict(settled, max_rounds, done, blockers, || {
        format!(
            "the controller stops with {at} of {total} pods at revision {update} ({replicas} replicas wanted)"
        )
    })
}

/// `namespace/name` of a namespaced object, as the report names it.
pub fn object_name(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> String {
    format!(
        "{}/{}",
        meta.namespace.as_deref().unwrap_or("default"),
        meta.name.as_deref().unwrap_or("")
    )
}
