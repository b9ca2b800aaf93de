//! `/mutate-pod`: SidecarSet injection, then container launch priority, on pod CREATE.

use k8s_openapi::api::core::v1::Pod;

#[cfg(debug_assertions)]
use super::patch::differs_only_in_mutable_parts;
use super::patch::{PodMutableParts, pod_parts_patch_with, pod_patch};
use super::review::{
    AdmissionRequest, AdmissionResponse, RequestEnvelope, decode_object, missing_object,
};
use crate::inject::launch_priority::apply_launch_priority;
use crate::inject::prepared::PreparedSidecarSets;
use crate::inject::sidecar::{InjectionContext, inject_prepared};
use crate::source::Catalogue;

/// Inputs of a pod mutation that are not in the request.
pub struct PodMutation<'a> {
    pub catalogue: &'a Catalogue,
    /// Admission time, RFC 3339 UTC seconds.
    pub now: &'a str,
    /// Suffix used if launch priority must give a `generateName`d pod its name.
    pub name_suffix: &'a str,
    pub sort_sidecars_by_name: bool,
    /// Uniform in [0, 1): the chance a `Partial` revision is injected with
    /// ([`crate::inject::sidecar::random_draw`] in production).
    pub draw: &'a dyn Fn() -> f64,
}

/// Decides the answer to one pod admission request. No I/O.
pub fn mutate_pod(request: &RequestEnvelope<'_>, input: &PodMutation<'_>) -> AdmissionResponse {
    mutate_pod_with(
        request,
        || decode_object(request.object, "request.object"),
        input,
        Some(input.catalogue.prepared()),
    )
}

/// [`mutate_pod`] without the catalogue's prepared work: every value of the patch serialized
/// from its typed form. The reference the prepared path is tested against.
#[cfg(test)]
pub(crate) fn mutate_pod_typed(
    request: &RequestEnvelope<'_>,
    input: &PodMutation<'_>,
) -> AdmissionResponse {
    mutate_pod_with(
        request,
        || decode_object(request.object, "request.object"),
        input,
        None,
    )
}

/// [`mutate_pod`] for a request whose pod was decoded with its envelope
/// ([`super::review::decode_review`]); the pod is taken out of the request.
pub fn mutate_decoded_pod<OldObject>(
    request: &mut AdmissionRequest<Pod, OldObject>,
    input: &PodMutation<'_>,
) -> AdmissionResponse {
    let pod = request.object.take();
    mutate_pod_with(
        request,
        move || pod.ok_or_else(|| missing_object("request.object")),
        input,
        Some(input.catalogue.prepared()),
    )
}

/// The decision, whichever way the request was decoded. The pod is asked for only once the
/// request is known to be a pod creation: anything else is answered without it.
fn mutate_pod_with<'c, Object, OldObject>(
    request: &AdmissionRequest<Object, OldObject>,
    decoded_pod: impl FnOnce() -> Result<Pod, String>,
    input: &PodMutation<'c>,
    prepared: Option<&'c PreparedSidecarSets>,
) -> AdmissionResponse {
    let uid = request.uid.as_str();
    let kind = &request.kind;
    if kind.kind != "Pod" || !kind.group.is_empty() {
        return AdmissionResponse::fail(
            uid,
            400,
            format!(
                "request.kind: Unsupported value: \"{}\": this webhook mutates core/v1 Pods only; check the rules of the MutatingWebhookConfiguration that points at /mutate-pod",
                display_kind(kind)
            ),
        );
    }
    // Subresources (pods/status, pods/binding, …) and every operation but CREATE pass untouched:
    // sidecars and launch order are decided once, when the pod is created.
    if request
        .sub_resource
        .as_deref()
        .is_some_and(|s| !s.is_empty())
        || request.operation != "CREATE"
    {
        return AdmissionResponse::allow(uid);
    }
    let mut pod = match decoded_pod() {
        Ok(pod) => pod,
        Err(message) => return AdmissionResponse::deny(uid, 400, message),
    };
    if pod.metadata.namespace.as_deref().unwrap_or("").is_empty() {
        pod.metadata.namespace = request.namespace.clone();
    }

    let namespace = pod.metadata.namespace.as_deref().unwrap_or("default");
    let namespace_labels = input.catalogue.namespace_labels(namespace);
    // Only the SidecarSets the pod could match are looked at: its cost follows them, not the
    // catalogue.
    let candidates = input.catalogue.match_index().candidate_sets(
        input.catalogue.sidecarsets(),
        &pod,
        namespace_labels.as_deref(),
    );
    let context = InjectionContext {
        sidecarsets: &candidates,
        namespace_labels: namespace_labels.as_deref(),
        now: input.now,
        sort_sidecars_by_name: input.sort_sidecars_by_name,
        revisions: input.catalogue.injection_revisions(),
        draw: input.draw,
    };
    // A pod with a spec only changes in its mutable parts (name, annotations, the container,
    // volume and pull-secret lists), so a copy of those is all the patch needs; a pod without
    // one gains a spec and is copied whole.
    let before = if pod.spec.is_some() {
        Before::MutableParts(PodMutableParts::copy_of(&pod))
    } else {
        Before::Whole(Box::new(pod.clone()))
    };
    #[cfg(debug_assertions)]
    let original = pod.clone();
    let mut mutated = pod;
    let injection = match inject_prepared(&mut mutated, &context, prepared) {
        Ok(injection) => injection,
        Err(e) => return AdmissionResponse::deny(uid, 500, e.to_string()),
    };
    let prioritized = match apply_launch_priority(&mut mutated, input.name_suffix) {
        Ok(changed) => changed,
        Err(e) => return AdmissionResponse::deny(uid, 500, e.to_string()),
    };
    if !injection.changed && !prioritized {
        return AdmissionResponse::allow(uid);
    }
    #[cfg(debug_assertions)]
    debug_assert!(
        matches!(before, Before::Whole(_))
            || differs_only_in_mutable_parts(original, mutated.clone()),
        "injection changed a pod field outside its mutable parts"
    );
    let patch = match before {
        Before::MutableParts(parts) => pod_parts_patch_with(&parts, &mutated, &injection.known),
        Before::Whole(pod) => pod_patch(*pod, mutated),
    };
    AdmissionResponse::allow(uid).with_written_patch(patch)
}

/// What the patch is computed from: the pod as it was before injection.
enum Before {
    MutableParts(PodMutableParts),
    Whole(Box<Pod>),
}

fn display_kind(kind: &super::review::GroupVersionKind) -> String {
    match (kind.group.as_str(), kind.kind.as_str()) {
        (_, "") => "<empty>".to_string(),
        ("", k) => k.to_string(),
        (g, k) => format!("{k}.{g}"),
    }
}

#[cfg(test)]
#[path = "prepared_tests.rs"]
mod prepared_tests;

#[cfg(test)]
mod tests {
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
}
