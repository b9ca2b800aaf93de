//! Advanced StatefulSet `v1alpha1` ↔ `v1beta1` (the working and storage version). OpenKruise
//! v1.9.0's `statefulset_conversion.go` copies the fields both versions have and drops the rest;
//! here the spec fields only `v1beta1` has (`reserveOrdinals`, `lifecycle`, `scaleStrategy`,
//! `persistentVolumeClaimRetentionPolicy`, `ordinals`, `volumeClaimUpdateStrategy`) travel to
//! `v1alpha1` readers in the annotation [`V1BETA1_FIELDS_ANNOTATION`] and come back from it, as
//! Kubernetes' own conversions keep newer fields in annotations: a read-modify-write in
//! `v1alpha1` (`kubectl edit`, `kubectl apply`) keeps them. The status fields `v1alpha1` lacks
//! (`updatedReadyReplicas`, `updatedAvailableReplicas`, `volumeClaims`) are dropped for its
//! readers; the controller writes status in `v1beta1`.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde::{Deserialize, Serialize};

use super::Served;
use crate::api::cloneset::Lifecycle;
use crate::api::statefulset::{
    RollingUpdateStatefulSetStrategy, StatefulSet, StatefulSetOrdinals,
    StatefulSetPersistentVolumeClaimRetentionPolicy, StatefulSetScaleStrategy, StatefulSetSpec,
    StatefulSetStatus, StatefulSetUpdateStrategy, UnorderedUpdateStrategy,
    VolumeClaimUpdateStrategy, v1alpha1,
};

/// Annotation of a `v1alpha1` reading: the `v1beta1`-only spec fields, as compact JSON.
pub const V1BETA1_FIELDS_ANNOTATION: &str = "statefulset.kruise.io/v1beta1-fields";

/// The spec fields `v1alpha1` lacks, as [`V1BETA1_FIELDS_ANNOTATION`] holds them.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct V1beta1Fields {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reserve_ordinals: Option<Vec<IntOrString>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifecycle: Option<Lifecycle>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_strategy: Option<StatefulSetScaleStrategy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persistent_volume_claim_retention_policy:
        Option<StatefulSetPersistentVolumeClaimRetentionPolicy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ordinals: Option<StatefulSetOrdinals>,
    #[serde(default, skip_serializing_if = "VolumeClaimUpdateStrategy::is_unset")]
    pub volume_claim_update_strategy: VolumeClaimUpdateStrategy,
}

/// The `v1beta1` fields carried in [`V1BETA1_FIELDS_ANNOTATION`], if the annotation is there;
/// `Err` says why it does not decode.
pub fn v1beta1_fields(
    annotations: Option<&BTreeMap<String, String>>,
) -> Result<Option<V1beta1Fields>, String> {
    let Some(text) = annotations.and_then(|a| a.get(V1BETA1_FIELDS_ANNOTATION)) else {
        return Ok(None);
    };
    serde_json::from_str(text)
        .map(Some)
        .map_err(|e| format!("the v1beta1-only spec fields as JSON: {e}"))
}

/// OpenKruise's `ConvertTo`, and the `v1beta1` fields back from the annotation, which the
/// `v1beta1` object does not keep. An annotation that does not decode is kept as it is, for the
/// validating webhook to refuse (`crate::validate::statefulset`), never silently dropped.
pub fn to_v1beta1(old: v1alpha1::StatefulSet) -> StatefulSet {
    let v1alpha1::StatefulSet {
        mut metadata,
        spec,
        status,
    } = old;
    let carried = match v1beta1_fields(metadata.annotations.as_ref()) {
        Ok(carried) => {
            if let Some(annotations) = &mut metadata.annotations {
                annotations.remove(V1BETA1_FIELDS_ANNOTATION);
                if annotations.is_empty() {
                    metadata.annotations = None;
                }
            }
            carried.unwrap_or_default()
        }
        Err(_) => V1beta1Fields::default(),
    };
    let strategy = spec.update_strategy;
    let rolling_update = strategy
        .rolling_update
        .map(|r| RollingUpdateStatefulSetStrategy {
            partition: r.partition,
            max_unavailable: r.max_unavailable,
            pod_update_policy: r.pod_update_policy,
            paused: r.paused,
            unordered_update: r.unordered_update.map(|u| UnorderedUpdateStrategy {
                priority_strategy: u.priority_strategy,
            }),
            in_place_update_strategy: r.in_place_update_strategy,
            min_ready_seconds: r.min_ready_seconds,
        });
    let status = status.map(|s| StatefulSetStatus {
        observed_generation: s.observed_generation,
        replicas: s.replicas,
        ready_replicas: s.ready_replicas,
        available_replicas: s.available_replicas,
        current_replicas: s.current_replicas,
        updated_replicas: s.updated_replicas,
        current_revision: s.current_revision,
        update_revision: s.update_revision,
        collision_count: s.collision_count,
        conditions: s.conditions,
        label_selector: s.label_selector,
        ..StatefulSetStatus::default()
    });
    StatefulSet {
        metadata,
        spec: StatefulSetSpec {
            replicas: spec.replicas,
            selector: spec.selector,
            template: spec.template,
            volume_claim_templates: spec.volume_claim_templates,
            volume_claim_update_strategy: carried.volume_claim_update_strategy,
            service_name: spec.service_name,
            pod_management_policy: spec.pod_management_policy,
            update_strategy: StatefulSetUpdateStrategy {
                type_: strategy.type_,
                rolling_update,
            },
            revision_history_limit: spec.revision_history_limit,
            reserve_ordinals: carried.reserve_ordinals,
            lifecycle: carried.lifecycle,
            scale_strategy: carried.scale_strategy,
            persistent_volume_claim_retention_policy: carried
                .persistent_volume_claim_retention_policy,
            ordinals: carried.ordinals,
        },
        status,
    }
}

/// OpenKruise's `ConvertFrom`, with the `v1beta1`-only spec fields kept in the annotation.
pub fn to_v1alpha1(new: StatefulSet) -> v1alpha1::StatefulSet {
    let StatefulSet {
        mut metadata,
        spec,
        status,
    } = new;
    let carried = V1beta1Fields {
        reserve_ordinals: spec.reserve_ordinals,
        lifecycle: spec.lifecycle,
        scale_strategy: spec.scale_strategy,
        persistent_volume_claim_retention_policy: spec.persistent_volume_claim_retention_policy,
        ordinals: spec.ordinals,
        volume_claim_update_strategy: spec.volume_claim_update_strategy,
    };
    if carried == V1beta1Fields::default() {
        if let Some(annotations) = &mut metadata.annotations {
            annotations.remove(V1BETA1_FIELDS_ANNOTATION);
        }
    } else if let Ok(text) = serde_json::to_string(&carried) {
        metadata
            .annotations
            .get_or_insert_default()
            .insert(V1BETA1_FIELDS_ANNOTATION.to_string(), text);
    }
    let strategy = spec.update_strategy;
    let rolling_update =
        strategy
            .rolling_update
            .map(|r| v1alpha1::RollingUpdateStatefulSetStrategy {
                partition: r.partition,
                max_unavailable: r.max_unavailable,
                pod_update_policy: r.pod_update_policy,
                paused: r.paused,
                unordered_update: r
                    .unordered_update
                    .map(|u| v1alpha1::UnorderedUpdateStrategy {
                        priority_strategy: u.priority_strategy,
                    }),
                in_place_update_strategy: r.in_place_update_strategy,
                min_ready_seconds: r.min_ready_seconds,
            });
    let status = status.map(|s| v1alpha1::StatefulSetStatus {
        observed_generation: s.observed_generation,
        replicas: s.replicas,
        ready_replicas: s.ready_replicas,
        available_replicas: s.available_replicas,
        current_replicas: s.current_replicas,
        updated_replicas: s.updated_replicas,
        current_revision: s.current_revision,
        update_revision: s.update_revision,
        collision_count: s.collision_count,
        conditions: s.conditions,
        label_selector: s.label_selector,
    });
    v1alpha1::StatefulSet {
        metadata,
        spec: v1alpha1::StatefulSetSpec {
            replicas: spec.replicas,
            selector: spec.selector,
            template: spec.template,
            volume_claim_templates: spec.volume_claim_templates,
            service_name: spec.service_name,
            pod_management_policy: spec.pod_management_policy,
            update_strategy: v1alpha1::StatefulSetUpdateStrategy {
                type_: strategy.type_,
                rolling_update,
            },
            revision_history_limit: spec.revision_history_limit,
        },
        status,
    }
}

impl Served for v1alpha1::StatefulSet {
    type Working = StatefulSet;
    fn into_working(self) -> StatefulSet {
        to_v1beta1(self)
    }
    fn from_working(working: StatefulSet) -> Self {
        to_v1alpha1(working)
    }
}

#[cfg(test)]
mod tests;
