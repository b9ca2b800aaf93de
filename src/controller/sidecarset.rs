//! The SidecarSet controller: the I/O around [`crate::rollout`] and [`crate::inplace`].
//!
//! Each reconcile of a SidecarSet reads the shared pod and namespace stores (handles, never
//! copies), plans one round, writes the status when it changed, moves in-flight multi-batch
//! updates forward, and starts the upgrades the plan allows. All progress lives in pod
//! annotations and the SidecarSet status, so a restarted controller carries on where it stopped.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use futures::{FutureExt, StreamExt};
use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Namespace, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::events::{Event, EventType, Recorder};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;
use kube::{Resource, ResourceExt};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::guarded_watch::{self, UndecodableReporter};
use super::pod_write;
use super::retry::{Attempt, again_on_conflict, is_conflict, retry_on_conflict};
use crate::api::{SidecarSet, keys};
use crate::inplace::{self, EngineOptions, Step, UpdateSpec, Write};
use crate::k8s::selector;
use crate::podmarks::{PodSummary, PodView};
use crate::rollout::{self, PodUpgrade};

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
    #[error("{what}: {source}")]
    Api { what: String, source: kube::Error },
    #[error("pod {pod}: still conflicting after {attempts} attempts")]
    Conflicts { pod: String, attempts: usize },
}

/// How long to wait before looking again while a rollout is moving and no event arrives.
const IN_FLIGHT_REQUEUE: Duration = Duration::from_secs(5);
/// Conflict retries for one pod write, each from a fresh read.
const CONFLICT_ATTEMPTS: usize = 5;

/// The SidecarSets a pod event concerns: those named in its injected list, and those whose
/// selector matches its labels (a new pod, or one whose labels moved it in or out).
pub fn sidecarsets_for_pod(pod: &Pod, sets: &[Arc<SidecarSet>]) -> BTreeSet<String> {
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

/// The in-place revision a SidecarSet's multi-batch upgrades record: unique per SidecarSet and
/// per content.
pub fn engine_revision(set: &SidecarSet) -> Option<String> {
    let hash = set.annotation(keys::SIDECARSET_HASH)?;
    Some(format!("{}-{hash}", set.name()))
}

/// The pod the engine starts from: every bookkeeping annotation of the upgrade written, but no
/// image changed yet; the engine patches images batch by batch.
pub fn engine_base(upgrade: &PodUpgrade) -> Pod {
    let mut pod = upgrade.pod.clone();
    if let Some(spec) = pod.spec.as_mut() {
        for change in upgrade.batches.iter().flatten() {
            if let Some(c) = spec
                .containers
                .iter_mut()
                .find(|c| c.name == change.container)
            {
                c.image = change.previous_image.clone();
            }
        }
    }
    pod
}

/// The engine's target for an upgrade: every changed image.
pub fn engine_target(upgrade: &PodUpgrade, revision: &str) -> UpdateSpec {
    let images: BTreeMap<String, String> = upgrade
        .batches
        .iter()
        .flatten()
        .map(|c| (c.container.clone(), c.image.clone()))
        .collect();
    UpdateSpec::images(revision, images)
}

/// `plan_round` counts a pod between two batches as available (its later sidecars still run the
/// old image, consistent and ready), yet the next batch takes it down again: such pods keep
/// holding budget. Drops the last `held` ready candidates; not-ready candidates cost nothing.
pub fn hold_budget_for_batches(
    upgrade: &[usize],
    ready: impl Fn(usize) -> bool,
    held: usize,
) -> Vec<usize> {
    let ready_count = upgrade.iter().filter(|i| ready(**i)).count();
    let mut allowance = ready_count.saturating_sub(held);
    upgrade
        .iter()
        .copied()
        .filter(|&i| {
            if !ready(i) {
                return true;
            }
            let take = allowance > 0;
            allowance = allowance.saturating_sub(1);
            take
        })
        .collect()
}

/// Whether the pod is between two batches of this revision's multi-batch update.
fn between_batches(pod: &impl PodView, revision: &str) -> bool {
    matches!(pod.engine_progress(), Some(p) if p.revision == revision && p.has_next_batch)
}

/// Whether the engine has an update of this SidecarSet's current revision on the pod.
fn engine_in_flight(pod: &impl PodView, revision: &str) -> bool {
    matches!(pod.engine_progress(), Some(p) if p.revision == revision)
}

/// SidecarSets do not own their pods' revision label.
pub(crate) const ENGINE: EngineOptions<'static> = EngineOptions {
    revision_label: None,
    hasher: &inplace::NoRuntimeHashes,
};

pub struct Context {
    pub client: kube::Client,
    pub pods: Store<Pod>,
    /// The planner's summaries of the same pods.
    pub summaries: Store<PodSummary>,
    pub namespaces: Store<Namespace>,
    pub recorder: Recorder,
    pub metrics: Arc<crate::metrics::Metrics>,
}

/// Runs until `shutdown`. `pod_events` / `namespace_events` are subscriptions to the shared
/// reflectors whose stores are in `context`.
pub async fn run(
    context: Arc<Context>,
    pod_events: impl futures::Stream<Item = Arc<Pod>> + Send + 'static,
    namespace_events: impl futures::Stream<Item = Arc<Namespace>> + Send + 'static,
    shutdown: CancellationToken,
) {
    // A stored SidecarSet the types refuse is reported and skipped, not fatal to the list.
    let reporter =
        UndecodableReporter::new::<SidecarSet>(context.metrics.clone(), context.recorder.clone());
    let (store, sets) = guarded_watch::watch::<SidecarSet>(
        context.client.clone(),
        watcher::Config::default().any_semantic(),
        reporter,
    );
    let controller = Controller::for_stream(sets, store.clone());
    let for_pods = store.clone();
    let for_namespaces = store;
    controller
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
        })
        .graceful_shutdown_on(shutdown.cancelled_owned())
        .run(reconcile, error_policy, context)
        .for_each(|result| async move {
            if let Err(error) = result {
                tracing::debug!(%error, "sidecarset reconcile");
            }
        })
        .await;
}

fn error_policy(set: Arc<SidecarSet>, error: &SidecarSetError, _context: Arc<Context>) -> Action {
    tracing::warn!(sidecarset = set.name(), %error, "reconcile failed");
    Action::requeue(Duration::from_secs(10))
}

fn api_error(what: impl Into<String>) -> impl FnOnce(kube::Error) -> SidecarSetError {
    let what = what.into();
    move |source| SidecarSetError::Api { what, source }
}

fn rfc3339(now: Timestamp) -> String {
    now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

async fn reconcile(set: Arc<SidecarSet>, context: Arc<Context>) -> Result<Action, SidecarSetError> {
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
        return Ok(Action::requeue(Duration::from_secs(1)));
    }
    let summaries = context.summaries.state();
    let namespaces = namespace_labels_by_name(&context.namespaces.state());
    let matched = rollout::matched_pods(&set, &summaries, |ns| namespaces.get(ns))?;
    let plan = rollout::plan_round(&set, &matched);
    write_status(&context, &set, &plan.status).await?;

    let revision = engine_revision(&set);
    let mut in_flight = false;
    if let Some(revision) = revision.as_deref() {
        for summary in matched
            .iter()
            .filter(|p| engine_in_flight(p.as_ref(), revision))
        {
            if let Some(pod) = cached_pod(&context, summary) {
                in_flight |= drive_engine(&context, &pod, revision).await?;
            }
        }
    }
    for pod in plan
        .not_upgradable
        .iter()
        .filter_map(|&i| cached_pod(&context, &matched[i]))
    {
        mark_not_upgradable(&context, &set, &pod).await?;
    }
    let now = rfc3339(Timestamp::now());
    for pod in plan
        .reset_idle
        .iter()
        .filter_map(|&i| cached_pod(&context, &matched[i]))
    {
        reset_idle(&context, &set, &pod, &now).await?;
    }
    let facts = &plan.facts;
    let held = revision.as_deref().map_or(0, |revision| {
        matched
            .iter()
            .zip(facts)
            .filter(|(pod, f)| f.available() && between_batches(pod.as_ref(), revision))
            .count()
    });
    let to_upgrade = hold_budget_for_batches(&plan.upgrade, |i| facts[i].ready, held);
    for pod in to_upgrade
        .iter()
        .filter_map(|&i| cached_pod(&context, &matched[i]))
    {
        upgrade(&context, &set, &pod, revision.as_deref()).await?;
    }
    let moving = !to_upgrade.is_empty()
        || !plan.reset_idle.is_empty()
        || in_flight
        || (plan.halted.is_none() && plan.status.updated_pods < plan.status.matched_pods)
        || plan.status.updated_ready_pods.unwrap_or(0) < plan.status.updated_pods;
    Ok(if moving {
        Action::requeue(IN_FLIGHT_REQUEUE)
    } else {
        Action::await_change()
    })
}

async fn write_status(
    context: &Context,
    set: &SidecarSet,
    status: &crate::api::SidecarSetStatus,
) -> Result<(), SidecarSetError> {
    if set.status.as_ref() == Some(status) {
        return Ok(());
    }
    let api: Api<SidecarSet> = Api::all(context.client.clone());
    let mut body = serde_json::to_value(status).unwrap_or_default();
    // A merge patch keeps fields it does not mention: clear a count that went back to zero.
    if status.updated_ready_pods.is_none()
        && let Some(map) = body.as_object_mut()
    {
        map.insert("updatedReadyPods".into(), serde_json::Value::Null);
    }
    api.patch_status(
        set.name(),
        &PatchParams::default(),
        &Patch::Merge(json!({ "status": body })),
    )
    .await
    .map_err(api_error(format!("sidecarset {} status", set.name())))?;
    Ok(())
}

/// The cached pod the planner chose by its summary; `None` once it is gone from the cache.
fn cached_pod(context: &Context, summary: &PodSummary) -> Option<Arc<Pod>> {
    let key = ObjectRef::<Pod>::new(summary.name());
    context.pods.get(&match summary.namespace_field() {
        Some(namespace) => key.within(namespace),
        None => key,
    })
}

fn pod_api(context: &Context, pod: &Pod) -> Api<Pod> {
    Api::namespaced(
        context.client.clone(),
        pod.metadata.namespace.as_deref().unwrap_or("default"),
    )
}

fn pod_key(pod: &Pod) -> String {
    format!(
        "{}/{}",
        pod.metadata.namespace.as_deref().unwrap_or(""),
        pod.metadata.name.as_deref().unwrap_or("")
    )
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
    let api = pod_api(context, cached);
    // Decided on the cached pod first: most rounds only wait. A write is decided again on a
    // fresh read, since the cache holds a pruned copy that may also lag behind.
    let mut pod = Cow::Borrowed(cached);
    for _ in 0..CONFLICT_ATTEMPTS {
        let step = inplace::next_step(&pod, None, &ENGINE, Timestamp::now()).map_err(|source| {
            SidecarSetError::Engine {
                pod: pod_key(&pod),
                source,
            }
        })?;
        let Some(write) = step.write() else {
            return Ok(!matches!(step, Step::Idle) && engine_in_flight(pod.as_ref(), revision));
        };
        if let Cow::Borrowed(_) = pod {
            let fresh = api.get(&pod.name_any()).await;
            pod = Cow::Owned(fresh.map_err(api_error(pod_key(cached)))?);
            continue;
        }
        if let Step::PatchBatch { containers, .. } = &step {
            tracing::info!(pod = pod_key(&pod), ?containers, "next sidecar batch");
        }
        match send(&api, &pod, write).await {
            Ok(next) => pod = Cow::Owned(next),
            Err(error) if is_conflict(&error) => {
                let fresh = api.get(&pod.name_any()).await;
                pod = Cow::Owned(fresh.map_err(api_error(pod_key(cached)))?);
            }
            Err(error) => return Err(api_error(pod_key(&pod))(error)),
        }
    }
    Ok(true)
}

/// Upgrades one pod from a fresh read. A single batch is written at once, as OpenKruise does;
/// several launch priorities go through the in-place engine, first batch now, later batches in
/// later rounds.
async fn upgrade(
    context: &Context,
    set: &SidecarSet,
    cached: &Pod,
    revision: Option<&str>,
) -> Result<(), SidecarSetError> {
    let api = &pod_api(context, cached);
    let key = &pod_key(cached);
    let written = retry_on_conflict(CONFLICT_ATTEMPTS, || async move {
        let fresh = api.get(&cached.name_any()).await.map_err(api_error(key))?;
        let now = Timestamp::now();
        let upgrade = rollout::upgrade_pod(&fresh, set, &rfc3339(now)).map_err(|source| {
            SidecarSetError::Upgrade {
                pod: key.clone(),
                source,
            }
        })?;
        // One in-place update at a time per pod: another owner's (the pod's CloneSet) finishes
        // first; this pod is taken again in a later round.
        if let Some(other) =
            inplace::in_flight_revision(&fresh).filter(|other| Some(other.as_str()) != revision)
        {
            tracing::info!(pod = key, other, "waits for an in-place update in progress");
            return Ok(Attempt::Done(None));
        }
        let sent = match revision {
            Some(revision) if upgrade.batches.len() > 1 => {
                let base = engine_base(&upgrade);
                let target = engine_target(&upgrade, revision);
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
                        return Ok::<_, SidecarSetError>(Attempt::Again);
                    }
                    Some(write) => send(api, &fresh, write).await,
                    None => {
                        tracing::warn!(pod = key, ?step, "in-place engine refused the upgrade");
                        return Ok(Attempt::Done(None));
                    }
                }
            }
            _ => send(api, &fresh, Write::Pod(&upgrade.pod)).await,
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
    let images: Vec<String> = upgrade
        .batches
        .iter()
        .flatten()
        .map(|c| format!("{}={}", c.container, c.image))
        .collect();
    tracing::info!(
        pod = key,
        sidecarset = set.name(),
        ?images,
        "upgraded sidecars"
    );
    publish(
        context,
        &updated,
        EventType::Normal,
        "SidecarSetUpgrade",
        format!("sidecarset {} upgrades {}", set.name(), images.join(", ")),
    )
    .await;
    set_upgradable(api, &updated, set.name(), true).await?;
    Ok(())
}

async fn reset_idle(
    context: &Context,
    set: &SidecarSet,
    cached: &Pod,
    now: &str,
) -> Result<(), SidecarSetError> {
    let api = &pod_api(context, cached);
    let key = &pod_key(cached);
    let done = retry_on_conflict(CONFLICT_ATTEMPTS, || async move {
        let fresh = api.get(&cached.name_any()).await.map_err(api_error(key))?;
        let reset = rollout::reset_idle_copies(&fresh, set, now);
        if reset == fresh {
            return Ok(Attempt::Done(()));
        }
        let sent = send(api, &fresh, Write::Pod(&reset)).await.map(drop);
        again_on_conflict(sent).map_err(api_error(key))
    })
    .await?;
    done.ok_or_else(|| SidecarSetError::Conflicts {
        pod: key.clone(),
        attempts: CONFLICT_ATTEMPTS,
    })
}

async fn mark_not_upgradable(
    context: &Context,
    set: &SidecarSet,
    pod: &Pod,
) -> Result<(), SidecarSetError> {
    let api = pod_api(context, pod);
    if set_upgradable(&api, pod, set.name(), false).await? {
        publish(
            context,
            pod,
            EventType::Warning,
            "NotUpgradablePods",
            format!(
                "sidecarset {} changed more than images; the pod must be recreated to get it",
                set.name()
            ),
        )
        .await;
        {
            let reference = set.object_ref(&());
            let event = Event {
                type_: EventType::Warning,
                reason: "NotUpgradablePods".into(),
                note: Some(format!("pod {} cannot be upgraded in place", pod_key(pod))),
                action: "Upgrade".into(),
                secondary: None,
            };
            if let Err(error) = context.recorder.publish(&event, &reference).await {
                tracing::debug!(%error, "event not recorded");
            }
        }
    }
    Ok(())
}

/// Patches the `SidecarSetUpgradable` condition when it changes; returns whether it did.
async fn set_upgradable(
    api: &Api<Pod>,
    pod: &Pod,
    sidecarset: &str,
    upgradable: bool,
) -> Result<bool, SidecarSetError> {
    let Some(condition) =
        rollout::upgradable_condition(pod, sidecarset, upgradable, &Time(Timestamp::now()))
    else {
        return Ok(false);
    };
    // Strategic merge: conditions merge by type, the others stay as kubelet wrote them.
    let patch = json!({ "status": { "conditions": [condition] } });
    api.patch_status(
        &pod.name_any(),
        &PatchParams::default(),
        &Patch::Strategic(patch),
    )
    .await
    .map_err(api_error(pod_key(pod)))?;
    Ok(true)
}

async fn publish(context: &Context, pod: &Pod, type_: EventType, reason: &str, note: String) {
    let event = Event {
        type_,
        reason: reason.into(),
        note: Some(note),
        action: "Upgrade".into(),
        secondary: None,
    };
    if let Err(error) = context.recorder.publish(&event, &pod.object_ref(&())).await {
        tracing::debug!(%error, "event not recorded");
    }
}

/// Namespace labels as the webhooks see them: with the `kubernetes.io/metadata.name` label that
/// pre-1.21 apiservers do not set and `spec.namespace` matching relies on.
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
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
    use kube::api::ObjectMeta;

    fn set(name: &str, match_labels: Option<&[(&str, &str)]>) -> Arc<SidecarSet> {
        let mut set = SidecarSet::new(name, Default::default());
        set.spec.selector = match_labels.map(|labels| LabelSelector {
            match_labels: Some(
                labels
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
            ..Default::default()
        });
        Arc::new(set)
    }

    #[test]
    fn namespaces_of_old_apiservers_get_their_name_label() {
        let namespace = |name: &str, labels: &[(&str, &str)]| {
            Arc::new(Namespace {
                metadata: ObjectMeta {
                    name: Some(name.into()),
                    labels: Some(
                        labels
                            .iter()
                            .map(|(k, v)| (k.to_string(), v.to_string()))
                            .collect(),
                    ),
                    ..Default::default()
                },
                ..Default::default()
            })
        };
        let labels = namespace_labels_by_name(&[
            namespace("shop", &[("team", "a")]),
            namespace("other", &[(keys::NAMESPACE_NAME_LABEL, "other")]),
        ]);
        assert_eq!(labels["shop"][keys::NAMESPACE_NAME_LABEL], "shop");
        assert_eq!(labels["shop"]["team"], "a");
        assert_eq!(labels["other"].len(), 1);
        // a SidecarSet pinned to `shop` by spec.namespace selects it, and only it
        let mut pinned = (*set("mesh", Some(&[("app", "web")]))).clone();
        pinned.spec.namespace = Some("shop".into());
        let matches = |ns: &str| {
            crate::inject::sidecar::namespace_matches(&pinned, ns, labels.get(ns)).unwrap()
        };
        assert!(matches("shop"));
        assert!(!matches("other"));
    }

    fn pod(labels: &[(&str, &str)], injected: Option<&str>) -> Pod {
        Pod {
            metadata: ObjectMeta {
                name: Some("p".into()),
                labels: Some(
                    labels
                        .iter()
                        .map(|(k, v)| (k.to_string(), v.to_string()))
                        .collect(),
                ),
                annotations: injected.map(|list| {
                    BTreeMap::from([(keys::SIDECARSET_INJECTED_LIST.to_string(), list.into())])
                }),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn names(found: BTreeSet<String>) -> Vec<String> {
        found.into_iter().collect()
    }

    #[test]
    fn injected_list_names_are_mapped_even_when_the_set_is_unknown() {
        let found = sidecarsets_for_pod(&pod(&[], Some("a, b,,")), &[]);
        assert_eq!(names(found), vec!["a", "b"]);
    }

    #[test]
    fn selector_matches_are_added_and_others_left_out() {
        let sets = [
            set("web", Some(&[("app", "web")])),
            set("db", Some(&[("app", "db")])),
            set("nil-selector", None),
            set("everything", Some(&[])),
        ];
        let found = sidecarsets_for_pod(&pod(&[("app", "web")], Some("old")), &sets);
        assert_eq!(names(found), vec!["everything", "old", "web"]);
    }

    #[test]
    fn pod_without_labels_or_annotation_only_hits_empty_selectors() {
        let sets = [set("web", Some(&[("app", "web")]))];
        assert!(sidecarsets_for_pod(&pod(&[], None), &sets).is_empty());
    }

    #[test]
    fn pods_between_batches_hold_budget_from_ready_candidates_only() {
        let ready = |i: usize| i != 1;
        assert_eq!(
            hold_budget_for_batches(&[0, 1, 2, 3], ready, 0),
            vec![0, 1, 2, 3]
        );
        assert_eq!(
            hold_budget_for_batches(&[0, 1, 2, 3], ready, 1),
            vec![0, 1, 2]
        );
        assert_eq!(hold_budget_for_batches(&[0, 1, 2, 3], ready, 3), vec![1]);
        assert_eq!(hold_budget_for_batches(&[0, 1, 2, 3], ready, 9), vec![1]);
        assert!(hold_budget_for_batches(&[], ready, 1).is_empty());
    }

    fn two_priority_upgrade() -> PodUpgrade {
        let barrier = |key: &str| {
            json!([{"name": "KRUISE_CONTAINER_BARRIER",
                    "valueFrom": {"configMapKeyRef": {"name": "web-barrier", "key": key}}}])
        };
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": "web", "namespace": "default",
                "annotations": {keys::SIDECARSET_INJECTED_LIST: "mesh"}},
            "spec": {"containers": [
                {"name": "proxy", "image": "proxy:v1", "env": barrier("p_0")},
                {"name": "agent", "image": "agent:v1", "env": barrier("p_-1")},
                {"name": "app", "image": "app:v1", "env": barrier("p_-2")}]},
            "status": {"containerStatuses": [
                {"name": "proxy", "image": "proxy:v1", "imageID": "proxy@sha256:1", "ready": true, "restartCount": 0},
                {"name": "agent", "image": "agent:v1", "imageID": "agent@sha256:1", "ready": true, "restartCount": 0},
                {"name": "app", "image": "app:v1", "imageID": "app@sha256:1", "ready": true, "restartCount": 0}]}
        }))
        .unwrap();
        let set: SidecarSet = serde_json::from_value(json!({
            "apiVersion": "apps.kruise.io/v1alpha1", "kind": "SidecarSet",
            "metadata": {"name": "mesh", "annotations": {keys::SIDECARSET_HASH: "h2"}},
            "spec": {"containers": [
                {"name": "proxy", "image": "proxy:v2"},
                {"name": "agent", "image": "agent:v2"}]}
        }))
        .unwrap();
        rollout::upgrade_pod(&pod, &set, "2024-01-01T00:00:00Z").unwrap()
    }

    fn images(pod: &Pod) -> Vec<(String, String)> {
        pod.spec
            .iter()
            .flat_map(|s| &s.containers)
            .map(|c| (c.name.clone(), c.image.clone().unwrap_or_default()))
            .collect()
    }

    #[test]
    fn engine_starts_from_old_images_with_the_bookkeeping_written() {
        let upgrade = two_priority_upgrade();
        assert_eq!(upgrade.batches.len(), 2);
        let base = engine_base(&upgrade);
        assert_eq!(
            images(&base),
            [
                ("proxy", "proxy:v1"),
                ("agent", "agent:v1"),
                ("app", "app:v1")
            ]
            .map(|(n, i)| (n.to_string(), i.to_string()))
        );
        let annotations = base.metadata.annotations.as_ref().unwrap();
        assert!(annotations.contains_key(keys::SIDECARSET_HASH));
        assert!(annotations.contains_key(keys::SIDECARSET_INPLACE_UPDATE_STATE));
    }

    #[test]
    fn engine_patches_the_higher_priority_sidecar_first() {
        let upgrade = two_priority_upgrade();
        let target = engine_target(&upgrade, "mesh-h2");
        assert_eq!(
            target.container_images,
            BTreeMap::from([
                ("agent".to_string(), "agent:v2".to_string()),
                ("proxy".to_string(), "proxy:v2".to_string()),
            ])
        );
        let step = inplace::next_step(
            &engine_base(&upgrade),
            Some(&target),
            &ENGINE,
            Timestamp::UNIX_EPOCH,
        )
        .unwrap();
        let Step::PatchBatch {
            pod, containers, ..
        } = step
        else {
            panic!("expected the first batch, got {step:?}");
        };
        assert_eq!(containers, vec!["proxy"]);
        assert_eq!(
            images(&pod),
            [
                ("proxy", "proxy:v2"),
                ("agent", "agent:v1"),
                ("app", "app:v1")
            ]
            .map(|(n, i)| (n.to_string(), i.to_string()))
        );
        assert!(between_batches(&pod, "mesh-h2"));
        assert!(engine_in_flight(&pod, "mesh-h2"));
        assert!(!engine_in_flight(&pod, "mesh-other"));
    }

    #[test]
    fn engine_revision_needs_the_hash() {
        let mut s = SidecarSet::new("mesh", Default::default());
        assert_eq!(engine_revision(&s), None);
        s.metadata.annotations = Some(BTreeMap::from([(
            keys::SIDECARSET_HASH.to_string(),
            "abc".to_string(),
        )]));
        assert_eq!(engine_revision(&s).as_deref(), Some("mesh-abc"));
    }
}

#[cfg(test)]
#[path = "sidecarset_shell_tests.rs"]
mod shell_tests;
