//! Advanced DaemonSet (`apps.kruise.io`): the storage version `v1beta1` at the top of this
//! module, the type the project works in, and the served-only `v1alpha1` in [`v1alpha1`] (no
//! `scaleStrategy`, `status.daemonSetHash` for `status.updateRevision`, the deprecated `Surging`:
//! see `crate::convert::daemonset`). Field for field as OpenKruise v1.9.0 defines them.
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

use super::cloneset::Lifecycle;
use super::schema::schemaless_object;

/// `rollingUpdate.rollingUpdateType` values.
pub const STANDARD: &str = "Standard";
pub const IN_PLACE_IF_POSSIBLE: &str = "InPlaceIfPossible";
/// Deprecated, v1alpha1 only: conversion makes it `Standard`, and the v1alpha1 defaulting
/// webhook `Standard` with a surge.
pub const SURGING: &str = "Surging";

/// DaemonSetSpec defines the desired state of DaemonSet
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1beta1",
    kind = "DaemonSet",
    doc = "DaemonSet is the Schema for the daemonsets API",
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
    /// A label query over pods that are managed by the daemon set.
    /// Must match in order to be controlled.
    /// It must match the pod template's labels.
    /// More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    /// An object that describes the pod that will be created.
    /// The DaemonSet will create exactly one copy of this pod on every node
    /// that matches the template's node selector (or on every node if no node
    /// selector is specified).
    /// More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#pod-template
    #[serde(default)]
    #[schemars(schema_with = "schemaless_object")]
    pub template: PodTemplateSpec,
    /// An update strategy to replace existing DaemonSet pods with new pods.
    #[serde(default)]
    pub update_strategy: DaemonSetUpdateStrategy,
    /// The minimum number of seconds for which a newly created DaemonSet pod should
    /// be ready without any of its container crashing, for it to be considered
    /// available. Defaults to 0 (pod will be considered available as soon as it
    /// is ready).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_ready_seconds: Option<i32>,
    /// BurstReplicas is a rate limiter for booting pods on a lot of pods.
    /// The default value is 250
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst_replicas: Option<IntOrString>,
    /// The number of old history to retain to allow rollback.
    /// This is a pointer to distinguish between explicit zero and not specified.
    /// Defaults to 10.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_history_limit: Option<i32>,
    /// Lifecycle defines the lifecycle hooks for Pods pre-delete, in-place update.
    /// Currently, we only support pre-delete hook for Advanced DaemonSet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifecycle: Option<Lifecycle>,
    /// ScaleStrategy indicates the DaemonSetScaleStrategy that will be
    /// employed to create Pods in the DaemonSet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_strategy: Option<DaemonSetScaleStrategy>,
}

/// DaemonSetScaleStrategy defines strategies for DaemonSet scaling.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DaemonSetScaleStrategy {
    /// PartitionedScaling indicates daemon pods created in manage phase will be controlled by partition.
    /// If set to true, the creation will be controlled by partition and only some of daemon pods
    /// will be created. Otherwise daemon pods will be created on every node that need to start a daemon pod.
    /// Default is false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partitioned_scaling: Option<bool>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DaemonSetUpdateStrategy {
    /// Type of daemon set update. Can be "RollingUpdate" or "OnDelete". Default is RollingUpdate.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// Rolling update config params. Present only if type = "RollingUpdate".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rolling_update: Option<RollingUpdateDaemonSet>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RollingUpdateDaemonSet {
    /// Type is to specify which kind of rollingUpdate.
    #[serde(
        default,
        rename = "rollingUpdateType",
        skip_serializing_if = "Option::is_none"
    )]
    pub rolling_update_type: Option<String>,
    /// The maximum number of DaemonSet pods that can be unavailable during the
    /// update. Value can be an absolute number (ex: 5) or a percentage of total
    /// number of DaemonSet pods at the start of the update (ex: 10%). Absolute
    /// number is calculated from percentage by rounding up.
    /// This cannot be 0 if MaxSurge is 0
    /// Default value is 1.
    /// Example: when this is set to 30%, at most 30% of the total number of nodes
    /// that should be running the daemon pod (i.e. status.desiredNumberScheduled)
    /// can have their pods stopped for an update at any given time. The update
    /// starts by stopping at most 30% of those DaemonSet pods and then brings
    /// up new DaemonSet pods in their place. Once the new pods are available,
    /// it then proceeds onto other DaemonSet pods, thus ensuring that at least
    /// 70% of original number of DaemonSet pods are available at all times during
    /// the update.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    /// The maximum number of nodes with an existing available DaemonSet pod that
    /// can have an updated DaemonSet pod during during an update.
    /// Value can be an absolute number (ex: 5) or a percentage of desired pods (ex: 10%).
    /// This can not be 0 if MaxUnavailable is 0.
    /// Absolute number is calculated from percentage by rounding up to a minimum of 1.
    /// Default value is 0.
    /// Example: when this is set to 30%, at most 30% of the total number of nodes
    /// that should be running the daemon pod (i.e. status.desiredNumberScheduled)
    /// can have their a new pod created before the old pod is marked as deleted.
    /// The update starts by launching new pods on 30% of nodes. Once an updated
    /// pod is available (Ready for at least minReadySeconds) the old DaemonSet pod
    /// on that node is marked deleted. If the old pod becomes unavailable for any
    /// reason (Ready transitions to false, is evicted, or is drained) an updated
    /// pod is immediately created on that node without considering surge limits.
    /// Allowing surge implies the possibility that the resources consumed by the
    /// daemonset on any given node can double if the readiness check fails, and
    /// so resource intensive daemonsets should take into account that they may
    /// cause evictions during disruption.
    /// This is beta field and enabled/disabled by DaemonSetUpdateSurge feature gate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_surge: Option<IntOrString>,
    /// The number of DaemonSet pods remained to be old version.
    /// Default value is 0.
    /// Maximum value is status.DesiredNumberScheduled, which means no pod will be updated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<IntOrString>,
    /// Indicates that the daemon set is paused and will not be processed by the
    /// daemon set controller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<bool>,
    /// A label query over nodes that are managed by the daemon set RollingUpdate.
    /// Must match in order to be controlled.
    /// It must match the node's labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
}

/// DaemonSetStatus defines the observed state of DaemonSet
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DaemonSetStatus {
    /// The number of nodes that are running at least 1
    /// daemon pod and are supposed to run the daemon pod.
    /// More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/
    #[serde(default)]
    pub current_number_scheduled: i32,
    /// The number of nodes that are running the daemon pod, but are
    /// not supposed to run the daemon pod.
    /// More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/
    #[serde(default)]
    pub number_misscheduled: i32,
    /// The total number of nodes that should be running the daemon
    /// pod (including nodes correctly running the daemon pod).
    /// More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/
    #[serde(default)]
    pub desired_number_scheduled: i32,
    /// The number of nodes that should be running the daemon pod and have one
    /// or more of the daemon pod running and ready.
    #[serde(default)]
    pub number_ready: i32,
    /// The most recent generation observed by the daemon set controller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// The total number of nodes that are running updated daemon pod
    #[serde(default)]
    pub updated_number_scheduled: i32,
    /// The number of nodes that should be running the
    /// daemon pod and have one or more of the daemon pod running and
    /// available (ready for at least spec.minReadySeconds)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number_available: Option<i32>,
    /// The number of nodes that should be running the
    /// daemon pod and have none of the daemon pod running and available
    /// (ready for at least spec.minReadySeconds)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number_unavailable: Option<i32>,
    /// Count of hash collisions for the DaemonSet. The DaemonSet controller
    /// uses this field as a collision avoidance mechanism when it needs to
    /// create the name for the newest ControllerRevision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collision_count: Option<i32>,
    /// Represents the latest available observations of a DaemonSet's current state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<DaemonSetCondition>>,
    /// UpdateRevision is the controller-revision-hash, which represents the latest version of the DaemonSet.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub update_revision: String,
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

/// The served-only `v1alpha1` Advanced DaemonSet: the `v1beta1` shape without `scaleStrategy`
/// (the annotation `daemonset.kruise.io/progressive-create-pod` instead), with
/// `status.daemonSetHash` for `status.updateRevision`.
pub mod v1alpha1 {
    use k8s_openapi::api::apps::v1::DaemonSetCondition;
    use k8s_openapi::api::core::v1::PodTemplateSpec;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
    use kube::CustomResource;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    use super::DaemonSetUpdateStrategy;
    use crate::api::cloneset::Lifecycle;
    use crate::api::schema::schemaless_object;

    /// DaemonSetSpec defines the desired state of DaemonSet
    #[derive(
        CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema,
    )]
    #[kube(
        group = "apps.kruise.io",
        version = "v1alpha1",
        kind = "DaemonSet",
        doc = "DaemonSet is the Schema for the daemonsets API",
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
        /// A label query over pods that are managed by the daemon set.
        /// Must match in order to be controlled.
        /// It must match the pod template's labels.
        /// More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub selector: Option<LabelSelector>,
        /// An object that describes the pod that will be created.
        /// The DaemonSet will create exactly one copy of this pod on every node
        /// that matches the template's node selector (or on every node if no node
        /// selector is specified).
        /// More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#pod-template
        #[serde(default)]
        #[schemars(schema_with = "schemaless_object")]
        pub template: PodTemplateSpec,
        /// An update strategy to replace existing DaemonSet pods with new pods.
        #[serde(default)]
        pub update_strategy: DaemonSetUpdateStrategy,
        /// The minimum number of seconds for which a newly created DaemonSet pod should
        /// be ready without any of its container crashing, for it to be considered
        /// available. Defaults to 0 (pod will be considered available as soon as it
        /// is ready).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub min_ready_seconds: Option<i32>,
        /// BurstReplicas is a rate limiter for booting pods on a lot of pods.
        /// The default value is 250
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub burst_replicas: Option<IntOrString>,
        /// The number of old history to retain to allow rollback.
        /// This is a pointer to distinguish between explicit zero and not specified.
        /// Defaults to 10.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub revision_history_limit: Option<i32>,
        /// Lifecycle defines the lifecycle hooks for Pods pre-delete, in-place update.
        /// Currently, we only support pre-delete hook for Advanced DaemonSet.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub lifecycle: Option<Lifecycle>,
    }

    /// DaemonSetStatus defines the observed state of DaemonSet
    #[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
    #[serde(rename_all = "camelCase")]
    pub struct DaemonSetStatus {
        /// The number of nodes that are running at least 1
        /// daemon pod and are supposed to run the daemon pod.
        /// More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/
        #[serde(default)]
        pub current_number_scheduled: i32,
        /// The number of nodes that are running the daemon pod, but are
        /// not supposed to run the daemon pod.
        /// More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/
        #[serde(default)]
        pub number_misscheduled: i32,
        /// The total number of nodes that should be running the daemon
        /// pod (including nodes correctly running the daemon pod).
        /// More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/
        #[serde(default)]
        pub desired_number_scheduled: i32,
        /// The number of nodes that should be running the daemon pod and have one
        /// or more of the daemon pod running and ready.
        #[serde(default)]
        pub number_ready: i32,
        /// The most recent generation observed by the daemon set controller.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub observed_generation: Option<i64>,
        /// The total number of nodes that are running updated daemon pod
        #[serde(default)]
        pub updated_number_scheduled: i32,
        /// The number of nodes that should be running the
        /// daemon pod and have one or more of the daemon pod running and
        /// available (ready for at least spec.minReadySeconds)
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub number_available: Option<i32>,
        /// The number of nodes that should be running the
        /// daemon pod and have none of the daemon pod running and available
        /// (ready for at least spec.minReadySeconds)
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub number_unavailable: Option<i32>,
        /// Count of hash collisions for the DaemonSet. The DaemonSet controller
        /// uses this field as a collision avoidance mechanism when it needs to
        /// create the name for the newest ControllerRevision.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub collision_count: Option<i32>,
        /// Represents the latest available observations of a DaemonSet's current state.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub conditions: Option<Vec<DaemonSetCondition>>,
        /// DaemonSetHash is the controller-revision-hash, which represents the latest version of the DaemonSet.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        pub daemon_set_hash: String,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::CustomResourceExt;
    use serde_json::json;

    fn manifest() -> serde_json::Value {
        json!({
            "apiVersion": "apps.kruise.io/v1beta1",
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
                "numberAvailable": 3, "updateRevision": "6d5f"
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
