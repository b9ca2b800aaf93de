//! Sends an Advanced StatefulSet plan: its actions in order, each as OpenKruise sends and reports
//! it (`stateful_pod_control.go`), stopping at the first that fails (the round's error: the rest
//! waits for the next round, as in Go where the error ends the round).

use std::sync::Arc;

use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use kube::ResourceExt;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::runtime::events::EventType;

use crate::api::statefulset::StatefulSet;
use crate::controller::pod_write;
use crate::controller::workload::{Round, WorkloadError, error_text, pvc_key, status_code};
use crate::statefulset::events::{self, Verb};
use crate::statefulset::status::{FAILED_CREATE_POD, FAILED_UPDATE_POD};
use crate::workload::{Action, Event, PodWrite, Purpose, PvcFix, Workload};

/// How sending went.
#[derive(Debug, Default)]
pub struct Sent {
    /// A write met a newer object (409): the rest waits for the next round.
    pub conflicted: bool,
    /// The action that failed.
    pub failure: Option<Failure>,
}

/// A failed action: the round's error, and the condition it sets, if any.
#[derive(Debug)]
pub struct Failure {
    pub condition: Option<&'static str>,
    /// The error as OpenKruise words it (the Status message of the apiserver's answer).
    pub error: String,
}

impl Failure {
    /// `StatefulPodControl failed to create Pod error: <error>` (or `update`).
    pub fn condition_message(&self) -> String {
        let verb = if self.condition == Some(FAILED_CREATE_POD) {
            "create"
        } else {
            "update"
        };
        format!(
            "StatefulPodControl failed to {verb} Pod error: {}",
            self.error
        )
    }
}

/// What to stop with after an action.
enum Step {
    Next,
    Conflict,
    Failed(Failure),
}

/// Sends `actions` in order; stops at a conflict or a failure.
pub async fn send(
    round: &Round<'_, StatefulSet>,
    actions: &[Action],
) -> Result<Sent, WorkloadError> {
    let mut sent = Sent::default();
    for action in actions {
        let step = match action {
            Action::CreatePvc { pvc, pod, fix } => create_claim(round, pvc, pod, *fix).await,
            Action::CreatePod { pod, .. } => create_pod(round, pod).await,
            Action::UpdatePvcOwners {
                before,
                owner_references,
                pod,
                fix,
            } => {
                let mut after = PersistentVolumeClaim::clone(before);
                after.metadata.owner_references = Some(owner_references.clone());
                update_claim(round, &after, pod, *fix).await
            }
            Action::DeletePod { name } => delete_pod(round, name).await,
            Action::WritePod {
                before,
                writes,
                purpose,
            } => write_pod(round, before, writes, purpose).await?,
            Action::UpdatePod { before, after } => update_pod(round, before, after).await?,
            Action::Event(event) => {
                round.publish(event).await;
                Step::Next
            }
        };
        match step {
            Step::Next => {}
            Step::Conflict => {
                sent.conflicted = true;
                break;
            }
            Step::Failed(failure) => {
                tracing::warn!(
                    statefulset = round.key,
                    error = failure.error,
                    "round failed"
                );
                sent.failure = Some(failure);
                break;
            }
        }
    }
    Ok(sent)
}

/// An event about the set concerning its pod or claim `name`.
async fn publish(round: &Round<'_, StatefulSet>, kind: &str, name: &str, event: Event) {
    let type_ = if event.warning {
        EventType::Warning
    } else {
        EventType::Normal
    };
    round
        .publish_about(
            round.related(kind, name),
            type_,
            event.reason,
            event.message,
        )
        .await;
}

async fn create_claim(
    round: &Round<'_, StatefulSet>,
    claim: &PersistentVolumeClaim,
    pod: &str,
    when: PvcFix,
) -> Step {
    let name = claim.name_any();
    let set = round.set.name();
    let expected = pvc_key(&name);
    round
        .context
        .lock_expectations()
        .expect_create(&round.key, &expected);
    match round
        .api::<PersistentVolumeClaim>()
        .create(&PostParams::default(), claim)
        .await
    {
        Ok(_) => {
            let event = events::claim_created(set, pod, &name, None);
            publish(round, "PersistentVolumeClaim", &name, event).await;
            Step::Next
        }
        Err(error) => {
            round
                .context
                .lock_expectations()
                .forget(&round.key, &expected);
            // The claim is there already (the cache had not shown it): what was wanted.
            if status_code(&error) == Some(409) {
                return Step::Next;
            }
            let text = error_text(&error);
            let event = events::claim_created(set, pod, &name, Some(&text));
            publish(round, "PersistentVolumeClaim", &name, event).await;
            let error = format!("failed to create PVC {name}: {text}");
            let condition = match when {
                PvcFix::NewPod => {
                    let event = events::pod(Verb::Create, set, pod, Some(&error));
                    publish(round, "Pod", pod, event).await;
                    Some(FAILED_CREATE_POD)
                }
                PvcFix::Identity => {
                    let event = events::pod(Verb::Update, set, pod, Some(&error));
                    publish(round, "Pod", pod, event).await;
                    Some(FAILED_UPDATE_POD)
                }
                PvcFix::Pending | PvcFix::Condemned => None,
            };
            Step::Failed(Failure { condition, error })
        }
    }
}

async fn create_pod(round: &Round<'_, StatefulSet>, pod: &Pod) -> Step {
    let name = pod.name_any();
    let set = round.set.name();
    round
        .context
        .lock_expectations()
        .expect_create(&round.key, &name);
    match round.api::<Pod>().create(&PostParams::default(), pod).await {
        Ok(_) => {
            publish(
                round,
                "Pod",
                &name,
                events::pod(Verb::Create, set, &name, None),
            )
            .await;
            Step::Next
        }
        Err(error) => {
            round.context.lock_expectations().forget(&round.key, &name);
            let text = error_text(&error);
            // OpenKruise reports an AlreadyExists without an event.
            if status_code(&error) != Some(409) {
                let event = events::pod(Verb::Create, set, &name, Some(&text));
                publish(round, "Pod", &name, event).await;
            }
            Step::Failed(Failure {
                condition: Some(FAILED_CREATE_POD),
                error: text,
            })
        }
    }
}

/// PUT of the claim with its new ownerReferences, guarded by the cached resourceVersion.
async fn update_claim(
    round: &Round<'_, StatefulSet>,
    claim: &PersistentVolumeClaim,
    pod: &str,
    when: PvcFix,
) -> Step {
    let name = claim.name_any();
    match round
        .api::<PersistentVolumeClaim>()
        .replace(&name, &PostParams::default(), claim)
        .await
    {
        Ok(written) => {
            round.context.lock_expectations().expect_version(
                &round.key,
                &pvc_key(&name),
                written.metadata.resource_version.as_deref(),
            );
            Step::Next
        }
        Err(error) if status_code(&error) == Some(409) => Step::Conflict,
        // Gone: the next round sees it gone.
        Err(error) if status_code(&error) == Some(404) => Step::Next,
        Err(error) => {
            let error = format!(
                "Could not update claim {name} for delete policy ownerRefs: {}",
                error_text(&error)
            );
            let condition = match when {
                PvcFix::NewPod => Some(FAILED_CREATE_POD),
                PvcFix::Identity => Some(FAILED_UPDATE_POD),
                PvcFix::Pending | PvcFix::Condemned => None,
            };
            if when != PvcFix::Condemned {
                let event = events::pod(Verb::Update, round.set.name(), pod, Some(&error));
                publish(round, "Pod", pod, event).await;
            }
            Step::Failed(Failure { condition, error })
        }
    }
}

async fn delete_pod(round: &Round<'_, StatefulSet>, name: &str) -> Step {
    let set = round.set.name();
    round
        .context
        .lock_expectations()
        .expect_delete(&round.key, name);
    match round
        .api::<Pod>()
        .delete(name, &DeleteParams::default())
        .await
    {
        Ok(_) => {
            publish(
                round,
                "Pod",
                name,
                events::pod(Verb::Delete, set, name, None),
            )
            .await;
            Step::Next
        }
        Err(error) => {
            round.context.lock_expectations().forget(&round.key, name);
            if status_code(&error) == Some(404) {
                return Step::Next;
            }
            let text = error_text(&error);
            publish(
                round,
                "Pod",
                name,
                events::pod(Verb::Delete, set, name, Some(&text)),
            )
            .await;
            publish(round, "Pod", name, events::delete_failed(name, &text)).await;
            Step::Failed(Failure {
                condition: None,
                error: text,
            })
        }
    }
}

/// An engine or lifecycle write (the in-place events are the shell's, OpenKruise's words).
async fn write_pod(
    round: &Round<'_, StatefulSet>,
    before: &Arc<Pod>,
    writes: &[PodWrite],
    purpose: &Purpose,
) -> Result<Step, WorkloadError> {
    match round.write_pod(before, writes, purpose).await {
        Ok(true) => Ok(Step::Conflict),
        Ok(false) => Ok(Step::Next),
        Err(WorkloadError::Api(error)) => Ok(Step::Failed(Failure {
            condition: None,
            error: error_text(&error.source),
        })),
        Err(error) => Err(error),
    }
}

/// `UpdateStatefulPod`: the identity labels and volumes fixed (a guarded patch of what changed;
/// nothing when only the claims' owners needed a fix), then `SuccessfulUpdate`.
async fn update_pod(
    round: &Round<'_, StatefulSet>,
    before: &Arc<Pod>,
    after: &Pod,
) -> Result<Step, WorkloadError> {
    let name = before.name_any();
    let set = round.set.name();
    let patch = pod_write::guarded_patch(before, after)
        .map_err(|e| WorkloadError::encoding(format!("pod {name}"), e))?;
    if let Some(patch) = patch {
        match round
            .api::<Pod>()
            .patch(&name, &PatchParams::default(), &Patch::<()>::Json(patch))
            .await
        {
            Ok(written) => round.context.lock_expectations().expect_version(
                &round.key,
                &name,
                written.metadata.resource_version.as_deref(),
            ),
            Err(error) if matches!(status_code(&error), Some(409 | 404)) => {
                return Ok(Step::Conflict);
            }
            Err(error) => {
                let text = error_text(&error);
                let event = events::pod(Verb::Update, set, &name, Some(&text));
                publish(round, "Pod", &name, event).await;
                return Ok(Step::Failed(Failure {
                    condition: Some(FAILED_UPDATE_POD),
                    error: text,
                }));
            }
        }
    }
    publish(
        round,
        "Pod",
        &name,
        events::pod(Verb::Update, set, &name, None),
    )
    .await;
    Ok(Step::Next)
}
