//! What a workload's events say about the requests its shell sends, and what a refused request
//! means for the round. The shell is one for every kind; each kind words its events as its Go
//! controller does ([`Wording`]: OpenKruise's CloneSet and StatefulSet texts, upstream's
//! DaemonSet ones), pure, from the request and the apiserver's answer.

use super::{Event, Purpose, PvcFix};

/// A request of a round, as the events speak of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request<'a> {
    CreatePod {
        pod: &'a str,
    },
    DeletePod {
        pod: &'a str,
    },
    /// A write of the in-place engine or of the lifecycle state.
    WritePod {
        pod: &'a str,
        purpose: &'a Purpose,
    },
    /// A pod's identity fixed in place.
    UpdatePod {
        pod: &'a str,
    },
    /// A PVC created for `pod`: before the new pod (`fix: None`, the CloneSet's), or as the
    /// StatefulSet's `fix` says.
    CreatePvc {
        pvc: &'a str,
        pod: &'a str,
        fix: Option<PvcFix>,
    },
    /// A PVC's ownerReferences rewritten: for the StatefulSet's retention policy (`fix`), or
    /// handed over to its pod (`fix: None`, the CloneSet's `disablePVCReuse`).
    UpdatePvcOwners {
        pvc: &'a str,
        pod: &'a str,
        fix: Option<PvcFix>,
    },
    /// A PVC deleted: with its pod, or cleaned up as no pod's (`disablePVCReuse`).
    DeletePvc {
        pvc: &'a str,
        clean_up: bool,
    },
}

/// How the apiserver refused a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refusal<'e> {
    /// The Status code, when the apiserver answered with one.
    pub code: Option<u16>,
    /// The error as Go's `err.Error()` reads it (the Status message).
    pub message: &'e str,
}

/// The object an event concerns besides the workload (the event's `related`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum About {
    Pod(String),
    Pvc(String),
}

/// An event about the workload and one of its pods or PVCs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    pub about: About,
    pub event: Event,
}

impl Note {
    pub fn pod(pod: &str, event: Event) -> Note {
        Note {
            about: About::Pod(pod.to_string()),
            event,
        }
    }

    pub fn pvc(pvc: &str, event: Event) -> Note {
        Note {
            about: About::Pvc(pvc.to_string()),
            event,
        }
    }
}

/// A refused request that the round carries on with (or stops at, as the kind's send policy
/// says): its error, and the status condition it sets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The condition type and message the failure sets on the workload's status.
    pub condition: Option<(&'static str, String)>,
    /// The error as the kind words it.
    pub error: String,
}

/// What a refused request means for the round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// A failure of the round (the first one counts).
    Failure(Failure),
    /// Only its events report it.
    Reported,
    /// The round ends with an error here (retried after a backoff).
    Error,
}

/// How a kind reports the requests of its rounds.
pub trait Wording: Sync {
    /// The events of `request` on the workload named `set`: done (`refused: None`) or refused.
    fn events(&self, set: &str, request: Request<'_>, refused: Option<Refusal<'_>>) -> Vec<Note>;

    /// What a refused `request` means for the round.
    fn refused(&self, request: Request<'_>, refusal: Refusal<'_>) -> Refused;
}

/// The events the in-place engine's writes get from the CloneSet and the StatefulSet (OpenKruise
/// `cloneset_update.go`, `stateful_set_control.go`: the same words): an in-place update or a
/// re-create marking started, or refused.
pub fn update_written(pod: &str, purpose: &Purpose, error: Option<&str>) -> Option<Event> {
    let event = match (purpose, error) {
        (Purpose::InPlace { revision }, None) => Event::normal(
            "SuccessfulUpdatePodInPlace",
            format!("successfully update pod {pod} in-place(revision {revision})"),
        ),
        (Purpose::InPlace { revision }, Some(error)) => Event::warning(
            "FailedUpdatePodInPlace",
            format!("failed to update pod {pod} in-place(revision {revision}): {error}"),
        ),
        (Purpose::Recreate { revision }, None) => Event::normal(
            "SuccessfulUpdatePodReCreate",
            format!(
                "successfully patch pod {pod} specified-delete for update(revision {revision})"
            ),
        ),
        (Purpose::Recreate { revision }, Some(error)) => Event::warning(
            "FailedUpdatePodReCreate",
            format!(
                "failed to patch pod specified-delete {pod} for update(revision {revision}): {error}"
            ),
        ),
        (Purpose::Refresh | Purpose::Lifecycle | Purpose::ScaleLifecycle, _) => return None,
    };
    Some(event)
}
