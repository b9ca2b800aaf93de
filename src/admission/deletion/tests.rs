use super::*;
use axum::http::{Request, Response};
use kube::client::Body;
use serde_json::{Value, json};

const ALWAYS: &str =
    "forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Always";

fn review(kind: (&str, &str, &str), operation: &str, old: Option<Value>) -> String {
    json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "u-1",
            "kind": {"group": kind.0, "version": kind.1, "kind": kind.2},
            "operation": operation,
            "oldObject": old,
        }
    })
    .to_string()
}

fn labelled(value: &str) -> Value {
    json!({"metadata": {"name": "shop", "labels": {"policy.kruise.io/delete-protection": value}}})
}

async fn answer(guard: Guard, body: &str, reads: Option<&ClusterReads>) -> AdmissionResponse {
    let (_, request) = super::super::review::decode_envelope(body.as_bytes()).unwrap();
    protect(guard, &request, reads).await
}

fn message(response: &AdmissionResponse) -> &str {
    response.status.as_ref().map_or("", |s| s.message.as_str())
}

const NAMESPACE: (&str, &str, &str) = ("", "v1", "Namespace");
const CRD: (&str, &str, &str) = ("apiextensions.k8s.io", "v1", "CustomResourceDefinition");

#[tokio::test]
async fn always_refuses_every_guarded_kind_without_reading() {
    for (guard, kind) in [
        (Guard::Namespace, NAMESPACE),
        (Guard::Workload, ("apps", "v1", "Deployment")),
        (Guard::Workload, ("apps", "v1", "ReplicaSet")),
        (Guard::Workload, ("apps", "v1", "StatefulSet")),
        (Guard::Service, ("", "v1", "Service")),
        (Guard::Ingress, ("networking.k8s.io", "v1beta1", "Ingress")),
    ] {
        let response = answer(
            guard,
            &review(kind, "DELETE", Some(labelled("Always"))),
            None,
        )
        .await;
        assert!(!response.allowed, "{kind:?}");
        assert_eq!(response.status.as_ref().unwrap().code, 403);
        assert_eq!(message(&response), ALWAYS, "{kind:?}");
    }
    let mut crd = labelled("Always");
    crd["spec"] = json!({"group": "example.com", "names": {"plural": "widgets", "kind": "Widget"}});
    let response = answer(
        Guard::CustomResourceDefinition,
        &review(CRD, "DELETE", Some(crd)),
        None,
    )
    .await;
    assert_eq!(message(&response), ALWAYS);
}

#[tokio::test]
async fn cascading_workloads_decide_on_replicas_services_only_on_always() {
    let mut deployment = labelled("Cascading");
    deployment["spec"] = json!({"replicas": 3});
    let response = answer(
        Guard::Workload,
        &review(
            ("apps", "v1", "Deployment"),
            "DELETE",
            Some(deployment.clone()),
        ),
        None,
    )
    .await;
    assert_eq!(
        message(&response),
        "forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Cascading and replicas 3>0"
    );
    deployment["spec"]["replicas"] = json!(0);
    let body = review(("apps", "v1", "Deployment"), "DELETE", Some(deployment));
    assert!(answer(Guard::Workload, &body, None).await.allowed);
    let body = review(("", "v1", "Service"), "DELETE", Some(labelled("Cascading")));
    assert!(answer(Guard::Service, &body, None).await.allowed);
}

#[tokio::test]
async fn only_deletes_of_the_object_with_its_old_object_are_looked_at() {
    for operation in ["CREATE", "UPDATE", "CONNECT"] {
        let body = review(NAMESPACE, operation, Some(labelled("Always")));
        assert!(
            answer(Guard::Namespace, &body, None).await.allowed,
            "{operation}"
        );
    }
    // Apiservers before 1.16 send no old object: allowed, as OpenKruise.
    let body = review(NAMESPACE, "DELETE", None);
    assert!(answer(Guard::Namespace, &body, None).await.allowed);
    // Being deleted already.
    let mut deleting = labelled("Always");
    deleting["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
    let body = review(NAMESPACE, "DELETE", Some(deleting));
    assert!(answer(Guard::Namespace, &body, None).await.allowed);
}

#[tokio::test]
async fn a_kind_the_path_does_not_guard_is_a_malfunction_and_a_bad_object_is_named() {
    let body = review(
        ("apps", "v1", "DaemonSet"),
        "DELETE",
        Some(labelled("Always")),
    );
    let response = answer(Guard::Workload, &body, None).await;
    assert!(!response.allowed && response.malfunction);
    assert_eq!(
        message(&response),
        "request.kind: Unsupported value: \"apps/v1, Kind=DaemonSet\": this webhook guards the deletion of Deployment, ReplicaSet, StatefulSet only"
    );
    let body = review(
        ("apps", "v1", "ReplicaSet"),
        "DELETE",
        Some(json!({"metadata": {"labels": "Always"}})),
    );
    let response = answer(Guard::Workload, &body, None).await;
    assert_eq!(response.status.as_ref().unwrap().code, 400);
    assert!(
        message(&response).starts_with("request.oldObject.metadata.labels: Invalid value:"),
        "{}",
        message(&response)
    );
}

#[tokio::test]
async fn without_a_cluster_a_cascading_namespace_is_refused() {
    let body = review(NAMESPACE, "DELETE", Some(labelled("Cascading")));
    let response = answer(Guard::Namespace, &body, None).await;
    assert_eq!(
        message(&response),
        format!("forbidden by ResourcesProtectionDeletion for list pods error: {NO_CLUSTER}")
    );
}

// --- a fake apiserver -------------------------------------------------------------------------

type Handle = tower_test::mock::Handle<Request<Body>, Response<Body>>;

/// Answers each request with `reply(path and query)`, or never when it gives `None`; records
/// what was asked.
fn fake_apiserver(
    reply: impl Fn(&str) -> Option<Value> + Send + 'static,
) -> (Client, tokio::sync::mpsc::UnboundedReceiver<String>) {
    let (service, mut handle): (_, Handle) = tower_test::mock::pair();
    let (asked, log) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Some((request, respond)) = handle.next_request().await {
            let uri = request.uri().to_string();
            asked.send(uri.clone()).ok();
            match reply(&uri) {
                Some(body) => respond.send_response(
                    Response::builder()
                        .status(200)
                        .body(Body::from(body.to_string().into_bytes()))
                        .unwrap(),
                ),
                // Never answered: the request hangs until the client gives up.
                None => std::mem::forget(respond),
            }
        }
    });
    (Client::new(service, "default"), log)
}

fn list(items: Value, next: Option<&str>) -> Value {
    json!({"apiVersion": "v1", "kind": "List", "metadata": {"continue": next.unwrap_or("")}, "items": items})
}

/// Pods are counted over every page, metadata only, finished ones left to the field selector,
/// those being deleted not counted; claims only when bound and not being deleted.
#[tokio::test]
async fn a_cascading_namespace_counts_active_pods_over_pages_then_bound_claims() {
    let (client, mut asked) = fake_apiserver(|uri| {
        Some(
            if uri.starts_with("/api/v1/namespaces/shop/pods") && !uri.contains("continue=") {
                list(
                    json!([{"metadata": {"name": "a"}}, {"metadata": {"name": "b", "deletionTimestamp": "2026-01-01T00:00:00Z"}}]),
                    Some("page-2"),
                )
            } else if uri.starts_with("/api/v1/namespaces/shop/pods") {
                list(json!([{"metadata": {"name": "c"}}]), None)
            } else {
                list(
                    json!([
                        {"metadata": {"name": "bound"}, "status": {"phase": "Bound"}},
                        {"metadata": {"name": "pending"}, "status": {"phase": "Pending"}},
                    ]),
                    None,
                )
            },
        )
    });
    let reads = ClusterReads::new(client);
    let body = review(NAMESPACE, "DELETE", Some(labelled("Cascading")));
    let response = answer(Guard::Namespace, &body, Some(&reads)).await;
    assert_eq!(
        message(&response),
        "forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Cascading and active pods 2>0"
    );
    let mut uris = Vec::new();
    while let Ok(uri) = asked.try_recv() {
        uris.push(uri);
    }
    let pods: Vec<&String> = uris.iter().filter(|u| u.contains("/pods")).collect();
    assert_eq!(pods.len(), 2, "{uris:?}");
    assert!(
        pods.iter().all(|u| u
            .contains("fieldSelector=status.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed")
            && u.contains("limit=500")),
        "{pods:?}"
    );
    assert!(pods[1].contains("continue=page-2"), "{pods:?}");

    // No pods left: the bound claim holds the namespace.
    let (client, _) = fake_apiserver(|uri| {
        Some(if uri.contains("/pods") {
            list(json!([]), None)
        } else {
            list(
                json!([{"metadata": {"name": "data"}, "status": {"phase": "Bound"}}]),
                None,
            )
        })
    });
    let reads = ClusterReads::new(client);
    let response = answer(Guard::Namespace, &body, Some(&reads)).await;
    assert_eq!(
        message(&response),
        "forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Cascading and \"Bound\" status pvc 1>0"
    );
}

#[tokio::test]
async fn a_cascading_crd_counts_its_objects_in_the_stored_version() {
    let (client, mut asked) = fake_apiserver(|_| {
        Some(list(
            json!([{"metadata": {"name": "w", "namespace": "a", "deletionTimestamp": "2026-01-01T00:00:00Z"}}]),
            None,
        ))
    });
    let reads = ClusterReads::new(client);
    let mut crd = labelled("Cascading");
    crd["spec"] = json!({"group": "example.com", "names": {"plural": "widgets", "kind": "Widget"},
        "versions": [{"name": "v1alpha1", "storage": false}, {"name": "v1beta1", "storage": true}]});
    let response = answer(
        Guard::CustomResourceDefinition,
        &review(CRD, "DELETE", Some(crd)),
        Some(&reads),
    )
    .await;
    assert!(response.allowed, "{}", message(&response));
    let uri = asked.try_recv().unwrap();
    assert!(
        uri.starts_with("/apis/example.com/v1beta1/widgets?"),
        "{uri}"
    );
}

/// A slow apiserver makes a Cascading decision wait at most the deadline, then refuses; every
/// other request is answered at once meanwhile.
#[tokio::test]
async fn a_slow_apiserver_refuses_within_the_deadline() {
    let (client, _) = fake_apiserver(|_| None);
    let reads = ClusterReads::with_deadline(client, Duration::from_millis(200));
    let body = review(NAMESPACE, "DELETE", Some(labelled("Cascading")));
    let started = std::time::Instant::now();
    let response = answer(Guard::Namespace, &body, Some(&reads)).await;
    let took = started.elapsed();
    assert_eq!(
        message(&response),
        "forbidden by ResourcesProtectionDeletion for list pods error: timed out after 200ms"
    );
    assert!(took < Duration::from_secs(2), "{took:?}");
    // More than CONCURRENT_COUNTS at once: the ones waiting for a turn are bounded too.
    let all = futures::future::join_all(
        (0..CONCURRENT_COUNTS * 2).map(|_| answer(Guard::Namespace, &body, Some(&reads))),
    );
    let started = std::time::Instant::now();
    for response in all.await {
        assert!(!response.allowed);
    }
    assert!(started.elapsed() < Duration::from_secs(2));
    let always = review(NAMESPACE, "DELETE", Some(labelled("Always")));
    let started = std::time::Instant::now();
    assert_eq!(
        message(&answer(Guard::Namespace, &always, Some(&reads)).await),
        ALWAYS
    );
    assert!(started.elapsed() < Duration::from_millis(100));
}
