//! In-place updates of daemon pods through the engine ([`crate::inplace`]): the refresh that
//! moves updates in flight forward on every round, and the start of an update for the old pods
//! the rolling update chose (`rollingUpdateType: InPlaceIfPossible`).
//!
//! The pod's revision label and the update state's `revision` hold the bare hash, as Kruise's
//! DaemonSet writes them; no lifecycle state is written.

use std::time::Duration;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::Pod;

use super::numbers;
use super::round::Round;
use crate::api::keys;
use crate::cloneset::update::ENGINE;
use crate::cloneset::{Action, Event, PodWrite, Purpose};
use crate::inplace::{
    self, CalculateOptions, EnvFromMetadata, Revision, Step, UpdateSpec, conditions, env_hash,
};
use crate::podmarks::{EngineOwner, PodView};

/// The hash a revision stands for: its `controller-revision-hash` label (a revision Go created
/// keeps the hash Go computed).
pub fn revision_hash(revision: &ControllerRevision) -> &str {
    revision
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(keys::CONTROLLER_REVISION_HASH))
        .map_or("", String::as_str)
}

/// Upstream `refreshUpdateStates`: one engine step for every pod with an update in flight.
/// Returns whether it wrote anything; `requeue` gets the engine's waits.
pub fn refresh(
    round: &Round<'_>,
    history: &[ControllerRevision],
    out: &mut Vec<Action>,
    requeue: &mut Option<Duration>,
) -> bool {
    let mut wrote = false;
    for index in 0..round.pods.len() {
        if round.pods[index]
            .summary
            .engine_at_rest(EngineOwner::CloneSet)
        {
            continue;
        }
        let Some(p) = round.whole(index) else {
            continue;
        };
        // Another owner's update (a SidecarSet's) is that owner's to drive.
        let foreign = inplace::in_flight_revision(p)
            .is_some_and(|revision| !history.iter().any(|r| revision_hash(r) == revision));
        if foreign {
            continue;
        }
        match inplace::next_step(p, None, &ENGINE, round.now) {
            Ok(step) => {
                if let Some(wait) = step.requeue_after().filter(|d| !d.is_zero()) {
                    *requeue = Some(requeue.map_or(wait, |r| r.min(wait)));
                }
                let status = matches!(step.write(), Some(inplace::step::Write::Status(_)));
                if let Some(after) = step.into_pod() {
                    let write = if status {
                        PodWrite::status(after)
                    } else {
                        PodWrite::spec(after)
                    };
                    out.push(Action::WritePod {
                        before: p.clone(),
                        writes: vec![write],
                        purpose: Purpose::Refresh,
                    });
                    wrote = true;
                }
            }
            Err(error) => out.push(Action::Event(Event::warning(
                "InvalidInPlaceUpdateState",
                format!("pod {}: {error}", p.name()),
            ))),
        }
    }
    wrote
}

/// Upstream `inPlaceUpdatePods`: of `chosen`, the pods that can be updated in place (they have
/// the `InPlaceUpdateReady` gate, their revision is one of `old`, and only images or metadata
/// changed) start their update, the first burstReplicas of them; the others are returned for
/// deletion.
pub fn start_updates(
    round: &Round<'_>,
    current: &ControllerRevision,
    old: &[&ControllerRevision],
    chosen: Vec<usize>,
    out: &mut Vec<Action>,
) -> Vec<usize> {
    let mut delete = Vec::new();
    let mut started = 0;
    let burst = numbers::burst_replicas(round.set, round.previous_desired);
    // Thousands of pods may start the same update: one calculation per revision and env mode.
    let mut specs: Vec<((usize, EnvFromMetadata), Option<UpdateSpec>)> = Vec::new();
    for pod in chosen {
        let summary = &round.pods[pod].summary;
        let label = summary
            .labels()
            .and_then(|l| l.get(keys::CONTROLLER_REVISION_HASH))
            .map_or("", String::as_str);
        let from = old.iter().position(|r| revision_hash(r) == label);
        let Some(from) = from.filter(|_| summary.has_inplace_gate()) else {
            delete.push(pod);
            continue;
        };
        let Some(p) = round.whole(pod) else {
            continue;
        };
        // Only a node agent restarts a container whose env reads changed metadata.
        let env = if env_hash::node_agent_reports(p) {
            EnvFromMetadata::InPlace
        } else {
            EnvFromMetadata::Recreate
        };
        let key = (from, env);
        let spec = match specs.iter().find(|(k, _)| *k == key) {
            Some((_, spec)) => spec.clone(),
            None => {
                let spec = calculate(old[from], current, env);
                specs.push((key, spec.clone()));
                spec
            }
        };
        match spec.and_then(|spec| start_writes(round, p, &spec)) {
            Some(writes) if started < burst => {
                started += 1;
                out.push(Action::WritePod {
                    before: p.clone(),
                    writes,
                    purpose: Purpose::InPlace {
                        revision: current.metadata.name.clone().unwrap_or_default(),
                    },
                });
            }
            // Beyond the burst: neither updated nor deleted this round.
            Some(_) => {}
            None => delete.push(pod),
        }
    }
    delete
}

/// Upstream `CanUpdateInPlace` / `CalculateInPlaceUpdateSpec` between two revisions, named by
/// their hashes.
fn calculate(
    from: &ControllerRevision,
    to: &ControllerRevision,
    env_from_metadata: EnvFromMetadata,
) -> Option<UpdateSpec> {
    let revision = |r: &ControllerRevision| {
        let data = &r.data.as_ref()?.0;
        Some((revision_hash(r).to_string(), data.clone()))
    };
    let (old_name, old_data) = revision(from)?;
    let (new_name, new_data) = revision(to)?;
    let as_revision = |name, data| Revision {
        name,
        data,
        volume_claim_templates_hash: None,
    };
    let options = CalculateOptions {
        grace_seconds: 0,
        env_from_metadata,
        recreate_on_volume_claim_templates_change: false,
        ignore_volume_claim_templates_hash_diff: false,
    };
    inplace::calculate_spec(
        Some(&as_revision(&old_name, &old_data)),
        Some(&as_revision(&new_name, &new_data)),
        &options,
    )
    .ok()
}

/// The status write (gate False, Ready recomputed) and the spec write that start `spec` on `p`;
/// `None` when the pod cannot take it in place.
fn start_writes(round: &Round<'_>, p: &Pod, spec: &UpdateSpec) -> Option<Vec<PodWrite>> {
    let mut writes = Vec::with_capacity(2);
    let base = match conditions::mark_not_ready(p, round.now) {
        Some(not_ready) => {
            writes.push(PodWrite::status(not_ready.clone()));
            not_ready
        }
        None => p.clone(),
    };
    match inplace::start_update_owned(base, spec, &ENGINE, round.now).ok()? {
        Step::PatchBatch { pod, .. } => writes.push(PodWrite::spec(pod)),
        _ => return None,
    }
    Some(writes)
}

#[cfg(test)]
mod tests;
