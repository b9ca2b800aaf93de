//! Pure decision time of one SidecarSet reconcile over 10,000 matched pods held in memory, and the
//! memory those pods take: run with `cargo bench --bench rollout`.
//!
//! The pods are the example `log-agent` SidecarSet injected into the `pod-web-log-agent` fixture
//! by the real injection code and upgraded in place once by the real upgrade code (so they carry
//! the bookkeeping of a previous rollout), then copied 10,000 times with their own names and a
//! running, ready status on the new image. As in the controller, each is held twice: pruned as the pod reflector caches it,
//! and as the planner's `PodSummary`, which is what the timed pass reads. The allocator is the
//! binary's. The SidecarSet then gets a new image, so every pod is matched, not updated and
//! upgradable: the planner has to look at, order and budget all of them.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use k8s_openapi::api::core::v1::{ContainerStatus, Pod, PodCondition, PodStatus};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_webhook::api::keys;
use kruise_webhook::controller::pod_cache;
use kruise_webhook::defaults::sidecarset::default_and_hash;
use kruise_webhook::inject::sidecar::{InjectionContext, inject_sidecars};
use kruise_webhook::podmarks::PodSummary;
use kruise_webhook::rollout::{matched_pods, plan_round, upgrade_pod};
use kruise_webhook::source::dir::{self, EMBEDDED_EXAMPLES};
use kube::ResourceExt;

const PODS: usize = 10_000;

mod support;
use support::rss_kib;

#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

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

    // As the controller's pod reflector keeps them: a summary made from the full pod, and the
    // pruned pod.
    let rss_before = rss_kib();
    let summaries: Vec<Arc<PodSummary>> = (0..PODS)
        .map(|i| Arc::new(PodSummary::of(&running_copy(&template, i))))
        .collect();
    let rss_summaries = rss_kib();
    let pods: Vec<Arc<Pod>> = (0..PODS)
        .map(|i| {
            let mut pod = running_copy(&template, i);
            pod_cache::prune(&mut pod);
            Arc::new(pod)
        })
        .collect();
    let rss_after = rss_kib();
    black_box(&pods);

    let set = log_agent("fluent/fluent-bit:3.0.0");

    let matched = matched_pods(&set, &summaries, |_| None).expect("matching");
    let plan = plan_round(&set, &matched);
    assert_eq!(plan.status.matched_pods, PODS as i32, "every pod matched");
    assert_eq!(plan.upgrade.len(), PODS / 10, "10% upgraded per round");
    let runs = 20;
    let (mut matching, mut planning, mut whole) = (Vec::new(), Vec::new(), Vec::new());
    for run in 0..3 + runs {
        let started = Instant::now();
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
    println!(
        "reconcile pass over {PODS} pods: median {:.2} ms (matching {:.2} ms + planning {:.2} ms), max {max:.2} ms ({runs} runs)",
        median(&mut whole),
        median(&mut matching),
        median(&mut planning),
    );
    let mib = |kib: u64| kib as f64 / 1024.0;
    println!(
        "process RSS: {:.1} MiB with {PODS} pods held ({:.1} MiB for the pruned pods, {:.1} MiB for their summaries)",
        mib(rss_after),
        mib(rss_after.saturating_sub(rss_summaries)),
        mib(rss_summaries.saturating_sub(rss_before)),
    );
}

/// Pod `i`: its own name and uid, scheduled, running and ready, with image IDs.
fn running_copy(template: &Pod, i: usize) -> Pod {
    let mut pod = template.clone();
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
