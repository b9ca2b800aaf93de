//! The events an Advanced StatefulSet records on itself, with OpenKruise's reasons and messages
//! word for word (`stateful_pod_control.go` `recordPodEvent`, `recordClaimEvent`;
//! `stateful_set_control.go` `deletePod`, `inPlaceUpdatePod`). Component `statefulset-controller`.

use crate::workload::Event;

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

/// An in-place update started, or failed to.
pub fn in_place(pod: &str, revision: &str, error: Option<&str>) -> Event {
    match error {
        None => Event {
            warning: false,
            reason: "SuccessfulUpdatePodInPlace",
            message: format!("successfully update pod {pod} in-place(revision {revision})"),
        },
        Some(error) => Event::warning(
            "FailedUpdatePodInPlace",
            format!("failed to update pod {pod} in-place(revision {revision}): {error}"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_kruises() {
        let cases = [
            (
                pod(Verb::Create, "web", "web-0", None),
                false,
                "SuccessfulCreate",
                "create Pod web-0 in StatefulSet web successful",
            ),
            (
                pod(
                    Verb::Create,
                    "web",
                    "web-0",
                    Some("pvc data-web-0 is to be deleted"),
                ),
                true,
                "FailedCreate",
                "create Pod web-0 in StatefulSet web failed error: pvc data-web-0 is to be deleted",
            ),
            (
                pod(Verb::Update, "web", "web-0", None),
                false,
                "SuccessfulUpdate",
                "update Pod web-0 in StatefulSet web successful",
            ),
            (
                pod(Verb::Update, "web", "web-0", Some("x")),
                true,
                "FailedUpdate",
                "update Pod web-0 in StatefulSet web failed error: x",
            ),
            (
                pod(Verb::Delete, "web", "web-2", None),
                false,
                "SuccessfulDelete",
                "delete Pod web-2 in StatefulSet web successful",
            ),
            (
                pod(Verb::Delete, "web", "web-2", Some("x")),
                true,
                "FailedDelete",
                "delete Pod web-2 in StatefulSet web failed error: x",
            ),
            (
                delete_failed("web-2", "x"),
                true,
                "FailedDelete",
                "failed to delete pod web-2: x",
            ),
            (
                claim_created("web", "web-0", "data-web-0", None),
                false,
                "SuccessfulCreate",
                "create Claim data-web-0 Pod web-0 in StatefulSet web success",
            ),
            (
                claim_created("web", "web-0", "data-web-0", Some("x")),
                true,
                "FailedCreate",
                "create Claim data-web-0 for Pod web-0 in StatefulSet web failed error: x",
            ),
            (
                in_place("web-2", "web-abc", None),
                false,
                "SuccessfulUpdatePodInPlace",
                "successfully update pod web-2 in-place(revision web-abc)",
            ),
            (
                in_place("web-2", "web-abc", Some("x")),
                true,
                "FailedUpdatePodInPlace",
                "failed to update pod web-2 in-place(revision web-abc): x",
            ),
        ];
        for (event, warning, reason, message) in cases {
            assert_eq!(
                (event.warning, event.reason, event.message.as_str()),
                (warning, reason, message)
            );
        }
    }
}
