//! The admission shell: HTTP request → AdmissionReview → pure decision → AdmissionReview answer.
//!
//! Error mapping: a body that is not an AdmissionReview at all gets a 4xx (the apiserver never
//! sends one; its `failurePolicy` then decides). Anything with a readable `uid` gets an
//! AdmissionReview that keeps the uid, `allowed: false` and a message naming the problem.

pub mod conversion;
pub mod deletion;
pub mod patch;
pub mod pod;
pub mod review;
pub mod sidecarset;
pub mod workload;

#[cfg(test)]
mod test_reviews;

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;

use crate::api::keys;
use crate::inject::launch_priority::random_name_suffix;
use crate::metrics::{AdmissionResult, Metrics};
use crate::source::SharedCatalogue;
use k8s_openapi::api::core::v1::Pod;
use review::{
    AdmissionRequest, AdmissionResponse, RequestEnvelope, ReviewError, decode_envelope,
    decode_review, encode_review,
};
use workload::{Workload, mutate_workload, validate_workload};

/// Largest accepted request body. An UPDATE review carries two objects of up to 3 MiB each
/// (the apiserver's own limit); controller-runtime uses the same bound.
pub const MAX_BODY_BYTES: usize = 7 * 1024 * 1024;

/// Path of the benchmark baseline: decodes the review (object included) and allows it.
pub const PATH_BASELINE: &str = "/baseline-allow";

/// OpenKruise v1.9.0's spelling of the CloneSet paths (its main branch, like this project's
/// manifests, drops `v1alpha1-`): both are served, so its configurations work unchanged.
pub const PATH_MUTATE_CLONESET_V1ALPHA1: &str = "/mutate-apps-kruise-io-v1alpha1-cloneset";
pub const PATH_VALIDATE_CLONESET_V1ALPHA1: &str = "/validate-apps-kruise-io-v1alpha1-cloneset";

/// Every webhook path [`router`] serves (the benchmark baseline aside): the one list of them.
/// Deployment manifests are checked against it, the `certs` job removes from the webhook
/// configurations every entry whose path it lacks, and a test checks it against the router.
pub const SERVED_PATHS: &[&str] = &[
    keys::PATH_MUTATE_POD,
    keys::PATH_MUTATE_SIDECARSET,
    keys::PATH_VALIDATE_SIDECARSET,
    keys::PATH_MUTATE_CLONESET,
    keys::PATH_VALIDATE_CLONESET,
    PATH_MUTATE_CLONESET_V1ALPHA1,
    PATH_VALIDATE_CLONESET_V1ALPHA1,
    keys::PATH_MUTATE_STATEFULSET,
    keys::PATH_VALIDATE_STATEFULSET,
    keys::PATH_MUTATE_DAEMONSET,
    keys::PATH_VALIDATE_DAEMONSET,
    deletion::PATH_VALIDATE_NAMESPACE,
    deletion::PATH_VALIDATE_CUSTOMRESOURCEDEFINITION,
    deletion::PATH_VALIDATE_APPS_DEPLOYMENT,
    deletion::PATH_VALIDATE_APPS_REPLICASET,
    deletion::PATH_VALIDATE_APPS_STATEFULSET,
    deletion::PATH_VALIDATE_SERVICE,
    deletion::PATH_VALIDATE_INGRESS,
    keys::PATH_CONVERT,
];

/// What the admission handlers share.
#[derive(Clone)]
pub struct AdmissionState {
    pub catalogue: SharedCatalogue,
    pub metrics: Arc<Metrics>,
    /// OpenKruise's `EnableSortSidecarContainerByName` feature gate.
    pub sort_sidecars_by_name: bool,
    /// What `Cascading` deletion protection reads from the cluster; `None` without a cluster
    /// (such deletions are then refused: nothing can be counted).
    pub deletion_reads: Option<Arc<deletion::ClusterReads>>,
}

/// The HTTPS router: OpenKruise's webhook paths (the apiserver's `?timeout=` query is ignored by
/// path routing), optionally the benchmark baseline.
pub fn router(state: AdmissionState, with_baseline: bool) -> Router {
    // Served at both spellings of their paths (see PATH_MUTATE_CLONESET_V1ALPHA1).
    let mutate_cloneset = post(|s, h, b| {
        workload_webhook(
            s,
            h,
            b,
            "mutate-cloneset",
            Workload::CloneSet,
            mutate_workload,
        )
    });
    let validate_cloneset = post(|s, h, b| {
        workload_webhook(
            s,
            h,
            b,
            "validate-cloneset",
            Workload::CloneSet,
            validate_workload,
        )
    });
    let mut router = Router::new()
        .route(served(keys::PATH_MUTATE_POD), post(mutate_pod))
        .route(served(keys::PATH_CONVERT), post(convert_objects))
        .route(
            served(keys::PATH_MUTATE_SIDECARSET),
            post(mutate_sidecarset),
        )
        .route(
            served(keys::PATH_VALIDATE_SIDECARSET),
            post(validate_sidecarset),
        )
        .route(served(keys::PATH_MUTATE_CLONESET), mutate_cloneset.clone())
        .route(served(PATH_MUTATE_CLONESET_V1ALPHA1), mutate_cloneset)
        .route(
            served(keys::PATH_VALIDATE_CLONESET),
            validate_cloneset.clone(),
        )
        .route(served(PATH_VALIDATE_CLONESET_V1ALPHA1), validate_cloneset)
        .route(
            served(keys::PATH_MUTATE_STATEFULSET),
            post(|s, h, b| {
                workload_webhook(
                    s,
                    h,
                    b,
                    "mutate-statefulset",
                    Workload::StatefulSet,
                    mutate_workload,
                )
            }),
        )
        .route(
            served(keys::PATH_VALIDATE_STATEFULSET),
            post(|s, h, b| {
                workload_webhook(
                    s,
                    h,
                    b,
                    "validate-statefulset",
                    Workload::StatefulSet,
                    validate_workload,
                )
            }),
        )
        .route(
            served(keys::PATH_MUTATE_DAEMONSET),
            post(|s, h, b| {
                workload_webhook(
                    s,
                    h,
                    b,
                    "mutate-daemonset",
                    Workload::DaemonSet,
                    mutate_workload,
                )
            }),
        )
        .route(
            served(keys::PATH_VALIDATE_DAEMONSET),
            post(|s, h, b| {
                workload_webhook(
                    s,
                    h,
                    b,
                    "validate-daemonset",
                    Workload::DaemonSet,
                    validate_workload,
                )
            }),
        );
    for (path, guard) in deletion::GUARDED_PATHS {
        let webhook = path.trim_start_matches('/');
        router = router.route(
            served(path),
            post(move |s, h, b| deletion_webhook(s, h, b, webhook, guard)),
        );
    }
    if with_baseline {
        router = router.route(PATH_BASELINE, post(baseline_allow));
    }
    router
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(state)
}

/// The path of a webhook route: every one is in [`SERVED_PATHS`] (the `certs` job removes the
/// configurations' entries of any other path, so a route missing there would never be called).
fn served(path: &'static str) -> &'static str {
    debug_assert!(
        SERVED_PATHS.contains(&path),
        "{path} is routed but not in SERVED_PATHS"
    );
    path
}

async fn mutate_pod(
    State(state): State<AdmissionState>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let catalogue = state.catalogue.load();
    let now = admission_time(jiff::Timestamp::now());
    let suffix = random_name_suffix();
    let input = pod::PodMutation {
        catalogue: &catalogue,
        now: &now,
        name_suffix: &suffix,
        sort_sidecars_by_name: state.sort_sidecars_by_name,
        draw: &crate::inject::sidecar::random_draw,
    };
    handle_one_pass(
        &state,
        "mutate-pod",
        &headers,
        &body,
        |request: &mut AdmissionRequest<Pod, _>| pod::mutate_decoded_pod(request, &input),
        |request| pod::mutate_pod(request, &input),
    )
}

/// `now` as RFC 3339 UTC seconds, the admission time injection writes. Formatting costs far more
/// than reading the clock, so each worker thread keeps the text of the last second it formatted.
fn admission_time(now: jiff::Timestamp) -> String {
    thread_local! {
        static LAST: std::cell::RefCell<(i64, String)> =
            const { std::cell::RefCell::new((i64::MIN, String::new())) };
    }
    LAST.with_borrow_mut(|(second, text)| {
        if *second != now.as_second() {
            *second = now.as_second();
            *text = now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
        }
        text.clone()
    })
}

async fn mutate_sidecarset(
    State(state): State<AdmissionState>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    handle(
        &state,
        "mutate-sidecarset",
        &headers,
        &body,
        sidecarset::mutate_sidecarset,
    )
}

async fn validate_sidecarset(
    State(state): State<AdmissionState>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    handle(&state, "validate-sidecarset", &headers, &body, |request| {
        let catalogue = state.catalogue.load();
        catalogue.with_revision_history(|history| {
            sidecarset::validate_sidecarset_request(request, catalogue.sidecarsets(), history)
        })
    })
}

/// The CRDs' conversion webhook: counted as `webhook="convert"`, `allowed` when every object
/// converted, `error` when one did not (the review then answers `Failure`) or the body is no
/// ConversionReview (a 400).
async fn convert_objects(
    State(state): State<AdmissionState>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    const WEBHOOK: &str = "convert";
    let started = Instant::now();
    let observe = |result| {
        state
            .metrics
            .observe_admission(WEBHOOK, "", result, started.elapsed())
    };
    if !is_json(&headers) {
        observe(AdmissionResult::Error);
        return plain_error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Content-Type must be application/json",
        );
    }
    match conversion::answer(&body) {
        Ok(answer) => {
            let failed = answer.response.result.status != "Success";
            if failed {
                tracing::info!(
                    uid = %answer.response.uid,
                    message = %answer.response.result.message,
                    "conversion refused"
                );
            }
            observe(if failed {
                AdmissionResult::Error
            } else {
                AdmissionResult::Allowed
            });
            let mut http = axum::Json(answer).into_response();
            http.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            http
        }
        Err(error) => {
            tracing::debug!(webhook = WEBHOOK, %error, "undecodable conversion request");
            observe(AdmissionResult::Error);
            plain_error(StatusCode::BAD_REQUEST, &error.to_string())
        }
    }
}

async fn workload_webhook(
    State(state): State<AdmissionState>,
    headers: HeaderMap,
    body: Bytes,
    webhook: &'static str,
    workload: Workload,
    decide: fn(Workload, &RequestEnvelope<'_>) -> AdmissionResponse,
) -> Response {
    handle(&state, webhook, &headers, &body, |request| {
        decide(workload, request)
    })
}

async fn deletion_webhook(
    State(state): State<AdmissionState>,
    headers: HeaderMap,
    body: Bytes,
    webhook: &'static str,
    guard: deletion::Guard,
) -> Response {
    let started = Instant::now();
    if !is_json(&headers) {
        return unsupported_media_type(&state, webhook, started);
    }
    match decode_envelope(&body) {
        Ok((api_version, request)) => {
            let response =
                deletion::protect(guard, &request, state.deletion_reads.as_deref()).await;
            respond(&state, webhook, started, &api_version, &request, response)
        }
        Err(error) => undecodable(&state, webhook, started, &error),
    }
}

async fn baseline_allow(
    State(state): State<AdmissionState>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    // What a trivial webhook does: decode the whole review, object included, and allow.
    handle_one_pass(
        &state,
        "baseline",
        &headers,
        &body,
        |request: &mut AdmissionRequest<Pod, _>| {
            std::hint::black_box(request.object.take());
            AdmissionResponse::allow(&request.uid)
        },
        |request| match review::decode_object::<Pod>(request.object, "request.object") {
            Ok(pod) => {
                std::hint::black_box(pod);
                AdmissionResponse::allow(&request.uid)
            }
            Err(message) => AdmissionResponse::deny(&request.uid, 400, message),
        },
    )
}

async fn not_found() -> Response {
    (
        StatusCode::NOT_FOUND,
        format!(
            "no webhook at this path; served: {}\n",
            SERVED_PATHS.join(", ")
        ),
    )
        .into_response()
}

/// The common envelope handling around one webhook's decision function.
fn handle(
    state: &AdmissionState,
    webhook: &'static str,
    headers: &HeaderMap,
    body: &[u8],
    decide: impl FnOnce(&RequestEnvelope<'_>) -> AdmissionResponse,
) -> Response {
    handle_decoded(state, webhook, headers, body, |body, started| {
        let (api_version, request) = decode_envelope(body)?;
        let response = decide(&request);
        Ok(respond(
            state,
            webhook,
            started,
            &api_version,
            &request,
            response,
        ))
    })
}

/// [`handle`] for a webhook whose object is decoded with the envelope, in one pass, as `Object`
/// (see [`review::decode_review`]). A request that does not decode that way (a malformed object,
/// an envelope we refuse) is answered by the two-pass path and `decide_raw`, whose answers say
/// what is wrong; both deciders must give the same answer to a request both can read.
fn handle_one_pass<'b, Object: serde::Deserialize<'b>>(
    state: &AdmissionState,
    webhook: &'static str,
    headers: &HeaderMap,
    body: &'b [u8],
    decide_typed: impl FnOnce(
        &mut AdmissionRequest<Object, &'b serde_json::value::RawValue>,
    ) -> AdmissionResponse,
    decide_raw: impl FnOnce(&RequestEnvelope<'_>) -> AdmissionResponse,
) -> Response {
    handle_decoded(state, webhook, headers, body, |body, started| {
        let Some((api_version, mut request)) = decode_review::<Object>(body) else {
            let (api_version, request) = decode_envelope(body)?;
            let response = decide_raw(&request);
            return Ok(respond(
                state,
                webhook,
                started,
                &api_version,
                &request,
                response,
            ));
        };
        let response = decide_typed(&mut request);
        Ok(respond(
            state,
            webhook,
            started,
            &api_version,
            &request,
            response,
        ))
    })
}

/// Checks the content type and answers a body that is no AdmissionReview with a 4xx; `answer`
/// decodes and decides the rest.
fn handle_decoded<'b>(
    state: &AdmissionState,
    webhook: &'static str,
    headers: &HeaderMap,
    body: &'b [u8],
    answer: impl FnOnce(&'b [u8], Instant) -> Result<Response, ReviewError>,
) -> Response {
    let started = Instant::now();
    if !is_json(headers) {
        return unsupported_media_type(state, webhook, started);
    }
    answer(body, started).unwrap_or_else(|e| undecodable(state, webhook, started, &e))
}

fn unsupported_media_type(
    state: &AdmissionState,
    webhook: &'static str,
    started: Instant,
) -> Response {
    state
        .metrics
        .observe_admission(webhook, "", AdmissionResult::Error, started.elapsed());
    plain_error(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "Content-Type must be application/json",
    )
}

fn undecodable(
    state: &AdmissionState,
    webhook: &'static str,
    started: Instant,
    error: &ReviewError,
) -> Response {
    tracing::debug!(webhook, %error, "undecodable admission request");
    state
        .metrics
        .observe_admission(webhook, "", AdmissionResult::Error, started.elapsed());
    plain_error(StatusCode::BAD_REQUEST, &error.to_string())
}

/// Records and encodes the answer to a decoded request.
fn respond<Object, OldObject>(
    state: &AdmissionState,
    webhook: &'static str,
    started: Instant,
    api_version: &str,
    request: &AdmissionRequest<Object, OldObject>,
    response: AdmissionResponse,
) -> Response {
    // Refusals by policy are denials whatever their code (OpenKruise answers several with 500);
    // only a webhook that could not decide counts as an error.
    let result = if response.malfunction {
        AdmissionResult::Error
    } else if !response.allowed {
        AdmissionResult::Denied
    } else if response.patch.is_some() {
        AdmissionResult::Patched
    } else {
        AdmissionResult::Allowed
    };
    if !response.allowed {
        tracing::info!(
            webhook,
            uid = %request.uid,
            operation = %request.operation,
            namespace = request.namespace.as_deref().unwrap_or(""),
            name = request.name.as_deref().unwrap_or(""),
            message = response.status.as_ref().map(|s| s.message.as_str()).unwrap_or(""),
            "admission request refused"
        );
    }
    state
        .metrics
        .observe_admission(webhook, &request.operation, result, started.elapsed());
    let mut http = encode_review(api_version, &response).into_response();
    http.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    http
}

fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|mime| mime.trim().eq_ignore_ascii_case("application/json"))
}

/// A 4xx for requests that are not AdmissionReviews; the body says why.
fn plain_error(status: StatusCode, message: &str) -> Response {
    (status, format!("{message}\n")).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;
    use axum::http::Request;
    use tower::ServiceExt;

    fn state() -> AdmissionState {
        AdmissionState {
            catalogue: crate::source::shared(crate::source::Catalogue::default()),
            metrics: Arc::new(Metrics::new()),
            sort_sidecars_by_name: false,
            deletion_reads: None,
        }
    }

    async fn status_of(path: &str) -> StatusCode {
        let request = Request::post(path)
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from("{}"))
            .unwrap();
        router(state(), false)
            .oneshot(request)
            .await
            .unwrap()
            .status()
    }

    /// The one-pass routes answer a malformed object through the two-pass path: the uid, even
    /// when it follows the object, and the field named.
    #[tokio::test]
    async fn one_pass_routes_explain_malformed_objects() {
        let body = r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",
            "request":{"kind":{"group":"","version":"v1","kind":"Pod"},"operation":"CREATE",
            "object":{"spec":{"containers":"nginx"}},"uid":"late-uid"}}"#;
        for path in [keys::PATH_MUTATE_POD, PATH_BASELINE] {
            let request = Request::post(path)
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(body))
                .unwrap();
            let response = router(state(), true).oneshot(request).await.unwrap();
            assert_eq!(response.status(), StatusCode::OK, "{path}");
            let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
                .await
                .unwrap();
            let answer: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
            assert_eq!(answer["response"]["uid"], "late-uid", "{path}");
            assert_eq!(answer["response"]["allowed"], false, "{path}");
            let message = answer["response"]["status"]["message"].as_str().unwrap();
            assert!(
                message.starts_with("request.object.spec.containers: Invalid value: invalid type: string \"nginx\", expected a sequence"),
                "{path}: {message}"
            );
        }
    }

    /// The kept text of a second is what formatting that instant gives, across seconds and
    /// within one.
    #[test]
    fn admission_time_is_the_formatted_second() {
        for (second, nanos) in [
            (1_764_000_000, 0),
            (1_764_000_000, 999_999_999),
            (1_764_000_001, 5),
            (0, 0),
            (1_764_000_000, 1),
        ] {
            let now = jiff::Timestamp::new(second, nanos).unwrap();
            assert_eq!(
                admission_time(now),
                now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
            );
        }
    }

    /// A refusal by policy counts as `denied` whatever its code, OpenKruise's 500s included; only
    /// a webhook that could not decide (here: sent a kind it does not handle) counts as `error`.
    #[tokio::test]
    async fn refusals_by_policy_are_denied_and_only_malfunctions_are_errors() {
        let fixture = |name: &str| -> serde_json::Value {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures")
                .join(name);
            serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
        };
        let mut invalid_sidecarset = fixture("sidecarset-create.json");
        invalid_sidecarset["request"]["object"]["spec"]["containers"][0]["podInjectPolicy"] =
            "Middle".into();
        let mut invalid_daemonset = fixture("daemonset-create.json");
        invalid_daemonset["request"]["object"]["spec"]["lifecycle"] =
            serde_json::json!({"inPlaceUpdate": {"labelsHandler": {"example.com/x": "y"}}});
        let mut not_a_pod = fixture("pod-web-log-agent.json");
        not_a_pod["request"]["kind"]["kind"] = "Service".into();
        let cases = [
            (
                keys::PATH_VALIDATE_SIDECARSET,
                invalid_sidecarset,
                500,
                "denied",
            ),
            (
                keys::PATH_VALIDATE_DAEMONSET,
                invalid_daemonset,
                500,
                "denied",
            ),
            (
                keys::PATH_MUTATE_POD,
                fixture("pod-bad-priority.json"),
                500,
                "denied",
            ),
            (keys::PATH_MUTATE_POD, not_a_pod, 400, "error"),
        ];
        for (path, review, code, result) in cases {
            let state = state();
            let request = Request::post(path)
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(review.to_string()))
                .unwrap();
            let response = router(state.clone(), false).oneshot(request).await.unwrap();
            let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
                .await
                .unwrap();
            let answer: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
            assert_eq!(answer["response"]["allowed"], false, "{path}: {answer}");
            assert_eq!(
                answer["response"]["status"]["code"], code,
                "{path}: {answer}"
            );
            let metrics = state.metrics.encode();
            let counted = format!(r#"result="{result}"}} 1"#);
            assert!(
                metrics
                    .lines()
                    .any(|l| l.starts_with("kruise_webhook_admission_requests_total")
                        && l.ends_with(&counted)),
                "{path}: expected {counted} in\n{metrics}"
            );
        }
    }

    /// `/convert` answers a ConversionReview with its objects converted, and counts it.
    #[tokio::test]
    async fn the_conversion_route_answers_conversion_reviews() {
        let review = serde_json::json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "request": {"uid": "c-9", "desiredAPIVersion": "apps.kruise.io/v1alpha1", "objects": [{
                "apiVersion": "apps.kruise.io/v1beta1", "kind": "DaemonSet",
                "metadata": {"name": "agent", "namespace": "kube-system"},
                "spec": {"scaleStrategy": {"partitionedScaling": true}},
                "status": {"updateRevision": "abc"}
            }]}
        });
        let state = state();
        let request = Request::post(format!("{}?timeout=30s", keys::PATH_CONVERT))
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(review.to_string()))
            .unwrap();
        let response = router(state.clone(), false).oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        let answer: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(answer["response"]["uid"], "c-9");
        let converted = &answer["response"]["convertedObjects"][0];
        assert_eq!(converted["apiVersion"], "apps.kruise.io/v1alpha1");
        assert_eq!(converted["status"]["daemonSetHash"], "abc");
        assert_eq!(
            converted["metadata"]["annotations"]["daemonset.kruise.io/progressive-create-pod"],
            "true"
        );
        let metrics = state.metrics.encode();
        assert!(
            metrics
                .lines()
                .any(|l| l.starts_with("kruise_webhook_admission_requests_total")
                    && l.contains(r#"webhook="convert""#)
                    && l.ends_with(r#"result="allowed"} 1"#)),
            "{metrics}"
        );
    }

    /// SERVED_PATHS is what the manifests are checked against and what the `certs` job keeps: it
    /// must be exactly the router (every route is checked against it as it is made, see
    /// `served`; here every path of it is routed, once).
    #[tokio::test]
    async fn served_paths_are_routed() {
        for path in SERVED_PATHS {
            // An empty object is not an AdmissionReview: 400 from the handler, not the 404 fallback.
            assert_eq!(status_of(path).await, StatusCode::BAD_REQUEST, "{path}");
        }
        let distinct: std::collections::BTreeSet<_> = SERVED_PATHS.iter().collect();
        assert_eq!(distinct.len(), SERVED_PATHS.len());
        assert_eq!(status_of("/mutate-nothing").await, StatusCode::NOT_FOUND);
        // OpenKruise v1.9.0's paths of features this project does not run.
        for path in [
            "/validate-pod",
            "/validate-policy-kruise-io-podunavailablebudget",
            "/validate-apps-kruise-io-v1alpha1-workloadspread",
            "/mutate-apps-kruise-io-broadcastjob",
            "/mutate-apps-kruise-io-v1alpha1-uniteddeployment",
        ] {
            assert_eq!(status_of(path).await, StatusCode::NOT_FOUND, "{path}");
        }
    }

    /// OpenKruise v1.9.0's spelling of the CloneSet paths answers as this project's.
    #[tokio::test]
    async fn both_spellings_of_the_cloneset_paths_answer_alike() {
        let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/cloneset-create.json");
        let review = std::fs::read(fixture).unwrap();
        let answer = |path: &'static str| {
            let review = review.clone();
            async move {
                let request = Request::post(path)
                    .header(header::CONTENT_TYPE, "application/json")
                    .body(Body::from(review))
                    .unwrap();
                let response = router(state(), false).oneshot(request).await.unwrap();
                axum::body::to_bytes(response.into_body(), usize::MAX)
                    .await
                    .unwrap()
            }
        };
        for (ours, openkruises) in [
            (keys::PATH_MUTATE_CLONESET, PATH_MUTATE_CLONESET_V1ALPHA1),
            (
                keys::PATH_VALIDATE_CLONESET,
                PATH_VALIDATE_CLONESET_V1ALPHA1,
            ),
        ] {
            let expected = answer(ours).await;
            assert!(expected.starts_with(b"{"), "{ours}");
            assert_eq!(answer(openkruises).await, expected, "{openkruises}");
        }
    }
}
