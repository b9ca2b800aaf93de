//! Advanced DaemonSet `v1alpha1` ↔ `v1beta1` (the working and storage version), as OpenKruise
//! v1.9.0's `daemonset_conversion.go`: the annotation `daemonset.kruise.io/progressive-create-pod:
//! "true"` ↔ `spec.scaleStrategy.partitionedScaling`,
//! `status.daemonSetHash` ↔ `status.updateRevision`, and the deprecated rolling update type
//! `Surging` becomes `Standard`. Everything else is the same field.

use super::Served;
use crate::api::daemonset::{
    DaemonSet, DaemonSetScaleStrategy, DaemonSetSpec, DaemonSetStatus, STANDARD, SURGING, v1alpha1,
};

/// `daemonset.kruise.io/progressive-create-pod`: v1alpha1's `scaleStrategy.partitionedScaling`.
pub const PROGRESSIVE_CREATE_ANNOTATION: &str = "daemonset.kruise.io/progressive-create-pod";

/// OpenKruise's `ConvertTo`, but for one thing: OpenKruise keeps the annotation on the
/// `v1beta1` object beside the field, where its controller no longer reads it and where a later
/// `v1alpha1` round trip would turn a since-cleared field back on; here it is moved into the
/// field, so both directions round-trip.
pub fn to_v1beta1(old: v1alpha1::DaemonSet) -> DaemonSet {
    let v1alpha1::DaemonSet {
        mut metadata,
        spec,
        status,
    } = old;
    let mut update_strategy = spec.update_strategy;
    if let Some(rolling) = &mut update_strategy.rolling_update
        && rolling.rolling_update_type.as_deref() == Some(SURGING)
    {
        rolling.rolling_update_type = Some(STANDARD.to_string());
    }
    let progressive = metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(PROGRESSIVE_CREATE_ANNOTATION))
        .is_some_and(|v| v == "true");
    if progressive && let Some(annotations) = &mut metadata.annotations {
        annotations.remove(PROGRESSIVE_CREATE_ANNOTATION);
        if annotations.is_empty() {
            metadata.annotations = None;
        }
    }
    DaemonSet {
        metadata,
        spec: DaemonSetSpec {
            selector: spec.selector,
            template: spec.template,
            update_strategy,
            min_ready_seconds: spec.min_ready_seconds,
            burst_replicas: spec.burst_replicas,
            revision_history_limit: spec.revision_history_limit,
            lifecycle: spec.lifecycle,
            scale_strategy: progressive.then_some(DaemonSetScaleStrategy {
                partitioned_scaling: Some(true),
            }),
        },
        status: status.map(|s| DaemonSetStatus {
            current_number_scheduled: s.current_number_scheduled,
            number_misscheduled: s.number_misscheduled,
            desired_number_scheduled: s.desired_number_scheduled,
            number_ready: s.number_ready,
            observed_generation: s.observed_generation,
            updated_number_scheduled: s.updated_number_scheduled,
            number_available: s.number_available,
            number_unavailable: s.number_unavailable,
            collision_count: s.collision_count,
            conditions: s.conditions,
            update_revision: s.daemon_set_hash,
        }),
    }
}

/// OpenKruise's `ConvertFrom`.
pub fn to_v1alpha1(new: DaemonSet) -> v1alpha1::DaemonSet {
    let DaemonSet {
        mut metadata,
        spec,
        status,
    } = new;
    if spec
        .scale_strategy
        .is_some_and(|s| s.partitioned_scaling == Some(true))
    {
        metadata.annotations.get_or_insert_default().insert(
            PROGRESSIVE_CREATE_ANNOTATION.to_string(),
            "true".to_string(),
        );
    }
    v1alpha1::DaemonSet {
        metadata,
        spec: v1alpha1::DaemonSetSpec {
            selector: spec.selector,
            template: spec.template,
            update_strategy: spec.update_strategy,
            min_ready_seconds: spec.min_ready_seconds,
            burst_replicas: spec.burst_replicas,
            revision_history_limit: spec.revision_history_limit,
            lifecycle: spec.lifecycle,
        },
        status: status.map(|s| v1alpha1::DaemonSetStatus {
            current_number_scheduled: s.current_number_scheduled,
            number_misscheduled: s.number_misscheduled,
            desired_number_scheduled: s.desired_number_scheduled,
            number_ready: s.number_ready,
            observed_generation: s.observed_generation,
            updated_number_scheduled: s.updated_number_scheduled,
            number_available: s.number_available,
            number_unavailable: s.number_unavailable,
            collision_count: s.collision_count,
            conditions: s.conditions,
            daemon_set_hash: s.update_revision,
        }),
    }
}

impl Served for v1alpha1::DaemonSet {
    type Working = DaemonSet;
    fn into_working(self) -> DaemonSet {
        to_v1beta1(self)
    }
    fn from_working(working: DaemonSet) -> Self {
        to_v1alpha1(working)
    }
}

#[cfg(test)]
mod tests;
