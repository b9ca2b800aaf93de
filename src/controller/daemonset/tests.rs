//! The DaemonSet controller's requests, against the fake apiserver: one reconcile, every request
//! pinned in order (method, path, query, patch kind, the essentials of the body).

use std::sync::Mutex as TestMutex;

use axum::http::Method;
use k8s_openapi::api::apps::v1::ControllerRevision;
use serde_json::{Value, json};

use super::*;
use crate::api::{DaemonSetBuilder, PodBuilder};
use crate::controller::pod_cache;
use crate::controller::tests::fake_apiserver::{
    JSON, MERGE_PATCH, Scenario, check, created, expect_owners_patch, list, ok, patched,
    reconcile_workload, revision_list, store_of,
};
use crate::controller::workload::WorkloadError;
use crate::controller::workload::outcome::IN_FLIGHT_REQUEUE;
use crate::daemonset::daemon_pod::NAME_ALPHABET;
use crate::workload::Action;
use crate::workload::Workload;
use crate::workload::revision;
use kube::runtime::controller::Action as Requeue;

const DAEMONSET: &str = "/apis/apps.kruise.io/v1beta1/namespaces/default/daemonsets/agent";
const REVISIONS: &str = "/apis/apps/v1/namespaces/default/controllerrevisions";
const PODS: &str = "/api/v1/namespaces/default/pods";

fn node(name: &str, labels: Value, taints: Value) -> Node {
    serde_json::from_value(json!({
        "metadata": {"name": name, "resourceVersion": "1", "labels": labels},
        "spec": {"taints": taints}
    }))
    .unwrap()
}

/// One reconcile of `set` over `nodes` and no pods; the context is dropped before the scenario
/// is checked, so a request in excess fails the test.
async fn reconcile_once(
    set: &DaemonSet,
    nodes: Vec<Node>,
    scenario: Scenario,
) -> (
    Result<Requeue, WorkloadError>,
    crate::controller::expectations::Expectations,
) {
    reconcile_with_pods(set, nodes, Vec::new(), scenario).await
}

/// [`reconcile_once`] with `pods` in the cache, whole.
async fn reconcile_with_pods(
    set: &DaemonSet,
    nodes: Vec<Node>,
    pods: Vec<Pod>,
    scenario: Scenario,
) -> (
    Result<Requeue, WorkloadError>,
    crate::controller::expectations::Expectations,
) {
    let (summaries, _summary_writer) = store_of(pods.iter().map(pod_cache::summary));
    let (pods, _pod_writer) = store_of(pods);
    let (nodes, _node_writer) = store_of(nodes);
    let seam = DaemonSetSeam::new(nodes);
    reconcile_workload(set, seam, (pods, summaries), scenario).await
}

/// A new DaemonSet with a nodeSelector over three nodes (one matching, one without the label,
/// one matching but tainted NoSchedule): its revision, one pod bound by affinity to the matching
/// node, its event, and the status.
#[tokio::test]
async fn a_new_daemonset_gets_its_revision_one_pod_per_fitting_node_and_a_status() {
    let mut set = DaemonSetBuilder::new("agent")
        .resource_version("10")
        .build();
    set.spec.template.spec.as_mut().unwrap().node_selector =
        Some([("role".to_string(), "agent".to_string())].into());
    let wanted: ControllerRevision = revision::candidate(&set, 0, 1).unwrap();
    let name = wanted.metadata.name.clone().unwrap();
    let hash = revision::short_hash(&name).to_string();
    let nodes = vec![
        node("n1", json!({"role": "agent"}), json!([])),
        node("n2", json!({}), json!([])),
        node(
            "n3",
            json!({"role": "agent"}),
            json!([{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}]),
        ),
    ];
    let names = Arc::new(TestMutex::new(Vec::<String>::new()));
    let mut scenario = Scenario::new();
    scenario
        .expect(Method::GET, REVISIONS)
        .query(&[("labelSelector", "app=agent")])
        .reply(list("ControllerRevisionList", "apps/v1", vec![]));
    scenario
        .expect(Method::POST, REVISIONS)
        .content_type(JSON)
        .body_includes(json!({
            "metadata": {"name": name,
                "labels": {"app": "agent", "controller-revision-hash": hash},
                "ownerReferences": [{"apiVersion": "apps.kruise.io/v1beta1", "kind": "DaemonSet",
                    "name": "agent", "uid": "agent-uid", "controller": true}]},
            "revision": 1,
            "data": serde_json::to_value(&wanted.data).unwrap()
        }))
        .reply_with(created("11"));
    let recorded = names.clone();
    scenario
        .expect(Method::POST, PODS)
        .content_type(JSON)
        .body_includes(json!({
            "metadata": {
                "generateName": "agent-",
                "labels": {"app": "agent", "controller-revision-hash": hash},
                "ownerReferences": [{"apiVersion": "apps.kruise.io/v1beta1", "kind": "DaemonSet",
                    "name": "agent", "uid": "agent-uid", "controller": true,
                    "blockOwnerDeletion": true}]
            },
            "spec": {
                "nodeSelector": {"role": "agent"},
                "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchFields": [
                        {"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}}},
                "tolerations": [
                    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
                    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
                    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
                    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
                    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
                    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}
                ]
            }
        }))
        .body_satisfies("named agent-<5 characters>", move |body| {
            let name = body["metadata"]["name"].as_str().unwrap_or("").to_string();
            let suffix = name.strip_prefix("agent-").unwrap_or("");
            if suffix.len() != 5 || !suffix.bytes().all(|b| NAME_ALPHABET.contains(&b)) {
                return Err(format!("name {name:?}"));
            }
            recorded.lock().unwrap().push(name);
            Ok(())
        })
        .reply_with(created("12"));
    scenario
        .event(
            "default",
            ("DaemonSet", "agent"),
            "Normal",
            "SuccessfulCreate",
        )
        .body_satisfies("names the created pod", |body| {
            let note = body["note"].as_str().unwrap_or("");
            match note.strip_prefix("Created pod: agent-") {
                Some(suffix) if suffix.len() == 5 => Ok(()),
                _ => Err(format!("note {note:?}")),
            }
        });
    scenario
        .expect(Method::PATCH, format!("{DAEMONSET}/status"))
        .content_type(MERGE_PATCH)
        .body_includes(json!({"status": {
            "desiredNumberScheduled": 1, "currentNumberScheduled": 0,
            "numberMisscheduled": 0, "numberReady": 0, "updatedNumberScheduled": 0,
            "updateRevision": hash
        }}))
        .reply_with(patched(serde_json::to_value(&set).unwrap(), "13"));
    let (result, mut expectations) = reconcile_once(&set, nodes, scenario).await;
    assert_eq!(result.unwrap(), Requeue::requeue(IN_FLIGHT_REQUEUE));
    // The creation waits for the cache: the next round sends nothing until it shows the pod.
    let names = names.lock().unwrap().clone();
    assert_eq!(names.len(), 1);
    let waiting = expectations.unsatisfied("default/agent", std::time::Instant::now(), |_| {
        crate::controller::expectations::Seen::Absent
    });
    assert!(waiting.is_some());
}

#[test]
fn node_summaries_are_made_once_per_version_and_report_the_old_one() {
    let summaries = NodeSummaries::default();
    let n1 = node("n1", json!({"role": "agent"}), json!([]));
    let (old, first) = summaries.update(&n1);
    assert!(old.is_none());
    let (old, again) = summaries.update(&n1);
    assert!(Arc::ptr_eq(&old.unwrap(), &first) && Arc::ptr_eq(&again, &first));
    let mut relabelled = node("n1", json!({"role": "other"}), json!([]));
    relabelled.metadata.resource_version = Some("2".into());
    let (old, new) = summaries.update(&relabelled);
    assert!(Arc::ptr_eq(&old.unwrap(), &first));
    assert_ne!(new, first);
    let (store, _writer) = store_of(vec![node("n2", json!({}), json!([]))]);
    let listed = summaries.of_store(&store);
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].name(), "n2");
}

#[test]
fn creations_get_generated_names() {
    let set = DaemonSetBuilder::new("agent").build();
    let template = crate::daemonset::daemon_pod::pod_template(&set, "h");
    let pod = crate::daemonset::daemon_pod::new_pod(&set, &template, "n1");
    let mut actions = vec![Action::CreatePod {
        pod: Box::new(pod),
        revision: "h".into(),
    }];
    name_creations(&mut actions, &mut fastrand::Rng::with_seed(7));
    let Action::CreatePod { pod, .. } = &actions[0] else {
        unreachable!()
    };
    let name = pod.metadata.name.as_deref().unwrap();
    assert!(name.starts_with("agent-") && name.len() == "agent-".len() + 5);
}

/// A running, ready pod of `set` on `node` at the revision `hash`, created `created`, with no
/// owner: what `kubectl delete --cascade=orphan` of an earlier DaemonSet leaves.
fn orphan(set: &DaemonSet, name: &str, node: &str, hash: &str, created: &str) -> Pod {
    let created: jiff::Timestamp = created.parse().unwrap();
    let mut pod = PodBuilder::new(name)
        .uid(&format!("{name}-uid"))
        .resource_version("5")
        .created(created)
        .labels(&[("app", set.name()), ("controller-revision-hash", hash)])
        .container("main", "main:v1")
        .running_ready(created)
        .build();
    pod.spec.as_mut().unwrap().node_name = Some(node.into());
    pod
}

/// The DaemonSet `agent`, its first revision and that revision's hash.
fn agent_at_its_first_revision() -> (DaemonSet, ControllerRevision, String) {
    let set = DaemonSetBuilder::new("agent")
        .resource_version("10")
        .build();
    let revision = revision::candidate(&set, 0, 1).unwrap();
    let hash = revision::short_hash(revision.metadata.name.as_deref().unwrap()).to_string();
    (set, revision, hash)
}

/// The DaemonSet's controller reference, as adoption writes it.
fn controller_reference() -> Value {
    json!([{"apiVersion": "apps.kruise.io/v1beta1", "kind": "DaemonSet", "name": "agent",
        "uid": "agent-uid", "controller": true, "blockOwnerDeletion": true}])
}

/// The start of a round that adopts `orphan`: the DaemonSet read again (`canAdopt`), the
/// orphan's controller reference written, the history read.
fn expect_adoption(
    scenario: &mut Scenario,
    set: &DaemonSet,
    orphan: &Pod,
    history: &[ControllerRevision],
) {
    scenario
        .expect(Method::GET, DAEMONSET)
        .reply(ok(serde_json::to_value(set).unwrap()));
    expect_owners_patch(scenario, PODS, orphan, controller_reference())
        .reply_with(patched(serde_json::to_value(orphan).unwrap(), "6"));
    scenario
        .expect(Method::GET, REVISIONS)
        .query(&[("labelSelector", "app=agent")])
        .reply(revision_list(history));
}

/// Issue 48: a pod the DaemonSet's selector selects and nobody controls is adopted (upstream
/// `ClaimPods`), and its node, served, gets no pod of its own.
#[tokio::test]
async fn an_orphan_on_its_node_is_adopted_and_no_pod_is_created_beside_it() {
    let (set, revision, hash) = agent_at_its_first_revision();
    let left = orphan(&set, "agent-left", "n1", &hash, "2024-01-01T00:00:00Z");
    let mut scenario = Scenario::new();
    expect_adoption(&mut scenario, &set, &left, &[revision]);
    scenario
        .expect(Method::PATCH, format!("{DAEMONSET}/status"))
        .content_type(MERGE_PATCH)
        .body_includes(json!({"status": {
            "desiredNumberScheduled": 1, "currentNumberScheduled": 1, "numberReady": 1,
            "updatedNumberScheduled": 1, "numberMisscheduled": 0, "updateRevision": hash
        }}))
        .reply_with(patched(serde_json::to_value(&set).unwrap(), "13"));
    let nodes = vec![node("n1", json!({}), json!([]))];
    let (result, _) = reconcile_with_pods(&set, nodes, vec![left], scenario).await;
    result.unwrap();
}

/// Issue 48: the duplicate rule runs after adoption: a node with an adopted orphan and a pod of
/// the DaemonSet's own keeps one, the oldest (`podByCreationTimestampAndPhase`).
#[tokio::test]
async fn a_node_with_an_adopted_orphan_and_a_pod_of_its_own_keeps_the_oldest() {
    let (set, revision, hash) = agent_at_its_first_revision();
    let left = orphan(&set, "agent-left", "n1", &hash, "2024-01-01T00:00:00Z");
    let mut own = orphan(&set, "agent-own", "n1", &hash, "2024-01-02T00:00:00Z");
    own.metadata.owner_references = serde_json::from_value(controller_reference()).unwrap();
    let mut scenario = Scenario::new();
    expect_adoption(&mut scenario, &set, &left, &[revision]);
    scenario
        .expect(Method::DELETE, format!("{PODS}/agent-own"))
        .reply(ok(serde_json::to_value(&own).unwrap()));
    scenario
        .event(
            "default",
            ("DaemonSet", "agent"),
            "Normal",
            "SuccessfulDelete",
        )
        .body_satisfies("upstream's words", |body| {
            check(body["note"] == "Deleted pod: agent-own", || {
                format!("note {}", body["note"])
            })
        });
    scenario
        .expect(Method::PATCH, format!("{DAEMONSET}/status"))
        .content_type(MERGE_PATCH)
        .body_includes(
            json!({"status": {"desiredNumberScheduled": 1, "currentNumberScheduled": 1}}),
        )
        .reply_with(patched(serde_json::to_value(&set).unwrap(), "13"));
    let nodes = vec![node("n1", json!({}), json!([]))];
    let (result, _) = reconcile_with_pods(&set, nodes, vec![left, own], scenario).await;
    result.unwrap();
}

#[test]
fn a_pod_event_of_an_orphan_wakes_the_daemonsets_that_select_it() {
    let agent = DaemonSetBuilder::new("agent").build();
    let other = DaemonSetBuilder::new("other").build();
    let mut everything = DaemonSetBuilder::new("everything").build();
    everything.spec.selector = Some(Default::default());
    let (sets, _writer) = store_of([agent.clone(), other, everything]);
    let left = orphan(&agent, "agent-left", "n1", "h", "2024-01-01T00:00:00Z");
    assert_eq!(
        daemonsets_to_sync(&left, &sets),
        [ObjectRef::new("agent").within("default")]
    );
    let mut owned = left.clone();
    owned.metadata.owner_references = serde_json::from_value(controller_reference()).unwrap();
    assert_eq!(
        daemonsets_to_sync(&owned, &sets),
        [ObjectRef::new("agent").within("default")]
    );
    let mut elsewhere = left;
    elsewhere.metadata.namespace = Some("other".into());
    assert!(daemonsets_to_sync(&elsewhere, &sets).is_empty());
}
