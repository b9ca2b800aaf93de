//! The SidecarSet catalogue at scale: run with `cargo bench --bench catalogue`
//! (`CATALOGUE_BENCH_SETS`, 50,000 by default). SidecarSets as `scripts/scale-sidecarsets.sh`
//! creates them: each selects its own `app` label, all inject a container named `sidecar` (every
//! one shares that name with every other, the conflict index's worst case for names). Prints:
//! - judging the whole catalogue once (a list, a directory load);
//! - one SidecarSet changed in the judged catalogue (a watch event), and the snapshot it publishes;
//! - the pod webhook's decision for a pod no SidecarSet matches, and for one that one matches.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use k8s_openapi::api::core::v1::Pod;
use kruise_webhook::admission::pod::{PodMutation, mutate_decoded_pod};
use kruise_webhook::admission::review::decode_review;
use kruise_webhook::api::SidecarSet;
use kruise_webhook::defaults::sidecarset::default_and_hash;
use kruise_webhook::source::Catalogue;
use kruise_webhook::source::acceptance::{Acceptance, accept_all};

#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn sidecarset(i: usize, image: &str) -> Arc<SidecarSet> {
    let mut set: SidecarSet = serde_json::from_value(serde_json::json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "SidecarSet",
        "metadata": {"name": format!("scale-{i}")},
        "spec": {
            "selector": {"matchLabels": {"app": format!("scale-{i}")}},
            "containers": [{"name": "sidecar", "image": image}]
        }
    }))
    .expect("a SidecarSet");
    default_and_hash(&mut set);
    Arc::new(set)
}

fn main() {
    let count: usize = std::env::var("CATALOGUE_BENCH_SETS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(50_000);
    let sets: Vec<Arc<SidecarSet>> = (0..count).map(|i| sidecarset(i, "busybox:1.36")).collect();

    let start = Instant::now();
    let (accepted, refused) = accept_all(sets.iter().map(|s| (s.clone(), "bench")).collect());
    assert_eq!((accepted.len(), refused.len()), (count, 0));
    println!(
        "judge {count} SidecarSets at once: {:.0} ms",
        start.elapsed().as_secs_f64() * 1e3
    );

    let mut acceptance: Acceptance<Arc<str>, &str> = Acceptance::default();
    for set in &sets {
        acceptance.upsert(Arc::from(set.name()), set.clone(), "bench");
    }
    acceptance.settle();
    let changes = 1_000;
    let start = Instant::now();
    for i in 0..changes {
        let changed = sidecarset(i * (count / changes).max(1) % count, "busybox:1.37");
        acceptance.upsert(Arc::from(changed.name()), changed, "bench");
        black_box(acceptance.settle());
    }
    println!(
        "one SidecarSet changed among {count}, judged: {:.1} µs",
        start.elapsed().as_secs_f64() * 1e6 / changes as f64
    );

    let catalogue = Catalogue::new(
        acceptance.accepted().cloned().collect(),
        Default::default(),
        true,
    );
    let snapshots = 20;
    let start = Instant::now();
    let mut last = catalogue;
    for _ in 0..snapshots {
        let accepted = acceptance.accepted().cloned().collect();
        last = Catalogue::next(Some(&last), accepted, Default::default(), true);
    }
    println!(
        "the snapshot it publishes ({count} SidecarSets): {:.1} ms",
        start.elapsed().as_secs_f64() * 1e3 / snapshots as f64
    );

    let review = |app: &str| {
        let mut review: serde_json::Value = serde_json::from_slice(
            &std::fs::read("tests/fixtures/pod-web-log-agent.json").expect("the fixture"),
        )
        .expect("JSON");
        review["request"]["object"]["metadata"]["labels"] = serde_json::json!({"app": app});
        serde_json::to_vec(&review).expect("JSON")
    };
    for (what, body, injected) in [
        ("no SidecarSet matches", review("nothing-matches"), false),
        ("one SidecarSet matches", review("scale-7"), true),
    ] {
        let iterations = 2_000;
        let start = Instant::now();
        for _ in 0..iterations {
            let (_, mut request) = decode_review::<Pod>(black_box(&body)).expect("a review");
            let response = mutate_decoded_pod(
                &mut request,
                &PodMutation {
                    catalogue: &last,
                    now: "2026-11-22T10:00:00Z",
                    name_suffix: "abcde",
                    sort_sidecars_by_name: false,
                    draw: &kruise_webhook::inject::sidecar::random_draw,
                },
            );
            assert_eq!(response.patch.is_some(), injected, "{what}");
            black_box(response);
        }
        println!(
            "/mutate-pod decision, {what} ({count} SidecarSets): {:.1} µs",
            start.elapsed().as_secs_f64() * 1e6 / iterations as f64
        );
    }
}
