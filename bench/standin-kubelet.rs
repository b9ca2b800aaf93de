//! A stand-in scheduler and kubelet for scale runs against an apiserver with neither
//! (`scripts/scale-cluster.sh`): one watch of every pod in a namespace and, with a bounded number
//! of requests in flight, what a kubelet would write. A pod not bound is bound to the node its
//! node-name affinity names (a DaemonSet's pod), else to `node-<n>` spread over `--nodes`; a pod
//! whose status differs from its spec gets a Running status (Ready when every readiness gate is
//! True); a container whose spec image changed is reported restarted (restart count up, a new
//! container ID), as in-place completion waits for; a terminating pod is removed.
//!
//!   cargo run --release --example standin-kubelet -- --namespace bench --nodes 2000 --concurrency 64
//!
//! Same rules as `kubelet_pass` of `scripts/lib/controller-e2e.sh`, which is too slow at
//! thousands of pods (a jq and a kubectl per pod).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::TryStreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::runtime::watcher;
use serde_json::{Value, json};
use tokio::sync::Semaphore;

struct Args {
    namespace: String,
    nodes: u64,
    concurrency: usize,
}

fn args() -> Result<Args, String> {
    let mut parsed = Args {
        namespace: "default".into(),
        nodes: 1,
        concurrency: 64,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--namespace" => parsed.namespace = value,
            "--nodes" => {
                parsed.nodes = value.parse().map_err(|e| format!("--nodes {value}: {e}"))?
            }
            "--concurrency" => {
                parsed.concurrency = value
                    .parse()
                    .map_err(|e| format!("--concurrency {value}: {e}"))?
            }
            other => return Err(format!("unknown flag {other}")),
        }
    }
    if parsed.nodes == 0 || parsed.concurrency == 0 {
        return Err("--nodes and --concurrency must be at least 1".into());
    }
    Ok(parsed)
}

/// What the stand-in does for one pod, decided from the pod alone.
#[derive(Debug, PartialEq)]
enum Action {
    Remove,
    /// Bind to the node (when not bound yet), then write the status.
    Report {
        bind_to: Option<String>,
        status: Value,
    },
}

fn now() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// The node a DaemonSet pod's required affinity names by `metadata.name`.
fn affinity_node(pod: &Value) -> Option<String> {
    pod.pointer("/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms")?
        .as_array()?
        .iter()
        .flat_map(|term| term["matchFields"].as_array().into_iter().flatten())
        .find(|f| f["key"] == "metadata.name" && f["operator"] == "In")
        .and_then(|f| f["values"][0].as_str())
        .map(str::to_owned)
}

fn spread_node(name: &str, nodes: u64) -> String {
    // FNV-1a: a stable spread of pod names over the nodes.
    let hash = name.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    });
    format!("node-{}", hash % nodes)
}

fn decide(pod: &Value, nodes: u64, now: &str) -> Option<Action> {
    if !pod["metadata"]["deletionTimestamp"].is_null() {
        return Some(Action::Remove);
    }
    let name = pod["metadata"]["name"].as_str()?;
    let bound = pod["spec"]["nodeName"]
        .as_str()
        .is_some_and(|n| !n.is_empty());
    let empty = Vec::new();
    let old = pod["status"]["containerStatuses"]
        .as_array()
        .unwrap_or(&empty);
    let statuses: Vec<Value> = pod["spec"]["containers"]
        .as_array()
        .unwrap_or(&empty)
        .iter()
        .map(|c| {
            let (name, image) = (
                c["name"].as_str().unwrap_or(""),
                c["image"].as_str().unwrap_or(""),
            );
            let before = old.iter().find(|o| o["name"] == name);
            let restarts = match before {
                None => 0,
                Some(o) if o["image"] == image => o["restartCount"].as_i64().unwrap_or(0),
                Some(o) => o["restartCount"].as_i64().unwrap_or(0) + 1,
            };
            json!({"name": name, "image": image, "imageID": format!("docker-pullable://{image}"),
                   "ready": true, "started": true, "restartCount": restarts,
                   "containerID": format!("containerd://{name}-{restarts}"),
                   "state": {"running": {"startedAt": "2024-01-01T00:00:00Z"}}})
        })
        .collect();
    let conditions = pod["status"]["conditions"].as_array().unwrap_or(&empty);
    let condition_true = |kind: &str| {
        conditions
            .iter()
            .any(|c| c["type"] == kind && c["status"] == "True")
    };
    let ready = pod["spec"]["readinessGates"]
        .as_array()
        .unwrap_or(&empty)
        .iter()
        .all(|g| g["conditionType"].as_str().is_some_and(condition_true));
    let ready = if ready { "True" } else { "False" };
    let wanted = [
        ("PodScheduled", "True"),
        ("Initialized", "True"),
        ("ContainersReady", "True"),
        ("Ready", ready),
    ];
    let brief = |list: &[Value]| {
        let mut b: Vec<_> = list
            .iter()
            .map(|s| {
                (
                    s["name"].clone(),
                    s["image"].clone(),
                    s["ready"].clone(),
                    s["restartCount"].clone(),
                )
            })
            .map(|t| format!("{t:?}"))
            .collect();
        b.sort();
        b
    };
    let conditions_current = wanted.iter().all(|(kind, status)| {
        conditions
            .iter()
            .any(|c| c["type"] == *kind && c["status"] == *status)
    });
    if bound
        && pod["status"]["phase"] == "Running"
        && brief(old) == brief(&statuses)
        && conditions_current
    {
        return None;
    }
    let conditions: Vec<Value> = wanted
        .iter()
        .map(|(kind, status)| {
            // The transition time moves only when the status does, so minReadySeconds counts.
            let since = conditions
                .iter()
                .find(|c| c["type"] == *kind && c["status"] == *status)
                .and_then(|c| c["lastTransitionTime"].as_str())
                .unwrap_or(now);
            json!({"type": kind, "status": status, "lastTransitionTime": since})
        })
        .collect();
    let bind_to = (!bound).then(|| affinity_node(pod).unwrap_or_else(|| spread_node(name, nodes)));
    Some(Action::Report {
        bind_to,
        status: json!({"status": {"phase": "Running", "containerStatuses": statuses, "conditions": conditions}}),
    })
}

async fn act(pods: &Api<Pod>, name: &str, action: Action) -> Result<(), kube::Error> {
    match action {
        Action::Remove => pods
            .delete(
                name,
                &DeleteParams {
                    grace_period_seconds: Some(0),
                    ..DeleteParams::default()
                },
            )
            .await
            .map(drop),
        Action::Report { bind_to, status } => {
            if let Some(node) = bind_to {
                let binding = json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name},
                                     "target": {"kind": "Node", "name": node}});
                pods.create_subresource::<Value, Value>(
                    "binding",
                    name,
                    &PostParams::default(),
                    &binding,
                )
                .await?;
            }
            pods.patch_status(name, &PatchParams::default(), &Patch::Strategic(status))
                .await
                .map(drop)
        }
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = args().map_err(|e| format!("standin_kubelet: {e}"))?;
    let client = kube::Client::try_default().await?;
    let pods: Api<Pod> = Api::namespaced(client, &args.namespace);
    let slots = Arc::new(Semaphore::new(args.concurrency));
    // A pod with a request in flight is marked stale instead: its task reads it again when done.
    let in_flight = Arc::new(Mutex::new(HashMap::<String, bool>::new()));
    let stream = watcher(pods.clone(), watcher::Config::default());
    futures::pin_mut!(stream);
    while let Some(event) = stream.try_next().await? {
        let pod = match event {
            watcher::Event::Apply(pod) | watcher::Event::InitApply(pod) => pod,
            _ => continue,
        };
        let value = serde_json::to_value(&pod)?;
        let Some(action) = decide(&value, args.nodes, &now()) else {
            continue;
        };
        let name = pod.metadata.name.clone().unwrap_or_default();
        {
            let mut flights = in_flight.lock().expect("in-flight map");
            if let Some(stale) = flights.get_mut(&name) {
                *stale = true;
                continue;
            }
            flights.insert(name.clone(), false);
        }
        let permit = slots.clone().acquire_owned().await?;
        let (pods, in_flight, nodes) = (pods.clone(), in_flight.clone(), args.nodes);
        tokio::spawn(async move {
            let mut action = Some(action);
            while let Some(next) = action.take() {
                if let Err(error) = act(&pods, &name, next).await {
                    eprintln!("standin_kubelet: {name}: {error}");
                }
                // Done unless an event came meanwhile: then the pod is read again (the event was skipped).
                let stale = {
                    let mut flights = in_flight.lock().expect("in-flight map");
                    let stale = flights.get(&name) == Some(&true);
                    if stale {
                        flights.insert(name.clone(), false);
                    } else {
                        flights.remove(&name);
                    }
                    stale
                };
                if stale {
                    action = match pods.get_opt(&name).await {
                        Ok(Some(pod)) => serde_json::to_value(&pod)
                            .ok()
                            .and_then(|v| decide(&v, nodes, &now())),
                        _ => None,
                    };
                    if action.is_none() {
                        in_flight.lock().expect("in-flight map").remove(&name);
                    }
                }
            }
            drop(permit);
        });
    }
    Ok(())
}
