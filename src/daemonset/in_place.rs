//! In-place updates of daemon pods through the workload core's steps
//! ([`crate::workload::inplace::InPlace`]): the refresh that moves updates in flight forward on
//! every round, and the start of an update for the old pods the rolling update chose
//! (`rollingUpdateType: InPlaceIfPossible`, upstream `inPlaceUpdatePods`).
//!
//! The pods name a revision by its hash label ([`crate::workload::revision::RevisionScheme::DAEMONSET`]), as Kruise's
//! DaemonSet writes them.

use std::time::Duration;

use k8s_openapi::api::apps::v1::ControllerRevision;

use super::numbers;
use super::round::Round;
use crate::api::daemonset::DaemonSet;
use crate::podmarks::{EngineOwner, PodView};
use crate::workload::facts::PodFacts;
use crate::workload::inplace::{InPlace, InPlaceStart, SpecCache};
use crate::workload::lifecycle::{self, LifecycleState};
use crate::workload::{Action, ListedPod, Workload, push_requeue};

/// The hash a revision stands for: its `controller-revision-hash` label (a revision Go created
/// keeps the hash Go computed), or its name without one.
pub fn revision_hash(revision: &ControllerRevision) -> &str {
    DaemonSet::REVISIONS.pod_value(revision)
}

fn in_place<'a>(round: &'a Round<'_>, history: &'a [ControllerRevision]) -> InPlace<'a> {
    InPlace {
        history,
        scheme: DaemonSet::REVISIONS,
        hooks: round.set.lifecycle(),
        table: lifecycle::Table::CloneSet,
        grace_seconds: 0,
        ignore_volume_claim_templates_hash_diff: false,
        now: round.now,
        now_text: &round.now_text,
    }
}

/// The core's refresh step over the pods with something in flight (an in-place update, a
/// lifecycle state that moves on by itself). Returns whether it wrote anything; `requeue` gets
/// the engine's waits.
pub fn refresh(
    round: &Round<'_>,
    history: &[ControllerRevision],
    out: &mut Vec<Action>,
    requeue: &mut Option<Duration>,
) -> bool {
    // Most pods of a large DaemonSet have nothing in flight: only the others get core facts.
    let moving: Vec<usize> = (0..round.pods.len())
        .filter(|&i| {
            let summary = &*round.pods[i].summary;
            !round.facts[i].deleting
                && (!summary.engine_at_rest(EngineOwner::Workload)
                    || LifecycleState::of(lifecycle::state(summary)).moves_on_by_itself())
        })
        .collect();
    if moving.is_empty() {
        return false;
    }
    let active: Vec<&ListedPod> = moving.iter().map(|&i| &round.pods[i].listed).collect();
    let facts: Vec<PodFacts> = moving
        .iter()
        .map(|&i| {
            PodFacts::of(
                &round.pods[i].summary,
                DaemonSet::REVISIONS,
                round.hash,
                &[],
                round.min_ready_seconds,
                round.now,
            )
        })
        .collect();
    let step = in_place(round, history).refresh(&active, &facts, round.hash, &round.whole_pods);
    out.extend(step.actions);
    push_requeue(requeue, step.requeue);
    step.wrote
}

/// Upstream `inPlaceUpdatePods`: of `chosen`, the pods that can be updated in place (they have
/// the `InPlaceUpdateReady` gate, and the core's start finds only images or metadata changed
/// from their revision) start their update, the first burstReplicas of them; the others are
/// returned for deletion.
pub fn start_updates(
    round: &Round<'_>,
    history: &[ControllerRevision],
    chosen: Vec<usize>,
    out: &mut Vec<Action>,
) -> Vec<usize> {
    let mut delete = Vec::new();
    let mut started = 0;
    let burst = numbers::burst_replicas(round.set, round.previous_desired);
    let steps = in_place(round, history);
    // Thousands of pods may start the same update: one calculation per revision and env mode.
    let mut specs = SpecCache::default();
    for pod in chosen {
        if !round.pods[pod].summary.has_inplace_gate() {
            delete.push(pod);
            continue;
        }
        let Some(p) = round.whole(pod) else {
            continue;
        };
        match steps.start(p, round.hash, &mut specs) {
            InPlaceStart::Start(action) if started < burst => {
                started += 1;
                out.push(action);
            }
            // Beyond the burst: neither updated nor deleted this round.
            InPlaceStart::Start(_) | InPlaceStart::Held => {}
            InPlaceStart::Hook(action) => out.push(action),
            InPlaceStart::NotInPlace(_) => delete.push(pod),
        }
    }
    delete
}

#[cfg(test)]
mod tests;
