//! Prometheus metrics (OpenMetrics text) for the admission server and its certificate and SidecarSet
//! sources.
//!
//! Every label value is a `&'static str` or a small enum, so a recorded request costs two
//! read-locked hash lookups and no allocation once its label set has been seen, and a client cannot
//! grow the label space by sending odd operations. Labelled families are only encoded once they
//! have a sample (prometheus-client skips empty families).

use std::fmt::Write as _;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use prometheus_client::encoding::{EncodeLabelSet, EncodeLabelValue, LabelValueEncoder};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Registry, Unit};

pub mod controllers;
pub use controllers::ControllerMetrics;

/// Every metric name of the project starts with this (and `_`): `kruise_webhook_admission_requests_total`.
pub const PREFIX: &str = "kruise_webhook";

/// Upper bounds of the admission latency histogram. Injection is pure CPU work on one object, so
/// most answers take well under a millisecond; the top buckets catch stalls.
const ADMISSION_DURATION_BUCKETS: [f64; 12] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0,
];

/// How an admission request ended.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub enum AdmissionResult {
    /// Allowed without changes.
    Allowed,
    /// Allowed with a JSON patch.
    Patched,
    /// Refused by policy.
    Denied,
    /// The webhook could not decide (malformed review, internal failure).
    Error,
}

impl AdmissionResult {
    pub fn as_str(self) -> &'static str {
        match self {
            AdmissionResult::Allowed => "allowed",
            AdmissionResult::Patched => "patched",
            AdmissionResult::Denied => "denied",
            AdmissionResult::Error => "error",
        }
    }
}

impl EncodeLabelValue for AdmissionResult {
    fn encode(&self, encoder: &mut LabelValueEncoder) -> std::fmt::Result {
        encoder.write_str(self.as_str())
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct AdmissionLabels {
    webhook: &'static str,
    operation: &'static str,
    result: AdmissionResult,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct WebhookLabels {
    webhook: &'static str,
}

/// The kind of a watched object; the controllers watch a fixed, small set of kinds.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabels {
    kind: String,
}

/// Why the catalogue cannot serve a SidecarSet (`invalid`, `undecodable`, `revision`).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabels {
    reason: &'static str,
}

/// A SidecarSet, by name.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct SidecarSetLabels {
    sidecarset: String,
}

type HistogramFamily<L> = Family<L, Histogram, fn() -> Histogram>;

fn admission_duration_histogram() -> Histogram {
    Histogram::new(ADMISSION_DURATION_BUCKETS)
}

/// Maps the AdmissionReview operation onto a fixed set so label values stay bounded.
fn operation_label(operation: &str) -> &'static str {
    match operation {
        "CREATE" => "CREATE",
        "UPDATE" => "UPDATE",
        "DELETE" => "DELETE",
        "CONNECT" => "CONNECT",
        _ => "other",
    }
}

/// All metrics of the process, registered once; share it as `Arc<Metrics>`.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    admission_requests: Family<AdmissionLabels, Counter>,
    admission_duration: HistogramFamily<WebhookLabels>,
    certificate_not_after: Gauge,
    certificate_reloads: Counter,
    certificate_reload_failures: Counter,
    ca_bundle_mismatches: Gauge,
    sidecarsets_loaded: Gauge,
    sidecarset_load_errors: Counter,
    sidecarset_files_stale: Gauge,
    namespaces_known: Gauge,
    sidecarsets_not_served: Family<ReasonLabels, Gauge>,
    sidecarset_pods_missing_sidecars: Family<SidecarSetLabels, Gauge>,
    controller_objects_undecodable: Family<KindLabels, Counter>,
    /// The controllers' reconciles, leadership and apiserver budget.
    pub controllers: ControllerMetrics,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    pub fn new() -> Self {
        let admission_requests = Family::<AdmissionLabels, Counter>::default();
        let admission_duration =
            HistogramFamily::<WebhookLabels>::new_with_constructor(admission_duration_histogram);
        let certificate_not_after = Gauge::default();
        let certificate_reloads = Counter::default();
        let certificate_reload_failures = Counter::default();
        let ca_bundle_mismatches = Gauge::default();
        let sidecarsets_loaded = Gauge::default();
        let sidecarset_load_errors = Counter::default();
        let sidecarset_files_stale = Gauge::default();
        let namespaces_known = Gauge::default();
        let sidecarsets_not_served = Family::<ReasonLabels, Gauge>::default();
        let sidecarset_pods_missing_sidecars = Family::<SidecarSetLabels, Gauge>::default();
        let controller_objects_undecodable = Family::<KindLabels, Counter>::default();

        // prometheus-client appends `_total` to counters and the unit suffix itself, so names are
        // registered without them.
        let mut registry = Registry::with_prefix(PREFIX);
        registry.register(
            "admission_requests",
            "Admission requests answered, by webhook, operation and result",
            admission_requests.clone(),
        );
        registry.register_with_unit(
            "admission_duration",
            "Time spent answering an admission request, by webhook",
            Unit::Seconds,
            admission_duration.clone(),
        );
        registry.register_with_unit(
            "tls_certificate_not_after",
            "Expiry of the serving certificate, as a Unix timestamp",
            Unit::Seconds,
            certificate_not_after.clone(),
        );
        registry.register(
            "tls_certificate_reloads",
            "Serving certificate reloads that took effect",
            certificate_reloads.clone(),
        );
        registry.register(
            "tls_certificate_reload_failures",
            "Serving certificate reloads refused (unreadable, mismatched or expired pair)",
            certificate_reload_failures.clone(),
        );
        registry.register(
            "tls_ca_bundle_mismatches",
            "Webhooks whose caBundle does not trust the served certificate (--external-certs checks)",
            ca_bundle_mismatches.clone(),
        );
        registry.register(
            "sidecarsets_loaded",
            "SidecarSets in the current catalogue snapshot",
            sidecarsets_loaded.clone(),
        );
        registry.register(
            "sidecarset_load_errors",
            "SidecarSets skipped because they could not be decoded",
            sidecarset_load_errors.clone(),
        );
        registry.register(
            "sidecarset_files_stale",
            "SidecarSet files served from their last good version: the current one fails to load (directory mode)",
            sidecarset_files_stale.clone(),
        );
        registry.register(
            "namespaces_known",
            "Namespaces whose labels the current catalogue snapshot holds",
            namespaces_known.clone(),
        );
        registry.register(
            "sidecarsets_not_served",
            "SidecarSets in the cluster the webhooks cannot serve, by reason (invalid, undecodable, revision)",
            sidecarsets_not_served.clone(),
        );
        registry.register(
            "sidecarset_pods_missing_sidecars",
            "Pods a SidecarSet selects that lack its containers (never injected, or injected with other containers), by SidecarSet",
            sidecarset_pods_missing_sidecars.clone(),
        );
        registry.register(
            "controller_objects_undecodable",
            "Object versions a controller's watch skipped because its types refuse them, by kind",
            controller_objects_undecodable.clone(),
        );
        let controllers = ControllerMetrics::register(&mut registry);

        Metrics {
            registry,
            admission_requests,
            admission_duration,
            certificate_not_after,
            certificate_reloads,
            certificate_reload_failures,
            ca_bundle_mismatches,
            sidecarsets_loaded,
            sidecarset_load_errors,
            sidecarset_files_stale,
            namespaces_known,
            sidecarsets_not_served,
            sidecarset_pods_missing_sidecars,
            controller_objects_undecodable,
            controllers,
        }
    }

    /// Records one answered admission request. `operation` is the review's `request.operation`;
    /// anything outside CREATE/UPDATE/DELETE/CONNECT is counted as `other`.
    pub fn observe_admission(
        &self,
        webhook: &'static str,
        operation: &str,
        result: AdmissionResult,
        elapsed: Duration,
    ) {
        let labels = AdmissionLabels {
            webhook,
            operation: operation_label(operation),
            result,
        };
        self.admission_requests.get_or_create(&labels).inc();
        self.admission_duration
            .get_or_create(&WebhookLabels { webhook })
            .observe(elapsed.as_secs_f64());
    }

    /// Publishes the expiry of the certificate now being served.
    pub fn set_certificate_not_after(&self, not_after: SystemTime) {
        let seconds = match not_after.duration_since(UNIX_EPOCH) {
            Ok(since_epoch) => i64::try_from(since_epoch.as_secs()).unwrap_or(i64::MAX),
            Err(_) => 0,
        };
        self.certificate_not_after.set(seconds);
    }

    /// Records the outcome of a certificate reload: a swap counts as a reload and publishes the new
    /// expiry; an error counts as a failure (the old certificate stays in service).
    pub fn record_certificate_reload<E>(&self, outcome: Result<SystemTime, E>) {
        match outcome {
            Ok(not_after) => {
                self.certificate_reloads.inc();
                self.set_certificate_not_after(not_after);
            }
            Err(_) => {
                self.certificate_reload_failures.inc();
            }
        }
    }

    /// Publishes how many checked webhooks have a caBundle that does not trust the served certificate.
    pub fn set_ca_bundle_mismatches(&self, count: usize) {
        self.ca_bundle_mismatches
            .set(i64::try_from(count).unwrap_or(i64::MAX));
    }

    pub fn set_sidecarsets_loaded(&self, count: usize) {
        self.sidecarsets_loaded
            .set(i64::try_from(count).unwrap_or(i64::MAX));
    }

    pub fn set_sidecarset_files_stale(&self, count: usize) {
        self.sidecarset_files_stale
            .set(i64::try_from(count).unwrap_or(i64::MAX));
    }

    pub fn set_namespaces_known(&self, count: usize) {
        self.namespaces_known
            .set(i64::try_from(count).unwrap_or(i64::MAX));
    }

    pub fn record_sidecarset_load_error(&self) {
        self.sidecarset_load_errors.inc();
    }

    /// Adds the SidecarSets skipped by one load of the catalogue.
    pub fn add_sidecarset_load_errors(&self, count: usize) {
        self.sidecarset_load_errors
            .inc_by(u64::try_from(count).unwrap_or(u64::MAX));
    }

    /// Counts one object version of `kind` a controller's watch could not decode and skipped.
    /// How many SidecarSets the catalogue cannot serve for each reason: `count(reason)` for
    /// each of `reasons` (every one written, so a reason that clears reads 0).
    pub fn set_sidecarsets_not_served(
        &self,
        reasons: &[&'static str],
        count: impl Fn(&str) -> usize,
    ) {
        for &reason in reasons {
            let value = i64::try_from(count(reason)).unwrap_or(i64::MAX);
            self.sidecarsets_not_served
                .get_or_create(&ReasonLabels { reason })
                .set(value);
        }
    }

    /// How many pods `sidecarset` selects that lack its containers.
    pub fn set_pods_missing_sidecars(&self, sidecarset: &str, count: usize) {
        self.sidecarset_pods_missing_sidecars
            .get_or_create(&SidecarSetLabels {
                sidecarset: sidecarset.to_string(),
            })
            .set(i64::try_from(count).unwrap_or(i64::MAX));
    }

    /// Drops the series of a SidecarSet that is gone.
    pub fn forget_pods_missing_sidecars(&self, sidecarset: &str) {
        self.sidecarset_pods_missing_sidecars
            .remove(&SidecarSetLabels {
                sidecarset: sidecarset.to_string(),
            });
    }

    pub fn record_undecodable_object(&self, kind: &str) {
        self.controller_objects_undecodable
            .get_or_create(&KindLabels {
                kind: kind.to_string(),
            })
            .inc();
    }

    /// Renders every metric in the OpenMetrics text format (ends with `# EOF`).
    pub fn encode(&self) -> String {
        let mut text = String::with_capacity(4096);
        if let Err(error) = prometheus_client::encoding::text::encode(&mut text, &self.registry) {
            // Writing into a String cannot fail; an error means a metric refused to encode.
            tracing::warn!(%error, "encoding metrics failed");
        }
        text
    }
}

#[cfg(test)]
mod tests;
