//! Small readings of a core `Pod` that several floors share.

use k8s_openapi::api::core::v1::Pod;

/// Whether `spec.readinessGates` lists `condition_type`.
pub fn has_readiness_gate(pod: &Pod, condition_type: &str) -> bool {
    pod.spec
        .as_ref()
        .and_then(|s| s.readiness_gates.as_ref())
        .is_some_and(|gates| gates.iter().any(|g| g.condition_type == condition_type))
}
