use super::*;

fn words(request: Request<'_>, refused: Option<Refusal<'_>>) -> Vec<(bool, &'static str, String)> {
    DaemonSetWording
        .events("agent", request, refused)
        .into_iter()
        .map(|note| (note.event.warning, note.event.reason, note.event.message))
        .collect()
}

fn refusal(code: u16, message: &str) -> Refusal<'_> {
    Refusal {
        code: Some(code),
        message,
    }
}

#[test]
fn creations_and_deletions_speak_upstreams_words() {
    let create = Request::CreatePod { pod: "agent-x7k2p" };
    let delete = Request::DeletePod { pod: "agent-x7k2p" };
    assert_eq!(
        words(create, None),
        [(false, "SuccessfulCreate", "Created pod: agent-x7k2p".into())]
    );
    assert_eq!(
        words(create, Some(refusal(403, "exceeded quota: pods"))),
        [(
            true,
            "FailedCreate",
            "Error creating: exceeded quota: pods".into()
        )]
    );
    let terminating = "pods \"agent-x7k2p\" is forbidden: unable to create new content in namespace default because it is being terminated";
    assert!(words(create, Some(refusal(403, terminating))).is_empty());
    assert_eq!(
        words(delete, None),
        [(false, "SuccessfulDelete", "Deleted pod: agent-x7k2p".into())]
    );
    assert_eq!(
        words(delete, Some(refusal(500, "etcd timed out"))),
        [(
            true,
            "FailedDelete",
            "Error deleting: etcd timed out".into()
        )]
    );
}

#[test]
fn in_place_updates_name_the_revision_only_when_they_fail() {
    let purpose = Purpose::InPlace {
        revision: "5d89b87cbc".into(),
    };
    let write = Request::WritePod {
        pod: "agent-x7k2p",
        purpose: &purpose,
    };
    assert_eq!(
        words(write, None),
        [(
            false,
            "SuccessfulUpdatePodInPlace",
            "successfully update pod agent-x7k2p in-place".into()
        )]
    );
    assert_eq!(
        words(write, Some(refusal(422, "invalid"))),
        [(
            true,
            "FailedUpdatePodInPlace",
            "failed to update pod agent-x7k2p in-place(revision agent-5d89b87cbc): invalid".into()
        )]
    );
    let refresh = Request::WritePod {
        pod: "agent-x7k2p",
        purpose: &Purpose::Refresh,
    };
    assert!(words(refresh, None).is_empty());
}

#[test]
fn scale_refusals_are_reported_and_the_round_goes_on_other_writes_end_it() {
    let refused = |request| DaemonSetWording.refused(request, refusal(403, "no"));
    for request in [
        Request::CreatePod { pod: "p" },
        Request::DeletePod { pod: "p" },
        Request::WritePod {
            pod: "p",
            purpose: &Purpose::ScaleLifecycle,
        },
    ] {
        assert_eq!(
            refused(request),
            Refused::Failure(Failure {
                condition: None,
                error: "no".into()
            })
        );
    }
    let in_place = Purpose::InPlace {
        revision: "h".into(),
    };
    let update = Request::WritePod {
        pod: "p",
        purpose: &in_place,
    };
    assert_eq!(refused(update), Refused::Error);
}
