//! `CloneSet` (`apps.kruise.io/v1alpha1`), field for field as OpenKruise defines it, plus the
//! pieces OpenKruise shares between its workloads (`apps/pub`: lifecycle hooks and in-place
//! update settings), which the Advanced StatefulSet and DaemonSet types reuse from here.
//!
//! Enumerated fields (`updateStrategy.type`, …) are plain strings on purpose: an unknown value must
//! reach the validator and be refused with a message naming it, not fail to decode. The pod
//! template and the volume claim templates are schemaless in the CRD, as in OpenKruise's, so the
//! apiserver never prunes pod fields newer than the Kubernetes version these types were built for.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{PersistentVolumeClaim, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, OwnerReference, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

use super::sidecarset::{UpdatePriorityStrategy, UpdateScatterTerm};

/// `updateStrategy.type` values of a v1alpha1 CloneSet.
pub const RECREATE: &str = "ReCreate";
pub const IN_PLACE_IF_POSSIBLE: &str = "InPlaceIfPossible";
pub const IN_PLACE_ONLY: &str = "InPlaceOnly";

/// Whether `owner` names a CloneSet of this API group (any version).
pub fn names_cloneset(owner: &OwnerReference) -> bool {
    owner.kind == "CloneSet" && owner.api_version.split('/').next() == Some(super::keys::GROUP)
}

/// Desired state of a CloneSet: a set of interchangeable pods, updated in place when possible.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1alpha1",
    kind = "CloneSet",
    plural = "clonesets",
    shortname = "clone",
    namespaced,
    status = "CloneSetStatus",
    derive = "PartialEq",
    derive = "Default",
    scale = r#"{"specReplicasPath":".spec.replicas","statusReplicasPath":".status.replicas","labelSelectorPath":".status.labelSelector"}"#,
    printcolumn = r#"{"name":"DESIRED","type":"integer","description":"The desired number of pods.","jsonPath":".spec.replicas"}"#,
    printcolumn = r#"{"name":"UPDATED","type":"integer","description":"The number of pods updated.","jsonPath":".status.updatedReplicas"}"#,
    printcolumn = r#"{"name":"UPDATED_READY","type":"integer","description":"The number of pods updated and ready.","jsonPath":".status.updatedReadyReplicas"}"#,
    printcolumn = r#"{"name":"UPDATED_AVAILABLE","type":"integer","description":"The number of pods updated and available.","jsonPath":".status.updatedAvailableReplicas"}"#,
    printcolumn = r#"{"name":"READY","type":"integer","description":"The number of pods ready.","jsonPath":".status.readyReplicas"}"#,
    printcolumn = r#"{"name":"TOTAL","type":"integer","description":"The number of currently all pods.","jsonPath":".status.replicas"}"#,
    printcolumn = r#"{"name":"AGE","type":"date","description":"CreationTimestamp is a timestamp representing the server time when this object was created.","jsonPath":".metadata.creationTimestamp"}"#,
    printcolumn = r#"{"name":"CONTAINERS","type":"string","priority":1,"description":"The containers of currently cloneset.","jsonPath":".spec.template.spec.containers[*].name"}"#,
    printcolumn = r#"{"name":"IMAGES","type":"string","priority":1,"description":"The images of currently cloneset.","jsonPath":".spec.template.spec.containers[*].image"}"#,
    printcolumn = r#"{"name":"SELECTOR","type":"string","priority":1,"description":"The selector of currently cloneset.","jsonPath":".status.labelSelector"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct CloneSetSpec {
    /// Desired number of pods; the defaulting webhook sets 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Must match the template's labels; required and non-empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    #[serde(default)]
    #[schemars(schema_with = "schemaless_object")]
    pub template: PodTemplateSpec,
    /// Claims created per pod (and deleted with it), mountable by name from the template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schemaless_array")]
    pub volume_claim_templates: Option<Vec<PersistentVolumeClaim>>,
    #[serde(default)]
    pub scale_strategy: CloneSetScaleStrategy,
    #[serde(default)]
    pub update_strategy: CloneSetUpdateStrategy,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_history_limit: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_ready_seconds: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifecycle: Option<Lifecycle>,
    /// Seconds an update may make no progress before it is reported as failed (OpenKruise HEAD).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress_deadline_seconds: Option<i32>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CloneSetScaleStrategy {
    /// Pods to delete first when scaling (by name); must belong to this CloneSet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pods_to_delete: Option<Vec<String>>,
    /// Limit on unavailable pods while scaling up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    /// `true`: never reuse an existing PVC for a new pod.
    #[serde(
        default,
        rename = "disablePVCReuse",
        skip_serializing_if = "Option::is_none"
    )]
    pub disable_pvc_reuse: Option<bool>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CloneSetUpdateStrategy {
    /// `ReCreate` (default), `InPlaceIfPossible` or `InPlaceOnly`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// Pods (number or percentage of replicas, rounded up) kept at the old revision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<IntOrString>,
    /// Defaults to `20%`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    /// Defaults to 0; must stay 0 for `InPlaceOnly`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_surge: Option<IntOrString>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority_strategy: Option<UpdatePriorityStrategy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scatter_strategy: Option<Vec<UpdateScatterTerm>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_place_update_strategy: Option<InPlaceUpdateStrategy>,
}

/// How an in-place update proceeds (OpenKruise `apps/pub`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InPlaceUpdateStrategy {
    /// Seconds between marking a pod not-ready and patching its images.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grace_period_seconds: Option<i32>,
}

/// Hooks around a pod's life (OpenKruise `apps/pub`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Lifecycle {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_delete: Option<LifecycleHook>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_place_update: Option<LifecycleHook>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_normal: Option<LifecycleHook>,
}

/// A pod is "hooked" while it carries any of these labels (with these values) or finalizers.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LifecycleHook {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels_handler: Option<BTreeMap<String, String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finalizers_handler: Option<Vec<String>>,
    /// Mark the pod NotReady (through the `KruisePodReady` gate) while the hook holds it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mark_pod_not_ready: Option<bool>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CloneSetStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    #[serde(default)]
    pub replicas: i32,
    #[serde(default)]
    pub ready_replicas: i32,
    #[serde(default)]
    pub available_replicas: i32,
    #[serde(default)]
    pub updated_replicas: i32,
    #[serde(default)]
    pub updated_ready_replicas: i32,
    /// Pods at the update revision that have been ready for at least `minReadySeconds`
    /// (OpenKruise HEAD). Always written, 0 included, so a merge patch can lower it to 0.
    #[serde(default)]
    pub updated_available_replicas: i32,
    /// `replicas - partition`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_updated_replicas: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_revision: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_revision: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collision_count: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<CloneSetCondition>>,
    /// The selector as a string, for the scale subresource (HPA).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CloneSetCondition {
    /// `FailedScale`, `FailedUpdate` or `Progressing`.
    #[serde(default, rename = "type")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    #[serde(default)]
    pub status: String,
    /// Last time the condition was set (the `Progressing` deadline counts from here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_update_time: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl CloneSet {
    pub fn update_type(&self) -> &str {
        self.spec.update_strategy.type_.as_deref().unwrap_or("")
    }

    pub fn pods_to_delete(&self) -> &[String] {
        self.spec
            .scale_strategy
            .pods_to_delete
            .as_deref()
            .unwrap_or(&[])
    }
}

/// Schema of an object the apiserver must keep as sent (`x-kubernetes-preserve-unknown-fields`),
/// as OpenKruise declares pod templates.
pub(crate) fn schemaless_object(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": true
    })
}

/// A list of schemaless objects (volume claim templates).
pub(crate) fn schemaless_array(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "array",
        "items": {
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": true
        }
    })
}

#[cfg(test)]
mod tests;
