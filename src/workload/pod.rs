//! What the workload controllers ask of one pod: is it active, ready, available, marked for
//! deletion, and in which lifecycle state. (Whether it is at a revision depends on the kind:
//! [`super::revision::RevisionScheme::pod_at`].)

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::Pod;

use super::lifecycle::{LIFECYCLE_STATE, NORMAL, PREPARING_DELETE};
use crate::api::keys;
use crate::podmarks::PodView;

/// Pod label: the pod's short revision hash, written next to `controller-revision-hash` by the
/// kinds whose [`super::revision::RevisionScheme`] says so (the CloneSet).
pub const POD_TEMPLATE_HASH: &str = "pod-template-hash";
/// Pod label: delete this pod (any value counts; the controller writes `"true"`).
pub const SPECIFIED_DELETE: &str = "apps.kruise.io/specified-delete";
pub const DELETION_COST: &str = keys::POD_DELETION_COST;

pub fn label<'a, P: PodView + ?Sized>(pod: &'a P, key: &str) -> Option<&'a str> {
    pod.labels()?.get(key).map(String::as_str)
}

pub fn annotation<'a>(pod: &'a Pod, key: &str) -> Option<&'a str> {
    pod.metadata
        .annotations
        .as_ref()?
        .get(key)
        .map(String::as_str)
}

pub fn name<P: PodView + ?Sized>(pod: &P) -> &str {
    pod.name()
}

pub fn phase<P: PodView + ?Sized>(pod: &P) -> &str {
    pod.phase()
}

/// Neither finished nor terminating.
pub fn is_active<P: PodView + ?Sized>(pod: &P) -> bool {
    pod.is_active()
}

pub fn lifecycle<P: PodView + ?Sized>(pod: &P) -> &str {
    label(pod, LIFECYCLE_STATE).unwrap_or("")
}

pub fn scheduled<P: PodView + ?Sized>(pod: &P) -> bool {
    pod.scheduled()
}

/// The first `Ready` condition, when it is True: its transition time.
fn ready_since<P: PodView + ?Sized>(pod: &P) -> Option<Option<Timestamp>> {
    pod.first_ready_true().then(|| pod.ready_since().copied())
}

/// Kubernetes' `IsPodReady`.
pub fn has_ready_condition<P: PodView + ?Sized>(pod: &P) -> bool {
    pod.first_ready_true()
}

/// Running, Ready, and Ready for longer than `min_ready_seconds`.
pub fn running_available<P: PodView + ?Sized>(
    pod: &P,
    min_ready_seconds: i32,
    now: Timestamp,
) -> bool {
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
pub fn in_place_ready<P: PodView + ?Sized>(pod: &P) -> bool {
    pod.inplace_ready_status()
        .is_none_or(|status| status == keys::CONDITION_TRUE)
}

/// Counted in `status.readyReplicas`.
pub fn is_ready<P: PodView + ?Sized>(pod: &P, now: Timestamp) -> bool {
    running_available(pod, 0, now) && in_place_ready(pod)
}

/// Counted in `status.availableReplicas` and by every budget.
pub fn is_available<P: PodView + ?Sized>(pod: &P, min_ready_seconds: i32, now: Timestamp) -> bool {
    matches!(lifecycle(pod), "" | NORMAL)
        && running_available(pod, min_ready_seconds, now)
        && in_place_ready(pod)
}

/// Labelled for deletion, or named in `scaleStrategy.podsToDelete`.
pub fn is_specified_delete<P: PodView + ?Sized>(pod: &P, pods_to_delete: &[String]) -> bool {
    label(pod, SPECIFIED_DELETE).is_some() || pods_to_delete.iter().any(|n| n == name(pod))
}

pub fn is_pre_deleting<P: PodView + ?Sized>(pod: &P) -> bool {
    lifecycle(pod) == PREPARING_DELETE
}

/// `controller-revision-hash` without `pod-template-hash` (the CloneSet's refresh adds it).
pub fn missing_template_hash<P: PodView + ?Sized>(p: &P) -> bool {
    label(p, POD_TEMPLATE_HASH).is_none() && label(p, keys::CONTROLLER_REVISION_HASH).is_some()
}

/// `controller.kubernetes.io/pod-deletion-cost` (invalid or absent: 0).
pub fn deletion_cost<P: PodView + ?Sized>(pod: &P) -> i32 {
    pod.deletion_cost()
}

pub fn max_restarts<P: PodView + ?Sized>(pod: &P) -> i32 {
    pod.container_statuses()
        .map(|s| s.restart_count)
        .max()
        .unwrap_or(0)
}

/// `Ready` transition time of a ready pod.
pub fn ready_time<P: PodView + ?Sized>(pod: &P) -> Option<Timestamp> {
    ready_since(pod).flatten()
}

pub fn created<P: PodView + ?Sized>(pod: &P) -> Option<Timestamp> {
    pod.created().copied()
}

pub fn node<P: PodView + ?Sized>(pod: &P) -> &str {
    pod.node_name()
}

/// Pending (and anything unknown to Kubernetes) < Unknown < Running.
pub fn phase_rank<P: PodView + ?Sized>(pod: &P) -> u8 {
    match phase(pod) {
        "Unknown" => 1,
        "Running" => 2,
        _ => 0,
    }
}
