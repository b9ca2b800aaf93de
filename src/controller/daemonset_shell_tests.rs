//! The DaemonSet controller's requests, against the fake apiserver: one reconcile, every request
//! pinned in order (method, path, query, patch kind, the essentials of the body).

use std::sync::Mutex as TestMutex;

use axum::http::Method;
use k8s_openapi::api::apps::v1::ControllerRevision;
use serde_json::{Value, json};

use super::*;
use crate::api::DaemonSetBuilder;
use crate::controller::fake_apiserver::{
    JSON, MERGE_PATCH, Scenario, created, list, patched, store_of, workload_context,
};
use crate::controller::pod_cache;
use crate::controller::workload::reconcile::IN_FLIGHT_REQUEUE;
use crate::workload::revision;

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
    let (client, server) = scenario.start();
    let (pods, _pod_writer) = store_of::<Pod>([]);
    let (summaries, _summary_writer) = store_of(pods.state().iter().map(|p| pod_cache::summary(p)));
    let context = workload_context(client, pods, summaries);
    let (nodes, _node_writer) = store_of(nodes);
    let shell = Arc::new(DaemonShell::new(context, nodes));
    let result = reconcile(Arc::new(set.clone()), shell.clone()).await;
    let shell = Arc::into_inner(shell).expect("the reconcile kept no shell");
    let mut context = Arc::into_inner(shell.shell.context).expect("the reconcile kept no context");
    let expectations = std::mem::take(context.expectations.get_mut().unwrap());
    drop(context);
    server.finish().await;
    (result, expectations)
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
            match note.strip_prefix("succeed to create pod agent-") {
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
