//! Leader election with a `coordination.k8s.io/v1` Lease, client-go style: the holder renews every
//! [`LeaseConfig::renew_period`]; anyone may take the lease once it has not changed for its
//! `leaseDurationSeconds`, measured by the taker's own monotonic clock from when it saw the last
//! change (client-go's `observedTime`), never by comparing the holder's `renewTime` with the
//! local wall clock, so holders whose clocks disagree neither lose a live lease nor keep a dead
//! one; a leader that cannot renew within its renew deadline (shorter than the lease) steps down
//! before others may take over.
//!
//! A replica that stepped down (its apiserver unreachable past the deadline, a conflict, a lost
//! race) goes on asking every round, as client-go's elector goes back to acquiring: it leads again
//! once the apiserver answers and nobody else took the Lease meanwhile, or follows the new holder.
//!
//! [`observe`] and [`decide`] are the whole policy; [`Elector`] only reads and writes the Lease, on
//! its own thread and runtime with its own client ([`spawn`]), so nothing the controllers do can
//! delay a renewal. What it last did is in [`LeaseHealth`], for the admin port and the metrics.

use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::api::{Api, ObjectMeta, PostParams};
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::k8s::retry::is_conflict;
use crate::metrics::controllers::ControllerMetrics;

/// Timings, client-go's defaults: 15 s lease, 10 s renew deadline, a round every 2 s.
#[derive(Debug, Clone)]
pub struct LeaseConfig {
    pub name: String,
    pub namespace: String,
    pub identity: String,
    pub lease_duration: Duration,
    /// How often the holder renews and a follower looks (client-go's retry period).
    pub renew_period: Duration,
    /// A leader that has not renewed for this long stops acting (shorter than the lease, so it
    /// stops before anyone else can start).
    pub renew_deadline: Duration,
}

impl LeaseConfig {
    pub fn new(
        name: impl Into<String>,
        namespace: impl Into<String>,
        identity: impl Into<String>,
    ) -> Self {
        LeaseConfig {
            name: name.into(),
            namespace: namespace.into(),
            identity: identity.into(),
            lease_duration: Duration::from_secs(15),
            renew_period: Duration::from_secs(2),
            renew_deadline: Duration::from_secs(10),
        }
    }
}

/// The parts of a Lease the decision reads: who holds it, and what changes with each renewal.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LeaseView {
    pub holder: Option<String>,
    /// The holder's renewTime (or acquireTime): compared only with what was seen before.
    pub renew_time: Option<Timestamp>,
    pub duration_seconds: Option<i32>,
    pub transitions: Option<i32>,
}

impl LeaseView {
    pub fn of(lease: &Lease) -> Self {
        let spec = lease.spec.as_ref();
        LeaseView {
            holder: spec
                .and_then(|s| s.holder_identity.clone())
                .filter(|h| !h.is_empty()),
            renew_time: spec
                .and_then(|s| s.renew_time.as_ref().or(s.acquire_time.as_ref()))
                .map(|t| t.0),
            duration_seconds: spec.and_then(|s| s.lease_duration_seconds),
            transitions: spec.and_then(|s| s.lease_transitions),
        }
    }
}

/// The Lease as this replica last saw it, and when (by its own monotonic clock) it saw it change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observed {
    pub lease: LeaseView,
    pub changed_at: Instant,
}

/// What this replica knows after reading `current` at `now`: the time of the last change is kept
/// while the Lease reads the same, and is `now` for a Lease that changed or was never seen.
pub fn observe(previous: Option<&Observed>, current: LeaseView, now: Instant) -> Observed {
    match previous {
        Some(seen) if seen.lease == current => seen.clone(),
        _ => Observed {
            lease: current,
            changed_at: now,
        },
    }
}

/// What to do with the Lease now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaseDecision {
    /// We hold it: write a new renewTime.
    Renew,
    /// Free or expired: take it (a new holder, acquireTime and a transition).
    Acquire,
    /// Someone else holds a lease that changed within its duration.
    Follow { holder_expires: Instant },
}

/// Whether `identity` should take, keep or leave the lease at `now`. A lease without a duration
/// is treated as having `default_duration`.
pub fn decide(
    observed: &Observed,
    identity: &str,
    now: Instant,
    default_duration: Duration,
) -> LeaseDecision {
    let lease = &observed.lease;
    let Some(holder) = lease.holder.as_deref() else {
        return LeaseDecision::Acquire;
    };
    if holder == identity {
        return LeaseDecision::Renew;
    }
    let duration = lease
        .duration_seconds
        .and_then(|s| u64::try_from(s).ok())
        .filter(|s| *s > 0)
        .map_or(default_duration, Duration::from_secs);
    let expires = observed.changed_at + duration;
    if now > expires {
        LeaseDecision::Acquire
    } else {
        LeaseDecision::Follow {
            holder_expires: expires,
        }
    }
}

/// The Lease after `decision` by `identity` (`None` for [`LeaseDecision::Follow`]); `now` is
/// this replica's wall clock, which others only compare with what they saw before.
pub fn next_lease(
    current: &Lease,
    decision: LeaseDecision,
    config: &LeaseConfig,
    now: Timestamp,
) -> Option<Lease> {
    let mut next = current.clone();
    let spec = next.spec.get_or_insert_with(LeaseSpec::default);
    let duration = i32::try_from(config.lease_duration.as_secs()).unwrap_or(i32::MAX);
    match decision {
        LeaseDecision::Follow { .. } => return None,
        LeaseDecision::Renew => {
            spec.renew_time = Some(MicroTime(now));
            spec.lease_duration_seconds = Some(duration);
        }
        LeaseDecision::Acquire => {
            spec.holder_identity = Some(config.identity.clone());
            spec.acquire_time = Some(MicroTime(now));
            spec.renew_time = Some(MicroTime(now));
            spec.lease_duration_seconds = Some(duration);
            spec.lease_transitions = Some(spec.lease_transitions.unwrap_or(0).saturating_add(1));
        }
    }
    Some(next)
}

/// Whether this replica leads at `now`: it renewed the Lease less than the renew deadline ago.
pub fn leads(last_renewal: Option<Instant>, now: Instant, renew_deadline: Duration) -> bool {
    last_renewal.is_some_and(|at| now.saturating_duration_since(at) < renew_deadline)
}

/// The renewal that still counts at `now`: none once the renew deadline has passed. A replica
/// past its deadline has stepped down, and its next round must ask the apiserver afresh with a
/// whole round's time, not inherit a deadline that is already over.
pub fn current_renewal(
    last_renewal: Option<Instant>,
    now: Instant,
    renew_deadline: Duration,
) -> Option<Instant> {
    last_renewal.filter(|_| leads(last_renewal, now, renew_deadline))
}

/// When the round that starts at `started` must end: at the next round, or at the renew deadline
/// of a current renewal if that comes first. Never before `started` for a current renewal.
pub fn round_end(started: Instant, last_renewal: Option<Instant>, config: &LeaseConfig) -> Instant {
    let next_round = started + config.renew_period;
    match current_renewal(last_renewal, started, config.renew_deadline) {
        Some(at) => next_round.min(at + config.renew_deadline),
        None => next_round,
    }
}

/// How one election round ended, as counted in `controller_lease_rounds_total{outcome}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoundOutcome {
    /// This replica led and renewed.
    Renewed,
    /// This replica did not lead and now does.
    Acquired,
    /// Another replica holds the Lease (or won the race for it).
    Followed,
    /// The apiserver refused, failed or did not answer in time.
    Failed,
}

impl RoundOutcome {
    pub fn label(self) -> &'static str {
        match self {
            RoundOutcome::Renewed => "renewed",
            RoundOutcome::Acquired => "acquired",
            RoundOutcome::Followed => "followed",
            RoundOutcome::Failed => "failed",
        }
    }
}

/// What the election last did, for `/readyz?verbose`, `/livez` and the metrics. Written by the
/// election thread after every round, read by the admin port without waiting on the election.
#[derive(Debug, Default)]
pub struct LeaseHealth {
    state: std::sync::Mutex<LeaseHealthState>,
}

#[derive(Debug, Default, Clone)]
struct LeaseHealthState {
    started: Option<std::time::Instant>,
    leading: bool,
    last_renewal: Option<std::time::Instant>,
    last_round: Option<std::time::Instant>,
    holder: Option<String>,
    last_error: Option<String>,
}

/// An election round older than this means the election itself has stopped (its thread is gone
/// or blocked): rounds end every renew period, answered or not.
pub const ELECTION_STALLED_AFTER: Duration = Duration::from_secs(60);

impl LeaseHealth {
    pub fn new() -> Self {
        Self::default()
    }

    fn update(&self, change: impl FnOnce(&mut LeaseHealthState)) {
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        change(&mut state);
    }

    fn read(&self) -> LeaseHealthState {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    fn started(&self, now: std::time::Instant) {
        self.update(|s| s.started = Some(now));
    }

    fn round(
        &self,
        now: std::time::Instant,
        leading: bool,
        renewed: bool,
        holder: Option<String>,
        error: Option<String>,
    ) {
        self.update(|s| {
            s.leading = leading;
            s.last_round = Some(now);
            if renewed {
                s.last_renewal = Some(now);
            }
            if error.is_none() {
                s.holder = holder;
            }
            s.last_error = error;
        });
    }

    fn stepped_down(&self) {
        self.update(|s| s.leading = false);
    }

    /// One line on the election for `/readyz?verbose`: whether this replica leads, how recent its
    /// last renewal is, who holds the Lease otherwise, and the last round's failure.
    pub fn describe(&self, now: std::time::Instant) -> String {
        let state = self.read();
        let ago = |at: std::time::Instant| {
            format!(
                "{:.1} s ago",
                now.saturating_duration_since(at).as_secs_f64()
            )
        };
        let Some(last_round) = state.last_round else {
            return "lease: no election round yet".to_string();
        };
        let renewal = state.last_renewal.map_or_else(
            || "never renewed".to_string(),
            |at| format!("last renewal {}", ago(at)),
        );
        if state.leading {
            return format!("lease: leading, {renewal}");
        }
        match (&state.last_error, &state.holder) {
            (Some(error), _) => format!(
                "lease: not leading, {renewal}; last round failed {}: {error}",
                ago(last_round)
            ),
            (None, Some(holder)) => format!(
                "lease: not leading, held by {holder} (seen {}); {renewal}",
                ago(last_round)
            ),
            (None, None) => format!("lease: not leading, {renewal}"),
        }
    }

    /// Why the election is not alive, for `/livez`: no round ended within
    /// [`ELECTION_STALLED_AFTER`] (or none since the election started that long ago).
    pub fn stalled(&self, now: std::time::Instant) -> Option<String> {
        let state = self.read();
        let since = state.last_round.or(state.started)?;
        let idle = now.saturating_duration_since(since);
        (idle > ELECTION_STALLED_AFTER).then(|| {
            format!(
                "leader election stalled: no round for {:.0} s",
                idle.as_secs_f64()
            )
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LeaseError {
    #[error("lease {namespace}/{name}: {source}")]
    Api {
        namespace: String,
        name: String,
        source: kube::Error,
    },
    #[error("lease {namespace}/{name}: no answer within {waited:?}")]
    TimedOut {
        namespace: String,
        name: String,
        waited: Duration,
    },
}

/// Reads and writes the Lease; remembers what it saw last.
pub struct Elector {
    api: Api<Lease>,
    config: LeaseConfig,
    observed: Option<Observed>,
    health: Arc<LeaseHealth>,
    metrics: Option<ControllerMetrics>,
}

impl Elector {
    pub fn new(client: kube::Client, config: LeaseConfig) -> Self {
        Elector {
            api: Api::namespaced(client, &config.namespace),
            config,
            observed: None,
            health: Arc::new(LeaseHealth::new()),
            metrics: None,
        }
    }

    /// Reports every round to `health` and to `metrics`.
    pub fn reporting(mut self, health: Arc<LeaseHealth>, metrics: ControllerMetrics) -> Self {
        self.health = health;
        self.metrics = Some(metrics);
        self
    }

    /// Records one round: its outcome, and what the Lease looked like.
    fn report(&self, outcome: RoundOutcome, leading: bool, error: Option<String>) {
        let now = std::time::Instant::now();
        let holder = self.observed.as_ref().and_then(|o| o.lease.holder.clone());
        let renewed = matches!(outcome, RoundOutcome::Renewed | RoundOutcome::Acquired);
        self.health.round(now, leading, renewed, holder, error);
        if let Some(metrics) = &self.metrics {
            metrics.observe_lease_round(outcome.label());
            if renewed {
                metrics.set_lease_renewed_now();
            }
        }
    }

    /// Runs the election until `shutdown`, publishing leadership on `leading`, and releases the
    /// lease on the way out if held. Leadership goes false as soon as the renew deadline passes
    /// without a renewal, even while a request to the apiserver hangs; the rounds go on, so the
    /// replica leads again once the apiserver answers and the Lease is still, or again, free for it.
    pub async fn run(mut self, leading: watch::Sender<bool>, shutdown: CancellationToken) {
        let mut last_renewal: Option<Instant> = None;
        self.health.started(std::time::Instant::now());
        let publish = |is_leader: bool| {
            leading.send_if_modified(|current| {
                let changed = *current != is_leader;
                *current = is_leader;
                changed
            });
        };
        loop {
            let started = Instant::now();
            let next_round = started + self.config.renew_period;
            // A round may take until the next one is due, or until the deadline, if sooner.
            let round_ends = round_end(started, last_renewal, &self.config);
            let round = tokio::select! {
                () = shutdown.cancelled() => break,
                round = tokio::time::timeout_at(round_ends, self.try_once()) => round,
            };
            let was_leading = *leading.borrow();
            let (outcome, error) = match round {
                Ok(Ok(true)) => {
                    last_renewal = Some(Instant::now());
                    let outcome = if was_leading {
                        RoundOutcome::Renewed
                    } else {
                        RoundOutcome::Acquired
                    };
                    (outcome, None)
                }
                Ok(Ok(false)) => {
                    last_renewal = None;
                    (RoundOutcome::Followed, None)
                }
                Ok(Err(error)) => (RoundOutcome::Failed, Some(error)),
                Err(_) => (
                    RoundOutcome::Failed,
                    Some(self.timed_out(round_ends - started)),
                ),
            };
            if let Some(error) = &error {
                tracing::warn!(%error, "lease round failed");
            }
            let now = Instant::now();
            last_renewal = current_renewal(last_renewal, now, self.config.renew_deadline);
            let is_leader = last_renewal.is_some();
            publish(is_leader);
            self.report(outcome, is_leader, error.map(|e| e.to_string()));
            // Wait for the next round; a leader that reaches its deadline meanwhile steps down at
            // once.
            loop {
                let wake = match last_renewal {
                    Some(at) => next_round.min(at + self.config.renew_deadline),
                    None => next_round,
                };
                tokio::select! {
                    () = shutdown.cancelled() => break,
                    () = tokio::time::sleep_until(wake) => {}
                }
                let now = Instant::now();
                last_renewal = current_renewal(last_renewal, now, self.config.renew_deadline);
                if last_renewal.is_none() && *leading.borrow() {
                    tracing::warn!(
                        identity = self.config.identity,
                        deadline = ?self.config.renew_deadline,
                        "no renewal within the renew deadline: stepping down, still trying to renew"
                    );
                    self.health.stepped_down();
                }
                publish(last_renewal.is_some());
                if now >= next_round {
                    break;
                }
            }
            if shutdown.is_cancelled() {
                break;
            }
        }
        let was_leader = *leading.borrow();
        leading.send_replace(false);
        if was_leader {
            match tokio::time::timeout(self.config.renew_period, self.release()).await {
                Ok(Ok(())) => {}
                Ok(Err(error)) => {
                    tracing::warn!(%error, "releasing the lease failed; it expires on its own");
                }
                Err(_) => tracing::warn!("releasing the lease timed out; it expires on its own"),
            }
        }
    }

    fn error(&self, source: kube::Error) -> LeaseError {
        LeaseError::Api {
            namespace: self.config.namespace.clone(),
            name: self.config.name.clone(),
            source,
        }
    }

    fn timed_out(&self, waited: Duration) -> LeaseError {
        LeaseError::TimedOut {
            namespace: self.config.namespace.clone(),
            name: self.config.name.clone(),
            waited,
        }
    }

    /// One read-decide-write round. `Ok(true)`: we hold the lease now.
    pub async fn try_once(&mut self) -> Result<bool, LeaseError> {
        let current = match self.api.get_opt(&self.config.name).await {
            Ok(Some(lease)) => lease,
            Ok(None) => return self.create().await,
            Err(source) => return Err(self.error(source)),
        };
        let now = Instant::now();
        let observed = observe(self.observed.as_ref(), LeaseView::of(&current), now);
        let decision = decide(
            &observed,
            &self.config.identity,
            now,
            self.config.lease_duration,
        );
        self.observed = Some(observed);
        let Some(lease) = next_lease(&current, decision, &self.config, Timestamp::now()) else {
            return Ok(false);
        };
        // The resourceVersion read above makes this a compare-and-swap.
        match self
            .api
            .replace(&self.config.name, &PostParams::default(), &lease)
            .await
        {
            Ok(written) => {
                self.observed = Some(observe(None, LeaseView::of(&written), Instant::now()));
                Ok(true)
            }
            Err(error) if is_conflict(&error) => Ok(false),
            Err(source) => Err(self.error(source)),
        }
    }

    /// Creates the Lease held by this replica.
    async fn create(&mut self) -> Result<bool, LeaseError> {
        let empty = Lease {
            metadata: ObjectMeta {
                name: Some(self.config.name.clone()),
                namespace: Some(self.config.namespace.clone()),
                ..Default::default()
            },
            spec: Some(LeaseSpec::default()),
        };
        let Some(lease) = next_lease(
            &empty,
            LeaseDecision::Acquire,
            &self.config,
            Timestamp::now(),
        ) else {
            return Ok(false);
        };
        match self.api.create(&PostParams::default(), &lease).await {
            Ok(_) => Ok(true),
            // Another replica wrote first: it holds the lease; the next round reads it.
            Err(error) if is_conflict(&error) => Ok(false),
            Err(source) => Err(self.error(source)),
        }
    }

    /// Hands the lease back so a successor does not wait for it to expire.
    async fn release(&self) -> Result<(), LeaseError> {
        let Some(mut lease) = self
            .api
            .get_opt(&self.config.name)
            .await
            .map_err(|e| self.error(e))?
        else {
            return Ok(());
        };
        let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
        if spec.holder_identity.as_deref() != Some(self.config.identity.as_str()) {
            return Ok(());
        }
        spec.holder_identity = None;
        spec.lease_duration_seconds = Some(1);
        spec.renew_time = Some(MicroTime(Timestamp::now()));
        self.api
            .replace(&self.config.name, &PostParams::default(), &lease)
            .await
            .map_err(|e| self.error(e))?;
        Ok(())
    }
}

/// The election, running on a thread of its own.
pub struct ElectionThread {
    /// Whether this replica leads.
    pub leading: watch::Receiver<bool>,
    stop: CancellationToken,
    done: tokio::sync::oneshot::Receiver<()>,
}

impl ElectionThread {
    /// Stops the election, releasing the Lease if held, and waits until it has.
    pub async fn stop(self) {
        self.stop.cancel();
        let _ = self.done.await;
    }
}

/// Starts the election on its own thread with a single-threaded runtime, and there its own client
/// from `client` (kube's client must be built on the runtime that drives it): a controller or a
/// catalogue rebuild busy on the process's workers cannot delay a renewal.
pub fn spawn(
    client: impl FnOnce() -> Result<kube::Client, String> + Send + 'static,
    config: LeaseConfig,
    health: Arc<LeaseHealth>,
    metrics: ControllerMetrics,
) -> std::io::Result<ElectionThread> {
    let (leading_tx, leading) = watch::channel(false);
    let stop = CancellationToken::new();
    let (done_tx, done) = tokio::sync::oneshot::channel();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let stop_thread = stop.clone();
    std::thread::Builder::new()
        .name("lease".into())
        .spawn(move || {
            runtime.block_on(async move {
                match client() {
                    Ok(client) => {
                        Elector::new(client, config)
                            .reporting(health, metrics)
                            .run(leading_tx, stop_thread)
                            .await
                    }
                    Err(error) => tracing::error!(%error, "no client for leader election"),
                }
            });
            let _ = done_tx.send(());
        })?;
    Ok(ElectionThread {
        leading,
        stop,
        done,
    })
}

/// This replica's identity: the pod name (`POD_NAME`, else `HOSTNAME`) plus a random suffix, so
/// a restarted process never mistakes its predecessor's lease for its own.
pub fn default_identity() -> String {
    let base = std::env::var("POD_NAME")
        .or_else(|_| std::env::var("HOSTNAME"))
        .unwrap_or_else(|_| "kruise-webhook".into());
    let suffix: String = (0..6).map(|_| fastrand::alphanumeric()).collect();
    format!("{base}_{}", suffix.to_ascii_lowercase())
}

#[cfg(test)]
mod tests;
