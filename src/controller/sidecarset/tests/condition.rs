//! The `SidecarSetUpgradable` condition, which every SidecarSet of a pod writes its entry into,
//! against a stateful fake apiserver with the apiserver's conflict semantics: a JSON patch whose
//! result carries another resourceVersion than the stored pod's is refused with 409, a strategic
//! merge patch without one is applied to whatever is stored (a lost update, as on the apiserver).

use std::sync::Mutex;

use axum::http::{Method, Request, Response, StatusCode};
use kube::client::Body;
use serde_json::{Value, json};

use super::*;
use crate::controller::tests::fake_apiserver::{JSON_PATCH, STRATEGIC_PATCH};

/// One stored pod and what was sent to it.
struct PodServer {
    pod: Mutex<Value>,
    patches: std::sync::atomic::AtomicUsize,
    conflicts: std::sync::atomic::AtomicUsize,
}

impl PodServer {
    fn answer(&self, method: &Method, content_type: &str, body: &[u8]) -> (StatusCode, Value) {
        let mut stored = self.pod.lock().unwrap();
        if method == Method::GET {
            return (StatusCode::OK, stored.clone());
        }
        self.patches
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let sent: Value = serde_json::from_slice(body).unwrap();
        let mut next = stored.clone();
        match content_type {
            JSON_PATCH => {
                let patch: json_patch::Patch = serde_json::from_value(sent).unwrap();
                if json_patch::patch(&mut next, &patch).is_err() {
                    return (StatusCode::UNPROCESSABLE_ENTITY, json!({}));
                }
                if next["metadata"]["resourceVersion"] != stored["metadata"]["resourceVersion"] {
                    self.conflicts
                        .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    return crate::controller::tests::fake_apiserver::conflict("pods", "web-0");
                }
            }
            // Strategic merge of conditions, by type, on whatever is stored.
            STRATEGIC_PATCH => {
                let conditions = next["status"]["conditions"].as_array_mut().unwrap();
                for condition in sent["status"]["conditions"].as_array().unwrap() {
                    conditions.retain(|c| c["type"] != condition["type"]);
                    conditions.push(condition.clone());
                }
            }
            other => panic!("unexpected patch type {other}"),
        }
        let version: u64 = stored["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        next["metadata"]["resourceVersion"] = json!((version + 1).to_string());
        *stored = next.clone();
        (StatusCode::OK, next)
    }

    fn entries(&self) -> serde_json::Map<String, Value> {
        let pod = self.pod.lock().unwrap();
        let condition = pod["status"]["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["type"] == "SidecarSetUpgradable")
            .cloned()
            .unwrap_or(Value::Null);
        condition["message"]
            .as_str()
            .map(|m| serde_json::from_str(m).unwrap())
            .unwrap_or_default()
    }

    fn patches(&self) -> usize {
        self.patches.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// A client whose requests `server` answers, each after a short pause so that writers overlap.
fn client_of(server: Arc<PodServer>) -> kube::Client {
    let service = tower::service_fn(move |request: Request<Body>| {
        let server = server.clone();
        async move {
            let (parts, body) = request.into_parts();
            let bytes = body.collect_bytes().await.unwrap();
            let content_type = parts
                .headers
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string();
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
            let (status, body) = server.answer(&parts.method, &content_type, &bytes);
            Ok::<_, std::convert::Infallible>(
                Response::builder()
                    .status(status)
                    .header("content-type", "application/json")
                    .body(Body::from(serde_json::to_vec(&body).unwrap()))
                    .unwrap(),
            )
        }
    });
    kube::Client::new(service, "default")
}

fn pod_server() -> Arc<PodServer> {
    Arc::new(PodServer {
        pod: Mutex::new(json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web-0", "namespace": "default", "resourceVersion": "1"},
            "spec": {"containers": [{"name": "app", "image": "app:v1"}]},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
        })),
        patches: Default::default(),
        conflicts: Default::default(),
    })
}

const SETS: usize = 100;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_sets_writing_one_pod_at_once_lose_no_entry() {
    let server = pod_server();
    let client = client_of(server.clone());
    let writers = (0..SETS).map(|i| {
        let api: Api<Pod> = Api::namespaced(client.clone(), "default");
        tokio::spawn(async move {
            let id = PodId {
                namespace: "default",
                name: "web-0",
            };
            let name = format!("set-{i:03}");
            // A set whose attempts run out is reconciled again later (its error policy's
            // requeue): here, at once.
            let mut requeues = 0;
            loop {
                match set_upgradable(&api, &id, None, &name, i % 3 != 0).await {
                    Ok(written) => return (written.is_some(), requeues),
                    Err(SidecarSetError::Conflicts { .. }) => requeues += 1,
                    Err(error) => panic!("{name}: {error}"),
                }
            }
        })
    });
    let outcomes = futures::future::join_all(writers).await;
    assert!(outcomes.iter().all(|o| matches!(o, Ok((true, _)))));
    let entries = server.entries();
    assert_eq!(entries.len(), SETS, "entries lost: {entries:?}");
    for i in 0..SETS {
        assert_eq!(entries[&format!("set-{i:03}")], json!(i % 3 != 0));
    }
    assert!(
        server.conflicts.load(std::sync::atomic::Ordering::SeqCst) > 0,
        "the writers never met each other: the test proves nothing"
    );

    // Nothing to change: nothing sent.
    let before = server.patches();
    let api: Api<Pod> = Api::namespaced(client.clone(), "default");
    let id = PodId {
        namespace: "default",
        name: "web-0",
    };
    assert!(
        set_upgradable(&api, &id, None, "set-001", true)
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(server.patches(), before);
}

/// What the writes of before did: a strategic merge without a version overwrites the whole
/// message with each writer's read, and concurrent writers erase each other's entries.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unguarded_merges_of_the_condition_lose_entries() {
    let server = pod_server();
    let client = client_of(server.clone());
    let writers = (0..SETS).map(|i| {
        let api: Api<Pod> = Api::namespaced(client.clone(), "default");
        tokio::spawn(async move {
            let pod = api.get("web-0").await.unwrap();
            let condition = rollout::upgradable_condition(
                &pod,
                &format!("set-{i:03}"),
                true,
                &Time(Timestamp::now()),
            )
            .unwrap();
            let patch = json!({ "status": { "conditions": [condition] } });
            api.patch_status("web-0", &PatchParams::default(), &Patch::Strategic(patch))
                .await
                .unwrap();
        })
    });
    futures::future::join_all(writers).await;
    assert!(server.entries().len() < SETS);
}
