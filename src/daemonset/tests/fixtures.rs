//! Test builders for the planner: the release note's DaemonSet, nodes, and daemon pods in the
//! states the steps tell apart.

use std::collections::BTreeMap;
use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{
    Container, Pod, PodCondition, PodReadinessGate, PodSpec, PodStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::json;

use super::daemon_pod::{new_pod, pod_template};
use super::listed::DaemonPod;
use super::node::{NodeSummary, NodeTaint, TaintEffect};
use crate::api::daemonset::{DaemonSet, DaemonSetStatus, RollingUpdateDaemonSet};
use crate::api::keys;
use crate::workload::lifecycle::LIFECYCLE_STATE;

pub fn at(second: i64) -> Timestamp {
    Timestamp::from_second(1_700_000_000 + second).unwrap()
}

/// The release note's DaemonSet `agent` in namespace `sys` (without its node selector and hook,
/// which tests add): Standard rolling update, maxUnavailable 1.
pub fn agent() -> DaemonSet {
    let mut set: DaemonSet = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": "sys", "uid": "ds-uid", "generation": 1},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {
                "metadata": {"labels": {"app": "agent"}},
                "spec": {"containers": [{"name": "main", "image": "agent:v1"}]}
            },
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {
                "rollingUpdateType": "Standard", "maxUnavailable": 1, "maxSurge": 0
            }},
            "burstReplicas": 250,
            "revisionHistoryLimit": 10
        }
    }))
    .unwrap();
    set.status = Some(DaemonSetStatus::default());
    set
}

pub fn rolling(set: &mut DaemonSet) -> &mut RollingUpdateDaemonSet {
    set.spec
        .update_strategy
        .rolling_update
        .get_or_insert_with(Default::default)
}

pub fn int(n: i32) -> Option<IntOrString> {
    Some(IntOrString::Int(n))
}

pub fn percent(text: &str) -> Option<IntOrString> {
    Some(IntOrString::String(text.to_string()))
}

pub fn with_previous_desired(set: &mut DaemonSet, desired: i32) {
    set.status
        .get_or_insert_with(Default::default)
        .desired_number_scheduled = desired;
}

pub fn node(name: &str) -> NodeSummary {
    NodeSummary {
        name: name.into(),
        ..Default::default()
    }
}

pub fn labelled(name: &str, labels: &[(&str, &str)]) -> NodeSummary {
    NodeSummary {
        name: name.into(),
        labels: labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        taints: Box::new([]),
    }
}

pub fn tainted(name: &str, key: &str, effect: TaintEffect) -> NodeSummary {
    NodeSummary {
        name: name.into(),
        labels: BTreeMap::new(),
        taints: Box::new([NodeTaint {
            key: key.into(),
            value: "".into(),
            effect,
        }]),
    }
}

/// A daemon pod as the controller would have created it, then bound and run.
#[derive(Clone)]
pub struct PodBuilder {
    pod: Pod,
}

pub fn pod(name: &str, node: &str, hash: &str) -> PodBuilder {
    let set = agent();
    let mut pod = new_pod(&set, &pod_template(&set, hash), node);
    pod.metadata.name = Some(name.to_string());
    pod.metadata.uid = Some(format!("uid-{name}"));
    pod.metadata.resource_version = Some("1".into());
    pod.metadata.creation_timestamp = Some(Time(at(0)));
    let spec = pod.spec.get_or_insert_with(PodSpec::default);
    spec.node_name = Some(node.to_string());
    if spec.containers.is_empty() {
        spec.containers.push(Container::default());
    }
    PodBuilder { pod }.ready_since(0)
}

impl PodBuilder {
    pub fn created(mut self, second: i64) -> Self {
        self.pod.metadata.creation_timestamp = Some(Time(at(second)));
        self
    }

    fn status(&mut self) -> &mut PodStatus {
        self.pod.status.get_or_insert_with(Default::default)
    }

    pub fn phase(mut self, phase: &str) -> Self {
        self.status().phase = Some(phase.into());
        self
    }

    /// Running, Ready since `second`.
    pub fn ready_since(mut self, second: i64) -> Self {
        let status = self.status();
        status.phase = Some("Running".into());
        let conditions = status.conditions.get_or_insert_with(Vec::new);
        conditions.retain(|c| c.type_ != keys::CONDITION_READY);
        conditions.push(PodCondition {
            type_: keys::CONDITION_READY.into(),
            status: "True".into(),
            last_transition_time: Some(Time(at(second))),
            ..Default::default()
        });
        self
    }

    pub fn not_ready(mut self) -> Self {
        let conditions = self.status().conditions.get_or_insert_with(Vec::new);
        for c in conditions
            .iter_mut()
            .filter(|c| c.type_ == keys::CONDITION_READY)
        {
            c.status = "False".into();
        }
        self
    }

    pub fn pending(mut self) -> Self {
        self.pod.status = Some(PodStatus {
            phase: Some("Pending".into()),
            ..Default::default()
        });
        self
    }

    /// Not bound yet: only the node-name affinity says where it goes.
    pub fn unscheduled(mut self) -> Self {
        self.pod.spec.as_mut().unwrap().node_name = None;
        self.pending()
    }

    pub fn deleting(mut self) -> Self {
        self.pod.metadata.deletion_timestamp = Some(Time(at(1)));
        self
    }

    pub fn lifecycle(mut self, state: &str) -> Self {
        self.pod
            .metadata
            .labels
            .get_or_insert_with(BTreeMap::new)
            .insert(LIFECYCLE_STATE.into(), state.into());
        self
    }

    pub fn label(mut self, key: &str, value: &str) -> Self {
        self.pod
            .metadata
            .labels
            .get_or_insert_with(BTreeMap::new)
            .insert(key.into(), value.into());
        self
    }

    pub fn finalizer(mut self, finalizer: &str) -> Self {
        self.pod
            .metadata
            .finalizers
            .get_or_insert_with(Vec::new)
            .push(finalizer.into());
        self
    }

    /// The `InPlaceUpdateReady` gate, with its condition at `status` (`None`: no condition).
    pub fn gate(mut self, status: Option<&str>) -> Self {
        self.pod
            .spec
            .as_mut()
            .unwrap()
            .readiness_gates
            .get_or_insert_with(Vec::new)
            .push(PodReadinessGate {
                condition_type: keys::INPLACE_UPDATE_READY.into(),
            });
        if let Some(status) = status {
            self.status()
                .conditions
                .get_or_insert_with(Vec::new)
                .push(PodCondition {
                    type_: keys::INPLACE_UPDATE_READY.into(),
                    status: status.into(),
                    ..Default::default()
                });
        }
        self
    }

    pub fn build(self) -> Pod {
        self.pod
    }

    pub fn listed(self) -> DaemonPod {
        DaemonPod::whole(Arc::new(self.pod))
    }
}

/// The revision `set`'s template makes (numbered `number`), as the controller would create it.
pub fn revision_of(set: &DaemonSet, number: i64) -> k8s_openapi::api::apps::v1::ControllerRevision {
    crate::workload::revision::candidate(set, 0, number).unwrap()
}

/// `set` with its template's first container at `image`.
pub fn with_image(mut set: DaemonSet, image: &str) -> DaemonSet {
    set.spec.template.spec.as_mut().unwrap().containers[0].image = Some(image.into());
    set
}
