//! Everything the steps of one round share: the listed nodes in name order with their placement,
//! the claimed pods grouped by the node they are meant for, and what each pod is.

use std::collections::BTreeMap;
use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Pod;

use super::daemon_pod::template_generation;
use super::facts::{DaemonPodFacts, oldest_first};
use super::listed::DaemonPod;
use super::node::NodeSummary;
use super::placement::{Fit, Placement};
use crate::api::daemonset::DaemonSet;
use crate::podmarks::PodView;
use crate::workload::listed::WholePods;
use crate::workload::rfc3339;

/// A listed node and where it stands for this DaemonSet.
#[derive(Debug, Clone, Copy)]
pub struct NodeFit<'a> {
    pub node: &'a NodeSummary,
    pub fit: Fit,
}

impl NodeFit<'_> {
    pub fn name(&self) -> &str {
        self.node.name()
    }
}

pub struct Round<'a> {
    pub set: &'a DaemonSet,
    /// The `controller-revision-hash` of the current revision.
    pub hash: &'a str,
    /// Listed nodes, by name.
    pub nodes: Vec<NodeFit<'a>>,
    /// Claimed pods meant for some node (listed or not).
    pub pods: Vec<&'a DaemonPod>,
    /// `facts[i]` is what `pods[i]` is this round.
    pub facts: Vec<DaemonPodFacts>,
    /// Node name → indexes into `pods`, terminating pods included.
    pub by_node: BTreeMap<&'a str, Vec<usize>>,
    pub min_ready_seconds: i32,
    /// `status.desiredNumberScheduled` as last written: partitions and bursts scale against it.
    pub previous_desired: i32,
    pub now: Timestamp,
    /// `now` as Kubernetes writes it.
    pub now_text: String,
    /// The pods the round was given whole; notes those asked for and not had.
    pub whole_pods: WholePods,
}

impl<'a> Round<'a> {
    pub fn new(
        set: &'a DaemonSet,
        hash: &'a str,
        nodes: impl IntoIterator<Item = &'a NodeSummary>,
        pods: &'a [DaemonPod],
        now: Timestamp,
    ) -> Round<'a> {
        let placement = Placement::of(set);
        let mut nodes: Vec<NodeFit<'a>> = nodes
            .into_iter()
            .map(|node| NodeFit {
                node,
                fit: placement.fit(node),
            })
            .collect();
        nodes.sort_unstable_by(|a, b| a.name().cmp(b.name()));
        let generation = template_generation(set);
        let pods: Vec<&DaemonPod> = pods.iter().filter(|p| p.node.is_some()).collect();
        let facts = pods
            .iter()
            .map(|p| DaemonPodFacts::of(&*p.summary, hash, generation))
            .collect();
        let mut by_node: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (index, p) in pods.iter().enumerate() {
            if let Some(node) = p.node.as_deref() {
                by_node.entry(node).or_default().push(index);
            }
        }
        let status = set.status.as_ref();
        Round {
            set,
            hash,
            nodes,
            pods,
            facts,
            by_node,
            min_ready_seconds: set.spec.min_ready_seconds.unwrap_or(0),
            previous_desired: status.map_or(0, |s| s.desired_number_scheduled),
            now,
            now_text: rfc3339(now),
            whole_pods: WholePods::default(),
        }
    }

    pub fn name(&self, pod: usize) -> &'a str {
        self.pods[pod].summary.name()
    }

    /// The pods meant for `node`, terminating ones included.
    pub fn on_node(&self, node: &str) -> &[usize] {
        self.by_node.get(node).map_or(&[], Vec::as_slice)
    }

    /// `pods` sorted oldest first ([`oldest_first`]).
    pub fn sort_oldest_first(&self, pods: &mut [usize]) {
        pods.sort_by(|a, b| {
            oldest_first(
                (&self.facts[*a], self.name(*a)),
                (&self.facts[*b], self.name(*b)),
            )
        });
    }

    /// The whole pod `pod`; `None`, and the pod noted as needed, when the round was given its
    /// summary only.
    pub fn whole(&self, pod: usize) -> Option<&'a Arc<Pod>> {
        self.whole_pods.get(&self.pods[pod].listed)
    }
}
