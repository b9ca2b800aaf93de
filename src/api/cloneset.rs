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
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

use super::sidecarset::{UpdatePriorityStrategy, UpdateScatterTerm};

/// `updateStrategy.type` values of a v1alpha1 CloneSet.
pub const RECREATE: &str = "ReCreate";
pub const IN_PLACE_IF_POSSIBLE: &str = "InPlaceIfPossible";
pub const IN_PLACE_ONLY: &str = "InPlaceOnly";

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
    /// `FailedScale` or `FailedUpdate`.
    #[serde(default, rename = "type")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    #[serde(default)]
    pub status: String,
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
mod tests {
    use super::*;
    use kube::CustomResourceExt;
    use serde_json::json;

    /// k8s-openapi writes `apiVersion`/`kind` into every PersistentVolumeClaim (Go leaves an
    /// empty TypeMeta out); harmless, but not what the manifest said.
    fn strip_claim_type_meta(object: &mut serde_json::Value) {
        if let Some(claims) = object["spec"]["volumeClaimTemplates"].as_array_mut() {
            for claim in claims.iter_mut().filter_map(|c| c.as_object_mut()) {
                claim.remove("apiVersion");
                claim.remove("kind");
            }
        }
    }

    fn manifest() -> serde_json::Value {
        json!({
            "apiVersion": "apps.kruise.io/v1alpha1",
            "kind": "CloneSet",
            "metadata": {"name": "sample", "namespace": "default"},
            "spec": {
                "replicas": 5,
                "selector": {"matchLabels": {"app": "sample"}},
                "template": {
                    "metadata": {"labels": {"app": "sample"}},
                    "spec": {
                        "readinessGates": [{"conditionType": "InPlaceUpdateReady"}],
                        "containers": [{"name": "main", "image": "nginx:alpine", "volumeMounts": [{"name": "data-vol", "mountPath": "/data"}]}]
                    }
                },
                "volumeClaimTemplates": [{
                    "metadata": {"name": "data-vol"},
                    "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "20Gi"}}}
                }],
                "scaleStrategy": {"podsToDelete": ["sample-abc"], "maxUnavailable": 1, "disablePVCReuse": true},
                "updateStrategy": {
                    "type": "InPlaceIfPossible",
                    "partition": "20%",
                    "maxUnavailable": "20%",
                    "maxSurge": 1,
                    "paused": false,
                    "priorityStrategy": {"weightPriority": [{"weight": 50, "matchSelector": {"matchLabels": {"test-key": "foo"}}}]},
                    "scatterStrategy": [{"key": "zone", "value": "a"}],
                    "inPlaceUpdateStrategy": {"gracePeriodSeconds": 10}
                },
                "revisionHistoryLimit": 10,
                "minReadySeconds": 3,
                "lifecycle": {
                    "preDelete": {"finalizersHandler": ["example.com/unready-blocker"], "markPodNotReady": true},
                    "inPlaceUpdate": {"labelsHandler": {"example.com/block": "true"}},
                    "preNormal": {"finalizersHandler": ["example.com/warmup"]}
                },
                "progressDeadlineSeconds": 600
            },
            "status": {
                "observedGeneration": 2, "replicas": 5, "readyReplicas": 5, "availableReplicas": 5,
                "updatedReplicas": 4, "updatedReadyReplicas": 4, "expectedUpdatedReplicas": 4,
                "updateRevision": "sample-7f", "currentRevision": "sample-6c",
                "labelSelector": "app=sample",
                "conditions": [{"type": "FailedScale", "status": "False", "lastTransitionTime": "2024-01-02T03:04:05Z", "reason": "ok"}]
            }
        })
    }

    #[test]
    fn realistic_manifest_round_trips_with_upstream_json_names() {
        let set: CloneSet = serde_json::from_value(manifest()).unwrap();
        assert_eq!(set.spec.replicas, Some(5));
        assert_eq!(set.update_type(), IN_PLACE_IF_POSSIBLE);
        assert_eq!(set.pods_to_delete(), ["sample-abc".to_string()]);
        assert_eq!(set.spec.scale_strategy.disable_pvc_reuse, Some(true));
        assert_eq!(
            set.spec.update_strategy.partition,
            Some(IntOrString::String("20%".into()))
        );
        let hook = set
            .spec
            .lifecycle
            .as_ref()
            .unwrap()
            .pre_delete
            .as_ref()
            .unwrap();
        assert_eq!(hook.mark_pod_not_ready, Some(true));
        assert_eq!(set.status.as_ref().unwrap().updated_ready_replicas, 4);

        let mut back = serde_json::to_value(&set).unwrap();
        strip_claim_type_meta(&mut back);
        let again: CloneSet = serde_json::from_value(back.clone()).unwrap();
        assert_eq!(again, set);
        // Every field the manifest sets survives under its upstream name.
        let original = manifest();
        for key in [
            "replicas",
            "selector",
            "template",
            "volumeClaimTemplates",
            "scaleStrategy",
            "updateStrategy",
            "revisionHistoryLimit",
            "minReadySeconds",
            "lifecycle",
            "progressDeadlineSeconds",
        ] {
            assert_eq!(back["spec"][key], original["spec"][key], "spec.{key}");
        }
        assert_eq!(back["status"], original["status"]);
    }

    #[test]
    fn wrong_types_are_decode_errors() {
        for (pointer, bad) in [
            ("/spec/updateStrategy/type", json!(5)),
            ("/spec/replicas", json!("five")),
            ("/spec/template", json!("not a pod template")),
            ("/spec/template/spec/containers", json!({"name": "x"})),
            ("/spec/scaleStrategy/podsToDelete", json!("p0")),
        ] {
            let mut value = manifest();
            *value.pointer_mut(pointer).unwrap() = bad;
            assert!(
                serde_json::from_value::<CloneSet>(value).is_err(),
                "{pointer} should not decode"
            );
        }
    }

    #[test]
    fn unknown_enum_values_still_decode() {
        let mut value = manifest();
        value["spec"]["updateStrategy"]["type"] = json!("Rolling");
        let set: CloneSet = serde_json::from_value(value).unwrap();
        assert_eq!(set.update_type(), "Rolling");
    }

    #[test]
    fn crd_has_subresources_columns_and_schemaless_template() {
        let crd = CloneSet::crd();
        assert_eq!(
            crd.metadata.name.as_deref(),
            Some("clonesets.apps.kruise.io")
        );
        assert_eq!(crd.spec.scope, "Namespaced");
        assert_eq!(crd.spec.names.short_names, Some(vec!["clone".to_string()]));
        let version = &crd.spec.versions[0];
        let subresources = version.subresources.as_ref().unwrap();
        assert!(subresources.status.is_some());
        let scale = subresources.scale.as_ref().unwrap();
        assert_eq!(scale.spec_replicas_path, ".spec.replicas");
        assert_eq!(
            scale.label_selector_path.as_deref(),
            Some(".status.labelSelector")
        );
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
                "UPDATED",
                "UPDATED_READY",
                "READY",
                "TOTAL",
                "AGE",
                "CONTAINERS",
                "IMAGES",
                "SELECTOR"
            ]
        );
        let schema = serde_json::to_value(&version.schema).unwrap();
        let template = &schema["openAPIV3Schema"]["properties"]["spec"]["properties"]["template"];
        assert_eq!(
            template["x-kubernetes-preserve-unknown-fields"],
            json!(true)
        );
    }
}
