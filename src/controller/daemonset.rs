//! The Advanced DaemonSet controller: the I/O around [`crate::daemonset`], on the workload shell
//! ([`super::workload`]) with the DaemonSet's seam ([`DaemonSetSeam`]).
//!
//! Three watches feed it, each guarded (an object the types refuse is reported and skipped,
//! [`super::guarded_watch`]): the DaemonSets, the shared pod watch (a pod event wakes the
//! DaemonSet that controls it, or one that may adopt it; deleted pods included, since a pod
//! deleted behind the DaemonSet's back is replaced) and the Nodes. A Node event wakes only the
//! DaemonSets for which the node's placement changed ([`crate::daemonset::watch::concerned`]):
//! heartbeats and status churn change no [`NodeSummary`] and wake none.
//!
//! A round is every workload's: wait until the cache shows earlier writes (expectations), claim
//! the pods, read the ControllerRevisions and make sure the current one exists, plan over the
//! node summaries and the pods (reading whole the pods the plan acts on), send (creations in
//! slow start, deletions at once), advance the failed-pod backoff, then write the status and
//! delete old revisions.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::ResourceExt;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;

use super::guarded_watch::{self, UndecodableReporter};
use super::runtime::Term;
use super::workload::adoption::{orphan_adopters, workloads_to_sync};
use super::workload::{
    Executed, Listing, NoPvcs, Observed, Plan, Seam, SendPolicy, Shell, StatusWrite,
    controller_for, controlling, error_policy, observe, reconcile,
};
use crate::api::cloneset::Lifecycle;
use crate::api::daemonset::{DaemonSet, DaemonSetStatus};
use crate::daemonset::daemon_pod::{name_creations, target_node};
use crate::daemonset::events::DaemonSetWording;
use crate::daemonset::{self as planner, DaemonPod, FailedPodBackoff, NodeSummary, PlanExtra};
use crate::podmarks::PodView;
use crate::workload::events::Wording;
use crate::workload::{ListedPod, PlanError, pod};

pub use super::workload::Context;

/// The component this controller's events carry, as Kruise names it.
pub const COMPONENT: &str = "daemonset-controller";

/// The node summaries by name, with the resourceVersion each was made from: the node watch
/// compares a node's new summary with its old one, and a round reads them without summarizing
/// thousands of Nodes again.
#[derive(Default)]
pub struct NodeSummaries {
    by_name: Mutex<HashMap<String, (String, Arc<NodeSummary>)>>,
}

impl NodeSummaries {
    /// The summary of `node`, made now unless the one held is of this version; with the summary
    /// held before (`None`: first seen).
    pub fn update(&self, node: &Node) -> (Option<Arc<NodeSummary>>, Arc<NodeSummary>) {
        let name = node.name_any();
        let version = node.resource_version().unwrap_or_default();
        let mut held = self.by_name.lock().expect("node summaries lock");
        let old = held.get(&name).cloned();
        if let Some((v, summary)) = &old
            && *v == version
        {
            return (Some(summary.clone()), summary.clone());
        }
        let summary = Arc::new(NodeSummary::of(node));
        held.insert(name, (version, summary.clone()));
        (old.map(|(_, s)| s), summary)
    }

    /// The summaries of every node `nodes` holds (those the store dropped are forgotten).
    pub fn of_store(&self, nodes: &Store<Node>) -> Vec<Arc<NodeSummary>> {
        let listed = nodes.state();
        let out: Vec<Arc<NodeSummary>> = listed.iter().map(|n| self.update(n).1).collect();
        let mut held = self.by_name.lock().expect("node summaries lock");
        if held.len() > out.len() {
            held.retain(|name, _| out.iter().any(|s| s.name() == name));
        }
        out
    }
}

/// The DaemonSet on the workload shell: the nodes it places pods on, and its failed-pod backoff.
pub struct DaemonSetSeam {
    pub nodes: Store<Node>,
    pub summaries: NodeSummaries,
    /// Failed-pod backoff, per DaemonSet, generation and node.
    pub backoff: Mutex<FailedPodBackoff>,
}

impl DaemonSetSeam {
    pub fn new(nodes: Store<Node>) -> Self {
        DaemonSetSeam {
            nodes,
            summaries: NodeSummaries::default(),
            backoff: Mutex::new(FailedPodBackoff::default()),
        }
    }
}

impl Seam for DaemonSetSeam {
    type Set = DaemonSet;
    type Status = DaemonSetStatus;
    type Extra = PlanExtra;
    type Pvcs = NoPvcs;

    const COMPONENT: &'static str = COMPONENT;
    /// Upstream's `syncNodes`: creations in slow-start batches, then the deletions at once.
    const SEND: SendPolicy = SendPolicy {
        creations_first: true,
        stop_at_first_failure: false,
        parallel_deletes: true,
    };
    const WORDING: &'static dyn Wording = &DaemonSetWording;
    const PLAN_ERROR_REASON: Option<&'static str> = Some("FailedRollingUpdate");
    /// Upstream claims every pod of the namespace: orphans its selector selects are adopted.
    const LISTING: Listing = Listing::OwnedAndOrphans;

    fn pvcs(&self) -> &NoPvcs {
        &NoPvcs
    }

    fn ready(&self) -> bool {
        futures::FutureExt::now_or_never(self.nodes.wait_until_ready()).is_some()
    }

    /// A pod not yet bound names its node only in its affinity, which the summary does not keep.
    fn read_first(pods: &[ListedPod]) -> Vec<String> {
        pods.iter()
            .filter(|p| p.whole.is_none() && pod::node(&*p.summary).is_empty())
            .map(|p| p.name().to_string())
            .collect()
    }

    fn hooks(set: &DaemonSet) -> Option<&Lifecycle> {
        set.spec.lifecycle.as_ref()
    }

    fn plan(
        &self,
        set: &DaemonSet,
        observed: &Observed,
        pods: &[ListedPod],
    ) -> Result<Plan<Self>, PlanError> {
        let nodes = self.summaries.of_store(&self.nodes);
        tracing::trace!(nodes = nodes.len(), pods = pods.len(), "planning");
        let backoff = self.backoff.lock().expect("backoff lock").clone();
        let mut plan = planner::plan(&planner::Snapshot {
            set,
            nodes: &nodes,
            pods: &daemon_pods(pods),
            history: &observed.history,
            current: &observed.update_revision,
            backoff: &backoff,
            settled: true,
            now: observed.now,
        })?;
        name_creations(&mut plan.actions, &mut fastrand::Rng::new());
        Ok(plan)
    }

    /// The failed-pod backoff moves on once the round is sent.
    fn after_send(
        &self,
        _set: &DaemonSet,
        plan: &mut Plan<Self>,
        _executed: &Executed,
        now: Timestamp,
    ) -> bool {
        let mut backoff = self.backoff.lock().expect("backoff lock");
        for key in &plan.extra.backoff {
            backoff.advance(key, now);
        }
        backoff.collect_garbage(now);
        false
    }

    fn status_write(_set: &DaemonSet, status: &DaemonSetStatus) -> StatusWrite<DaemonSet> {
        StatusWrite::Merge(serde_json::to_value(status).unwrap_or_default())
    }

    fn unfinished(_set: &DaemonSet, status: &DaemonSetStatus) -> bool {
        status.updated_number_scheduled != status.desired_number_scheduled
            || status.number_available.unwrap_or(0) != status.desired_number_scheduled
    }
}

/// The DaemonSets a pod event concerns: its controller; for a pod nobody controls, every
/// DaemonSet of `sets` one of its ownerReferences names or whose selector selects it (it may
/// adopt the pod).
pub fn daemonsets_to_sync(pod: &Pod, sets: &Store<DaemonSet>) -> Vec<ObjectRef<DaemonSet>> {
    let mut concerned = workloads_to_sync::<DaemonSet>(pod);
    if controlling::<DaemonSet>(&pod.metadata).is_none() {
        for adopter in orphan_adopters(pod, &sets.state()) {
            if !concerned.contains(&adopter) {
                concerned.push(adopter);
            }
        }
    }
    concerned
}

/// Runs until the term ends; `pod_events` is a subscription to the watch behind `context.pods`,
/// deleted pods included.
pub async fn run(
    context: Arc<Context>,
    pod_events: impl futures::Stream<Item = Arc<Pod>> + Send + 'static,
    term: &Term,
) {
    let node_reporter =
        UndecodableReporter::new::<Node>(context.metrics.clone(), context.recorder.clone());
    // The cache keeps of each Node what placement reads: a kubelet's Node is kilobytes of status.
    let (nodes, node_stream) = guarded_watch::watch_pruned::<Node>(
        context.client.clone(),
        watcher::Config::default().any_semantic(),
        node_reporter,
        planner::node::prune,
    );
    let controller = controller_for::<DaemonSet>(&context);
    let sets = controller.store();
    let sets_for_pods = sets.clone();
    let pod_observer = context.clone();
    let shell = Arc::new(Shell {
        context,
        seam: DaemonSetSeam::new(nodes),
    });
    let node_shell = shell.clone();
    let controller = controller
        .watches_shared_stream(pod_events, move |pod| {
            observe::pod_event::<DaemonSet>(&pod_observer, &pod);
            daemonsets_to_sync(&pod, &sets_for_pods)
        })
        .watches_stream(node_stream, move |node| {
            let (old, new) = node_shell.seam.summaries.update(&node);
            let sets = sets.state();
            planner::watch::concerned(sets.iter().map(|s| &**s), old.as_deref(), &new)
                .into_iter()
                .map(ObjectRef::from_obj)
                .collect::<Vec<_>>()
        });
    term.run(
        COMPONENT,
        controller,
        reconcile::<DaemonSetSeam>,
        error_policy::<DaemonSetSeam>,
        shell,
    )
    .await;
}

/// The pods as the planner takes them: each with the node it is meant for (a pod the round
/// holds whole names it in its affinity until bound).
fn daemon_pods(pods: &[ListedPod]) -> Vec<DaemonPod> {
    pods.iter()
        .map(|listed| {
            let node = match &listed.whole {
                Some(whole) => target_node(whole).map(Into::into),
                None => Some(pod::node(&*listed.summary).into()),
            };
            DaemonPod {
                listed: listed.clone(),
                node,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
