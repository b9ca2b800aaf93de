//! `CloneSet` (`apps.kruise.io/v1alpha1`, the version this project stores and works in; the
//! `v1beta1` of OpenKruise's main branch is in [`v1beta1`]), field for field as OpenKruise
//! defines it, plus the pieces OpenKruise shares between its workloads (`apps/pub`: lifecycle
//! hooks and in-place update settings), which the Advanced StatefulSet and DaemonSet types reuse
//! from here.
//!
//! Enumerated fields (`updateStrategy.type`, …) are plain strings on purpose: an unknown value must
//! reach the validator and be refused with a message naming it, not fail to decode. The pod
//! template and the volume claim templates are schemaless in the CRD, as in OpenKruise's, so the
//! apiserver never prunes pod fields newer than the Kubernetes version these types were built for.

use std::collections::BTreeMap;

use super::schema::{schemaless_array, schemaless_object};
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, OwnerReference, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use schemars::JsonSchema;
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

/// CloneSetSpec defines the desired state of CloneSet
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1alpha1",
    kind = "CloneSet",
    doc = "CloneSet is the Schema for the clonesets API",
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
    /// Replicas is the desired number of replicas of the given Template.
    /// These are replicas in the sense that they are instantiations of the
    /// same Template.
    /// If unspecified, defaults to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Selector is a label query over pods that should match the replica count.
    /// It must match the pod template's labels.
    /// More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    /// Template describes the pods that will be created.
    #[serde(default)]
    #[schemars(schema_with = "schemaless_object")]
    pub template: PodTemplateSpec,
    /// VolumeClaimTemplates is a list of claims that pods are allowed to reference.
    /// Note that PVC will be deleted when its pod has been deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schemaless_array")]
    pub volume_claim_templates: Option<Vec<PersistentVolumeClaim>>,
    /// ScaleStrategy indicates the ScaleStrategy that will be employed to
    /// create and delete Pods in the CloneSet.
    #[serde(default, skip_serializing_if = "CloneSetScaleStrategy::is_unset")]
    pub scale_strategy: CloneSetScaleStrategy,
    /// UpdateStrategy indicates the UpdateStrategy that will be employed to
    /// update Pods in the CloneSet when a revision is made to Template.
    #[serde(default, skip_serializing_if = "CloneSetUpdateStrategy::is_unset")]
    pub update_strategy: CloneSetUpdateStrategy,
    /// RevisionHistoryLimit is the maximum number of revisions that will
    /// be maintained in the CloneSet's revision history. The revision history
    /// consists of all revisions not represented by a currently applied
    /// CloneSetSpec version. The default value is 10.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_history_limit: Option<i32>,
    /// Minimum number of seconds for which a newly created pod should be ready
    /// without any of its container crashing, for it to be considered available.
    /// Defaults to 0 (pod will be considered available as soon as it is ready)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_ready_seconds: Option<i32>,
    /// Lifecycle defines the lifecycle hooks for Pods pre-available(pre-normal), pre-delete, in-place update.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifecycle: Option<Lifecycle>,
    /// ProgressDeadlineSeconds specifies the maximum time for the CloneSet to reach available
    /// or paused state due to partitioning. The controller will set a ProgressDeadlineExceeded
    /// condition when timeout occurs, while excluding paused state duration from the deadline calculation.
    /// This field is optional. If not set, the controller will not track progress deadlines or add the condition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress_deadline_seconds: Option<i32>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CloneSetScaleStrategy {
    /// PodsToDelete is the names of Pod should be deleted.
    /// Note that this list will be truncated for non-existing pod names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pods_to_delete: Option<Vec<String>>,
    /// The maximum number of pods that can be unavailable for scaled pods.
    /// This field can control the changes rate of replicas for CloneSet so as to minimize the impact for users' service.
    /// The scale will fail if the number of unavailable pods were greater than this MaxUnavailable at scaling up.
    /// MaxUnavailable works only when scaling up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    /// Indicate if cloneSet will reuse already existed pvc to
    /// rebuild a new pod
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
    /// Type indicates the type of the CloneSetUpdateStrategy.
    /// Default is ReCreate.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// Partition is the desired number of pods in old revisions.
    /// Value can be an absolute number (ex: 5) or a percentage of desired pods (ex: 10%).
    /// Absolute number is calculated from percentage by rounding up by default.
    /// It means when partition is set during pods updating, (replicas - partition value) number of pods will be updated.
    /// Default value is 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<IntOrString>,
    /// The maximum number of pods that can be unavailable during update or scale.
    /// Value can be an absolute number (ex: 5) or a percentage of desired pods (ex: 10%).
    /// Absolute number is calculated from percentage by rounding up by default.
    /// When maxSurge > 0, absolute number is calculated from percentage by rounding down.
    /// Defaults to 20%.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    /// The maximum number of pods that can be scheduled above the desired replicas during update or specified delete.
    /// Value can be an absolute number (ex: 5) or a percentage of desired pods (ex: 10%).
    /// Absolute number is calculated from percentage by rounding up.
    /// Defaults to 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_surge: Option<IntOrString>,
    /// Paused indicates that the CloneSet is paused.
    /// Default value is false
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<bool>,
    /// Priorities are the rules for calculating the priority of updating pods.
    /// Each pod to be updated, will pass through these terms and get a sum of weights.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority_strategy: Option<UpdatePriorityStrategy>,
    /// ScatterStrategy defines the scatter rules to make pods been scattered when update.
    /// This will avoid pods with the same key-value to be updated in one batch.
    /// - Note that pods will be scattered after priority sort. So, although priority strategy and scatter strategy can be applied together, we suggest to use either one of them.
    /// - If scatterStrategy is used, we suggest to just use one term. Otherwise, the update order can be hard to understand.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scatter_strategy: Option<Vec<UpdateScatterTerm>>,
    /// InPlaceUpdateStrategy contains strategies for in-place update.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_place_update_strategy: Option<InPlaceUpdateStrategy>,
}

/// How an in-place update proceeds (OpenKruise `apps/pub`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InPlaceUpdateStrategy {
    /// GracePeriodSeconds is the timespan between set Pod status to not-ready and update images in Pod spec
    /// when in-place update a Pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grace_period_seconds: Option<i32>,
}

/// Hooks around a pod's life (OpenKruise `apps/pub`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Lifecycle {
    /// PreDelete is the hook before Pod to be deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_delete: Option<LifecycleHook>,
    /// InPlaceUpdate is the hook before Pod to update and after Pod has been updated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_place_update: Option<LifecycleHook>,
    /// PreNormal is the hook after Pod to be created and ready to be Normal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_normal: Option<LifecycleHook>,
}

/// A pod is "hooked" while it carries any of these labels (with these values) or finalizers.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LifecycleHook {
    /// Labels that must be on the pod, with these values, for the hook to hold it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels_handler: Option<BTreeMap<String, String>>,
    /// Finalizers that must be on the pod for the hook to hold it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finalizers_handler: Option<Vec<String>>,
    /// MarkPodNotReady = true means:
    /// - Pod will be set to 'NotReady' at preparingDelete/preparingUpdate state.
    /// - Pod will be restored to 'Ready' at Updated state if it was set to 'NotReady' at preparingUpdate state.
    /// Currently, MarkPodNotReady only takes effect on InPlaceUpdate & PreDelete hook.
    /// Default to false.
    // OpenKruise's description, verbatim (its list runs into the next line).
    #[allow(clippy::doc_lazy_continuation)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mark_pod_not_ready: Option<bool>,
}

/// CloneSetStatus defines the observed state of CloneSet
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CloneSetStatus {
    /// ObservedGeneration is the most recent generation observed for this CloneSet. It corresponds to the
    /// CloneSet's generation, which is updated on mutation by the API Server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Replicas is the number of Pods created by the CloneSet controller.
    #[serde(default)]
    pub replicas: i32,
    /// ReadyReplicas is the number of Pods created by the CloneSet controller that have a Ready Condition.
    #[serde(default)]
    pub ready_replicas: i32,
    /// AvailableReplicas is the number of Pods created by the CloneSet controller that have a Ready Condition for at least minReadySeconds.
    #[serde(default)]
    pub available_replicas: i32,
    /// UpdatedReplicas is the number of Pods created by the CloneSet controller from the CloneSet version
    /// indicated by updateRevision.
    #[serde(default)]
    pub updated_replicas: i32,
    /// UpdatedReadyReplicas is the number of Pods created by the CloneSet controller from the CloneSet version
    /// indicated by updateRevision and have a Ready Condition.
    #[serde(default)]
    pub updated_ready_replicas: i32,
    /// UpdatedAvailableReplicas is the number of Pods created by the CloneSet controller from the CloneSet version
    /// indicated by updateRevision and have a Ready Condition for at least minReadySeconds.
    /// Always written, 0 included, so that a merge patch can lower it to 0.
    #[serde(default)]
    pub updated_available_replicas: i32,
    /// ExpectedUpdatedReplicas is the number of Pods that should be updated by CloneSet controller.
    /// This field is calculated via Replicas - Partition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_updated_replicas: Option<i32>,
    /// UpdateRevision, if not empty, indicates the latest revision of the CloneSet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_revision: Option<String>,
    /// currentRevision, if not empty, indicates the current revision version of the CloneSet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_revision: Option<String>,
    /// CollisionCount is the count of hash collisions for the CloneSet. The CloneSet controller
    /// uses this field as a collision avoidance mechanism when it needs to create the name for the
    /// newest ControllerRevision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collision_count: Option<i32>,
    /// Conditions represents the latest available observations of a CloneSet's current state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<CloneSetCondition>>,
    /// LabelSelector is label selectors for query over pods that should match the replica count used by HPA.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CloneSetCondition {
    /// Type of CloneSet condition.
    #[serde(default, rename = "type")]
    pub type_: String,
    /// Status of the condition, one of True, False, Unknown.
    #[serde(default)]
    pub status: String,
    /// Last time the condition was set (the `Progressing` deadline counts from here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_update_time: Option<Time>,
    /// Last time the condition transitioned from one status to another.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    /// The reason for the condition's last transition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// A human readable message indicating details about the transition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl CloneSetScaleStrategy {
    /// Nothing set: left out of the JSON, so that a conversion from v1beta1 (where these
    /// settings are spelled differently) does not add an empty `scaleStrategy: {}`.
    pub fn is_unset(&self) -> bool {
        *self == Self::default()
    }
}

impl CloneSetUpdateStrategy {
    /// Nothing set: left out of the JSON, as [`CloneSetScaleStrategy::is_unset`].
    pub fn is_unset(&self) -> bool {
        *self == Self::default()
    }
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

pub mod v1beta1;

#[cfg(test)]
mod tests;
