//! What the Advanced DaemonSet planner reads of a Node: its name, labels and the taints that
//! decide placement. A Node object carries kilobytes of status (images, addresses, capacity,
//! conditions with their heartbeats) that no placement rule reads; the controller keeps one small
//! summary per node instead, and a node update whose summary is unchanged moves nothing (this is
//! upstream's filter of heartbeat-only updates, and more: a changed image list or allocatable
//! cannot change placement either).

use k8s_openapi::api::core::v1::{Node, NodeSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::k8s::selector::Labels;

/// The taint effects placement weighs (`PreferNoSchedule` never keeps a daemon pod away).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TaintEffect {
    NoSchedule,
    NoExecute,
}

impl TaintEffect {
    pub fn parse(effect: &str) -> Option<TaintEffect> {
        match effect {
            "NoSchedule" => Some(TaintEffect::NoSchedule),
            "NoExecute" => Some(TaintEffect::NoExecute),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            TaintEffect::NoSchedule => "NoSchedule",
            TaintEffect::NoExecute => "NoExecute",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NodeTaint {
    pub key: Box<str>,
    /// "" when the taint has none.
    pub value: Box<str>,
    pub effect: TaintEffect,
}

/// One node as placement sees it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NodeSummary {
    pub name: Box<str>,
    pub labels: Labels,
    /// `NoSchedule` and `NoExecute` taints, in the node's order.
    pub taints: Box<[NodeTaint]>,
}

impl NodeSummary {
    pub fn of(node: &Node) -> NodeSummary {
        let taints = node
            .spec
            .as_ref()
            .and_then(|spec| spec.taints.as_deref())
            .unwrap_or(&[])
            .iter()
            .filter_map(|taint| {
                Some(NodeTaint {
                    key: taint.key.as_str().into(),
                    value: taint.value.as_deref().unwrap_or("").into(),
                    effect: TaintEffect::parse(&taint.effect)?,
                })
            })
            .collect();
        NodeSummary {
            name: node.metadata.name.as_deref().unwrap_or("").into(),
            labels: node.metadata.labels.clone().unwrap_or_default(),
            taints,
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }
}

/// Drops from `node` everything [`NodeSummary::of`] does not read, keeping its identity and
/// version: what the controller's Node cache holds. A kubelet's Node is mostly status (images,
/// conditions, addresses, capacity) and managed fields, kilobytes per node that placement never
/// reads.
pub fn prune(node: &mut Node) {
    let metadata = std::mem::take(&mut node.metadata);
    node.metadata = ObjectMeta {
        name: metadata.name,
        uid: metadata.uid,
        resource_version: metadata.resource_version,
        labels: metadata.labels,
        ..Default::default()
    };
    node.spec = node.spec.take().map(|spec| NodeSpec {
        taints: spec.taints,
        ..Default::default()
    });
    node.status = None;
}

#[cfg(test)]
mod tests;
