//! The rolling update's numbers, scaled as upstream scales them (`GetScaledValueFromIntOrPercent`):
//! maxUnavailable and maxSurge round **up** against the nodes that should run a pod; partition
//! and burstReplicas round **down** against the previous `status.desiredNumberScheduled`.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::api::daemonset::{DaemonSet, RollingUpdateDaemonSet};
use crate::k8s::intstr::scaled_value;

/// Pods created or deleted at most in one round when `burstReplicas` is unset.
pub const DEFAULT_BURST_REPLICAS: i32 = 250;

/// `rollingUpdate`, only for the `RollingUpdate` strategy.
fn rolling_strategy(set: &DaemonSet) -> Option<&RollingUpdateDaemonSet> {
    if set.update_type() != "RollingUpdate" {
        return None;
    }
    set.spec.update_strategy.rolling_update.as_ref()
}

fn count(value: Option<&IntOrString>, total: i32, round_up: bool) -> Result<i64, String> {
    match value {
        None => Ok(0),
        Some(value) => scaled_value(Some(value), total, round_up),
    }
}

/// Upstream `surgeCount`.
pub fn max_surge(set: &DaemonSet, desired: i32) -> Result<i64, String> {
    count(
        rolling_strategy(set).and_then(|r| r.max_surge.as_ref()),
        desired,
        true,
    )
}

/// Upstream `unavailableCount`.
pub fn max_unavailable(set: &DaemonSet, desired: i32) -> Result<i64, String> {
    count(
        rolling_strategy(set).and_then(|r| r.max_unavailable.as_ref()),
        desired,
        true,
    )
}

/// Upstream `allowSurge`: a node may hold an old and a new pod at once.
pub fn allows_surge(set: &DaemonSet) -> bool {
    max_surge(set, 1).is_ok_and(|n| n > 0)
}

/// The partition of a RollingUpdate with one: `None` without, `Err` when it does not scale.
pub fn partition(set: &DaemonSet, previous_desired: i32) -> Option<Result<i64, String>> {
    let partition = set
        .spec
        .update_strategy
        .rolling_update
        .as_ref()?
        .partition
        .as_ref()?;
    Some(scaled_value(Some(partition), previous_desired, false))
}

/// Upstream `getBurstReplicas`; a value that does not scale reads as 0, as in Go (validation
/// keeps such values out).
pub fn burst_replicas(set: &DaemonSet, previous_desired: i32) -> usize {
    let default = IntOrString::Int(DEFAULT_BURST_REPLICAS);
    let value = set.spec.burst_replicas.as_ref().unwrap_or(&default);
    scaled_value(Some(value), previous_desired, false)
        .ok()
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(0)
}

/// `scaleStrategy.partitionedScaling` (v1alpha1's annotation
/// `daemonset.kruise.io/progressive-create-pod: "true"`, converted): new nodes get pods only as
/// far as the partition allows. The annotation on a v1beta1 object is not read, as OpenKruise
/// v1.9.0 does not.
pub fn creates_progressively(set: &DaemonSet) -> bool {
    set.spec
        .scale_strategy
        .as_ref()
        .is_some_and(|s| s.partitioned_scaling == Some(true))
}

/// `rollingUpdate.paused`.
pub fn paused(set: &DaemonSet) -> bool {
    set.spec
        .update_strategy
        .rolling_update
        .as_ref()
        .and_then(|r| r.paused)
        == Some(true)
}

#[cfg(test)]
mod tests;
