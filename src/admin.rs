//! The plain-HTTP admin port: `/livez`, `/readyz` and `/metrics`.
//!
//! Kept apart from the TLS admission port so probes and scrapes need no certificate and cannot be
//! starved by admission traffic.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

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
///
/// Leadership never makes a replica unready (every replica serves the webhooks), but
/// `/readyz?verbose` says whether this one leads and how recent its last renewal is; and `/livez`
/// fails once the controllers or the election have stopped for good while the process lives on,
/// so the kubelet restarts it instead of leaving a replica that never leads again.
#[derive(Debug, Default)]
pub struct Readiness {
    cert_loaded: AtomicBool,
    catalogue_loaded: AtomicBool,
    draining: AtomicBool,
    parts: Mutex<Vec<Part>>,
    controllers_stopped: Mutex<Option<String>>,
}

/// A part of the process that reports on itself (the leader election): a line for
/// `/readyz?verbose`, and why the process should be restarted, if it should.
#[derive(Clone)]
struct Part {
    describe: Arc<dyn Fn() -> String + Send + Sync>,
    failure: Arc<dyn Fn() -> Option<String> + Send + Sync>,
}

impl std::fmt::Debug for Part {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str((self.describe)().as_str())
    }
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

    /// A part whose `describe` line `/readyz?verbose` shows and whose `failure` fails `/livez`
    /// (the leader election: whether this replica leads, and whether the election has stalled).
    pub fn report_on(
        &self,
        describe: impl Fn() -> String + Send + Sync + 'static,
        failure: impl Fn() -> Option<String> + Send + Sync + 'static,
    ) {
        self.parts().push(Part {
            describe: Arc::new(describe),
            failure: Arc::new(failure),
        });
    }

    fn parts(&self) -> std::sync::MutexGuard<'_, Vec<Part>> {
        self.parts
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The controllers ended with `error` and will not run again in this process.
    pub fn set_controllers_stopped(&self, error: String) {
        *self
            .controllers_stopped
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(error);
    }

    /// Why the process should be restarted; empty while it is alive.
    pub fn liveness_failures(&self) -> Vec<String> {
        let mut failures = Vec::new();
        if let Some(error) = self
            .controllers_stopped
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .as_ref()
        {
            failures.push(format!("controllers stopped: {error}"));
        }
        let parts = self.parts().clone();
        failures.extend(parts.iter().filter_map(|part| (part.failure)()));
        failures
    }

    /// What `/readyz?verbose` adds beside the conditions: a line from each part.
    pub fn details(&self) -> Vec<String> {
        let parts = self.parts().clone();
        parts.iter().map(|part| (part.describe)()).collect()
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

type Lines<T> = Arc<dyn Fn() -> Vec<T> + Send + Sync>;

/// What an admin port reports: the metrics text, why the process is not ready, why it should be
/// restarted, and what `/readyz?verbose` shows beside the conditions.
#[derive(Clone)]
pub struct Probes {
    pub metrics: Arc<dyn Fn() -> String + Send + Sync>,
    pub unmet_conditions: Lines<&'static str>,
    pub liveness_failures: Lines<String>,
    pub details: Lines<String>,
}

impl Probes {
    /// Probes whose liveness is the process answering, with no details.
    pub fn new(
        metrics: Arc<dyn Fn() -> String + Send + Sync>,
        unmet_conditions: Lines<&'static str>,
    ) -> Self {
        Probes {
            metrics,
            unmet_conditions,
            liveness_failures: Arc::new(Vec::new),
            details: Arc::new(Vec::new),
        }
    }
}

/// Router for the admin port. Unknown paths get 404, other methods 405 (axum defaults).
pub fn admin_router(metrics: Arc<Metrics>, readiness: Arc<Readiness>) -> Router {
    let (live, details) = (readiness.clone(), readiness.clone());
    probe_router(Probes {
        metrics: Arc::new(move || metrics.encode()),
        unmet_conditions: Arc::new(move || readiness.unmet_conditions()),
        liveness_failures: Arc::new(move || live.liveness_failures()),
        details: Arc::new(move || details.details()),
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

async fn livez(State(probes): State<Probes>) -> Response {
    let failures = (probes.liveness_failures)();
    if failures.is_empty() {
        (StatusCode::OK, "ok").into_response()
    } else {
        let body = format!("not alive: {}\n", failures.join(", "));
        (StatusCode::SERVICE_UNAVAILABLE, body).into_response()
    }
}

/// `?verbose` (as the kube-apiserver's `/readyz?verbose`): one line per condition and detail.
#[derive(Debug, Default, serde::Deserialize)]
struct ReadyzQuery {
    verbose: Option<String>,
}

async fn readyz(
    State(probes): State<Probes>,
    axum::extract::Query(query): axum::extract::Query<ReadyzQuery>,
) -> Response {
    let unmet = (probes.unmet_conditions)();
    let status = if unmet.is_empty() {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    let body = if query.verbose.is_some() {
        let mut lines: Vec<String> = unmet.iter().map(|u| format!("[-] {u}")).collect();
        lines.extend((probes.details)().into_iter().map(|d| format!("[+] {d}")));
        lines.push(if unmet.is_empty() {
            "ready".to_string()
        } else {
            "not ready".to_string()
        });
        lines.join("\n") + "\n"
    } else if unmet.is_empty() {
        "ok".to_string()
    } else {
        format!("not ready: {}\n", unmet.join(", "))
    };
    (status, body).into_response()
}

async fn metrics_text(State(probes): State<Probes>) -> Response {
    (
        [(header::CONTENT_TYPE, OPENMETRICS_CONTENT_TYPE)],
        (probes.metrics)(),
    )
        .into_response()
}

#[cfg(test)]
mod tests;
