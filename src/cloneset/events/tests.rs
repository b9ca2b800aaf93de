use super::*;

fn words(request: Request<'_>, refused: Option<Refusal<'_>>) -> Vec<(bool, &'static str, String)> {
    CloneSetWording
        .events("web", request, refused)
        .into_iter()
        .map(|note| (note.event.warning, note.event.reason, note.event.message))
        .collect()
}

const QUOTA: Refusal<'static> = Refusal {
    code: Some(403),
    message: "exceeded quota",
};

#[test]
fn events_are_openkruises_words() {
    let pvc = "data-web-abcde";
    let cases = [
        (
            words(Request::CreatePod { pod: "web-abcde" }, None),
            (false, "SuccessfulCreate", "succeed to create pod web-abcde"),
        ),
        (
            words(Request::CreatePod { pod: "web-abcde" }, Some(QUOTA)),
            (
                true,
                "FailedCreate",
                "failed to create pod: exceeded quota, pod: web-abcde",
            ),
        ),
        (
            words(Request::DeletePod { pod: "web-abcde" }, None),
            (false, "SuccessfulDelete", "succeed to delete pod web-abcde"),
        ),
        (
            words(
                Request::CreatePvc {
                    pvc,
                    pod: "web-abcde",
                    fix: None,
                },
                Some(QUOTA),
            ),
            (
                true,
                "FailedCreate",
                "failed to create pvc: exceeded quota, pvc: data-web-abcde",
            ),
        ),
        (
            words(
                Request::DeletePvc {
                    pvc,
                    clean_up: true,
                },
                Some(QUOTA),
            ),
            (
                true,
                "FailedDelete",
                "failed to clean up PVC data-web-abcde: exceeded quota",
            ),
        ),
    ];
    for (got, (warning, reason, message)) in cases {
        assert_eq!(got, [(warning, reason, message.to_string())]);
    }
}

#[test]
fn a_refused_scale_write_is_failed_scale_and_an_update_ends_the_round() {
    let failed_scale = Refused::Failure(Failure {
        condition: Some((FAILED_SCALE, "exceeded quota".into())),
        error: "exceeded quota".into(),
    });
    let pre_delete = Request::WritePod {
        pod: "p",
        purpose: &Purpose::ScaleLifecycle,
    };
    let in_place = Purpose::InPlace {
        revision: "web-1".into(),
    };
    let update = Request::WritePod {
        pod: "p",
        purpose: &in_place,
    };
    let clean_up = Request::DeletePvc {
        pvc: "x",
        clean_up: true,
    };
    let refused = |request| CloneSetWording.refused(request, QUOTA);
    assert_eq!(refused(Request::CreatePod { pod: "p" }), failed_scale);
    assert_eq!(refused(pre_delete), failed_scale);
    assert_eq!(refused(update), Refused::Error);
    assert_eq!(refused(clean_up), Refused::Reported);
}
