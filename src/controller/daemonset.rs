//! The Advanced DaemonSet controller: the I/O around [`crate::daemonset`], on the workload shell
//! ([`super::workload`]).
//!
//! Three watches feed it, each guarded (an object the types refuse is reported and skipped,
//! [`super::guarded_watch`]): the DaemonSets, the shared pod watch (a pod event wakes the
//! DaemonSet that controls it, or one that may adopt it; deleted pods included, since a pod
//! deleted behind the DaemonSet's back is replaced) and the Nodes. A Node event wakes only the
//! DaemonSets for which the node's placement changed ([`crate::daemonset::watch::concerned`]):
//! heartbeats and status churn change no [`NodeSummary`] and wake none.
//!
//! A round is the CloneSet's: wait until the cache shows earlier writes (expectations), claim the
//! pods, read the ControllerRevisions and make sure the current one exists, plan over the node
//! summaries and the pods ([`Round::plan_whole`]: reading whole the pods the plan acts on), send,
//! then write the status, delete old revisions and advance the failed-pod backoff.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::FutureExt;
use k8s_openapi::api::core::v1::{Node, PersistentVolumeClaim, Pod};
use kube::ResourceExt;
use kube::runtime::controller::{Action as Requeue, Controller};
use kube::runtime::events::EventType;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;

use super::guarded_watch::{self, UndecodableReporter};
use super::runtime::Term;
use super::workload::adoption::workloads_to_sync;
use super::workload::{Outcome, PvcMeta, PvcWrites, Round, Shell, WorkloadError, observe, requeue};
use crate::api::daemonset::DaemonSet;
use crate::daemonset::daemon_pod::target_node;
use crate::daemonset::{self as planner, DaemonPod, FailedPodBackoff, NodeSummary, Plan};
use crate::podmarks::PodView;
use crate::workload::{Action, ListedPod, pod};

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

/// What a DaemonSet round reads beside the workload shell.
pub struct DaemonShell {
    pub shell: Shell,
    pub nodes: Store<Node>,
    pub summaries: NodeSummaries,
    /// Failed-pod backoff, per DaemonSet, generation and node.
    pub backoff: Mutex<FailedPodBackoff>,
}

impl DaemonShell {
    pub fn new(context: Arc<Context>, nodes: Store<Node>) -> Self {
        DaemonShell {
            shell: Shell {
                context,
                pvcs: ready_empty_store(),
            },
            nodes,
            summaries: NodeSummaries::default(),
            backoff: Mutex::new(FailedPodBackoff::default()),
        }
    }
}

/// DaemonSets have no PVCs: the shell's PVC cache is empty and ready.
fn ready_empty_store() -> Store<PvcMeta> {
    let (store, mut writer) = kube::runtime::reflector::store::<PvcMeta>();
    writer.apply_watcher_event(&watcher::Event::Init);
    writer.apply_watcher_event(&watcher::Event::InitDone);
    store
}

/// The DaemonSets a pod event concerns: its controller; for a pod nobody controls, every
/// DaemonSet one of its ownerReferences names (it may adopt the pod).
pub fn daemonsets_to_sync(pod: &Pod) -> Vec<ObjectRef<DaemonSet>> {
    workloads_to_sync::<DaemonSet>(pod)
}

/// Runs until the term ends; `pod_events` is a subscription to the watch behind `context.pods`,
/// deleted pods included.
pub async fn run(
    context: Arc<Context>,
    pod_events: impl futures::Stream<Item = Arc<Pod>> + Send + 'static,
    term: &Term,
) {
    let client = context.client.clone();
    let reporter =
        UndecodableReporter::new::<DaemonSet>(context.metrics.clone(), context.recorder.clone());
    let (sets, set_stream) = guarded_watch::watch::<DaemonSet>(
        client.clone(),
        watcher::Config::default().any_semantic(),
        reporter,
    );
    let node_reporter =
        UndecodableReporter::new::<Node>(context.metrics.clone(), context.recorder.clone());
    // The cache keeps of each Node what placement reads: a kubelet's Node is kilobytes of status.
    let (nodes, node_stream) = guarded_watch::watch_pruned::<Node>(
        client,
        watcher::Config::default().any_semantic(),
        node_reporter,
        planner::node::prune,
    );
    let shell = Arc::new(DaemonShell::new(context.clone(), nodes));
    let (node_shell, sets_for_nodes) = (shell.clone(), sets.clone());
    let pod_observer = context.clone();
    let controller = Controller::for_stream(set_stream, sets)
        .watches_shared_stream(pod_events, move |pod| {
            observe::pod_event::<DaemonSet>(&pod_observer, &pod);
            daemonsets_to_sync(&pod)
        })
        .watches_stream(node_stream, move |node| {
            let (old, new) = node_shell.summaries.update(&node);
            let sets = sets_for_nodes.state();
            planner::watch::concerned(sets.iter().map(|s| &**s), old.as_deref(), &new)
                .into_iter()
                .map(ObjectRef::from_obj)
                .collect::<Vec<_>>()
        });
    term.run(COMPONENT, controller, reconcile, error_policy, shell)
        .await;
}

fn error_policy(set: Arc<DaemonSet>, error: &WorkloadError, _shell: Arc<DaemonShell>) -> Requeue {
    tracing::warn!(daemonset = set.name_any(), %error, "reconcile failed");
    Requeue::requeue(Duration::from_secs(5))
}

/// Reads whole the pods not yet bound: such a pod names its node only in its affinity, which the
/// summary does not keep.
async fn read_unbound(
    round: &Round<'_, DaemonSet>,
    pods: &mut Vec<ListedPod>,
) -> Result<(), WorkloadError> {
    let unbound: Vec<String> = pods
        .iter()
        .filter(|p| p.whole.is_none() && pod::node(&*p.summary).is_empty())
        .map(|p| p.name().to_string())
        .collect();
    if !unbound.is_empty() {
        round.read_whole(&unbound, pods, |_| true).await?;
    }
    Ok(())
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

/// One round: observe → plan → send → settle.
async fn reconcile(set: Arc<DaemonSet>, shell: Arc<DaemonShell>) -> Result<Requeue, WorkloadError> {
    let round = Round::new(&shell.shell.context, &*set);
    if shell.nodes.wait_until_ready().now_or_never().is_none() {
        return Ok(requeue(Outcome::CachesNotReady));
    }
    let mut observed = match round.observe(&shell.shell).await? {
        Ok(observed) => observed,
        Err(outcome) => return Ok(requeue(outcome)),
    };
    let nodes = shell.summaries.of_store(&shell.nodes);
    tracing::trace!(
        daemonset = %round.key,
        nodes = nodes.len(),
        pods = observed.pods.len(),
        "planning"
    );
    let (history, current, now) = (
        &observed.history,
        observed.update_revision.as_str(),
        observed.now,
    );
    let backoff = shell.backoff.lock().expect("backoff lock").clone();
    read_unbound(&round, &mut observed.pods).await?;
    let planned = round
        .plan_whole(
            &mut observed.pods,
            |pods| {
                Ok(planner::plan(&planner::Snapshot {
                    set: &set,
                    nodes: &nodes,
                    pods: &daemon_pods(pods),
                    history,
                    current,
                    backoff: &backoff,
                    settled: true,
                    now,
                })?)
            },
            |plan: &Plan| &plan.needs_whole,
        )
        .await?;
    let mut plan = match planned {
        Ok(plan) => plan,
        Err(outcome) => return Ok(requeue(outcome)),
    };
    name_creations(&mut plan.actions, &mut fastrand::Rng::new());
    let executed = round.send(&plan.actions, no_pvcs()).await?;
    {
        let mut backoff = shell.backoff.lock().expect("backoff lock");
        for key in &plan.extra.backoff {
            backoff.advance(key, now);
        }
        backoff.collect_garbage(now);
    }
    Ok(requeue(settle(&round, &plan, executed.conflicted).await?))
}

/// The characters Kubernetes' `generateName` suffixes are made of.
const NAME_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// Gives each pod to create a name as `generateName` would (`<set>-<5 characters>`): the shell's
/// expectations wait for the created pods by name.
fn name_creations(actions: &mut [Action], rng: &mut fastrand::Rng) {
    for action in actions {
        if let Action::CreatePod { pod, .. } = action
            && pod.metadata.name.is_none()
        {
            let prefix = pod.metadata.generate_name.clone().unwrap_or_default();
            let suffix: String = (0..5)
                .map(|_| char::from(NAME_ALPHABET[rng.usize(..NAME_ALPHABET.len())]))
                .collect();
            pod.metadata.name = Some(format!("{prefix}{suffix}"));
        }
    }
}

fn no_pvcs() -> PvcWrites<'static> {
    static NONE_CREATED: BTreeMap<String, Vec<PersistentVolumeClaim>> = BTreeMap::new();
    static NONE_DELETED: BTreeMap<String, Vec<String>> = BTreeMap::new();
    PvcWrites {
        create: &NONE_CREATED,
        delete_with_pod: &NONE_DELETED,
    }
}

/// The writes after the pods: status, old revisions, the round's failure; then how it ended.
async fn settle(
    round: &Round<'_, DaemonSet>,
    plan: &Plan,
    conflicted: bool,
) -> Result<Outcome, WorkloadError> {
    if plan.write_status {
        round.write_status(&plan.status).await?;
    }
    round.delete_revisions(&plan.revisions_to_delete).await?;
    if let Some(message) = &plan.error {
        round
            .publish_note(EventType::Warning, "FailedRollingUpdate", message.clone())
            .await;
        return Ok(Outcome::Failed);
    }
    if conflicted {
        return Ok(Outcome::Conflict);
    }
    let status = &plan.status;
    let unfinished = !plan.actions.is_empty()
        || status.updated_number_scheduled != status.desired_number_scheduled
        || status.number_available.unwrap_or(0) != status.desired_number_scheduled;
    Ok(Outcome::Done {
        requeue_after: plan.requeue_after,
        unfinished,
    })
}

#[cfg(test)]
#[path = "daemonset_shell_tests.rs"]
mod shell_tests;
