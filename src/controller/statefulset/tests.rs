//! The Advanced StatefulSet controller's requests, against the fake apiserver: one reconcile per
//! scenario, every request pinned in order (method, path, query, the essentials of the body).

use std::time::{Duration, Instant};

use axum::http::Method;
use k8s_openapi::api::apps::v1::ControllerRevision;
use serde_json::{Value, json};

use super::*;
use crate::controller::expectations::{Expectations, Seen};
use crate::controller::pod_cache;
use crate::controller::tests::fake_apiserver::{
    JSON, Scenario, created, failure, ok, reconcile_workload, revision_list, store_of,
    workload_context,
};
use crate::controller::workload::{WorkloadError, pvc_key};
use crate::workload::revision;
use kube::runtime::controller::Action as Requeue;

const SET: &str = "/apis/apps.kruise.io/v1beta1/namespaces/db/statefulsets/web";
const REVISIONS: &str = "/apis/apps/v1/namespaces/db/controllerrevisions";
const PODS: &str = "/api/v1/namespaces/db/pods";
const CLAIMS: &str = "/api/v1/namespaces/db/persistentvolumeclaims";
const SELECTOR: (&str, &str) = ("labelSelector", "app=web");
const REGARDING: (&str, &str) = ("StatefulSet", "web");

/// The release note's set: `web` in `db`, a `data` claim template, `policy` (whenScaled,
/// whenDeleted).
fn set(replicas: i32, policy: (&str, &str)) -> StatefulSet {
    serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": "db", "uid": "web-uid", "generation": 1,
            "resourceVersion": "10"},
        "spec": {
            "replicas": replicas, "serviceName": "web",
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx:1"}]}},
            "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}],
            "persistentVolumeClaimRetentionPolicy": {"whenScaled": policy.0, "whenDeleted": policy.1},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0,
                "maxUnavailable": 1, "podUpdatePolicy": "InPlaceIfPossible"}}
        }
    }))
    .unwrap()
}

fn revision_of(set: &StatefulSet) -> ControllerRevision {
    let mut revision = revision::candidate(set, 0, 1).unwrap();
    revision.metadata.resource_version = Some("5".into());
    revision
}

/// A running, ready pod of `set` at `revision`, as the planner made it.
fn running(set: &StatefulSet, revision: &str, ordinal: i64) -> Pod {
    let mut pod = crate::statefulset::identity::new_pod(
        set,
        &set.spec.template,
        revision,
        ordinal,
        "2024-01-01T00:00:00Z",
    );
    pod.metadata.uid = Some(format!("web-{ordinal}-uid"));
    pod.metadata.resource_version = Some(format!("{}", 20 + ordinal));
    pod.spec.as_mut().unwrap().node_name = Some("node-1".into());
    pod.status = serde_json::from_value(json!({"phase": "Running",
        "conditions": [{"type": "Ready", "status": "True"}]}))
    .unwrap();
    pod
}

fn claim(name: &str, owners: Value) -> PersistentVolumeClaim {
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "db", "uid": format!("{name}-uid"),
            "resourceVersion": "30", "labels": {"app": "web"}, "ownerReferences": owners},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    }))
    .unwrap()
}

/// One reconcile of `set` with `pods` and `claims` cached, against `scenario`; what it returned
/// and the expectations it left. Every client is dropped before the scenario is checked.
async fn reconcile_once(
    set: &StatefulSet,
    pods: Vec<Pod>,
    claims: Vec<PersistentVolumeClaim>,
    scenario: Scenario,
) -> (Result<Requeue, WorkloadError>, Expectations) {
    let (summaries, _summaries) = store_of(pods.iter().map(pod_cache::summary));
    let (pods, _pods) = store_of(pods);
    let (pvcs, _pvcs) = store_of(claims);
    let seam = StatefulSetSeam { pvcs };
    reconcile_workload(set, seam, (pods, summaries), scenario).await
}

fn note(expected: &str) -> impl FnOnce(&Value) -> Result<(), String> + Send + use<> {
    let expected = expected.to_string();
    move |body| {
        if body["note"] == expected.as_str() {
            Ok(())
        } else {
            Err(format!("note {}, expected {expected}", body["note"]))
        }
    }
}

fn expect_history(scenario: &mut Scenario, history: &[ControllerRevision]) {
    scenario
        .expect(Method::GET, REVISIONS)
        .query(&[SELECTOR])
        .reply(revision_list(history));
}

/// The status PUT: the whole set with `status` in it, at the observed resourceVersion.
fn expect_status(scenario: &mut Scenario, status: Value) {
    scenario
        .expect(Method::PUT, format!("{SET}/status"))
        .content_type(JSON)
        .body_includes(json!({"metadata": {"resourceVersion": "10"}, "status": status}))
        .reply_with(|received| (axum::http::StatusCode::OK, received.body.clone()));
}

#[tokio::test]
async fn a_new_set_gets_its_revision_then_the_claim_and_pod_of_ordinal_0_then_its_status() {
    let set = set(3, ("Delete", "Retain"));
    let wanted = revision_of(&set);
    let revision = wanted.metadata.name.clone().unwrap();
    let mut scenario = Scenario::new();
    expect_history(&mut scenario, &[]);
    scenario
        .expect(Method::POST, REVISIONS)
        .content_type(JSON)
        .body_includes(json!({
            "metadata": {"name": revision, "labels": {"app": "web"},
                "ownerReferences": [{"apiVersion": "apps.kruise.io/v1beta1",
                    "kind": "StatefulSet", "name": "web", "uid": "web-uid", "controller": true}]},
            "revision": 1, "data": serde_json::to_value(&wanted.data).unwrap()
        }))
        .reply_with(created("11"));
    // The claim first, with the selector's labels and no owner (in range under Delete/Retain).
    scenario
        .expect(Method::POST, CLAIMS)
        .content_type(JSON)
        .body_includes(json!({"metadata": {"name": "data-web-0", "namespace": "db",
            "labels": {"app": "web"}},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}))
        .body_satisfies("no ownerReferences", |body| {
            if body["metadata"]["ownerReferences"].is_null() {
                Ok(())
            } else {
                Err(format!("owners {}", body["metadata"]["ownerReferences"]))
            }
        })
        .reply_with(created("12"));
    scenario
        .event("db", REGARDING, "Normal", "SuccessfulCreate")
        .body_satisfies(
            "names the claim",
            note("create Claim data-web-0 Pod web-0 in StatefulSet web success"),
        );
    scenario
        .expect(Method::POST, PODS)
        .content_type(JSON)
        .body_includes(json!({
            "metadata": {"name": "web-0", "generateName": "web-", "labels": {"app": "web",
                "controller-revision-hash": revision, "statefulset.kubernetes.io/pod-name": "web-0",
                "apps.kubernetes.io/pod-index": "0", "lifecycle.apps.kruise.io/state": "Normal"}},
            "spec": {"hostname": "web-0", "subdomain": "web",
                "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data-web-0"}}]}
        }))
        .reply_with(created("13"));
    scenario
        .event("db", REGARDING, "Normal", "SuccessfulCreate")
        .body_satisfies(
            "names the pod",
            note("create Pod web-0 in StatefulSet web successful"),
        );
    expect_status(
        &mut scenario,
        json!({"observedGeneration": 1, "replicas": 0, "readyReplicas": 0,
            "currentReplicas": 0, "updatedReplicas": 0, "currentRevision": revision,
            "updateRevision": revision, "collisionCount": 0, "labelSelector": "app=web",
            "volumeClaims": [{"volumeClaimName": "data", "compatibleReplicas": 0,
                "compatibleReadyReplicas": 0}]}),
    );
    let (result, mut expectations) = reconcile_once(&set, vec![], vec![], scenario).await;
    assert_eq!(
        result.unwrap(),
        Requeue::requeue(Duration::from_secs(15)),
        "unfinished: looked at again"
    );
    // The next round waits until the cache shows both creates.
    let held = expectations.unsatisfied("db/web", Instant::now(), |_| Seen::Absent);
    assert!(held.is_some());
    let shown = |name: &str| {
        assert!(
            name == "web-0" || name == "persistentvolumeclaim/data-web-0",
            "{name}"
        );
        Seen::Present {
            deleting: false,
            version: Some(13),
        }
    };
    assert_eq!(
        expectations.unsatisfied("db/web", Instant::now(), shown),
        None
    );
}

#[tokio::test]
async fn scale_in_hands_the_claims_to_their_pods_before_deleting_the_highest() {
    // AS-3 Delete/Retain: R 3 → 1, all ready.
    let mut set = set(1, ("Delete", "Retain"));
    let history = [revision_of(&set)];
    let revision = history[0].metadata.name.clone().unwrap();
    set.status = serde_json::from_value(json!({"observedGeneration": 1, "replicas": 3,
        "readyReplicas": 3, "availableReplicas": 3, "currentReplicas": 3, "updatedReplicas": 3,
        "currentRevision": revision, "updateRevision": revision, "collisionCount": 0,
        "labelSelector": "app=web"}))
    .unwrap();
    let pods: Vec<Pod> = (0..3).map(|o| running(&set, &revision, o)).collect();
    let claims: Vec<_> = (0..3)
        .map(|o| claim(&format!("data-web-{o}"), json!(null)))
        .collect();
    let mut scenario = Scenario::new();
    expect_history(&mut scenario, &history);
    for ordinal in [2, 1] {
        scenario
            .expect(Method::PUT, format!("{CLAIMS}/data-web-{ordinal}"))
            .content_type(JSON)
            .body_includes(json!({"metadata": {"resourceVersion": "30",
                "ownerReferences": [{"apiVersion": "v1", "kind": "Pod",
                    "name": format!("web-{ordinal}"), "uid": format!("web-{ordinal}-uid")}]}}))
            .body_satisfies("no controller flag", |body| {
                let owner = &body["metadata"]["ownerReferences"][0];
                if owner["controller"].is_null() && owner["blockOwnerDeletion"].is_null() {
                    Ok(())
                } else {
                    Err(format!("owner {owner}"))
                }
            })
            .reply_with(|received| {
                let mut body = received.body.clone();
                body["metadata"]["resourceVersion"] = json!("31");
                (axum::http::StatusCode::OK, body)
            });
    }
    scenario
        .expect(Method::DELETE, format!("{PODS}/web-2"))
        .reply(ok(
            json!({"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "web-2"}}),
        ));
    scenario
        .event("db", REGARDING, "Normal", "SuccessfulDelete")
        .body_satisfies(
            "names the pod",
            note("delete Pod web-2 in StatefulSet web successful"),
        );
    // The counts of the cache (web-2 still there); the generation is the one observed already.
    let (result, _) = reconcile_once(&set, pods, claims, scenario).await;
    assert_eq!(result.unwrap(), Requeue::requeue(Duration::from_secs(15)));
}

#[tokio::test]
async fn a_refused_claim_is_an_event_and_a_condition_and_holds_its_pod_back() {
    let set = set(1, ("Retain", "Retain"));
    let history = [revision_of(&set)];
    let revision = history[0].metadata.name.clone().unwrap();
    let mut scenario = Scenario::new();
    expect_history(&mut scenario, &history);
    scenario
        .expect(Method::POST, CLAIMS)
        .content_type(JSON)
        .reply(failure(403, "Forbidden", "exceeded quota: storage"));
    scenario
        .event("db", REGARDING, "Warning", "FailedCreate")
        .body_satisfies(
            "the claim's failure",
            note("create Claim data-web-0 for Pod web-0 in StatefulSet web failed error: exceeded quota: storage"),
        );
    let error = "failed to create PVC data-web-0: exceeded quota: storage";
    scenario
        .event("db", REGARDING, "Warning", "FailedCreate")
        .body_satisfies(
            "the pod's failure",
            note(&format!(
                "create Pod web-0 in StatefulSet web failed error: {error}"
            )),
        );
    // No pod create; the status with the condition.
    expect_status(
        &mut scenario,
        json!({"currentRevision": revision, "conditions": [{"type": "FailedCreatePod",
            "status": "True",
            "message": format!("StatefulPodControl failed to create Pod error: {error}")}]}),
    );
    let (result, mut expectations) = reconcile_once(&set, vec![], vec![], scenario).await;
    // Retried after a backoff, not at once.
    assert_eq!(result.unwrap(), Requeue::requeue(Duration::from_secs(10)));
    // Nothing is expected of the refused claim.
    assert_eq!(
        expectations.unsatisfied("db/web", Instant::now(), |_| Seen::Absent),
        None
    );
}

#[tokio::test]
async fn a_reconcile_before_the_cache_shows_its_writes_sends_nothing() {
    let set = set(3, ("Retain", "Retain"));
    let (client, server) = Scenario::new().start();
    let (pods, _pods) = store_of::<Pod>([]);
    let (summaries, _summaries) = store_of::<crate::podmarks::PodSummary>([]);
    let (pvcs, _pvcs) = store_of::<PersistentVolumeClaim>([]);
    let context = workload_context(client, pods, summaries);
    context
        .lock_expectations()
        .expect_create("db/web", &pvc_key("data-web-0"));
    let shell = Arc::new(Shell {
        context,
        seam: StatefulSetSeam { pvcs },
    });
    let action = reconcile(Arc::new(set), shell).await.unwrap();
    server.finish().await;
    assert!(action != Requeue::await_change(), "{action:?}");
}

#[test]
fn a_claim_wakes_the_sets_it_belongs_to_by_name() {
    let web = set(1, ("Retain", "Retain"));
    let mut other: StatefulSet = web.clone();
    other.metadata.name = Some("web-data".into());
    other.metadata.uid = Some("other".into());
    let (sets, _writer) = store_of([web, other]);
    let owners = |name: &str| {
        let mut owners: Vec<String> = pvc_owners(&sets, &claim(name, json!(null)))
            .into_iter()
            .map(|o| o.name)
            .collect();
        owners.sort();
        owners
    };
    assert_eq!(owners("data-web-0"), ["web"]);
    assert_eq!(owners("data-web-data-3"), ["web-data"]);
    assert!(owners("logs-web-0").is_empty());
    assert!(owners("data-web-x").is_empty());
    assert!(owners("data-web").is_empty());
    // Another namespace's claim of that name is not the set's.
    let mut elsewhere = claim("data-web-0", json!(null));
    elsewhere.metadata.namespace = Some("other".into());
    assert!(pvc_owners(&sets, &elsewhere).is_empty());
}
