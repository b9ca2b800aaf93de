//! Cluster mode, the I/O shell: watches SidecarSets and Namespaces through the apiserver and
//! publishes a new catalogue snapshot after each change. All decisions are in [`super::cluster`],
//! applied on a thread of their own.
//!
//! SidecarSets are decoded one by one as the answer is read ([`Lenient`]), so a malformed one is
//! reported and left out instead of failing the whole list or stalling the watch. Namespaces are
//! watched metadata-only (labels are all injection needs). A lost connection keeps the last
//! snapshot in service while the watchers reconnect with backoff.

use futures::StreamExt;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::Api;
use kube::core::PartialObjectMeta;
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event, watcher};
use kube::{Client, Config};
use tokio_util::sync::CancellationToken;

use super::SharedCatalogue;
use super::cluster::{ClusterState, Snapshot, WatchedSidecarSet, as_admitted};
use crate::api::SidecarSet;
use crate::k8s::lenient::Lenient;

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

/// One event of either watch, on its way to the catalogue thread.
enum Delivered {
    SidecarSet(Event<Lenient<SidecarSet>>),
    // Boxed: a Namespace's metadata is 400 bytes, a SidecarSet event's a pointer.
    Namespace(Box<Event<PartialObjectMeta<Namespace>>>),
}

/// Events waiting for the catalogue thread; the watch waits (and buffers nothing more) beyond.
const QUEUE: usize = 1024;

/// Another user of the SidecarSet watch (the SidecarSet controller's store): called with every
/// event on the catalogue thread, before the catalogue applies it. The SidecarSets are the ones
/// the catalogue holds ([`as_admitted`]), shared, not copies.
pub type SidecarSetTap = Box<dyn FnMut(&Event<WatchedSidecarSet>) + Send>;

/// `event` with `f` applied to its object, if it has one.
fn map_event<A, B>(event: Event<A>, f: impl FnOnce(A) -> B) -> Event<B> {
    match event {
        Event::Init => Event::Init,
        Event::InitApply(object) => Event::InitApply(f(object)),
        Event::InitDone => Event::InitDone,
        Event::Apply(object) => Event::Apply(f(object)),
        Event::Delete(object) => Event::Delete(f(object)),
    }
}

/// The one list and watch of every SidecarSet. Lists are served from the apiserver's watch
/// cache (`resourceVersion=0`), as controllers list: a paged list from etcd took 72 s for
/// 50,000 SidecarSets where the cache answers in seconds (docs/performance.md). Each object is
/// decoded as the answer is read, without the managedFields and last-applied copy that neither
/// the catalogue nor the controller reads.
fn sidecarset_watch(
    client: Client,
) -> impl futures::Stream<Item = Result<Event<Lenient<SidecarSet>>, watcher::Error>> + Send {
    watcher(
        Api::<Lenient<SidecarSet>>::all(client),
        watcher::Config::default().any_semantic(),
    )
    .default_backoff()
}

/// The SidecarSet watch alone, each event handed to `tap` on a thread of its own (a process
/// without the catalogue: `kruise-webhook controller`).
pub fn spawn_sidecarsets(
    client: Client,
    mut tap: impl FnMut(&Event<WatchedSidecarSet>) + Send + 'static,
    shutdown: CancellationToken,
) -> tokio::task::JoinHandle<()> {
    let (events, mut queue) = tokio::sync::mpsc::channel::<Event<Lenient<SidecarSet>>>(QUEUE);
    let thread = std::thread::Builder::new()
        .name("sidecarset-watch".into())
        .spawn(move || {
            while let Some(event) = queue.blocking_recv() {
                tap(&map_event(event, as_admitted));
            }
        });
    if let Err(error) = thread {
        tracing::error!(%error, "cannot start the SidecarSet watch thread");
    }
    tokio::spawn(async move {
        let mut sidecarsets = std::pin::pin!(sidecarset_watch(client));
        loop {
            let event = tokio::select! {
                _ = shutdown.cancelled() => return,
                event = sidecarsets.next() => match event {
                    Some(Ok(event)) => event,
                    Some(Err(error)) => {
                        tracing::warn!(%error, "SidecarSet watch failed; retrying with backoff");
                        continue;
                    }
                    None => return,
                },
            };
            if events.send(event).await.is_err() {
                return;
            }
        }
    })
}

/// Watches until `shutdown`, storing each new snapshot into `catalogue`, then handing it to
/// `on_snapshot` (logs, metrics, readiness). `tap`, if any, sees every SidecarSet event first.
///
/// The watch task only receives events; decoding, validation and building snapshots happen on a
/// thread of their own, so neither a list of 50,000 SidecarSets nor a burst of changes holds a
/// worker of the async runtime (the Lease renewal, the watches, the webhooks run there).
pub fn spawn(
    client: Client,
    catalogue: SharedCatalogue,
    on_snapshot: impl Fn(&Snapshot) + Send + 'static,
    tap: Option<SidecarSetTap>,
    shutdown: CancellationToken,
) -> tokio::task::JoinHandle<()> {
    let sidecarsets = sidecarset_watch(client.clone());
    let namespaces = watcher(
        Api::<PartialObjectMeta<Namespace>>::all(client),
        watcher::Config::default(),
    )
    .default_backoff();
    let (events, queue) = tokio::sync::mpsc::channel(QUEUE);
    let thread = std::thread::Builder::new()
        .name("sidecarset-catalogue".into())
        .spawn(move || apply_events(queue, &catalogue, on_snapshot, tap));
    if let Err(error) = thread {
        tracing::error!(%error, "cannot start the SidecarSet catalogue thread");
    }
    tokio::spawn(async move {
        let mut sidecarsets = std::pin::pin!(sidecarsets);
        let mut namespaces = std::pin::pin!(namespaces);
        loop {
            let delivered = tokio::select! {
                _ = shutdown.cancelled() => return,
                event = sidecarsets.next() => match event {
                    Some(Ok(event)) => Delivered::SidecarSet(event),
                    Some(Err(error)) => {
                        tracing::warn!(%error, "SidecarSet watch failed; serving the last snapshot, retrying with backoff");
                        continue;
                    }
                    None => return,
                },
                event = namespaces.next() => match event {
                    Some(Ok(event)) => Delivered::Namespace(Box::new(event)),
                    Some(Err(error)) => {
                        tracing::warn!(%error, "Namespace watch failed; serving the last snapshot, retrying with backoff");
                        continue;
                    }
                    None => return,
                },
            };
            // Dropping the sender (on return) ends the thread.
            if events.send(delivered).await.is_err() {
                return;
            }
        }
    })
}

/// The catalogue thread: applies events as they come; everything already waiting goes into the
/// same snapshot, so a burst (a list, many objects applied at once) costs one.
fn apply_events(
    mut queue: tokio::sync::mpsc::Receiver<Delivered>,
    catalogue: &SharedCatalogue,
    on_snapshot: impl Fn(&Snapshot),
    mut tap: Option<SidecarSetTap>,
) {
    let mut state = ClusterState::default();
    let mut apply = |state: &mut ClusterState, delivered| match delivered {
        Delivered::SidecarSet(event) => {
            let event = map_event(event, as_admitted);
            if let Some(tap) = &mut tap {
                tap(&event);
            }
            state.sidecarset_event(event)
        }
        Delivered::Namespace(event) => state.namespace_event(*event),
    };
    while let Some(delivered) = queue.blocking_recv() {
        let mut due = apply(&mut state, delivered);
        while let Ok(delivered) = queue.try_recv() {
            due |= apply(&mut state, delivered);
        }
        if due && let Some(snapshot) = state.snapshot() {
            catalogue.store(snapshot.catalogue.clone());
            on_snapshot(&snapshot);
        }
    }
}
