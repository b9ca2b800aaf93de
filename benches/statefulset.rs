//! Pure decision time of one Advanced StatefulSet reconcile with nothing to do, for 1,000 and
//! 10,000 replicas, and the memory its pods take in the controller's cache: run with
//! `cargo bench --bench statefulset`.
//!
//! The set is the release note's shape (`Parallel`, one `volumeClaimTemplate`, in place if
//! possible, the `InPlaceUpdateReady` gate); its pods and claims are the planner's own creations,
//! the pods made running and ready, held as the pod reflector holds them: a summary of each, and
//! the pruned pod only where a round reads it whole. The status is the one the planner computed
//! for them, so the timed round (`statefulset::plan` on the cache) finds every pod and claim as it
//! wants them and writes nothing: the steady state a controller spends its reconciles in (a pod
//! or claim event, a resync). It also prints what the claims take in the PVC cache.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use kruise_webhook::api::statefulset::StatefulSet;
use kruise_webhook::statefulset::{Action, Plan, Snapshot, plan};
use kruise_webhook::workload::revision::{self, UpdateRevision};
use serde_json::json;

mod support;
use support::{CachedPods, rss_kib, running};

#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() {
    // `BENCH_REPLICAS=10000 BENCH_RUNS=1` runs one size once (for callgrind).
    let sizes = match std::env::var("BENCH_REPLICAS") {
        Ok(n) => vec![n.parse().expect("BENCH_REPLICAS is a number")],
        Err(_) => vec![1_000, 10_000],
    };
    let runs = std::env::var("BENCH_RUNS")
        .map(|n| n.parse().expect("BENCH_RUNS is a number"))
        .unwrap_or(20);
    for replicas in sizes {
        run(replicas, runs);
    }
}

fn statefulset(replicas: usize) -> StatefulSet {
    serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": "default", "uid": "sts-uid", "generation": 1},
        "spec": {
            "replicas": replicas,
            "serviceName": "web",
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "readinessGates": [{"conditionType": "InPlaceUpdateReady"}],
                    "containers": [
                        {"name": "main", "image": "main:v1",
                         "volumeMounts": [{"name": "data", "mountPath": "/data"}]}
                    ]
                }
            },
            "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}],
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {
                "podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": "20%"}}
        }
    }))
    .expect("statefulset")
}

fn run(replicas: usize, runs: usize) {
    let now = Timestamp::from_second(1_700_000_000).expect("time");
    let mut set = statefulset(replicas);
    let mut history: Vec<ControllerRevision> = Vec::new();
    let update_revision = match revision::update_revision(&set, &history, 0).expect("revision") {
        UpdateRevision::Create(r) => {
            let name = r.metadata.name.clone().expect("name");
            history.push(*r);
            name
        }
        UpdateRevision::Latest { name } | UpdateRevision::Renumber { name, .. } => name,
    };
    let no_claims = BTreeMap::new();
    let created = plan(&Snapshot {
        set: &set,
        pods: &[],
        claims: &no_claims,
        history: &history,
        update_revision: &update_revision,
        collision_count: 0,
        now,
    })
    .expect("plan");
    // The pods and claims as the apiserver has them.
    let mut pods = Vec::new();
    let mut stored_claims = Vec::new();
    for (i, action) in created.actions.iter().enumerate() {
        match action {
            Action::CreatePod { pod, .. } => pods.push(running(pod.as_ref().clone(), i, now)),
            Action::CreatePvc { pvc: claim, .. } => {
                let mut claim = PersistentVolumeClaim::clone(claim);
                claim.metadata.uid = Some(format!("claim-{i}"));
                claim.metadata.resource_version = Some(i.to_string());
                stored_claims.push(claim);
            }
            _ => {}
        }
    }
    assert_eq!(pods.len(), replicas, "one creation per replica");
    assert_eq!(stored_claims.len(), replicas, "one claim per replica");

    // What the controller's pod cache keeps of each pod (as benches/cloneset.rs measures it):
    // a summary for every pod, and the pruned pod only where a round reads it whole.
    let cache = CachedPods::of(&pods);
    // The PVC cache holds every claim whole (without managedFields, which these have not).
    let claims: BTreeMap<String, Arc<PersistentVolumeClaim>> = stored_claims
        .iter()
        .map(|claim| {
            let name = claim.metadata.name.clone().expect("claim name");
            (name, Arc::new(claim.clone()))
        })
        .collect();
    let rss_claims = rss_kib();
    drop(created);
    let listed = cache.listed();

    // The status of these pods, as the controller wrote it in an earlier round.
    let settled = timed_plan(&Snapshot {
        set: &set,
        pods: &listed,
        claims: &claims,
        history: &history,
        update_revision: &update_revision,
        collision_count: 0,
        now,
    });
    assert!(settled.actions.is_empty(), "nothing to do but the status");
    set.status = Some(settled.status);

    let snapshot = Snapshot {
        set: &set,
        pods: &listed,
        claims: &claims,
        history: &history,
        update_revision: &update_revision,
        collision_count: 0,
        now,
    };
    let quiet = timed_plan(&snapshot);
    assert!(
        quiet.actions.is_empty() && !quiet.write_status && quiet.needs_whole.is_empty(),
        "the round writes nothing and reads nothing more"
    );

    let warm_up = if runs > 1 { 3 } else { 0 };
    let mut times = Vec::new();
    for run in 0..warm_up + runs {
        let started = Instant::now();
        black_box(timed_plan(black_box(&snapshot)));
        if run >= warm_up {
            times.push(started.elapsed().as_secs_f64() * 1000.0);
        }
    }
    times.sort_by(f64::total_cmp);
    println!(
        "statefulset reconcile, {replicas} replicas, nothing to write: median {:.2} ms, max {:.2} ms ({runs} runs)",
        times[times.len() / 2],
        times.last().copied().unwrap_or(0.0),
    );
    let mib = |kib: u64| kib as f64 / 1024.0;
    println!("{}", cache.report());
    println!(
        "  their {replicas} claims in the PVC cache: {:.1} MiB of process RSS",
        mib(rss_claims.saturating_sub(cache.rss_pods)),
    );
}

/// The measured call, a function of its own so that
/// `valgrind --tool=callgrind --toggle-collect='*timed_plan*'` counts only it.
#[inline(never)]
fn timed_plan(snapshot: &Snapshot<'_>) -> Plan {
    plan(snapshot).expect("plan")
}
