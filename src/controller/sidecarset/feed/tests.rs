use std::time::Duration;

use futures::FutureExt;
use kube::ResourceExt;
use kube::runtime::events::Reporter;

use crate::controller::events::EventRecorder;
use serde_json::json;

use super::*;
use crate::metrics::Metrics;

fn object(name: &str, version: &str, image: &str, observed: Option<i64>) -> WatchedSidecarSet {
    let mut object = json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "SidecarSet",
        "metadata": {"name": name, "resourceVersion": version, "generation": 1},
        "spec": {"containers": [{"name": "proxy", "image": image}]}
    });
    if let Some(observed) = observed {
        object["status"] = json!({"observedGeneration": observed, "matchedPods": 0});
    }
    serde_json::from_value(object).unwrap()
}

fn undecodable(name: &str, version: &str) -> WatchedSidecarSet {
    serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "SidecarSet",
        "metadata": {"name": name, "resourceVersion": version},
        "spec": {"revisionHistoryLimit": 99_999_999_999_i64, "containers": []}
    }))
    .unwrap()
}

/// A feed whose reporter's events go to a client that is never answered (nothing here waits for
/// them), and the process's metrics.
fn test_feed() -> (SidecarSetFeed, FeedWriter, Arc<Metrics>) {
    let (client, _handle) = tower_test::mock::pair::<
        axum::http::Request<kube::client::Body>,
        axum::http::Response<kube::client::Body>,
    >();
    let client = kube::Client::new(client, "default");
    let metrics = Arc::new(Metrics::new());
    let recorder = EventRecorder::new(
        client,
        Reporter {
            controller: "test".into(),
            instance: None,
        },
    );
    let (_, refusals) = tokio::sync::watch::channel(Default::default());
    let (feed, writer) = feed(
        UndecodableReporter::new::<SidecarSet>(metrics.clone(), recorder),
        crate::source::history::shared(),
        refusals,
    );
    (feed, writer, metrics)
}

fn list(writer: &mut FeedWriter, objects: Vec<WatchedSidecarSet>) {
    writer.apply(&Event::Init);
    for object in objects {
        writer.apply(&Event::InitApply(object));
    }
    writer.apply(&Event::InitDone);
}

/// The names the trigger stream has delivered so far, without waiting for more, sorted (a
/// store has no order).
fn ready_names(
    triggers: &mut (impl Stream<Item = Arc<Shared<SidecarSet>>> + Unpin),
) -> Vec<String> {
    let mut names = Vec::new();
    while let Some(Some(set)) = triggers.next().now_or_never() {
        names.push(set.name_any());
    }
    names.sort();
    names
}

#[tokio::test]
async fn a_term_reconciles_every_set_held_then_the_changes_beyond_status() {
    let (feed, mut writer, _) = test_feed();
    list(
        &mut writer,
        vec![object("a", "1", "v1", None), object("b", "2", "v1", None)],
    );
    let mut triggers = Box::pin(feed.triggers());
    assert_eq!(ready_names(&mut triggers), ["a", "b"]);

    // The controller's own status write: stored, but no reconcile.
    writer.apply(&Event::Apply(object("a", "3", "v1", Some(1))));
    assert_eq!(ready_names(&mut triggers), Vec::<String>::new());
    let stored = feed.store().get(&ObjectRef::new("a")).unwrap();
    assert_eq!(stored.resource_version().as_deref(), Some("3"));

    // A spec change and a new set are reconciled.
    writer.apply(&Event::Apply(object("b", "4", "v2", None)));
    writer.apply(&Event::Apply(object("c", "5", "v1", None)));
    assert_eq!(ready_names(&mut triggers), ["b", "c"]);

    // A relist may have changed anything: every set again.
    list(
        &mut writer,
        vec![
            object("a", "3", "v1", Some(1)),
            object("b", "4", "v2", None),
        ],
    );
    assert_eq!(ready_names(&mut triggers), ["a", "b"]);
}

#[tokio::test]
async fn a_term_that_starts_before_the_first_list_reconciles_it_when_complete() {
    let (feed, mut writer, _) = test_feed();
    let mut triggers = Box::pin(feed.triggers());
    assert_eq!(ready_names(&mut triggers), Vec::<String>::new());
    list(&mut writer, vec![object("a", "1", "v1", None)]);
    assert_eq!(ready_names(&mut triggers), ["a"]);
}

#[tokio::test]
async fn a_controller_too_far_behind_reconciles_every_set() {
    let (feed, mut writer, _) = test_feed();
    list(&mut writer, vec![object("a", "1", "v1", None)]);
    let mut triggers = Box::pin(feed.triggers());
    assert_eq!(ready_names(&mut triggers), ["a"]);
    for version in 0..CHANGES_BUFFER + 10 {
        let image = format!("v{version}");
        writer.apply(&Event::Apply(object(
            "a",
            &version.to_string(),
            &image,
            None,
        )));
    }
    // The oldest changes were dropped: the store is read whole instead (one set here).
    let names = ready_names(&mut triggers);
    assert!(names.len() <= CHANGES_BUFFER + 1, "{}", names.len());
    assert!(names.iter().all(|n| n == "a"));
}

#[tokio::test]
async fn a_set_the_types_refuse_is_reported_and_left_out() {
    let (feed, mut writer, metrics) = test_feed();
    list(
        &mut writer,
        vec![object("a", "1", "v1", None), undecodable("bad", "2")],
    );
    let names: Vec<String> = feed.store().state().iter().map(|s| s.name_any()).collect();
    assert_eq!(names, ["a"]);
    assert!(
        metrics
            .encode()
            .contains(r#"controller_objects_undecodable_total{kind="SidecarSet"} 1"#)
    );
    // Stops decoding: leaves the store, and its reconcile finds it gone.
    writer.apply(&Event::Apply(undecodable("a", "3")));
    tokio::time::sleep(Duration::from_millis(1)).await;
    assert!(feed.store().get(&ObjectRef::new("a")).is_none());
}

#[test]
fn only_changes_beyond_the_status_count() {
    let decode = |object: WatchedSidecarSet| object.into_result().unwrap().arc().as_ref().clone();
    let before = decode(object("a", "1", "v1", None));
    let status_written = decode(object("a", "2", "v1", Some(1)));
    let spec_changed = decode(object("a", "3", "v2", None));
    let mut labelled = before.clone();
    labelled.labels_mut().insert("team".into(), "x".into());
    assert!(!changed_beyond_status(Some(&before), &status_written));
    assert!(changed_beyond_status(Some(&before), &spec_changed));
    assert!(changed_beyond_status(Some(&before), &labelled));
    assert!(changed_beyond_status(None, &before));
}

/// A set that is the canary of `base` (`"true"` canary annotation), or names it without being one.
fn canary_of(name: &str, version: &str, base: &str, canary: bool) -> WatchedSidecarSet {
    serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "SidecarSet",
        "metadata": {"name": name, "resourceVersion": version, "generation": 1, "annotations": {
            crate::api::keys::SIDECARSET_CANARY: if canary { "true" } else { "false" },
            crate::api::keys::SIDECARSET_BASE: base,
        }},
        "spec": {"containers": [{"name": "proxy", "image": "v1"}]}
    }))
    .unwrap()
}

#[tokio::test]
async fn the_canary_index_follows_the_store_through_changes_deletions_and_relists() {
    let (feed, mut writer, _) = test_feed();
    let canaries = feed.canaries();
    list(
        &mut writer,
        vec![
            object("base", "1", "v1", None),
            canary_of("c1", "2", "base", true),
            canary_of("not-one", "3", "base", false),
            canary_of("self", "4", "self", true),
        ],
    );
    assert_eq!(canaries.canaries_of("base"), ["c1"]);
    // A set named as its own base is no canary of itself.
    assert!(canaries.canaries_of("self").is_empty());

    writer.apply(&Event::Apply(canary_of("c2", "5", "base", true)));
    assert_eq!(canaries.canaries_of("base"), ["c1", "c2"]);
    // c1 moves to another base; c2 stops being a canary.
    writer.apply(&Event::Apply(canary_of("c1", "6", "other", true)));
    writer.apply(&Event::Apply(canary_of("c2", "7", "base", false)));
    assert!(canaries.canaries_of("base").is_empty());
    assert_eq!(canaries.canaries_of("other"), ["c1"]);
    writer.apply(&Event::Delete(canary_of("c1", "8", "other", true)));
    assert!(canaries.canaries_of("other").is_empty());

    // A relist replaces everything once it is complete, as the store does.
    writer.apply(&Event::Init);
    writer.apply(&Event::InitApply(canary_of("c3", "9", "base", true)));
    assert!(canaries.canaries_of("base").is_empty());
    writer.apply(&Event::InitDone);
    assert_eq!(canaries.canaries_of("base"), ["c3"]);
    assert!(canaries.canaries_of("self").is_empty());
}
