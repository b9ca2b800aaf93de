//! Taints and tolerations as the upstream DaemonSet controller weighs them: the default
//! tolerations it gives every daemon pod (`AddOrUpdateDaemonPodTolerations`) and the search for a
//! taint the pod does not tolerate (`FindMatchingUntoleratedTaint`).

use k8s_openapi::api::core::v1::{PodSpec, Toleration};

use super::node::{NodeTaint, TaintEffect};

/// The taints the node lifecycle controller and the kubelet put on troubled nodes.
pub const NOT_READY: &str = "node.kubernetes.io/not-ready";
pub const UNREACHABLE: &str = "node.kubernetes.io/unreachable";
pub const DISK_PRESSURE: &str = "node.kubernetes.io/disk-pressure";
pub const MEMORY_PRESSURE: &str = "node.kubernetes.io/memory-pressure";
pub const PID_PRESSURE: &str = "node.kubernetes.io/pid-pressure";
pub const UNSCHEDULABLE: &str = "node.kubernetes.io/unschedulable";
pub const NETWORK_UNAVAILABLE: &str = "node.kubernetes.io/network-unavailable";

const NO_EXECUTE: &str = "NoExecute";
const NO_SCHEDULE: &str = "NoSchedule";
const EXISTS: &str = "Exists";

/// The tolerations every daemon pod gets, in the order they are added: a daemon keeps running
/// on a node that is not ready or unreachable, and is placed on nodes under pressure and on
/// cordoned ones; with `hostNetwork`, also on nodes whose network is not set up yet.
pub fn default_tolerations(host_network: bool) -> Vec<Toleration> {
    let mut wanted = vec![
        (NOT_READY, NO_EXECUTE),
        (UNREACHABLE, NO_EXECUTE),
        (DISK_PRESSURE, NO_SCHEDULE),
        (MEMORY_PRESSURE, NO_SCHEDULE),
        (PID_PRESSURE, NO_SCHEDULE),
        (UNSCHEDULABLE, NO_SCHEDULE),
    ];
    if host_network {
        wanted.push((NETWORK_UNAVAILABLE, NO_SCHEDULE));
    }
    wanted
        .into_iter()
        .map(|(key, effect)| Toleration {
            key: Some(key.to_string()),
            operator: Some(EXISTS.to_string()),
            effect: Some(effect.to_string()),
            ..Default::default()
        })
        .collect()
}

/// `AddOrUpdateDaemonPodTolerations`: each default toleration is added to `spec` unless an
/// identical one is there; one that differs only in `tolerationSeconds` is replaced in place.
pub fn add_default_tolerations(spec: &mut PodSpec) {
    for toleration in default_tolerations(spec.host_network == Some(true)) {
        add_or_update(spec, toleration);
    }
}

/// `AddOrUpdateTolerationInPodSpec`: every toleration with the same key, operator, value and
/// effect is replaced by `toleration`; with none, it is appended. (Go's early return for an equal
/// toleration compares a pointer with a value and never fires, so duplicates are all replaced.)
fn add_or_update(spec: &mut PodSpec, toleration: Toleration) {
    let existing = spec.tolerations.get_or_insert_with(Vec::new);
    let mut replaced = false;
    for slot in existing.iter_mut() {
        if same_identity(slot, &toleration) {
            *slot = toleration.clone();
            replaced = true;
        }
    }
    if !replaced {
        existing.push(toleration);
    }
}

/// `Toleration.MatchToleration`: key, operator, value and effect equal, as written.
fn same_identity(a: &Toleration, b: &Toleration) -> bool {
    let text = |v: &Option<String>| v.as_deref().unwrap_or("").to_string();
    text(&a.key) == text(&b.key)
        && text(&a.operator) == text(&b.operator)
        && text(&a.value) == text(&b.value)
        && text(&a.effect) == text(&b.effect)
}

/// `Toleration.ToleratesTaint`: effect and key empty or equal, and the operator `Exists`, or
/// `Equal` (or empty) with an equal value; `tolerationSeconds` plays no part.
pub fn tolerates(toleration: &Toleration, taint: &NodeTaint) -> bool {
    let effect = toleration.effect.as_deref().unwrap_or("");
    if !effect.is_empty() && effect != taint.effect.as_str() {
        return false;
    }
    let key = toleration.key.as_deref().unwrap_or("");
    if !key.is_empty() && key != &*taint.key {
        return false;
    }
    match toleration.operator.as_deref().unwrap_or("") {
        "" | "Equal" => toleration.value.as_deref().unwrap_or("") == &*taint.value,
        EXISTS => true,
        _ => false,
    }
}

/// Whether some taint with an effect `considered` accepts is tolerated by none of `tolerations`.
pub fn has_untolerated_taint(
    taints: &[NodeTaint],
    tolerations: &[Toleration],
    considered: impl Fn(TaintEffect) -> bool,
) -> bool {
    taints
        .iter()
        .filter(|taint| considered(taint.effect))
        .any(|taint| !tolerations.iter().any(|t| tolerates(t, taint)))
}

#[cfg(test)]
mod tests;
