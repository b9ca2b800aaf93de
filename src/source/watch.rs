//! Cluster mode, the I/O shell: watches SidecarSets and Namespaces through the apiserver and
//! publishes a new catalogue snapshot after each change. All decisions are in [`super::cluster`],
//! applied on a thread of their own.
//!
//! SidecarSets are decoded one by one as the answer is read ([`Lenient`]), so a malformed one is
//! reported and left out instead of failing the whole list or stalling the watch. Namespaces are
//! watched metadata-only (labels are all injection needs). A lost connection keeps the last
//! snapshot in service while the watchers reconnect with backoff.

use std::collections::HashSet;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::Api;
use kube::core::PartialObjectMeta;
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event, watcher};
use kube::{Client, Config};
use tokio_util::sync::CancellationToken;

use super::SharedCatalogue;
use super::cluster::{ClusterState, Snapshot, WatchedSidecarSet, as_admitted};
use super::history::{SharedRevisions, WatchedRevision};
use crate::api::{SidecarSet, keys};
use crate::k8s::lenient::Lenient;

/// A client for `kubeconfig`, or, without one, the standard inference: `KUBECONFIG`,
/// `~/.kube/config`, then the in-cluster service account.
pub async fn client(kubeconfig: Option<&std::path::Path>) -> Result<Client, String> {
    let config = config(kubeconfig).await?;
    Client::try_from(config).map_err(|e| format!("building the Kubernetes client: {e}"))
}

/// Runs `read` with a client for `kubeconfig`, to its end, on a runtime of its own: for a
/// command that reads the cluster once (`explain`, `plan`).
pub fn read_once<T, F>(
    kubeconfig: &std::path::Path,
    read: impl FnOnce(Client) -> F,
) -> Result<T, String>
where
    F: std::future::Future<Output = Result<T, String>>,
{
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    runtime.block_on(async { read(client(Some(kubeconfig)).await?).await })
}

/// The object `target` names, read from the cluster as JSON with its `apiVersion` and `kind` (a
/// GET through a dynamic client may leave them out). An error names the object.
pub async fn get_target(
    client: Client,
    target: &crate::cli::Target,
) -> Result<serde_json::Value, String> {
    use kube::api::{ApiResource, DynamicObject, GroupVersionKind};
    let gvk = GroupVersionKind::gvk(target.group, target.version, target.kind);
    let resource = ApiResource::from_gvk_with_plural(&gvk, target.plural);
    let api: Api<DynamicObject> = if target.namespace.is_empty() {
        Api::all_with(client, &resource)
    } else {
        Api::namespaced_with(client, &target.namespace, &resource)
    };
    let shown = target.shown();
    let object = api
        .get_opt(&target.name)
        .await
        .map_err(|e| format!("reading {shown}: {e}"))?
        .ok_or_else(|| format!("{shown} not found"))?;
    let mut value = serde_json::to_value(&object).map_err(|e| format!("{shown}: {e}"))?;
    value["apiVersion"] = serde_json::json!(resource.api_version);
    value["kind"] = serde_json::json!(target.kind);
    Ok(value)
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

/// One event of a watch, on its way to the catalogue thread.
enum Delivered {
    SidecarSet(Event<Lenient<SidecarSet>>),
    // Boxed: a Namespace's metadata is 400 bytes, a SidecarSet event's a pointer.
    Namespace(Box<Event<PartialObjectMeta<Namespace>>>),
    Revision(Event<Lenient<WatchedRevision>>),
    /// A revision read again for its content; `Err`: the read failed (its name).
    RevisionContent(Result<Box<WatchedRevision>, String>),
}

/// The revision history the catalogue resolves `injectionStrategy.revision` against: the
/// ControllerRevisions labelled `kruise.io/sidecarset-name` in `namespace` (the manager's), held
/// in `revisions` (shared with the validating webhook and the SidecarSet controller).
#[derive(Clone)]
pub struct HistoryWatch {
    pub namespace: String,
    pub revisions: SharedRevisions,
}

/// The one list and watch of the SidecarSet revisions in the manager's namespace, from the
/// apiserver's watch cache, each revision decoded straight into what is held of it.
fn revision_watch(
    client: Client,
    namespace: &str,
) -> impl futures::Stream<Item = Result<Event<Lenient<WatchedRevision>>, watcher::Error>> + Send + use<>
{
    watcher(
        Api::<Lenient<WatchedRevision>>::namespaced(client, namespace),
        watcher::Config::default()
            .labels(keys::SIDECARSET_NAME_LABEL)
            .any_semantic(),
    )
    .default_backoff()
}

/// The history alone, applied to `revisions` (a process without the catalogue: `kruise-webhook
/// controller`, whose SidecarSet controller plans the histories from it).
pub fn spawn_revisions(
    client: Client,
    history: HistoryWatch,
    shutdown: CancellationToken,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut events = std::pin::pin!(revision_watch(client, &history.namespace));
        loop {
            let event = tokio::select! {
                _ = shutdown.cancelled() => return,
                event = events.next() => match event {
                    Some(Ok(event)) => event,
                    Some(Err(error)) => {
                        tracing::warn!(%error, namespace = history.namespace, "SidecarSet revision watch failed; retrying with backoff");
                        continue;
                    }
                    None => return,
                },
            };
            super::history::write(&history.revisions).apply(event);
        }
    })
}

/// Reads revision `name` again for its content, and hands it to the catalogue thread. A failed
/// read is reported after a pause, so that it is asked for again no sooner.
async fn read_revision(
    api: Api<ControllerRevision>,
    name: String,
    events: tokio::sync::mpsc::Sender<Delivered>,
) {
    const RETRY_PAUSE: Duration = Duration::from_secs(1);
    let read = match api.get_opt(&name).await {
        Ok(Some(revision)) => Ok(Box::new(WatchedRevision::from_object(&revision))),
        // Gone: the watch tells the index.
        Ok(None) => Err(name),
        Err(error) => {
            tracing::warn!(%error, revision = name, "cannot read a SidecarSet revision; asking again");
            tokio::time::sleep(RETRY_PAUSE).await;
            Err(name)
        }
    };
    let _ = events.send(Delivered::RevisionContent(read)).await;
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
    history: Option<HistoryWatch>,
    shutdown: CancellationToken,
) -> tokio::task::JoinHandle<()> {
    let sidecarsets = sidecarset_watch(client.clone());
    let namespaces = watcher(
        Api::<PartialObjectMeta<Namespace>>::all(client.clone()),
        watcher::Config::default(),
    )
    .default_backoff();
    let (events, queue) = tokio::sync::mpsc::channel(QUEUE);
    // Revisions whose content the catalogue thread asks to be read.
    let (reads, mut to_read) = tokio::sync::mpsc::unbounded_channel::<String>();
    let state = match &history {
        Some(history) => ClusterState::with_history(history.revisions.clone()),
        None => ClusterState::default(),
    };
    let thread = std::thread::Builder::new()
        .name("sidecarset-catalogue".into())
        .spawn(move || apply_events(queue, state, &catalogue, on_snapshot, tap, reads));
    if let Err(error) = thread {
        tracing::error!(%error, "cannot start the SidecarSet catalogue thread");
    }
    tokio::spawn(async move {
        let mut sidecarsets = std::pin::pin!(sidecarsets);
        let mut namespaces = std::pin::pin!(namespaces);
        // Watched once the SidecarSets have listed: a revision is then held with its content
        // exactly when a set names a revision, instead of every content being held until then.
        type Revisions = std::pin::Pin<
            Box<
                dyn futures::Stream<Item = Result<Event<Lenient<WatchedRevision>>, watcher::Error>>
                    + Send,
            >,
        >;
        let mut revisions: Option<Revisions> = None;
        let history_api = history
            .as_ref()
            .map(|h| Api::<ControllerRevision>::namespaced(client.clone(), &h.namespace));
        loop {
            let delivered = tokio::select! {
                _ = shutdown.cancelled() => return,
                event = sidecarsets.next() => match event {
                    Some(Ok(event)) => {
                        if matches!(event, Event::InitDone) && revisions.is_none()
                            && let Some(history) = &history
                        {
                            revisions = Some(Box::pin(revision_watch(client.clone(), &history.namespace)));
                        }
                        Delivered::SidecarSet(event)
                    }
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
                Some(event) = async { revisions.as_mut()?.next().await }, if revisions.is_some() => match event {
                    Ok(event) => Delivered::Revision(event),
                    Err(error) => {
                        tracing::warn!(%error, "SidecarSet revision watch failed; serving the last snapshot, retrying with backoff");
                        continue;
                    }
                },
                Some(name) = to_read.recv(), if history_api.is_some() => {
                    if let Some(api) = &history_api {
                        tokio::spawn(read_revision(api.clone(), name, events.clone()));
                    }
                    continue;
                }
            };
            // Dropping the sender (on return) ends the thread.
            if events.send(delivered).await.is_err() {
                return;
            }
        }
    })
}

/// The catalogue thread: applies events as they come; everything already waiting goes into the
/// same snapshot, so a burst (a list, many objects applied at once) costs one. Revisions whose
/// content a set now needs are asked for on `reads`, each once until it arrives or its read fails.
fn apply_events(
    mut queue: tokio::sync::mpsc::Receiver<Delivered>,
    mut state: ClusterState,
    catalogue: &SharedCatalogue,
    on_snapshot: impl Fn(&Snapshot),
    mut tap: Option<SidecarSetTap>,
    reads: tokio::sync::mpsc::UnboundedSender<String>,
) {
    let mut reading: HashSet<String> = HashSet::new();
    let mut apply =
        |state: &mut ClusterState, reading: &mut HashSet<String>, delivered| match delivered {
            Delivered::SidecarSet(event) => {
                let event = map_event(event, as_admitted);
                if let Some(tap) = &mut tap {
                    tap(&event);
                }
                state.sidecarset_event(event)
            }
            Delivered::Namespace(event) => state.namespace_event(*event),
            Delivered::Revision(event) => state.revision_event(event),
            Delivered::RevisionContent(Ok(revision)) => {
                reading.remove(revision.held.name.as_ref());
                state.revision_content(*revision)
            }
            Delivered::RevisionContent(Err(name)) => {
                reading.remove(&name);
                false
            }
        };
    while let Some(delivered) = queue.blocking_recv() {
        let mut due = apply(&mut state, &mut reading, delivered);
        while let Ok(delivered) = queue.try_recv() {
            due |= apply(&mut state, &mut reading, delivered);
        }
        for name in state.missing_content() {
            if reading.insert(name.clone()) {
                let _ = reads.send(name);
            }
        }
        if due && let Some(snapshot) = state.snapshot() {
            catalogue.store(snapshot.catalogue.clone());
            on_snapshot(&snapshot);
        }
    }
}
