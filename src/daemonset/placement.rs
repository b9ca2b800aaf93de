//! Which nodes get a daemon pod (upstream `nodeShouldRunDaemonPod`): the template's node name,
//! its required node affinity and `nodeSelector`, and the node's `NoSchedule`/`NoExecute` taints
//! against the template's tolerations plus the default ones. Node conditions,
//! `spec.unschedulable`, resources and ports are not consulted.

use k8s_openapi::api::core::v1::{PodSpec, Toleration};

use super::affinity::RequiredNodeAffinity;
use super::node::{NodeSummary, TaintEffect};
use super::tolerations::{add_default_tolerations, has_untolerated_taint};
use crate::api::daemonset::DaemonSet;
use crate::k8s::selector;

/// The two answers for one node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Fit {
    /// A pod should be created on the node when it has none.
    pub should_run: bool,
    /// A pod already there may stay.
    pub should_continue_running: bool,
}

impl Fit {
    const NO: Fit = Fit {
        should_run: false,
        should_continue_running: false,
    };
}

/// What placement reads of a DaemonSet's template, prepared once per round.
#[derive(Debug, Clone, PartialEq)]
pub struct Placement {
    node_name: String,
    affinity: RequiredNodeAffinity,
    tolerations: Vec<Toleration>,
}

impl Placement {
    pub fn of(set: &DaemonSet) -> Placement {
        Placement::of_spec(
            set.spec
                .template
                .spec
                .as_ref()
                .unwrap_or(&PodSpec::default()),
        )
    }

    /// For the pod spec of a template: its tolerations as the daemon pod will carry them.
    pub fn of_spec(spec: &PodSpec) -> Placement {
        let mut with_defaults = PodSpec {
            tolerations: spec.tolerations.clone(),
            host_network: spec.host_network,
            ..Default::default()
        };
        add_default_tolerations(&mut with_defaults);
        Placement {
            node_name: spec.node_name.clone().unwrap_or_default(),
            affinity: RequiredNodeAffinity::of(spec),
            tolerations: with_defaults.tolerations.unwrap_or_default(),
        }
    }

    pub fn fit(&self, node: &NodeSummary) -> Fit {
        if !self.node_name.is_empty() && self.node_name != node.name() {
            return Fit::NO;
        }
        if !self.affinity.matches(node) {
            return Fit::NO;
        }
        let any_effect = |_: TaintEffect| true;
        if !has_untolerated_taint(&node.taints, &self.tolerations, any_effect) {
            return Fit {
                should_run: true,
                should_continue_running: true,
            };
        }
        // A pod already running stays unless a NoExecute taint evicts it.
        let no_execute = |effect: TaintEffect| effect == TaintEffect::NoExecute;
        Fit {
            should_run: false,
            should_continue_running: !has_untolerated_taint(
                &node.taints,
                &self.tolerations,
                no_execute,
            ),
        }
    }
}

/// Upstream `NodeShouldUpdateBySelector`: a RollingUpdate with a non-empty, valid
/// `rollingUpdate.selector` that the node's labels match.
pub fn selected_for_update(set: &DaemonSet, node: &NodeSummary) -> bool {
    if set.update_type() != "RollingUpdate" {
        return false;
    }
    let Some(chosen) = set
        .spec
        .update_strategy
        .rolling_update
        .as_ref()
        .and_then(|r| r.selector.as_ref())
    else {
        return false;
    };
    !selector::is_empty(chosen)
        && selector::matches(chosen, Some(&node.labels), "rollingUpdate.selector").unwrap_or(false)
}

#[cfg(test)]
mod tests;
