//! `SidecarSet` (`apps.kruise.io`): the storage version `v1beta1` at the top of this module, the
//! type every part of the project works in, and the served-only `v1alpha1` in [`v1alpha1`], which
//! differs in `spec.namespace` and `spec.customVersion` only (see `crate::convert::sidecarset`).
//! Field for field as OpenKruise v1.9.0 defines them; both versions share every type below the
//! spec, so a sidecar container encodes (and hashes) the same in both.
//!
//! Enumerated fields (`podInjectPolicy`, `shareVolumePolicy.type`, …) are plain strings on purpose:
//! an unknown value must reach the validator and be refused with a message naming it, not fail to
//! decode with a serde error.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, LocalObjectReference, ObjectFieldSelector, Volume};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, LabelSelector};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::keys;
use super::schema::{schemaless_array, schemaless_object};

/// SidecarSetSpec defines the desired state of SidecarSet
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1beta1",
    kind = "SidecarSet",
    doc = "SidecarSet is the Schema for the sidecarsets API",
    plural = "sidecarsets",
    shortname = "sidecar",
    status = "SidecarSetStatus",
    derive = "PartialEq",
    printcolumn = r#"{"name":"MATCHED","type":"integer","description":"The number of pods matched.","jsonPath":".status.matchedPods"}"#,
    printcolumn = r#"{"name":"UPDATED","type":"integer","description":"The number of pods matched and updated.","jsonPath":".status.updatedPods"}"#,
    printcolumn = r#"{"name":"READY","type":"integer","description":"The number of pods matched and ready.","jsonPath":".status.readyPods"}"#,
    printcolumn = r#"{"name":"AGE","type":"date","description":"CreationTimestamp is a timestamp representing the server time when this object was created.","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetSpec {
    /// selector is a label query over pods that should be injected
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    /// NamespaceSelector select which namespaces to inject sidecar containers.
    /// If not specified, match pods in all namespaces(in cluster)
    /// Default to the empty LabelSelector, which matches everything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace_selector: Option<LabelSelector>,
    /// InitContainers is the list of init containers to be injected into the selected pod
    /// We will inject those containers by their name in ascending order
    /// We only inject init containers when a new pod is created, it does not apply to any existing pod
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init_containers: Option<Vec<SidecarContainer>>,
    /// Containers is the list of sidecar containers to be injected into the selected pod
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub containers: Option<Vec<SidecarContainer>>,
    /// List of volumes that can be mounted by sidecar containers
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "schemaless_array")]
    pub volumes: Option<Vec<Volume>>,
    /// The sidecarset updateStrategy to use to replace existing pods with new ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_strategy: Option<SidecarSetUpdateStrategy>,
    /// InjectionStrategy describe the strategy when sidecarset is injected into pods
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub injection_strategy: Option<SidecarSetInjectionStrategy>,
    /// List of the names of secrets required by pulling sidecar container images
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_pull_secrets: Option<Vec<LocalObjectReference>>,
    /// RevisionHistoryLimit indicates the maximum quantity of stored revisions about the SidecarSet.
    /// default value is 10
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_history_limit: Option<i32>,
    /// SidecarSet support to inject & in-place update metadata in pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch_pod_metadata: Option<Vec<SidecarSetPatchPodMetadata>>,
    /// CustomVersion is designed to record and label the controllerRevision of sidecarSet.
    /// This field will be passed from SidecarSet to its corresponding ControllerRevision, users can use
    /// this field to selector the ControllerRevision they want.
    /// For example, users can update the customVersion from "version-1" to "version-2" when they upgrade the
    /// sidecarSet to "version-2", and they write the "version-2" to InjectionStrategy.Revision.CustomVersion
    /// when they decided to promote the "version-2", to avoid some risks about gray deployment of SidecarSet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_version: Option<String>,
}

/// A core/v1 Container plus the SidecarSet-only fields that steer its injection.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarContainer {
    /// Schemaless in the CRD, as in OpenKruise's: the webhook validates these fields, and the
    /// apiserver prunes none that a Kubernetes newer than these types adds.
    #[serde(flatten)]
    #[schemars(schema_with = "schemaless_object")]
    pub container: Container,
    /// The rules that injected SidecarContainer into Pod.spec.containers,
    /// not takes effect in initContainers
    /// If BeforeAppContainer, the SidecarContainer will be injected in front of the pod.spec.containers
    /// otherwise it will be injected into the back.
    /// default BeforeAppContainerType
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_inject_policy: Option<String>,
    /// sidecarContainer upgrade strategy, include: ColdUpgrade, HotUpgrade
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upgrade_strategy: Option<SidecarContainerUpgradeStrategy>,
    /// If ShareVolumePolicy is enabled, the sidecar container will share the other container's VolumeMounts
    /// in the pod(not including the injected sidecar container).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share_volume_policy: Option<ShareVolumePolicy>,
    /// If ShareVolumeDevicePolicy is enabled, the sidecar container will share the other container's VolumeDevices
    /// in the pod(don't contain the injected sidecar container).
    /// This is a pointer to ensure that the sidecarset-hash does not change if the user does not configure this field, mainly for compatibility with older versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share_volume_device_policy: Option<ShareVolumePolicy>,
    /// TransferEnv will transfer env info from other container
    /// SourceContainerName is pod.spec.container[x].name; EnvName is pod.spec.container[x].Env.name
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transfer_env: Option<Vec<TransferEnvVar>>,
    /// ResourcesPolicy defines the policy for dynamically configuring container resources based on Pod specification during pod creation.
    /// Validation webhook will reject pod creation request if both resourcesPolicy and resources are configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources_policy: Option<ResourcesPolicy>,
}

impl SidecarContainer {
    pub fn name(&self) -> &str {
        &self.container.name
    }

    pub fn pod_inject_policy(&self) -> &str {
        self.pod_inject_policy.as_deref().unwrap_or("")
    }

    pub fn upgrade_type(&self) -> &str {
        self.upgrade_strategy
            .as_ref()
            .and_then(|s| s.upgrade_type.as_deref())
            .unwrap_or("")
    }

    pub fn is_hot_upgrade(&self) -> bool {
        self.upgrade_type() == keys::HOT_UPGRADE
    }

    pub fn shares_volumes(&self) -> bool {
        self.share_volume_policy
            .as_ref()
            .and_then(|p| p.type_.as_deref())
            == Some(keys::SHARE_VOLUME_ENABLED)
    }

    pub fn shares_volume_devices(&self) -> bool {
        self.share_volume_device_policy
            .as_ref()
            .and_then(|p| p.type_.as_deref())
            == Some(keys::SHARE_VOLUME_ENABLED)
    }

    /// A native sidecar: an init container that keeps running (`restartPolicy: Always`).
    pub fn is_native_sidecar(&self) -> bool {
        self.container.restart_policy.as_deref() == Some("Always")
    }
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarContainerUpgradeStrategy {
    /// when sidecar container is stateless, use ColdUpgrade
    /// otherwise HotUpgrade are more HotUpgrade.
    /// examples for istio envoy container is suitable for HotUpgrade
    /// default is ColdUpgrade
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upgrade_type: Option<String>,
    /// when HotUpgrade, HotUpgradeEmptyImage is used to complete the hot upgrading process
    /// HotUpgradeEmptyImage is consistent of sidecar container in Command, Args, Liveness probe, etc.
    /// but it does no actual work.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hot_upgrade_empty_image: Option<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct ShareVolumePolicy {
    /// `enabled` or `disabled`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TransferEnvVar {
    /// Name of the pod container whose env var is copied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_container_name: Option<String>,
    /// Where the name of the source container is read, instead of sourceContainerName: a field of the pod (`fieldRef`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_container_name_from: Option<SourceContainerNameSource>,
    /// Name of the env var copied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env_name: Option<String>,
    /// Names of the env vars copied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env_names: Option<Vec<String>>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SourceContainerNameSource {
    /// A field of the pod (metadata.name, metadata.namespace, labels or annotations) whose value names the source container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field_ref: Option<ObjectFieldSelector>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesPolicy {
    /// TargetContainersMode defines how to aggregate resources from target containers
    #[serde(default)]
    pub target_containers_mode: String,
    /// TargetContainersNameRegex is the regex pattern to match target container names
    /// If no container names match this regex, the pod creation request will be rejected by the webhook
    /// Target containers include native sidecar containers and plain containers, excluding Kruise sidecar containers
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_containers_name_regex: Option<String>,
    /// ResourcesExpr defines the expressions for calculating resource values
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources_expr: Option<ResourcesExpr>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesExpr {
    /// Limits defines expressions for calculating resource limits
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<ResourceExprPair>,
    /// Requests defines expressions for calculating resource requests
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<ResourceExprPair>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceExprPair {
    /// CPU expression for calculating CPU limits or requests
    /// Support +, -, *, /, max(), min() and variable 'cpu'
    /// Variable 'cpu' represents the sum or max of resources.limits.cpu of all matched containers
    /// For limits: if matched containers don't have resources.limits configured, this field will be treated as unlimited;
    /// if the expression result is unlimited, sidecar container resources.limits won't be configured.
    /// For requests: if matched containers don't have resources.requests configured, the corresponding resource value will be treated as 0
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<String>,
    /// Memory expression for calculating memory limits or requests
    /// Support +, -, *, /, max(), min() and variable 'memory'
    /// Variable 'memory' represents the sum or max of resources.limits.memory of all matched containers
    /// For limits: if matched containers don't have resources.limits configured, this field will be treated as unlimited;
    /// if the expression result is unlimited, sidecar container resources.limits won't be configured.
    /// For requests: if matched containers don't have resources.requests configured, the corresponding resource value will be treated as 0
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetUpdateStrategy {
    /// Type is NotUpdate, the SidecarSet don't update the injected pods,
    /// it will only inject sidecar container into the newly created pods.
    /// Type is RollingUpdate, the SidecarSet will update the injected pods to the latest version on RollingUpdate Strategy.
    /// default is RollingUpdate
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// Paused indicates that the SidecarSet is paused to update the injected pods,
    /// For the impact on the injection behavior for newly created Pods, please refer to the comments of Selector.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<bool>,
    /// If selector is not nil, this upgrade will only update the selected pods.
    ///
    /// Starting from Kruise 1.8.0, the updateStrategy.Selector affects the version of the Sidecar container
    /// injected into newly created Pods by a SidecarSet configured with an injectionStrategy.
    /// In most cases, all newly created Pods are injected with the specified Sidecar version as configured in injectionStrategy.revision,
    /// which is consistent with previous versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    /// Partition is the desired number of pods in old revisions. It means when partition
    /// is set during pods updating, (replicas - partition) number of pods will be updated.
    /// Default value is 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<IntOrString>,
    /// The maximum number of SidecarSet pods that can be unavailable during the
    /// update. Value can be an absolute number (ex: 5) or a percentage of total
    /// number of SidecarSet pods at the start of the update (ex: 10%). Absolute
    /// number is calculated from percentage by rounding up.
    /// This cannot be 0.
    /// Default value is 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
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
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdatePriorityStrategy {
    /// Weight priority terms, pods will be sorted by the sum of all terms weight.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight_priority: Option<Vec<UpdatePriorityWeightTerm>>,
    /// Order priority terms, pods will be sorted by the value of orderedKey.
    /// For example:
    /// ```yaml
    /// orderPriority:
    /// - orderedKey: key1
    /// - orderedKey: key2
    /// ```
    /// First, all pods which have key1 in labels will be sorted by the value of key1.
    /// Then, the left pods which have no key1 but have key2 in labels will be sorted by
    /// the value of key2 and put behind those pods have key1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order_priority: Option<Vec<UpdatePriorityOrderTerm>>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdatePriorityWeightTerm {
    /// Weight associated with matching the corresponding matchExpressions, in the range 1-100.
    pub weight: i32,
    /// MatchSelector is used to select by pod's labels.
    pub match_selector: LabelSelector,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdatePriorityOrderTerm {
    /// Calculate priority by value of this key.
    /// Values of this key, will be sorted by GetInt(val). GetInt method will find the last int in value,
    /// such as getting 5 in value '5', getting 10 in value 'sts-10'.
    pub ordered_key: String,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct UpdateScatterTerm {
    /// Label key of the pods to scatter.
    pub key: String,
    /// Label value of the pods to scatter.
    pub value: String,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetInjectionStrategy {
    /// Paused indicates that SidecarSet will suspend injection into Pods
    /// If Paused is true, the sidecarSet will not be injected to newly created Pods,
    /// but the injected sidecar container remains updating and running.
    /// default is false
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<bool>,
    /// Revision can help users rolling update SidecarSet safely. If users set
    /// this filed, SidecarSet will try to inject specific revision according to
    /// different policies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<SidecarSetInjectRevision>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetInjectRevision {
    /// CustomVersion corresponds to the customVersion field of (History) SidecarSet.
    /// SidecarSet will select the specific ControllerRevision via this CustomVersion, and then restore the
    /// history SidecarSet to inject specific version of the sidecar to pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_version: Option<String>,
    /// RevisionName corresponds to a specific ControllerRevision name of SidecarSet that you want to inject to Pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_name: Option<String>,
    /// Policy describes the behavior of revision injection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetPatchPodMetadata {
    /// annotations
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
    /// patch pod metadata policy, Default is "Retain"
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch_policy: Option<String>,
}

/// SidecarSetStatus defines the observed state of SidecarSet
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetStatus {
    /// observedGeneration is the most recent generation observed for this SidecarSet. It corresponds to the
    /// SidecarSet's generation, which is updated on mutation by the API Server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// matchedPods is the number of Pods whose labels are matched with this SidecarSet's selector and are created after sidecarset creates
    #[serde(default)]
    pub matched_pods: i32,
    /// updatedPods is the number of matched Pods that are injected with the latest SidecarSet's containers
    #[serde(default)]
    pub updated_pods: i32,
    /// readyPods is the number of matched Pods that have a ready condition
    #[serde(default)]
    pub ready_pods: i32,
    /// updatedReadyPods is the number of matched pods that updated and ready
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_ready_pods: Option<i32>,
    /// LatestRevision, if not empty, indicates the latest controllerRevision name of the SidecarSet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latest_revision: Option<String>,
    /// CollisionCount is the count of hash collisions for the SidecarSet. The SidecarSet controller
    /// uses this field as a collision avoidance mechanism when it needs to create the name for the
    /// newest ControllerRevision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collision_count: Option<i32>,
    /// Conditions of the SidecarSet: `InjectionFailure` is True while the webhooks cannot serve
    /// it (refused by validation, unreadable, or a revision to inject that cannot be found), with
    /// the reason and what it means for new pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<Condition>>,
}

impl SidecarSet {
    /// Whether `other` differs from this reading in nothing but its status, resourceVersion and
    /// managedFields: what a controller's own status write changes.
    pub fn same_beyond_status(&self, other: &SidecarSet) -> bool {
        let without_volatile = |set: &SidecarSet| {
            let mut metadata = set.metadata.clone();
            metadata.resource_version = None;
            metadata.managed_fields = None;
            metadata
        };
        self.spec == other.spec && without_volatile(self) == without_volatile(other)
    }

    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or("")
    }

    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(key))
            .map(String::as_str)
    }

    pub fn containers(&self) -> &[SidecarContainer] {
        self.spec.containers.as_deref().unwrap_or(&[])
    }

    pub fn init_containers(&self) -> &[SidecarContainer] {
        self.spec.init_containers.as_deref().unwrap_or(&[])
    }

    pub fn volumes(&self) -> &[Volume] {
        self.spec.volumes.as_deref().unwrap_or(&[])
    }

    pub fn injection_paused(&self) -> bool {
        self.spec
            .injection_strategy
            .as_ref()
            .and_then(|s| s.paused)
            .unwrap_or(false)
    }

    /// A canary SidecarSet and the name of the base it overrides.
    pub fn canary_base(&self) -> Option<&str> {
        if self.annotation(keys::SIDECARSET_CANARY) != Some("true") {
            return None;
        }
        self.annotation(keys::SIDECARSET_BASE)
            .filter(|b| !b.is_empty())
    }
}

/// The served-only `v1alpha1` SidecarSet: `spec.namespace` where `v1beta1` has none, and the
/// custom version as the label `apps.kruise.io/sidecarset-custom-version` instead of
/// `spec.customVersion`. Read and written only at the edges (admission, conversion, files).
pub mod v1alpha1 {
    use k8s_openapi::api::core::v1::{LocalObjectReference, Volume};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
    use kube::CustomResource;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    pub use super::SidecarSetStatus;
    use super::{
        SidecarContainer, SidecarSetInjectionStrategy, SidecarSetPatchPodMetadata,
        SidecarSetUpdateStrategy, schemaless_array,
    };

    /// SidecarSetSpec defines the desired state of SidecarSet
    #[derive(
        CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema,
    )]
    #[kube(
        group = "apps.kruise.io",
        version = "v1alpha1",
        kind = "SidecarSet",
        doc = "SidecarSet is the Schema for the sidecarsets API",
        plural = "sidecarsets",
        shortname = "sidecar",
        status = "SidecarSetStatus",
        derive = "PartialEq",
        printcolumn = r#"{"name":"MATCHED","type":"integer","description":"The number of pods matched.","jsonPath":".status.matchedPods"}"#,
        printcolumn = r#"{"name":"UPDATED","type":"integer","description":"The number of pods matched and updated.","jsonPath":".status.updatedPods"}"#,
        printcolumn = r#"{"name":"READY","type":"integer","description":"The number of pods matched and ready.","jsonPath":".status.readyPods"}"#,
        printcolumn = r#"{"name":"AGE","type":"date","description":"CreationTimestamp is a timestamp representing the server time when this object was created.","jsonPath":".metadata.creationTimestamp"}"#
    )]
    #[serde(rename_all = "camelCase")]
    pub struct SidecarSetSpec {
        /// selector is a label query over pods that should be injected
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub selector: Option<LabelSelector>,
        /// Namespace sidecarSet will only match the pods in the namespace
        /// otherwise, match pods in all namespaces(in cluster)
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub namespace: Option<String>,
        /// NamespaceSelector select which namespaces to inject sidecar containers.
        /// Default to the empty LabelSelector, which matches everything.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub namespace_selector: Option<LabelSelector>,
        /// InitContainers is the list of init containers to be injected into the selected pod
        /// We will inject those containers by their name in ascending order
        /// We only inject init containers when a new pod is created, it does not apply to any existing pod
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub init_containers: Option<Vec<SidecarContainer>>,
        /// Containers is the list of sidecar containers to be injected into the selected pod
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub containers: Option<Vec<SidecarContainer>>,
        /// List of volumes that can be mounted by sidecar containers
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(schema_with = "schemaless_array")]
        pub volumes: Option<Vec<Volume>>,
        /// The sidecarset updateStrategy to use to replace existing pods with new ones.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub update_strategy: Option<SidecarSetUpdateStrategy>,
        /// InjectionStrategy describe the strategy when sidecarset is injected into pods
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub injection_strategy: Option<SidecarSetInjectionStrategy>,
        /// List of the names of secrets required by pulling sidecar container images
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub image_pull_secrets: Option<Vec<LocalObjectReference>>,
        /// RevisionHistoryLimit indicates the maximum quantity of stored revisions about the SidecarSet.
        /// default value is 10
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub revision_history_limit: Option<i32>,
        /// SidecarSet support to inject & in-place update metadata in pod.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub patch_pod_metadata: Option<Vec<SidecarSetPatchPodMetadata>>,
    }
}
