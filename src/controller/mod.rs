//! The I/O shell around the pure cores: a leader-elected process that rolls SidecarSets out to
//! running pods ([`sidecarset`]), releases container launch barriers ([`barrier`]) and runs
//! CloneSets ([`cloneset`]), Advanced StatefulSets ([`statefulset`]) and Advanced DaemonSets
//! ([`daemonset`]).
//!
//! Every replica may run [`run`]; only the Lease holder ([`leader`]) reconciles. The reflectors
//! and controllers live for one leadership term ([`runtime::Term`]): losing the lease tears them
//! down, winning it again starts them afresh from the apiserver's state. The SidecarSet store is
//! the exception: fed by the catalogue's watch ([`sidecarset::feed`]), it lives as long as the
//! process and stays current across terms. Every controller runs
//! through [`runtime`]: bounded reconciles, one client-side rate limit for all, its own event
//! component.

pub mod barrier;
pub mod cloneset;
pub mod command;
pub mod daemonset;
pub mod events;
pub mod expectations;
pub mod guarded_watch;
pub mod leader;
pub mod own_writes;
pub mod pod_cache;
pub mod pod_events;
pub mod pod_write;
pub mod runtime;
pub mod sidecarset;
pub mod statefulset;
pub mod workload;

use std::sync::Arc;

use futures::StreamExt;
use k8s_openapi::api::core::v1::{Namespace, Pod};
use kube::Api;
use kube::runtime::{WatchStreamExt, reflector, watcher};
use tokio_util::sync::CancellationToken;

use crate::metrics::Metrics;
use leader::LeaseConfig;
use pod_events::{Deletions, PodEvents, PodStores};
use runtime::{ApiBudget, ApiLimits, Term};
use sidecarset::SidecarSetFeed;

/// Name of the Lease.
pub const CONTROLLER_NAME: &str = "kruise-webhook-controller";
/// Events a slow subscriber may lag behind the shared pod and namespace reflectors.
const SHARED_BUFFER: usize = 1024;

#[derive(Debug, Clone)]
pub struct ControllerConfig {
    pub lease: LeaseConfig,
    /// Run the SidecarSet rollout controller.
    pub sidecarsets: bool,
    /// Run the launch-priority barrier controller.
    pub barriers: bool,
    /// Run the CloneSet controller.
    pub clonesets: bool,
    /// Run the Advanced StatefulSet controller.
    pub statefulsets: bool,
    /// Run the Advanced DaemonSet controller.
    pub daemonsets: bool,
    /// What the controllers together may ask of the apiserver, and how many reconciles each runs
    /// at once.
    pub limits: ApiLimits,
    /// Where the controllers count what they do and skip (the serving process shares its registry).
    pub metrics: Arc<Metrics>,
    /// The SidecarSets as the catalogue's watch delivers them (`serve`); without, the SidecarSet
    /// controller lists and watches them itself.
    pub sidecarset_feed: Option<SidecarSetFeed>,
    /// What the election last did (the serving process's admin port reads it).
    pub lease_health: Arc<leader::LeaseHealth>,
}

impl ControllerConfig {
    /// Lease `kruise-webhook-controller` in `namespace`, held as `identity`; every controller on.
    pub fn new(namespace: impl Into<String>, identity: impl Into<String>) -> Self {
        ControllerConfig {
            lease: LeaseConfig::new(CONTROLLER_NAME, namespace, identity),
            sidecarsets: true,
            barriers: true,
            clonesets: true,
            statefulsets: true,
            daemonsets: true,
            limits: ApiLimits::default(),
            metrics: Arc::new(Metrics::new()),
            sidecarset_feed: None,
            lease_health: Arc::new(leader::LeaseHealth::new()),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ControllerError {
    #[error("cannot subscribe to the shared {0} reflector")]
    Subscribe(&'static str),
    #[error("cannot start the leader election thread: {0}")]
    Election(#[from] std::io::Error),
    #[error("building the controllers' client: {0}")]
    Client(#[from] kube::Error),
}

/// Runs leader election until `shutdown`, and the controllers while this replica leads. The
/// election has its own thread and its own client on `kube_config`; the controllers share
/// another, budgeted one ([`runtime`]).
pub async fn run(
    kube_config: kube::Config,
    config: ControllerConfig,
    shutdown: CancellationToken,
) -> Result<(), ControllerError> {
    start(kube_config, config)?.run(shutdown).await
}

/// The election started, the controllers not yet: [`Started::run`] runs them.
pub struct Started {
    kube_config: kube::Config,
    config: ControllerConfig,
    election: leader::ElectionThread,
}

/// Starts the leader election on its own thread. The thread starts with the calling thread's
/// priority: `serve` calls this from a thread of normal priority and then runs the controllers on
/// threads of a lower one, so a renewal never waits behind them.
pub fn start(
    kube_config: kube::Config,
    config: ControllerConfig,
) -> Result<Started, ControllerError> {
    let kube_config = with_user_agent(kube_config, &config.lease.identity);
    let lease_client_config = kube_config.clone();
    let election = leader::spawn(
        move || kube::Client::try_from(lease_client_config).map_err(|e| e.to_string()),
        config.lease.clone(),
        config.lease_health.clone(),
        config.metrics.controllers.clone(),
    )?;
    Ok(Started {
        kube_config,
        config,
        election,
    })
}

impl Started {
    /// The controllers while this replica leads, until `shutdown`; then the Lease is released.
    pub async fn run(self, shutdown: CancellationToken) -> Result<(), ControllerError> {
        let Started {
            kube_config,
            config,
            election,
        } = self;
        let mut config = config;
        if config.sidecarsets && config.sidecarset_feed.is_none() {
            let client = kube::Client::try_from(kube_config.clone())?;
            let reporter = sidecarset_reporter(&client, &config);
            let namespace = config.lease.namespace.clone();
            let feed = sidecarset::spawn_own_feed(client, reporter, &namespace, shutdown.clone());
            config.sidecarset_feed = Some(feed);
        }
        let mut leading = election.leading.clone();
        let metrics = config.metrics.controllers.clone();
        let budget = ApiBudget::new(&config.limits, metrics.clone());
        let mut outcome = Ok(());
        loop {
            tokio::select! {
                () = shutdown.cancelled() => break,
                changed = leading.wait_for(|l| *l) => if changed.is_err() { break },
            }
            tracing::info!(
                identity = config.lease.identity,
                "leading: starting controllers"
            );
            metrics.set_leading(true);
            // Ends with the term: the client refuses every request from then on.
            let end = shutdown.child_token();
            let client = match budget.client(kube_config.clone(), end.clone()) {
                Ok(client) => client,
                Err(error) => {
                    outcome = Err(error.into());
                    break;
                }
            };
            let term = Term::new(
                client,
                config.limits,
                config.lease.identity.clone(),
                metrics.clone(),
                end.clone(),
            );
            let controllers = tokio::spawn(run_term(term, config.clone()));
            tokio::select! {
                () = shutdown.cancelled() => {}
                _ = leading.wait_for(|l| !*l) => {
                    if !shutdown.is_cancelled() {
                        tracing::warn!(identity = config.lease.identity, "lost the lease: stopping controllers");
                    }
                }
            }
            end.cancel();
            // Within the stop grace of the term's end (runtime::STOP_GRACE).
            match controllers.await {
                Ok(Ok(())) => {}
                Ok(Err(error)) => {
                    outcome = Err(error);
                    shutdown.cancel();
                }
                Err(error) => tracing::error!(%error, "controllers panicked"),
            }
            metrics.set_leading(false);
            if shutdown.is_cancelled() {
                break;
            }
        }
        // The controllers are stopped; the election releases the lease on its way out.
        election.stop().await;
        outcome
    }
}

/// `kube_config` whose requests name this replica in their `User-Agent`
/// (`kruise-webhook/<version> (<identity>)`), so the apiserver's audit log tells which replica
/// wrote what: one writer at a time can be checked there.
fn with_user_agent(mut kube_config: kube::Config, identity: &str) -> kube::Config {
    let agent = format!("kruise-webhook/{} ({identity})", env!("CARGO_PKG_VERSION"));
    match axum::http::HeaderValue::from_str(&agent) {
        Ok(value) => kube_config
            .headers
            .push((axum::http::header::USER_AGENT, value)),
        Err(error) => tracing::warn!(%error, identity, "identity unfit for a User-Agent header"),
    }
    kube_config
}

/// Reports the SidecarSets the types refuse for the SidecarSet feed: as the controller's
/// component, on `client` (the feed's, outside the controllers' budget: it lives across terms).
pub fn sidecarset_reporter(
    client: &kube::Client,
    config: &ControllerConfig,
) -> guarded_watch::UndecodableReporter {
    let reporter = kube::runtime::events::Reporter {
        controller: sidecarset::COMPONENT.to_string(),
        instance: Some(config.lease.identity.clone()),
    };
    let recorder = events::EventRecorder::new(client.clone(), reporter);
    guarded_watch::UndecodableReporter::new::<crate::api::SidecarSet>(
        config.metrics.clone(),
        recorder,
    )
}

/// Reads an unused subscription of a shared reflector until the term ends (unread, it would
/// stall the reflector).
async fn drain<T>(subscription: impl futures::Stream<Item = T>, end: &CancellationToken) {
    tokio::select! {
        () = end.cancelled() => {}
        () = subscription.for_each(|_| futures::future::ready(())) => {}
    }
}

/// One leadership term: shared pod and namespace reflectors feeding the controllers, all on the
/// term's budgeted client.
async fn run_term(term: Term, config: ControllerConfig) -> Result<(), ControllerError> {
    let client = term.client();
    let (stores, mut pod_events) = PodEvents::new(SHARED_BUFFER, pod_cache::held);
    let PodStores { pods, summaries } = stores;
    let (namespaces, namespace_writer) = reflector::store_shared::<Namespace>(SHARED_BUFFER);
    // Subscribe before the watches run so no subscriber misses the initial list.
    let pods_for_sidecarsets = pod_events.subscribe(Deletions::Untold);
    let pods_for_barriers = pod_events.subscribe(Deletions::Untold);
    // The workload controllers replace the pods deleted behind their backs.
    let pods_for_clonesets = pod_events.subscribe(Deletions::Told);
    let pods_for_statefulsets = pod_events.subscribe(Deletions::Told);
    let pods_for_daemonsets = pod_events.subscribe(Deletions::Told);
    let namespace_events = namespace_writer
        .subscribe()
        .ok_or(ControllerError::Subscribe("namespace"))?;

    let pod_watch = pod_events.run(watcher(
        Api::<Pod>::all(client.clone()),
        watcher::Config::default().any_semantic(),
    ));
    let namespace_watch = reflector(
        namespace_writer,
        watcher(
            Api::<Namespace>::all(client.clone()),
            watcher::Config::default().any_semantic(),
        ),
    )
    .default_backoff()
    .for_each(|_| futures::future::ready(()));

    // Each workload controller: its events' component, its own expectations.
    let workload_context = |component: &'static str| {
        Arc::new(workload::Context {
            client: client.clone(),
            pods: pods.clone(),
            summaries: summaries.clone(),
            recorder: term.recorder(component),
            expectations: std::sync::Mutex::new(expectations::Expectations::counting_timeouts(
                term.metrics().expectation_timeouts(component),
            )),
            metrics: config.metrics.clone(),
        })
    };
    let cloneset_context = workload_context(cloneset::COMPONENT);
    let statefulset_context = workload_context(statefulset::COMPONENT);
    let daemonset_context = workload_context(daemonset::COMPONENT);
    let context = Arc::new(sidecarset::Context {
        client: client.clone(),
        pods: pods.clone(),
        summaries,
        namespaces,
        recorder: term.recorder(sidecarset::COMPONENT),
        metrics: config.metrics.clone(),
        own_writes: Default::default(),
        revisions: config
            .sidecarset_feed
            .as_ref()
            .map_or_else(crate::source::history::shared, |feed| {
                feed.revisions().clone()
            }),
        revision_namespace: config.lease.namespace.clone(),
        sidecarsets: config
            .sidecarset_feed
            .as_ref()
            .map_or_else(|| kube::runtime::reflector::store().0, |feed| feed.store()),
        canaries: config
            .sidecarset_feed
            .as_ref()
            .map(|feed| feed.canaries())
            .unwrap_or_default(),
        told: Default::default(),
    });
    let end = term.end().clone();
    let sidecarsets = async {
        if let (true, Some(feed)) = (config.sidecarsets, &config.sidecarset_feed) {
            sidecarset::run(context, feed, pods_for_sidecarsets, namespace_events, &term).await;
        } else {
            futures::future::join(
                drain(pods_for_sidecarsets, &end),
                drain(namespace_events, &end),
            )
            .await;
        }
    };
    let clonesets = async {
        if config.clonesets {
            cloneset::run(cloneset_context, pods_for_clonesets, &term).await;
        } else {
            drain(pods_for_clonesets, &end).await;
        }
    };
    let statefulsets = async {
        if config.statefulsets {
            statefulset::run(statefulset_context, pods_for_statefulsets, &term).await;
        } else {
            drain(pods_for_statefulsets, &end).await;
        }
    };
    let daemonsets = async {
        if config.daemonsets {
            daemonset::run(daemonset_context, pods_for_daemonsets, &term).await;
        } else {
            drain(pods_for_daemonsets, &end).await;
        }
    };
    let barriers = async {
        if config.barriers {
            barrier::run(pods_for_barriers, pods, &term).await;
        } else {
            drain(pods_for_barriers, &end).await;
        }
    };
    // The controllers stop with the term; the reflectors are dropped with them.
    let controllers =
        futures::future::join5(sidecarsets, barriers, clonesets, statefulsets, daemonsets);
    tokio::select! {
        _ = controllers => {}
        () = pod_watch => {}
        () = namespace_watch => {}
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests;
