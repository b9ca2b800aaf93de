//! Pure decision time of one CloneSet reconcile in the middle of an in-place update, for 1,000 and
//! 10,000 replicas, and the memory its pods take in the controller's cache: run with
//! `cargo bench --bench cloneset`.
//!
//! The pods are the planner's own creations (template with a sidecar of launch priority 10 and
//! `main`), made running and ready with the `InPlaceUpdateReady` gate True, held as the pod
//! reflector holds them: a summary of each, and the pruned pod only where a round reads it whole.
//! Then the template's images change: a third of the pods are already at the new revision, the
//! rest wait, `maxUnavailable` 20 %. The timed round is what the shell plans: `cloneset::plan` on
//! the cache, which orders the candidates and chooses the updates to start, and, since it asks
//! for those pods whole, `cloneset::plan` again with them (the apiserver reads left out).
//! `BENCH_AFTER_ROLLOUT=1` gives every pod the update state a finished in-place update leaves on
//! it.

use std::collections::{HashMap, HashSet};
use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::Pod;
use kruise_webhook::api::cloneset::CloneSet;
use kruise_webhook::api::keys;
use kruise_webhook::cloneset::{Action, ListedPod, Purpose, Snapshot, plan};
use kruise_webhook::podmarks::PodView;
use kruise_webhook::workload::revision::{self, UpdateRevision};
use serde_json::json;

mod support;
use support::{CachedPods, running};

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

fn cloneset(replicas: usize, image: &str) -> CloneSet {
    serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "web", "namespace": "default", "uid": "cs-uid", "generation": 2},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [
                    {"name": "sidecar", "image": format!("sidecar:{image}"),
                     "env": [{"name": "KRUISE_CONTAINER_PRIORITY", "value": "10"}]},
                    {"name": "main", "image": format!("main:{image}")}
                ]}
            },
            "updateStrategy": {"type": "InPlaceIfPossible", "maxUnavailable": std::env::var("BENCH_MAX_UNAVAILABLE").unwrap_or("20%".into())}
        }
    }))
    .expect("cloneset")
}

fn new_revision(set: &CloneSet, history: &mut Vec<ControllerRevision>) -> String {
    match revision::update_revision(set, history, 0).expect("revision") {
        UpdateRevision::Create(r) => {
            let name = r.metadata.name.clone().expect("name");
            history.push(*r);
            revision::sort_history(history);
            name
        }
        UpdateRevision::Latest { name } | UpdateRevision::Renumber { name, .. } => name,
    }
}

fn run(replicas: usize, runs: usize) {
    let now = Timestamp::from_second(1_700_000_000).expect("time");
    let mut rng = fastrand::Rng::with_seed(7);
    let v1 = cloneset(replicas, "v1");
    let mut history = Vec::new();
    let r1 = new_revision(&v1, &mut history);
    let created = plan(
        &Snapshot {
            cloneset: &v1,
            pods: &[],
            history: &history,
            update_revision: &r1,
            collision_count: 0,
            now,
        },
        &mut rng,
    )
    .expect("plan");
    // The pods as the apiserver has them.
    let mut pods: Vec<Pod> = created
        .actions
        .iter()
        .enumerate()
        .filter_map(|(i, action)| match action {
            Action::CreatePod { pod, .. } => Some(running(pod.as_ref().clone(), i, now)),
            _ => None,
        })
        .collect();
    assert_eq!(pods.len(), replicas, "one creation per replica");

    let v2 = cloneset(replicas, "v2");
    let r2 = new_revision(&v2, &mut history);
    // A third already moved to v2 (as a finished in-place update leaves them).
    for pod in pods.iter_mut().step_by(3) {
        let labels = pod.metadata.labels.get_or_insert_with(Default::default);
        labels.insert(keys::CONTROLLER_REVISION_HASH.into(), r2.clone());
        labels.insert(
            "pod-template-hash".into(),
            r2.rsplit('-').next().unwrap_or_default().into(),
        );
        for c in &mut pod.spec.as_mut().expect("spec").containers {
            c.image = c.image.as_ref().map(|i| i.replace(":v1", ":v2"));
        }
    }
    // `BENCH_AFTER_ROLLOUT=1`: every pod carries the state annotation a finished in-place update
    // leaves (the annotation stays after the update): the v2 third from the update to v2, the
    // others from an earlier one to v1. Their image IDs differ from the recorded ones, so the
    // engine finds each update complete.
    if std::env::var_os("BENCH_AFTER_ROLLOUT").is_some() {
        for pod in pods.iter_mut() {
            let revision = pod
                .metadata
                .labels
                .as_ref()
                .and_then(|l| l.get(keys::CONTROLLER_REVISION_HASH))
                .cloned()
                .unwrap_or_default();
            let state = json!({
                "revision": revision,
                "updateTimestamp": "2023-11-14T22:00:00Z",
                "lastContainerStatuses": {
                    "sidecar": {"imageID": "sha256:before"},
                    "main": {"imageID": "sha256:before"}
                },
                "updateImages": true
            });
            pod.metadata
                .annotations
                .get_or_insert_with(Default::default)
                .insert(keys::INPLACE_UPDATE_STATE.into(), state.to_string());
        }
    }

    // What the controller's pod cache keeps of each pod: a summary for every pod, and the pruned
    // pod itself only where a controller reads it whole every round (`held`). Nothing is freed
    // from here until both are measured (the planner's creations included): memory freed in
    // between would be reused by the copies and hide them.
    let cache = CachedPods::of(&pods);
    drop(created);
    let listed = cache.listed();
    // What the shell reads from the apiserver when a round asks for a pod whole.
    let by_name: HashMap<String, Arc<Pod>> = pods
        .into_iter()
        .map(|pod| (pod.metadata.name.clone().unwrap_or_default(), Arc::new(pod)))
        .collect();

    let snapshot = Snapshot {
        cloneset: &v2,
        pods: &listed,
        history: &history,
        update_revision: &r2,
        collision_count: 0,
        now,
    };
    let first = timed_plan_with_reads(&snapshot, &by_name, &mut rng);
    let started_updates = first
        .actions
        .iter()
        .filter(|a| {
            matches!(a, Action::WritePod { purpose, .. } if matches!(purpose, Purpose::InPlace { .. }))
        })
        .count();
    assert!(
        started_updates > 0 || std::env::var_os("BENCH_MAX_UNAVAILABLE").is_some(),
        "the round starts in-place updates"
    );
    assert!(
        first.needs_whole.is_empty(),
        "the second plan has what it needs"
    );

    let warm_up = if runs > 1 { 3 } else { 0 };
    let median = |timed: &mut dyn FnMut() -> kruise_webhook::cloneset::Plan| {
        let mut times = Vec::new();
        for run in 0..warm_up + runs {
            let started = Instant::now();
            black_box(timed());
            if run >= warm_up {
                times.push(started.elapsed().as_secs_f64() * 1000.0);
            }
        }
        times.sort_by(f64::total_cmp);
        (times[times.len() / 2], times.last().copied().unwrap_or(0.0))
    };
    let (first_median, _) = median(&mut || timed_plan(black_box(&snapshot), &mut rng.clone()));
    let (median_ms, max) =
        median(&mut || timed_plan_with_reads(black_box(&snapshot), &by_name, &mut rng.clone()));
    println!(
        "cloneset reconcile, {replicas} replicas mid-update ({started_updates} in-place starts): median {median_ms:.2} ms, max {max:.2} ms ({runs} runs)"
    );
    println!(
        "  of which the plan on the cache alone (it asks for {} pods whole): median {first_median:.2} ms",
        timed_plan(&snapshot, &mut rng.clone()).needs_whole.len()
    );
    // The planner may leave a write's pod to be built when the shell reads it; the whole round
    // is the plan plus every pod the shell would send.
    let (with_writes, _) =
        median(&mut || timed_plan_and_writes(black_box(&snapshot), &by_name, &mut rng.clone()));
    println!("  with every write's pod built: median {with_writes:.2} ms");
    println!("{}", cache.report());
}

/// The measured call, a function of its own so that
/// `valgrind --tool=callgrind --toggle-collect='*timed_plan*'` counts only it: one plan on the
/// cache as it is.
#[inline(never)]
fn timed_plan(snapshot: &Snapshot<'_>, rng: &mut fastrand::Rng) -> kruise_webhook::cloneset::Plan {
    plan(snapshot, rng).expect("plan")
}

/// A round as the shell plans it: on the cache, then, if the plan asks for pods whole, again with
/// them (read from `apiserver`, the time of the reads left out).
#[inline(never)]
fn timed_plan_with_reads(
    snapshot: &Snapshot<'_>,
    apiserver: &HashMap<String, Arc<Pod>>,
    rng: &mut fastrand::Rng,
) -> kruise_webhook::cloneset::Plan {
    let mut draws = rng.clone();
    let first = timed_plan(snapshot, &mut draws);
    if first.needs_whole.is_empty() {
        *rng = draws;
        return first;
    }
    let needed: HashSet<&str> = first.needs_whole.iter().map(String::as_str).collect();
    let pods: Vec<ListedPod> = snapshot
        .pods
        .iter()
        .map(|p| match needed.contains(p.name()) {
            true => ListedPod::whole(apiserver[p.name()].clone()),
            false => p.clone(),
        })
        .collect();
    timed_plan(
        &Snapshot {
            pods: &pods,
            ..*snapshot
        },
        rng,
    )
}

/// [`timed_plan_with_reads`] plus every pod the shell would send, read as the shell reads it.
#[inline(never)]
fn timed_plan_and_writes(
    snapshot: &Snapshot<'_>,
    apiserver: &HashMap<String, Arc<Pod>>,
    rng: &mut fastrand::Rng,
) -> kruise_webhook::cloneset::Plan {
    let plan = timed_plan_with_reads(snapshot, apiserver, rng);
    for action in &plan.actions {
        if let Action::WritePod { writes, .. } = action {
            for write in writes {
                black_box(&*write.pod);
            }
        }
    }
    plan
}
