use super::*;
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

/// A set in either version (the fields both have); the tests of conversion use it too.
pub fn manifest(api_version: &str) -> serde_json::Value {
    json!({
        "apiVersion": api_version,
        "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": 3,
            "serviceName": "web",
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "readinessGates": [{"conditionType": "InPlaceUpdateReady"}],
                    "containers": [{"name": "nginx", "image": "nginx:1.25", "volumeMounts": [{"name": "www", "mountPath": "/usr/share/nginx/html"}]}]
                }
            },
            "volumeClaimTemplates": [{
                "metadata": {"name": "www"},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
            }],
            "updateStrategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {
                    "partition": 1,
                    "maxUnavailable": "50%",
                    "podUpdatePolicy": "InPlaceIfPossible",
                    "paused": false,
                    "unorderedUpdate": {"priorityStrategy": {"orderPriority": [{"orderedKey": "rank"}]}},
                    "inPlaceUpdateStrategy": {"gracePeriodSeconds": 10},
                    "minReadySeconds": 5
                }
            },
            "revisionHistoryLimit": 10
        },
        "status": {
            "observedGeneration": 1, "replicas": 3, "readyReplicas": 3, "availableReplicas": 3,
            "currentReplicas": 3, "updatedReplicas": 3, "currentRevision": "web-1", "updateRevision": "web-1",
            "labelSelector": "app=web"
        }
    })
}

pub fn beta_manifest() -> serde_json::Value {
    let mut value = manifest("apps.kruise.io/v1beta1");
    let spec = value["spec"].as_object_mut().unwrap();
    spec.insert("reserveOrdinals".into(), json!([1, "3-5"]));
    spec.insert(
        "lifecycle".into(),
        json!({"preDelete": {"finalizersHandler": ["example.com/hold"]}}),
    );
    spec.insert("scaleStrategy".into(), json!({"maxUnavailable": 2}));
    spec.insert(
        "persistentVolumeClaimRetentionPolicy".into(),
        json!({"whenDeleted": "Delete", "whenScaled": "Retain"}),
    );
    spec.insert("ordinals".into(), json!({"start": 1}));
    spec.insert(
        "volumeClaimUpdateStrategy".into(),
        json!({"type": "OnPodRollingUpdate"}),
    );
    value
}

#[test]
fn v1beta1_round_trips_with_upstream_json_names() {
    let original = beta_manifest();
    let set: StatefulSet = serde_json::from_value(original.clone()).unwrap();
    assert_eq!(set.pod_management_policy(), PARALLEL);
    assert_eq!(set.pod_update_policy(), "InPlaceIfPossible");
    assert_eq!(
        set.spec.reserve_ordinals,
        Some(vec![IntOrString::Int(1), IntOrString::String("3-5".into())])
    );
    let mut back = serde_json::to_value(&set).unwrap();
    strip_claim_type_meta(&mut back);
    assert_eq!(
        serde_json::from_value::<StatefulSet>(back.clone()).unwrap(),
        set
    );
    for (key, value) in original["spec"].as_object().unwrap() {
        assert_eq!(&back["spec"][key], value, "spec.{key}");
    }
    assert_eq!(back["status"], original["status"]);
}

#[test]
fn wrong_types_are_decode_errors() {
    for (pointer, bad) in [
        ("/spec/podManagementPolicy", json!(1)),
        ("/spec/updateStrategy/rollingUpdate/partition", json!("1")),
        ("/spec/template", json!([1, 2])),
        ("/spec/reserveOrdinals", json!({"a": 1})),
    ] {
        let mut value = beta_manifest();
        *value.pointer_mut(pointer).unwrap() = bad;
        assert!(
            serde_json::from_value::<StatefulSet>(value).is_err(),
            "{pointer} should not decode"
        );
    }
}
