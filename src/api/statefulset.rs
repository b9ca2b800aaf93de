//! Advanced StatefulSet (`apps.kruise.io`): the storage version `v1beta1` at the top of this module
//! and the older `v1alpha1` in [`v1alpha1`], served and converted to `v1beta1`
//! (`crate::convert::statefulset`), as OpenKruise does.
//!
//! Enumerated fields (`podManagementPolicy`, `podUpdatePolicy`, retention policies, …) are plain
//! strings so an unknown value reaches the validator; the pod template and volume claim templates
//! are schemaless in the CRD, as in OpenKruise's.

use k8s_openapi::api::apps::v1::StatefulSetCondition;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::cloneset::{InPlaceUpdateStrategy, Lifecycle};
use super::schema::{schemaless_array, schemaless_object};
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

/// StatefulSetSpec defines the desired state of StatefulSet
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1beta1",
    kind = "StatefulSet",
    doc = "StatefulSet is the Schema for the statefulsets API",
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
    /// replicas is the desired number of replicas of the given Template.
    /// These are replicas in the sense that they are instantiations of the
    /// same Template, but individual replicas also have a consistent identity.
    /// If unspecified, defaults to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// selector is a label query over pods that should match the replica count.
    /// It must match the pod template's labels.
    /// More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    /// template is the object that describes the pod that will be created if
    /// insufficient replicas are detected. Each pod stamped out by the StatefulSet
    /// will fulfill this Template, but have a unique identity from the rest
    /// of the StatefulSet.
    #[serde(default)]
    #[schemars(schema_with = "schemaless_object")]
    pub template: PodTemplateSpec,
    /// volumeClaimTemplates is a list of claims that pods are allowed to reference.
    /// The StatefulSet controller is responsible for mapping network identities to
    /// claims in a way that maintains the identity of a pod. Every claim in
    /// this list must have at least one matching (by name) volumeMount in one
    /// container in the template. A claim in this list takes precedence over
    /// any volumes in the template, with the same name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schemaless_array")]
    pub volume_claim_templates: Option<Vec<PersistentVolumeClaim>>,
    /// VolumeClaimUpdateStrategy specifies the strategy for updating VolumeClaimTemplates within a StatefulSet.
    /// This field is currently only effective if the StatefulSetAutoResizePVCGate is enabled.
    #[serde(default, skip_serializing_if = "VolumeClaimUpdateStrategy::is_unset")]
    pub volume_claim_update_strategy: VolumeClaimUpdateStrategy,
    /// serviceName is the name of the service that governs this StatefulSet.
    /// This service must exist before the StatefulSet, and is responsible for
    /// the network identity of the set. Pods get DNS/hostnames that follow the
    /// pattern: pod-specific-string.serviceName.default.svc.cluster.local
    /// where "pod-specific-string" is managed by the StatefulSet controller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_name: Option<String>,
    /// podManagementPolicy controls how pods are created during initial scale up,
    /// when replacing pods on nodes, or when scaling down. The default policy is
    /// `OrderedReady`, where pods are created in increasing order (pod-0, then
    /// pod-1, etc) and the controller will wait until each pod is ready before
    /// continuing. When scaling down, the pods are removed in the opposite order.
    /// The alternative policy is `Parallel` which will create pods in parallel
    /// to match the desired scale without waiting, and on scale down will delete
    /// all pods at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_management_policy: Option<String>,
    /// updateStrategy indicates the StatefulSetUpdateStrategy that will be
    /// employed to update Pods in the StatefulSet when a revision is made to
    /// Template.
    #[serde(default)]
    pub update_strategy: StatefulSetUpdateStrategy,
    /// revisionHistoryLimit is the maximum number of revisions that will
    /// be maintained in the StatefulSet's revision history. The revision history
    /// consists of all revisions not represented by a currently applied
    /// StatefulSetSpec version. The default value is 10.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_history_limit: Option<i32>,
    /// reserveOrdinals controls the ordinal numbers that should be reserved, and the replicas
    /// will always be the expectation number of running Pods.
    /// For a sts with replicas=3 and its Pods in [0, 1, 2]:
    /// - If you want to migrate Pod-1 and reserve this ordinal, just set spec.reserveOrdinal to [1].
    ///   Then controller will delete Pod-1 and create Pod-3 (existing Pods will be [0, 2, 3])
    /// - If you just want to delete Pod-1, you should set spec.reserveOrdinal to [1] and spec.replicas to 2.
    ///   Then controller will delete Pod-1 (existing Pods will be [0, 2])
    /// You can also use ranges along with numbers, such as [1, 3-5], which is a shortcut for [1, 3, 4, 5].
    // OpenKruise's description, verbatim (its list runs into the next line).
    #[allow(clippy::doc_lazy_continuation)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reserve_ordinals: Option<Vec<IntOrString>>,
    /// Lifecycle defines the lifecycle hooks for Pods pre-delete, in-place update.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifecycle: Option<Lifecycle>,
    /// scaleStrategy indicates the StatefulSetScaleStrategy that will be
    /// employed to scale Pods in the StatefulSet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_strategy: Option<StatefulSetScaleStrategy>,
    /// PersistentVolumeClaimRetentionPolicy describes the policy used for PVCs created from
    /// the StatefulSet VolumeClaimTemplates. This requires the
    /// StatefulSetAutoDeletePVC feature gate to be enabled, which is alpha.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persistent_volume_claim_retention_policy:
        Option<StatefulSetPersistentVolumeClaimRetentionPolicy>,
    /// ordinals controls the numbering of replica indices in a StatefulSet. The
    /// default ordinals behavior assigns a "0" index to the first replica and
    /// increments the index by one for each additional replica requested. Using
    /// the ordinals field requires the StatefulSetStartOrdinal feature gate to be
    /// enabled, which is beta.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ordinals: Option<StatefulSetOrdinals>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatefulSetUpdateStrategy {
    /// Type indicates the type of the StatefulSetUpdateStrategy.
    /// Default is RollingUpdate.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// RollingUpdate is used to communicate parameters when Type is RollingUpdateStatefulSetStrategyType.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rolling_update: Option<RollingUpdateStatefulSetStrategy>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RollingUpdateStatefulSetStrategy {
    /// Partition indicates the number of pods the StatefulSet should be partitioned by default.
    ///   - It means controller will update $(replicas - partition) number of pod.
    /// Default value is 0.
    // OpenKruise's description, verbatim (its list runs into the next line).
    #[allow(clippy::doc_lazy_continuation)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<i32>,
    /// The maximum number of pods that can be unavailable during the update.
    /// Value can be an absolute number (ex: 5) or a percentage of desired pods (ex: 10%).
    /// Absolute number is calculated from percentage by rounding down.
    /// Also, maxUnavailable can just be allowed to work with Parallel podManagementPolicy.
    /// Defaults to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    /// PodUpdatePolicy indicates how pods should be updated
    /// Default value is "ReCreate"
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_update_policy: Option<String>,
    /// Paused indicates that the StatefulSet is paused.
    /// Default value is false
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<bool>,
    /// UnorderedUpdate contains strategies for non-ordered update.
    /// If it is not nil, pods will be updated with non-ordered sequence.
    /// Noted that UnorderedUpdate can only be allowed to work with Parallel podManagementPolicy
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unordered_update: Option<UnorderedUpdateStrategy>,
    /// InPlaceUpdateStrategy contains strategies for in-place update.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_place_update_strategy: Option<InPlaceUpdateStrategy>,
    /// MinReadySeconds indicates how long will the pod be considered ready after it's updated.
    /// MinReadySeconds works with both OrderedReady and Parallel podManagementPolicy.
    /// It affects the pod scale up speed when the podManagementPolicy is set to be OrderedReady.
    /// Combined with MaxUnavailable, it affects the pod update speed regardless of podManagementPolicy.
    /// Default value is 0, max is 300.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_ready_seconds: Option<i32>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnorderedUpdateStrategy {
    /// Priorities are the rules for calculating the priority of updating pods.
    /// Each pod to be updated, will pass through these terms and get a sum of weights.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority_strategy: Option<UpdatePriorityStrategy>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatefulSetScaleStrategy {
    /// The maximum number of pods that can be unavailable during scaling.
    /// Value can be an absolute number (ex: 5) or a percentage of desired pods (ex: 10%).
    /// Absolute number is calculated from percentage by rounding down.
    /// It can just be allowed to work with Parallel podManagementPolicy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatefulSetPersistentVolumeClaimRetentionPolicy {
    /// WhenDeleted specifies what happens to PVCs created from StatefulSet
    /// VolumeClaimTemplates when the StatefulSet is deleted. The default policy
    /// of `Retain` causes PVCs to not be affected by StatefulSet deletion. The
    /// `Delete` policy causes those PVCs to be deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when_deleted: Option<String>,
    /// WhenScaled specifies what happens to PVCs created from StatefulSet
    /// VolumeClaimTemplates when the StatefulSet is scaled down. The default
    /// policy of `Retain` causes PVCs to not be affected by a scaledown. The
    /// `Delete` policy causes the associated PVCs for any excess pods above
    /// the replica count to be deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when_scaled: Option<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct StatefulSetOrdinals {
    /// start is the number representing the first replica's index. It may be used
    /// to number replicas from an alternate index (eg: 1-indexed) over the default
    /// 0-indexed names, or to orchestrate progressive movement of replicas from
    /// one StatefulSet to another.
    /// If set, replica indices will be in the range:
    ///   [.spec.ordinals.start, .spec.ordinals.start + .spec.replicas).
    /// If unset, defaults to 0. Replica indices will be in the range:
    ///   [0, .spec.replicas).
    #[serde(default)]
    pub start: i32,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct VolumeClaimUpdateStrategy {
    /// Type specifies the type of update strategy, possible values include:
    /// OnPodRollingUpdateVolumeClaimUpdateStrategyType: Apply the update strategy during pod rolling updates.
    /// OnPVCDeleteVolumeClaimUpdateStrategyType: Apply the update strategy when a PersistentVolumeClaim is deleted.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
}

impl VolumeClaimUpdateStrategy {
    /// Nothing set: the field is left out of the JSON, as Go's `omitempty` leaves it.
    pub fn is_unset(&self) -> bool {
        self.type_.is_none()
    }
}

/// StatefulSetStatus defines the observed state of StatefulSet
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatefulSetStatus {
    /// observedGeneration is the most recent generation observed for this StatefulSet. It corresponds to the
    /// StatefulSet's generation, which is updated on mutation by the API Server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// replicas is the number of Pods created by the StatefulSet controller.
    #[serde(default)]
    pub replicas: i32,
    /// readyReplicas is the number of Pods created by the StatefulSet controller that have a Ready Condition.
    #[serde(default)]
    pub ready_replicas: i32,
    /// AvailableReplicas is the number of Pods created by the StatefulSet controller that have been ready for
    /// minReadySeconds.
    #[serde(default)]
    pub available_replicas: i32,
    /// currentReplicas is the number of Pods created by the StatefulSet controller from the StatefulSet version
    /// indicated by currentRevision.
    #[serde(default)]
    pub current_replicas: i32,
    /// updatedReplicas is the number of Pods created by the StatefulSet controller from the StatefulSet version
    /// indicated by updateRevision.
    #[serde(default)]
    pub updated_replicas: i32,
    /// updatedReadyReplicas is the number of updated Pods created by the StatefulSet controller that have a Ready Condition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_ready_replicas: Option<i32>,
    /// updatedAvailableReplicas is the number of updated Pods created by the StatefulSet controller that have a Ready condition
    /// for atleast minReadySeconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_available_replicas: Option<i32>,
    /// currentRevision, if not empty, indicates the version of the StatefulSet used to generate Pods in the
    /// sequence [0,currentReplicas).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_revision: Option<String>,
    /// updateRevision, if not empty, indicates the version of the StatefulSet used to generate Pods in the sequence
    /// [replicas-updatedReplicas,replicas)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_revision: Option<String>,
    /// collisionCount is the count of hash collisions for the StatefulSet. The StatefulSet controller
    /// uses this field as a collision avoidance mechanism when it needs to create the name for the
    /// newest ControllerRevision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collision_count: Option<i32>,
    /// Represents the latest available observations of a statefulset's current state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<StatefulSetCondition>>,
    /// LabelSelector is label selectors for query over pods that should match the replica count used by HPA.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<String>,
    /// VolumeClaims represents the status of compatibility between existing PVCs
    /// and their respective templates. It tracks whether the PersistentVolumeClaims have been updated
    /// to match any changes made to the volumeClaimTemplates, ensuring synchronization
    /// between the defined templates and the actual PersistentVolumeClaims in use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_claims: Option<Vec<VolumeClaimStatus>>,
}

/// How many replicas already use PVCs compatible with one volume claim template.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VolumeClaimStatus {
    /// VolumeClaimName is the name of the volume claim.
    /// This is a unique identifier used to reference a specific volume claim.
    #[serde(default)]
    pub volume_claim_name: String,
    /// CompatibleReplicas is the number of replicas currently compatible with the volume claim.
    /// It indicates how many replicas can function properly, being compatible with this volume claim.
    /// Compatibility is determined by whether the PVC spec storage requests are greater than or equal to the template spec storage requests
    #[serde(default)]
    pub compatible_replicas: i32,
    /// CompatibleReadyReplicas is the number of replicas that are both ready and compatible with the volume claim.
    /// It highlights that these replicas are not only compatible but also ready to be put into service immediately.
    /// Compatibility is determined by whether the pvc spec storage requests are greater than or equal to the template spec storage requests
    /// The "ready" status is determined by whether the PVC status capacity is greater than or equal to the PVC spec storage requests.
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

    use crate::api::cloneset::InPlaceUpdateStrategy;
    use crate::api::schema::{schemaless_array, schemaless_object};
    use crate::api::sidecarset::UpdatePriorityStrategy;

    /// StatefulSetSpec defines the desired state of StatefulSet
    #[derive(
        CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema,
    )]
    #[kube(
        group = "apps.kruise.io",
        version = "v1alpha1",
        kind = "StatefulSet",
        doc = "StatefulSet is the Schema for the statefulsets API",
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
        /// replicas is the desired number of replicas of the given Template.
        /// These are replicas in the sense that they are instantiations of the
        /// same Template, but individual replicas also have a consistent identity.
        /// If unspecified, defaults to 1.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub replicas: Option<i32>,
        /// selector is a label query over pods that should match the replica count.
        /// It must match the pod template's labels.
        /// More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub selector: Option<LabelSelector>,
        /// template is the object that describes the pod that will be created if
        /// insufficient replicas are detected. Each pod stamped out by the StatefulSet
        /// will fulfill this Template, but have a unique identity from the rest
        /// of the StatefulSet.
        #[serde(default)]
        #[schemars(schema_with = "schemaless_object")]
        pub template: PodTemplateSpec,
        /// volumeClaimTemplates is a list of claims that pods are allowed to reference.
        /// The StatefulSet controller is responsible for mapping network identities to
        /// claims in a way that maintains the identity of a pod. Every claim in
        /// this list must have at least one matching (by name) volumeMount in one
        /// container in the template. A claim in this list takes precedence over
        /// any volumes in the template, with the same name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(schema_with = "schemaless_array")]
        pub volume_claim_templates: Option<Vec<PersistentVolumeClaim>>,
        /// serviceName is the name of the service that governs this StatefulSet.
        /// This service must exist before the StatefulSet, and is responsible for
        /// the network identity of the set. Pods get DNS/hostnames that follow the
        /// pattern: pod-specific-string.serviceName.default.svc.cluster.local
        /// where "pod-specific-string" is managed by the StatefulSet controller.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub service_name: Option<String>,
        /// podManagementPolicy controls how pods are created during initial scale up,
        /// when replacing pods on nodes, or when scaling down. The default policy is
        /// `OrderedReady`, where pods are created in increasing order (pod-0, then
        /// pod-1, etc) and the controller will wait until each pod is ready before
        /// continuing. When scaling down, the pods are removed in the opposite order.
        /// The alternative policy is `Parallel` which will create pods in parallel
        /// to match the desired scale without waiting, and on scale down will delete
        /// all pods at once.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub pod_management_policy: Option<String>,
        /// updateStrategy indicates the StatefulSetUpdateStrategy that will be
        /// employed to update Pods in the StatefulSet when a revision is made to
        /// Template.
        #[serde(default)]
        pub update_strategy: StatefulSetUpdateStrategy,
        /// revisionHistoryLimit is the maximum number of revisions that will
        /// be maintained in the StatefulSet's revision history. The revision history
        /// consists of all revisions not represented by a currently applied
        /// StatefulSetSpec version. The default value is 10.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub revision_history_limit: Option<i32>,
    }

    #[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
    #[serde(rename_all = "camelCase")]
    pub struct StatefulSetUpdateStrategy {
        /// Type indicates the type of the StatefulSetUpdateStrategy.
        /// Default is RollingUpdate.
        #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
        pub type_: Option<String>,
        /// RollingUpdate is used to communicate parameters when Type is RollingUpdateStatefulSetStrategyType.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub rolling_update: Option<RollingUpdateStatefulSetStrategy>,
    }

    #[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
    #[serde(rename_all = "camelCase")]
    pub struct RollingUpdateStatefulSetStrategy {
        /// Partition indicates the ordinal at which the StatefulSet should be partitioned by default.
        /// But if unorderedUpdate has been set:
        ///   - Partition indicates the number of pods with non-updated revisions when rolling update.
        ///   - It means controller will update $(replicas - partition) number of pod.
        /// Default value is 0.
        // OpenKruise's description, verbatim (its list runs into the next line).
        #[allow(clippy::doc_lazy_continuation)]
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub partition: Option<i32>,
        /// The maximum number of pods that can be unavailable during the update.
        /// Value can be an absolute number (ex: 5) or a percentage of desired pods (ex: 10%).
        /// Absolute number is calculated from percentage by rounding down.
        /// Also, maxUnavailable can just be allowed to work with Parallel podManagementPolicy.
        /// Defaults to 1.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub max_unavailable: Option<IntOrString>,
        /// PodUpdatePolicy indicates how pods should be updated
        /// Default value is "ReCreate"
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub pod_update_policy: Option<String>,
        /// Paused indicates that the StatefulSet is paused.
        /// Default value is false
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub paused: Option<bool>,
        /// UnorderedUpdate contains strategies for non-ordered update.
        /// If it is not nil, pods will be updated with non-ordered sequence.
        /// Noted that UnorderedUpdate can only be allowed to work with Parallel podManagementPolicy
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub unordered_update: Option<UnorderedUpdateStrategy>,
        /// InPlaceUpdateStrategy contains strategies for in-place update.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub in_place_update_strategy: Option<InPlaceUpdateStrategy>,
        /// MinReadySeconds indicates how long will the pod be considered ready after it's updated.
        /// MinReadySeconds works with both OrderedReady and Parallel podManagementPolicy.
        /// It affects the pod scale up speed when the podManagementPolicy is set to be OrderedReady.
        /// Combined with MaxUnavailable, it affects the pod update speed regardless of podManagementPolicy.
        /// Default value is 0, max is 300.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub min_ready_seconds: Option<i32>,
    }

    #[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
    #[serde(rename_all = "camelCase")]
    pub struct UnorderedUpdateStrategy {
        /// Priorities are the rules for calculating the priority of updating pods.
        /// Each pod to be updated, will pass through these terms and get a sum of weights.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub priority_strategy: Option<UpdatePriorityStrategy>,
    }

    /// StatefulSetStatus defines the observed state of StatefulSet
    #[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
    #[serde(rename_all = "camelCase")]
    pub struct StatefulSetStatus {
        /// observedGeneration is the most recent generation observed for this StatefulSet. It corresponds to the
        /// StatefulSet's generation, which is updated on mutation by the API Server.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub observed_generation: Option<i64>,
        /// replicas is the number of Pods created by the StatefulSet controller.
        #[serde(default)]
        pub replicas: i32,
        /// readyReplicas is the number of Pods created by the StatefulSet controller that have a Ready Condition.
        #[serde(default)]
        pub ready_replicas: i32,
        /// AvailableReplicas is the number of Pods created by the StatefulSet controller that have been ready for
        /// minReadySeconds.
        #[serde(default)]
        pub available_replicas: i32,
        /// currentReplicas is the number of Pods created by the StatefulSet controller from the StatefulSet version
        /// indicated by currentRevision.
        #[serde(default)]
        pub current_replicas: i32,
        /// updatedReplicas is the number of Pods created by the StatefulSet controller from the StatefulSet version
        /// indicated by updateRevision.
        #[serde(default)]
        pub updated_replicas: i32,
        /// currentRevision, if not empty, indicates the version of the StatefulSet used to generate Pods in the
        /// sequence [0,currentReplicas).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub current_revision: Option<String>,
        /// updateRevision, if not empty, indicates the version of the StatefulSet used to generate Pods in the sequence
        /// [replicas-updatedReplicas,replicas)
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub update_revision: Option<String>,
        /// collisionCount is the count of hash collisions for the StatefulSet. The StatefulSet controller
        /// uses this field as a collision avoidance mechanism when it needs to create the name for the
        /// newest ControllerRevision.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub collision_count: Option<i32>,
        /// Represents the latest available observations of a statefulset's current state.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub conditions: Option<Vec<StatefulSetCondition>>,
        /// LabelSelector is label selectors for query over pods that should match the replica count used by HPA.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub label_selector: Option<String>,
    }
}

#[cfg(test)]
pub(crate) mod tests;
