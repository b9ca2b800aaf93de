//! How every controller of the process runs: the one thing a controller's `run` calls.
//!
//! - **One apiserver budget for all controllers** ([`ApiBudget`]): a token bucket (`--kube-api-qps`
//!   with `--kube-api-burst`, client-go's model) and a bound on requests waiting for their answer
//!   ([`MAX_IN_FLIGHT`]), applied as a tower layer under the kube client every controller gets
//!   from [`Term::client`]. kube's client speaks HTTP/1.1 (one connection per request in flight,
//!   idle ones pooled), so the in-flight bound is also the bound on the controllers' connections.
//!   Requests queue in order for both; a relist that wakes every object is paced, never a
//!   stampede.
//! - **A bounded number of reconciles per controller** (`--concurrent-reconciles`).
//! - **One leadership term** ([`Term`]): the budgeted client refuses every request once the term
//!   ends, so nothing a controller left running can write after the Lease is lost; in-flight
//!   reconciles get [`STOP_GRACE`] to finish, then they are cancelled.
//! - **Per-controller identity**: events carry the component Kruise uses for that controller
//!   (`cloneset-controller`, …), and the reconcile metrics the same name.

use std::fmt::Debug;
use std::future::Future;
use std::hash::Hash;
use std::num::NonZeroU32;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::{Duration, Instant};

use futures::StreamExt;
use futures::future::BoxFuture;
use governor::clock::Clock;
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use hyper::Request;
use kube::Resource;
use kube::runtime::controller::{self, Action, Controller};
use kube::runtime::events::Reporter;

use super::events::EventRecorder;
use serde::de::DeserializeOwned;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::{CancellationToken, PollSemaphore, WaitForCancellationFutureOwned};
use tower::{BoxError, Layer, Service};

use crate::cli::{
    ControllerLimitArgs, DEFAULT_CONCURRENT_RECONCILES, DEFAULT_KUBE_API_BURST,
    DEFAULT_KUBE_API_QPS,
};
use crate::metrics::ControllerMetrics;

/// Controller requests waiting for their answer at once (so, with HTTP/1.1, connections).
pub const MAX_IN_FLIGHT: usize = 64;
/// After the term ends, how long in-flight reconciles may run on before they are cancelled.
pub const STOP_GRACE: Duration = Duration::from_secs(3);

/// How much the controllers may ask of the apiserver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApiLimits {
    pub qps: NonZeroU32,
    pub burst: NonZeroU32,
    pub max_in_flight: usize,
    pub concurrent_reconciles: u16,
}

impl Default for ApiLimits {
    fn default() -> Self {
        ApiLimits::from(&ControllerLimitArgs {
            kube_api_qps: DEFAULT_KUBE_API_QPS,
            kube_api_burst: DEFAULT_KUBE_API_BURST,
            concurrent_reconciles: DEFAULT_CONCURRENT_RECONCILES,
        })
    }
}

impl From<&ControllerLimitArgs> for ApiLimits {
    /// The flags' limits; a zero (the flags refuse it) counts as one.
    fn from(flags: &ControllerLimitArgs) -> Self {
        ApiLimits {
            qps: NonZeroU32::new(flags.kube_api_qps).unwrap_or(NonZeroU32::MIN),
            burst: NonZeroU32::new(flags.kube_api_burst).unwrap_or(NonZeroU32::MIN),
            max_in_flight: MAX_IN_FLIGHT,
            concurrent_reconciles: flags.concurrent_reconciles.max(1),
        }
    }
}

/// The process's one token bucket and in-flight bound; clones share them.
#[derive(Clone)]
pub struct ApiBudget {
    limiter: Arc<DefaultDirectRateLimiter>,
    in_flight: Arc<Semaphore>,
    metrics: ControllerMetrics,
}

impl ApiBudget {
    pub fn new(limits: &ApiLimits, metrics: ControllerMetrics) -> Self {
        let quota = Quota::per_second(limits.qps).allow_burst(limits.burst);
        ApiBudget {
            limiter: Arc::new(RateLimiter::direct(quota)),
            in_flight: Arc::new(Semaphore::new(limits.max_in_flight.max(1))),
            metrics,
        }
    }

    /// A layer that takes every request from this budget and refuses them all once `term` is
    /// cancelled.
    pub fn layer(&self, term: CancellationToken) -> BudgetLayer {
        BudgetLayer {
            budget: self.clone(),
            term,
        }
    }

    /// A kube client on `config` whose requests all take from this budget until `term` ends.
    pub fn client(
        &self,
        config: kube::Config,
        term: CancellationToken,
    ) -> Result<kube::Client, kube::Error> {
        let builder = kube::client::ClientBuilder::try_from(config)?;
        Ok(builder.with_layer(&self.layer(term)).build())
    }
}

/// Why a controller request was not sent.
#[derive(Debug, thiserror::Error)]
#[error("the controllers' term is over (lease lost or shutting down): request not sent")]
pub struct TermEnded;

/// See [`ApiBudget::layer`].
#[derive(Clone)]
pub struct BudgetLayer {
    budget: ApiBudget,
    term: CancellationToken,
}

impl<S> Layer<S> for BudgetLayer {
    type Service = Budgeted<S>;

    fn layer(&self, inner: S) -> Budgeted<S> {
        Budgeted {
            inner,
            in_flight: PollSemaphore::new(self.budget.in_flight.clone()),
            ended: Box::pin(self.term.clone().cancelled_owned()),
            term: self.term.clone(),
            budget: self.budget.clone(),
            permit: None,
            token: false,
            wait: None,
            waiting_since: None,
        }
    }
}

/// The service [`BudgetLayer`] makes. It waits in `poll_ready`: kube's client drives its service
/// from one buffer worker, so requests take their slot and their token in the order they came.
pub struct Budgeted<S> {
    inner: S,
    budget: ApiBudget,
    term: CancellationToken,
    ended: Pin<Box<WaitForCancellationFutureOwned>>,
    in_flight: PollSemaphore,
    /// The in-flight slot of the next request, once taken.
    permit: Option<OwnedSemaphorePermit>,
    /// Whether the next request's token is taken.
    token: bool,
    wait: Option<Pin<Box<tokio::time::Sleep>>>,
    waiting_since: Option<Instant>,
}

impl<S, B> Service<Request<B>> for Budgeted<S>
where
    S: Service<Request<B>>,
    S::Response: Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<S::Response, BoxError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        // Once the term is over nothing is waited for: `call` refuses at once.
        if self.term.is_cancelled() || self.ended.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Ok(()));
        }
        self.waiting_since.get_or_insert_with(Instant::now);
        if self.permit.is_none() {
            match ready!(self.in_flight.poll_acquire(cx)) {
                Some(permit) => self.permit = Some(permit),
                None => return Poll::Ready(Err("the in-flight bound was closed".into())),
            }
        }
        while !self.token {
            if let Some(wait) = &mut self.wait {
                ready!(wait.as_mut().poll(cx));
                self.wait = None;
            }
            match self.budget.limiter.check() {
                Ok(()) => self.token = true,
                Err(not_until) => {
                    let later = not_until.wait_time_from(self.budget.limiter.clock().now());
                    self.wait = Some(Box::pin(tokio::time::sleep(later)));
                }
            }
        }
        if let Some(since) = self.waiting_since.take() {
            self.budget.metrics.observe_api_wait(since.elapsed());
        }
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        if self.term.is_cancelled() {
            return Box::pin(futures::future::ready(Err(TermEnded.into())));
        }
        self.token = false;
        // Held until the answer's head arrives; a watch's stream then goes on without it.
        let permit = self.permit.take();
        let answer = self.inner.call(request);
        Box::pin(async move {
            let answer = answer.await.map_err(Into::into);
            drop(permit);
            answer
        })
    }
}

/// What every controller of one leadership term shares: the budgeted client, the bound on its
/// reconciles, the replica's identity for events, the metrics, and the end of the term.
#[derive(Clone)]
pub struct Term {
    client: kube::Client,
    limits: ApiLimits,
    identity: String,
    metrics: ControllerMetrics,
    end: CancellationToken,
}

impl Term {
    /// `client` should come from [`ApiBudget::client`] with `end`, so that no request leaves once
    /// the term is over.
    pub fn new(
        client: kube::Client,
        limits: ApiLimits,
        identity: impl Into<String>,
        metrics: ControllerMetrics,
        end: CancellationToken,
    ) -> Self {
        Term {
            client,
            limits,
            identity: identity.into(),
            metrics,
            end,
        }
    }

    pub fn client(&self) -> kube::Client {
        self.client.clone()
    }

    pub fn metrics(&self) -> &ControllerMetrics {
        &self.metrics
    }

    /// Fires when the term is over.
    pub fn end(&self) -> &CancellationToken {
        &self.end
    }

    /// The reporter of `component`'s events (Kruise's name for that controller) on this replica.
    pub fn reporter(&self, component: &str) -> Reporter {
        Reporter {
            controller: component.to_string(),
            instance: Some(self.identity.clone()),
        }
    }

    /// An event recorder for `component` on the budgeted client.
    pub fn recorder(&self, component: &str) -> EventRecorder {
        EventRecorder::new(self.client(), self.reporter(component))
    }

    /// Runs `controller` until the term ends: at most `--concurrent-reconciles` reconciles at
    /// once, each counted and timed as `component`'s; once the term is over no new reconcile
    /// starts and those in flight get [`STOP_GRACE`] before they are cancelled.
    pub async fn run<K, Ctx, E, Fut>(
        &self,
        component: &'static str,
        controller: Controller<K>,
        mut reconcile: impl FnMut(Arc<K>, Arc<Ctx>) -> Fut + Send + 'static,
        error_policy: impl Fn(Arc<K>, &E, Arc<Ctx>) -> Action + Send + Sync + 'static,
        context: Arc<Ctx>,
    ) where
        K: Clone + Resource + DeserializeOwned + Debug + Send + Sync + 'static,
        K::DynamicType: Debug + Unpin + Eq + Hash + Clone,
        Ctx: Send + Sync + 'static,
        E: std::error::Error + Send + 'static,
        Fut: Future<Output = Result<Action, E>> + Send + 'static,
    {
        let metrics = self.metrics.clone();
        let timed = move |object: Arc<K>, context: Arc<Ctx>| {
            let started = Instant::now();
            let running = metrics.reconcile_started(component);
            let reconciled = reconcile(object, context);
            let metrics = metrics.clone();
            async move {
                let outcome = reconciled.await;
                drop(running);
                metrics.observe_reconcile(component, outcome.is_ok(), started.elapsed());
                outcome
            }
        };
        let config = controller::Config::default().concurrency(self.limits.concurrent_reconciles);
        let stream = controller
            .with_config(config)
            .graceful_shutdown_on(self.end.clone().cancelled_owned())
            .run(timed, error_policy, context)
            .for_each(move |result| async move {
                if let Err(error) = result {
                    tracing::debug!(controller = component, %error, "reconcile");
                }
            });
        let grace_over = async {
            self.end.cancelled().await;
            tokio::time::sleep(STOP_GRACE).await;
        };
        tokio::select! {
            () = stream => {}
            () = grace_over => {
                tracing::warn!(controller = component, grace = ?STOP_GRACE, "reconciles still running at the end of the term: cancelled");
            }
        }
    }
}

#[cfg(test)]
mod tests;
