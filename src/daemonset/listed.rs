//! One claimed pod as the planner gets it: the core's [`ListedPod`] (the compact summary every
//! round reads, the whole pod where the round writes it) and the node it is meant for.

use std::ops::Deref;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;

use super::daemon_pod::target_node;
use crate::podmarks::PodSummary;
use crate::workload::ListedPod;

#[derive(Debug, Clone, PartialEq)]
pub struct DaemonPod {
    pub listed: ListedPod,
    /// [`target_node`]: `None` for a pod meant for no node (ignored, as upstream does).
    pub node: Option<Box<str>>,
}

impl Deref for DaemonPod {
    type Target = ListedPod;

    fn deref(&self) -> &ListedPod {
        &self.listed
    }
}

impl DaemonPod {
    /// A pod the caller holds whole.
    pub fn whole(pod: Arc<Pod>) -> DaemonPod {
        DaemonPod {
            node: target_node(&pod).map(Into::into),
            listed: ListedPod::whole(pod),
        }
    }

    /// A pod the caller holds as its summary only, with the node [`target_node`] found.
    pub fn summary(summary: Arc<PodSummary>, node: Option<Box<str>>) -> DaemonPod {
        DaemonPod {
            listed: ListedPod::summary(summary),
            node,
        }
    }
}
