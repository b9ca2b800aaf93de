//! `/mutate-pod`: the `KruisePodReady` readiness gate, SidecarSet injection, then container launch
//! priority, on pod CREATE.

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
use crate::podmarks::kruise_ready::add_gate;
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
    // OpenKruise's order: the readiness gate, then injection, then launch priority.
    let gated = add_gate(&mut mutated);
    let injection = match inject_prepared(&mut mutated, &context, prepared) {
        Ok(injection) => injection,
        Err(e) => return AdmissionResponse::deny(uid, 500, e.to_string()),
    };
    let prioritized = match apply_launch_priority(&mut mutated, input.name_suffix) {
        Ok(changed) => changed,
        Err(e) => return AdmissionResponse::deny(uid, 500, e.to_string()),
    };
    if !gated && !injection.changed && !prioritized {
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
mod tests;
