//! One pod as a workload planner gets it: the compact summary every round reads of every pod,
//! and the whole pod only where the round reads more.
//!
//! A k8s-openapi `Pod` is kilobytes of sparsely filled structs, so the cache keeps a workload's
//! pod whole only while every round reads it whole ([`read_whole_every_round`]: an update in
//! flight, a lifecycle state to move on). A round that acts on another pod (starts its update,
//! marks it for re-creation, moves it to `PreparingDelete`) names it in its plan's `needs_whole`
//! ([`WholePods::needed`]); the shell reads those pods and plans again.

use std::cell::RefCell;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;

use super::WorkloadKind;
use super::engine::engine_at_rest;
use super::lifecycle::{self, LifecycleState};
use super::pod;
use super::revision::RevisionScheme;
use crate::podmarks::view::forward_pod_view;
use crate::podmarks::{EngineOwner, PodSummary};

#[derive(Debug, Clone, PartialEq)]
pub struct ListedPod {
    /// What every round reads, with the workload engine's verdict ([`summarize`]).
    pub summary: Arc<PodSummary>,
    /// The pod itself, at the summary's `resourceVersion`, when the caller holds it.
    pub whole: Option<Arc<Pod>>,
}

forward_pod_view!([] ListedPod, self => self.summary);

impl ListedPod {
    /// A pod the caller holds whole.
    pub fn whole(pod: Arc<Pod>) -> Self {
        ListedPod {
            summary: Arc::new(summarize(&pod)),
            whole: Some(pod),
        }
    }

    /// A pod the caller holds as its summary only.
    pub fn summary(summary: Arc<PodSummary>) -> Self {
        ListedPod {
            summary,
            whole: None,
        }
    }
}

/// The summary of `pod` a workload planner reads: with whether the in-place engine, under the
/// workloads' options, is at rest on it ([`engine_at_rest`]).
pub fn summarize(pod: &Pod) -> PodSummary {
    PodSummary::of(pod).with_engine_at_rest(EngineOwner::Workload, engine_at_rest(pod))
}

/// Whether every round that sees the pod reads it whole: the in-place engine is not at rest on
/// it, or its lifecycle state or labels may move on by themselves (the refresh step), or it
/// waits in `PreparingDelete` (scale). `summary` is one [`summarize`] made; `scheme` is the
/// owner's (a missing `pod-template-hash` is added only where the scheme writes one).
pub fn read_whole_every_round(summary: &PodSummary, scheme: RevisionScheme) -> bool {
    let lifecycle = LifecycleState::of(lifecycle::state(summary));
    !summary.engine_at_rest(EngineOwner::Workload)
        || (scheme.template_hash && pod::missing_template_hash(summary))
        || lifecycle.moves_on_by_itself()
        || lifecycle == LifecycleState::PreparingDelete
}

/// Whether some workload kind that may own `pod` (one named among its ownerReferences) reads it
/// whole every round: what the pod cache asks to decide whether to hold the pod.
pub fn workload_reads_whole(pod: &Pod, summary: &PodSummary) -> bool {
    WorkloadKind::owning(pod.metadata.owner_references.iter().flatten())
        .is_some_and(|kind| read_whole_every_round(summary, kind.revisions()))
}

/// The round's access to whole pods: a pod given as its summary only is noted as needed, so
/// that the planner can name every such pod at once in its plan.
#[derive(Debug, Default)]
pub struct WholePods {
    needed: RefCell<Vec<String>>,
}

impl WholePods {
    /// The whole pod behind `p`; `None`, and the pod noted as needed, when the round was given
    /// its summary only.
    pub fn get<'p>(&self, p: &'p ListedPod) -> Option<&'p Arc<Pod>> {
        if p.whole.is_none() {
            self.needed.borrow_mut().push(pod::name(p).to_string());
        }
        p.whole.as_ref()
    }

    /// The pods asked for and not had, by name, sorted, once each.
    pub fn needed(self) -> Vec<String> {
        let mut needed = self.needed.into_inner();
        needed.sort();
        needed.dedup();
        needed
    }
}
