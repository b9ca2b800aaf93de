//! Pure decision time of one SidecarSet reconcile over 10,000 matched pods held in memory, the
//! memory the controller's pod cache takes for them, and the cost of one pod watch event: run
//! with `cargo bench --bench rollout` (`BENCH_PODS=100000` for 100,000 pods).
//!
//! The pods are the example `log-agent` SidecarSet injected into the `pod-web-log-agent` fixture
//! by the real injection code and upgraded in place once by the real upgrade code (so they carry
//! the bookkeeping of a previous rollout), then copied with their own names and a running, ready
//! status on the new image. They are listed into the controller's pod cache through its own
//! event feed (`controller::pod_events`), as a pod watch's initial list: each is summarised, and
//! kept whole (pruned) only if a controller reads it whole. The timed pass reads the summaries.
//! The allocator is the binary's. The SidecarSet then gets a new image, so every pod is matched,
//! not updated and upgradable: the planner has to look at, order and budget all of them.
//! `BENCH_AFTER_ROLLOUT=1` also gives every pod the in-place state a finished multi-batch update
//! leaves on it.
//!
//! The cache's memory is read three ways: the RSS it adds, the bytes allocated and not freed, and
//! the most allocated during the list. The RSS includes the pages jemalloc keeps after frees
//! (returned over the next seconds); `_RJEM_MALLOC_CONF=dirty_decay_ms:0,muzzy_decay_ms:0` returns
//! them at once, so that the RSS is what the cache holds. `BENCH_IDLE_SECS=N` waits N seconds
//! after the list, as an idle controller would, then reads the RSS again (jemalloc's background
//! threads return the freed pages meanwhile) before the passes are timed.

use std::alloc::{GlobalAlloc, Layout};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use futures::StreamExt;
use kube::runtime::watcher::Event;

use k8s_openapi::api::core::v1::{ContainerStatus, Pod, PodCondition, PodStatus};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_webhook::api::keys;
use kruise_webhook::controller::pod_cache;
use kruise_webhook::controller::pod_events::{Deletions, PodEvents, PodStores};
use kruise_webhook::defaults::sidecarset::default_and_hash;
use kruise_webhook::inject::sidecar::{InjectionContext, inject_sidecars};
use kruise_webhook::podmarks::PodSummary;
use kruise_webhook::rollout::{matched_pods, plan_round, upgrade_pod};
use kruise_webhook::source::dir::{self, EMBEDDED_EXAMPLES};
use kube::ResourceExt;

mod support;
use support::rss_kib;

/// The binary's allocator, counting allocations for the watch-event figure.
struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
/// Bytes allocated and not yet freed: what the cache holds, apart from what the allocator keeps.
static LIVE_BYTES: AtomicU64 = AtomicU64::new(0);
/// The most `LIVE_BYTES` reached.
static PEAK_BYTES: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        let live = LIVE_BYTES.fetch_add(layout.size() as u64, Ordering::Relaxed);
        PEAK_BYTES.fetch_max(live + layout.size() as u64, Ordering::Relaxed);
        unsafe { tikv_jemallocator::Jemalloc.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE_BYTES.fetch_sub(layout.size() as u64, Ordering::Relaxed);
        unsafe { tikv_jemallocator::Jemalloc.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        let live = LIVE_BYTES.fetch_add(new_size as u64, Ordering::Relaxed);
        // Both blocks exist while the old one is copied.
        PEAK_BYTES.fetch_max(live + new_size as u64, Ordering::Relaxed);
        LIVE_BYTES.fetch_sub(layout.size() as u64, Ordering::Relaxed);
        unsafe { tikv_jemallocator::Jemalloc.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Runs pod watch `events` through a fresh cache with one subscriber, as the controller does.
fn feed(events: impl Iterator<Item = Event<Pod>> + Send) -> PodStores {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    // `BENCH_HOLD_ALL=1`: every pod kept whole, as the cache did before it summarised most.
    let hold_all = std::env::var_os("BENCH_HOLD_ALL").is_some();
    let held: fn(&Pod, &PodSummary) -> bool = if hold_all {
        |_, _| true
    } else {
        pod_cache::held
    };
    let (stores, mut feed) = PodEvents::new(1024, held);
    let heard = feed.subscribe(Deletions::Untold);
    let events = futures::stream::iter(events.map(Ok));
    runtime.block_on(async {
        futures::join!(
            feed.run(events),
            heard.for_each(|_| futures::future::ready(()))
        )
    });
    stores
}

fn main() {
    let files: Vec<(String, String)> = EMBEDDED_EXAMPLES
        .iter()
        .map(|(name, content)| (name.to_string(), content.to_string()))
        .collect();
    let (catalogue, errors) = dir::load(&files).into_catalogue();
    assert!(errors.is_empty(), "{errors:?}");
    let review: serde_json::Value = serde_json::from_slice(
        &std::fs::read("tests/fixtures/pod-web-log-agent.json").expect("fixture"),
    )
    .expect("fixture JSON");
    let mut template: Pod = serde_json::from_value(review["request"]["object"].clone()).unwrap();
    let context = InjectionContext {
        sidecarsets: catalogue.sidecarsets(),
        namespace_labels: None,
        now: "2026-11-22T10:00:00Z",
        sort_sidecars_by_name: false,
        revisions: None,
        draw: &kruise_webhook::inject::sidecar::random_draw,
    };
    inject_sidecars(&mut template, &context).expect("injection");
    template.metadata.namespace = Some("web".into());
    let log_agent = |image: &str| {
        let mut set = catalogue
            .sidecarsets()
            .iter()
            .find(|s| s.metadata.name.as_deref() == Some("log-agent"))
            .expect("log-agent example")
            .as_ref()
            .clone();
        if let Some(sidecar) = set.spec.containers.as_mut().and_then(|c| c.first_mut()) {
            sidecar.container.image = Some(image.into());
        }
        set.spec
            .update_strategy
            .get_or_insert_with(Default::default)
            .max_unavailable = Some(IntOrString::String("10%".into()));
        default_and_hash(&mut set);
        set
    };
    let previous = log_agent("fluent/fluent-bit:2.2.3");
    let template = upgrade_pod(
        &running_copy(&template, 0),
        &previous,
        "2026-11-22T11:00:00Z",
    )
    .expect("previous rollout")
    .pod;
    assert!(
        template
            .annotations()
            .contains_key(keys::SIDECARSET_INPLACE_UPDATE_STATE),
        "the previous rollout is recorded"
    );

    let pods: usize = env_number("BENCH_PODS").unwrap_or(10_000);

    // As the controller's pod watch lists them into its cache.
    let rss_before = rss_kib();
    let live_before = LIVE_BYTES.load(Ordering::Relaxed);
    PEAK_BYTES.store(live_before, Ordering::Relaxed);
    let list = std::iter::once(Event::Init)
        .chain((0..pods).map(|i| Event::InitApply(running_copy(&template, i))))
        .chain(std::iter::once(Event::InitDone));
    let stores = feed(list);
    let rss_after = rss_kib();
    let live_after = LIVE_BYTES.load(Ordering::Relaxed);
    let peak = PEAK_BYTES.load(Ordering::Relaxed);
    // `BENCH_IDLE_SECS=N`: N seconds without allocations after the list, as an idle controller's,
    // before the RSS is read again and the passes are timed (jemalloc returns freed pages on its
    // own decay schedule).
    let idle = env_number("BENCH_IDLE_SECS").map(|secs: u64| {
        std::thread::sleep(std::time::Duration::from_secs(secs));
        (secs, rss_kib())
    });
    // As a reconcile reads them (`BENCH_HASH_ORDER=1`: in the store's own order).
    let hash_order = std::env::var_os("BENCH_HASH_ORDER").is_some();
    let read = || match hash_order {
        true => stores.summaries.state(),
        false => pod_cache::in_memory_order(stores.summaries.state()),
    };
    let summaries = read();
    let held = stores.pods.state().len();
    assert_eq!(summaries.len(), pods, "every pod summarised");

    let set = log_agent("fluent/fluent-bit:3.0.0");

    let matched = matched_pods(&set, &summaries, |_| None).expect("matching");
    let plan = plan_round(&set, &matched);
    assert_eq!(plan.status.matched_pods, pods as i32, "every pod matched");
    assert_eq!(plan.upgrade.len(), pods / 10, "10% upgraded per round");
    let runs = 20;
    let (mut matching, mut planning, mut whole) = (Vec::new(), Vec::new(), Vec::new());
    for run in 0..3 + runs {
        let started = Instant::now();
        let summaries = read();
        let matched = black_box(matched_pods(&set, &summaries, |_| None).expect("matching"));
        let after_matching = started.elapsed();
        black_box(plan_round(&set, &matched));
        let total = started.elapsed();
        // The first three rounds only warm up.
        if run >= 3 {
            matching.push(after_matching.as_secs_f64() * 1000.0);
            planning.push((total - after_matching).as_secs_f64() * 1000.0);
            whole.push(total.as_secs_f64() * 1000.0);
        }
    }
    let median = |times: &mut Vec<f64>| {
        times.sort_by(f64::total_cmp);
        times[times.len() / 2]
    };
    let max = whole.iter().copied().fold(0.0, f64::max);
    let mib = |kib: u64| kib as f64 / 1024.0;
    println!(
        "reconcile pass over {pods} pods: median {:.2} ms (reading and matching {:.2} ms + planning {:.2} ms), max {max:.2} ms ({runs} runs)",
        median(&mut whole),
        median(&mut matching),
        median(&mut planning),
    );
    println!(
        "process RSS: {:.1} MiB with {pods} pods cached ({:.1} MiB for the cache, {:.1} MiB of it allocated, {:.1} MiB at the peak of the list; {held} held whole)",
        mib(rss_after),
        mib(rss_after.saturating_sub(rss_before)),
        live_after.saturating_sub(live_before) as f64 / (1024.0 * 1024.0),
        peak.saturating_sub(live_before) as f64 / (1024.0 * 1024.0),
    );
    if let Some((secs, rss_idle)) = idle {
        println!(
            "process RSS after {secs} s idle: {:.1} MiB ({:.1} MiB for the cache)",
            mib(rss_idle),
            mib(rss_idle.saturating_sub(rss_before)),
        );
    }
    drop(stores);

    // Watch traffic: one event per pod, each a status change the kubelet would write, through a
    // cache that holds the pods already.
    let events = 10_000.min(pods);
    let mut again = |i: usize| {
        let mut pod = running_copy(&template, i);
        pod.metadata.resource_version = Some(format!("{}", 2 * i + 1));
        pod
    };
    let listed: Vec<Pod> = (0..events).map(&mut again).collect();
    let changed: Vec<Pod> = (0..events)
        .map(|i| {
            let mut pod = again(i);
            pod.metadata.resource_version = Some(format!("{}", 2 * i + 2));
            pod
        })
        .collect();
    let list = std::iter::once(Event::Init)
        .chain(listed.into_iter().map(Event::InitApply))
        .chain(std::iter::once(Event::InitDone));
    let allocations_before = ALLOCATIONS.load(Ordering::Relaxed);
    let started = Instant::now();
    let stores = feed(list.chain(changed.into_iter().map(Event::Apply)));
    let elapsed = started.elapsed();
    let allocations = ALLOCATIONS.load(Ordering::Relaxed) - allocations_before;
    black_box(&stores);
    // Listing and changing each pod: two events per pod.
    let per_event = 2 * events;
    println!(
        "pod watch events: {:.1} µs and {:.0} allocations per event ({per_event} events: the list, then one change per pod)",
        elapsed.as_secs_f64() * 1e6 / per_event as f64,
        allocations as f64 / per_event as f64,
    );
}

/// A number from the environment (`None` when unset or unreadable).
fn env_number<T: std::str::FromStr>(name: &str) -> Option<T> {
    std::env::var(name).ok().and_then(|n| n.parse().ok())
}

/// Pod `i`: its own name and uid, scheduled, running and ready, with image IDs.
fn running_copy(template: &Pod, i: usize) -> Pod {
    let mut pod = template.clone();
    // `BENCH_AFTER_ROLLOUT=1`: the in-place state a finished multi-batch update leaves (it stays
    // on the pod); the running image IDs differ from the ones recorded before it.
    if std::env::var_os("BENCH_AFTER_ROLLOUT").is_some() {
        pod.metadata
            .annotations
            .get_or_insert_with(Default::default)
            .insert(
                keys::INPLACE_UPDATE_STATE.into(),
                r#"{"revision":"log-agent-1","updateImages":true,"lastContainerStatuses":{"log-agent":{"imageID":"sha256:before"}}}"#.into(),
            );
    }
    pod.metadata.name = Some(format!("web-{i}"));
    pod.metadata.uid = Some(format!("00000000-0000-4000-8000-{i:012}"));
    let spec = pod.spec.get_or_insert_with(Default::default);
    spec.node_name = Some(format!("node-{}", i % 100));
    let statuses = spec
        .containers
        .iter()
        .map(|c| ContainerStatus {
            name: c.name.clone(),
            image: c.image.clone().unwrap_or_default(),
            image_id: format!("docker-pullable://{}@sha256:{i:064}", c.name),
            ready: true,
            started: Some(true),
            ..Default::default()
        })
        .collect();
    let condition = |type_: &str| PodCondition {
        type_: type_.into(),
        status: "True".into(),
        ..Default::default()
    };
    pod.status = Some(PodStatus {
        phase: Some("Running".into()),
        conditions: Some(vec![
            condition("PodScheduled"),
            condition("ContainersReady"),
            condition("Ready"),
        ]),
        container_statuses: Some(statuses),
        ..Default::default()
    });
    pod
}
