//! What the CloneSet controller asks of one pod: is it active, ready, available, at a revision,
//! marked for deletion, and in which lifecycle state.

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::Pod;

use super::revision::label_names_revision;
use crate::api::keys;
use crate::inplace::conditions::pod_condition;

/// Pod label: the pod's short revision hash, always written next to `controller-revision-hash`.
pub const POD_TEMPLATE_HASH: &str = "pod-template-hash";
/// Pod label: the 5-character id shared by a pod and its PVCs.
pub const INSTANCE_ID: &str = "apps.kruise.io/cloneset-instance-id";
/// Pod label: delete this pod (any value counts; the controller writes `"true"`).
pub const SPECIFIED_DELETE: &str = "apps.kruise.io/specified-delete";
/// Pod label: lifecycle state; annotation: when it last changed.
pub const LIFECYCLE_STATE: &str = "lifecycle.apps.kruise.io/state";
pub const LIFECYCLE_TIMESTAMP: &str = "lifecycle.apps.kruise.io/timestamp";
/// Pod annotation: the lower, the sooner the pod goes on scale-in.
pub const DELETION_COST: &str = "controller.kubernetes.io/pod-deletion-cost";

/// Lifecycle states (`lifecycle.apps.kruise.io/state`).
pub const PREPARING_NORMAL: &str = "PreparingNormal";
pub const NORMAL: &str = "Normal";
pub const PREPARING_UPDATE: &str = "PreparingUpdate";
pub const UPDATING: &str = "Updating";
pub const UPDATED: &str = "Updated";
pub const PREPARING_DELETE: &str = "PreparingDelete";

pub fn label<'a>(pod: &'a Pod, key: &str) -> Option<&'a str> {
    pod.metadata.labels.as_ref()?.get(key).map(String::as_str)
}

pub fn annotation<'a>(pod: &'a Pod, key: &str) -> Option<&'a str> {
    pod.metadata
        .annotations
        .as_ref()?
        .get(key)
        .map(String::as_str)
}

pub fn name(pod: &Pod) -> &str {
    pod.metadata.name.as_deref().unwrap_or("")
}

pub fn phase(pod: &Pod) -> &str {
    pod.status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .unwrap_or("")
}

/// Neither finished nor terminating.
pub fn is_active(pod: &Pod) -> bool {
    !matches!(phase(pod), "Succeeded" | "Failed") && pod.metadata.deletion_timestamp.is_none()
}

pub fn lifecycle(pod: &Pod) -> &str {
    label(pod, LIFECYCLE_STATE).unwrap_or("")
}

pub fn scheduled(pod: &Pod) -> bool {
    pod.spec
        .as_ref()
        .and_then(|s| s.node_name.as_deref())
        .is_some_and(|n| !n.is_empty())
}

/// The `Ready` condition when it is True: its transition time.
fn ready_since(pod: &Pod) -> Option<Option<Timestamp>> {
    pod_condition(pod, keys::CONDITION_READY)
        .filter(|c| c.status == keys::CONDITION_TRUE)
        .map(|c| c.last_transition_time.as_ref().map(|t| t.0))
}

/// Kubernetes' `IsPodReady`.
pub fn has_ready_condition(pod: &Pod) -> bool {
    ready_since(pod).is_some()
}

/// Running, Ready, and Ready for longer than `min_ready_seconds`.
pub fn running_available(pod: &Pod, min_ready_seconds: i32, now: Timestamp) -> bool {
    if phase(pod) != "Running" {
        return false;
    }
    let Some(since) = ready_since(pod) else {
        return false;
    };
    if min_ready_seconds <= 0 {
        return true;
    }
    since.is_some_and(|since| {
        since
            .saturating_add(SignedDuration::from_secs(i64::from(min_ready_seconds)))
            .is_ok_and(|t| t < now)
    })
}

/// `InPlaceUpdateReady` absent or True.
pub fn in_place_ready(pod: &Pod) -> bool {
    pod_condition(pod, keys::INPLACE_UPDATE_READY).is_none_or(|c| c.status == keys::CONDITION_TRUE)
}

/// Counted in `status.readyReplicas`.
pub fn is_ready(pod: &Pod, now: Timestamp) -> bool {
    running_available(pod, 0, now) && in_place_ready(pod)
}

/// Counted in `status.availableReplicas` and by every budget.
pub fn is_available(pod: &Pod, min_ready_seconds: i32, now: Timestamp) -> bool {
    matches!(lifecycle(pod), "" | NORMAL)
        && running_available(pod, min_ready_seconds, now)
        && in_place_ready(pod)
}

/// Labelled for deletion, or named in `scaleStrategy.podsToDelete`.
pub fn is_specified_delete(pod: &Pod, pods_to_delete: &[String]) -> bool {
    label(pod, SPECIFIED_DELETE).is_some() || pods_to_delete.iter().any(|n| n == name(pod))
}

pub fn is_pre_deleting(pod: &Pod) -> bool {
    lifecycle(pod) == PREPARING_DELETE
}

/// The pod's `controller-revision-hash` label names `revision`.
pub fn at_revision(pod: &Pod, revision: &str) -> bool {
    label(pod, keys::CONTROLLER_REVISION_HASH).is_some_and(|l| label_names_revision(l, revision))
}

/// `controller.kubernetes.io/pod-deletion-cost` (invalid or absent: 0).
pub fn deletion_cost(pod: &Pod) -> i32 {
    annotation(pod, DELETION_COST)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

pub fn max_restarts(pod: &Pod) -> i32 {
    pod.status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .into_iter()
        .flatten()
        .map(|s| s.restart_count)
        .max()
        .unwrap_or(0)
}

/// `Ready` transition time of a ready pod.
pub fn ready_time(pod: &Pod) -> Option<Timestamp> {
    ready_since(pod).flatten()
}

pub fn created(pod: &Pod) -> Option<Timestamp> {
    pod.metadata.creation_timestamp.as_ref().map(|t| t.0)
}

pub fn node(pod: &Pod) -> &str {
    pod.spec
        .as_ref()
        .and_then(|s| s.node_name.as_deref())
        .unwrap_or("")
}

/// Pending (and anything unknown to Kubernetes) < Unknown < Running.
pub fn phase_rank(pod: &Pod) -> u8 {
    match phase(pod) {
        "Unknown" => 1,
        "Running" => 2,
        _ => 0,
    }
}
