use super::*;
use crate::admission::review::{decode_envelope, decode_review};
use crate::source::dir;

fn catalogue(directory: &str) -> Catalogue {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(directory);
    let (catalogue, errors) = dir::load(&dir::read_directory(&path).unwrap()).into_catalogue();
    assert!(errors.is_empty(), "{errors:?}");
    catalogue
}

fn fixture(name: &str) -> serde_json::Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// The answer through the two-pass path: the reference.
fn two_pass(body: &[u8], input: &PodMutation<'_>) -> Option<AdmissionResponse> {
    let (_, request) = decode_envelope(body).ok()?;
    Some(mutate_pod(&request, input))
}

/// Bodies the pod webhook sees: every pod fixture, and variations of the injected one.
fn bodies() -> Vec<(String, Vec<u8>)> {
    let mut bodies = Vec::new();
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    for entry in std::fs::read_dir(fixtures).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name.starts_with("pod-") {
            bodies.push((name.clone(), serde_json::to_vec(&fixture(&name)).unwrap()));
        }
    }
    let variant = |name: &str, change: &dyn Fn(&mut serde_json::Value)| {
        let mut review = fixture("pod-web-log-agent.json");
        change(&mut review);
        (name.to_string(), serde_json::to_vec(&review).unwrap())
    };
    bodies.push(variant("null object", &|r| {
        r["request"]["object"] = serde_json::Value::Null
    }));
    bodies.push(variant("no object", &|r| {
        r["request"].as_object_mut().unwrap().remove("object");
    }));
    bodies.push(variant("update", &|r| {
        r["request"]["operation"] = "UPDATE".into();
        r["request"]["oldObject"] = r["request"]["object"].clone();
    }));
    bodies.push(variant("malformed update", &|r| {
        r["request"]["operation"] = "UPDATE".into();
        r["request"]["object"]["spec"]["containers"] = "nginx".into();
    }));
    bodies.push(variant("malformed create", &|r| {
        r["request"]["object"]["spec"]["containers"] = "nginx".into();
    }));
    bodies.push(variant("deployment", &|r| {
        r["request"]["kind"] =
            serde_json::json!({"group": "apps", "version": "v1", "kind": "Deployment"});
    }));
    bodies.push(variant("status subresource", &|r| {
        r["request"]["subResource"] = "status".into();
    }));
    bodies.push(variant("unsupported version", &|r| {
        r["apiVersion"] = "v1".into()
    }));
    bodies
}

/// Whatever decodes in one pass gets the two-pass answer; what does not is exactly what the
/// two-pass path refuses or denies.
#[test]
fn one_pass_answers_as_two_pass() {
    for directory in ["bench/sidecarsets", "deploy/examples"] {
        let catalogue = catalogue(directory);
        let input = PodMutation {
            catalogue: &catalogue,
            now: "2026-11-22T10:00:00Z",
            name_suffix: "x2b4z",
            sort_sidecars_by_name: false,
            draw: &crate::inject::sidecar::random_draw,
        };
        for (name, body) in bodies() {
            let reference = two_pass(&body, &input);
            match decode_review::<Pod>(&body) {
                Some((_, mut request)) => {
                    assert_eq!(
                        Some(mutate_decoded_pod(&mut request, &input)),
                        reference,
                        "{directory}: {name}"
                    );
                }
                // Answered by the two-pass path; only a review that path cannot read
                // whole may land there.
                None => assert!(
                    decode_envelope(&body).is_err_and(|_| reference.is_none())
                        || decode_envelope(&body).is_ok_and(|(_, request)| {
                            decode_object::<Pod>(request.object, "request.object").is_err()
                        }),
                    "{directory}: {name} decodes in two passes but not in one"
                ),
            }
        }
    }
}

#[test]
fn injected_fixture_decodes_in_one_pass() {
    let body = serde_json::to_vec(&fixture("pod-web-log-agent.json")).unwrap();
    let (_, request) = decode_review::<Pod>(&body).expect("one pass");
    assert!(request.object.is_some_and(|pod| pod.spec.is_some()));
}

/// The uid of a review whose malformed object comes before it is still in the answer, with
/// the field named.
#[test]
fn uid_after_malformed_object() {
    let body = br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",
        "request":{"kind":{"group":"","version":"v1","kind":"Pod"},"operation":"CREATE",
        "object":{"spec":{"containers":"nginx"}},"uid":"late-uid"}}"#;
    assert!(decode_review::<Pod>(body).is_none());
    let catalogue = Catalogue::default();
    let input = PodMutation {
        catalogue: &catalogue,
        now: "2026-11-22T10:00:00Z",
        name_suffix: "x2b4z",
        sort_sidecars_by_name: false,
        draw: &crate::inject::sidecar::random_draw,
    };
    let answer = two_pass(body, &input).unwrap();
    assert_eq!(answer.uid, "late-uid");
    let message = answer.status.unwrap().message;
    assert!(
        message.starts_with(
            "request.object.spec.containers: Invalid value: invalid type: string \"nginx\", expected a sequence"
        ),
        "{message}"
    );
}

mod prepared;
