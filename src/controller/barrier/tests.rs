//! The barrier controller's requests, against the fake apiserver: one reconcile per case, every
//! request pinned.

use axum::http::Method;
use serde_json::{Value, json};

use super::*;
use crate::controller::tests::fake_apiserver::{
    JSON, MERGE_PATCH, Scenario, created, not_found, ok, patched,
};

const CONFIGMAP: &str = "/api/v1/namespaces/default/configmaps/web-barrier";

/// A launch-priority pod as the webhook leaves it: `proxy` (priority 10) ready, `app` (0) held.
fn held_pod() -> Arc<Pod> {
    let barrier = |key: &str| {
        json!([{"name": "KRUISE_CONTAINER_BARRIER",
                "valueFrom": {"configMapKeyRef": {"name": "web-barrier", "key": key}}}])
    };
    Arc::new(
        serde_json::from_value(json!({
            "metadata": {"name": "web", "namespace": "default", "uid": "web-uid", "resourceVersion": "7"},
            "spec": {"containers": [
                {"name": "proxy", "image": "proxy:v1", "env": barrier("p_10")},
                {"name": "app", "image": "app:v1", "env": barrier("p_0")}]},
            "status": {"containerStatuses": [
                {"name": "proxy", "image": "proxy:v1", "imageID": "", "ready": true, "restartCount": 0},
                {"name": "app", "image": "app:v1", "imageID": "", "ready": false, "restartCount": 0}]}
        }))
        .unwrap(),
    )
}

fn configmap(data: Value) -> Value {
    json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "web-barrier", "namespace": "default", "resourceVersion": "3",
            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "web", "uid": "web-uid"}]},
        "data": data
    })
}

/// The reconcile of `pod` against `scenario`; every client is gone when the scenario is checked.
async fn reconcile_once(pod: Arc<Pod>, scenario: Scenario) -> Result<Action, BarrierError> {
    let (client, server) = scenario.start();
    let result = reconcile(pod, Arc::new(Context { client })).await;
    server.finish().await;
    result
}

#[tokio::test]
async fn the_next_key_is_added_to_the_existing_configmap() {
    let mut scenario = Scenario::new();
    scenario
        .expect(Method::GET, CONFIGMAP)
        .reply(ok(configmap(json!({"p_10": "true"}))));
    // Only the missing key, as a merge patch: the key kubelet already read stays untouched.
    scenario
        .expect(Method::PATCH, CONFIGMAP)
        .content_type(MERGE_PATCH)
        .body_satisfies("exactly data.p_0", |body| {
            (body == &json!({"data": {"p_0": "true"}}))
                .then_some(())
                .ok_or(format!("body {body}"))
        })
        .reply_with(patched(configmap(json!({"p_10": "true"})), "4"));
    let action = reconcile_once(held_pod(), scenario).await.unwrap();
    assert_eq!(action, Action::await_change());
}

#[tokio::test]
async fn a_missing_configmap_is_created_owned_by_the_pod() {
    let mut scenario = Scenario::new();
    scenario
        .expect(Method::GET, CONFIGMAP)
        .reply(not_found("configmaps", "web-barrier"));
    scenario
        .expect(Method::POST, "/api/v1/namespaces/default/configmaps")
        .content_type(JSON)
        .body_includes(json!({
            "metadata": {"name": "web-barrier", "namespace": "default",
                "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "web", "uid": "web-uid"}]},
            "data": {"p_10": "true"}
        }))
        .body_satisfies("data holds p_10 only", |body| {
            (body["data"] == json!({"p_10": "true"}))
                .then_some(())
                .ok_or(format!("data {}", body["data"]))
        })
        .reply_with(created("1"));
    let mut pod = Pod::clone(&held_pod());
    pod.status
        .as_mut()
        .unwrap()
        .container_statuses
        .as_mut()
        .unwrap()[0]
        .ready = false;
    let action = reconcile_once(Arc::new(pod), scenario).await.unwrap();
    assert_eq!(action, Action::await_change());
}

#[tokio::test]
async fn a_configmap_holding_every_key_is_not_written() {
    let mut scenario = Scenario::new();
    scenario
        .expect(Method::GET, CONFIGMAP)
        .reply(ok(configmap(json!({"p_10": "true", "p_0": "true"}))));
    reconcile_once(held_pod(), scenario).await.unwrap();
}

#[tokio::test]
async fn a_ready_pod_is_marked_completed() {
    let mut pod = Pod::clone(&held_pod());
    let status = pod.status.as_mut().unwrap();
    status.container_statuses.as_mut().unwrap()[1].ready = true;
    status.conditions = Some(vec![k8s_openapi::api::core::v1::PodCondition {
        type_: "ContainersReady".into(),
        status: "True".into(),
        ..Default::default()
    }]);
    let stored = serde_json::to_value(&pod).unwrap();
    let mut scenario = Scenario::new();
    scenario
        .expect(Method::PATCH, "/api/v1/namespaces/default/pods/web")
        .content_type(MERGE_PATCH)
        .body_satisfies("exactly the completed annotation", |body| {
            let wanted = json!({"metadata": {"annotations": {
                "apps.kruise.io/container-launch-priority-completed": "true"}}});
            (body == &wanted)
                .then_some(())
                .ok_or(format!("body {body}"))
        })
        .reply_with(patched(stored, "8"));
    reconcile_once(Arc::new(pod), scenario).await.unwrap();
}
