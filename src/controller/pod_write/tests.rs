use super::*;
use k8s_openapi::api::core::v1::{Container, PodCondition, PodSpec, PodStatus};
use kube::api::ObjectMeta;
use serde_json::json;

fn pod() -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some("web-0".into()),
            namespace: Some("web".into()),
            resource_version: Some("41".into()),
            annotations: Some([("a".to_string(), "1".to_string())].into()),
            ..Default::default()
        },
        spec: Some(PodSpec {
            containers: vec![
                Container {
                    name: "proxy".into(),
                    image: Some("proxy:v1".into()),
                    ..Default::default()
                },
                Container {
                    name: "app".into(),
                    image: Some("app:v1".into()),
                    ..Default::default()
                },
            ],
            ..Default::default()
        }),
        status: Some(PodStatus {
            phase: Some("Running".into()),
            ..Default::default()
        }),
    }
}

fn apply(document: &Value, patch: &Patch) -> Result<Value, json_patch::PatchError> {
    let mut document = document.clone();
    json_patch::patch(&mut document, patch)?;
    Ok(document)
}

#[test]
fn unchanged_pod_needs_no_write() {
    assert!(guarded_patch(&pod(), &pod()).unwrap().is_none());
}

#[test]
fn only_changed_fields_are_sent_and_unknown_fields_survive() {
    let before = pod();
    let mut after = before.clone();
    after.spec.as_mut().unwrap().containers[0].image = Some("proxy:v2".into());
    after
        .metadata
        .annotations
        .as_mut()
        .unwrap()
        .insert("kruise.io/x".into(), "y".into());
    let patch = guarded_patch(&before, &after).unwrap().unwrap();
    let paths: Vec<&str> = patch.0.iter().map(|op| op.path().as_str()).collect();
    assert_eq!(
        paths,
        [
            "/metadata/resourceVersion",
            "/metadata/annotations/kruise.io~1x",
            "/spec/containers/0/image"
        ]
    );
    // The apiserver's copy has fields the typed pod never saw: they stay.
    let mut stored = serde_json::to_value(&before).unwrap();
    stored["spec"]["futureField"] = json!({"kept": true});
    stored["spec"]["containers"][0]["futureContainerField"] = json!(1);
    let written = apply(&stored, &patch).unwrap();
    assert_eq!(written["spec"]["futureField"], json!({"kept": true}));
    assert_eq!(written["spec"]["containers"][0]["futureContainerField"], 1);
    assert_eq!(written["spec"]["containers"][0]["image"], "proxy:v2");
    assert_eq!(written["metadata"]["resourceVersion"], "41");
}

#[test]
fn a_pod_that_moved_on_gets_its_old_version_back_so_the_apiserver_conflicts() {
    let before = pod();
    let mut after = before.clone();
    after.status.as_mut().unwrap().conditions = Some(vec![PodCondition {
        type_: "InPlaceUpdateReady".into(),
        status: "False".into(),
        ..Default::default()
    }]);
    let patch = guarded_patch(&before, &after).unwrap().unwrap();
    let mut newer = serde_json::to_value(&before).unwrap();
    newer["metadata"]["resourceVersion"] = json!("42");
    let written = apply(&newer, &patch).unwrap();
    assert_eq!(written["metadata"]["resourceVersion"], "41");
    assert_eq!(
        written["status"]["conditions"][0]["type"],
        "InPlaceUpdateReady"
    );
}

#[test]
fn a_version_change_in_the_decision_is_not_sent_twice() {
    let before = pod();
    let mut after = before.clone();
    after.metadata.resource_version = Some("99".into());
    after.spec.as_mut().unwrap().containers[1].image = Some("app:v2".into());
    let patch = guarded_patch(&before, &after).unwrap().unwrap();
    let versions: Vec<&PatchOperation> = patch
        .0
        .iter()
        .filter(|op| op.path().as_str() == "/metadata/resourceVersion")
        .collect();
    assert_eq!(versions.len(), 1);
    let written = apply(&serde_json::to_value(&before).unwrap(), &patch).unwrap();
    assert_eq!(written["metadata"]["resourceVersion"], "41");
}
