//! Defaults of the Kruise workloads (CloneSet, Advanced StatefulSet, Advanced DaemonSet), as
//! OpenKruise's mutating webhooks apply them (spec §3.1–§3.3), including Kubernetes' own defaults
//! of the pod template.
//!
//! They are needed twice: the `/mutate-apps-kruise-io-<kind>` webhooks store them, and the
//! validating webhooks check the defaulted form, so that a manifest OpenKruise accepts is accepted
//! here even where the mutating webhook is not registered (Kubernetes' pod rules require
//! `restartPolicy`, `dnsPolicy`, `imagePullPolicy`, … which only defaulting fills).
//!
//! Every function is idempotent: defaulting a defaulted object changes nothing.

use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::api::cloneset::{CloneSet, IN_PLACE_IF_POSSIBLE, IN_PLACE_ONLY, RECREATE};
use crate::api::daemonset::{self, DaemonSet, RollingUpdateDaemonSet};
use crate::api::statefulset::{
    self, ORDERED_READY, RETAIN, RollingUpdateStatefulSetStrategy,
    StatefulSetPersistentVolumeClaimRetentionPolicy, v1alpha1,
};
use super::sidecarset::{default_container, default_probe, default_volume};

const DEFAULT_REPLICAS: i32 = 1;
const DEFAULT_REVISION_HISTORY_LIMIT: i32 = 10;
const DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS: i64 = 30;
const DEFAULT_SCHEDULER_NAME: &str = "default-scheduler";
const CLONESET_DEFAULT_MAX_UNAVAILABLE: &str = "20%";
const DAEMONSET_DEFAULT_BURST_REPLICAS: i32 = 250;

/// Kubernetes' defaults of a pod template (`SetDefaults_PodSpec`, containers, volumes, probes).
pub fn default_pod_template(template: &mut PodTemplateSpec) {
    let spec = template.spec.get_or_insert_with(Default::default);
    default_pod_spec(spec);
}

fn default_pod_spec(spec: &mut PodSpec) {
    set_if_empty(&mut spec.dns_policy, "ClusterFirst");
    set_if_empty(&mut spec.restart_policy, "Always");
    set_if_empty(&mut spec.scheduler_name, DEFAULT_SCHEDULER_NAME);
    spec.termination_grace_period_seconds
        .get_or_insert(DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS);
    spec.security_context.get_or_insert_with(Default::default);
    let host_network = spec.host_network.unwrap_or(false);
    let containers = spec
        .containers
        .iter_mut()
        .chain(spec.init_containers.iter_mut().flatten());
    for container in containers {
        default_template_container(container, host_network);
    }
    for volume in spec.volumes.iter_mut().flatten() {
        default_volume(volume);
    }
}

fn default_template_container(container: &mut Container, host_network: bool) {
    default_container(container);
    // Sidecar defaulting leaves startup probes alone (an OpenKruise quirk the SidecarSet hash
    // depends on); pod templates get Kubernetes' full defaults.
    if let Some(probe) = container.startup_probe.as_mut() {
        default_probe(probe);
    }
    if host_network {
        for port in container.ports.iter_mut().flatten() {
            if port.host_port.unwrap_or(0) == 0 {
                port.host_port = Some(port.container_port);
            }
        }
    }
}

/// `SetDefaultsCloneSet`: replicas 1, revisionHistoryLimit 10, update type `ReCreate`
/// (`inPlaceUpdateStrategy: {}` for in-place types), partition 0, maxUnavailable `20%`,
/// maxSurge 0, and the pod template.
pub fn default_cloneset(set: &mut CloneSet) {
    let spec = &mut set.spec;
    spec.replicas.get_or_insert(DEFAULT_REPLICAS);
    spec.revision_history_limit
        .get_or_insert(DEFAULT_REVISION_HISTORY_LIMIT);
    let strategy = &mut spec.update_strategy;
    set_if_empty(&mut strategy.type_, RECREATE);
    if matches!(
        strategy.type_.as_deref(),
        Some(IN_PLACE_IF_POSSIBLE | IN_PLACE_ONLY)
    ) {
        strategy
            .in_place_update_strategy
            .get_or_insert_with(Default::default);
    }
    strategy.partition.get_or_insert(IntOrString::Int(0));
    strategy
        .max_unavailable
        .get_or_insert_with(|| IntOrString::String(CLONESET_DEFAULT_MAX_UNAVAILABLE.into()));
    strategy.max_surge.get_or_insert(IntOrString::Int(0));
    default_pod_template(&mut spec.template);
}

/// `SetDefaultsStatefulSet` (v1beta1): podManagementPolicy `OrderedReady`, update type
/// `RollingUpdate` with partition 0, maxUnavailable 1, podUpdatePolicy `ReCreate` and
/// minReadySeconds 0, retention policy `Retain`/`Retain` (OpenKruise's `StatefulSetAutoDeletePVC`
/// feature, on by default), replicas 1, revisionHistoryLimit 10, and the pod template.
pub fn default_statefulset(set: &mut statefulset::StatefulSet) {
    let spec = &mut set.spec;
    set_if_empty(&mut spec.pod_management_policy, ORDERED_READY);
    let strategy = &mut spec.update_strategy;
    set_if_empty(&mut strategy.type_, statefulset::ROLLING_UPDATE);
    if strategy.type_.as_deref() == Some(statefulset::ROLLING_UPDATE) {
        default_statefulset_rolling_update(
            strategy.rolling_update.get_or_insert_with(Default::default),
        );
    }
    let retention = spec
        .persistent_volume_claim_retention_policy
        .get_or_insert_with(StatefulSetPersistentVolumeClaimRetentionPolicy::default);
    set_if_empty(&mut retention.when_deleted, RETAIN);
    set_if_empty(&mut retention.when_scaled, RETAIN);
    spec.replicas.get_or_insert(DEFAULT_REPLICAS);
    spec.revision_history_limit
        .get_or_insert(DEFAULT_REVISION_HISTORY_LIMIT);
    default_pod_template(&mut spec.template);
}

fn default_statefulset_rolling_update(rolling: &mut RollingUpdateStatefulSetStrategy) {
    rolling.partition.get_or_insert(0);
    rolling.max_unavailable.get_or_insert(IntOrString::Int(1));
    set_if_empty(&mut rolling.pod_update_policy, RECREATE);
    rolling.min_ready_seconds.get_or_insert(0);
}

/// [`default_statefulset`] for the `v1alpha1` shape (no retention policy there).
pub fn default_statefulset_v1alpha1(set: &mut v1alpha1::StatefulSet) {
    let spec = &mut set.spec;
    set_if_empty(&mut spec.pod_management_policy, ORDERED_READY);
    let strategy = &mut spec.update_strategy;
    set_if_empty(&mut strategy.type_, statefulset::ROLLING_UPDATE);
    if strategy.type_.as_deref() == Some(statefulset::ROLLING_UPDATE) {
        let rolling = strategy.rolling_update.get_or_insert_with(Default::default);
        rolling.partition.get_or_insert(0);
        rolling.max_unavailable.get_or_insert(IntOrString::Int(1));
        set_if_empty(&mut rolling.pod_update_policy, RECREATE);
        rolling.min_ready_seconds.get_or_insert(0);
    }
    spec.replicas.get_or_insert(DEFAULT_REPLICAS);
    spec.revision_history_limit
        .get_or_insert(DEFAULT_REVISION_HISTORY_LIMIT);
    default_pod_template(&mut spec.template);
}

/// `SetDefaultsDaemonSet`: burstReplicas 250, update type `RollingUpdate` with
/// `rollingUpdateType` `Standard` (the deprecated `Surging` becomes `Standard` with maxSurge 1
/// and maxUnavailable 0 where unset; with neither set, maxUnavailable 1 and maxSurge 0),
/// revisionHistoryLimit 10, and the pod template.
pub fn default_daemonset(set: &mut DaemonSet) {
    let spec = &mut set.spec;
    spec.burst_replicas
        .get_or_insert(IntOrString::Int(DAEMONSET_DEFAULT_BURST_REPLICAS));
    let strategy = &mut spec.update_strategy;
    set_if_empty(&mut strategy.type_, statefulset::ROLLING_UPDATE);
    if strategy.type_.as_deref() == Some(statefulset::ROLLING_UPDATE) {
        default_daemonset_rolling_update(
            strategy.rolling_update.get_or_insert_with(Default::default),
        );
    }
    spec.revision_history_limit
        .get_or_insert(DEFAULT_REVISION_HISTORY_LIMIT);
    default_pod_template(&mut spec.template);
}

fn default_daemonset_rolling_update(rolling: &mut RollingUpdateDaemonSet) {
    if rolling.rolling_update_type.as_deref() == Some(daemonset::SURGING) {
        rolling.rolling_update_type = Some(daemonset::STANDARD.to_string());
        rolling.max_surge.get_or_insert(IntOrString::Int(1));
        rolling.max_unavailable.get_or_insert(IntOrString::Int(0));
    }
    set_if_empty(&mut rolling.rolling_update_type, daemonset::STANDARD);
    if rolling.max_unavailable.is_none() && rolling.max_surge.is_none() {
        rolling.max_unavailable = Some(IntOrString::Int(1));
        rolling.max_surge = Some(IntOrString::Int(0));
    }
}

/// Go defaults a string field when it is `""`; for us that is absent or empty.
fn set_if_empty(field: &mut Option<String>, default: &str) {
    if field.as_deref().is_none_or(str::is_empty) {
        *field = Some(default.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::cloneset::{CloneSetContext, validate_cloneset};
    use crate::validate::daemonset::validate_daemonset;
    use crate::validate::field::aggregate;
    use crate::validate::statefulset::validate_statefulset;
    use serde_json::json;

    /// What users write: no restart policy, no pull policy, no strategy.
    fn minimal_template() -> serde_json::Value {
        json!({
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{
                "name": "web", "image": "nginx:1.25",
                "ports": [{"containerPort": 80}],
                "env": [{"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
                "readinessProbe": {"httpGet": {"port": 80}},
                "startupProbe": {"tcpSocket": {"port": 80}},
            }],
            "volumes": [{"name": "cache"}, {"name": "cfg", "configMap": {"name": "cfg"}}]}
        })
    }

    fn minimal(kind: &str, api_version: &str) -> serde_json::Value {
        json!({
            "apiVersion": api_version, "kind": kind,
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": minimal_template()}
        })
    }

    #[test]
    fn pod_template_gets_kubernetes_defaults() {
        let mut template: PodTemplateSpec = serde_json::from_value(minimal_template()).unwrap();
        default_pod_template(&mut template);
        let spec = template.spec.as_ref().unwrap();
        assert_eq!(spec.restart_policy.as_deref(), Some("Always"));
        assert_eq!(spec.dns_policy.as_deref(), Some("ClusterFirst"));
        assert_eq!(spec.scheduler_name.as_deref(), Some("default-scheduler"));
        assert_eq!(spec.termination_grace_period_seconds, Some(30));
        let container = &spec.containers[0];
        assert_eq!(container.image_pull_policy.as_deref(), Some("IfNotPresent"));
        assert_eq!(
            container.termination_message_policy.as_deref(),
            Some("File")
        );
        let ports = container.ports.as_ref().unwrap();
        assert_eq!(ports[0].protocol.as_deref(), Some("TCP"));
        assert_eq!(ports[0].host_port, None);
        let env_ref = container.env.as_ref().unwrap()[0]
            .value_from
            .as_ref()
            .and_then(|f| f.field_ref.as_ref())
            .unwrap();
        assert_eq!(env_ref.api_version.as_deref(), Some("v1"));
        assert_eq!(
            container.startup_probe.as_ref().unwrap().success_threshold,
            Some(1)
        );
        let http = container
            .readiness_probe
            .as_ref()
            .unwrap()
            .http_get
            .as_ref()
            .unwrap();
        assert_eq!(http.path.as_deref(), Some("/"));
        let volumes = spec.volumes.as_ref().unwrap();
        assert!(
            volumes[0].empty_dir.is_some(),
            "a volume without source is an emptyDir"
        );
        assert_eq!(
            volumes[1].config_map.as_ref().unwrap().default_mode,
            Some(0o644)
        );
    }

    #[test]
    fn host_network_ports_get_host_ports() {
        let mut template: PodTemplateSpec = serde_json::from_value(json!({
            "spec": {"hostNetwork": true, "containers": [{"name": "a", "image": "a",
                "ports": [{"containerPort": 8080}, {"containerPort": 9090, "hostPort": 9091}]}]}
        }))
        .unwrap();
        default_pod_template(&mut template);
        let spec = template.spec.unwrap();
        let ports = spec.containers[0].ports.clone().unwrap();
        assert_eq!(ports[0].host_port, Some(8080));
        assert_eq!(ports[1].host_port, Some(9091));
        assert_eq!(
            spec.containers[0].image_pull_policy.as_deref(),
            Some("Always")
        );
    }

    #[test]
    fn cloneset_defaults_and_then_validates() {
        let mut set: CloneSet =
            serde_json::from_value(minimal("CloneSet", "apps.kruise.io/v1alpha1")).unwrap();
        let before = validate_cloneset(&set, None, &CloneSetContext::default());
        assert!(!before.is_empty(), "an undefaulted template is refused");
        default_cloneset(&mut set);
        let strategy = &set.spec.update_strategy;
        assert_eq!(set.spec.replicas, Some(1));
        assert_eq!(set.spec.revision_history_limit, Some(10));
        assert_eq!(strategy.type_.as_deref(), Some(RECREATE));
        assert_eq!(strategy.in_place_update_strategy, None);
        assert_eq!(strategy.partition, Some(IntOrString::Int(0)));
        assert_eq!(
            strategy.max_unavailable,
            Some(IntOrString::String("20%".into()))
        );
        assert_eq!(strategy.max_surge, Some(IntOrString::Int(0)));
        let errors = validate_cloneset(&set, None, &CloneSetContext::default());
        assert!(errors.is_empty(), "{}", aggregate(&errors));
    }

    #[test]
    fn cloneset_in_place_types_get_an_in_place_strategy() {
        let mut value = minimal("CloneSet", "apps.kruise.io/v1alpha1");
        value["spec"]["updateStrategy"] = json!({"type": "InPlaceIfPossible", "maxUnavailable": 2});
        let mut set: CloneSet = serde_json::from_value(value).unwrap();
        default_cloneset(&mut set);
        let strategy = &set.spec.update_strategy;
        assert!(strategy.in_place_update_strategy.is_some());
        assert_eq!(strategy.max_unavailable, Some(IntOrString::Int(2)), "kept");
    }

    #[test]
    fn statefulset_defaults_and_then_validates() {
        let mut set: statefulset::StatefulSet =
            serde_json::from_value(minimal("StatefulSet", "apps.kruise.io/v1beta1")).unwrap();
        default_statefulset(&mut set);
        let spec = &set.spec;
        assert_eq!(spec.pod_management_policy.as_deref(), Some(ORDERED_READY));
        let rolling = spec.update_strategy.rolling_update.as_ref().unwrap();
        assert_eq!(rolling.partition, Some(0));
        assert_eq!(rolling.max_unavailable, Some(IntOrString::Int(1)));
        assert_eq!(rolling.pod_update_policy.as_deref(), Some(RECREATE));
        let retention = spec
            .persistent_volume_claim_retention_policy
            .as_ref()
            .unwrap();
        assert_eq!(retention.when_deleted.as_deref(), Some(RETAIN));
        assert_eq!(retention.when_scaled.as_deref(), Some(RETAIN));
        let errors = validate_statefulset(&set, None);
        assert!(errors.is_empty(), "{}", aggregate(&errors));
    }

    #[test]
    fn statefulset_on_delete_gets_no_rolling_update() {
        let mut value = minimal("StatefulSet", "apps.kruise.io/v1beta1");
        value["spec"]["updateStrategy"] = json!({"type": "OnDelete"});
        value["spec"]["persistentVolumeClaimRetentionPolicy"] = json!({"whenDeleted": "Delete"});
        let mut set: statefulset::StatefulSet = serde_json::from_value(value).unwrap();
        default_statefulset(&mut set);
        assert_eq!(set.spec.update_strategy.rolling_update, None);
        let retention = set.spec.persistent_volume_claim_retention_policy.unwrap();
        assert_eq!(retention.when_deleted.as_deref(), Some("Delete"), "kept");
        assert_eq!(retention.when_scaled.as_deref(), Some(RETAIN));
    }

    #[test]
    fn v1alpha1_statefulset_defaults() {
        let mut set: v1alpha1::StatefulSet =
            serde_json::from_value(minimal("StatefulSet", "apps.kruise.io/v1alpha1")).unwrap();
        default_statefulset_v1alpha1(&mut set);
        let rolling = set.spec.update_strategy.rolling_update.as_ref().unwrap();
        assert_eq!(rolling.pod_update_policy.as_deref(), Some(RECREATE));
        assert_eq!(set.spec.replicas, Some(1));
        let errors = crate::validate::statefulset::validate_statefulset_v1alpha1(&set, None);
        assert!(errors.is_empty(), "{}", aggregate(&errors));
    }

    #[test]
    fn daemonset_defaults_and_then_validates() {
        let mut set: DaemonSet =
            serde_json::from_value(minimal("DaemonSet", "apps.kruise.io/v1alpha1")).unwrap();
        default_daemonset(&mut set);
        let rolling = set.spec.update_strategy.rolling_update.as_ref().unwrap();
        assert_eq!(set.spec.burst_replicas, Some(IntOrString::Int(250)));
        assert_eq!(
            rolling.rolling_update_type.as_deref(),
            Some(daemonset::STANDARD)
        );
        assert_eq!(rolling.max_unavailable, Some(IntOrString::Int(1)));
        assert_eq!(rolling.max_surge, Some(IntOrString::Int(0)));
        let errors = validate_daemonset(&set, None);
        assert!(errors.is_empty(), "{}", aggregate(&errors));
    }

    #[test]
    fn daemonset_surging_becomes_standard_with_a_surge() {
        let mut value = minimal("DaemonSet", "apps.kruise.io/v1alpha1");
        value["spec"]["updateStrategy"] =
            json!({"rollingUpdate": {"rollingUpdateType": "Surging"}});
        let mut set: DaemonSet = serde_json::from_value(value).unwrap();
        default_daemonset(&mut set);
        let rolling = set.spec.update_strategy.rolling_update.as_ref().unwrap();
        assert_eq!(
            rolling.rolling_update_type.as_deref(),
            Some(daemonset::STANDARD)
        );
        assert_eq!(rolling.max_surge, Some(IntOrString::Int(1)));
        assert_eq!(rolling.max_unavailable, Some(IntOrString::Int(0)));
    }

    #[test]
    fn defaulting_is_idempotent() {
        let mut cloneset: CloneSet =
            serde_json::from_value(minimal("CloneSet", "apps.kruise.io/v1alpha1")).unwrap();
        default_cloneset(&mut cloneset);
        let once = cloneset.clone();
        default_cloneset(&mut cloneset);
        assert_eq!(once, cloneset);
        let mut sts: statefulset::StatefulSet =
            serde_json::from_value(minimal("StatefulSet", "apps.kruise.io/v1beta1")).unwrap();
        default_statefulset(&mut sts);
        let once = sts.clone();
        default_statefulset(&mut sts);
        assert_eq!(once, sts);
        let mut ds: DaemonSet =
            serde_json::from_value(minimal("DaemonSet", "apps.kruise.io/v1alpha1")).unwrap();
        default_daemonset(&mut ds);
        let once = ds.clone();
        default_daemonset(&mut ds);
        assert_eq!(once, ds);
    }
}
