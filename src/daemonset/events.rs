//! The DaemonSet's words for the requests of its rounds: upstream's pod control for creations
//! and deletions (`Created pod: …`, `Error creating: …`), OpenKruise's `daemonset_update.go` for
//! in-place updates (without the revision when it succeeds). A refused create, delete or
//! `PreparingDelete` write is reported and the round goes on (the expectations and the next
//! round retry it); any other refused pod write ends the round with its error.

use crate::workload::events::{Failure, Note, Refusal, Refused, Request, Wording};
use crate::workload::{Event, Purpose};

pub struct DaemonSetWording;

impl Wording for DaemonSetWording {
    fn events(&self, set: &str, request: Request<'_>, refused: Option<Refusal<'_>>) -> Vec<Note> {
        let error = refused.map(|r| r.message);
        let note = match (request, error) {
            (Request::CreatePod { pod }, None) => Note::pod(
                pod,
                Event::normal("SuccessfulCreate", format!("Created pod: {pod}")),
            ),
            // Upstream records nothing while the namespace terminates.
            (Request::CreatePod { .. }, Some(_))
                if refused.is_some_and(|r| r.code == Some(403) && namespace_terminating(r)) =>
            {
                return Vec::new();
            }
            (Request::CreatePod { pod }, Some(error)) => Note::pod(
                pod,
                Event::warning("FailedCreate", format!("Error creating: {error}")),
            ),
            (Request::DeletePod { pod }, None) => Note::pod(
                pod,
                Event::normal("SuccessfulDelete", format!("Deleted pod: {pod}")),
            ),
            (Request::DeletePod { pod }, Some(error)) => Note::pod(
                pod,
                Event::warning("FailedDelete", format!("Error deleting: {error}")),
            ),
            (
                Request::WritePod {
                    pod,
                    purpose: Purpose::InPlace { .. },
                },
                None,
            ) => Note::pod(
                pod,
                Event::normal(
                    "SuccessfulUpdatePodInPlace",
                    format!("successfully update pod {pod} in-place"),
                ),
            ),
            (
                Request::WritePod {
                    pod,
                    purpose: Purpose::InPlace { revision },
                },
                Some(error),
            ) => Note::pod(
                pod,
                Event::warning(
                    "FailedUpdatePodInPlace",
                    // The pods carry the revision's hash; the revision is `<set>-<hash>`.
                    format!(
                        "failed to update pod {pod} in-place(revision {set}-{revision}): {error}"
                    ),
                ),
            ),
            // No event for the in-place engine's other writes nor the lifecycle's; a DaemonSet
            // has no PVCs and fixes no pod identity.
            _ => return Vec::new(),
        };
        vec![note]
    }

    fn refused(&self, request: Request<'_>, refusal: Refusal<'_>) -> Refused {
        match request {
            Request::CreatePod { .. }
            | Request::DeletePod { .. }
            | Request::WritePod {
                purpose: Purpose::ScaleLifecycle,
                ..
            } => Refused::Failure(Failure {
                condition: None,
                error: refusal.message.to_string(),
            }),
            _ => Refused::Error,
        }
    }
}

/// The apiserver's refusal of a create in a namespace being deleted (its `NamespaceTerminating`
/// cause, as its message words it).
fn namespace_terminating(refusal: Refusal<'_>) -> bool {
    refusal.message.contains("because it is being terminated")
}

#[cfg(test)]
mod tests;
