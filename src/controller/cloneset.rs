//! The CloneSet controller: the I/O around [`crate::cloneset`], on the workload shell
//! ([`super::workload`]).
//!
//! Each reconcile of a CloneSet waits until the pod cache shows its own earlier writes
//! ([`super::expectations`]), reads its pods from the shared pod cache (adopting and releasing
//! as [`crate::workload::claim`] says) and its ControllerRevisions from the apiserver, makes
//! sure the update revision exists, plans one round and sends what the plan says. The cache
//! holds most pods as their summaries only ([`crate::workload::listed`]); when the plan acts on
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

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::ResourceExt;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::{Action as Requeue, Controller};
use kube::runtime::events::EventType;
use kube::runtime::reflector::{self, ObjectRef};
use kube::runtime::{WatchStreamExt, watcher};
use serde_json::json;

use super::guarded_watch::{self, UndecodableReporter};
use super::runtime::Term;
use super::workload::adoption::workloads_to_sync;
use super::workload::{
    Outcome, PvcMeta, PvcWrites, Round, Shell, WorkloadError, api_error, observe, requeue,
};
use crate::api::cloneset::{CloneSet, CloneSetStatus};
use crate::cloneset::pvc::INSTANCE_ID;
use crate::cloneset::{self as planner, Plan};

mod claims;

use claims::clean_up_claims;

pub use super::workload::Context;

/// The CloneSet controller's errors are the workload shell's.
pub type CloneSetError = WorkloadError;

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
    super::workload::controlling(&pod.metadata)
}

/// The CloneSets a pod event concerns: its controller; for a pod nobody controls, every CloneSet
/// one of its ownerReferences names (it may adopt the pod).
pub fn clonesets_to_sync(pod: &Pod) -> Vec<ObjectRef<CloneSet>> {
    workloads_to_sync::<CloneSet>(pod)
}

/// The component this controller's events carry, as Kruise names it.
pub const COMPONENT: &str = "cloneset-controller";

/// Runs until the term ends; `pod_events` is a subscription to the watch behind `context.pods`,
/// deleted pods included (a pod deleted behind the CloneSet's back is replaced).
pub async fn run(
    context: Arc<Context>,
    pod_events: impl futures::Stream<Item = Arc<Pod>> + Send + 'static,
    term: &Term,
) {
    let (claims, claim_writer) = reflector::store::<PvcMeta>();
    // The reflector runs inside the trigger stream, so it lives exactly as long as the controller.
    let claim_events = reflector::reflector(
        claim_writer,
        watcher(
            Api::<PvcMeta>::all(context.client.clone()),
            watcher::Config::default()
                .labels(INSTANCE_ID)
                .any_semantic(),
        ),
    )
    .default_backoff()
    .touched_objects();
    let controller = cloneset_controller(&context);
    let (pod_observer, claim_observer) = (context.clone(), context.clone());
    let claims_held = claims.clone();
    let shell = Arc::new(Shell {
        context,
        pvcs: claims,
    });
    let controller = controller
        .watches_shared_stream(pod_events, move |pod| {
            observe::pod_event::<CloneSet>(&pod_observer, &pod);
            clonesets_to_sync(&pod)
        })
        .watches_stream(claim_events, move |claim| {
            observe::claim_event::<CloneSet>(&claim_observer, &claims_held, &claim);
            super::workload::controlling::<CloneSet>(&claim.metadata)
        });
    term.run(COMPONENT, controller, reconcile, error_policy, shell)
        .await;
}

fn error_policy(set: Arc<CloneSet>, error: &CloneSetError, _shell: Arc<Shell>) -> Requeue {
    tracing::warn!(cloneset = set.name_any(), %error, "reconcile failed");
    Requeue::requeue(Duration::from_secs(5))
}

/// One round: observe → plan → send → settle.
async fn reconcile(set: Arc<CloneSet>, shell: Arc<Shell>) -> Result<Requeue, CloneSetError> {
    let round = Round::new(&shell.context, &*set);
    let mut observed = match round.observe(&shell).await? {
        Ok(observed) => observed,
        Err(outcome) => return Ok(requeue(outcome)),
    };
    let pvc_meta: Vec<_> = observed.pvcs.iter().map(|c| &c.metadata).collect();
    let (history, update_revision) = (&observed.history, observed.update_revision.as_str());
    let (collision_count, now) = (observed.collision_count, observed.now);
    let planned = round
        .plan_whole(
            &mut observed.pods,
            |pods| {
                let snapshot = planner::Snapshot {
                    cloneset: &set,
                    pods,
                    history,
                    update_revision,
                    collision_count,
                    now,
                };
                Ok(planner::plan_with_claims(
                    &snapshot,
                    &pvc_meta,
                    &mut fastrand::Rng::new(),
                )?)
            },
            |plan: &Plan| &plan.needs_whole,
        )
        .await?;
    let mut plan = match planned {
        Ok(plan) => plan,
        Err(outcome) => return Ok(requeue(outcome)),
    };
    clean_up_claims(&round, &plan.extra.claims).await?;
    let pvcs = PvcWrites {
        create: &plan.extra.claims.create,
        delete_with_pod: &plan.extra.claims.delete_with_pod,
    };
    let executed = round.send(&plan.actions, pvcs).await?;
    if let Some(message) = &executed.failed_scale {
        // OpenKruise: an error of Scale sets FailedScale in the status, written if this round
        // writes one (a condition alone is no reason to, `status::changed`).
        planner::status::record_failure(&mut plan.status, "FailedScale", message, now);
    }
    Ok(requeue(settle(&round, &plan, executed.conflicted).await?))
}

/// The writes after the pods: status, the `podsToDelete` clean-up, history truncation, the
/// round's failure event; then how the round ended.
async fn settle(
    round: &Round<'_, CloneSet>,
    plan: &Plan,
    conflicted: bool,
) -> Result<Outcome, CloneSetError> {
    let set = round.set;
    if plan.write_status {
        round.write_status(&status_body(&plan.status)).await?;
    }
    if let Some(kept) = &plan.extra.pods_to_delete {
        let list = (!kept.is_empty()).then_some(kept);
        let written = round
            .api::<CloneSet>()
            .patch(
                &set.name_any(),
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"scaleStrategy": {"podsToDelete": list}}})),
            )
            .await
            .map_err(api_error::<CloneSetError>(format!(
                "cloneset {} podsToDelete",
                round.key
            )))?;
        round.wrote(&written.metadata);
    }
    round.delete_revisions(&plan.revisions_to_delete).await?;
    if let Some(message) = &plan.error {
        round
            .publish_note(EventType::Warning, "FailedUpdate", message.clone())
            .await;
        return Ok(Outcome::Failed);
    }
    if conflicted {
        return Ok(Outcome::Conflict);
    }
    let unfinished = !plan.actions.is_empty()
        || plan.status.updated_ready_replicas != plan.status.replicas
        || i64::from(plan.status.replicas) != i64::from(set.spec.replicas.unwrap_or(1));
    Ok(Outcome::Done {
        requeue_after: plan.requeue_after,
        unfinished,
    })
}

/// The status as a merge patch sends it: a merge patch keeps what it does not mention, so the
/// conditions go as `null` once none is left (the `Progressing` condition removed with the
/// deadline).
fn status_body(status: &CloneSetStatus) -> serde_json::Value {
    let mut body = serde_json::to_value(status).unwrap_or_default();
    if status.conditions.is_none()
        && let Some(map) = body.as_object_mut()
    {
        map.insert("conditions".into(), serde_json::Value::Null);
    }
    body
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

#[cfg(test)]
#[path = "cloneset/adoption_tests.rs"]
mod adoption_tests;
