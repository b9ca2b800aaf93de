//! The requests of one reconcile, against the fake apiserver: scale-down, the `podsToDelete`
//! clean-up, history truncation, a revision-name collision and a failed scale.

use axum::http::Method;
use kube::core::PartialObjectMetaExt;
use serde_json::{Value, json};

use super::shell::{
    CLONESET, PODS, REGARDING, REVISIONS, SELECTOR, as_json, cloneset, name_of, reconcile_once,
    reconcile_with_claims, revision_of, running_pod,
};
use super::*;
use crate::controller::expectations::Seen;
use crate::controller::tests::fake_apiserver::{
    self, JSON, MERGE_PATCH, Scenario, check, created, failure, ok, patched, revision_list,
    store_of,
};
use crate::controller::workload::PvcMeta as ClaimMeta;
use crate::controller::workload::pvc_key as claim_key;
use crate::workload::Workload;
use crate::workload::revision;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::runtime::controller::Action as Requeue;
use std::time::Instant;

const CLAIMS: &str = "/api/v1/namespaces/default/persistentvolumeclaims";

/// A running, ready pod of `set` with instance id `id`, created at `created`.
fn pod_with_id(set: &CloneSet, id: &str, resource_version: &str, created: &str) -> Pod {
    let mut pod = as_json(&running_pod(set, resource_version));
    pod["metadata"]["name"] = json!(format!("web-{id}"));
    pod["metadata"]["uid"] = json!(format!("uid-{id}"));
    pod["metadata"]["labels"][crate::cloneset::pvc::INSTANCE_ID] = json!(id);
    pod["metadata"]["creationTimestamp"] = json!(created);
    serde_json::from_value(pod).unwrap()
}

/// The cached metadata of the PVC `data` of instance `id`.
fn claim(id: &str) -> ClaimMeta {
    ObjectMeta {
        name: Some(format!("data-web-{id}")),
        namespace: Some("default".into()),
        labels: Some(
            [
                ("app".to_string(), "web".to_string()),
                (
                    crate::cloneset::pvc::INSTANCE_ID.to_string(),
                    id.to_string(),
                ),
            ]
            .into(),
        ),
        owner_references: Some(vec![cloneset(1, "app:v1").owner_reference()]),
        resource_version: Some("3".into()),
        ..ObjectMeta::default()
    }
    .into_response_partial()
}

/// The status subresource write, holding `status`.
fn expect_status(scenario: &mut Scenario, set: &CloneSet, status: Value) {
    fake_apiserver::expect_status(scenario, CLONESET, status, as_json(set), "30");
}

fn note_is(wanted: String) -> impl FnOnce(&Value) -> Result<(), String> + Send {
    move |body| {
        check(body["note"] == wanted.as_str(), || {
            format!("note {}", body["note"])
        })
    }
}

#[tokio::test]
async fn scale_down_deletes_the_newest_pod_then_its_pvc() {
    let set = cloneset(1, "app:v1");
    let history = [revision_of(&set, 1)];
    let older = pod_with_id(&set, "bbbbb", "5", "2024-01-01T00:00:00Z");
    let newer = pod_with_id(&set, "ccccc", "6", "2024-01-02T00:00:00Z");
    let mut scenario = Scenario::new();
    scenario
        .expect(Method::GET, REVISIONS)
        .query(&[SELECTOR])
        .reply(revision_list(&history));
    scenario
        .expect(Method::DELETE, format!("{PODS}/web-ccccc"))
        .reply(ok(as_json(&newer)));
    scenario
        .event("default", REGARDING, "Normal", "SuccessfulDelete")
        .body_satisfies(
            "names the deleted pod",
            note_is("succeed to delete pod web-ccccc".into()),
        );
    // Only the PVC of the deleted pod's instance id.
    scenario
        .expect(Method::DELETE, format!("{CLAIMS}/data-web-ccccc"))
        .reply(ok(
            json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data-web-ccccc", "namespace": "default"}}),
        ));
    // The status of the pods as listed (both still there).
    expect_status(
        &mut scenario,
        &set,
        json!({"replicas": 2, "readyReplicas": 2}),
    );
    let (pods, _writer) = store_of([older, newer]);
    let (result, mut expectations) =
        reconcile_with_claims(&set, pods, [claim("bbbbb"), claim("ccccc")], scenario).await;
    assert!(result.is_ok(), "{result:?}");
    // Both deletions are awaited: a cache still showing the pod holds the next round back.
    let still_there = |_: &str| Seen::Present {
        deleting: false,
        version: Some(6),
    };
    assert!(
        expectations
            .unsatisfied("default/web", Instant::now(), still_there)
            .is_some()
    );
    assert_eq!(
        expectations.unsatisfied("default/web", Instant::now(), |_| Seen::Absent),
        None
    );
}

#[tokio::test]
async fn pods_to_delete_loses_the_names_of_pods_that_are_gone() {
    let mut set = cloneset(1, "app:v1");
    let pod = running_pod(&set, "5");
    set.spec.scale_strategy.pods_to_delete = Some(vec!["web-gone".into()]);
    let history = [revision_of(&set, 1)];
    let mut scenario = Scenario::new();
    scenario
        .expect(Method::GET, REVISIONS)
        .query(&[SELECTOR])
        .reply(revision_list(&history));
    expect_status(&mut scenario, &set, json!({"replicas": 1}));
    // A merge patch of the spec (no list left: the field is removed).
    scenario
        .expect(Method::PATCH, CLONESET)
        .content_type(MERGE_PATCH)
        .body_satisfies("removes podsToDelete", |body| {
            check(
                *body == json!({"spec": {"scaleStrategy": {"podsToDelete": null}}}),
                || format!("body {body}"),
            )
        })
        .reply_with(patched(as_json(&set), "31"));
    let (pods, _writer) = store_of([pod]);
    let (result, _) = reconcile_once(&set, pods, scenario).await;
    assert!(result.is_ok(), "{result:?}");
}

#[tokio::test]
async fn history_beyond_the_limit_loses_its_oldest_revision_not_worn_by_a_pod() {
    let mut set = cloneset(1, "app:v3");
    set.spec.revision_history_limit = Some(1);
    // v1 and v2 are worn by no pod; one of them may stay.
    let history = [
        revision_of(&cloneset(1, "app:v1"), 1),
        revision_of(&cloneset(1, "app:v2"), 2),
        revision_of(&set, 3),
    ];
    let pod = running_pod(&set, "5");
    let mut scenario = Scenario::new();
    scenario
        .expect(Method::GET, REVISIONS)
        .query(&[SELECTOR])
        .reply(revision_list(&history));
    expect_status(
        &mut scenario,
        &set,
        json!({"replicas": 1, "updatedReplicas": 1}),
    );
    scenario
        .expect(
            Method::DELETE,
            format!("{REVISIONS}/{}", name_of(&history[0])),
        )
        .reply(ok(as_json(&history[0])));
    let (pods, _writer) = store_of([pod]);
    let (result, _) = reconcile_once(&set, pods, scenario).await;
    assert!(result.is_ok(), "{result:?}");
}

#[tokio::test]
async fn a_revision_name_held_by_other_data_bumps_the_collision_count() {
    let set = cloneset(0, "app:v1");
    let first = revision::candidate(&set, 0, 1).unwrap();
    let second = revision::candidate(&set, 1, 1).unwrap();
    let first_hash = first.metadata.labels.as_ref().unwrap()[revision::HASH_LABEL].clone();
    // Another object's revision under the first name (not listed: another controller's).
    let mut squatter = revision_of(&cloneset(1, "other:v1"), 1);
    squatter.metadata.name = first.metadata.name.clone();
    let mut scenario = Scenario::new();
    scenario
        .expect(Method::GET, REVISIONS)
        .query(&[SELECTOR])
        .reply(revision_list(&[]));
    scenario
        .expect(Method::POST, REVISIONS)
        .content_type(JSON)
        .body_includes(json!({"metadata": {"name": name_of(&first)}}))
        .reply(failure(
            409,
            "AlreadyExists",
            "controllerrevisions already exists",
        ));
    scenario
        .expect(Method::GET, format!("{REVISIONS}/{}", name_of(&first)))
        .reply(ok(as_json(&squatter)));
    // Renamed with collision count 1; the hash label keeps the first hash.
    scenario
        .expect(Method::POST, REVISIONS)
        .content_type(JSON)
        .body_includes(json!({"metadata": {"name": name_of(&second),
            "labels": {revision::HASH_LABEL: first_hash}},
            "data": as_json(&second.data)}))
        .reply_with(created("12"));
    expect_status(
        &mut scenario,
        &set,
        json!({"collisionCount": 1, "updateRevision": name_of(&second),
            "currentRevision": name_of(&second), "replicas": 0}),
    );
    let (pods, _writer) = store_of::<Pod>([]);
    let (result, _) = reconcile_once(&set, pods, scenario).await;
    assert!(result.is_ok(), "{result:?}");
}

#[tokio::test]
async fn a_refused_create_sets_failed_scale_in_the_status_written() {
    let set = cloneset(1, "app:v1");
    let history = [revision_of(&set, 1)];
    let refusal = "pods \"web-x\" is forbidden: exceeded quota: pods";
    let mut scenario = Scenario::new();
    scenario
        .expect(Method::GET, REVISIONS)
        .query(&[SELECTOR])
        .reply(revision_list(&history));
    scenario
        .expect(Method::POST, PODS)
        .reply(failure(403, "Forbidden", refusal));
    scenario.event("default", REGARDING, "Warning", "FailedCreate");
    expect_status(
        &mut scenario,
        &set,
        json!({"replicas": 0, "conditions": [
            {"type": "FailedScale", "status": "True", "message": refusal}
        ]}),
    );
    let (pods, _writer) = store_of::<Pod>([]);
    let (result, mut expectations) = reconcile_once(&set, pods, scenario).await;
    assert!(result.is_ok(), "{result:?}");
    // The refused pod is not awaited: the next round may try again.
    assert_eq!(
        expectations.unsatisfied("default/web", Instant::now(), |_| Seen::Absent),
        None
    );
}

#[tokio::test]
async fn a_refused_pre_delete_write_sets_failed_scale_in_the_status_written() {
    let mut set = as_json(&cloneset(1, "app:v1"));
    set["spec"]["lifecycle"] = json!({"preDelete": {"labelsHandler": {"hold": "true"}}});
    let set: CloneSet = serde_json::from_value(set).unwrap();
    let history = [revision_of(&set, 1)];
    let hooked = |id: &str, version: &str, created: &str| {
        let mut pod = pod_with_id(&set, id, version, created);
        pod.metadata
            .labels
            .get_or_insert_default()
            .insert("hold".into(), "true".into());
        pod
    };
    let older = hooked("bbbbb", "5", "2024-01-01T00:00:00Z");
    let newer = hooked("ccccc", "6", "2024-01-02T00:00:00Z");
    let refusal = "etcdserver: request timed out";
    let mut scenario = Scenario::new();
    scenario
        .expect(Method::GET, REVISIONS)
        .query(&[SELECTOR])
        .reply(revision_list(&history));
    // The newest pod goes to PreparingDelete instead of being deleted; the write is refused.
    scenario
        .expect(Method::PATCH, format!("{PODS}/web-ccccc"))
        .body_satisfies("moves the pod to PreparingDelete", |body| {
            check(body.to_string().contains("PreparingDelete"), || {
                format!("body {body}")
            })
        })
        .reply(failure(500, "InternalError", refusal));
    expect_status(
        &mut scenario,
        &set,
        json!({"replicas": 2, "conditions": [
            {"type": "FailedScale", "status": "True", "message": refusal}
        ]}),
    );
    let (pods, _writer) = store_of([older, newer]);
    let (result, _) = reconcile_once(&set, pods, scenario).await;
    assert!(result.is_ok(), "{result:?}");
}

#[tokio::test]
async fn a_failed_scale_alone_writes_no_status() {
    let mut set = cloneset(1, "app:v1");
    let history = [revision_of(&set, 1)];
    let revision = name_of(&history[0]);
    // The status already says what this round counts (no pod, the generation observed).
    set.status = Some(
        serde_json::from_value(json!({
            "observedGeneration": 1, "replicas": 0, "expectedUpdatedReplicas": 1,
            "updateRevision": revision, "currentRevision": revision,
            "collisionCount": 0, "labelSelector": "app=web"
        }))
        .unwrap(),
    );
    let mut scenario = Scenario::new();
    scenario
        .expect(Method::GET, REVISIONS)
        .query(&[SELECTOR])
        .reply(revision_list(&history));
    scenario
        .expect(Method::POST, PODS)
        .reply(failure(403, "Forbidden", "exceeded quota: pods"));
    scenario.event("default", REGARDING, "Warning", "FailedCreate");
    // No status write: FailedScale rides along only with a status that changed (spec 10.1).
    let (pods, _writer) = store_of::<Pod>([]);
    let (result, _) = reconcile_once(&set, pods, scenario).await;
    assert!(result.is_ok(), "{result:?}");
}

#[tokio::test]
async fn pvc_events_release_the_expectations_of_their_names() {
    let key = "default/web";
    let (client, server) = Scenario::new().start();
    let (pods, _pod_writer) = store_of::<Pod>([]);
    let context = super::shell::context(client, pods);
    // The PVC store after the events: `data-web-aaaaa` was created and deleted between two
    // rounds, `data-web-bbbbb` is there.
    let (held, _writer) = store_of([claim("bbbbb")]);
    {
        let mut expectations = context.lock_expectations();
        expectations.expect_create(key, &claim_key("data-web-aaaaa"));
        expectations.expect_create(key, &claim_key("data-web-bbbbb"));
    }
    for id in ["aaaaa", "bbbbb"] {
        let owner = [ObjectRef::<CloneSet>::new("web").within("default")];
        observe::pvc_event(&context, &owner, &held, &claim(id));
    }
    // The cache shows neither: the events alone released them.
    let waiting = context
        .lock_expectations()
        .unsatisfied(key, Instant::now(), |_| Seen::Absent);
    assert_eq!(waiting, None);
    drop(context);
    server.finish().await;
}

/// Issue 35's regression: a round bumped `collisionCount` to 1 and wrote it; a pod event started
/// the next round a few milliseconds later, on the CloneSet as the cache still held it (count 0),
/// and that round wrote the count back to 0. The next round on an object older than the last
/// status write sends nothing and waits for the cache; once the cache shows the write, rounds go
/// on from it.
#[tokio::test]
async fn a_round_on_a_cloneset_older_than_its_own_status_write_sends_nothing() {
    use crate::controller::workload::outcome::IN_FLIGHT_REQUEUE;
    use std::sync::{Arc, Mutex};

    let set = cloneset(0, "app:v1");
    let first = revision::candidate(&set, 0, 1).unwrap();
    let second = revision::candidate(&set, 1, 1).unwrap();
    let mut squatter = revision_of(&cloneset(1, "other:v1"), 1);
    squatter.metadata.name = first.metadata.name.clone();
    let mut created_second = second.clone();
    created_second.metadata.resource_version = Some("12".into());
    let mut scenario = Scenario::new();
    // Round 1: the collision, as in the test above; the status answered at version 30.
    scenario
        .expect(Method::GET, REVISIONS)
        .query(&[SELECTOR])
        .reply(revision_list(&[]));
    scenario.expect(Method::POST, REVISIONS).reply(failure(
        409,
        "AlreadyExists",
        "controllerrevisions already exists",
    ));
    scenario
        .expect(Method::GET, format!("{REVISIONS}/{}", name_of(&first)))
        .reply(ok(as_json(&squatter)));
    scenario
        .expect(Method::POST, REVISIONS)
        .reply_with(created("12"));
    let stored_after_write = Arc::new(Mutex::new(None));
    let keep = stored_after_write.clone();
    let answer = patched(as_json(&set), "30");
    scenario
        .expect(Method::PATCH, format!("{CLONESET}/status"))
        .body_includes(json!({"status": {"collisionCount": 1}}))
        .reply_with(move |received| {
            let (code, object) = answer(received);
            *keep.lock().unwrap() = Some(object.clone());
            (code, object)
        });
    // Round 2 sends nothing. Round 3, on the CloneSet at version 30: the history is read, the
    // revision reused under the written count, and nothing else is written.
    scenario
        .expect(Method::GET, REVISIONS)
        .query(&[SELECTOR])
        .reply(revision_list(&[created_second]));

    let (client, server) = scenario.start();
    let (pods, _writer) = store_of::<Pod>([]);
    let (summaries, _writer) = store_of([]);
    let context =
        crate::controller::tests::fake_apiserver::workload_context(client, pods, summaries);
    let (pvcs, _writer) = store_of::<ClaimMeta>([]);
    let shell = Arc::new(Shell {
        context,
        seam: CloneSetSeam { pvcs },
    });
    let round = |set: &CloneSet| reconcile(Arc::new(set.clone()), shell.clone());
    let first_round = round(&set).await;
    assert!(first_round.is_ok(), "{first_round:?}");
    // The pod event's round, on the CloneSet before the status write (version 10, count 0).
    let stale = round(&set).await;
    assert_eq!(stale.unwrap(), Requeue::requeue(IN_FLIGHT_REQUEUE));
    let caught_up: CloneSet =
        serde_json::from_value(stored_after_write.lock().unwrap().take().unwrap()).unwrap();
    assert_eq!(caught_up.status.as_ref().unwrap().collision_count, Some(1));
    let third = round(&caught_up).await;
    assert_eq!(third.unwrap(), Requeue::await_change());
    drop(shell);
    server.finish().await;
}
