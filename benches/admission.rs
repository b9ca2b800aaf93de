//! Pure decision time of the pod webhook on the benchmark fixture (no TLS, no HTTP): run with
//! `cargo bench --bench admission`. Prints the mean time per request of each stage.
//!
//! With `ADMISSION_BENCH_ONLY=baseline` or `=injection` it runs only that whole request
//! `ADMISSION_BENCH_ITERATIONS` times and prints nothing: `bench/instructions.sh` counts the
//! instructions of such runs under valgrind, a figure that does not drift with the machine's load.
//! Two more runs bound what any decode built on serde_json could save: `=scan` reads the same
//! review with the object skipped (`IgnoredAny`: serde_json's scanning and nothing built), `=value`
//! with the object as a `serde_json::Value` (what the floor webhook builds).
//! `ADMISSION_BENCH_BODY=<file>` reads another review (e.g. the fixture in compact form).
//! `ADMISSION_BENCH_EVICT_KIB=N` writes over N KiB between two requests, as the TLS, HTTP and kernel
//! work between two requests of a server would, to see what cold caches cost each route.

use std::hint::black_box;
use std::time::Instant;

use k8s_openapi::api::core::v1::Pod;
use kruise_webhook::admission::pod::{PodMutation, mutate_decoded_pod};
use kruise_webhook::admission::review::{decode_envelope, decode_review, encode_review};
use kruise_webhook::source::dir;
use serde::de::IgnoredAny;

#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() {
    let files =
        dir::read_directory(std::path::Path::new("bench/sidecarsets")).expect("bench SidecarSets");
    let (catalogue, errors) = dir::load(&files).into_catalogue();
    assert!(errors.is_empty(), "{errors:?}");
    let body_path = std::env::var("ADMISSION_BENCH_BODY")
        .unwrap_or_else(|_| "tests/fixtures/pod-web-log-agent.json".to_string());
    let body = std::fs::read(&body_path).expect("the review to post");
    let iterations = 20_000;

    // Both requests decode as the server's routes do: envelope and pod in one pass.
    let baseline_request = || decode_and_allow::<Pod>(&body);
    let injection_request = || {
        let (version, mut request) = decode_review::<Pod>(black_box(&body)).unwrap();
        let response = mutate_decoded_pod(
            &mut request,
            &PodMutation {
                catalogue: &catalogue,
                now: "2026-11-22T10:00:00Z",
                name_suffix: "abcde",
                sort_sidecars_by_name: false,
                draw: &kruise_webhook::inject::sidecar::random_draw,
            },
        );
        assert!(
            response.patch.is_some(),
            "the benchmark request is injected"
        );
        black_box(encode_review(&version, &response));
    };
    let scan_request = || decode_and_allow::<IgnoredAny>(&body);
    let value_request = || decode_and_allow::<serde_json::Value>(&body);
    if let Ok(only) = std::env::var("ADMISSION_BENCH_ONLY") {
        let count: u32 = env_number("ADMISSION_BENCH_ITERATIONS", 1000);
        let request: &dyn Fn() = match only.as_str() {
            "baseline" => &baseline_request,
            "injection" => &injection_request,
            "scan" => &scan_request,
            "value" => &value_request,
            other => {
                panic!("ADMISSION_BENCH_ONLY={other}: expected baseline, injection, scan or value")
            }
        };
        let evict_kib: usize = env_number("ADMISSION_BENCH_EVICT_KIB", 0);
        let mut scratch = vec![0u8; evict_kib * 1024];
        (0..count).for_each(|i| {
            request();
            scratch
                .iter_mut()
                .step_by(64)
                .for_each(|b| *b = b.wrapping_add(i as u8));
            black_box(&scratch);
        });
        return;
    }

    let time = |name: &str, f: &mut dyn FnMut()| {
        for _ in 0..1000 {
            f();
        }
        let started = Instant::now();
        for _ in 0..iterations {
            f();
        }
        let per = started.elapsed() / iterations;
        println!("{name:<40} {per:>10.2?} per request");
    };
    time("decode review incl. pod, allow (baseline)", &mut || {
        baseline_request()
    });
    time("decode review, object skipped (scan)", &mut || {
        scan_request()
    });
    time("decode review, object as a Value", &mut || value_request());
    let (_, request) = decode_envelope(&body).unwrap();
    let pod: Pod = kruise_webhook::admission::review::decode_object(request.object, "o").unwrap();
    time("stage: decode pod object", &mut || {
        let p: Pod =
            kruise_webhook::admission::review::decode_object(black_box(request.object), "o")
                .unwrap();
        black_box(p);
    });
    time("stage: pod to_value", &mut || {
        black_box(serde_json::to_value(black_box(&pod)).unwrap());
    });
    time("stage: pod clone", &mut || {
        black_box(black_box(&pod).clone());
    });
    let before = serde_json::to_value(&pod).unwrap();
    let mut injected = pod.clone();
    let ctx = kruise_webhook::inject::sidecar::InjectionContext {
        sidecarsets: catalogue.sidecarsets(),
        namespace_labels: None,
        now: "2026-11-22T10:00:00Z",
        sort_sidecars_by_name: false,
        revisions: None,
        draw: &kruise_webhook::inject::sidecar::random_draw,
    };
    time("stage: inject", &mut || {
        let mut p = pod.clone();
        black_box(kruise_webhook::inject::sidecar::inject_sidecars(&mut p, &ctx).unwrap());
    });
    kruise_webhook::inject::sidecar::inject_sidecars(&mut injected, &ctx).unwrap();
    let after = serde_json::to_value(&injected).unwrap();
    time("stage: diff", &mut || {
        black_box(kruise_webhook::admission::patch::diff(
            black_box(&before),
            black_box(&after),
        ));
    });
    time("stage: timestamp + name suffix", &mut || {
        let now = jiff::Timestamp::now()
            .strftime("%Y-%m-%dT%H:%M:%SZ")
            .to_string();
        black_box((
            now,
            kruise_webhook::inject::launch_priority::random_name_suffix(),
        ));
    });
    time("decode + inject + patch + encode", &mut || {
        injection_request()
    });
}

/// The baseline route's work with the review's object decoded as `Object`: decode, allow, encode.
fn decode_and_allow<'a, Object: serde::Deserialize<'a>>(body: &'a [u8]) {
    let (version, request) = decode_review::<Object>(black_box(body)).unwrap();
    black_box(request.object);
    let response = kruise_webhook::admission::review::AdmissionResponse::allow(&request.uid);
    black_box(encode_review(&version, &response));
}

/// A number from the environment, `default` when unset or unreadable.
fn env_number<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}
