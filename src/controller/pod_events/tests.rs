use std::time::Duration;

use kube::runtime::watcher::Event;
use serde_json::json;

use super::*;

fn pod(name: &str, deleting: bool) -> Pod {
    let mut meta = json!({"name": name, "namespace": "ns", "resourceVersion": "1"});
    if deleting {
        meta["deletionTimestamp"] = json!("2026-11-25T00:00:00Z");
        meta["deletionGracePeriodSeconds"] = json!(0);
    }
    serde_json::from_value(json!({ "metadata": meta })).unwrap()
}

fn names(pods: &[Arc<Pod>]) -> Vec<&str> {
    pods.iter()
        .map(|p| p.metadata.name.as_deref().unwrap_or(""))
        .collect()
}

/// Runs `events` through a feed with one subscriber of each kind; what each heard, in order.
async fn heard(events: Vec<Event<Pod>>) -> (Vec<Arc<Pod>>, Vec<Arc<Pod>>) {
    let (_stores, mut feed) = PodEvents::new(4, |_, _| true);
    let told = feed.subscribe(Deletions::Told);
    let untold = feed.subscribe(Deletions::Untold);
    let watch = futures::stream::iter(events.into_iter().map(Ok));
    // As a controller reads its triggers: polled again only once woken.
    let told = futures::stream::select_all([told]);
    let untold = futures::stream::select_all([untold]);
    let all = async {
        let (_, told, untold) = futures::join!(feed.run(watch), told.collect(), untold.collect());
        (told, untold)
    };
    tokio::time::timeout(Duration::from_secs(5), all)
        .await
        .expect("a subscriber stopped hearing events")
}

/// `kubectl delete pod --force --grace-period=0`: the pod is stored terminating and deleted in
/// one request, and both watch events may arrive before a subscriber reads the first.
#[tokio::test]
async fn a_pod_deleted_before_its_subscriber_reads_it_is_still_told() {
    let (told, untold) = heard(vec![
        Event::Init,
        Event::InitApply(pod("a", false)),
        Event::InitDone,
        Event::Apply(pod("b", true)),
        Event::Delete(pod("b", true)),
        Event::Apply(pod("c", false)),
    ])
    .await;
    assert_eq!(names(&told), ["a", "b", "b", "c"]);
    assert_eq!(names(&untold), ["a", "b", "c"]);
    assert!(told[2].metadata.deletion_timestamp.is_some());
}

#[tokio::test]
async fn a_relist_tells_of_the_pods_deleted_while_the_watch_was_down() {
    let (told, untold) = heard(vec![
        Event::Init,
        Event::InitApply(pod("a", false)),
        Event::InitApply(pod("b", false)),
        Event::InitDone,
        Event::Init,
        Event::InitApply(pod("a", false)),
        Event::InitDone,
    ])
    .await;
    let mut first = names(&told[..2]);
    first.sort_unstable();
    assert_eq!(first, ["a", "b"]);
    assert_eq!(names(&told[2..]), ["b", "a"]);
    assert_eq!(names(&untold[2..]), ["a"]);
}

/// Held: the pods whose name starts with "held".
fn held_by_name(pod: &Pod, _: &PodSummary) -> bool {
    pod.metadata
        .name
        .as_deref()
        .is_some_and(|n| n.starts_with("held"))
}

fn labelled(name: &str, app: &str) -> Pod {
    let mut pod = pod(name, false);
    pod.metadata.labels = Some([("app".to_string(), app.to_string())].into());
    pod
}

#[tokio::test]
async fn only_held_pods_are_stored_whole_and_every_pod_is_summarised_and_told() {
    let (stores, mut feed) = PodEvents::new(16, held_by_name);
    let heard = feed.subscribe(Deletions::Untold);
    let watch = futures::stream::iter(
        vec![
            Event::Init,
            Event::InitApply(labelled("held-a", "web")),
            Event::InitApply(labelled("b", "web")),
            Event::InitDone,
            Event::Apply(labelled("c", "db")),
        ]
        .into_iter()
        .map(Ok),
    );
    let (_, heard) = futures::join!(feed.run(watch), heard.collect::<Vec<_>>());
    assert_eq!(names(&stores.pods.state()), ["held-a"]);
    let mut summarised: Vec<String> = stores
        .summaries
        .state()
        .iter()
        .map(|s| s.name_field().unwrap_or("").to_string())
        .collect();
    summarised.sort();
    assert_eq!(summarised, ["b", "c", "held-a"]);
    // After the list: the held pod from the store, the other as the stand-in its summary gives,
    // with the labels the controllers map events by.
    assert_eq!(names(&heard), ["held-a", "b", "c"]);
    let labels = |pod: &Pod| pod.metadata.labels.clone().unwrap_or_default();
    assert_eq!(labels(&heard[1])["app"], "web");
    assert_eq!(labels(&heard[2])["app"], "db");
}

#[tokio::test]
async fn a_pod_that_stops_being_held_leaves_the_store() {
    let (stores, feed) = PodEvents::new(16, |pod, _| {
        pod.metadata
            .labels
            .as_ref()
            .is_some_and(|l| l.get("app").map(String::as_str) == Some("web"))
    });
    let watch = futures::stream::iter(
        vec![
            Event::Init,
            Event::InitApply(labelled("a", "web")),
            Event::InitDone,
            Event::Apply(labelled("a", "db")),
        ]
        .into_iter()
        .map(Ok),
    );
    feed.run(watch).await;
    assert!(stores.pods.state().is_empty());
    assert_eq!(stores.summaries.state().len(), 1);
}

/// A pod the cache holds as its summary only, deleted while the watch was down, is still told
/// gone after the relist: as its summary's stand-in, with the owners a CloneSet maps it by.
#[tokio::test]
async fn a_relist_tells_of_a_pod_not_held_deleted_while_the_watch_was_down() {
    let (_stores, mut feed) = PodEvents::new(16, held_by_name);
    let told = feed.subscribe(Deletions::Told);
    let mut owned = pod("b", false);
    owned.metadata.owner_references = Some(vec![
        serde_json::from_value(json!({"apiVersion": "apps.kruise.io/v1alpha1",
            "kind": "CloneSet", "name": "web", "uid": "web-uid", "controller": true}))
        .unwrap(),
    ]);
    let watch = futures::stream::iter(
        vec![
            Event::Init,
            Event::InitApply(pod("held-a", false)),
            Event::InitApply(owned.clone()),
            Event::InitDone,
            Event::Init,
            Event::InitApply(pod("held-a", false)),
            Event::InitDone,
        ]
        .into_iter()
        .map(Ok),
    );
    let (_, told) = futures::join!(feed.run(watch), told.collect::<Vec<_>>());
    assert_eq!(names(&told), ["held-a", "b", "b", "held-a"]);
    assert_eq!(
        told[2].metadata.owner_references,
        owned.metadata.owner_references
    );
}
