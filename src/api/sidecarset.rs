//! `SidecarSet` (`apps.kruise.io/v1alpha1`), field for field as OpenKruise defines it.
//!
//! Enumerated fields (`podInjectPolicy`, `shareVolumePolicy.type`, …) are plain strings on purpose:
//! an unknown value must reach the validator and be refused with a message naming it, not fail to
//! decode with a serde error.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, LocalObjectReference, ObjectFieldSelector, Volume};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::keys;

/// Desired state of a SidecarSet: which pods get which sidecars, and how they are rolled out.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1alpha1",
    kind = "SidecarSet",
    plural = "sidecarsets",
    shortname = "sidecar",
    status = "SidecarSetStatus",
    printcolumn = r#"{"name":"MATCHED","type":"integer","description":"The number of pods matched.","jsonPath":".status.matchedPods"}"#,
    printcolumn = r#"{"name":"UPDATED","type":"integer","description":"The number of pods matched and updated.","jsonPath":".status.updatedPods"}"#,
    printcolumn = r#"{"name":"READY","type":"integer","description":"The number of pods matched and ready.","jsonPath":".status.readyPods"}"#,
    printcolumn = r#"{"name":"AGE","type":"date","description":"CreationTimestamp is a timestamp representing the server time when this object was created.","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetSpec {
    /// Pods whose labels match get the sidecars. Nil or empty matches nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    /// Restricts injection to one namespace (exact match).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Restricts injection to namespaces whose labels match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace_selector: Option<LabelSelector>,
    /// Init containers injected at pod creation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init_containers: Option<Vec<SidecarContainer>>,
    /// Containers injected at pod creation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub containers: Option<Vec<SidecarContainer>>,
    /// Volume pool: only volumes a sidecar mounts are added to the pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volumes: Option<Vec<Volume>>,
    /// How running pods are upgraded when the sidecars change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_strategy: Option<SidecarSetUpdateStrategy>,
    /// How new pods are injected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub injection_strategy: Option<SidecarSetInjectionStrategy>,
    /// Merged into the pod's imagePullSecrets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_pull_secrets: Option<Vec<LocalObjectReference>>,
    /// Number of ControllerRevisions kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_history_limit: Option<i32>,
    /// Annotations patched into injected pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch_pod_metadata: Option<Vec<SidecarSetPatchPodMetadata>>,
}

/// A core/v1 Container plus the SidecarSet-only fields that steer its injection.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarContainer {
    #[serde(flatten)]
    pub container: Container,
    /// `BeforeAppContainer` or `AfterAppContainer`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_inject_policy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upgrade_strategy: Option<SidecarContainerUpgradeStrategy>,
    /// `enabled` copies the app containers' volumeMounts into this sidecar.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share_volume_policy: Option<ShareVolumePolicy>,
    /// `enabled` copies the app containers' volumeDevices into this sidecar.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share_volume_device_policy: Option<ShareVolumePolicy>,
    /// Env vars copied from a pod container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transfer_env: Option<Vec<TransferEnvVar>>,
    /// Sidecar resources computed from the app containers'.
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
    /// `ColdUpgrade` (default) or `HotUpgrade`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upgrade_type: Option<String>,
    /// Image of the idle copy of a hot-upgrade sidecar.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hot_upgrade_empty_image: Option<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct ShareVolumePolicy {
    /// `enabled` or `disabled` (lower case).
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TransferEnvVar {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_container_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_container_name_from: Option<SourceContainerNameSource>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env_names: Option<Vec<String>>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SourceContainerNameSource {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field_ref: Option<ObjectFieldSelector>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesPolicy {
    /// `sum` or `max`.
    #[serde(default)]
    pub target_containers_mode: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_containers_name_regex: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources_expr: Option<ResourcesExpr>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesExpr {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<ResourceExprPair>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<ResourceExprPair>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceExprPair {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetUpdateStrategy {
    /// `RollingUpdate` (default) or `NotUpdate`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<bool>,
    /// Canary: only pods matching this selector are upgraded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    /// Number or percentage of matched pods kept at the old version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<IntOrString>,
    /// Number or percentage of pods that may be unavailable during the rollout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority_strategy: Option<UpdatePriorityStrategy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scatter_strategy: Option<Vec<UpdateScatterTerm>>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdatePriorityStrategy {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight_priority: Option<Vec<UpdatePriorityWeightTerm>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order_priority: Option<Vec<UpdatePriorityOrderTerm>>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdatePriorityWeightTerm {
    pub weight: i32,
    pub match_selector: LabelSelector,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdatePriorityOrderTerm {
    pub ordered_key: String,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct UpdateScatterTerm {
    pub key: String,
    pub value: String,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetInjectionStrategy {
    /// `true`: new pods are not injected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<bool>,
    /// Inject a historical revision instead of the current spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<SidecarSetInjectRevision>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetInjectRevision {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_name: Option<String>,
    /// `Always` (default) or `Partial`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetPatchPodMetadata {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
    /// `Retain` (default), `Overwrite` or `MergePatchJson`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch_policy: Option<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    #[serde(default)]
    pub matched_pods: i32,
    #[serde(default)]
    pub updated_pods: i32,
    #[serde(default)]
    pub ready_pods: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_ready_pods: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latest_revision: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collision_count: Option<i32>,
}

impl SidecarSet {
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
