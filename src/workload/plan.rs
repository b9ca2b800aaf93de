//! What every planner returns: one frame the shell sends and settles the same way for every kind
//! ([`Plan`]), with what only the kind plans in `extra`; and the errors that stop a plan.

use std::time::Duration;

use k8s_openapi::api::apps::v1::ControllerRevision;

use super::Action;
use super::Workload;
use super::revision::RevisionError;

/// The result of one round of a workload of status `S`; `X` is what only its kind plans.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan<S, X = ()> {
    /// Sent in order, as the kind's send policy says.
    pub actions: Vec<Action>,
    pub status: S,
    /// Write `status`: it differs from the workload's in what the kind compares.
    pub write_status: bool,
    /// Revisions beyond `revisionHistoryLimit`.
    pub revisions_to_delete: Vec<String>,
    /// The round's error (an update that cannot go on), after its actions and the status:
    /// reported, and the round retried.
    pub error: Option<String>,
    pub requeue_after: Option<Duration>,
    /// Pods the round acts on that it was given as summaries only, by name, sorted. Unless it is
    /// empty the plan is not to be sent: plan again with these pods whole.
    pub needs_whole: Vec<String>,
    /// What only this kind plans (the CloneSet's `podsToDelete` and PVCs, the DaemonSet's
    /// backoff).
    pub extra: X,
}

/// Why a workload cannot be planned.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error(transparent)]
    Revision(#[from] RevisionError),
    #[error("update revision {name} is not in the {kind}'s history")]
    MissingUpdateRevision { kind: String, name: String },
    /// The spec asks for what cannot be planned (the message names the field).
    #[error("{0}")]
    Unplannable(String),
}

/// The update revision `update` and the current one (`status.currentRevision`, the update
/// revision when unset or not in the history) of `set`, from its `history`.
pub fn update_and_current<'h, W: Workload>(
    set: &W,
    history: &'h [ControllerRevision],
    update: &str,
) -> Result<(&'h ControllerRevision, &'h ControllerRevision), PlanError> {
    let find = |name: &str| {
        history
            .iter()
            .find(|r| r.metadata.name.as_deref() == Some(name))
    };
    let update_revision = find(update).ok_or_else(|| PlanError::MissingUpdateRevision {
        kind: W::kind(&()).into_owned(),
        name: update.to_string(),
    })?;
    let current = set
        .current_revision()
        .and_then(find)
        .unwrap_or(update_revision);
    Ok((update_revision, current))
}
