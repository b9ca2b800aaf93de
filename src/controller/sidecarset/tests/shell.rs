//! The SidecarSet rollout controller's requests, against the fake apiserver: one reconcile that
//! upgrades one pod, every request pinned in order.

use axum::http::Method;
use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::Namespace;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::*;
use crate::controller::pod_cache;
use crate::controller::runtime::ApiLimits;
use crate::controller::tests::fake_apiserver::{
    JSON_PATCH, MERGE_PATCH, Scenario, check, includes, ok, patch_operations, patch_value, patched,
    store_of,
};
use crate::defaults::sidecarset::default_and_hash;
use crate::inject::sidecar::{InjectionContext, inject_sidecars};
use crate::metrics::ControllerMetrics;

const POD: &str = "/api/v1/namespaces/default/pods/web-0";

/// `mesh`, whose pods all carry its sidecars as far as its safety net last saw.
pub(super) fn mesh(image: &str) -> SidecarSet {
    let mut set: SidecarSet = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "SidecarSet",
        "metadata": {"name": "mesh", "uid": "mesh-uid", "generation": 2, "resourceVersion": "3"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "containers": [{"name": "proxy", "image": image}]
        }
    }))
    .unwrap();
    default_and_hash(&mut set);
    let nothing_missing = crate::rollout::missing::pods_missing_condition(
        &[],
        &Default::default(),
        Some(2),
        &Time(Timestamp::UNIX_EPOCH),
    );
    set.status = Some(crate::api::SidecarSetStatus {
        conditions: nothing_missing,
        ..Default::default()
    });
    set
}

/// `web-0` as the webhook injected it with `injected`, running and ready at version 5.
fn injected_pod(injected: &SidecarSet) -> Pod {
    let mut pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": "web-0", "namespace": "default", "uid": "web-0-uid",
            "labels": {"app": "web"}, "creationTimestamp": "2024-01-01T00:00:00Z"},
        "spec": {"nodeName": "node-1", "containers": [{"name": "app", "image": "app:v1"}]}
    }))
    .unwrap();
    let context = InjectionContext {
        sidecarsets: &[Arc::new(injected.clone())],
        namespace_labels: None,
        now: "2024-01-01T00:00:00Z",
        sort_sidecars_by_name: false,
        revisions: None,
        draw: &crate::inject::sidecar::random_draw,
    };
    assert!(inject_sidecars(&mut pod, &context).unwrap());
    let mut pod = serde_json::to_value(&pod).unwrap();
    pod["metadata"]["resourceVersion"] = json!("5");
    let condition = |type_: &str| json!({"type": type_, "status": "True", "lastTransitionTime": "2024-01-01T00:00:10Z"});
    let running = |name: &str, image: &str| {
        json!({"name": name, "image": image, "imageID": format!("docker.io/library/{image}@sha256:1"),
            "ready": true, "started": true, "restartCount": 0,
            "state": {"running": {"startedAt": "2024-01-01T00:00:05Z"}}})
    };
    pod["status"] = json!({
        "phase": "Running",
        "conditions": [condition("PodScheduled"), condition("ContainersReady"), condition("Ready")],
        "containerStatuses": [running("proxy", "proxy:v1"), running("app", "app:v1")]
    });
    serde_json::from_value(pod).unwrap()
}

/// The status the round computes for `set` over `pods`, once its revision is registered.
pub(super) fn settled_status(
    set: &SidecarSet,
    pods: &[Arc<PodSummary>],
) -> crate::api::SidecarSetStatus {
    let mut status = rollout::plan_round(set, pods).status;
    status.latest_revision = Some(crate::inject::revision::revision_name(set, 0));
    status
}

/// The context over the shared stores as `run_term` fills them: the pruned pod if the cache holds
/// it whole, its summary, the namespace; the watched history holds `set`'s revision.
pub(super) fn context(client: kube::Client, pod: &Pod, set: &SidecarSet) -> Arc<Context> {
    let revisions = crate::source::history::shared();
    let revision = crate::rollout::history::candidate(set, "kruise-system", 1, 0);
    let watched: crate::k8s::lenient::Lenient<crate::source::history::WatchedRevision> =
        serde_json::from_value(serde_json::to_value(&revision).unwrap()).unwrap();
    revisions
        .write()
        .unwrap()
        .apply(kube::runtime::watcher::Event::Apply(watched));
    let mut pruned = pod.clone();
    pod_cache::prune(&mut pruned);
    let summary = pod_cache::summary(pod);
    let (pods, _) = store_of(pod_cache::held(&pruned, &summary).then_some(pruned));
    let (summaries, _) = store_of([summary]);
    let namespace: Namespace =
        serde_json::from_value(json!({"metadata": {"name": "default"}})).unwrap();
    let (namespaces, _) = store_of([namespace]);
    // The recorder as `run_term` makes it: the term's, with this controller's component.
    let term = Term::new(
        client.clone(),
        ApiLimits::default(),
        "test",
        ControllerMetrics::default(),
        CancellationToken::new(),
    );
    Arc::new(Context {
        client,
        pods,
        summaries,
        namespaces,
        recorder: term.recorder(COMPONENT),
        metrics: Arc::new(crate::metrics::Metrics::new()),
        own_writes: Default::default(),
        revisions,
        revision_namespace: "kruise-system".into(),
        sidecarsets: store_of([Shared::from(set.clone())]).0,
        canaries: Default::default(),
        told: Default::default(),
    })
}

/// A JSON patch of pods/status guarded by `version` that appends `condition` after the pod's three
/// conditions and touches nothing else.
fn guarded_condition(body: &Value, version: &str, condition: Value) -> Result<(), String> {
    let guard = json!({"op": "replace", "path": "/metadata/resourceVersion", "value": version});
    check(body[0] == guard, || format!("first operation {}", body[0]))?;
    let ops = patch_operations(body);
    check(ops.len() == 2, || {
        format!("more than the condition: {ops:?}")
    })?;
    let added = patch_value(body, "/status/conditions/3")
        .ok_or_else(|| format!("no condition added: {ops:?}"))?;
    includes(added, &condition, "/status/conditions/3")
}

#[tokio::test]
async fn one_reconcile_writes_the_status_and_upgrades_the_pod_in_place() {
    let old = mesh("proxy:v1");
    let set = mesh("proxy:v2");
    let new_hash = set.annotation(keys::SIDECARSET_HASH).unwrap().to_string();
    let pod = injected_pod(&old);
    let stored = serde_json::to_value(&pod).unwrap();

    let mut scenario = Scenario::new();
    // 1. The status of what the round saw: one matched pod, none updated yet; the latest
    // revision the one the history holds.
    let revision = crate::inject::revision::revision_name(&set, 0);
    scenario
        .expect(
            Method::PATCH,
            "/apis/apps.kruise.io/v1beta1/sidecarsets/mesh/status",
        )
        .content_type(MERGE_PATCH)
        .body_includes(json!({"status": {
            "observedGeneration": 2, "matchedPods": 1, "updatedPods": 0, "readyPods": 1,
            "updatedReadyPods": null, "latestRevision": revision, "collisionCount": 0
        }}))
        .reply_with(patched(serde_json::to_value(&set).unwrap(), "4"));
    // 2. The upgrade is decided on a fresh read, not on the pruned cache.
    scenario.expect(Method::GET, POD).reply(ok(stored.clone()));
    // 3. One guarded JSON patch: the image and the hash annotation naming the revision the pod
    // is upgraded to, nothing of the status.
    let hash = new_hash.clone();
    let stamp = revision.clone();
    scenario
        .expect(Method::PATCH, POD)
        .content_type(JSON_PATCH)
        .body_satisfies("guarded image and hash patch", move |body| {
            check(
                body[0]
                    == json!({"op": "replace", "path": "/metadata/resourceVersion", "value": "5"}),
                || format!("first operation {}", body[0]),
            )?;
            let ops = patch_operations(body);
            check(!ops.iter().any(|op| op.contains(" /status")), || {
                format!("status touched: {ops:?}")
            })?;
            let proxy = patch_value(body, "/spec/containers/0/image");
            check(proxy == Some(&json!("proxy:v2")), || {
                format!("proxy image {proxy:?} in {ops:?}")
            })?;
            check(
                patch_value(body, "/spec/containers/1/image").is_none(),
                || format!("app image touched: {ops:?}"),
            )?;
            let hashes = patch_value(body, "/metadata/annotations/kruise.io~1sidecarset-hash")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("no hash annotation in {ops:?}"))?;
            let hashes: Value = serde_json::from_str(hashes).map_err(|e| e.to_string())?;
            includes(
                &hashes,
                &json!({"mesh": {"hash": hash, "controllerRevision": stamp}}),
                "/sidecarset-hash",
            )
        })
        .reply_with(patched(stored.clone(), "6"));
    // 4. The event on the pod, from this controller's component as Kruise names it.
    scenario
        .event("default", ("Pod", "web-0"), "Normal", "SidecarSetUpgrade")
        .body_includes(json!({"reportingController": "sidecarset-controller",
            "reportingInstance": "test"}))
        .body_satisfies("names the images", |body| {
            let wanted = "sidecarset mesh upgrades proxy=proxy:v2";
            check(body["note"] == wanted, || format!("note {}", body["note"]))
        });
    // 5. The pod's SidecarSetUpgradable condition, added to the pod the upgrade answered with and
    // guarded by its version, so no other set's entry written meanwhile can be lost.
    scenario
        .expect(Method::PATCH, format!("{POD}/status"))
        .content_type(JSON_PATCH)
        .body_satisfies("guarded condition", |body| {
            guarded_condition(
                body,
                "6",
                json!({
                    "type": "SidecarSetUpgradable", "status": "True", "message": "{\"mesh\":true}"
                }),
            )
        })
        .reply_with(patched(stored, "7"));

    let (client, server) = scenario.start();
    let context = context(client, &pod, &set);
    let result = reconcile(Arc::new(set.into()), context.clone()).await;
    drop(context);
    server.finish().await;
    assert_eq!(result.unwrap(), Action::requeue(IN_FLIGHT_REQUEUE));
}

/// The planner's answer when nothing is left to do: no status write (the stored one says it
/// already), no pod touched, no look again until something changes.
#[tokio::test]
async fn a_settled_rollout_sends_nothing_and_waits_for_a_change() {
    let mut set = mesh("proxy:v1");
    let pod = injected_pod(&set);
    let summaries = [Arc::new(PodSummary::of(&pod))];
    set.status = Some(settled_status(&set, &summaries));

    let (client, server) = Scenario::new().start();
    let context = context(client, &pod, &set);
    let result = reconcile(Arc::new(set.into()), context.clone()).await;
    drop(context);
    server.finish().await;
    assert_eq!(result.unwrap(), Action::await_change());
}

/// A paused rollout: the status of what the round saw is written, no pod is read or written, and
/// the round waits for a change (the pod left behind does not keep it looking).
#[tokio::test]
async fn a_paused_rollout_writes_the_status_alone() {
    let old = mesh("proxy:v1");
    let mut set = mesh("proxy:v2");
    set.spec
        .update_strategy
        .get_or_insert_with(Default::default)
        .paused = Some(true);
    let pod = injected_pod(&old);

    let mut scenario = Scenario::new();
    scenario
        .expect(
            Method::PATCH,
            "/apis/apps.kruise.io/v1beta1/sidecarsets/mesh/status",
        )
        .content_type(MERGE_PATCH)
        .body_includes(json!({"status": {"matchedPods": 1, "updatedPods": 0, "readyPods": 1}}))
        .reply_with(patched(serde_json::to_value(&set).unwrap(), "4"));
    let (client, server) = scenario.start();
    let context = context(client, &pod, &set);
    let result = reconcile(Arc::new(set.into()), context.clone()).await;
    drop(context);
    server.finish().await;
    assert_eq!(result.unwrap(), Action::await_change());
}

/// A round on a SidecarSet older than the status this controller last wrote (the cache still
/// holds the version before the write) sends nothing and waits; once the cache shows the write,
/// rounds go on from it.
#[tokio::test]
async fn a_round_on_a_sidecarset_older_than_its_own_status_write_sends_nothing() {
    let old = mesh("proxy:v1");
    let mut set = mesh("proxy:v2");
    set.spec
        .update_strategy
        .get_or_insert_with(Default::default)
        .paused = Some(true);
    let pod = injected_pod(&old);
    let mut scenario = Scenario::new();
    scenario
        .expect(
            Method::PATCH,
            "/apis/apps.kruise.io/v1beta1/sidecarsets/mesh/status",
        )
        .content_type(MERGE_PATCH)
        .reply_with(patched(serde_json::to_value(&set).unwrap(), "4"));
    let (client, server) = scenario.start();
    let context = context(client, &pod, &set);
    let first = reconcile(Arc::new(set.clone().into()), context.clone()).await;
    assert_eq!(first.unwrap(), Action::await_change());
    // The set as the cache still holds it (version 3): nothing is sent.
    let stale = reconcile(Arc::new(set.clone().into()), context.clone()).await;
    assert_eq!(stale.unwrap(), Action::requeue(IN_FLIGHT_REQUEUE));
    // The cache shows the write (version 4, the status written): the round goes on, and has
    // nothing to send.
    let summaries = [Arc::new(PodSummary::of(&pod))];
    set.status = Some(settled_status(&set, &summaries));
    set.metadata.resource_version = Some("4".into());
    let caught_up = reconcile(Arc::new(set.into()), context.clone()).await;
    assert_eq!(caught_up.unwrap(), Action::await_change());
    drop(context);
    server.finish().await;
}

/// A SidecarSet that changed more than images: the pod is read and its `SidecarSetUpgradable`
/// condition turns False, with an event on each side. Once the pod carries it, the decision is
/// taken on the cache's summary alone and nothing is sent.
#[tokio::test]
async fn a_pod_not_upgradable_is_marked_from_a_read_then_left_alone() {
    let old = mesh("proxy:v1");
    let mut set = mesh("proxy:v1");
    if let Some(proxy) = set.spec.containers.as_mut().and_then(|c| c.first_mut()) {
        proxy.container.command = Some(vec!["run".into()]);
    }
    default_and_hash(&mut set);
    let pod = injected_pod(&old);
    let stored = serde_json::to_value(&pod).unwrap();

    let mut scenario = Scenario::new();
    scenario
        .expect(
            Method::PATCH,
            "/apis/apps.kruise.io/v1beta1/sidecarsets/mesh/status",
        )
        .content_type(MERGE_PATCH)
        .body_includes(json!({"status": {"matchedPods": 1, "updatedPods": 0}}))
        .reply_with(patched(serde_json::to_value(&set).unwrap(), "4"));
    // The cache does not hold this pod whole: the write is decided on the stored pod.
    scenario.expect(Method::GET, POD).reply(ok(stored.clone()));
    let condition = json!({"type": "SidecarSetUpgradable", "status": "False",
        "reason": keys::REASON_UPDATE_IMMUTABLE_FIELD, "message": "{\"mesh\":false}"});
    let expected = condition.clone();
    scenario
        .expect(Method::PATCH, format!("{POD}/status"))
        .content_type(JSON_PATCH)
        .body_satisfies("guarded condition", move |body| {
            guarded_condition(body, "5", expected)
        })
        .reply_with(patched(stored.clone(), "6"));
    scenario.event("default", ("Pod", "web-0"), "Warning", "NotUpgradablePods");
    scenario.cluster_event(("SidecarSet", "mesh"), "Warning", "NotUpgradablePods");
    let (client, server) = scenario.start();
    let first = context(client, &pod, &set);
    let result = reconcile(Arc::new(set.clone().into()), first.clone()).await;
    drop(first);
    server.finish().await;
    result.unwrap();

    // The next round, on the marked pod, with the status as written.
    let mut marked = stored;
    marked["status"]["conditions"]
        .as_array_mut()
        .unwrap()
        .push(condition);
    let marked: Pod = serde_json::from_value(marked).unwrap();
    set.status = Some(settled_status(&set, &[Arc::new(PodSummary::of(&marked))]));
    let (client, server) = Scenario::new().start();
    let second = context(client, &marked, &set);
    let result = reconcile(Arc::new(set.into()), second.clone()).await;
    drop(second);
    server.finish().await;
    result.unwrap();
}

/// A context whose watched history holds `revisions`.
fn history_context(client: kube::Client, revisions: &[ControllerRevision]) -> Arc<Context> {
    let pod = injected_pod(&mesh("proxy:v1"));
    let context = context(client, &pod, &mesh("proxy:v1"));
    let mut index = context.revisions.write().unwrap();
    index.apply(kube::runtime::watcher::Event::Init);
    for revision in revisions {
        let watched = serde_json::from_value(serde_json::to_value(revision).unwrap()).unwrap();
        index.apply(kube::runtime::watcher::Event::InitApply(watched));
    }
    index.apply(kube::runtime::watcher::Event::InitDone);
    drop(index);
    context
}

const REVISIONS: &str = "/apis/apps/v1/namespaces/kruise-system/controllerrevisions";

/// The first revision of a set, its name held by a revision of other data: the collision count
/// names the next one, which is created with OpenKruise's labels, owner and data.
#[tokio::test]
async fn a_revision_name_held_by_other_data_is_created_under_the_next_collision_count() {
    let mut set = mesh("proxy:v2");
    set.spec.custom_version = Some("v2".into());
    let taken = crate::inject::revision::revision_name(&set, 0);
    let next = crate::inject::revision::revision_name(&set, 1);
    let mut squatter = crate::rollout::history::candidate(&mesh("proxy:v9"), "kruise-system", 1, 0);
    squatter.metadata.name = Some(taken.clone());
    let mut scenario = Scenario::new();
    scenario
        .expect(Method::POST, REVISIONS)
        .body_includes(json!({"metadata": {"name": taken}}))
        .reply(crate::controller::tests::fake_apiserver::failure(
            409,
            "AlreadyExists",
            "already exists",
        ));
    scenario
        .expect(Method::GET, format!("{REVISIONS}/{taken}"))
        .reply(ok(serde_json::to_value(&squatter).unwrap()));
    scenario
        .expect(Method::POST, REVISIONS)
        .body_includes(json!({
            "metadata": {"name": next, "namespace": "kruise-system",
                "labels": {"kruise.io/sidecarset-name": "mesh",
                    "controller.kubernetes.io/hash": taken.strip_prefix("mesh-").unwrap(),
                    "apps.kruise.io/sidecarset-custom-version": "v2"},
                "ownerReferences": [{"apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet",
                    "name": "mesh", "uid": "mesh-uid", "controller": true, "blockOwnerDeletion": true}]},
            "revision": 1
        }))
        .reply_with(crate::controller::tests::fake_apiserver::created("1"));
    let (client, server) = scenario.start();
    let context = history_context(client, &[]);
    let registered = history::register(&context, &set, &[]).await;
    drop(context);
    server.finish().await;
    assert_eq!(
        registered.unwrap(),
        history::Registered {
            latest: next,
            collision_count: 1
        }
    );
}

/// Unchanged beyond the limit: the newest is reused, the oldest go (one already gone is no
/// error); back to an earlier spec: that revision is renumbered and given the custom version.
#[tokio::test]
async fn the_history_is_truncated_and_a_rollback_renumbers() {
    let sets = [mesh("proxy:v1"), mesh("proxy:v2"), mesh("proxy:v3")];
    let revisions: Vec<ControllerRevision> = sets
        .iter()
        .zip(1..)
        .map(|(set, n)| crate::rollout::history::candidate(set, "kruise-system", n, 0))
        .collect();
    let name = |i: usize| revisions[i].metadata.name.clone().unwrap();
    let mut latest = sets[2].clone();
    latest.spec.revision_history_limit = Some(1);
    let mut scenario = Scenario::new();
    scenario
        .expect(Method::DELETE, format!("{REVISIONS}/{}", name(0)))
        .reply(ok(json!({"kind": "Status", "status": "Success"})));
    scenario
        .expect(Method::DELETE, format!("{REVISIONS}/{}", name(1)))
        .reply(crate::controller::tests::fake_apiserver::not_found(
            "controllerrevisions.apps",
            &name(1),
        ));
    let mut back = sets[0].clone();
    back.spec.custom_version = Some("stable".into());
    scenario
        .expect(Method::PATCH, format!("{REVISIONS}/{}", name(0)))
        .content_type(MERGE_PATCH)
        .body_includes(json!({"revision": 4}))
        .reply(ok(serde_json::to_value(&revisions[0]).unwrap()));
    scenario
        .expect(Method::PATCH, format!("{REVISIONS}/{}", name(0)))
        .content_type(MERGE_PATCH)
        .body_includes(
            json!({"metadata": {"labels": {"apps.kruise.io/sidecarset-custom-version": "stable"}}}),
        )
        .reply(ok(serde_json::to_value(&revisions[0]).unwrap()));
    let (client, server) = scenario.start();
    let context = history_context(client, &revisions);
    let truncated = history::register(&context, &latest, &[]).await.unwrap();
    assert_eq!(truncated.latest, name(2));
    let rolled_back = history::register(&context, &back, &[]).await.unwrap();
    assert_eq!(rolled_back.latest, name(0));
    drop(context);
    server.finish().await;
}

/// The leader reports a set the webhooks cannot serve on the set: the condition (a merge patch
/// of `conditions` alone) and a Warning event; once served again, the condition goes and a
/// Normal event says so.
#[tokio::test]
async fn a_set_not_served_gets_the_condition_and_loses_it_once_served() {
    use crate::rollout::refusal::{Refusal, RefusalReason, Refusals};
    let mut set = mesh("proxy:v1");
    // No other condition: the lists below are the refusal's alone.
    set.status = None;
    let mut scenario = Scenario::new();
    scenario
        .expect(Method::PATCH, "/apis/apps.kruise.io/v1beta1/sidecarsets/mesh/status")
        .content_type(MERGE_PATCH)
        .body_satisfies("only the condition", |body| {
            let conditions = &body["status"]["conditions"];
            check(body["status"].as_object().is_some_and(|s| s.len() == 1), || {
                format!("more than the conditions: {body}")
            })?;
            includes(
                conditions,
                &json!([{"type": "InjectionFailure", "status": "True", "reason": "RevisionNotFound",
                    "message": "the pod webhook refuses the new pods it matches: controllerrevisions.apps \"mesh-x\" not found"}]),
                "/status/conditions",
            )
        })
        .reply_with(patched(serde_json::to_value(&set).unwrap(), "4"));
    scenario.cluster_event(("SidecarSet", "mesh"), "Warning", "RevisionNotFound");
    let (client, server) = scenario.start();
    let shared = context(client, &injected_pod(&set), &set);
    let (store, _writer) = store_of([Shared::from(set.clone())]);
    let refused = Refusals::from([(
        "mesh".to_string(),
        Refusal {
            reason: RefusalReason::RevisionNotFound,
            message: r#"controllerrevisions.apps "mesh-x" not found"#.into(),
        },
    )]);
    let (refusals, seen) = tokio::sync::watch::channel(Arc::new(refused));
    let end = CancellationToken::new();
    let task = tokio::spawn(refusals::report(shared.clone(), seen, store, end.clone()));
    // Written once: a snapshot saying the same changes nothing.
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    refusals.send_modify(|_| {});
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    end.cancel();
    task.await.unwrap();
    drop(shared);
    server.finish().await;

    // Served again, the condition stored: it goes.
    let mut carrying = set.clone();
    let now = k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(jiff::Timestamp::now());
    let change = crate::rollout::refusal::injection_failure(
        &[],
        Some(&Refusal {
            reason: RefusalReason::Invalid,
            message: "x".into(),
        }),
        None,
        &now,
    )
    .unwrap();
    carrying.status.get_or_insert_default().conditions = Some(change.conditions);
    let mut scenario = Scenario::new();
    scenario
        .expect(
            Method::PATCH,
            "/apis/apps.kruise.io/v1beta1/sidecarsets/mesh/status",
        )
        .content_type(MERGE_PATCH)
        .body_includes(json!({"status": {"conditions": null}}))
        .reply_with(patched(serde_json::to_value(&set).unwrap(), "5"));
    scenario.cluster_event(("SidecarSet", "mesh"), "Normal", "Served");
    let (client, server) = scenario.start();
    let shared = context(client, &injected_pod(&set), &set);
    let (store, _writer) = store_of([Shared::from(carrying)]);
    let (_refusals, seen) = tokio::sync::watch::channel(Arc::new(Refusals::new()));
    let end = CancellationToken::new();
    let task = tokio::spawn(refusals::report(shared.clone(), seen, store, end.clone()));
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    end.cancel();
    task.await.unwrap();
    drop(shared);
    server.finish().await;
}
