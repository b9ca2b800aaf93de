use super::*;
use crate::workload::Purpose;

#[test]
fn messages_are_kruises() {
    let in_place = Purpose::InPlace {
        revision: "web-abc".into(),
    };
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
            update_written("web-2", &in_place, None).unwrap(),
            false,
            "SuccessfulUpdatePodInPlace",
            "successfully update pod web-2 in-place(revision web-abc)",
        ),
        (
            update_written("web-2", &in_place, Some("x")).unwrap(),
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
