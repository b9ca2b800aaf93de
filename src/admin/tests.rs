use super::*;
use axum::body::{Body, to_bytes};
use axum::http::Request;
use tower::ServiceExt;

async fn get_path(router: Router, path: &str) -> (StatusCode, Option<String>, String) {
    let request = Request::get(path).body(Body::empty()).unwrap();
    let response = router.oneshot(request).await.unwrap();
    let status = response.status();
    let content_type = response
        .headers()
        .get(header::CONTENT_TYPE)
        .map(|value| value.to_str().unwrap().to_owned());
    let body = to_bytes(response.into_body(), 1 << 20).await.unwrap();
    (
        status,
        content_type,
        String::from_utf8(body.to_vec()).unwrap(),
    )
}

fn router_with(readiness: Arc<Readiness>) -> Router {
    admin_router(Arc::new(Metrics::new()), readiness)
}

#[tokio::test]
async fn livez_is_always_ok() {
    let (status, _, body) = get_path(router_with(Arc::new(Readiness::new())), "/livez").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body, "ok");
}

#[tokio::test]
async fn readyz_names_each_missing_condition() {
    let readiness = Arc::new(Readiness::new());
    let router = router_with(readiness.clone());

    let (status, _, body) = get_path(router.clone(), "/readyz").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(body.contains("serving certificate not loaded"), "{body}");
    assert!(body.contains("SidecarSet catalogue not synced"), "{body}");

    readiness.set_cert_loaded(true);
    let (status, _, body) = get_path(router.clone(), "/readyz").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(!body.contains("certificate"), "{body}");
    assert!(body.contains("SidecarSet catalogue not synced"), "{body}");

    readiness.set_catalogue_loaded(true);
    let (status, _, body) = get_path(router.clone(), "/readyz").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body, "ok");
    assert!(readiness.is_ready());

    readiness.set_draining();
    let (status, _, body) = get_path(router, "/readyz").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(body.contains("shutting down"), "{body}");
}

#[tokio::test]
async fn livez_fails_once_the_controllers_stopped_for_good() {
    let readiness = Arc::new(Readiness::new());
    let router = router_with(readiness.clone());
    readiness.set_controllers_stopped("cannot subscribe to the shared pod reflector".into());
    let (status, _, body) = get_path(router, "/livez").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(
        body,
        "not alive: controllers stopped: cannot subscribe to the shared pod reflector\n"
    );
}

#[tokio::test]
async fn readyz_verbose_lists_conditions_and_the_lease() {
    let readiness = Arc::new(Readiness::new());
    readiness.set_cert_loaded(true);
    readiness.report_on(|| "lease: no election round yet".to_string(), || None);
    let router = router_with(readiness.clone());
    let (status, _, body) = get_path(router.clone(), "/readyz?verbose").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(
        body,
        "[-] SidecarSet catalogue not synced\n[+] lease: no election round yet\nnot ready\n"
    );
    readiness.set_catalogue_loaded(true);
    let (status, _, body) = get_path(router.clone(), "/readyz?verbose").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body, "[+] lease: no election round yet\nready\n");
    // Without `verbose` the answer stays the one-word body probes and scripts read.
    let (_, _, body) = get_path(router, "/readyz").await;
    assert_eq!(body, "ok");
}

#[tokio::test]
async fn metrics_are_openmetrics_text() {
    let metrics = Arc::new(Metrics::new());
    metrics.set_sidecarsets_loaded(3);
    let router = admin_router(metrics, Arc::new(Readiness::new()));

    let (status, content_type, body) = get_path(router, "/metrics").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(content_type.as_deref(), Some(OPENMETRICS_CONTENT_TYPE));
    assert!(body.contains("sidecarsets_loaded 3\n"), "{body}");
    assert!(body.ends_with("# EOF\n"));
}

#[tokio::test]
async fn unknown_paths_and_methods_are_refused() {
    let router = router_with(Arc::new(Readiness::new()));
    let (status, _, _) = get_path(router.clone(), "/nope").await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    let request = Request::post("/livez").body(Body::empty()).unwrap();
    let response = router.oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
}
