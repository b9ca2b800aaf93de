//! Advanced StatefulSet (`apps.kruise.io`): the storage version `v1beta1` at the top of this module
//! and the older `v1alpha1` in [`v1alpha1`], which the webhook still accepts and validates by
//! converting it ([`From`]) to `v1beta1`, as OpenKruise does.
//!
//! Enumerated fields (`podManagementPolicy`, `podUpdatePolicy`, retention policies, …) are plain
//! strings so an unknown value reaches the validator; the pod template and volume claim templates
//! are schemaless in the CRD, as in OpenKruise's.

use k8s_openapi::api::apps::v1::StatefulSetCondition;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, PodTemplateSpec};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::{CustomResource, CustomResourceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::cloneset::{InPlaceUpdateStrategy, Lifecycle, schemaless_array, schemaless_object};
use super::sidecarset::UpdatePriorityStrategy;

/// `podManagementPolicy` values.
pub const ORDERED_READY: &str = "OrderedReady";
pub const PARALLEL: &str = "Parallel";
/// `updateStrategy.type` values.
pub const ROLLING_UPDATE: &str = "RollingUpdate";
pub const ON_DELETE: &str = "OnDelete";
/// `persistentVolumeClaimRetentionPolicy` values.
pub const RETAIN: &str = "Retain";
pub const DELETE: &str = "Delete";
/// `volumeClaimUpdateStrategy.type` values.
pub const ON_POD_ROLLING_UPDATE: &str = "OnPodRollingUpdate";

/// Desired state of an Advanced StatefulSet (`v1beta1`, the storage version).
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1beta1",
    kind = "StatefulSet",
    plural = "statefulsets",
    shortname = "sts",
    shortname = "asts",
    namespaced,
    status = "StatefulSetStatus",
    derive = "PartialEq",
    derive = "Default",
    scale = r#"{"specReplicasPath":".spec.replicas","statusReplicasPath":".status.replicas","labelSelectorPath":".status.labelSelector"}"#,
    printcolumn = r#"{"name":"DESIRED","type":"integer","description":"The desired number of pods.","jsonPath":".spec.replicas"}"#,
    printcolumn = r#"{"name":"CURRENT","type":"integer","description":"The number of currently all pods.","jsonPath":".status.replicas"}"#,
    printcolumn = r#"{"name":"UPDATED","type":"integer","description":"The number of pods updated.","jsonPath":".status.updatedReplicas"}"#,
    printcolumn = r#"{"name":"READY","type":"integer","description":"The number of pods ready.","jsonPath":".status.readyReplicas"}"#,
    printcolumn = r#"{"name":"AGE","type":"date","description":"CreationTimestamp is a timestamp representing the server time when this object was created.","jsonPath":".metadata.creationTimestamp"}"#,
    printcolumn = r#"{"name":"CONTAINERS","type":"string","priority":1,"description":"The containers of currently advanced statefulset.","jsonPath":".spec.template.spec.containers[*].name"}"#,
    printcolumn = r#"{"name":"IMAGES","type":"string","priority":1,"description":"The images of currently advanced statefulset.","jsonPath":".spec.template.spec.containers[*].image"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct StatefulSetSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    #[serde(default)]
    #[schemars(schema_with = "schemaless_object")]
    pub template: PodTemplateSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schemaless_array")]
    pub volume_claim_templates: Option<Vec<PersistentVolumeClaim>>,
    /// Only effective with OpenKruise's `StatefulSetAutoResizePVCGate`.
    #[serde(default)]
    pub volume_claim_update_strategy: VolumeClaimUpdateStrategy,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_name: Option<String>,
    /// `OrderedReady` (default) or `Parallel`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_management_policy: Option<String>,
    #[serde(default)]
    pub update_strategy: StatefulSetUpdateStrategy,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_history_limit: Option<i32>,
    /// Ordinals to skip: ints, or `"start-end"` ranges.
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
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatefulSetUpdateStrategy {
    /// `RollingUpdate` (default) or `OnDelete`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rolling_update: Option<RollingUpdateStatefulSetStrategy>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RollingUpdateStatefulSetStrategy {
    /// Ordinal at which the set is partitioned (a pod count with `unorderedUpdate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<i32>,
    /// Defaults to 1; anything else needs `podManagementPolicy: Parallel`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    /// `ReCreate` (default), `InPlaceIfPossible` or `InPlaceOnly`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_update_policy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unordered_update: Option<UnorderedUpdateStrategy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_place_update_strategy: Option<InPlaceUpdateStrategy>,
    /// At most 300.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_ready_seconds: Option<i32>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnorderedUpdateStrategy {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority_strategy: Option<UpdatePriorityStrategy>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatefulSetScaleStrategy {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatefulSetPersistentVolumeClaimRetentionPolicy {
    /// `Retain` or `Delete`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when_deleted: Option<String>,
    /// `Retain` or `Delete`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when_scaled: Option<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct StatefulSetOrdinals {
    /// First replica index (default 0).
    #[serde(default)]
    pub start: i32,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct VolumeClaimUpdateStrategy {
    /// `OnPodRollingUpdate` or `OnDelete`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatefulSetStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    #[serde(default)]
    pub replicas: i32,
    #[serde(default)]
    pub ready_replicas: i32,
    #[serde(default)]
    pub available_replicas: i32,
    #[serde(default)]
    pub current_replicas: i32,
    #[serde(default)]
    pub updated_replicas: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_ready_replicas: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_available_replicas: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_revision: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_revision: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collision_count: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<StatefulSetCondition>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_claims: Option<Vec<VolumeClaimStatus>>,
}

/// How many replicas already use PVCs compatible with one volume claim template.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VolumeClaimStatus {
    #[serde(default)]
    pub volume_claim_name: String,
    #[serde(default)]
    pub compatible_replicas: i32,
    #[serde(default)]
    pub compatible_ready_replicas: i32,
}

impl StatefulSet {
    pub fn pod_management_policy(&self) -> &str {
        self.spec.pod_management_policy.as_deref().unwrap_or("")
    }

    pub fn update_type(&self) -> &str {
        self.spec.update_strategy.type_.as_deref().unwrap_or("")
    }

    /// `rollingUpdate.podUpdatePolicy`, or `""` without a rolling update.
    pub fn pod_update_policy(&self) -> &str {
        self.spec
            .update_strategy
            .rolling_update
            .as_ref()
            .and_then(|r| r.pod_update_policy.as_deref())
            .unwrap_or("")
    }
}

/// The Advanced StatefulSet CRD with both versions, `v1beta1` stored.
pub fn statefulset_crd() -> CustomResourceDefinition {
    let beta = StatefulSet::crd();
    // Merging only fails on mismatched groups, kinds or scopes, which these two derives share.
    kube::core::crd::merge_crds(vec![beta.clone(), v1alpha1::StatefulSet::crd()], "v1beta1")
        .unwrap_or(beta)
}

/// The `v1alpha1` Advanced StatefulSet: the `v1beta1` shape before `reserveOrdinals`,
/// `lifecycle`, `scaleStrategy`, retention policies, `ordinals` and volume claim updates.
pub mod v1alpha1 {
    use k8s_openapi::api::apps::v1::StatefulSetCondition;
    use k8s_openapi::api::core::v1::{PersistentVolumeClaim, PodTemplateSpec};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
    use kube::CustomResource;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    use crate::api::cloneset::{InPlaceUpdateStrategy, schemaless_array, schemaless_object};
    use crate::api::sidecarset::UpdatePriorityStrategy;

    #[derive(
        CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema,
    )]
    #[kube(
        group = "apps.kruise.io",
        version = "v1alpha1",
        kind = "StatefulSet",
        plural = "statefulsets",
        shortname = "sts",
        shortname = "asts",
        namespaced,
        status = "StatefulSetStatus",
        derive = "PartialEq",
        derive = "Default",
        scale = r#"{"specReplicasPath":".spec.replicas","statusReplicasPath":".status.replicas","labelSelectorPath":".status.labelSelector"}"#,
        printcolumn = r#"{"name":"DESIRED","type":"integer","description":"The desired number of pods.","jsonPath":".spec.replicas"}"#,
        printcolumn = r#"{"name":"CURRENT","type":"integer","description":"The number of currently all pods.","jsonPath":".status.replicas"}"#,
        printcolumn = r#"{"name":"UPDATED","type":"integer","description":"The number of pods updated.","jsonPath":".status.updatedReplicas"}"#,
        printcolumn = r#"{"name":"READY","type":"integer","description":"The number of pods ready.","jsonPath":".status.readyReplicas"}"#,
        printcolumn = r#"{"name":"AGE","type":"date","description":"CreationTimestamp is a timestamp representing the server time when this object was created.","jsonPath":".metadata.creationTimestamp"}"#,
        printcolumn = r#"{"name":"CONTAINERS","type":"string","priority":1,"description":"The containers of currently advanced statefulset.","jsonPath":".spec.template.spec.containers[*].name"}"#,
        printcolumn = r#"{"name":"IMAGES","type":"string","priority":1,"description":"The images of currently advanced statefulset.","jsonPath":".spec.template.spec.containers[*].image"}"#
    )]
    #[serde(rename_all = "camelCase")]
    pub struct StatefulSetSpec {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub replicas: Option<i32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub selector: Option<LabelSelector>,
        #[serde(default)]
        #[schemars(schema_with = "schemaless_object")]
        pub template: PodTemplateSpec,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(schema_with = "schemaless_array")]
        pub volume_claim_templates: Option<Vec<PersistentVolumeClaim>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub service_name: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub pod_management_policy: Option<String>,
        #[serde(default)]
        pub update_strategy: StatefulSetUpdateStrategy,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub revision_history_limit: Option<i32>,
    }

    #[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
    #[serde(rename_all = "camelCase")]
    pub struct StatefulSetUpdateStrategy {
        #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
        pub type_: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub rolling_update: Option<RollingUpdateStatefulSetStrategy>,
    }

    #[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
    #[serde(rename_all = "camelCase")]
    pub struct RollingUpdateStatefulSetStrategy {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub partition: Option<i32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub max_unavailable: Option<IntOrString>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub pod_update_policy: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub paused: Option<bool>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub unordered_update: Option<UnorderedUpdateStrategy>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub in_place_update_strategy: Option<InPlaceUpdateStrategy>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub min_ready_seconds: Option<i32>,
    }

    #[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
    #[serde(rename_all = "camelCase")]
    pub struct UnorderedUpdateStrategy {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub priority_strategy: Option<UpdatePriorityStrategy>,
    }

    #[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
    #[serde(rename_all = "camelCase")]
    pub struct StatefulSetStatus {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub observed_generation: Option<i64>,
        #[serde(default)]
        pub replicas: i32,
        #[serde(default)]
        pub ready_replicas: i32,
        #[serde(default)]
        pub available_replicas: i32,
        #[serde(default)]
        pub current_replicas: i32,
        #[serde(default)]
        pub updated_replicas: i32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub current_revision: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub update_revision: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub collision_count: Option<i32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub conditions: Option<Vec<StatefulSetCondition>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub label_selector: Option<String>,
    }
}

/// OpenKruise's `ConvertTo`: every v1alpha1 field has a v1beta1 twin; the rest stay unset.
impl From<v1alpha1::StatefulSet> for StatefulSet {
    fn from(old: v1alpha1::StatefulSet) -> StatefulSet {
        let spec = old.spec;
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
        let status = old.status.map(|s| StatefulSetStatus {
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
            metadata: old.metadata,
            spec: StatefulSetSpec {
                replicas: spec.replicas,
                selector: spec.selector,
                template: spec.template,
                volume_claim_templates: spec.volume_claim_templates,
                service_name: spec.service_name,
                pod_management_policy: spec.pod_management_policy,
                update_strategy: StatefulSetUpdateStrategy {
                    type_: strategy.type_,
                    rolling_update,
                },
                revision_history_limit: spec.revision_history_limit,
                ..StatefulSetSpec::default()
            },
            status,
        }
    }
}

#[cfg(test)]
mod tests;
