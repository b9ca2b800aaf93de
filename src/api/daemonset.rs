//! Advanced DaemonSet (`apps.kruise.io/v1alpha1`), field for field as OpenKruise defines it.
//!
//! The rolling-update kind lives under the JSON key `rollingUpdateType` (not `type`), a wire fact
//! clients depend on. Enumerated fields are plain strings so an unknown value reaches the
//! validator; the pod template is schemaless in the CRD, as in OpenKruise's.

use k8s_openapi::api::apps::v1::DaemonSetCondition;
use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::cloneset::{Lifecycle, schemaless_object};

/// `rollingUpdate.rollingUpdateType` values.
pub const STANDARD: &str = "Standard";
pub const IN_PLACE_IF_POSSIBLE: &str = "InPlaceIfPossible";
/// Deprecated: the defaulting webhook turns it into `Standard` with a surge.
pub const SURGING: &str = "Surging";

/// Desired state of an Advanced DaemonSet: one pod per matching node.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1alpha1",
    kind = "DaemonSet",
    plural = "daemonsets",
    shortname = "daemon",
    shortname = "ads",
    namespaced,
    status = "DaemonSetStatus",
    derive = "PartialEq",
    derive = "Default",
    printcolumn = r#"{"name":"DESIRED","type":"integer","description":"The desired number of pods.","jsonPath":".status.desiredNumberScheduled"}"#,
    printcolumn = r#"{"name":"CURRENT","type":"integer","description":"The current number of pods.","jsonPath":".status.currentNumberScheduled"}"#,
    printcolumn = r#"{"name":"READY","type":"integer","description":"The ready number of pods.","jsonPath":".status.numberReady"}"#,
    printcolumn = r#"{"name":"UP-TO-DATE","type":"integer","description":"The updated number of pods.","jsonPath":".status.updatedNumberScheduled"}"#,
    printcolumn = r#"{"name":"AVAILABLE","type":"integer","description":"The available number of pods.","jsonPath":".status.numberAvailable"}"#,
    printcolumn = r#"{"name":"AGE","type":"date","description":"CreationTimestamp is a timestamp representing the server time when this object was created.","jsonPath":".metadata.creationTimestamp"}"#,
    printcolumn = r#"{"name":"CONTAINERS","type":"string","priority":1,"description":"The containers of currently daemonset.","jsonPath":".spec.template.spec.containers[*].name"}"#,
    printcolumn = r#"{"name":"IMAGES","type":"string","priority":1,"description":"The images of currently advanced daemonset.","jsonPath":".spec.template.spec.containers[*].image"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct DaemonSetSpec {
    /// Must match the template's labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    #[serde(default)]
    #[schemars(schema_with = "schemaless_object")]
    pub template: PodTemplateSpec,
    #[serde(default)]
    pub update_strategy: DaemonSetUpdateStrategy,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_ready_seconds: Option<i32>,
    /// Pods created at once when many nodes need one (default 250).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst_replicas: Option<IntOrString>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_history_limit: Option<i32>,
    /// Only `preDelete` (and `preNormal`) are supported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifecycle: Option<Lifecycle>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DaemonSetUpdateStrategy {
    /// `RollingUpdate` (default) or `OnDelete`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rolling_update: Option<RollingUpdateDaemonSet>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RollingUpdateDaemonSet {
    /// `Standard` (default), `InPlaceIfPossible` or the deprecated `Surging`.
    #[serde(
        default,
        rename = "rollingUpdateType",
        skip_serializing_if = "Option::is_none"
    )]
    pub rolling_update_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_surge: Option<IntOrString>,
    /// Pods (number or percentage, at most 100%) kept at the old revision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<IntOrString>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<bool>,
    /// Only nodes matching this selector are updated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DaemonSetStatus {
    #[serde(default)]
    pub current_number_scheduled: i32,
    #[serde(default)]
    pub number_misscheduled: i32,
    #[serde(default)]
    pub desired_number_scheduled: i32,
    #[serde(default)]
    pub number_ready: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    #[serde(default)]
    pub updated_number_scheduled: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number_available: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number_unavailable: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collision_count: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<DaemonSetCondition>>,
    /// The controller-revision-hash of the latest revision.
    #[serde(default)]
    pub daemon_set_hash: String,
}

impl DaemonSet {
    pub fn update_type(&self) -> &str {
        self.spec.update_strategy.type_.as_deref().unwrap_or("")
    }

    /// `rollingUpdate.rollingUpdateType`, or `""` without a rolling update.
    pub fn rolling_update_type(&self) -> &str {
        self.spec
            .update_strategy
            .rolling_update
            .as_ref()
            .and_then(|r| r.rolling_update_type.as_deref())
            .unwrap_or("")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::CustomResourceExt;
    use serde_json::json;

    fn manifest() -> serde_json::Value {
        json!({
            "apiVersion": "apps.kruise.io/v1alpha1",
            "kind": "DaemonSet",
            "metadata": {"name": "node-agent", "namespace": "kube-system"},
            "spec": {
                "selector": {"matchLabels": {"app": "node-agent"}},
                "template": {
                    "metadata": {"labels": {"app": "node-agent"}},
                    "spec": {"containers": [{"name": "agent", "image": "agent:1.0", "ports": [{"containerPort": 9100, "hostPort": 9100}]}]}
                },
                "updateStrategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {
                        "rollingUpdateType": "InPlaceIfPossible",
                        "maxUnavailable": "10%",
                        "maxSurge": 0,
                        "partition": "50%",
                        "paused": true,
                        "selector": {"matchLabels": {"node-pool": "canary"}}
                    }
                },
                "minReadySeconds": 10,
                "burstReplicas": 100,
                "revisionHistoryLimit": 5,
                "lifecycle": {"preDelete": {"labelsHandler": {"example.com/drain": "true"}, "markPodNotReady": true}}
            },
            "status": {
                "currentNumberScheduled": 3, "numberMisscheduled": 0, "desiredNumberScheduled": 3,
                "numberReady": 3, "observedGeneration": 4, "updatedNumberScheduled": 2,
                "numberAvailable": 3, "daemonSetHash": "6d5f"
            }
        })
    }

    #[test]
    fn realistic_manifest_round_trips_with_rolling_update_type_key() {
        let original = manifest();
        let set: DaemonSet = serde_json::from_value(original.clone()).unwrap();
        assert_eq!(set.rolling_update_type(), IN_PLACE_IF_POSSIBLE);
        assert_eq!(set.spec.burst_replicas, Some(IntOrString::Int(100)));
        let back = serde_json::to_value(&set).unwrap();
        assert_eq!(
            back["spec"]["updateStrategy"]["rollingUpdate"]["rollingUpdateType"],
            json!("InPlaceIfPossible")
        );
        assert!(
            back["spec"]["updateStrategy"]["rollingUpdate"]
                .get("type")
                .is_none()
        );
        assert_eq!(back["spec"], original["spec"]);
        assert_eq!(back["status"], original["status"]);
        assert_eq!(serde_json::from_value::<DaemonSet>(back).unwrap(), set);
    }

    #[test]
    fn wrong_types_are_decode_errors() {
        for (pointer, bad) in [
            (
                "/spec/updateStrategy/rollingUpdate/rollingUpdateType",
                json!(1),
            ),
            ("/spec/minReadySeconds", json!("10")),
            ("/spec/template", json!(true)),
            ("/spec/template/metadata/labels", json!(["a"])),
        ] {
            let mut value = manifest();
            *value.pointer_mut(pointer).unwrap() = bad;
            assert!(
                serde_json::from_value::<DaemonSet>(value).is_err(),
                "{pointer} should not decode"
            );
        }
    }

    #[test]
    fn crd_shape() {
        let crd = DaemonSet::crd();
        assert_eq!(
            crd.metadata.name.as_deref(),
            Some("daemonsets.apps.kruise.io")
        );
        assert_eq!(
            crd.spec.names.short_names,
            Some(vec!["daemon".to_string(), "ads".to_string()])
        );
        let version = &crd.spec.versions[0];
        let subresources = version.subresources.as_ref().unwrap();
        assert!(subresources.status.is_some() && subresources.scale.is_none());
        let columns: Vec<_> = version
            .additional_printer_columns
            .iter()
            .flatten()
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(
            columns,
            [
                "DESIRED",
                "CURRENT",
                "READY",
                "UP-TO-DATE",
                "AVAILABLE",
                "AGE",
                "CONTAINERS",
                "IMAGES"
            ]
        );
        let schema = serde_json::to_value(&version.schema).unwrap();
        let rolling = &schema["openAPIV3Schema"]["properties"]["spec"]["properties"]["updateStrategy"]
            ["properties"]["rollingUpdate"]["properties"];
        assert!(rolling.get("rollingUpdateType").is_some(), "{rolling}");
    }
}
