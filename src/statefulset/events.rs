//! The events an Advanced StatefulSet records on itself, with OpenKruise's reasons and messages
//! word for word (`stateful_pod_control.go` `recordPodEvent`, `recordClaimEvent`;
//! `stateful_set_control.go` `deletePod`, `inPlaceUpdatePod`). Component `statefulset-controller`.

use super::status::{FAILED_CREATE_POD, FAILED_UPDATE_POD};
use crate::workload::events::{Failure, Note, Refusal, Refused, Request, Wording, update_written};
use crate::workload::{Event, PvcFix};

/// The event component.
pub const COMPONENT: &str = "statefulset-controller";

/// What was done to a pod.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Create,
    Update,
    Delete,
}

impl Verb {
    fn word(self) -> &'static str {
        match self {
            Verb::Create => "create",
            Verb::Update => "update",
            Verb::Delete => "delete",
        }
    }

    fn reasons(self) -> (&'static str, &'static str) {
        match self {
            Verb::Create => ("SuccessfulCreate", "FailedCreate"),
            Verb::Update => ("SuccessfulUpdate", "FailedUpdate"),
            Verb::Delete => ("SuccessfulDelete", "FailedDelete"),
        }
    }
}

/// `recordPodEvent`: `create Pod web-0 in StatefulSet web successful`, or
/// `… failed error: <error>` as a warning.
pub fn pod(verb: Verb, set: &str, pod: &str, error: Option<&str>) -> Event {
    let (ok, failed) = verb.reasons();
    let word = verb.word();
    match error {
        None => Event {
            warning: false,
            reason: ok,
            message: format!("{word} Pod {pod} in StatefulSet {set} successful"),
        },
        Some(error) => Event::warning(
            failed,
            format!("{word} Pod {pod} in StatefulSet {set} failed error: {error}"),
        ),
    }
}

/// `recordClaimEvent` (create only): `create Claim data-web-0 Pod web-0 in StatefulSet web
/// success`, or `create Claim data-web-0 for Pod web-0 in StatefulSet web failed error: <error>`.
pub fn claim_created(set: &str, pod: &str, claim: &str, error: Option<&str>) -> Event {
    match error {
        None => Event {
            warning: false,
            reason: "SuccessfulCreate",
            message: format!("create Claim {claim} Pod {pod} in StatefulSet {set} success"),
        },
        Some(error) => Event::warning(
            "FailedCreate",
            format!(
                "create Claim {claim} for Pod {pod} in StatefulSet {set} failed error: {error}"
            ),
        ),
    }
}

/// The second event of a failed deletion (`deletePod`).
pub fn delete_failed(pod: &str, error: &str) -> Event {
    Event::warning(
        "FailedDelete",
        format!("failed to delete pod {pod}: {error}"),
    )
}

/// The StatefulSet's words for the requests of its rounds (`stateful_pod_control.go`), and the
/// round's failure each refusal is: the first ends the round, its condition
/// (`FailedCreatePod`, `FailedUpdatePod`) says `StatefulPodControl failed to … Pod error: …`.
pub struct StatefulSetWording;

impl Wording for StatefulSetWording {
    fn events(&self, set: &str, request: Request<'_>, refused: Option<Refusal<'_>>) -> Vec<Note> {
        let error = refused.map(|r| r.message);
        match request {
            // OpenKruise reports an AlreadyExists without an event.
            Request::CreatePod { .. } if refused.is_some_and(|r| r.code == Some(409)) => Vec::new(),
            Request::CreatePod { pod } => {
                vec![Note::pod(pod, self::pod(Verb::Create, set, pod, error))]
            }
            Request::DeletePod { pod } => {
                let mut notes = vec![Note::pod(pod, self::pod(Verb::Delete, set, pod, error))];
                if let Some(error) = error {
                    notes.push(Note::pod(pod, delete_failed(pod, error)));
                }
                notes
            }
            Request::UpdatePod { pod } => {
                vec![Note::pod(pod, self::pod(Verb::Update, set, pod, error))]
            }
            Request::WritePod { pod, purpose } => update_written(pod, purpose, error)
                .map(|event| Note::pod(pod, event))
                .into_iter()
                .collect(),
            Request::CreatePvc { pvc, pod, fix } => {
                let mut notes = vec![Note::pvc(pvc, claim_created(set, pod, pvc, error))];
                if let Some(error) = error {
                    let error = create_pvc_error(pvc, error);
                    let verb = match fix {
                        Some(PvcFix::NewPod) => Some(Verb::Create),
                        Some(PvcFix::Identity) => Some(Verb::Update),
                        _ => None,
                    };
                    notes.extend(
                        verb.map(|verb| Note::pod(pod, self::pod(verb, set, pod, Some(&error)))),
                    );
                }
                notes
            }
            Request::UpdatePvcOwners { pvc, pod, fix } => match error {
                Some(error) if fix != Some(PvcFix::Condemned) => {
                    let error = update_owners_error(pvc, error);
                    vec![Note::pod(
                        pod,
                        self::pod(Verb::Update, set, pod, Some(&error)),
                    )]
                }
                _ => Vec::new(),
            },
            // A StatefulSet never deletes a PVC: the garbage collector does, as the owners say.
            Request::DeletePvc { .. } => Vec::new(),
        }
    }

    fn refused(&self, request: Request<'_>, refusal: Refusal<'_>) -> Refused {
        let (condition, error) = match request {
            Request::CreatePod { .. } => (Some(FAILED_CREATE_POD), refusal.message.to_string()),
            Request::UpdatePod { .. } => (Some(FAILED_UPDATE_POD), refusal.message.to_string()),
            Request::DeletePod { .. } | Request::WritePod { .. } | Request::DeletePvc { .. } => {
                (None, refusal.message.to_string())
            }
            Request::CreatePvc { pvc, fix, .. } => {
                (fix_condition(fix), create_pvc_error(pvc, refusal.message))
            }
            Request::UpdatePvcOwners { pvc, fix, .. } => (
                fix_condition(fix),
                update_owners_error(pvc, refusal.message),
            ),
        };
        let condition = condition.map(|kind| {
            let verb = if kind == FAILED_CREATE_POD {
                "create"
            } else {
                "update"
            };
            (
                kind,
                format!("StatefulPodControl failed to {verb} Pod error: {error}"),
            )
        });
        Refused::Failure(Failure { condition, error })
    }
}

/// The condition a failed PVC write of `fix` sets.
fn fix_condition(fix: Option<PvcFix>) -> Option<&'static str> {
    match fix {
        Some(PvcFix::NewPod) => Some(FAILED_CREATE_POD),
        Some(PvcFix::Identity) => Some(FAILED_UPDATE_POD),
        Some(PvcFix::Pending | PvcFix::Condemned) | None => None,
    }
}

fn create_pvc_error(pvc: &str, error: &str) -> String {
    format!("failed to create PVC {pvc}: {error}")
}

fn update_owners_error(pvc: &str, error: &str) -> String {
    format!("Could not update claim {pvc} for delete policy ownerRefs: {error}")
}

#[cfg(test)]
mod tests;
