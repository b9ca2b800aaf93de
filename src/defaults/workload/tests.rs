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
    value["spec"]["updateStrategy"] = json!({"rollingUpdate": {"rollingUpdateType": "Surging"}});
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
