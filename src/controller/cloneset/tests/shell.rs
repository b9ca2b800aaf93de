//! The CloneSet controller's requests, against the fake apiserver: one reconcile per scenario,
//! every request pinned in order (method, path, query, patch kind, the essentials of the body).

use std::sync::Mutex as TestMutex;

use axum::http::Method;
use k8s_openapi::api::core::v1::Pod;
use kube::runtime::reflector::store::Writer;
use serde_json::{Value, json};

use super::*;
use crate::api::CloneSetBuilder;
use crate::cloneset::{self as core, Action};
use crate::controller::expectations::Expectations;
use crate::controller::expectations::Seen;
use crate::controller::pod_cache;
use crate::controller::tests::fake_apiserver::{
    self, JSON, JSON_PATCH, MERGE_PATCH, Scenario, applied, check, conflict, created, includes,
    list, patched, reconcile_workload, revision_list, store_of, workload_context,
};
use crate::controller::workload::PvcMeta as ClaimMeta;
use crate::controller::workload::outcome::{CONFLICT_REQUEUE, IN_FLIGHT_REQUEUE};
use crate::podmarks::PodSummary;
use crate::workload::revision;
use jiff::Timestamp;
use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::runtime::controller::Action as Requeue;
use kube::runtime::reflector::Store;
use std::time::{Duration, Instant};

pub(super) const CLONESET: &str = "/apis/apps.kruise.io/v1alpha1/namespaces/default/clonesets/web";
pub(super) const REVISIONS: &str = "/apis/apps/v1/namespaces/default/controllerrevisions";
pub(super) const PODS: &str = "/api/v1/namespaces/default/pods";
pub(super) const SELECTOR: (&str, &str) = ("labelSelector", "app=web");
pub(super) const REGARDING: (&str, &str) = ("CloneSet", "web");

pub(super) fn cloneset(replicas: i32, image: &str) -> CloneSet {
    CloneSetBuilder::new("web")
        .resource_version("10")
        .replicas(replicas)
        .image(image)
        .update_type("InPlaceIfPossible")
        .max_unavailable(IntOrString::Int(1))
        .build()
}

/// The revision `set` asks for, numbered `number`, as the apiserver stores it.
pub(super) fn revision_of(set: &CloneSet, number: i64) -> ControllerRevision {
    revision::candidate(set, 0, number).unwrap()
}

pub(super) fn name_of(revision: &ControllerRevision) -> String {
    revision.metadata.name.clone().unwrap()
}

/// The context of a cache that holds every pod of `pods` whole, with their summaries.
pub(super) fn context(client: kube::Client, pods: Store<Pod>) -> Arc<Context> {
    let (summaries, _writer) = store_of(pods.state().iter().map(|p| pod_cache::summary(p)));
    workload_context(client, pods, summaries)
}

/// The shell around `context`, with no PVCs cached (these CloneSets have no volumeClaimTemplates).
fn shell(context: Arc<Context>) -> Arc<Shell<CloneSetSeam>> {
    let (pvcs, _writer) = store_of::<ClaimMeta>([]);
    Arc::new(Shell {
        context,
        seam: CloneSetSeam { pvcs },
    })
}

/// One reconcile of `set` against `scenario`. The context (every client) is dropped before the
/// scenario is checked, so a request in excess fails the test.
pub(super) async fn reconcile_once(
    set: &CloneSet,
    pods: Store<Pod>,
    scenario: Scenario,
) -> (Result<Requeue, CloneSetError>, Expectations) {
    reconcile_with_claims(set, pods, [], scenario).await
}

/// [`reconcile_once`] with `claims` in the PVC cache.
pub(super) async fn reconcile_with_claims(
    set: &CloneSet,
    pods: Store<Pod>,
    claims: impl IntoIterator<Item = ClaimMeta>,
    scenario: Scenario,
) -> (Result<Requeue, CloneSetError>, Expectations) {
    let (summaries, _writer) = store_of(pods.state().iter().map(|p| pod_cache::summary(p)));
    reconcile_on(set, (pods, summaries), claims, scenario).await
}

/// [`reconcile_with_claims`] on a cache that holds `pods` whole and `summaries` of every pod.
pub(super) async fn reconcile_on(
    set: &CloneSet,
    (pods, summaries): (Store<Pod>, Store<PodSummary>),
    claims: impl IntoIterator<Item = ClaimMeta>,
    scenario: Scenario,
) -> (Result<Requeue, CloneSetError>, Expectations) {
    let (pvcs, _writer) = store_of::<ClaimMeta>(claims);
    let seam = CloneSetSeam { pvcs };
    reconcile_workload(set, seam, (pods, summaries), scenario).await
}

pub(super) fn as_json<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap()
}

/// A pod create: `<set>-<5 lowercase alphanumerics>`, the instance id label equal to the suffix,
/// a name not created before in this reconcile (recorded in `names`).
pub(super) fn new_pod_name(
    names: Arc<TestMutex<Vec<String>>>,
) -> impl FnOnce(&Value) -> Result<(), String> + Send {
    move |body| {
        let name = body["metadata"]["name"].as_str().unwrap_or("");
        let id = name.strip_prefix("web-").unwrap_or("");
        check(
            id.len() == 5
                && id
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()),
            || format!("name {name:?}"),
        )?;
        let label = &body["metadata"]["labels"][crate::cloneset::pvc::INSTANCE_ID];
        check(label == id, || format!("instance id {label} for {name}"))?;
        let mut names = names.lock().unwrap();
        check(!names.iter().any(|n| n == name), || {
            format!("{name} created twice")
        })?;
        names.push(name.to_string());
        Ok(())
    }
}

/// The event about the `index`th pod created.
fn created_event_note(
    names: Arc<TestMutex<Vec<String>>>,
    index: usize,
) -> impl FnOnce(&Value) -> Result<(), String> + Send {
    move |body| {
        let name = names.lock().unwrap()[index].clone();
        let wanted = format!("succeed to create pod {name}");
        check(body["note"] == wanted.as_str(), || {
            format!("note {}, expected {wanted}", body["note"])
        })?;
        check(
            body["related"]["kind"] == "Pod" && body["related"]["name"] == name.as_str(),
            || format!("related {}, expected the pod {name}", body["related"]),
        )
    }
}

#[tokio::test]
async fn a_new_cloneset_gets_its_revision_two_pods_and_a_status() {
    let set = cloneset(2, "app:v1");
    let wanted_revision = revision_of(&set, 1);
    let revision = name_of(&wanted_revision);
    let hash = revision::short_hash(&revision).to_string();
    let names = Arc::new(TestMutex::new(Vec::new()));
    let mut scenario = Scenario::new();
    scenario
        .expect(Method::GET, REVISIONS)
        .query(&[SELECTOR])
        .reply(list("ControllerRevisionList", "apps/v1", vec![]));
    scenario
        .expect(Method::POST, REVISIONS)
        .content_type(JSON)
        .body_includes(json!({
            "metadata": {"name": revision, "labels": {"app": "web"},
                "ownerReferences": [{"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
                    "name": "web", "uid": "web-uid", "controller": true}]},
            "revision": 1,
            "data": as_json(&wanted_revision.data)
        }))
        .reply_with(created("11"));
    let new_pod = json!({
        "metadata": {
            "generateName": "web-",
            "namespace": "default",
            "labels": {"app": "web", "controller-revision-hash": revision,
                "pod-template-hash": hash, "lifecycle.apps.kruise.io/state": "PreparingNormal"},
            "ownerReferences": [{"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
                "name": "web", "uid": "web-uid", "controller": true, "blockOwnerDeletion": true}]
        },
        "spec": {
            "containers": [{"name": "main", "image": "app:v1"}],
            "readinessGates": [{"conditionType": "InPlaceUpdateReady"}]
        }
    });
    // Slow start: a batch of one, then a batch of one more, each create followed by its event.
    for (index, version) in [(0, "12"), (1, "13")] {
        scenario
            .expect(Method::POST, PODS)
            .content_type(JSON)
            .body_includes(new_pod.clone())
            .body_satisfies("a fresh <set>-<id> name", new_pod_name(names.clone()))
            .reply_with(created(version));
        // One event per pod: the pod is the event's `related` object, so the recorder does not
        // fold the second create into the first one's series.
        scenario
            .event("default", REGARDING, "Normal", "SuccessfulCreate")
            .body_satisfies(
                "names the created pod, in the note and as related",
                created_event_note(names.clone(), index),
            );
    }
    // The status the cache showed (no pod yet), through the status subresource.
    scenario
        .expect(Method::PATCH, format!("{CLONESET}/status"))
        .content_type(MERGE_PATCH)
        .body_includes(json!({"status": {
            "observedGeneration": 1, "replicas": 0, "readyReplicas": 0, "updatedReplicas": 0,
            "updateRevision": revision, "currentRevision": revision,
            "labelSelector": "app=web"
        }}))
        .reply_with(patched(as_json(&set), "14"));
    let (pods, _writer) = store_of::<Pod>([]);
    let (result, mut expectations) = reconcile_once(&set, pods.clone(), scenario).await;
    assert_eq!(result.unwrap(), Requeue::requeue(IN_FLIGHT_REQUEUE));
    // The creates wait for the cache: a reconcile before it shows them sends nothing.
    let names = names.lock().unwrap().clone();
    assert_eq!(names.len(), 2);
    let held = expectations.unsatisfied("default/web", Instant::now(), |_| {
        crate::controller::expectations::Seen::Absent
    });
    assert!(held.is_some(), "creates of {names:?} not expected");
}

#[tokio::test]
async fn a_reconcile_before_the_cache_shows_its_creates_sends_nothing() {
    let set = cloneset(2, "app:v1");
    let (client, server) = Scenario::new().start();
    let (pods, _writer) = store_of::<Pod>([]);
    let context = context(client, pods);
    context
        .expectations
        .lock()
        .unwrap()
        .expect_create("default/web", "web-abcde");
    let action = reconcile(Arc::new(set), shell(context)).await.unwrap();
    server.finish().await;
    assert!(action != Requeue::await_change(), "{action:?}");
}

/// A pod of `set` named `name` at `resourceVersion`, optionally being deleted.
fn named_pod(set: &CloneSet, name: &str, resource_version: &str, deleting: bool) -> Pod {
    let mut pod = running_pod(set, resource_version);
    pod.metadata.name = Some(name.into());
    pod.metadata.uid = Some(format!("{name}-uid"));
    if deleting {
        pod.metadata.deletion_timestamp = pod.metadata.creation_timestamp.clone();
    }
    pod
}

#[tokio::test]
async fn pod_events_release_the_expectations_the_cache_cannot() {
    let set = cloneset(2, "app:v1");
    let key = "default/web";
    // The store holds each event's outcome: `web-going` with its deletionTimestamp, `web-stays`;
    // `web-flash` was created and deleted before the controller looked.
    let going = named_pod(&set, "web-going", "7", true);
    let stays = named_pod(&set, "web-stays", "8", false);
    let flash = named_pod(&set, "web-flash", "9", false);
    let (client, server) = Scenario::new().start();
    let (pods, _writer) = store_of([going.clone(), stays.clone()]);
    let (summaries, mut writer) = store_of([&going, &stays].map(pod_cache::summary));
    let context = workload_context(client, pods, summaries);
    {
        let mut expectations = context.lock_expectations();
        expectations.expect_create(key, "web-flash");
        expectations.expect_delete(key, "web-going");
        expectations.expect_delete(key, "web-stays");
    }
    let waiting = |context: &Context| {
        context
            .lock_expectations()
            .unsatisfied(key, Instant::now(), |name| match name {
                // The cache: no trace of the flash, the others as before the deletes.
                "web-flash" => Seen::Absent,
                _ => Seen::Present {
                    deleting: false,
                    version: Some(1),
                },
            })
    };
    for pod in [&flash, &going, &stays] {
        observe::pod_event::<CloneSet>(&context, pod);
    }
    assert!(waiting(&context).is_some(), "web-stays is not deleted yet");
    // Its delete event, once the store no longer holds it.
    writer.apply_watcher_event(&kube::runtime::watcher::Event::Delete(pod_cache::summary(
        &stays,
    )));
    observe::pod_event::<CloneSet>(&context, &stays);
    assert_eq!(waiting(&context), None);
    drop(context);
    server.finish().await;
}

/// A running, ready pod of `set` at its revision 1, at `resourceVersion`, in lifecycle Normal.
pub(super) fn running_pod(set: &CloneSet, resource_version: &str) -> Pod {
    let history = [revision_of(set, 1)];
    let snapshot = crate::cloneset::Snapshot {
        cloneset: set,
        pods: &[],
        history: &history,
        update_revision: &name_of(&history[0]),
        collision_count: 0,
        now: Timestamp::UNIX_EPOCH,
    };
    let plan = core::plan(&snapshot, &mut fastrand::Rng::with_seed(1)).unwrap();
    let Some(Action::CreatePod { pod, .. }) = plan.actions.into_iter().next() else {
        panic!("the planner creates the first pod");
    };
    let mut pod = as_json(&pod);
    pod["metadata"]["uid"] = json!("pod-uid");
    pod["metadata"]["resourceVersion"] = json!(resource_version);
    pod["metadata"]["creationTimestamp"] = json!("2024-01-01T00:00:00Z");
    pod["metadata"]["labels"]["lifecycle.apps.kruise.io/state"] = json!("Normal");
    pod["spec"]["nodeName"] = json!("node-1");
    let condition = |type_: &str| json!({"type": type_, "status": "True", "lastTransitionTime": "2024-01-01T00:00:10Z"});
    pod["status"] = json!({
        "phase": "Running",
        "conditions": [condition("PodScheduled"), condition("InPlaceUpdateReady"),
            condition("ContainersReady"), condition("Ready")],
        "containerStatuses": [{"name": "main", "image": "app:v1",
            "imageID": "docker.io/library/app@sha256:1111", "ready": true, "started": true,
            "restartCount": 0, "state": {"running": {"startedAt": "2024-01-01T00:00:05Z"}}}]
    });
    serde_json::from_value(pod).unwrap()
}

/// The CloneSet at `app:v2` with both revisions stored, and its one pod still at v1.
struct UpdateCase {
    set: CloneSet,
    history: Vec<ControllerRevision>,
    target: String,
    pod: Pod,
}

fn update_case() -> UpdateCase {
    let old = cloneset(1, "app:v1");
    let mut set = cloneset(1, "app:v2");
    let history = vec![revision_of(&old, 1), revision_of(&set, 2)];
    let target = name_of(&history[1]);
    // The template changed (generation 2) after a finished rollout of revision 1.
    set.metadata.generation = Some(2);
    set.status = Some(
        serde_json::from_value(json!({
            "observedGeneration": 1, "replicas": 1, "readyReplicas": 1, "availableReplicas": 1,
            "updatedReplicas": 1, "updatedReadyReplicas": 1, "expectedUpdatedReplicas": 1,
            "currentRevision": name_of(&history[0]), "updateRevision": name_of(&history[0]),
            "collisionCount": 0, "labelSelector": "app=web"
        }))
        .unwrap(),
    );
    UpdateCase {
        pod: running_pod(&old, "5"),
        set,
        history,
        target,
    }
}

fn history_list(case: &UpdateCase) -> (axum::http::StatusCode, Value) {
    revision_list(&case.history)
}

/// The pod `body` (a JSON patch) makes of `stored`.
fn condition<'a>(pod: &'a Value, type_: &str) -> &'a Value {
    pod["status"]["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == type_))
        .unwrap_or(&Value::Null)
}

/// The first write of an in-place update: the gate (and with it Ready) False, guarded by the
/// listed version, on the status subresource.
fn expect_gate_false(scenario: &mut Scenario, pod: &Pod, guard: &str) -> String {
    let name = pod.metadata.name.clone().unwrap();
    let stored = as_json(pod);
    let guard = guard.to_string();
    let check_stored = stored.clone();
    scenario
        .expect(Method::PATCH, format!("{PODS}/{name}/status"))
        .content_type(JSON_PATCH)
        .body_satisfies("guarded, sets InPlaceUpdateReady and Ready False, nothing outside status", move |body| {
            check(body[0] == json!({"op": "replace", "path": "/metadata/resourceVersion", "value": guard}),
                || format!("first operation {}", body[0]))?;
            let paths: Vec<&str> = body.as_array().unwrap().iter().skip(1)
                .map(|op| op["path"].as_str().unwrap_or("")).collect();
            check(paths.iter().all(|p| p.starts_with("/status/")), || format!("paths {paths:?}"))?;
            let after = applied(&check_stored, body)?;
            includes(condition(&after, "InPlaceUpdateReady"),
                &json!({"status": "False", "reason": "StartInPlaceUpdate"}), "/InPlaceUpdateReady")?;
            includes(condition(&after, "Ready"), &json!({"status": "False"}), "/Ready")
        });
    name
}

/// The second write: images, revision labels and the state annotation, guarded by the version
/// the gate write returned.
fn expect_image_patch(
    scenario: &mut Scenario,
    name: &str,
    target: &str,
    guard: &str,
    answered: &str,
) {
    let guard = guard.to_string();
    let target = target.to_string();
    let hash = revision::short_hash(&target).to_string();
    scenario
        .expect(Method::PATCH, format!("{PODS}/{name}"))
        .content_type(JSON_PATCH)
        .body_satisfies("guarded image patch with the state annotation", move |body| {
            check(body[0] == json!({"op": "replace", "path": "/metadata/resourceVersion", "value": guard}),
                || format!("first operation {}", body[0]))?;
            let ops = crate::controller::tests::fake_apiserver::patch_operations(body);
            check(!ops.iter().any(|op| op.contains("/status/")), || format!("status touched: {ops:?}"))?;
            let image = crate::controller::tests::fake_apiserver::patch_value(body, "/spec/containers/0/image");
            check(image == Some(&json!("app:v2")), || format!("image {image:?} in {ops:?}"))?;
            let labels = crate::controller::tests::fake_apiserver::patch_value(body, "/metadata/labels/controller-revision-hash");
            check(labels == Some(&json!(target)), || format!("revision label {labels:?} in {ops:?}"))?;
            let template = crate::controller::tests::fake_apiserver::patch_value(body, "/metadata/labels/pod-template-hash");
            check(template == Some(&json!(hash)), || format!("template hash {template:?} in {ops:?}"))?;
            let state = crate::controller::tests::fake_apiserver::patch_value(body, "/metadata/annotations/apps.kruise.io~1inplace-update-state")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("no state annotation in {ops:?}"))?;
            let state: Value = serde_json::from_str(state).map_err(|e| format!("state {state}: {e}"))?;
            includes(&state, &json!({"revision": target,
                "lastContainerStatuses": {"main": {"imageID": "docker.io/library/app@sha256:1111"}}}), "/state")
        })
        .reply(crate::controller::tests::fake_apiserver::ok(json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "resourceVersion": answered}
        })));
}

fn expect_status(scenario: &mut Scenario, case: &UpdateCase) {
    let status = json!({
        "observedGeneration": 2, "replicas": 1, "updatedReplicas": 0,
        "updateRevision": case.target, "currentRevision": name_of(&case.history[0])
    });
    fake_apiserver::expect_status(scenario, CLONESET, status, as_json(&case.set), "20");
}

#[tokio::test]
async fn an_in_place_update_sends_the_gate_then_the_images() {
    let case = update_case();
    let mut scenario = Scenario::new();
    scenario
        .expect(Method::GET, REVISIONS)
        .query(&[SELECTOR])
        .reply(history_list(&case));
    let name = expect_gate_false(&mut scenario, &case.pod, "5");
    scenario.last().reply_with(patched(as_json(&case.pod), "6"));
    expect_image_patch(&mut scenario, &name, &case.target, "6", "7");
    scenario
        .event("default", REGARDING, "Normal", "SuccessfulUpdatePodInPlace")
        .body_satisfies("names the pod and revision", {
            let wanted = format!(
                "successfully update pod {name} in-place(revision {})",
                case.target
            );
            move |body| {
                check(body["note"] == wanted.as_str(), || {
                    format!("note {}", body["note"])
                })
            }
        });
    expect_status(&mut scenario, &case);
    let (pods, _writer) = store_of([case.pod.clone()]);
    let (result, mut expectations) = reconcile_once(&case.set, pods, scenario).await;
    assert!(result.is_ok(), "{result:?}");
    // Both writes' versions are awaited in the cache before the next plan.
    let at = |version: u64| crate::controller::expectations::Seen::Present {
        deleting: false,
        version: Some(version),
    };
    assert!(
        expectations
            .unsatisfied("default/web", Instant::now(), |_| at(6))
            .is_some()
    );
    assert_eq!(
        expectations.unsatisfied("default/web", Instant::now(), |_| at(7)),
        None
    );
}

/// With a grace period, the spec write that starts it is stamped once the gate write has been
/// answered: the grace counts from when the pod left endpoints, not from when the round was
/// planned (on a real node the gate writes of a round's pods landed up to 170 ms after its clock).
#[tokio::test]
async fn a_grace_period_starts_once_the_gate_write_is_answered() {
    let mut case = update_case();
    case.set.spec.update_strategy.in_place_update_strategy =
        Some(crate::api::cloneset::InPlaceUpdateStrategy {
            grace_period_seconds: Some(5),
        });
    let answered = Arc::new(TestMutex::new(None::<Timestamp>));
    let mut scenario = Scenario::new();
    scenario
        .expect(Method::GET, REVISIONS)
        .query(&[SELECTOR])
        .reply(history_list(&case));
    let name = expect_gate_false(&mut scenario, &case.pod, "5");
    let stored = as_json(&case.pod);
    let answered_at = answered.clone();
    scenario.last().reply_with(move |received| {
        // Later than the round's clock, as a write that takes a while.
        std::thread::sleep(Duration::from_millis(20));
        *answered_at.lock().unwrap() = Some(Timestamp::now());
        patched(stored, "6")(received)
    });
    let answered_at = answered.clone();
    scenario
        .expect(Method::PATCH, format!("{PODS}/{name}"))
        .content_type(JSON_PATCH)
        .body_satisfies(
            "the grace starts no earlier than the gate write's answer",
            move |body| {
                let state = crate::controller::tests::fake_apiserver::patch_value(
                    body,
                    "/metadata/annotations/apps.kruise.io~1inplace-update-state",
                )
                .and_then(Value::as_str)
                .ok_or_else(|| format!("no state annotation in {body}"))?;
                check(
                    crate::controller::tests::fake_apiserver::patch_value(
                        body,
                        "/metadata/annotations/apps.kruise.io~1inplace-update-grace",
                    )
                    .is_some(),
                    || format!("no grace annotation in {body}"),
                )?;
                let state: Value =
                    serde_json::from_str(state).map_err(|e| format!("state {state}: {e}"))?;
                let stamp: Timestamp = state["updateTimestamp"]
                    .as_str()
                    .unwrap_or("")
                    .parse()
                    .map_err(|e| format!("updateTimestamp {}: {e}", state["updateTimestamp"]))?;
                let gate = answered_at
                    .lock()
                    .unwrap()
                    .expect("the gate write was answered first");
                check(stamp >= gate, || {
                    format!("grace stamped {stamp}, gate answered {gate}")
                })
            },
        )
        .reply(crate::controller::tests::fake_apiserver::ok(json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "resourceVersion": "7"}
        })));
    scenario.event("default", REGARDING, "Normal", "SuccessfulUpdatePodInPlace");
    expect_status(&mut scenario, &case);
    let (pods, _writer) = store_of([case.pod.clone()]);
    let (result, _) = reconcile_once(&case.set, pods, scenario).await;
    assert!(result.is_ok(), "{result:?}");
}

/// A pod at rest is in the cache as its summary only: the round that starts its update reads it
/// from the apiserver first, and guards the writes with the version it read.
#[tokio::test]
async fn a_pod_cached_as_its_summary_is_read_whole_before_its_update_starts() {
    let case = update_case();
    let summary = pod_cache::summary(&case.pod);
    assert!(!pod_cache::held(&case.pod, &summary), "the pod is at rest");
    let mut read = case.pod.clone();
    read.metadata.resource_version = Some("6".into());
    let mut scenario = Scenario::new();
    scenario
        .expect(Method::GET, REVISIONS)
        .query(&[SELECTOR])
        .reply(history_list(&case));
    let name = case.pod.metadata.name.clone().unwrap();
    scenario
        .expect(Method::GET, format!("{PODS}/{name}"))
        .reply(crate::controller::tests::fake_apiserver::ok(as_json(&read)));
    expect_gate_false(&mut scenario, &read, "6");
    scenario.last().reply_with(patched(as_json(&read), "7"));
    expect_image_patch(&mut scenario, &name, &case.target, "7", "8");
    scenario.event("default", REGARDING, "Normal", "SuccessfulUpdatePodInPlace");
    expect_status(&mut scenario, &case);
    let (pods, _) = store_of::<Pod>([]);
    let (summaries, _) = store_of([summary]);
    let (result, _) = reconcile_on(&case.set, (pods, summaries), [], scenario).await;
    assert!(result.is_ok(), "{result:?}");
}

#[tokio::test]
async fn a_conflict_on_the_pod_stops_its_writes_and_the_next_reconcile_starts_from_the_newer_pod() {
    let case = update_case();
    let mut scenario = Scenario::new();
    scenario
        .expect(Method::GET, REVISIONS)
        .query(&[SELECTOR])
        .reply(history_list(&case));
    let name = expect_gate_false(&mut scenario, &case.pod, "5");
    scenario.last().reply(conflict("pods", &name));
    // No image patch, no event: the status of what was seen, then a short requeue.
    expect_status(&mut scenario, &case);
    let (pods, mut writer): (Store<Pod>, Writer<Pod>) = store_of([case.pod.clone()]);
    let (result, mut expectations) = reconcile_once(&case.set, pods.clone(), scenario).await;
    assert_eq!(result.unwrap(), Requeue::requeue(CONFLICT_REQUEUE));
    // The refused write is not awaited: nothing holds the next reconcile.
    let seen = |_: &str| crate::controller::expectations::Seen::Present {
        deleting: false,
        version: Some(5),
    };
    assert_eq!(
        expectations.unsatisfied("default/web", Instant::now(), seen),
        None
    );

    // The cache delivers the pod someone else changed (version 6); the retry is decided on it.
    let mut newer = case.pod.clone();
    newer.metadata.resource_version = Some("6".into());
    newer
        .metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert("team".into(), "a".into());
    writer.apply_watcher_event(&watcher::Event::Apply(newer.clone()));
    let mut scenario = Scenario::new();
    scenario
        .expect(Method::GET, REVISIONS)
        .query(&[SELECTOR])
        .reply(history_list(&case));
    expect_gate_false(&mut scenario, &newer, "6");
    scenario.last().reply_with(patched(as_json(&newer), "7"));
    expect_image_patch(&mut scenario, &name, &case.target, "7", "8");
    scenario.event("default", REGARDING, "Normal", "SuccessfulUpdatePodInPlace");
    expect_status(&mut scenario, &case);
    let (result, _) = reconcile_once(&case.set, pods, scenario).await;
    assert!(result.is_ok(), "{result:?}");
}
