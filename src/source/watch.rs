//! Cluster mode, the I/O shell: watches SidecarSets and Namespaces through the apiserver and
//! publishes a new catalogue snapshot after each change. All decisions are in [`super::cluster`].
//!
//! SidecarSets are watched as untyped objects and decoded one by one, so a malformed one is
//! reported and left out instead of failing the whole list or stalling the watch. Namespaces are
//! watched metadata-only (labels are all injection needs). A lost connection keeps the last
//! snapshot in service while the watchers reconnect with backoff.

use futures::StreamExt;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, ApiResource, DynamicObject};
use kube::core::PartialObjectMeta;
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, watcher};
use kube::{Client, Config};
use tokio_util::sync::CancellationToken;

use super::SharedCatalogue;
use super::cluster::{ClusterState, Snapshot};
use crate::api::SidecarSet;

/// A client for `kubeconfig`, or, without one, the standard inference: `KUBECONFIG`,
/// `~/.kube/config`, then the in-cluster service account.
pub async fn client(kubeconfig: Option<&std::path::Path>) -> Result<Client, String> {
    let config = config(kubeconfig).await?;
    Client::try_from(config).map_err(|e| format!("building the Kubernetes client: {e}"))
}

/// The cluster configuration of `kubeconfig`, or the standard inference (see [`client`]), for a
/// caller that builds clients of its own from it.
pub async fn config(kubeconfig: Option<&std::path::Path>) -> Result<Config, String> {
    match kubeconfig {
        Some(path) => {
            let file = kube::config::Kubeconfig::read_from(path)
                .map_err(|e| format!("reading kubeconfig {}: {e}", path.display()))?;
            Config::from_custom_kubeconfig(file, &kube::config::KubeConfigOptions::default())
                .await
                .map_err(|e| format!("kubeconfig {}: {e}", path.display()))
        }
        None => Config::infer()
            .await
            .map_err(|e| format!("no cluster configuration found: {e}")),
    }
}

/// Watches until `shutdown`, storing each new snapshot into `catalogue`, then handing it to
/// `on_snapshot` (logs, metrics, readiness).
pub fn spawn(
    client: Client,
    catalogue: SharedCatalogue,
    on_snapshot: impl Fn(&Snapshot) + Send + 'static,
    shutdown: CancellationToken,
) -> tokio::task::JoinHandle<()> {
    let resource = ApiResource::erase::<SidecarSet>(&());
    let sidecarsets = watcher(
        Api::<DynamicObject>::all_with(client.clone(), &resource),
        watcher::Config::default(),
    )
    .default_backoff();
    let namespaces = watcher(
        Api::<PartialObjectMeta<Namespace>>::all(client),
        watcher::Config::default(),
    )
    .default_backoff();
    tokio::spawn(async move {
        let mut sidecarsets = std::pin::pin!(sidecarsets);
        let mut namespaces = std::pin::pin!(namespaces);
        let mut state = ClusterState::default();
        let mut due = false;
        loop {
            // Biased: events already waiting are applied before publishing, so a burst (a list,
            // many objects applied at once) costs one snapshot rather than one per object.
            tokio::select! {
                biased;
                _ = shutdown.cancelled() => return,
                event = sidecarsets.next() => match event {
                    Some(Ok(event)) => due |= state.sidecarset_event(event),
                    Some(Err(error)) => {
                        tracing::warn!(%error, "SidecarSet watch failed; serving the last snapshot, retrying with backoff");
                    }
                    None => return,
                },
                event = namespaces.next() => match event {
                    Some(Ok(event)) => due |= state.namespace_event(event),
                    Some(Err(error)) => {
                        tracing::warn!(%error, "Namespace watch failed; serving the last snapshot, retrying with backoff");
                    }
                    None => return,
                },
                _ = std::future::ready(()), if due => {
                    due = false;
                    if let Some(snapshot) = state.snapshot() {
                        catalogue.store(snapshot.catalogue.clone());
                        on_snapshot(&snapshot);
                    }
                }
            }
        }
    })
}
