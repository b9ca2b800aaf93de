//! The Advanced StatefulSet controller: the I/O around [`crate::statefulset`], on the workload
//! shell ([`super::workload`]).
//!
//! A round waits until the caches show the controller's own earlier writes (expectations: pods
//! created, deleted or written, PVCs created or rewritten, each at its resourceVersion — which
//! also covers OpenKruise's update expectations), claims the pods named `<set>-<ordinal>` that
//! name the set (adopting and releasing as [`crate::workload::claim`] says), reads the history and
//! makes the update revision exist, plans (again with the pods the plan asked for whole), sends
//! the plan's actions in order and stops at the first that fails, writes the status (PUT of the
//! status subresource at the set's resourceVersion, so never from an object older than the last
//! write) and truncates the history.
//!
//! PVCs come from a cache of every PVC (whole, without managedFields): a set finds its claims by
//! name (`<template>-<set>-<ordinal>`), reads what `volumeClaims` compares, and rewrites a claim's
//! ownerReferences with a PUT of the cached claim, guarded by its resourceVersion. A PVC event
//! wakes the sets whose claim it is by name.

use std::sync::Arc;

use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use kube::ResourceExt;
use kube::api::{Api, PostParams};
use kube::runtime::controller::{Action as Requeue, Controller};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};

use super::guarded_watch::{self, UndecodableReporter};
use super::runtime::Term;
use super::workload::adoption::{Claimed, workloads_to_sync};
use super::workload::observe::{self, told};
use super::workload::{
    Context, Outcome, Round, WorkloadError, api_error, owned_pods, pvc_key, requeue,
};
use crate::api::statefulset::StatefulSet;
use crate::controller::expectations::Seen;
use crate::podmarks::PodView;
use crate::statefulset::ordinals::parent_and_ordinal;
use crate::statefulset::{self as planner, Claims, Plan};
use crate::workload::Workload;

mod send;

/// The component this controller's events carry, as Kruise names it.
pub const COMPONENT: &str = planner::events::COMPONENT;

/// What a reconcile works with: the shared context and the PVC cache.
pub struct Shell {
    pub context: Arc<Context>,
    pub claims: Store<PersistentVolumeClaim>,
}

/// The PVC cache as the planner reads it: the claims of one namespace, by name.
struct NamespaceClaims<'a> {
    store: &'a Store<PersistentVolumeClaim>,
    namespace: &'a str,
}

impl Claims for NamespaceClaims<'_> {
    fn get(&self, name: &str) -> Option<Arc<PersistentVolumeClaim>> {
        self.store.get(&ObjectRef::new(name).within(self.namespace))
    }
}

/// The watch on Advanced StatefulSets: a stored set the types refuse is reported and skipped,
/// never fatal to the others.
fn statefulset_controller(context: &Context) -> Controller<StatefulSet> {
    let reporter =
        UndecodableReporter::new::<StatefulSet>(context.metrics.clone(), context.recorder.clone());
    let (store, sets) = guarded_watch::watch::<StatefulSet>(
        context.client.clone(),
        watcher::Config::default().any_semantic(),
        reporter,
    );
    Controller::for_stream(sets, store)
}

/// The sets in `sets` whose claim `claim` is by its name (`<template>-<set>-<ordinal>`).
pub fn claim_owners(
    sets: &Store<StatefulSet>,
    claim: &PersistentVolumeClaim,
) -> Vec<ObjectRef<StatefulSet>> {
    let name = claim.name_any();
    let namespace = claim.metadata.namespace.as_deref().unwrap_or("");
    let Some((prefix, _)) = parent_and_ordinal(&name) else {
        return Vec::new();
    };
    sets.state()
        .iter()
        .filter(|set| Workload::namespace(&***set) == namespace)
        .filter(|set| {
            set.volume_claim_templates().iter().any(|t| {
                let template = t.metadata.name.as_deref().unwrap_or("");
                prefix
                    .strip_prefix(template)
                    .and_then(|r| r.strip_prefix('-'))
                    == Some(set.name())
            })
        })
        .map(|set| ObjectRef::from_obj(&**set))
        .collect()
}

/// Runs until the term ends; `pod_events` is a subscription to the watch behind `context.pods`,
/// deleted pods included (a pod deleted behind the set's back is made again).
pub async fn run(
    context: Arc<Context>,
    pod_events: impl futures::Stream<Item = Arc<Pod>> + Send + 'static,
    term: &Term,
) {
    let (claims, claim_writer) = reflector::store::<PersistentVolumeClaim>();
    // The reflector runs inside the trigger stream, so it lives exactly as long as the controller.
    let claim_events = reflector::reflector(
        claim_writer,
        watcher(
            Api::<PersistentVolumeClaim>::all(context.client.clone()),
            watcher::Config::default().any_semantic(),
        )
        .modify(|claim| claim.managed_fields_mut().clear()),
    )
    .default_backoff()
    .touched_objects();
    let controller = statefulset_controller(&context);
    let sets = controller.store();
    let (pod_observer, claim_observer) = (context.clone(), context.clone());
    let claims_held = claims.clone();
    let shell = Arc::new(Shell { context, claims });
    let controller = controller
        .watches_shared_stream(pod_events, move |pod| {
            observe::pod_event::<StatefulSet>(&pod_observer, &pod);
            workloads_to_sync::<StatefulSet>(&pod)
        })
        .watches_stream(claim_events, move |claim| {
            let owners = claim_owners(&sets, &claim);
            let name = claim.name_any();
            let held = claims_held.get(&ObjectRef::from_obj(&claim));
            let told = told(&claim.metadata, held.as_deref().map(|c| &c.metadata));
            for owner in &owners {
                let key = format!(
                    "{}/{}",
                    owner.namespace.as_deref().unwrap_or(""),
                    owner.name
                );
                claim_observer
                    .lock_expectations()
                    .observe(&key, &pvc_key(&name), told);
            }
            owners
        });
    term.run(COMPONENT, controller, reconcile, error_policy, shell)
        .await;
}

fn error_policy(set: Arc<StatefulSet>, error: &WorkloadError, _shell: Arc<Shell>) -> Requeue {
    tracing::warn!(statefulset = set.name_any(), %error, "reconcile failed");
    Requeue::requeue(std::time::Duration::from_secs(5))
}

/// What the caches say about an expected name: a pod, or a PVC behind [`pvc_key`].
fn seen(shell: &Shell, namespace: &str, name: &str) -> Seen {
    match name.strip_prefix(super::workload::pvc_key("").as_str()) {
        Some(claim) => match shell.claims.get(&ObjectRef::new(claim).within(namespace)) {
            None => Seen::Absent,
            Some(claim) => Seen::Present {
                deleting: claim.metadata.deletion_timestamp.is_some(),
                version: claim
                    .metadata
                    .resource_version
                    .as_deref()
                    .and_then(|v| v.parse().ok()),
            },
        },
        None => match shell
            .context
            .summaries
            .get(&ObjectRef::new(name).within(namespace))
        {
            None => Seen::Absent,
            Some(summary) => Seen::Present {
                deleting: summary.deleting(),
                version: summary.resource_version().parse().ok(),
            },
        },
    }
}

/// One round: observe → plan → send → settle.
async fn reconcile(set: Arc<StatefulSet>, shell: Arc<Shell>) -> Result<Requeue, WorkloadError> {
    let context = &*shell.context;
    let round = Round::new(context, &*set);
    if context.pods.wait_until_ready().now_or_never_ready()
        || shell.claims.wait_until_ready().now_or_never_ready()
    {
        return Ok(requeue(Outcome::CachesNotReady));
    }
    // A status computed from a set older than our own last write of it would undo that write.
    if let Some(outcome) = round.behind_own_write() {
        return Ok(requeue(outcome));
    }
    let namespace = Workload::namespace(&*set);
    let waiting =
        context
            .lock_expectations()
            .unsatisfied(&round.key, std::time::Instant::now(), |name| {
                seen(&shell, namespace, name)
            });
    if let Some(left) = waiting {
        return Ok(requeue(Outcome::Waiting(left)));
    }
    // OpenKruise claims only the pods named `<set>-<ordinal>` (`isMemberOf`).
    let members: Vec<_> = owned_pods(context, &*set)
        .into_iter()
        .filter(|p| parent_and_ordinal(p.name()).is_some_and(|(parent, _)| parent == set.name()))
        .collect();
    let mut pods = match round.claim_pods(members).await? {
        Claimed::Pods(pods) => pods,
        Claimed::Stop(outcome) => return Ok(requeue(outcome)),
    };
    let mut history = round.list_history().await?;
    let (update_revision, collision_count) = round.ensure_update_revision(&mut history).await?;
    let now = jiff::Timestamp::now();
    let claims = NamespaceClaims {
        store: &shell.claims,
        namespace,
    };
    let planned = round
        .plan_whole(
            &mut pods,
            |pods| {
                let snapshot = planner::Snapshot {
                    set: &set,
                    pods,
                    claims: &claims,
                    history: &history,
                    update_revision: &update_revision,
                    collision_count,
                    now,
                };
                Ok(planner::plan(&snapshot)?)
            },
            |plan: &Plan| &plan.needs_whole,
        )
        .await?;
    let mut plan = match planned {
        Ok(plan) => plan,
        Err(outcome) => return Ok(requeue(outcome)),
    };
    let sent = send::send(&round, &plan.actions).await?;
    if let Some(failure) = &sent.failure
        && let Some(kind) = failure.condition
    {
        planner::status::record_failure(&mut plan.status, kind, &failure.condition_message(), now);
    }
    Ok(requeue(settle(&round, &plan, sent).await?))
}

trait NowOrNever {
    /// The wait is not over at once (a cache that has not listed everything yet).
    fn now_or_never_ready(self) -> bool;
}

impl<F: std::future::Future> NowOrNever for F {
    fn now_or_never_ready(self) -> bool {
        futures::FutureExt::now_or_never(self).is_none()
    }
}

/// The writes after the pods: the status, history truncation; then how the round ended.
async fn settle(
    round: &Round<'_, StatefulSet>,
    plan: &Plan,
    sent: send::Sent,
) -> Result<Outcome, WorkloadError> {
    let set = round.set;
    // A failure's condition is written even when nothing OpenKruise compares changed: the set
    // says why it does not move.
    let new_condition = sent.failure.as_ref().is_some_and(|f| {
        f.condition.is_some()
            && !set
                .status
                .as_ref()
                .and_then(|s| s.conditions.as_ref())
                .is_some_and(|c| {
                    c.iter().any(|c| {
                        Some(c.type_.as_str()) == f.condition
                            && c.message.as_deref() == Some(&f.condition_message())
                    })
                })
    });
    if plan.write_status || new_condition {
        match write_status(round, plan).await {
            Ok(()) => {}
            Err(error) if error.status_code() == Some(409) => return Ok(Outcome::Conflict),
            Err(error) => return Err(error.into()),
        }
    }
    round.delete_revisions(&plan.revisions_to_delete).await?;
    if sent.failure.is_some() || plan.error.is_some() {
        return Ok(Outcome::Failed);
    }
    if sent.conflicted {
        return Ok(Outcome::Conflict);
    }
    let status = &plan.status;
    let unfinished = !plan.actions.is_empty()
        || status.replicas != set.spec.replicas.unwrap_or(1)
        || status.updated_replicas != status.replicas
        || status.ready_replicas != status.replicas;
    Ok(Outcome::Done {
        requeue_after: plan.requeue_after,
        unfinished,
    })
}

/// PUT of the status subresource: the set as observed (its resourceVersion guards the write)
/// with the round's status in full; the version it returns is recorded, so that no later round
/// computes a status from an older set.
async fn write_status(
    round: &Round<'_, StatefulSet>,
    plan: &Plan,
) -> Result<(), super::workload::ApiError> {
    let mut set = round.set.clone();
    set.status = Some(plan.status.clone());
    let written = round
        .api::<StatefulSet>()
        .replace_status(Workload::name(&set), &PostParams::default(), &set)
        .await
        .map_err(api_error::<super::workload::ApiError>(format!(
            "{} status",
            round.what()
        )))?;
    round.wrote(&written.metadata);
    Ok(())
}

#[cfg(test)]
mod tests;
