//! The I/O shell around the pure cores: a leader-elected process that rolls SidecarSets out to
//! running pods ([`sidecarset`]), releases container launch barriers ([`barrier`]) and runs
//! CloneSets ([`cloneset`]).
//!
//! Every replica may run [`run`]; only the Lease holder ([`leader`]) reconciles. The reflectors
//! and controllers live for one leadership term: losing the lease tears them down, winning it
//! again starts them afresh from the apiserver's state.

pub mod barrier;
pub mod cloneset;
pub mod command;
pub mod events;
pub mod expectations;
#[cfg(test)]
pub(crate) mod fake_apiserver;
pub mod guarded_watch;
pub mod leader;
pub mod pod_cache;
pub mod pod_events;
pub mod pod_write;
pub mod sidecarset;
pub mod workload;

use std::sync::Arc;

use futures::StreamExt;
use k8s_openapi::api::core::v1::{Namespace, Pod};
use kube::Api;
use kube::runtime::events::{Recorder, Reporter};
use kube::runtime::{WatchStreamExt, reflector, watcher};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::metrics::Metrics;
use leader::{Elector, LeaseConfig};
use pod_events::{Deletions, PodEvents, PodStores};

/// Name of the Lease and of the event reporter.
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
    /// Where the controllers count what they skip (the serving process shares its registry).
    pub metrics: Arc<Metrics>,
}

impl ControllerConfig {
    /// Lease `kruise-webhook-controller` in `namespace`, held as `identity`; every controller on.
    pub fn new(namespace: impl Into<String>, identity: impl Into<String>) -> Self {
        ControllerConfig {
            lease: LeaseConfig::new(CONTROLLER_NAME, namespace, identity),
            sidecarsets: true,
            barriers: true,
            clonesets: true,
            metrics: Arc::new(Metrics::new()),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ControllerError {
    #[error("cannot subscribe to the shared {0} reflector")]
    Subscribe(&'static str),
    #[error("leader election task failed: {0}")]
    Election(#[from] tokio::task::JoinError),
}

/// Runs leader election until `shutdown`, and the controllers while this replica leads.
pub async fn run(
    client: kube::Client,
    config: ControllerConfig,
    shutdown: CancellationToken,
) -> Result<(), ControllerError> {
    let (leading_tx, mut leading) = watch::channel(false);
    let elector = Elector::new(client.clone(), config.lease.clone());
    // Not `shutdown`: the elector releases the lease when it stops, which must wait until the
    // controllers' writes in flight have finished (below).
    let stop_election = CancellationToken::new();
    let election = tokio::spawn(elector.run(leading_tx, stop_election.clone()));
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
        let term = shutdown.child_token();
        let controllers = tokio::spawn(run_term(client.clone(), config.clone(), term.clone()));
        tokio::select! {
            () = shutdown.cancelled() => {}
            _ = leading.wait_for(|l| !*l) => {
                if !shutdown.is_cancelled() {
                    tracing::warn!(identity = config.lease.identity, "lost the lease: stopping controllers");
                }
            }
        }
        term.cancel();
        match controllers.await {
            Ok(Ok(())) => {}
            Ok(Err(error)) => {
                outcome = Err(error);
                shutdown.cancel();
            }
            Err(error) => tracing::error!(%error, "controllers panicked"),
        }
        if shutdown.is_cancelled() {
            break;
        }
    }
    // The controllers are stopped; the elector releases the lease on its way out.
    stop_election.cancel();
    election.await?;
    outcome
}

/// One leadership term: shared pod and namespace reflectors feeding both controllers.
async fn run_term(
    client: kube::Client,
    config: ControllerConfig,
    term: CancellationToken,
) -> Result<(), ControllerError> {
    let (stores, mut pod_events) = PodEvents::new(SHARED_BUFFER, pod_cache::held);
    let PodStores { pods, summaries } = stores;
    let (namespaces, namespace_writer) = reflector::store_shared::<Namespace>(SHARED_BUFFER);
    // Subscribe before the watches run so no subscriber misses the initial list.
    let pods_for_sidecarsets = pod_events.subscribe(Deletions::Untold);
    let pods_for_barriers = pod_events.subscribe(Deletions::Untold);
    // A CloneSet replaces the pods deleted behind its back.
    let pods_for_clonesets = pod_events.subscribe(Deletions::Told);
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

    let reporter = Reporter {
        controller: CONTROLLER_NAME.into(),
        instance: Some(config.lease.identity.clone()),
    };
    let cloneset_context = Arc::new(cloneset::Context {
        client: client.clone(),
        pods: pods.clone(),
        summaries: summaries.clone(),
        recorder: Recorder::new(client.clone(), reporter.clone()),
        expectations: Default::default(),
        metrics: config.metrics.clone(),
    });
    let context = Arc::new(sidecarset::Context {
        client: client.clone(),
        pods: pods.clone(),
        summaries,
        namespaces,
        recorder: Recorder::new(client.clone(), reporter),
        metrics: config.metrics.clone(),
    });
    let sidecarsets = async {
        if config.sidecarsets {
            sidecarset::run(
                context,
                pods_for_sidecarsets,
                namespace_events,
                term.clone(),
            )
            .await;
        } else {
            // Unused subscriptions must still be drained or the shared reflector stalls.
            let drain_pods = pods_for_sidecarsets.for_each(|_| futures::future::ready(()));
            let drain_ns = namespace_events.for_each(|_| futures::future::ready(()));
            tokio::select! {
                () = term.cancelled() => {}
                _ = futures::future::join(drain_pods, drain_ns) => {}
            }
        }
    };
    let clonesets = async {
        if config.clonesets {
            cloneset::run(cloneset_context, pods_for_clonesets, term.clone()).await;
        } else {
            tokio::select! {
                () = term.cancelled() => {}
                () = pods_for_clonesets.for_each(|_| futures::future::ready(())) => {}
            }
        }
    };
    let barriers = async {
        if config.barriers {
            barrier::run(client.clone(), pods_for_barriers, pods, term.clone()).await;
        } else {
            tokio::select! {
                () = term.cancelled() => {}
                () = pods_for_barriers.for_each(|_| futures::future::ready(())) => {}
            }
        }
    };
    // The controllers stop on `term`; the reflectors are dropped with them.
    let controllers = futures::future::join3(sidecarsets, barriers, clonesets);
    tokio::select! {
        _ = controllers => {}
        () = pod_watch => {}
        () = namespace_watch => {}
    }
    Ok(())
}
