//! The CloneSet controller: the I/O around [`crate::cloneset`].
//!
//! Each reconcile of a CloneSet waits until the pod cache shows its own earlier writes
//! ([`super::expectations`]), reads its pods from the shared pod cache (adopting and releasing
//! as [`crate::cloneset::claim`] says) and its ControllerRevisions from the apiserver, makes
//! sure the update revision exists, plans one round and sends what the plan says. The cache
//! holds most pods as their summaries only ([`crate::cloneset::listed`]); when the plan acts on
//! such a pod it names it, the shell reads it from the apiserver and plans again with it whole
//! (at most three plans a round). The plan's writes are: pods created
//! through the API (so admission webhooks apply to them), deleted, or patched with
//! resourceVersion-guarded JSON patches ([`super::pod_write`]); then the status through the
//! status subresource, the `podsToDelete` clean-up and history truncation. All progress lives in
//! the pods and the CloneSet, so a new leader carries on where the last stopped.
//!
//! PVCs of `volumeClaimTemplates` come from a cache of their own: a metadata-only watch of the
//! PVCs carrying the instance-id label (names, labels, owners and versions are all the planner
//! reads). A list per reconcile would be one more apiserver round trip each time any pod of the
//! CloneSet changes; the cache costs a few hundred bytes per PVC, and the same expectations as for
//! pods keep a slow cache from creating or deleting a PVC twice. Each new pod's missing PVCs are
//! created just before it (AlreadyExists counts as done), a deleted pod's PVCs once its deletion
//! is accepted.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::{FutureExt, StreamExt};
use jiff::Timestamp;
use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{ObjectReference, PersistentVolumeClaim, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, DeleteParams, ListParams, PartialObjectMeta, Patch, PatchParams, PostParams};
use kube::runtime::controller::{Action as Requeue, Controller};
use kube::runtime::events::{Event as KubeEvent, EventType, Recorder};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Resource, ResourceExt};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::expectations::{Expectations, Seen};
use super::guarded_watch::{self, UndecodableReporter};
use super::{pod_cache, pod_write};
use crate::api::cloneset::{CloneSet, names_cloneset};
use crate::cloneset::pvc::{ClaimPlan, HandOver};
use crate::cloneset::{
    self as core, Action, ListedPod, Plan, PodWrite, Purpose, pod, revision, status,
};
use crate::inplace;
use crate::metrics::Metrics;
use crate::podmarks::{PodSummary, PodView};

mod adoption;
mod claims;
mod history;
mod observe;

use adoption::{Claimed, claim_pods, clonesets_to_sync};
use claims::{clean_up_claims, create_claims, delete_claims, owned_claims};
use history::{ensure_update_revision, list_history};

#[derive(Debug, thiserror::Error)]
pub enum CloneSetError {
    #[error("{what}: {source}")]
    Api { what: String, source: kube::Error },
    #[error(transparent)]
    Plan(#[from] core::PlanError),
    #[error(transparent)]
    Revision(#[from] revision::RevisionError),
    #[error("cloneset {0}: cannot create a revision after {1} hash collisions")]
    Collisions(String, i32),
    #[error("cloneset {0}: cannot adopt pods: {1}")]
    CannotAdopt(String, String),
}

/// How many times a round is planned again with the pods it asked to read whole.
const MAX_PLANS: usize = 3;
/// How many pods are read from the apiserver at once.
const CONCURRENT_READS: usize = 16;
/// When nothing happens, look again after this long while a rollout is unfinished.
const IN_FLIGHT_REQUEUE: Duration = Duration::from_secs(15);
/// After a conflicting write: the cache is about to deliver the newer pod.
const CONFLICT_REQUEUE: Duration = Duration::from_secs(1);
const MAX_COLLISIONS: i32 = 20;

pub struct Context {
    pub client: kube::Client,
    /// The shared store of the pods some controller reads whole (pruned; writes are patches,
    /// so pruned fields survive): of a CloneSet's, those every round reads whole.
    pub pods: Store<Pod>,
    /// Every pod's summary: what a round reads of the others.
    pub summaries: Store<PodSummary>,
    pub recorder: Recorder,
    pub expectations: Mutex<Expectations>,
    /// Where stored CloneSets the types refuse are counted.
    pub metrics: Arc<Metrics>,
}

impl Context {
    /// The expectations, locked (a poisoned lock means a reconcile panicked: nothing sane is left).
    fn lock_expectations(&self) -> std::sync::MutexGuard<'_, Expectations> {
        self.expectations.lock().expect("expectations lock")
    }
}

/// What the cache keeps of a PVC.
type ClaimMeta = PartialObjectMeta<PersistentVolumeClaim>;

/// Expectations share one name space per CloneSet: PVC names get this prefix (a pod name cannot
/// contain `/`).
const CLAIM_KEY: &str = "persistentvolumeclaim/";

fn claim_key(name: &str) -> String {
    format!("{CLAIM_KEY}{name}")
}

/// What a reconcile works with: the shared context and the PVC cache.
pub struct Shell {
    context: Arc<Context>,
    claims: Store<ClaimMeta>,
}

/// The watch on CloneSets: a stored CloneSet the types refuse is reported and skipped, never
/// fatal to the others.
fn cloneset_controller(context: &Context) -> Controller<CloneSet> {
    let reporter =
        UndecodableReporter::new::<CloneSet>(context.metrics.clone(), context.recorder.clone());
    let (store, clonesets) = guarded_watch::watch::<CloneSet>(
        context.client.clone(),
        watcher::Config::default().any_semantic(),
        reporter,
    );
    Controller::for_stream(clonesets, store)
}

/// The CloneSet that controls a pod, if any.
pub fn owner_of(pod: &Pod) -> Option<ObjectRef<CloneSet>> {
    controlling_cloneset(&pod.metadata)
}

/// The CloneSet that controls an object (a pod, a PVC), if any.
fn controlling_cloneset(meta: &ObjectMeta) -> Option<ObjectRef<CloneSet>> {
    let owner = meta
        .owner_references
        .iter()
        .flatten()
        .find(|o| o.controller == Some(true))?;
    let namespace = meta.namespace.as_deref()?;
    names_cloneset(owner).then(|| ObjectRef::new(&owner.name).within(namespace))
}

/// Runs until `shutdown`; `pod_events` is a subscription to the watch behind `context.pods`,
/// deleted pods included (a pod deleted behind the CloneSet's back is replaced).
pub async fn run(
    context: Arc<Context>,
    pod_events: impl futures::Stream<Item = Arc<Pod>> + Send + 'static,
    shutdown: CancellationToken,
) {
    let (claims, claim_writer) = reflector::store::<ClaimMeta>();
    // The reflector runs inside the trigger stream, so it lives exactly as long as the controller.
    let claim_events = reflector::reflector(
        claim_writer,
        watcher(
            Api::<ClaimMeta>::all(context.client.clone()),
            watcher::Config::default()
                .labels(pod::INSTANCE_ID)
                .any_semantic(),
        ),
    )
    .default_backoff()
    .touched_objects();
    let controller = cloneset_controller(&context);
    let (pod_observer, claim_observer) = (context.clone(), context.clone());
    let claims_held = claims.clone();
    let shell = Arc::new(Shell { context, claims });
    controller
        .watches_shared_stream(pod_events, move |pod| {
            observe::pod_event(&pod_observer, &pod);
            clonesets_to_sync(&pod)
        })
        .watches_stream(claim_events, move |claim| {
            observe::claim_event(&claim_observer, &claims_held, &claim);
            controlling_cloneset(&claim.metadata)
        })
        .graceful_shutdown_on(shutdown.cancelled_owned())
        .run(reconcile, error_policy, shell)
        .for_each(|result| async move {
            if let Err(error) = result {
                tracing::debug!(%error, "cloneset reconcile");
            }
        })
        .await;
}

fn error_policy(set: Arc<CloneSet>, error: &CloneSetError, _shell: Arc<Shell>) -> Requeue {
    tracing::warn!(cloneset = set.name_any(), %error, "reconcile failed");
    Requeue::requeue(Duration::from_secs(5))
}

fn api_error(what: impl Into<String>) -> impl FnOnce(kube::Error) -> CloneSetError {
    let what = what.into();
    move |source| CloneSetError::Api { what, source }
}

/// An apiserver error as Go's `err.Error()` reads (the Status message), for conditions.
fn error_text(error: &kube::Error) -> String {
    match error {
        kube::Error::Api(status) => status.message.clone(),
        other => other.to_string(),
    }
}

fn status_code(error: &kube::Error) -> Option<u16> {
    match error {
        kube::Error::Api(status) => Some(status.code),
        _ => None,
    }
}

fn set_key(set: &CloneSet) -> String {
    format!(
        "{}/{}",
        set.metadata.namespace.as_deref().unwrap_or(""),
        set.name_any()
    )
}

/// The pods whose ownerReferences name this CloneSet (by uid), from the cache: what OpenKruise
/// lists for the claim step. Each is its summary, and the held pod where the cache holds it at
/// the summary's version.
fn owned_pods(context: &Context, set: &CloneSet) -> Vec<ListedPod> {
    let namespace = set.metadata.namespace.as_deref().unwrap_or("");
    let uid = set.metadata.uid.as_deref().unwrap_or("");
    let mut pods: Vec<ListedPod> = context
        .summaries
        .state()
        .into_iter()
        .filter(|p| p.namespace() == namespace && p.owner_uids().any(|o| o == uid))
        .map(|summary| {
            let whole = context
                .pods
                .get(&pod_cache::store_key(&summary))
                .filter(|pod| pod.resource_version() == summary.resource_version());
            ListedPod { summary, whole }
        })
        .collect();
    pods.sort_by(|a, b| a.name().cmp(b.name()));
    pods
}

/// Reads `names` from the apiserver into `pods`, whole. A pod gone, or one `keep` refuses, leaves
/// the list.
async fn read_whole(
    context: &Context,
    set: &CloneSet,
    names: &[String],
    pods: &mut Vec<ListedPod>,
    keep: impl Fn(&Pod) -> bool,
) -> Result<(), CloneSetError> {
    let namespace = set.metadata.namespace.as_deref().unwrap_or("");
    let api: Api<Pod> = Api::namespaced(context.client.clone(), namespace);
    let reads = futures::stream::iter(names.iter().cloned())
        .map(|name| {
            let api = api.clone();
            async move {
                let read = api.get_opt(&name).await;
                (name, read)
            }
        })
        .buffer_unordered(CONCURRENT_READS)
        .collect::<Vec<_>>()
        .await;
    let mut fresh: HashMap<String, Option<ListedPod>> = HashMap::with_capacity(reads.len());
    for (name, read) in reads {
        let read = read.map_err(api_error(format!("pod {name}")))?;
        let pod = read.filter(|pod| keep(pod));
        fresh.insert(name, pod.map(|pod| ListedPod::whole(Arc::new(pod))));
    }
    pods.retain_mut(|p| match fresh.remove(p.name()) {
        None => true,
        Some(None) => false,
        Some(Some(read)) => {
            *p = read;
            true
        }
    });
    Ok(())
}

fn seen_in(meta: Option<&ObjectMeta>) -> Seen {
    match meta {
        None => Seen::Absent,
        Some(meta) => Seen::Present {
            deleting: meta.deletion_timestamp.is_some(),
            version: meta
                .resource_version
                .as_deref()
                .and_then(|v| v.parse().ok()),
        },
    }
}

/// What the caches say about an expected name: a pod, or a PVC behind [`CLAIM_KEY`].
fn seen(shell: &Shell, namespace: &str, name: &str) -> Seen {
    match name.strip_prefix(CLAIM_KEY) {
        Some(claim) => {
            let cached = shell.claims.get(&ObjectRef::new(claim).within(namespace));
            seen_in(cached.as_deref().map(|c| &c.metadata))
        }
        None => {
            let cached = shell
                .context
                .summaries
                .get(&ObjectRef::new(name).within(namespace));
            match cached {
                None => Seen::Absent,
                Some(summary) => Seen::Present {
                    deleting: summary.deleting(),
                    version: summary.resource_version().parse().ok(),
                },
            }
        }
    }
}

async fn reconcile(set: Arc<CloneSet>, shell: Arc<Shell>) -> Result<Requeue, CloneSetError> {
    let context = &*shell.context;
    if context.pods.wait_until_ready().now_or_never().is_none()
        || shell.claims.wait_until_ready().now_or_never().is_none()
    {
        return Ok(Requeue::requeue(Duration::from_secs(1)));
    }
    let key = set_key(&set);
    let namespace = set.metadata.namespace.clone().unwrap_or_default();
    let waiting = context
        .lock_expectations()
        .unsatisfied(&key, Instant::now(), |name| seen(&shell, &namespace, name));
    if let Some(left) = waiting {
        // The pod events that satisfy them trigger a reconcile; this is the fallback.
        return Ok(Requeue::requeue(left.min(IN_FLIGHT_REQUEUE)));
    }
    let mut pods = match claim_pods(context, &set, &key, owned_pods(context, &set)).await? {
        Claimed::Pods(pods) => pods,
        Claimed::Stop(requeue) => return Ok(requeue),
    };
    let claims = owned_claims(&shell, &set);
    let claim_meta: Vec<&ObjectMeta> = claims.iter().map(|c| &c.metadata).collect();
    let mut history = list_history(context, &set).await?;
    let (update_revision, collision_count) =
        ensure_update_revision(context, &set, &mut history).await?;
    let now = Timestamp::now();
    let mut plans = 0;
    let mut plan = loop {
        let snapshot = core::Snapshot {
            cloneset: &set,
            pods: &pods,
            history: &history,
            update_revision: &update_revision,
            collision_count,
            now,
        };
        let plan = core::plan_with_claims(&snapshot, &claim_meta, &mut fastrand::Rng::new())?;
        plans += 1;
        if plan.needs_whole.is_empty() {
            break plan;
        }
        if plans == MAX_PLANS {
            // The pods keep changing under the round: the next one starts afresh.
            tracing::debug!(
                cloneset = key,
                "pods changed while read; planning again later"
            );
            return Ok(Requeue::requeue(CONFLICT_REQUEUE));
        }
        // Only pods the CloneSet still controls, as the claim kept them.
        let uid = set.metadata.uid.as_deref();
        let controlled = |pod: &Pod| !pod::is_active(pod) || pod.controller_uid() == uid;
        read_whole(context, &set, &plan.needs_whole, &mut pods, controlled).await?;
    };
    clean_up_claims(context, &set, &key, &plan.claims).await?;
    let executed = execute(context, &set, &key, &plan).await?;
    if let Some(message) = &executed.failed_scale {
        // OpenKruise: an error of Scale sets FailedScale in the status, written if this round
        // writes one (a condition alone is no reason to, `status::changed`).
        status::record_failure(&mut plan.status, "FailedScale", message, now);
    }
    if plan.write_status {
        write_status(context, &set, &plan).await?;
    }
    if let Some(kept) = &plan.pods_to_delete {
        let api: Api<CloneSet> = Api::namespaced(context.client.clone(), &namespace);
        let list = (!kept.is_empty()).then_some(kept);
        api.patch(
            &set.name_any(),
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"scaleStrategy": {"podsToDelete": list}}})),
        )
        .await
        .map_err(api_error(format!("cloneset {key} podsToDelete")))?;
    }
    let revisions: Api<ControllerRevision> = Api::namespaced(context.client.clone(), &namespace);
    for name in &plan.revisions_to_delete {
        match revisions.delete(name, &DeleteParams::default()).await {
            Ok(_) => {}
            Err(error) if status_code(&error) == Some(404) => {}
            Err(error) => return Err(api_error(format!("controllerrevision {name}"))(error)),
        }
    }
    if let Some(message) = &plan.error {
        publish(
            context,
            &set,
            EventType::Warning,
            "FailedUpdate",
            message.clone(),
        )
        .await;
        return Ok(Requeue::requeue(Duration::from_secs(10)));
    }
    if executed.conflicted {
        return Ok(Requeue::requeue(CONFLICT_REQUEUE));
    }
    let unfinished = !plan.actions.is_empty()
        || plan.status.updated_ready_replicas != plan.status.replicas
        || i64::from(plan.status.replicas) != i64::from(set.spec.replicas.unwrap_or(1));
    Ok(match plan.requeue_after {
        Some(after) => Requeue::requeue(after.min(IN_FLIGHT_REQUEUE)),
        None if unfinished => Requeue::requeue(IN_FLIGHT_REQUEUE),
        None => Requeue::await_change(),
    })
}

/// What sending the plan's pod actions met.
struct Executed {
    /// Some write met a newer pod (409).
    conflicted: bool,
    /// The error of the first scale write (pod or PVC create or delete, scale lifecycle write)
    /// that failed.
    failed_scale: Option<String>,
}

/// Sends the plan's pod actions.
async fn execute(
    context: &Context,
    set: &CloneSet,
    key: &str,
    plan: &Plan,
) -> Result<Executed, CloneSetError> {
    let namespace = set.metadata.namespace.as_deref().unwrap_or("");
    let api: Api<Pod> = Api::namespaced(context.client.clone(), namespace);
    let claim_api: Api<PersistentVolumeClaim> = Api::namespaced(context.client.clone(), namespace);
    let creates: Vec<(&Pod, &str)> = plan
        .actions
        .iter()
        .filter_map(|a| match a {
            Action::CreatePod { pod, revision } => Some((pod.as_ref(), revision.as_str())),
            _ => None,
        })
        .collect();
    let mut failed_scale = create_slow_start(
        context,
        set,
        key,
        (&api, &claim_api),
        &creates,
        &plan.claims,
    )
    .await;
    let mut conflicted = false;
    for action in &plan.actions {
        match action {
            Action::CreatePod { .. } => {}
            Action::DeletePod { name } => {
                // OpenKruise: the PVCs of the pod's id go once the pod's deletion is accepted.
                let failure = match delete_pod(context, set, key, &api, name).await {
                    Ok(true) => match plan.claims.delete_with_pod.get(name) {
                        Some(claims) => {
                            let what = "failed to delete pvc";
                            delete_claims(context, set, key, &claim_api, claims, what).await
                        }
                        None => None,
                    },
                    Ok(false) => None,
                    Err(error) => Some(error),
                };
                failed_scale = failed_scale.or(failure);
            }
            Action::WritePod {
                before,
                writes,
                purpose,
            } => match write_pod(context, set, key, &api, before, writes, purpose).await {
                Ok(conflict) => conflicted |= conflict,
                // OpenKruise: a lifecycle write of Scale that fails is an error of Scale.
                Err(CloneSetError::Api { source, .. }) if *purpose == Purpose::ScaleLifecycle => {
                    failed_scale = failed_scale.or(Some(error_text(&source)));
                }
                Err(error) => return Err(error),
            },
            Action::Event(event) => {
                let kind = if event.warning {
                    EventType::Warning
                } else {
                    EventType::Normal
                };
                publish(context, set, kind, event.reason, event.message.clone()).await;
            }
        }
    }
    Ok(Executed {
        conflicted,
        failed_scale,
    })
}

/// Creates in batches of 1, 2, 4, …; a batch with a failure stops the rest (a quota or webhook
/// refusal would refuse them all).
/// Each pod's missing PVCs are created first; a PVC that cannot be created holds its pod back.
/// Returns the error of the batch that failed (one of them: OpenKruise keeps the first it reads).
async fn create_slow_start(
    context: &Context,
    set: &CloneSet,
    key: &str,
    (api, claim_api): (&Api<Pod>, &Api<PersistentVolumeClaim>),
    pods: &[(&Pod, &str)],
    claims: &ClaimPlan,
) -> Option<String> {
    let mut start = 0;
    let mut batch = 1;
    while start < pods.len() {
        let end = (start + batch).min(pods.len());
        let results = futures::future::join_all(pods[start..end].iter().map(|(pod, _)| {
            let name = pod.name_any();
            context.lock_expectations().expect_create(key, &name);
            let pod_claims = claims.create.get(&name).map_or(&[][..], Vec::as_slice);
            async move {
                if let Err(error) = create_claims(context, set, key, claim_api, pod_claims).await {
                    return (name, Err(error));
                }
                (name, Ok(api.create(&PostParams::default(), pod).await))
            }
        }))
        .await;
        let mut failed = None;
        for (name, result) in results {
            match result {
                Err(error) => {
                    // A PVC was refused (and reported): the pod was not sent.
                    failed.get_or_insert(error);
                    context.lock_expectations().forget(key, &name);
                }
                Ok(Ok(_)) => {
                    publish_about(
                        context,
                        set,
                        related(set, "Pod", &name),
                        EventType::Normal,
                        "SuccessfulCreate",
                        format!("succeed to create pod {name}"),
                    )
                    .await;
                }
                Ok(Err(error)) => {
                    failed.get_or_insert_with(|| error_text(&error));
                    context.lock_expectations().forget(key, &name);
                    publish_about(
                        context,
                        set,
                        related(set, "Pod", &name),
                        EventType::Warning,
                        "FailedCreate",
                        format!("failed to create pod: {error}, pod: {name}"),
                    )
                    .await;
                }
            }
        }
        if failed.is_some() {
            return failed;
        }
        start = end;
        batch *= 2;
    }
    None
}

/// `Ok(true)` when the apiserver accepted the deletion, `Ok(false)` when the pod was gone; the
/// error of a refusal.
async fn delete_pod(
    context: &Context,
    set: &CloneSet,
    key: &str,
    api: &Api<Pod>,
    name: &str,
) -> Result<bool, String> {
    context.lock_expectations().expect_delete(key, name);
    match api.delete(name, &DeleteParams::default()).await {
        Ok(_) => {
            publish_about(
                context,
                set,
                related(set, "Pod", name),
                EventType::Normal,
                "SuccessfulDelete",
                format!("succeed to delete pod {name}"),
            )
            .await;
            Ok(true)
        }
        Err(error) => {
            context.lock_expectations().forget(key, name);
            if status_code(&error) == Some(404) {
                return Ok(false);
            }
            publish_about(
                context,
                set,
                related(set, "Pod", name),
                EventType::Warning,
                "FailedDelete",
                format!("failed to delete pod {name}: {error}"),
            )
            .await;
            Err(error_text(&error))
        }
    }
}

/// Sends one pod's writes in order, each guarded by the version the previous one returned.
/// Returns `true` on a conflict (nothing more is sent for this pod).
async fn write_pod(
    context: &Context,
    set: &CloneSet,
    key: &str,
    api: &Api<Pod>,
    before: &Arc<Pod>,
    writes: &[PodWrite],
    purpose: &Purpose,
) -> Result<bool, CloneSetError> {
    let name = before.name_any();
    let mut base = Pod::clone(before);
    let mut gate_just_written = false;
    for write in writes {
        // A grace period counts from when the gate write that took the pod out of endpoints was
        // answered, not from when the round was planned (its writes of many pods take a while).
        let restamped = (gate_just_written && !write.status)
            .then(|| {
                let mut pod = Pod::clone(&write.pod);
                inplace::state::restamp_grace_start(&mut pod, Timestamp::now())
                    .is_ok_and(|changed| changed)
                    .then_some(pod)
            })
            .flatten();
        let after: &Pod = restamped.as_ref().unwrap_or(&write.pod);
        let Some(patch) =
            pod_write::guarded_patch(&base, after).map_err(|e| CloneSetError::Api {
                what: format!("pod {name}"),
                source: kube::Error::SerdeError(e),
            })?
        else {
            continue;
        };
        let patch = Patch::<()>::Json(patch);
        let sent = if write.status {
            api.patch_status(&name, &PatchParams::default(), &patch)
                .await
        } else {
            api.patch(&name, &PatchParams::default(), &patch).await
        };
        match sent {
            Ok(answer) => {
                context.lock_expectations().expect_version(
                    key,
                    &name,
                    answer.metadata.resource_version.as_deref(),
                );
                base = after.clone();
                base.metadata.resource_version = answer.metadata.resource_version;
                gate_just_written = write.status;
            }
            Err(error) if matches!(status_code(&error), Some(409 | 404)) => return Ok(true),
            Err(error) => {
                if let Purpose::InPlace { revision } = purpose {
                    publish_about(
                        context,
                        set,
                        related(set, "Pod", &name),
                        EventType::Warning,
                        "FailedUpdatePodInPlace",
                        format!(
                            "failed to update pod {name} in-place(revision {revision}): {error}"
                        ),
                    )
                    .await;
                }
                if let Purpose::Recreate { revision } = purpose {
                    publish_about(
                        context,
                        set,
                        related(set, "Pod", &name),
                        EventType::Warning,
                        "FailedUpdatePodReCreate",
                        format!("failed to patch pod specified-delete {name} for update(revision {revision}): {error}"),
                    )
                    .await;
                }
                return Err(api_error(format!("pod {name}"))(error));
            }
        }
    }
    match purpose {
        Purpose::InPlace { revision } => {
            publish_about(
                context,
                set,
                related(set, "Pod", &name),
                EventType::Normal,
                "SuccessfulUpdatePodInPlace",
                format!("successfully update pod {name} in-place(revision {revision})"),
            )
            .await;
        }
        Purpose::Recreate { revision } => {
            publish_about(
                context,
                set,
                related(set, "Pod", &name),
                EventType::Normal,
                "SuccessfulUpdatePodReCreate",
                format!(
                    "successfully patch pod {name} specified-delete for update(revision {revision})"
                ),
            )
            .await;
        }
        Purpose::Refresh | Purpose::Lifecycle | Purpose::ScaleLifecycle => {}
    }
    Ok(false)
}

async fn write_status(context: &Context, set: &CloneSet, plan: &Plan) -> Result<(), CloneSetError> {
    let namespace = set.metadata.namespace.as_deref().unwrap_or("");
    let api: Api<CloneSet> = Api::namespaced(context.client.clone(), namespace);
    api.patch_status(
        &set.name_any(),
        &PatchParams::default(),
        &Patch::Merge(json!({ "status": plan.status })),
    )
    .await
    .map_err(api_error(format!("cloneset {} status", set_key(set))))?;
    Ok(())
}

async fn publish(context: &Context, set: &CloneSet, type_: EventType, reason: &str, note: String) {
    send_event(context, set, None, type_, reason, note).await;
}

/// An event about the CloneSet that concerns one of its objects (a pod, a PVC). The object goes in
/// `related`: the recorder merges repeats of one (reason, related object) into a series, and
/// without it every pod's `SuccessfulCreate` would be folded into the first one's.
pub(super) async fn publish_about(
    context: &Context,
    set: &CloneSet,
    related: ObjectReference,
    type_: EventType,
    reason: &str,
    note: String,
) {
    send_event(context, set, Some(related), type_, reason, note).await;
}

/// A reference to the CloneSet's pod or PVC `name`, for an event's `related`.
pub(super) fn related(set: &CloneSet, kind: &str, name: &str) -> ObjectReference {
    ObjectReference {
        api_version: Some("v1".into()),
        kind: Some(kind.into()),
        namespace: set.metadata.namespace.clone(),
        name: Some(name.into()),
        ..ObjectReference::default()
    }
}

async fn send_event(
    context: &Context,
    set: &CloneSet,
    related: Option<ObjectReference>,
    type_: EventType,
    reason: &str,
    note: String,
) {
    let event = KubeEvent {
        type_,
        reason: reason.into(),
        note: Some(note),
        action: "Reconcile".into(),
        secondary: related,
    };
    super::events::record(&context.recorder, &set.object_ref(&()), &event).await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pods_map_to_their_controlling_cloneset_only() {
        let pod = |owners: serde_json::Value| -> Pod {
            serde_json::from_value(json!({
                "metadata": {"name": "p", "namespace": "ns", "ownerReferences": owners}
            }))
            .unwrap()
        };
        let owner = |kind: &str, api: &str, controller: bool| json!({"apiVersion": api, "kind": kind, "name": "cs", "uid": "u", "controller": controller});
        assert_eq!(
            owner_of(&pod(json!([owner(
                "CloneSet",
                "apps.kruise.io/v1alpha1",
                true
            )]))),
            Some(ObjectRef::new("cs").within("ns"))
        );
        assert_eq!(
            owner_of(&pod(json!([owner(
                "CloneSet",
                "apps.kruise.io/v1beta1",
                true
            )]))),
            Some(ObjectRef::new("cs").within("ns"))
        );
        assert_eq!(
            owner_of(&pod(json!([owner(
                "CloneSet",
                "apps.kruise.io/v1alpha1",
                false
            )]))),
            None
        );
        assert_eq!(
            owner_of(&pod(json!([owner("ReplicaSet", "apps/v1", true)]))),
            None
        );
        assert_eq!(
            owner_of(&pod(json!([owner("CloneSet", "example.com/v1", true)]))),
            None
        );
    }
}

#[cfg(test)]
#[path = "cloneset_shell_tests.rs"]
mod shell_tests;

#[cfg(test)]
mod round_tests;
