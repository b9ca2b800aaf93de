//! One pod as the CloneSet planner gets it: the compact summary every round reads of every pod,
//! and the whole pod only where the round reads more.
//!
//! A k8s-openapi `Pod` is kilobytes of sparsely filled structs, so the cache keeps a CloneSet's
//! pod whole only while every round reads it whole ([`read_whole_every_round`]: an update in
//! flight, a lifecycle state to move on). A round that acts on another pod (starts its update,
//! marks it for re-creation, moves it to `PreparingDelete`) names it in
//! [`Plan::needs_whole`](super::Plan::needs_whole); the shell reads those pods and plans again.

use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;

use super::facts::Lifecycle;
use super::pod;
use super::update;
use crate::api::keys;
use crate::podmarks::view::forward_pod_view;
use crate::podmarks::{EngineOwner, PodSummary, PodView};

#[derive(Debug, Clone, PartialEq)]
pub struct ListedPod {
    /// What every round reads, with the CloneSet engine's verdict ([`summarize`]).
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

/// The summary of `pod` the CloneSet planner reads: with whether the in-place engine, under the
/// CloneSet's options, is at rest on it ([`update::engine_at_rest`]).
pub fn summarize(pod: &Pod) -> PodSummary {
    PodSummary::of(pod).with_engine_at_rest(EngineOwner::CloneSet, update::engine_at_rest(pod))
}

/// Whether every round that sees the pod reads it whole: the in-place engine is not at rest on
/// it, or its lifecycle state or labels may move on by themselves (`update::refresh`), or it
/// waits in `PreparingDelete` (`scale`). `summary` is one [`summarize`] made.
pub fn read_whole_every_round(summary: &PodSummary) -> bool {
    let lifecycle = Lifecycle::of(pod::lifecycle(summary));
    !summary.engine_at_rest(EngineOwner::CloneSet)
        || missing_template_hash(summary)
        || lifecycle.moves_on_by_itself()
        || lifecycle == Lifecycle::PreparingDelete
}

/// `controller-revision-hash` without `pod-template-hash` (the refresh adds it).
pub fn missing_template_hash(p: &impl PodView) -> bool {
    pod::label(p, pod::POD_TEMPLATE_HASH).is_none()
        && pod::label(p, keys::CONTROLLER_REVISION_HASH).is_some()
}
