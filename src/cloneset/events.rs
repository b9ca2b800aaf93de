//! The CloneSet's words for the requests of its rounds, as OpenKruise writes them
//! (`cloneset_scale.go`, `cloneset_update.go`, `cloneset_controller.go`), and what a refusal
//! means: a refused create, delete or scale lifecycle write is the round's `FailedScale`
//! (the round goes on), any other refused pod write ends the round with its error.

use crate::workload::events::{Failure, Note, Refusal, Refused, Request, Wording, update_written};
use crate::workload::{Event, Purpose};

/// The condition a failed scale write sets.
pub const FAILED_SCALE: &str = "FailedScale";

pub struct CloneSetWording;

impl Wording for CloneSetWording {
    fn events(&self, _set: &str, request: Request<'_>, refused: Option<Refusal<'_>>) -> Vec<Note> {
        let error = refused.map(|r| r.message);
        let note = match (request, error) {
            (Request::CreatePod { pod }, None) => Note::pod(
                pod,
                Event::normal("SuccessfulCreate", format!("succeed to create pod {pod}")),
            ),
            (Request::CreatePod { pod }, Some(error)) => Note::pod(
                pod,
                Event::warning(
                    "FailedCreate",
                    format!("failed to create pod: {error}, pod: {pod}"),
                ),
            ),
            (Request::DeletePod { pod }, None) => Note::pod(
                pod,
                Event::normal("SuccessfulDelete", format!("succeed to delete pod {pod}")),
            ),
            (Request::DeletePod { pod }, Some(error)) => Note::pod(
                pod,
                Event::warning(
                    "FailedDelete",
                    format!("failed to delete pod {pod}: {error}"),
                ),
            ),
            (Request::WritePod { pod, purpose }, error) => {
                match update_written(pod, purpose, error) {
                    Some(event) => Note::pod(pod, event),
                    None => return Vec::new(),
                }
            }
            (Request::CreatePvc { pvc, .. }, Some(error)) => Note::pvc(
                pvc,
                Event::warning(
                    "FailedCreate",
                    format!("failed to create pvc: {error}, pvc: {pvc}"),
                ),
            ),
            (Request::DeletePvc { pvc, clean_up }, Some(error)) => {
                let what = if clean_up {
                    "failed to clean up PVC"
                } else {
                    "failed to delete pvc"
                };
                Note::pvc(
                    pvc,
                    Event::warning("FailedDelete", format!("{what} {pvc}: {error}")),
                )
            }
            (Request::UpdatePvcOwners { pvc, .. }, Some(error)) => Note::pvc(
                pvc,
                Event::warning(
                    "FailedUpdate",
                    format!("failed to update PVC {pvc}: {error}"),
                ),
            ),
            // A CloneSet fixes no pod identity; PVC writes that went through say nothing.
            (Request::UpdatePod { .. }, _)
            | (
                Request::CreatePvc { .. }
                | Request::DeletePvc { .. }
                | Request::UpdatePvcOwners { .. },
                None,
            ) => return Vec::new(),
        };
        vec![note]
    }

    fn refused(&self, request: Request<'_>, refusal: Refusal<'_>) -> Refused {
        let scale = match request {
            Request::CreatePod { .. }
            | Request::DeletePod { .. }
            | Request::CreatePvc { .. }
            | Request::DeletePvc {
                clean_up: false, ..
            } => true,
            // OpenKruise: a lifecycle write of Scale that fails is an error of Scale.
            Request::WritePod { purpose, .. } => *purpose == Purpose::ScaleLifecycle,
            // The clean-up of `disablePVCReuse` is retried by the next round.
            Request::DeletePvc { clean_up: true, .. } => return Refused::Reported,
            Request::UpdatePod { .. } | Request::UpdatePvcOwners { .. } => false,
        };
        if !scale {
            return Refused::Error;
        }
        let error = refusal.message.to_string();
        Refused::Failure(Failure {
            condition: Some((FAILED_SCALE, error.clone())),
            error,
        })
    }
}

#[cfg(test)]
mod tests;
