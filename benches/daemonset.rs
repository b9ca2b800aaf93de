//! Pure decision time of one Advanced DaemonSet reconcile over 5,000 nodes in the middle of a
//! rolling update, and the memory the controller keeps of those nodes and pods: run with
//! `cargo bench --bench daemonset`.
//!
//! The nodes are realistic Node objects (a dozen labels, some taints, kilobytes of status the
//! placement never reads), kept as the controller keeps them: a `NodeSummary` each. The pods are
//! the planner's own creations, bound and running, kept as summaries. Then the template's image
//! changes: a third of the nodes already run the new revision, `maxUnavailable` 10 %. The timed
//! round is `daemonset::plan`: placement of every node, manage, the rolling update's choice and
//! the status.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{Node, Pod, PodCondition, PodStatus};
use kruise_webhook::api::daemonset::DaemonSet;
use kruise_webhook::api::keys;
use kruise_webhook::daemonset::daemon_pod::{new_pod, pod_template, target_node};
use kruise_webhook::daemonset::in_place::revision_hash;
use kruise_webhook::daemonset::placement::Placement;
use kruise_webhook::daemonset::{DaemonPod, FailedPodBackoff, NodeSummary, Snapshot, plan};
use kruise_webhook::workload::Action;
use kruise_webhook::workload::listed::summarize;
use kruise_webhook::workload::revision::candidate;
use serde_json::json;

mod support;
use support::rss_kib;

#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() {
    let nodes = std::env::var("BENCH_NODES")
        .map(|n| n.parse().expect("BENCH_NODES is a number"))
        .unwrap_or(5_000);
    let runs = std::env::var("BENCH_RUNS")
        .map(|n| n.parse().expect("BENCH_RUNS is a number"))
        .unwrap_or(20);
    run(nodes, runs);
}

fn daemonset(image: &str) -> DaemonSet {
    serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": "kube-system", "uid": "ds-uid", "generation": 2},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {
                "metadata": {"labels": {"app": "agent"}},
                "spec": {
                    "nodeSelector": {"kubernetes.io/os": "linux"},
                    "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [{"matchExpressions": [
                            {"key": "node-role.kubernetes.io/control-plane", "operator": "DoesNotExist"},
                            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-a", "zone-b", "zone-c"]}
                        ]}]
                    }}},
                    "tolerations": [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}],
                    "containers": [{"name": "agent", "image": format!("agent:{image}")}]
                }
            },
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {
                "rollingUpdateType": "Standard", "maxUnavailable": "10%", "maxSurge": 0
            }}
        },
        "status": {"desiredNumberScheduled": 0, "updateRevision": ""}
    }))
    .expect("daemonset")
}

/// A Node as a kubelet reports it: labels, an occasional taint, conditions, addresses, capacity
/// and a list of cached images.
fn node(i: usize) -> Node {
    let taints = match i % 10 {
        0 => json!([{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}]),
        1 => json!([{"key": "spot", "value": "true", "effect": "PreferNoSchedule"}]),
        _ => json!([]),
    };
    let images: Vec<_> = (0..30)
        .map(|k| json!({"names": [format!("registry.example.com/team/image-{k}@sha256:{:064x}", k * 7919 + i), format!("registry.example.com/team/image-{k}:v{k}")], "sizeBytes": 123_456_789 + k}))
        .collect();
    let conditions: Vec<_> = ["MemoryPressure", "DiskPressure", "PIDPressure", "Ready"]
        .iter()
        .map(|t| json!({"type": t, "status": if *t == "Ready" {"True"} else {"False"},
            "lastHeartbeatTime": "2024-01-01T00:00:00Z", "lastTransitionTime": "2024-01-01T00:00:00Z",
            "reason": "KubeletHasSufficientMemory", "message": "kubelet has sufficient memory available"}))
        .collect();
    let zone = ["zone-a", "zone-b", "zone-c"][i % 3];
    serde_json::from_value(json!({
        "metadata": {
            "name": format!("node-{i:05}"),
            "uid": format!("00000000-0000-4000-8000-{i:012}"),
            "resourceVersion": "12345",
            "labels": {
                "beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux",
                "kubernetes.io/hostname": format!("node-{i:05}"),
                "node.kubernetes.io/instance-type": "m5.2xlarge",
                "topology.kubernetes.io/region": "region-1",
                "topology.kubernetes.io/zone": zone,
                "node-pool": format!("pool-{}", i % 20),
                "team": "platform"
            },
            "annotations": {"node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true"}
        },
        "spec": {"podCIDR": format!("10.{}.{}.0/24", i / 256, i % 256), "taints": taints},
        "status": {
            "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"},
            "allocatable": {"cpu": "7910m", "memory": "31Gi", "pods": "110"},
            "conditions": conditions,
            "addresses": [{"type": "InternalIP", "address": format!("10.0.{}.{}", i / 256, i % 256)}, {"type": "Hostname", "address": format!("node-{i:05}")}],
            "nodeInfo": {"machineID": "m", "systemUUID": "s", "bootID": "b", "kernelVersion": "6.1.0", "osImage": "Debian", "containerRuntimeVersion": "containerd://1.7.0", "kubeletVersion": "v1.20.15", "kubeProxyVersion": "v1.20.15", "operatingSystem": "linux", "architecture": "amd64"},
            "images": images
        }
    }))
    .expect("node")
}

fn revision(set: &DaemonSet, history: &mut Vec<ControllerRevision>) -> (String, String) {
    let r = candidate(set, 0, history.len() as i64 + 1).expect("revision");
    let name = r.metadata.name.clone().expect("name");
    let hash = revision_hash(&r).to_string();
    history.push(r);
    (name, hash)
}

fn run(count: usize, runs: usize) {
    let now = Timestamp::from_second(1_700_000_000).expect("time");
    let rss_start = rss_kib();
    // What the node watch keeps: a summary per node, the Node itself dropped at once.
    let nodes: Vec<Arc<NodeSummary>> = (0..count)
        .map(|i| Arc::new(NodeSummary::of(&node(i))))
        .collect();
    let rss_nodes = rss_kib();

    let v1 = daemonset("v1");
    let mut history = Vec::new();
    let (_, h1) = revision(&v1, &mut history);
    let backoff = FailedPodBackoff::default();
    // The pods a settled DaemonSet has: one from its template on every node it should run on
    // (a round creates at most burstReplicas of them).
    let placement = Placement::of(&v1);
    let template = pod_template(&v1, &h1);
    let mut pods: Vec<Pod> = nodes
        .iter()
        .filter(|n| placement.fit(n).should_run)
        .enumerate()
        .map(|(i, n)| running(new_pod(&v1, &template, n.name()), i, now))
        .collect();
    assert!(pods.len() > count / 2, "most nodes get a pod");
    let v2 = daemonset("v2");
    let (r2, h2) = revision(&v2, &mut history);
    for pod in pods.iter_mut().step_by(3) {
        pod.metadata
            .labels
            .get_or_insert_with(Default::default)
            .insert(keys::CONTROLLER_REVISION_HASH.into(), h2.clone());
    }
    let rss_before_pods = rss_kib();
    let listed: Vec<DaemonPod> = pods
        .iter()
        .map(|pod| {
            let node = pod.spec.as_ref().and_then(|s| s.node_name.clone());
            DaemonPod::summary(Arc::new(summarize(pod)), node.map(Into::into))
        })
        .collect();
    let rss_pods = rss_kib();

    let mut set = v2.clone();
    set.status
        .as_mut()
        .expect("status")
        .desired_number_scheduled = pods.len() as i32;
    let snapshot = Snapshot {
        set: &set,
        nodes: &nodes,
        pods: &listed,
        history: &history,
        current: &r2,
        backoff: &backoff,
        settled: true,
        now,
    };
    let first = timed_plan(&snapshot);
    let deletions = first
        .actions
        .iter()
        .filter(|a| matches!(a, Action::DeletePod { .. }))
        .count();
    assert!(deletions > 0, "the round replaces old pods");
    assert!(first.needs_whole.is_empty());

    let median = |timed: &mut dyn FnMut()| {
        let mut times = Vec::new();
        for run in 0..3 + runs {
            let started = Instant::now();
            timed();
            if run >= 3 {
                times.push(started.elapsed().as_secs_f64() * 1000.0);
            }
        }
        times.sort_by(f64::total_cmp);
        (times[times.len() / 2], times.last().copied().unwrap_or(0.0))
    };
    let (round_ms, round_max) = median(&mut || {
        black_box(timed_plan(black_box(&snapshot)));
    });
    let (placement_ms, _) = median(&mut || {
        let placement = Placement::of(black_box(&set));
        for node in &nodes {
            black_box(placement.fit(node));
        }
    });
    println!(
        "daemonset reconcile, {count} nodes ({} pods) mid-update ({deletions} old pods replaced): median {round_ms:.2} ms, max {round_max:.2} ms ({runs} runs)",
        listed.len()
    );
    println!("  of which placement of every node: median {placement_ms:.2} ms");
    let mib = |kib: u64| kib as f64 / 1024.0;
    println!(
        "  kept in the controller: {:.1} MiB of process RSS ({:.1} MiB the {count} node summaries, {:.1} MiB the {} pod summaries)",
        mib(rss_nodes.saturating_sub(rss_start) + rss_pods.saturating_sub(rss_before_pods)),
        mib(rss_nodes.saturating_sub(rss_start)),
        mib(rss_pods.saturating_sub(rss_before_pods)),
        listed.len(),
    );
}

/// The measured call, a function of its own for `valgrind --toggle-collect='*timed_plan*'`.
#[inline(never)]
fn timed_plan(snapshot: &Snapshot<'_>) -> kruise_webhook::daemonset::Plan {
    plan(snapshot).expect("plan")
}

/// Bound to its node, running and ready.
fn running(mut pod: Pod, i: usize, now: Timestamp) -> Pod {
    let node = target_node(&pod).map(str::to_string);
    pod.metadata.name = Some(format!("agent-{i:05}"));
    pod.metadata.uid = Some(format!("00000000-0000-4000-9000-{i:012}"));
    pod.metadata.resource_version = Some(i.to_string());
    pod.metadata.creation_timestamp =
        Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(now));
    pod.spec.as_mut().expect("spec").node_name = node;
    pod.status = Some(PodStatus {
        phase: Some("Running".into()),
        conditions: Some(vec![PodCondition {
            type_: "Ready".into(),
            status: "True".into(),
            last_transition_time: Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(now)),
            ..Default::default()
        }]),
        ..Default::default()
    });
    pod
}
