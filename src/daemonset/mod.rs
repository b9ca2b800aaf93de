//! The Advanced DaemonSet controller's pure core (OpenKruise `pkg/controller/daemonset`, aligned
//! with the upstream DaemonSet controller): given snapshots of a DaemonSet, the nodes, the pods
//! it owns, its revisions and the time, what one reconcile writes. No I/O, no clock: the shell
//! in `controller::daemonset` lists, calls [`plan`] and sends what it returns.
//!
//! - [`node`]: what placement reads of a Node; [`watch`]: which DaemonSets a node event concerns;
//! - [`affinity`], [`tolerations`], [`placement`]: which nodes should run a daemon pod;
//! - [`daemon_pod`]: the pod created for a node, and the node a pod is meant for;
//! - [`facts`], [`listed`], [`round`]: the round's view of the pods, grouped by node;
//! - [`manage`]: pods to create and delete per node; [`sync`]: the preDelete hook and bursts;
//! - [`rolling`]: the rolling update; [`in_place`]: the in-place engine's refresh and starts;
//! - [`status`]: the status counters; [`backoff`]: failed-pod backoff;
//! - [`events`]: how the DaemonSet words the events of its requests.
//!
//! Revisions, lifecycle states and hooks, the in-place steps and the pod summaries are the
//! workload core's ([`crate::workload`]).
//!
//! A round does what upstream's `syncDaemonSet` does, in its order: `manage` creates and deletes;
//! if it wrote anything the round ends there (the shell's expectations wait for the cache).
//! Otherwise in-place updates in flight move on, and then, if none did, the rolling update runs.

pub mod affinity;
pub mod backoff;
pub mod daemon_pod;
pub mod events;
pub mod facts;
pub mod in_place;
pub mod listed;
pub mod manage;
pub mod node;
pub mod numbers;
pub mod placement;
pub mod rolling;
pub mod round;
pub mod status;
pub mod sync;
pub mod tolerations;
pub mod watch;

use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::ControllerRevision;

use crate::api::daemonset::{DaemonSet, DaemonSetStatus};
use crate::k8s::selector;
pub use crate::workload::PlanError;
use crate::workload::plan::update_and_current;
use crate::workload::{Action, Event, Workload, push_requeue};
pub use backoff::FailedPodBackoff;
pub use listed::DaemonPod;
pub use node::NodeSummary;
use rolling::Rollout;
use round::Round;

/// What one reconcile sees.
pub struct Snapshot<'a> {
    pub set: &'a DaemonSet,
    /// Every listed node, in any order.
    pub nodes: &'a [Arc<NodeSummary>],
    /// Pods whose controller is this DaemonSet, terminating ones included.
    pub pods: &'a [DaemonPod],
    /// The DaemonSet's revisions; holds `current`.
    pub history: &'a [ControllerRevision],
    /// The name of the current revision.
    pub current: &'a str,
    pub backoff: &'a FailedPodBackoff,
    /// The creations, deletions and writes of earlier rounds are all in the cache: only then does
    /// a round act (otherwise it writes the status only, without `observedGeneration`).
    pub settled: bool,
    pub now: Timestamp,
}

/// The result of one round: creations (slow start) and deletions, pod writes, events.
pub type Plan = crate::workload::Plan<DaemonSetStatus, PlanExtra>;

/// What only a DaemonSet round plans.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PlanExtra {
    /// Failed-pod backoff keys to advance once the round is sent.
    pub backoff: Vec<String>,
}

/// A round that writes nothing and keeps `status`.
fn nothing(status: DaemonSetStatus) -> Plan {
    Plan {
        actions: Vec::new(),
        status,
        write_status: false,
        revisions_to_delete: Vec::new(),
        error: None,
        requeue_after: None,
        needs_whole: Vec::new(),
        extra: PlanExtra::default(),
    }
}

/// One reconcile.
pub fn plan(snapshot: &Snapshot<'_>) -> Result<Plan, PlanError> {
    let set = snapshot.set;
    let previous = set.status.clone().unwrap_or_default();
    if set.metadata.deletion_timestamp.is_some() {
        return Ok(nothing(previous));
    }
    if set.spec.selector.as_ref().is_some_and(selector::is_empty) {
        let mut plan = nothing(previous);
        plan.actions.push(Action::Event(Event::warning(
            "SelectingAll",
            "This DaemonSet is selecting all pods. A non-empty selector is required.".into(),
        )));
        return Ok(plan);
    }
    let (current, _) = update_and_current(set, snapshot.history, snapshot.current)?;
    let hash = in_place::revision_hash(current);
    let nodes = snapshot.nodes.iter().map(|n| &**n);
    let round = Round::new(set, hash, nodes, snapshot.pods, snapshot.now);
    let mut actions = Vec::new();
    let mut requeue = None;
    let mut error = None;
    let mut backoff = Vec::new();
    let mut acted = !snapshot.settled;
    if !acted {
        let managed = manage::manage(&round, snapshot.backoff);
        push_requeue(&mut requeue, managed.requeue);
        backoff = managed.backoff;
        actions.extend(managed.events.into_iter().map(Action::Event));
        acted = sync::sync_nodes(&round, managed.delete, managed.create_on, &mut actions);
    }
    let mut revisions_to_delete = Vec::new();
    if !acted {
        let refreshed = in_place::refresh(&round, snapshot.history, &mut actions, &mut requeue);
        if !refreshed && !numbers::paused(set) && set.update_type() == "RollingUpdate" {
            match rolling::rolling_update(&round) {
                Ok(Rollout::Replace(chosen)) => {
                    let delete = if set.rolling_update_type()
                        == crate::api::daemonset::IN_PLACE_IF_POSSIBLE
                    {
                        in_place::start_updates(&round, snapshot.history, chosen, &mut actions)
                    } else {
                        chosen
                    };
                    sync::sync_nodes(&round, delete, Vec::new(), &mut actions);
                }
                Ok(Rollout::Surge { create_on, delete }) => {
                    sync::sync_nodes(&round, delete, create_on, &mut actions);
                }
                Err(message) => error = Some(message),
            }
        }
        // Revisions no pod wears, beyond revisionHistoryLimit (the history is in its order).
        let pod_hashes: Vec<&str> = snapshot
            .pods
            .iter()
            .filter_map(|p| {
                crate::workload::pod::label(&*p.summary, crate::api::keys::CONTROLLER_REVISION_HASH)
            })
            .collect();
        let limit = usize::try_from(set.revision_history_limit()).unwrap_or(0);
        revisions_to_delete = DaemonSet::REVISIONS
            .history_to_truncate(snapshot.history, &[hash], &pod_hashes, limit)
            .into_iter()
            .map(str::to_string)
            .collect();
    }
    let status = status::compute(&round, !acted && error.is_none());
    push_requeue(&mut requeue, status::requeue(&round, &status));
    Ok(Plan {
        actions,
        write_status: status::changed(set.status.as_ref(), set.metadata.generation, &status),
        status,
        revisions_to_delete,
        error,
        requeue_after: requeue,
        needs_whole: round.whole_pods.needed(),
        extra: PlanExtra { backoff },
    })
}

#[cfg(test)]
pub(crate) mod tests;
