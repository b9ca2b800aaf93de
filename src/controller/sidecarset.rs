//! The SidecarSet controller: the I/O around [`crate::rollout`] and [`crate::inplace`].
//!
//! Each reconcile of a SidecarSet reads the shared pod and namespace stores (handles, never
//! copies), asks the planner for the round's work ([`rollout::round_actions`]) and executes it:
//! the status write, the in-flight multi-batch updates to move forward, the pods to mark, reset
//! and upgrade, the events, and when to look again. All progress lives in pod annotations and the
//! SidecarSet status, so a restarted controller carries on where it stopped.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use futures::FutureExt;
use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Namespace, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::events::Event;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Resource, ResourceExt};
use serde_json::json;

use super::events::EventRecorder;
use super::guarded_watch::UndecodableReporter;
use super::own_writes::OwnWrites;
use super::runtime::Term;
use super::workload::ApiError;
use super::{pod_cache, pod_write};
use crate::api::{SidecarSet, keys};
use crate::inplace::{self, SIDECARSET_ENGINE as ENGINE, Step, Write};
use crate::k8s::retry::{Attempt, again_on_conflict, is_conflict, retry_on_conflict};
use crate::k8s::selector;
use crate::k8s::shared::Shared;
use crate::podmarks::{EngineOwner, PodSummary, PodView};
use crate::rollout::round::{self, FAILED_REQUEUE, IN_FLIGHT_REQUEUE, NOT_SYNCED_REQUEUE};
use crate::rollout::{self, PlannedEvent, Subject, UpgradeRoute};
use crate::source::history::SharedRevisions;

pub mod conditions;
pub mod feed;
pub mod history;
pub mod refusals;
pub mod safety_net;

pub use feed::SidecarSetFeed;

#[derive(Debug, thiserror::Error)]
pub enum SidecarSetError {
    #[error(transparent)]
    Rollout(#[from] rollout::RolloutError),
    #[error("pod {pod}: {source}")]
    Upgrade {
        pod: String,
        source: rollout::UpgradeError,
    },
    #[error("pod {pod}: {source}")]
    Engine {
        pod: String,
        source: inplace::EngineError,
    },
    #[error(transparent)]
    Api(#[from] ApiError),
    #[error("pod {pod}: still conflicting after {attempts} attempts")]
    Conflicts { pod: String, attempts: usize },
    #[error("sidecarset {sidecarset}: its conditions still conflict after {attempts} attempts")]
    ConditionConflicts { sidecarset: String, attempts: usize },
    #[error("sidecarset {sidecarset}: cannot create a revision after {collisions} hash collisions")]
    Collisions { sidecarset: String, collisions: i32 },
}

/// Conflict retries for one pod write, each from a fresh read.
const CONFLICT_ATTEMPTS: usize = 5;
/// Conflict retries of the `SidecarSetUpgradable` condition, which every SidecarSet of a pod
/// writes: enough for the sets that reconcile at once to take turns.
const UPGRADABLE_ATTEMPTS: usize = 20;
/// The mean pause before a condition write that conflicted is tried again.
const CONFLICT_BACKOFF: std::time::Duration = std::time::Duration::from_millis(20);

/// The SidecarSets a pod event concerns: those named in its injected list, and those whose
/// selector matches its labels (a new pod, or one whose labels moved it in or out).
pub fn sidecarsets_for_pod(pod: &Pod, sets: &[Arc<Shared<SidecarSet>>]) -> BTreeSet<String> {
    let mut names: BTreeSet<String> = pod
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(keys::SIDECARSET_INJECTED_LIST))
        .into_iter()
        .flat_map(|list| list.split(','))
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(str::to_string)
        .collect();
    for set in sets {
        let matches = set.spec.selector.as_ref().is_some_and(|s| {
            selector::matches(s, pod.metadata.labels.as_ref(), "spec.selector").unwrap_or(false)
        });
        if matches {
            names.insert(set.name().to_string());
        }
    }
    names
}

pub struct Context {
    pub client: kube::Client,
    pub pods: Store<Pod>,
    /// The planner's summaries of the same pods.
    pub summaries: Store<PodSummary>,
    pub namespaces: Store<Namespace>,
    pub recorder: EventRecorder,
    pub metrics: Arc<crate::metrics::Metrics>,
    /// The resourceVersion each status write returned, until the cache shows it.
    pub own_writes: Mutex<OwnWrites>,
    /// The SidecarSet revisions, as watched ([`feed::SidecarSetFeed::revisions`]).
    pub revisions: SharedRevisions,
    /// Where they live: the manager's namespace.
    pub revision_namespace: String,
    /// Every SidecarSet, as the controller's feed holds them (the safety net looks up canaries).
    pub sidecarsets: Store<Shared<SidecarSet>>,
    /// Which of them are canaries of which set ([`feed::CanaryIndex`]).
    pub canaries: feed::CanaryIndex,
    /// The pods the safety net told about ([`safety_net`]).
    pub told: safety_net::Told,
}

impl Context {
    /// The record of our own writes, locked (poisoned: a reconcile panicked, nothing sane left).
    fn lock_own_writes(&self) -> std::sync::MutexGuard<'_, OwnWrites> {
        self.own_writes.lock().expect("own writes lock")
    }
}

/// The component this controller's events carry, as Kruise names it.
pub const COMPONENT: &str = "sidecarset-controller";

/// Runs until the term ends. `sidecarsets` is the process's one SidecarSet store (fed by the
/// catalogue's watch, or by [`spawn_own_feed`]); `pod_events` / `namespace_events` are
/// subscriptions to the shared reflectors whose stores are in `context`.
pub async fn run(
    context: Arc<Context>,
    sidecarsets: &SidecarSetFeed,
    pod_events: impl futures::Stream<Item = Arc<Pod>> + Send + 'static,
    namespace_events: impl futures::Stream<Item = Arc<Namespace>> + Send + 'static,
    term: &Term,
) {
    let store = sidecarsets.store();
    let reporting = refusals::report(
        context.clone(),
        sidecarsets.refusals(),
        store.clone(),
        term.end().clone(),
    );
    let forgetting = safety_net::forget_deleted(context.clone(), store.clone(), term.end().clone());
    let for_pods = store.clone();
    let for_namespaces = store.clone();
    let controller = Controller::for_shared_stream(sidecarsets.triggers(), store)
        .watches_shared_stream(pod_events, move |pod| {
            sidecarsets_for_pod(&pod, &for_pods.state())
                .into_iter()
                .map(|name| ObjectRef::new(&name))
        })
        .watches_shared_stream(namespace_events, move |_ns| {
            for_namespaces
                .state()
                .iter()
                .filter(|s| s.spec.namespace_selector.is_some())
                .map(|s| ObjectRef::from_obj(s.as_ref()))
                .collect::<Vec<_>>()
        });
    let reconciling = term.run(
        COMPONENT,
        controller,
        reconcile,
        error_policy,
        context.clone(),
    );
    futures::join!(reconciling, reporting, forgetting);
    safety_net::forget_everything(&context);
}

/// The SidecarSet feed of a process without the catalogue's watch (`kruise-webhook controller`):
/// a list and watch of its own on `client` until `shutdown`, decoded on a thread of its own, and
/// a watch of the revision history in `namespace` (the manager's). Without the catalogue,
/// nothing is reported as not served.
pub fn spawn_own_feed(
    client: kube::Client,
    reporter: UndecodableReporter,
    namespace: &str,
    shutdown: tokio_util::sync::CancellationToken,
) -> SidecarSetFeed {
    let revisions = crate::source::history::shared();
    let (_, refusals) = tokio::sync::watch::channel(Default::default());
    let (feed, mut writer) = feed::feed(reporter, revisions.clone(), refusals);
    let history = crate::source::watch::HistoryWatch {
        namespace: namespace.to_string(),
        revisions,
    };
    crate::source::watch::spawn_revisions(client.clone(), history, shutdown.clone());
    crate::source::watch::spawn_sidecarsets(client, move |event| writer.apply(event), shutdown);
    feed
}

fn error_policy(
    set: Arc<Shared<SidecarSet>>,
    error: &SidecarSetError,
    _context: Arc<Context>,
) -> Action {
    tracing::warn!(sidecarset = set.name(), %error, "reconcile failed");
    Action::requeue(FAILED_REQUEUE)
}

fn api_error(what: impl Into<String>) -> impl FnOnce(kube::Error) -> SidecarSetError {
    super::workload::api_error(what)
}

fn rfc3339(now: Timestamp) -> String {
    now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// `set` with the status's `latestRevision` and `collisionCount` those the history registered.
fn with_latest_revision(set: &SidecarSet, registered: history::Registered) -> SidecarSet {
    let mut current = set.clone();
    let status = current.status.get_or_insert_default();
    status.latest_revision = Some(registered.latest);
    status.collision_count = Some(registered.collision_count);
    current
}

async fn reconcile(
    set: Arc<Shared<SidecarSet>>,
    context: Arc<Context>,
) -> Result<Action, SidecarSetError> {
    let stored: &SidecarSet = &set;
    // Before the first full list a store looks empty, which would write matchedPods 0.
    let synced = context.pods.wait_until_ready().now_or_never().is_some()
        && context
            .summaries
            .wait_until_ready()
            .now_or_never()
            .is_some()
        && context
            .namespaces
            .wait_until_ready()
            .now_or_never()
            .is_some();
    if !synced {
        return Ok(Action::requeue(NOT_SYNCED_REQUEUE));
    }
    // A status computed from a SidecarSet older than our last write of it would undo that write.
    let behind = context.lock_own_writes().behind(
        set.name(),
        set.meta().resource_version.as_deref(),
        Instant::now(),
    );
    if let Some(left) = behind {
        return Ok(Action::requeue(left.min(IN_FLIGHT_REQUEUE)));
    }
    let summaries = pod_cache::in_memory_order(context.summaries.state());
    let namespaces = namespace_labels_by_name(&context.namespaces.state());
    // Before the rollout's status write, whose new resourceVersion would make its guarded
    // condition write conflict; a failure of it holds no rollout back.
    let net = safety_net::check(&context, stored, &summaries, &namespaces).await;
    if let Err(error) = &net {
        tracing::warn!(sidecarset = set.name(), %error, "safety net not reported; trying again");
    }
    let matched = rollout::matched_pods(&set, &summaries, |ns| namespaces.get(ns))?;
    // The latest revision first: the status names it, and so does every pod upgraded now.
    let registered = history::register(&context, &set, &matched).await?;
    let current = with_latest_revision(&set, registered);
    let set = &current;
    let round = rollout::round_actions(stored, &matched, rollout::plan_round(set, &matched));
    if let Some(status) = &round.status {
        write_status(&context, set, status).await?;
    }
    let revision = round.revision.as_deref();
    let mut engine_going = false;
    if let Some(revision) = revision {
        for summary in chosen(&matched, &round.drive) {
            // A finished update keeps its state on the pod: nothing to drive, and the cache no
            // longer holds the pod (`pod_cache::held`), so it is not read either.
            if summary.engine_at_rest(EngineOwner::SidecarSet) {
                continue;
            }
            if let Some(pod) = held_or_read(&context, summary).await? {
                engine_going |= drive_engine(&context, &pod, revision).await?;
            }
        }
    }
    for summary in chosen(&matched, &round.not_upgradable) {
        mark_not_upgradable(&context, set, summary).await?;
    }
    let now = rfc3339(Timestamp::now());
    for summary in chosen(&matched, &round.reset_idle) {
        reset_idle(&context, set, &PodId::of(summary), &now).await?;
    }
    for summary in chosen(&matched, &round.upgrade) {
        upgrade(&context, set, &PodId::of(summary), revision).await?;
    }
    let after = round.requeue_after(engine_going);
    let after = match (net, after) {
        (Err(_), after) => Some(after.map_or(FAILED_REQUEUE, |a| a.min(FAILED_REQUEUE))),
        (Ok(()), after) => after,
    };
    Ok(match after {
        Some(after) => Action::requeue(after),
        None => Action::await_change(),
    })
}

/// Writes the status through the status subresource and records the resourceVersion it returned.
async fn write_status(
    context: &Context,
    set: &SidecarSet,
    status: &crate::api::SidecarSetStatus,
) -> Result<(), SidecarSetError> {
    let api: Api<SidecarSet> = Api::all(context.client.clone());
    let mut body = serde_json::to_value(status).unwrap_or_default();
    if let Some(map) = body.as_object_mut() {
        // A merge patch keeps fields it does not mention: clear a count that went back to zero.
        if status.updated_ready_pods.is_none() {
            map.insert("updatedReadyPods".into(), serde_json::Value::Null);
        }
        // The conditions are the refusal reporter's (`refusals`): never written from a reading
        // that may predate its last write.
        map.remove("conditions");
    }
    let written = api
        .patch_status(
            set.name(),
            &PatchParams::default(),
            &Patch::Merge(json!({ "status": body })),
        )
        .await
        .map_err(api_error(format!("sidecarset {} status", set.name())))?;
    context.lock_own_writes().wrote(
        set.name(),
        written.metadata.resource_version.as_deref(),
        Instant::now(),
    );
    Ok(())
}

/// The pods the planner chose by index into `matched`.
fn chosen<'a>(
    matched: &'a [Arc<PodSummary>],
    indices: &'a [usize],
) -> impl Iterator<Item = &'a PodSummary> + 'a {
    indices
        .iter()
        .filter_map(|&i| matched.get(i).map(Arc::as_ref))
}

/// A pod by the identity its summary (or the pod itself) holds.
struct PodId<'a> {
    namespace: &'a str,
    name: &'a str,
}

impl<'a> PodId<'a> {
    fn of(pod: &'a impl PodView) -> Self {
        PodId {
            namespace: pod.namespace(),
            name: pod.name(),
        }
    }

    fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    fn api(&self, context: &Context) -> Api<Pod> {
        let namespace = if self.namespace.is_empty() {
            "default"
        } else {
            self.namespace
        };
        Api::namespaced(context.client.clone(), namespace)
    }
}

/// The pod behind `summary`: the cache's pruned copy when it holds one
/// ([`super::pod_cache::held`]), else the stored pod, read; `None` once it is gone.
async fn held_or_read(
    context: &Context,
    summary: &PodSummary,
) -> Result<Option<Arc<Pod>>, SidecarSetError> {
    if let Some(pod) = context.pods.get(&pod_cache::store_key(summary)) {
        return Ok(Some(pod));
    }
    let id = PodId::of(summary);
    let read = id.api(context).get_opt(id.name).await;
    Ok(read.map_err(api_error(id.key()))?.map(Arc::new))
}

fn pod_key(pod: &Pod) -> String {
    PodId::of(pod).key()
}

/// The stored pod `id`, read again.
async fn read_fresh(api: &Api<Pod>, id: &PodId<'_>) -> Result<Pod, SidecarSetError> {
    let fresh = api.get(id.name).await;
    fresh.map_err(api_error(id.key()))
}

/// Sends one write as a patch against `read`, the pod it was decided on (see [`pod_write`]);
/// returns the pod the apiserver answered with (`read` itself when nothing changed).
async fn send(api: &Api<Pod>, read: &Pod, write: Write<'_>) -> Result<Pod, kube::Error> {
    let (target, subresource_status) = match write {
        Write::Pod(pod) => (pod, false),
        Write::Status(pod) => (pod, true),
    };
    let Some(patch) = pod_write::guarded_patch(read, target).map_err(kube::Error::SerdeError)?
    else {
        return Ok(read.clone());
    };
    let name = read.name_any();
    let patch = Patch::<()>::Json(patch);
    if subresource_status {
        api.patch_status(&name, &PatchParams::default(), &patch)
            .await
    } else {
        api.patch(&name, &PatchParams::default(), &patch).await
    }
}

/// Moves an in-flight multi-batch update forward (next batch, gate True). Returns whether the
/// update is still going.
async fn drive_engine(
    context: &Context,
    cached: &Pod,
    revision: &str,
) -> Result<bool, SidecarSetError> {
    let id = &PodId::of(cached);
    let api = &id.api(context);
    // Decided on the cached pod first: most rounds only wait. A write is decided again on a
    // fresh read, since the cache holds a pruned copy that may also lag behind; after a write,
    // the next step is decided on the pod the apiserver answered with.
    let still_going =
        retry_on_conflict(CONFLICT_ATTEMPTS, Cow::Borrowed(cached), |pod| async move {
            let step =
                inplace::next_step(&pod, None, &ENGINE, Timestamp::now()).map_err(|source| {
                    SidecarSetError::Engine {
                        pod: pod_key(&pod),
                        source,
                    }
                })?;
            let Some(write) = step.write() else {
                let going = !matches!(step, Step::Idle)
                    && rollout::engine::engine_in_flight(pod.as_ref(), revision);
                return Ok(Attempt::Done(going));
            };
            if let Cow::Borrowed(_) = pod {
                return Ok(Attempt::Again(Cow::Owned(read_fresh(api, id).await?)));
            }
            if let Step::PatchBatch { containers, .. } = &step {
                tracing::info!(pod = pod_key(&pod), ?containers, "next sidecar batch");
            }
            match send(api, &pod, write).await {
                Ok(next) => Ok(Attempt::Again(Cow::Owned(next))),
                Err(error) if is_conflict(&error) => {
                    Ok(Attempt::Again(Cow::Owned(read_fresh(api, id).await?)))
                }
                Err(error) => Err(api_error(pod_key(&pod))(error)),
            }
        })
        .await?;
    // Attempts used up with writes still to make: the update is going on.
    Ok(still_going.unwrap_or(true))
}

/// Upgrades one pod from a fresh read. A single batch is written at once, as OpenKruise does;
/// several launch priorities go through the in-place engine, first batch now, later batches in
/// later rounds.
async fn upgrade(
    context: &Context,
    set: &SidecarSet,
    id: &PodId<'_>,
    revision: Option<&str>,
) -> Result<(), SidecarSetError> {
    let api = &id.api(context);
    let key = &id.key();
    let written = retry_on_conflict(CONFLICT_ATTEMPTS, (), |()| async move {
        let fresh = read_fresh(api, id).await?;
        let now = Timestamp::now();
        let upgrade = rollout::upgrade_pod(&fresh, set, &rfc3339(now)).map_err(|source| {
            SidecarSetError::Upgrade {
                pod: key.clone(),
                source,
            }
        })?;
        let route = rollout::upgrade_route(&upgrade, revision, inplace::in_flight_revision(&fresh));
        let sent = match route {
            UpgradeRoute::WaitFor { other } => {
                tracing::info!(pod = key, other, "waits for an in-place update in progress");
                return Ok(Attempt::Done(None));
            }
            UpgradeRoute::Whole => send(api, &fresh, Write::Pod(&upgrade.pod)).await,
            UpgradeRoute::Engine { base, target } => {
                let step =
                    inplace::next_step(&base, Some(&target), &ENGINE, now).map_err(|source| {
                        SidecarSetError::Engine {
                            pod: key.clone(),
                            source,
                        }
                    })?;
                match step.write() {
                    // The readiness gate went False first; the spec write follows from a fresh read.
                    Some(write @ Write::Status(_)) => {
                        again_on_conflict(send(api, &fresh, write).await)
                            .map_err(api_error(key))?;
                        return Ok::<_, SidecarSetError>(Attempt::Again(()));
                    }
                    Some(write) => send(api, &fresh, write).await,
                    None => {
                        tracing::warn!(pod = key, ?step, "in-place engine refused the upgrade");
                        return Ok(Attempt::Done(None));
                    }
                }
            }
        };
        let written = again_on_conflict(sent).map_err(api_error(key))?;
        Ok(written.map(|updated| Some((updated, upgrade))))
    })
    .await?;
    let Some(written) = written else {
        return Err(SidecarSetError::Conflicts {
            pod: key.clone(),
            attempts: CONFLICT_ATTEMPTS,
        });
    };
    let Some((updated, upgrade)) = written else {
        return Ok(());
    };
    tracing::info!(
        pod = key,
        sidecarset = set.name(),
        images = ?round::image_changes(&upgrade),
        "upgraded sidecars"
    );
    publish(context, set, &updated, round::upgraded_event(set, &upgrade)).await;
    set_upgradable(api, id, Some(updated), set.name(), true).await?;
    Ok(())
}

async fn reset_idle(
    context: &Context,
    set: &SidecarSet,
    id: &PodId<'_>,
    now: &str,
) -> Result<(), SidecarSetError> {
    let api = &id.api(context);
    let key = &id.key();
    // The last pod read, for the failure event's reference.
    let last_read = Mutex::new(None);
    let last_read_ref = &last_read;
    let done = retry_on_conflict(CONFLICT_ATTEMPTS, (), |()| async move {
        let fresh = read_fresh(api, id).await?;
        let reset = rollout::reset_idle_copies(&fresh, set, now);
        if reset == fresh {
            return Ok(Attempt::Done(None));
        }
        let sent = send(api, &fresh, Write::Pod(&reset)).await.map(Some);
        *last_read_ref.lock().unwrap_or_else(|e| e.into_inner()) = Some(fresh);
        again_on_conflict(sent).map_err(api_error(key))
    })
    .await;
    let failure = match done {
        Ok(Some(Some(reset))) => {
            publish(context, set, &reset, round::idle_reset_event()).await;
            return Ok(());
        }
        Ok(Some(None)) => return Ok(()),
        Ok(None) => SidecarSetError::Conflicts {
            pod: key.clone(),
            attempts: CONFLICT_ATTEMPTS,
        },
        Err(error) => error,
    };
    let last_read = last_read.into_inner().unwrap_or_else(|e| e.into_inner());
    if let Some(read) = &last_read {
        let event = round::idle_reset_failed_event(&failure.to_string());
        publish(context, set, read, event).await;
    }
    Err(failure)
}

/// Records on the pod that `set` cannot upgrade it in place. Decided on the summary first: once
/// recorded, later rounds send nothing; a write is decided again on the stored pod.
async fn mark_not_upgradable(
    context: &Context,
    set: &SidecarSet,
    summary: &PodSummary,
) -> Result<(), SidecarSetError> {
    let now = Time(Timestamp::now());
    if rollout::upgradable_condition(summary, set.name(), false, &now).is_none() {
        return Ok(());
    }
    let id = PodId::of(summary);
    let api = id.api(context);
    if let Some(pod) = set_upgradable(&api, &id, None, set.name(), false).await? {
        for event in round::not_upgradable_events(set, &pod_key(&pod)) {
            publish(context, set, &pod, event).await;
        }
    }
    Ok(())
}

/// Records `sidecarset`'s verdict in the pod's `SidecarSetUpgradable` condition, whose message
/// holds the verdicts of every SidecarSet of the pod. Decided on `read` (the pod as a write just
/// answered) or a fresh read, and sent as a patch guarded by that pod's resourceVersion
/// ([`pod_write`]): a set that wrote its entry meanwhile makes the write conflict, and it is
/// decided again on a fresh read, so concurrent sets never erase each other's entries. Nothing
/// is sent when the condition already says it. Returns the pod written, if a write was needed.
async fn set_upgradable(
    api: &Api<Pod>,
    id: &PodId<'_>,
    read: Option<Pod>,
    sidecarset: &str,
    upgradable: bool,
) -> Result<Option<Pod>, SidecarSetError> {
    let key = &id.key();
    let written = retry_on_conflict(UPGRADABLE_ATTEMPTS, read, |read| async move {
        let pod = match read {
            Some(pod) => pod,
            None => match api.get_opt(id.name).await.map_err(api_error(key))? {
                Some(pod) => pod,
                None => return Ok(Attempt::Done(None)),
            },
        };
        let now = Time(Timestamp::now());
        let Some(marked) = rollout::with_upgradable_condition(&pod, sidecarset, upgradable, &now)
        else {
            return Ok(Attempt::Done(None));
        };
        match send(api, &pod, Write::Status(&marked)).await {
            Ok(_) => Ok(Attempt::Done(Some(marked))),
            Err(error) if is_conflict(&error) => {
                // Many sets may write one pod at once: spread their next attempts.
                tokio::time::sleep(CONFLICT_BACKOFF.mul_f64(fastrand::f64() + 0.5)).await;
                Ok(Attempt::Again(None))
            }
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(Attempt::Done(None)),
            Err(error) => Err(api_error(key)(error)),
        }
    })
    .await?;
    written.ok_or_else(|| SidecarSetError::Conflicts {
        pod: key.clone(),
        attempts: UPGRADABLE_ATTEMPTS,
    })
}

/// Records an event about the SidecarSet.
async fn publish_about_set(context: &Context, set: &SidecarSet, planned: PlannedEvent) {
    let reference = set.object_ref(&());
    context
        .recorder
        .record(&reference, &kube_event(planned))
        .await;
}

fn kube_event(planned: PlannedEvent) -> Event {
    Event {
        type_: planned.type_,
        reason: planned.reason.into(),
        note: Some(planned.note),
        action: planned.action.into(),
        secondary: None,
    }
}

/// Records an event the planner asked for, about `pod` or the SidecarSet.
async fn publish(context: &Context, set: &SidecarSet, pod: &Pod, planned: PlannedEvent) {
    let reference = match planned.about {
        Subject::Pod => pod.object_ref(&()),
        Subject::SidecarSet => set.object_ref(&()),
    };
    context
        .recorder
        .record(&reference, &kube_event(planned))
        .await;
}

/// Namespace labels as the webhooks see them: with the `kubernetes.io/metadata.name` label that
/// pre-1.21 apiservers do not set and namespace-pinned SidecarSets match on.
fn namespace_labels_by_name(namespaces: &[Arc<Namespace>]) -> BTreeMap<String, selector::Labels> {
    namespaces
        .iter()
        .map(|ns| {
            let name = ns.name_any();
            let labels = selector::namespace_labels(name.clone(), ns.metadata.labels.clone());
            (name, labels)
        })
        .collect()
}

#[cfg(test)]
mod tests;
