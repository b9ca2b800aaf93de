//! The claim step's requests, against the fake apiserver.

use axum::http::Method;
use serde_json::{Value, json};

use super::shell::{
    CLONESET, PODS, REGARDING, REVISIONS, SELECTOR, as_json, cloneset, new_pod_name,
    reconcile_once, revision_of, running_pod,
};
use super::*;
use crate::controller::expectations::Seen;
use crate::controller::tests::fake_apiserver::{
    JSON, MERGE_PATCH, Scenario, conflict, created, expect_owners_patch, ok, patched,
    revision_list, store_of,
};
use crate::controller::workload::outcome::CONFLICT_REQUEUE;
use kube::runtime::controller::Action as Requeue;
use std::time::Instant;

fn history_of(set: &CloneSet) -> (axum::http::StatusCode, Value) {
    revision_list(&[revision_of(set, 1)])
}

/// A running pod of `set` whose only ownerReference names the CloneSet without controlling it.
fn orphan_naming_the_cloneset(set: &CloneSet) -> Pod {
    let mut pod = as_json(&running_pod(set, "5"));
    pod["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps.kruise.io/v1beta1",
        "kind": "CloneSet", "name": "web", "uid": "web-uid"}]);
    serde_json::from_value(pod).unwrap()
}

/// The ownerReferences patch of `pod`: guarded by its version, turning its owners into `owners`.
#[tokio::test]
async fn a_pod_naming_the_cloneset_without_a_controller_is_adopted_and_counted() {
    let set = cloneset(1, "app:v1");
    let pod = orphan_naming_the_cloneset(&set);
    let mut scenario = Scenario::new();
    // The ref manager's canAdopt: the CloneSet, read fresh, is the one listed and not deleting.
    scenario
        .expect(Method::GET, CLONESET)
        .reply(ok(as_json(&set)));
    // The reference is replaced by the controller one (same group, kind and name).
    expect_owners_patch(
        &mut scenario,
        PODS,
        &pod,
        json!([{"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web",
            "uid": "web-uid", "controller": true, "blockOwnerDeletion": true}]),
    )
    .reply_with(patched(as_json(&pod), "6"));
    scenario
        .expect(Method::GET, REVISIONS)
        .query(&[SELECTOR])
        .reply(history_of(&set));
    // Counted in this round: nothing created, one replica.
    scenario
        .expect(Method::PATCH, format!("{CLONESET}/status"))
        .content_type(MERGE_PATCH)
        .body_includes(json!({"status": {"replicas": 1, "readyReplicas": 1}}))
        .reply_with(patched(as_json(&set), "30"));
    let (pods, _writer) = store_of([pod]);
    let (result, mut expectations) = reconcile_once(&set, pods, scenario).await;
    assert!(result.is_ok(), "{result:?}");
    // The next round waits until the cache shows the adopted pod.
    let at = |version: u64| Seen::Present {
        deleting: false,
        version: Some(version),
    };
    let now = Instant::now();
    assert!(
        expectations
            .unsatisfied("default/web", now, |_| at(5))
            .is_some()
    );
    assert_eq!(
        expectations.unsatisfied("default/web", now, |_| at(6)),
        None
    );
}

#[tokio::test]
async fn a_relabelled_pod_is_released_and_replaced_in_the_same_round() {
    let set = cloneset(1, "app:v1");
    let mut pod = running_pod(&set, "5");
    pod.metadata
        .labels
        .as_mut()
        .unwrap()
        .insert("app".into(), "debug".into());
    let names = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut scenario = Scenario::new();
    expect_owners_patch(&mut scenario, PODS, &pod, Value::Null)
        .reply_with(patched(as_json(&pod), "6"));
    scenario
        .expect(Method::GET, REVISIONS)
        .query(&[SELECTOR])
        .reply(history_of(&set));
    scenario
        .expect(Method::POST, PODS)
        .content_type(JSON)
        .body_satisfies("a fresh <set>-<id> name", new_pod_name(names.clone()))
        .reply_with(created("7"));
    scenario.event("default", REGARDING, "Normal", "SuccessfulCreate");
    scenario
        .expect(Method::PATCH, format!("{CLONESET}/status"))
        .content_type(MERGE_PATCH)
        .body_includes(json!({"status": {"replicas": 0}}))
        .reply_with(patched(as_json(&set), "30"));
    let (pods, _writer) = store_of([pod.clone()]);
    let (result, _) = reconcile_once(&set, pods, scenario).await;
    assert!(result.is_ok(), "{result:?}");
    let names = names.lock().unwrap();
    assert!(
        names.len() == 1 && names[0] != pod.metadata.name.clone().unwrap(),
        "{names:?}"
    );
}

#[tokio::test]
async fn a_conflicting_ownership_write_stops_the_round() {
    let set = cloneset(1, "app:v1");
    let pod = orphan_naming_the_cloneset(&set);
    let mut scenario = Scenario::new();
    scenario
        .expect(Method::GET, CLONESET)
        .reply(ok(as_json(&set)));
    let name = pod.metadata.name.clone().unwrap();
    expect_owners_patch(
        &mut scenario,
        PODS,
        &pod,
        json!([{"uid": "web-uid", "controller": true}]),
    )
    .reply(conflict("pods", &name));
    let (pods, _writer) = store_of([pod]);
    let (result, mut expectations) = reconcile_once(&set, pods, scenario).await;
    assert_eq!(result.unwrap(), Requeue::requeue(CONFLICT_REQUEUE));
    assert_eq!(
        expectations.unsatisfied("default/web", Instant::now(), |_| Seen::Absent),
        None
    );
}

#[tokio::test]
async fn no_pod_is_adopted_for_a_cloneset_replaced_meanwhile() {
    let set = cloneset(1, "app:v1");
    let pod = orphan_naming_the_cloneset(&set);
    let mut fresh = set.clone();
    fresh.metadata.uid = Some("new-uid".into());
    let mut scenario = Scenario::new();
    scenario
        .expect(Method::GET, CLONESET)
        .reply(ok(as_json(&fresh)));
    let (pods, _writer) = store_of([pod]);
    let (result, _) = reconcile_once(&set, pods, scenario).await;
    assert!(
        matches!(result, Err(CloneSetError::CannotAdopt(..))),
        "{result:?}"
    );
}

#[tokio::test]
async fn a_bare_pod_with_the_cloneset_labels_is_left_alone() {
    let set = cloneset(1, "app:v1");
    let mut bare = running_pod(&set, "5");
    bare.metadata.owner_references = None;
    let names = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut scenario = Scenario::new();
    // Not listed (it names no CloneSet), so not counted: the CloneSet creates its own pod.
    scenario
        .expect(Method::GET, REVISIONS)
        .query(&[SELECTOR])
        .reply(history_of(&set));
    scenario
        .expect(Method::POST, PODS)
        .body_satisfies("a fresh <set>-<id> name", new_pod_name(names))
        .reply_with(created("7"));
    scenario.event("default", REGARDING, "Normal", "SuccessfulCreate");
    scenario
        .expect(Method::PATCH, format!("{CLONESET}/status"))
        .body_includes(json!({"status": {"replicas": 0}}))
        .reply_with(patched(as_json(&set), "30"));
    let (pods, _writer) = store_of([bare]);
    let (result, _) = reconcile_once(&set, pods, scenario).await;
    assert!(result.is_ok(), "{result:?}");
}

#[test]
fn pod_events_reach_the_controller_or_the_cloneset_that_may_adopt() {
    let pod = |owners: Value| -> Pod {
        serde_json::from_value(json!({"metadata": {"name": "p", "namespace": "ns",
            "ownerReferences": owners}}))
        .unwrap()
    };
    let reference = |kind: &str, name: &str, controller: bool| {
        json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": kind, "name": name,
            "uid": format!("{name}-uid"), "controller": controller})
    };
    let to = |name: &str| ObjectRef::<CloneSet>::new(name).within("ns");
    assert_eq!(
        clonesets_to_sync(&pod(json!([reference("CloneSet", "a", true)]))),
        [to("a")]
    );
    assert_eq!(
        clonesets_to_sync(&pod(json!([
            reference("CloneSet", "a", false),
            reference("CloneSet", "b", false)
        ]))),
        [to("a"), to("b")]
    );
    // Someone else controls it: nobody may adopt it.
    let replica_set = json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs",
        "uid": "rs-uid", "controller": true});
    assert!(
        clonesets_to_sync(&pod(json!([
            replica_set,
            reference("CloneSet", "a", false)
        ])))
        .is_empty()
    );
    assert!(clonesets_to_sync(&pod(json!([]))).is_empty());
}
