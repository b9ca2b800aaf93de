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
            "updatedReplicas": 4, "updatedReadyReplicas": 4, "updatedAvailableReplicas": 4,
            "expectedUpdatedReplicas": 4,
            "updateRevision": "sample-7f", "currentRevision": "sample-6c",
            "labelSelector": "app=sample",
            "conditions": [{"type": "FailedScale", "status": "False", "lastTransitionTime": "2024-01-02T03:04:05Z", "reason": "ok"},
                {"type": "Progressing", "status": "True", "lastUpdateTime": "2024-01-02T03:04:05Z",
                 "lastTransitionTime": "2024-01-02T03:04:05Z", "reason": "CloneSetAvailable",
                 "message": "CloneSet is available"}]
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
    assert_eq!(set.status.as_ref().unwrap().updated_available_replicas, 4);

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
            "UPDATED_AVAILABLE",
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
