//! The `v1beta1` CloneSet of OpenKruise's main branch (its next release stores it), served here
//! and converted to and from the `v1alpha1` CloneSet this project stores and works in
//! (`crate::convert::cloneset`): the update fields move under `updateStrategy.rollingUpdate`
//! with `podUpdatePolicy`, `scaleStrategy.enablePVCReuse` inverts `disablePVCReuse`, and two
//! v1alpha1 label and annotation settings are fields.

use k8s_openapi::api::core::v1::{PersistentVolumeClaim, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use super::CloneSetStatus;
use super::Lifecycle;
use crate::api::schema::{schemaless_array, schemaless_object};
use crate::api::sidecarset::{UpdatePriorityStrategy, UpdateScatterTerm};

/// `updateStrategy.type` values.
pub const ROLLING_UPDATE: &str = "RollingUpdate";
pub const ON_DELETE: &str = "OnDelete";

/// CloneSetSpec defines the desired state of CloneSet
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1beta1",
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

/// CloneSetScaleStrategy defines strategies for pods scale.
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
    /// EnablePVCReuse indicates whether CloneSet should reuse already existed PVC to rebuild a new pod.
    /// Default is false for v1beta1, which means CloneSet will NOT reuse PVC by default.
    /// For v1alpha1, the corresponding field DisablePVCReuse has default false (enable reuse) to maintain backward compatibility.
    #[serde(
        default,
        rename = "enablePVCReuse",
        skip_serializing_if = "Option::is_none"
    )]
    pub enable_pvc_reuse: Option<bool>,
    /// ExcludePreparingDelete indicates whether the CloneSet should calculate scale number excluding Pods in PreparingDelete state.
    /// Default is false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exclude_preparing_delete: Option<bool>,
}

/// CloneSetUpdateStrategy defines strategies for pods update.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CloneSetUpdateStrategy {
    /// Type indicates the type of the CloneSetUpdateStrategy.
    /// Default is RollingUpdate.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// RollingUpdate is used to communicate parameters when Type is RollingUpdateCloneSetStrategy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rolling_update: Option<RollingUpdateCloneSetStrategy>,
}

/// RollingUpdateCloneSetStrategy is used to communicate parameter for RollingUpdateCloneSetStrategy.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RollingUpdateCloneSetStrategy {
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
    /// PodUpdatePolicy indicates how pods should be updated
    /// Default value is "ReCreate"
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_update_policy: Option<String>,
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

/// InPlaceUpdateStrategy defines the strategies for in-place update.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InPlaceUpdateStrategy {
    /// GracePeriodSeconds is the timespan between set Pod status to not-ready and update images in Pod spec
    /// when in-place update a Pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grace_period_seconds: Option<i32>,
    /// ImagePreDownloadParallelism is the requested parallelism, it can be set to any non-negative value. If it is unspecified,
    /// it defaults to 1. If it is specified as 0, then the Job is effectively paused until it is increased.
    /// In v1alpha1, this corresponds to annotation: apps.kruise.io/image-predownload-parallelism
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_pre_download_parallelism: Option<IntOrString>,
    /// ImagePreDownloadTimeoutSeconds specifies the timeout of the pulling task.
    /// Defaults to 600
    /// In v1alpha1, this corresponds to annotation: apps.kruise.io/image-predownload-timeout-seconds
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_pre_download_timeout_seconds: Option<i32>,
    /// ImagePreDownloadMinUpdatedReadyPods is the minimum number of updated ready Pods
    /// required before starting image pre-download for the next batch.
    /// In v1alpha1, this corresponds to annotation: apps.kruise.io/image-predownload-min-updated-ready-pods
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_pre_download_min_updated_ready_pods: Option<i32>,
}

impl CloneSetScaleStrategy {
    /// Nothing set: left out of the JSON, so that a conversion from v1alpha1 (where these
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
