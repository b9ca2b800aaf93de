//! What the controllers (and the node agent, which is one) export: reconciles by controller,
//! their errors and duration, whether this replica leads, expectation timeouts, and what the
//! shared apiserver budget makes requests wait.
//!
//! Registered into a process's registry by [`ControllerMetrics::register`]; the serving process
//! and `controller` share [`super::Metrics`]'s registry, the node agent has its own.

use std::sync::atomic::AtomicU64;
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Registry, Unit};

/// Reconciles take from a millisecond (nothing to do) to tens of seconds (a rate-limited round
/// over many pods).
const RECONCILE_BUCKETS: [f64; 12] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0, 30.0,
];
/// A request's wait for the shared budget: none while under the rate, seconds in a relist burst.
const WAIT_BUCKETS: [f64; 9] = [0.0001, 0.001, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 30.0];

/// The controller, by the component name its events carry (`cloneset-controller`, …).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ControllerLabels {
    controller: &'static str,
}

/// A failed reconcile: its controller and why (`api_409`, `plan`, …).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct FailureLabels {
    controller: &'static str,
    reason: String,
}

type HistogramFamily = Family<ControllerLabels, Histogram, fn() -> Histogram>;

fn reconcile_histogram() -> Histogram {
    Histogram::new(RECONCILE_BUCKETS)
}

/// The controllers' metrics; cheap to clone (every metric is a shared handle).
#[derive(Debug, Clone)]
pub struct ControllerMetrics {
    reconciles: Family<ControllerLabels, Counter>,
    reconcile_errors: Family<ControllerLabels, Counter>,
    reconcile_duration: HistogramFamily,
    reconciles_in_flight: Family<ControllerLabels, Gauge>,
    expectation_timeouts: Family<ControllerLabels, Counter>,
    leading: Gauge,
    lease_rounds: Family<OutcomeLabels, Counter>,
    lease_renewed: Gauge<f64, AtomicU64>,
    api_wait: Histogram,
    reconcile_failures: Family<FailureLabels, Counter>,
}

/// How a leader-election round ended (`renewed`, `acquired`, `followed`, `failed`).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: &'static str,
}

impl Default for ControllerMetrics {
    fn default() -> Self {
        ControllerMetrics {
            reconciles: Family::default(),
            reconcile_errors: Family::default(),
            reconcile_duration: HistogramFamily::new_with_constructor(reconcile_histogram),
            reconciles_in_flight: Family::default(),
            expectation_timeouts: Family::default(),
            leading: Gauge::default(),
            lease_rounds: Family::default(),
            lease_renewed: Gauge::default(),
            api_wait: Histogram::new(WAIT_BUCKETS),
            reconcile_failures: Family::default(),
        }
    }
}

impl ControllerMetrics {
    /// New metrics, registered in `registry` (names without the registry's prefix).
    pub fn register(registry: &mut Registry) -> Self {
        let metrics = ControllerMetrics::default();
        registry.register(
            "controller_reconciles",
            "Reconciles finished, by controller (errors included)",
            metrics.reconciles.clone(),
        );
        registry.register(
            "controller_reconcile_errors",
            "Reconciles that ended in an error (retried after a delay), by controller",
            metrics.reconcile_errors.clone(),
        );
        registry.register_with_unit(
            "controller_reconcile_duration",
            "Time one reconcile took, by controller",
            Unit::Seconds,
            metrics.reconcile_duration.clone(),
        );
        registry.register(
            "controller_reconciles_in_flight",
            "Reconciles running now, by controller (at most --concurrent-reconciles each)",
            metrics.reconciles_in_flight.clone(),
        );
        registry.register(
            "controller_expectation_timeouts",
            "Times a controller stopped waiting for the cache to show its own writes (5 minutes), by controller",
            metrics.expectation_timeouts.clone(),
        );
        registry.register(
            "controller_leading",
            "1 while this replica holds the Lease and runs the controllers",
            metrics.leading.clone(),
        );
        registry.register(
            "controller_lease_rounds",
            "Leader-election rounds, by outcome: renewed, acquired, followed (another replica holds the Lease), failed (refused or no answer within the round)",
            metrics.lease_rounds.clone(),
        );
        registry.register_with_unit(
            "controller_lease_last_renewal_timestamp",
            "When this replica last renewed or acquired the Lease, in seconds since the epoch (0: never)",
            Unit::Seconds,
            metrics.lease_renewed.clone(),
        );
        registry.register_with_unit(
            "controller_api_wait",
            "Time a controller request waited for the shared client-side rate limit and in-flight bound",
            Unit::Seconds,
            metrics.api_wait.clone(),
        );
        registry.register(
            "controller_reconcile_failures",
            "Workload reconciles that ended in an error, by controller and reason",
            metrics.reconcile_failures.clone(),
        );
        metrics
    }

    /// Counts a reconcile of `controller` as running until the returned guard is dropped (when
    /// it finishes or is cancelled).
    pub fn reconcile_started(&self, controller: &'static str) -> InFlight {
        let gauge = self
            .reconciles_in_flight
            .get_or_create(&ControllerLabels { controller })
            .clone();
        gauge.inc();
        InFlight(gauge)
    }

    /// Counts one finished reconcile of `controller`.
    pub fn observe_reconcile(&self, controller: &'static str, ok: bool, elapsed: Duration) {
        let labels = ControllerLabels { controller };
        self.reconciles.get_or_create(&labels).inc();
        if !ok {
            self.reconcile_errors.get_or_create(&labels).inc();
        }
        self.reconcile_duration
            .get_or_create(&labels)
            .observe(elapsed.as_secs_f64());
    }

    /// The counter of `controller`'s expectation timeouts.
    pub fn expectation_timeouts(&self, controller: &'static str) -> Counter {
        self.expectation_timeouts
            .get_or_create(&ControllerLabels { controller })
            .clone()
    }

    pub fn set_leading(&self, leading: bool) {
        self.leading.set(i64::from(leading));
    }

    /// Counts one leader-election round by how it ended.
    pub fn observe_lease_round(&self, outcome: &'static str) {
        self.lease_rounds
            .get_or_create(&OutcomeLabels { outcome })
            .inc();
    }

    /// Records that this replica renewed (or acquired) the Lease now.
    pub fn set_lease_renewed_now(&self) {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        self.lease_renewed.set(now);
    }

    /// Counts a workload reconcile of `controller` that ended in an error of `reason`.
    pub fn reconcile_failed(&self, controller: &'static str, reason: &str) {
        self.reconcile_failures
            .get_or_create(&FailureLabels {
                controller,
                reason: reason.to_string(),
            })
            .inc();
    }

    /// Records how long one request waited for the shared budget.
    pub fn observe_api_wait(&self, waited: Duration) {
        self.api_wait.observe(waited.as_secs_f64());
    }
}

/// A running reconcile, counted in `controller_reconciles_in_flight` while it lives.
#[derive(Debug)]
pub struct InFlight(Gauge);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.dec();
    }
}

#[cfg(test)]
impl ControllerMetrics {
    /// Reconciles of `controller` counted so far.
    pub fn reconciles(&self, controller: &'static str) -> u64 {
        self.reconciles
            .get_or_create(&ControllerLabels { controller })
            .get()
    }

    /// Reconcile errors of `controller` counted so far.
    pub fn reconcile_errors(&self, controller: &'static str) -> u64 {
        self.reconcile_errors
            .get_or_create(&ControllerLabels { controller })
            .get()
    }
}

#[cfg(test)]
mod tests;
