//! The plain-HTTP admin port: `/livez`, `/readyz` and `/metrics`.
//!
//! Kept apart from the TLS admission port so probes and scrapes need no certificate and cannot be
//! starved by admission traffic.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::metrics::Metrics;

const OPENMETRICS_CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// What `/readyz` waits for. The process is ready only once a serving certificate is loaded and the
/// SidecarSet catalogue has synced, and stops being ready as soon as it starts draining, so the
/// endpoint is removed from the Service before the listener closes.
#[derive(Debug, Default)]
pub struct Readiness {
    cert_loaded: AtomicBool,
    catalogue_loaded: AtomicBool,
    draining: AtomicBool,
}

impl Readiness {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn set_cert_loaded(&self, loaded: bool) {
        self.cert_loaded.store(loaded, Ordering::Release);
    }

    pub fn set_catalogue_loaded(&self, loaded: bool) {
        self.catalogue_loaded.store(loaded, Ordering::Release);
    }

    /// Marks the process as shutting down; `/readyz` answers 503 from now on.
    pub fn set_draining(&self) {
        self.draining.store(true, Ordering::Release);
    }

    pub fn is_ready(&self) -> bool {
        self.unmet_conditions().is_empty()
    }

    /// Human-readable reasons the process is not ready; empty when ready.
    pub fn unmet_conditions(&self) -> Vec<&'static str> {
        let mut unmet = Vec::new();
        if self.draining.load(Ordering::Acquire) {
            unmet.push("shutting down");
        }
        if !self.cert_loaded.load(Ordering::Acquire) {
            unmet.push("serving certificate not loaded");
        }
        if !self.catalogue_loaded.load(Ordering::Acquire) {
            unmet.push("SidecarSet catalogue not synced");
        }
        unmet
    }
}

/// What an admin port reports: the metrics text and why the process is not ready.
#[derive(Clone)]
pub struct Probes {
    pub metrics: Arc<dyn Fn() -> String + Send + Sync>,
    pub unmet_conditions: Arc<dyn Fn() -> Vec<&'static str> + Send + Sync>,
}

/// Router for the admin port. Unknown paths get 404, other methods 405 (axum defaults).
pub fn admin_router(metrics: Arc<Metrics>, readiness: Arc<Readiness>) -> Router {
    probe_router(Probes {
        metrics: Arc::new(move || metrics.encode()),
        unmet_conditions: Arc::new(move || readiness.unmet_conditions()),
    })
}

/// `/livez`, `/readyz` and `/metrics` over `probes` (the serving process's, the node agent's).
pub fn probe_router(probes: Probes) -> Router {
    Router::new()
        .route("/livez", get(livez))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics_text))
        .with_state(probes)
}

async fn livez() -> &'static str {
    "ok"
}

async fn readyz(State(probes): State<Probes>) -> Response {
    let unmet = (probes.unmet_conditions)();
    if unmet.is_empty() {
        (StatusCode::OK, "ok").into_response()
    } else {
        let body = format!("not ready: {}\n", unmet.join(", "));
        (StatusCode::SERVICE_UNAVAILABLE, body).into_response()
    }
}

async fn metrics_text(State(probes): State<Probes>) -> Response {
    (
        [(header::CONTENT_TYPE, OPENMETRICS_CONTENT_TYPE)],
        (probes.metrics)(),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
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
}
