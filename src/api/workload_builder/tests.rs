use serde_json::json;

use super::*;

/// The builders make what the tests' JSON used to spell out.
#[test]
fn builders_give_the_objects_the_json_gives() {
    let from_json: CloneSet = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
        "metadata": {"name": "web", "namespace": "default", "uid": "web-uid", "generation": 1,
            "resourceVersion": "10"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "main", "image": "app:v1"}]}},
            "updateStrategy": {"type": "InPlaceIfPossible", "maxUnavailable": 1}
        }
    }))
    .unwrap();
    let built = CloneSetBuilder::new("web")
        .resource_version("10")
        .replicas(2)
        .image("app:v1")
        .update_type("InPlaceIfPossible")
        .max_unavailable(IntOrString::Int(1))
        .build();
    assert_eq!(built, from_json);

    let statefulset = StatefulSetBuilder::new("db")
        .replicas(3)
        .partition(1)
        .volume_claim_template("data")
        .build();
    let from_json: StatefulSet = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": "default", "uid": "db-uid", "generation": 1},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "db"}},
            "template": {"metadata": {"labels": {"app": "db"}},
                "spec": {"containers": [{"name": "main", "image": "main:v1"}]}},
            "updateStrategy": {"rollingUpdate": {"partition": 1}},
            "volumeClaimTemplates": [{"metadata": {"name": "data"}}]
        }
    }))
    .unwrap();
    assert_eq!(statefulset, from_json);

    let daemonset = DaemonSetBuilder::new("agent")
        .max_surge(IntOrString::String("10%".into()))
        .build();
    assert_eq!(
        daemonset
            .spec
            .update_strategy
            .rolling_update
            .unwrap()
            .max_surge,
        Some(IntOrString::String("10%".into()))
    );

    let since = Timestamp::from_second(100).unwrap();
    let pod = PodBuilder::new("web-0")
        .labels(&[("app", "web")])
        .container("main", "app:v1")
        .running_ready(since)
        .build();
    let status = pod.status.unwrap();
    assert_eq!(status.phase.as_deref(), Some("Running"));
    assert_eq!(status.container_statuses.unwrap()[0].image_id, "id-app:v1");
    assert_eq!(pod.spec.unwrap().node_name.as_deref(), Some("node-1"));
}
