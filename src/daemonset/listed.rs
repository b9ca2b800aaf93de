//! One claimed pod as the planner gets it: the compact summary every round reads, the node it is
//! meant for, and the whole pod where the round writes it.

use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;

use super::daemon_pod::target_node;
use crate::cloneset::listed::summarize;
use crate::podmarks::PodSummary;

#[derive(Debug, Clone, PartialEq)]
pub struct DaemonPod {
    pub summary: Arc<PodSummary>,
    /// The pod itself, at the summary's `resourceVersion`, when the caller holds it.
    pub whole: Option<Arc<Pod>>,
    /// [`target_node`]: `None` for a pod meant for no node (ignored, as upstream does).
    pub node: Option<Box<str>>,
}

impl DaemonPod {
    /// A pod the caller holds whole (its summary with the in-place engine's verdict).
    pub fn whole(pod: Arc<Pod>) -> DaemonPod {
        DaemonPod {
            summary: Arc::new(summarize(&pod)),
            node: target_node(&pod).map(Into::into),
            whole: Some(pod),
        }
    }

    /// A pod the caller holds as its summary only, with the node [`target_node`] found.
    pub fn summary(summary: Arc<PodSummary>, node: Option<Box<str>>) -> DaemonPod {
        DaemonPod {
            summary,
            whole: None,
            node,
        }
    }
}
