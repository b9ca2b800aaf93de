//! The launch-priority barrier, decided: which keys of a pod's barrier ConfigMap must exist now,
//! what to write for them given the ConfigMap as it is, and when the pod is done. The pod webhook
//! gives every container an env `KRUISE_CONTAINER_BARRIER` read from key `p_<priority>` of
//! ConfigMap `<pod>-barrier`; kubelet holds a container until its key exists. The controller
//! (`controller::barrier`) reads the ConfigMap and sends what this module returns.
//!
//! Semantics follow OpenKruise's container-launch-priority controller: the next key to release is
//! the highest priority among containers that report a status and are not ready; once the pod's
//! `ContainersReady` is True the pod is done.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use serde_json::{Value, json};

use crate::api::keys;
use crate::inject::launch_priority::barrier_priority;

/// When to look at a pod again after its barrier write failed. Otherwise every change of the pod
/// (a container turning ready) brings the next look.
pub const FAILED_REQUEUE: Duration = Duration::from_secs(5);

/// What a pod needs from the barrier controller right now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BarrierDecision {
    /// Not a launch-priority pod, already completed, or terminating.
    Ignore,
    /// Nothing to release yet (no container reports a pending status).
    Wait,
    /// The ConfigMap `configmap` must exist and hold these keys (value `"true"`).
    Release {
        configmap: String,
        keys: BTreeSet<String>,
    },
    /// Every container is ready: mark the pod completed.
    Complete,
}

/// Decides what the barrier of `pod` needs. Keys are cumulative: every priority at or above the
/// highest pending one, so a restarted controller converges to the same ConfigMap.
pub fn decide(pod: &Pod) -> BarrierDecision {
    let Some(spec) = pod.spec.as_ref() else {
        return BarrierDecision::Ignore;
    };
    let barriers: Vec<(&str, i64)> = spec
        .containers
        .iter()
        .filter_map(|c| barrier_priority(c).map(|p| (c.name.as_str(), p)))
        .collect();
    if barriers.is_empty() || pod.metadata.deletion_timestamp.is_some() || completed(pod) {
        return BarrierDecision::Ignore;
    }
    let status = pod.status.as_ref();
    let containers_ready = status
        .and_then(|s| s.conditions.as_ref())
        .into_iter()
        .flatten()
        .any(|c| c.type_ == keys::CONDITION_CONTAINERS_READY && c.status == keys::CONDITION_TRUE);
    if containers_ready {
        return BarrierDecision::Complete;
    }
    // Containers without a status are not pending yet: kubelet has not looked at them.
    let pending: BTreeSet<&str> = status
        .and_then(|s| s.container_statuses.as_ref())
        .into_iter()
        .flatten()
        .filter(|s| !s.ready)
        .map(|s| s.name.as_str())
        .collect();
    let Some(next) = barriers
        .iter()
        .filter(|(name, _)| pending.contains(name))
        .map(|(_, p)| *p)
        .max()
    else {
        return BarrierDecision::Wait;
    };
    let keys = barriers
        .iter()
        .filter(|(_, p)| *p >= next)
        .map(|(_, p)| format!("{}{p}", keys::BARRIER_KEY_PREFIX))
        .collect();
    BarrierDecision::Release {
        configmap: configmap_name(pod),
        keys,
    }
}

fn completed(pod: &Pod) -> bool {
    pod.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(keys::CONTAINER_LAUNCH_PRIORITY_COMPLETED))
        .is_some_and(|v| v == "true")
}

/// The ConfigMap the containers read: the name in the barrier env (what kubelet resolves), else
/// `<pod>-barrier`.
pub fn configmap_name(pod: &Pod) -> String {
    pod.spec
        .iter()
        .flat_map(|s| s.containers.iter())
        .flat_map(|c| c.env.iter().flatten())
        .filter(|e| e.name == keys::ENV_CONTAINER_BARRIER)
        .find_map(|e| e.value_from.as_ref()?.config_map_key_ref.as_ref())
        .map(|r| r.name.clone())
        .unwrap_or_else(|| {
            format!(
                "{}{}",
                pod.metadata.name.as_deref().unwrap_or(""),
                keys::BARRIER_CONFIGMAP_SUFFIX
            )
        })
}

/// Keys of `wanted` that `existing` lacks (a key already present keeps its value).
pub fn missing_keys<'a>(
    existing: Option<&BTreeMap<String, String>>,
    wanted: &'a BTreeSet<String>,
) -> BTreeSet<&'a String> {
    wanted
        .iter()
        .filter(|k| existing.is_none_or(|data| !data.contains_key(*k)))
        .collect()
}

/// What to send for a [`BarrierDecision::Release`], given the ConfigMap as read (`None`: absent).
#[derive(Debug, Clone, PartialEq)]
pub enum ConfigMapWrite {
    /// Create the ConfigMap, owned by the pod so garbage collection removes it with the pod.
    Create(Box<ConfigMap>),
    /// Merge-patch only the missing keys: the ones kubelet already read stay untouched.
    AddKeys(Value),
}

/// The write a release needs; `None` when the ConfigMap already holds every key.
pub fn configmap_write(
    pod: &Pod,
    configmap: &str,
    keys: &BTreeSet<String>,
    existing: Option<&ConfigMap>,
) -> Option<ConfigMapWrite> {
    let Some(existing) = existing else {
        return Some(ConfigMapWrite::Create(Box::new(ConfigMap {
            metadata: ObjectMeta {
                name: Some(configmap.to_string()),
                namespace: Some(pod.metadata.namespace.clone().unwrap_or_default()),
                owner_references: Some(vec![owner_of(pod)]),
                ..Default::default()
            },
            data: Some(keys.iter().map(|k| (k.clone(), "true".into())).collect()),
            ..Default::default()
        })));
    };
    let missing = missing_keys(existing.data.as_ref(), keys);
    if missing.is_empty() {
        return None;
    }
    let data: BTreeMap<&String, &str> = missing.into_iter().map(|k| (k, "true")).collect();
    Some(ConfigMapWrite::AddKeys(json!({ "data": data })))
}

/// The merge patch that marks a pod's launch priority completed.
pub fn completed_patch() -> Value {
    json!({"metadata": {"annotations": {
        keys::CONTAINER_LAUNCH_PRIORITY_COMPLETED: "true"
    }}})
}

fn owner_of(pod: &Pod) -> OwnerReference {
    OwnerReference {
        api_version: "v1".into(),
        kind: "Pod".into(),
        name: pod.metadata.name.clone().unwrap_or_default(),
        uid: pod.metadata.uid.clone().unwrap_or_default(),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests;
