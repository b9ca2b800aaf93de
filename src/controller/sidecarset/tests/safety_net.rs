//! The safety net's requests, against the fake apiserver: a pod the set selects that was never
//! injected gets one Warning event, the set its `PodsMissingSidecars` condition (guarded by the
//! resourceVersion it was decided on, decided again on a conflict) and the gauge its count; later
//! rounds and later terms send nothing more; the gauge goes with the set.

use axum::http::Method;
use serde_json::{Value, json};

use super::shell::{context, mesh, settled_status};
use super::*;
use crate::controller::events::once_event_name;
use crate::controller::tests::fake_apiserver::{
    MERGE_PATCH, Scenario, check, failure, patched, store_of,
};

const SET_STATUS: &str = "/apis/apps.kruise.io/v1beta1/sidecarsets/mesh/status";
const EVENTS: &str = "/apis/events.k8s.io/v1/namespaces/default/events";
const GAUGE: &str = "kruise_webhook_sidecarset_pods_missing_sidecars{sidecarset=\"mesh\"}";

/// `web-0`, selected by `mesh` but created without its sidecars, running.
fn bare_pod() -> Pod {
    serde_json::from_value(json!({
        "metadata": {"name": "web-0", "namespace": "default", "uid": "web-0-uid",
            "labels": {"app": "web"}, "resourceVersion": "5",
            "creationTimestamp": "2024-01-01T00:00:00Z"},
        "spec": {"nodeName": "node-1", "containers": [{"name": "app", "image": "app:v1"}]},
        "status": {"phase": "Running"}
    }))
    .unwrap()
}

/// `mesh` settled over no matched pod (the bare pod is not injected, so not the rollout's).
fn settled_mesh() -> SidecarSet {
    let mut set = mesh("proxy:v1");
    set.status = Some(settled_status(&set, &[] as &[Arc<PodSummary>]));
    set
}

fn gauge(context: &Context) -> Option<String> {
    let text = context.metrics.encode();
    text.lines()
        .find_map(|line| line.strip_prefix(GAUGE))
        .map(|value| value.trim().to_string())
}

const MESSAGE: &str = "1 pod lacks its sidecars: default/web-0 (never injected); a pod gets them only when recreated through the webhook";

#[tokio::test]
async fn a_pod_never_injected_is_told_once_counted_and_named_in_the_condition() {
    let set = settled_mesh();
    let pod = bare_pod();
    let mut scenario = Scenario::new();
    // 1. One Warning event on the pod, named after the set and the pod's uid.
    scenario
        .event("default", ("Pod", "web-0"), "Warning", "SidecarsMissing")
        .body_includes(json!({
            "metadata": {"name": once_event_name("web-0", "mesh/web-0-uid")},
            "regarding": {"apiVersion": "v1", "uid": "web-0-uid"},
            "reportingController": "sidecarset-controller",
            "action": "Inject",
        }))
        .body_satisfies("names the set and the reason", |body| {
            let note = body["note"].as_str().unwrap_or("");
            check(
                note.starts_with("sidecarset mesh selects this pod, which lacks its sidecars: never injected: the pod has none of its containers (proxy)"),
                || format!("note {note}"),
            )
        });
    // 2. The condition, the other conditions kept, guarded by the version decided on.
    let stored = serde_json::to_value(&set).unwrap();
    scenario
        .expect(Method::PATCH, SET_STATUS)
        .content_type(MERGE_PATCH)
        .body_includes(json!({
            "metadata": {"resourceVersion": "3"},
            "status": {"conditions": [{
                "type": "PodsMissingSidecars", "status": "True", "reason": "SidecarsMissing",
                "message": MESSAGE, "observedGeneration": 2
            }]}
        }))
        .reply_with(patched(stored, "4"));
    let (client, server) = scenario.start();
    let context = context(client, &pod, &set);
    let first = reconcile(Arc::new(set.clone().into()), context.clone()).await;
    assert_eq!(first.unwrap(), Action::await_change());
    assert_eq!(gauge(&context).as_deref(), Some("1"));

    // The cache shows the condition: the next round sends nothing, the pod told already.
    let mut written = set.clone();
    let conditions = crate::rollout::missing::pods_missing_condition(
        &[],
        &rollout::missing::MissingSidecars {
            paused: false,
            pods: vec![rollout::missing::MissingPod {
                namespace: "default".into(),
                name: "web-0".into(),
                uid: "web-0-uid".into(),
                reason: rollout::missing::MissingReason::NeverInjected {
                    missing: vec!["proxy".into()],
                },
            }],
        },
        Some(2),
        &Time(Timestamp::UNIX_EPOCH),
    );
    written.status.as_mut().unwrap().conditions = conditions;
    written.metadata.resource_version = Some("4".into());
    let again = reconcile(Arc::new(written.clone().into()), context.clone()).await;
    assert_eq!(again.unwrap(), Action::await_change());
    drop(context);
    server.finish().await;

    // A later term tells again; the apiserver holds the event of that name: nothing more.
    let mut scenario = Scenario::new();
    scenario
        .expect(Method::POST, EVENTS)
        .body_includes(json!({"metadata": {"name": once_event_name("web-0", "mesh/web-0-uid")}}))
        .reply(failure(
            409,
            "AlreadyExists",
            "events \"web-0...\" already exists",
        ));
    let (client, server) = scenario.start();
    let context = super::shell::context(client, &pod, &written);
    let later = reconcile(Arc::new(written.clone().into()), context.clone()).await;
    assert_eq!(later.unwrap(), Action::await_change());
    let again = reconcile(Arc::new(written.into()), context.clone()).await;
    assert_eq!(again.unwrap(), Action::await_change());
    assert_eq!(gauge(&context).as_deref(), Some("1"));

    // The set is gone from the feed: its series goes.
    let (empty, _) = store_of::<Shared<SidecarSet>>([]);
    super::super::safety_net::forget_all_but(&context, &empty);
    assert_eq!(gauge(&context), None);
    drop(context);
    server.finish().await;
}

/// The condition's write conflicts (the refusal reporter wrote `InjectionFailure` meanwhile, a
/// change of the status alone, which brings no reconcile): it is decided again on a fresh read and
/// written beside the other condition, guarded by the fresh version.
#[tokio::test]
async fn a_conflicting_condition_write_is_decided_again_on_a_fresh_read() {
    let set = settled_mesh();
    let pod = bare_pod();
    let mut scenario = Scenario::new();
    scenario.event("default", ("Pod", "web-0"), "Warning", "SidecarsMissing");
    let guarded_by = |version: &'static str| {
        move |body: &Value| {
            check(body["metadata"]["resourceVersion"] == version, || {
                format!("guard {}", body["metadata"])
            })
        }
    };
    scenario
        .expect(Method::PATCH, SET_STATUS)
        .content_type(MERGE_PATCH)
        .body_satisfies("guarded by 3", guarded_by("3"))
        .reply(crate::controller::tests::fake_apiserver::conflict(
            "sidecarsets",
            "mesh",
        ));
    let mut refused = serde_json::to_value(&set).unwrap();
    refused["metadata"]["resourceVersion"] = json!("4");
    let failure_condition = json!({"type": "InjectionFailure", "status": "True", "reason": "Invalid",
        "message": "m", "lastTransitionTime": "2024-01-01T00:00:00Z"});
    refused["status"]["conditions"] = json!([failure_condition.clone()]);
    scenario
        .expect(Method::GET, "/apis/apps.kruise.io/v1beta1/sidecarsets/mesh")
        .reply(crate::controller::tests::fake_apiserver::ok(
            refused.clone(),
        ));
    scenario
        .expect(Method::PATCH, SET_STATUS)
        .content_type(MERGE_PATCH)
        .body_satisfies("guarded by 4", guarded_by("4"))
        .body_includes(json!({"status": {"conditions": [
            failure_condition,
            {"type": "PodsMissingSidecars", "status": "True", "message": MESSAGE}
        ]}}))
        .reply_with(patched(refused, "5"));
    let (client, server) = scenario.start();
    let context = context(client, &pod, &set);
    let result = reconcile(Arc::new(set.into()), context.clone()).await;
    drop(context);
    server.finish().await;
    assert_eq!(result.unwrap(), Action::await_change());
}

/// A failing apiserver: the round still does the rollout's work, and looks again soon.
#[tokio::test]
async fn a_failed_condition_write_brings_the_round_back_soon() {
    let failed = failure(500, "InternalError", "etcd is away");
    let result = one_round_answering_the_condition_with(failed).await;
    assert_eq!(result, Action::requeue(FAILED_REQUEUE));
}

/// One round over the bare pod whose condition write is answered with `answer`.
async fn one_round_answering_the_condition_with(answer: (axum::http::StatusCode, Value)) -> Action {
    let set = settled_mesh();
    let pod = bare_pod();
    let mut scenario = Scenario::new();
    scenario.event("default", ("Pod", "web-0"), "Warning", "SidecarsMissing");
    scenario.expect(Method::PATCH, SET_STATUS).reply(answer);
    let (client, server) = scenario.start();
    let context = context(client, &pod, &set);
    let result = reconcile(Arc::new(set.into()), context.clone()).await;
    drop(context);
    server.finish().await;
    result.unwrap()
}
