//! What the Advanced DaemonSet planner reads of a Node: its name, labels and the taints that
//! decide placement. A Node object carries kilobytes of status (images, addresses, capacity) that
//! no placement rule reads; the controller keeps one small summary per node instead.

use k8s_openapi::api::core::v1::{Node, NodeCondition};

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

/// Upstream's `shouldIgnoreNodeUpdate`: the update changed nothing but the resourceVersion and
/// the conditions' details, while the set of condition types that are True stayed the same (the
/// kubelet's heartbeats).
pub fn only_heartbeat_changed(old: &Node, new: &Node) -> bool {
    // Go's status is a value: an absent one is an empty one.
    let normalised = |n: &Node| {
        let mut n = n.clone();
        n.status.get_or_insert_with(Default::default);
        n
    };
    let (mut old, new) = (normalised(old), normalised(new));
    let conditions = |n: &Node| n.status.as_ref().and_then(|s| s.conditions.clone());
    let (old_conditions, new_conditions) = (conditions(&old), conditions(&new));
    if !same_true_conditions(
        old_conditions.as_deref().unwrap_or(&[]),
        new_conditions.as_deref().unwrap_or(&[]),
    ) {
        return false;
    }
    old.metadata.resource_version = new.metadata.resource_version.clone();
    if let Some(status) = old.status.as_mut() {
        status.conditions = new_conditions;
    }
    old == new
}

/// Upstream's `nodeInSameCondition`: every condition type True in `new` is True in `old`, once,
/// and none True in `old` is left over.
fn same_true_conditions(old: &[NodeCondition], new: &[NodeCondition]) -> bool {
    let mut old_true: std::collections::BTreeSet<&str> = old
        .iter()
        .filter(|c| c.status == "True")
        .map(|c| c.type_.as_str())
        .collect();
    for condition in new.iter().filter(|c| c.status == "True") {
        if !old_true.remove(condition.type_.as_str()) {
            return false;
        }
    }
    old_true.is_empty()
}

#[cfg(test)]
mod tests;
