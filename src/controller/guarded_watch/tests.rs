use std::sync::Mutex;

use axum::body::Body as ResponseBody;
use axum::http::{Method, Response};
use futures::stream;
use kube::ResourceExt;
use kube::runtime::events::Reporter;

use crate::controller::events::EventRecorder;
use serde_json::json;

use super::*;
use crate::api::SidecarSet;

fn sidecarset(name: &str, version: &str, revision_history_limit: i64) -> Lenient<SidecarSet> {
    serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "SidecarSet",
        "metadata": {"name": name, "resourceVersion": version, "uid": format!("uid-{name}")},
        "spec": {
            "revisionHistoryLimit": revision_history_limit,
            "containers": [{"name": "proxy", "image": "proxy:v1"}]
        }
    }))
    .unwrap()
}

/// What the guard reports of a refused object.
fn refused(object: Lenient<SidecarSet>) -> Box<Undecodable> {
    Undecodable::of::<SidecarSet>(object.into_result().unwrap_err())
}

fn good(name: &str, version: &str) -> Lenient<SidecarSet> {
    sidecarset(name, version, 10)
}

fn bad(name: &str, version: &str) -> Lenient<SidecarSet> {
    sidecarset(name, version, 99_999_999_999)
}

type Events = Vec<Result<Event<Lenient<SidecarSet>>, watcher::Error>>;

fn list(objects: impl IntoIterator<Item = Lenient<SidecarSet>>) -> Events {
    let mut events = vec![Ok(Event::Init)];
    events.extend(objects.into_iter().map(|o| Ok(Event::InitApply(o))));
    events.push(Ok(Event::InitDone));
    events
}

/// Runs `events` through the guard into a store, as [`watch`] does; returns the store, the
/// typed events and the refused versions reported.
async fn run(events: Events) -> (Store<SidecarSet>, Vec<Event<SidecarSet>>, Vec<Undecodable>) {
    let (store, writer) = reflector::store::<SidecarSet>();
    let reports = Arc::new(Mutex::new(Vec::new()));
    let sink = reports.clone();
    let typed: Vec<_> = guard_events(stream::iter(events), store.clone(), move |refused| {
        sink.lock().unwrap().push(refused.clone())
    })
    .reflect(writer)
    .collect()
    .await;
    let typed = typed.into_iter().map(Result::unwrap).collect();
    let reports = reports.lock().unwrap().clone();
    (store, typed, reports)
}

fn names(store: &Store<SidecarSet>) -> Vec<String> {
    let mut names: Vec<String> = store.state().iter().map(|s| s.name_any()).collect();
    names.sort();
    names
}

#[test]
fn a_refusal_is_reported_with_the_refused_field() {
    let refused = refused(bad("mesh", "7"));
    assert_eq!(refused.key, "mesh");
    assert_eq!(refused.resource_version.as_deref(), Some("7"));
    assert_eq!(refused.path, "spec.revisionHistoryLimit");
    assert!(
        refused.message.contains("99999999999"),
        "{}",
        refused.message
    );
    assert_eq!(refused.reference.kind.as_deref(), Some("SidecarSet"));
    assert_eq!(
        refused.reference.api_version.as_deref(),
        Some("apps.kruise.io/v1beta1")
    );
    assert_eq!(refused.reference.uid.as_deref(), Some("uid-mesh"));
    let set = good("mesh", "7").into_result().unwrap();
    assert_eq!(set.spec.revision_history_limit, Some(10));
}

#[test]
fn a_namespaced_object_is_keyed_by_namespace_and_name() {
    let mut object = bad("web", "3");
    object.meta_mut().namespace = Some("shop".into());
    assert_eq!(refused(object).key, "shop/web");
}

#[tokio::test]
async fn a_list_with_one_bad_object_yields_the_good_ones() {
    let (store, typed, reports) = run(list([good("a", "1"), bad("b", "2"), good("c", "3")])).await;
    assert_eq!(names(&store), ["a", "c"]);
    let listed: Vec<String> = typed
        .iter()
        .filter_map(|e| match e {
            Event::InitApply(s) => Some(s.name_any()),
            _ => None,
        })
        .collect();
    assert_eq!(listed, ["a", "c"]);
    assert_eq!(reports.len(), 1);
    assert_eq!(reports[0].key, "b");
    assert_eq!(reports[0].path, "spec.revisionHistoryLimit");
}

#[tokio::test]
async fn a_version_is_reported_once_across_relists_and_again_when_it_changes() {
    let mut events = list([good("a", "1"), bad("b", "2")]);
    // The watch restarts: the same bad version is listed again, then changed, still bad.
    events.extend(list([good("a", "1"), bad("b", "2")]));
    events.push(Ok(Event::Apply(bad("b", "5"))));
    events.push(Ok(Event::Apply(bad("b", "5"))));
    let (store, _, reports) = run(events).await;
    assert_eq!(names(&store), ["a"]);
    let versions: Vec<_> = reports
        .iter()
        .map(|r| (r.key.as_str(), r.resource_version.as_deref()))
        .collect();
    assert_eq!(versions, [("b", Some("2")), ("b", Some("5"))]);
}

#[tokio::test]
async fn an_object_that_stops_decoding_leaves_the_store_and_returns_when_fixed() {
    let broken = || {
        let mut events = list([good("a", "1"), good("b", "2")]);
        events.push(Ok(Event::Apply(bad("b", "3"))));
        events
    };
    let (store, typed, reports) = run(broken()).await;
    assert_eq!(names(&store), ["a"]);
    assert!(
        matches!(typed.last(), Some(Event::Delete(s)) if s.name_any() == "b"),
        "{typed:?}"
    );
    assert_eq!(reports.len(), 1);

    let mut events = broken();
    events.push(Ok(Event::Apply(good("b", "4"))));
    // Refused again at a new version after being fixed: reported again.
    events.push(Ok(Event::Apply(bad("b", "6"))));
    events.push(Ok(Event::Apply(good("b", "7"))));
    let (store, _, reports) = run(events).await;
    assert_eq!(names(&store), ["a", "b"]);
    assert_eq!(reports.len(), 2);
}

#[tokio::test]
async fn deleting_an_undecodable_object_removes_the_version_held() {
    let mut events = list([good("a", "1"), good("b", "2")]);
    // The version held is good; the deleted object is not (a watch that missed the update).
    events.push(Ok(Event::Delete(bad("b", "3"))));
    // Never held: nothing to delete, nothing reported.
    events.push(Ok(Event::Delete(bad("z", "4"))));
    let (store, typed, reports) = run(events).await;
    assert_eq!(names(&store), ["a"]);
    assert_eq!(
        typed
            .iter()
            .filter(|e| matches!(e, Event::Delete(_)))
            .count(),
        1
    );
    assert!(reports.is_empty());
}

#[tokio::test]
async fn watch_errors_pass_through() {
    let (store, writer) = reflector::store::<SidecarSet>();
    let events: Events = vec![
        Err(watcher::Error::NoResourceVersion),
        Ok(Event::Init),
        Ok(Event::InitDone),
    ];
    let typed: Vec<_> = guard_events(stream::iter(events), store, |_| {})
        .reflect(writer)
        .collect()
        .await;
    assert!(matches!(typed[0], Err(watcher::Error::NoResourceVersion)));
    assert!(matches!(typed[2], Ok(Event::InitDone)));
}

/// Method and path of each request a fake apiserver received.
type Requests = Arc<Mutex<Vec<(Method, String)>>>;

/// A client whose apiserver answers every request `201 {}` and records method and path.
fn recording_client() -> (Client, Requests) {
    let requests = Arc::new(Mutex::new(Vec::new()));
    let seen = requests.clone();
    let service = tower::service_fn(move |request: axum::http::Request<kube::client::Body>| {
        seen.lock()
            .unwrap()
            .push((request.method().clone(), request.uri().path().to_string()));
        async {
            Ok::<_, std::convert::Infallible>(
                Response::builder()
                    .status(201)
                    .body(ResponseBody::from("{}"))
                    .unwrap(),
            )
        }
    });
    (Client::new(service, "default"), requests)
}

#[tokio::test]
async fn a_report_logs_counts_by_kind_and_sends_a_warning_event() {
    let (client, requests) = recording_client();
    let metrics = Arc::new(Metrics::new());
    let reporter = UndecodableReporter::new::<SidecarSet>(
        metrics.clone(),
        EventRecorder::new(
            client,
            Reporter {
                controller: "test".into(),
                instance: None,
            },
        ),
    );
    let refused = refused(bad("b", "2"));
    reporter.report(&refused);
    assert!(
        metrics
            .encode()
            .contains(r#"controller_objects_undecodable_total{kind="SidecarSet"} 1"#)
    );
    // The event goes out in the background.
    for _ in 0..100 {
        if !requests.lock().unwrap().is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let requests = requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert_eq!(requests[0].0, Method::POST);
    assert!(
        // A SidecarSet is cluster-scoped: the core API, which every version takes.
        requests[0]
            .1
            .starts_with("/api/v1/namespaces/default/events"),
        "{requests:?}"
    );
}

#[test]
fn a_long_message_is_cut_to_what_an_event_note_holds() {
    let mut refused = refused(bad("b", "2"));
    refused.message = "é".repeat(2000);
    let note = undecodable_note(&refused);
    assert!(note.len() <= 1024);
    assert!(note.starts_with("the controller cannot read this object"));
}
