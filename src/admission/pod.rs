//! `/mutate-pod`: SidecarSet injection, then container launch priority, on pod CREATE.

use k8s_openapi::api::core::v1::Pod;

#[cfg(debug_assertions)]
use super::patch::differs_only_in_mutable_parts;
use super::patch::{PodMutableParts, pod_parts_patch, pod_patch};
use super::review::{AdmissionResponse, RequestEnvelope, decode_object};
use crate::inject::launch_priority::apply_launch_priority;
use crate::inject::sidecar::{InjectionContext, inject_sidecars};
use crate::source::Catalogue;

/// Inputs of a pod mutation that are not in the request.
pub struct PodMutation<'a> {
    pub catalogue: &'a Catalogue,
    /// Admission time, RFC 3339 UTC seconds.
    pub now: &'a str,
    /// Suffix used if launch priority must give a `generateName`d pod its name.
    pub name_suffix: &'a str,
    pub sort_sidecars_by_name: bool,
}

/// Decides the answer to one pod admission request. No I/O.
pub fn mutate_pod(request: &RequestEnvelope<'_>, input: &PodMutation<'_>) -> AdmissionResponse {
    let uid = request.uid.as_str();
    let kind = &request.kind;
    if kind.kind != "Pod" || !kind.group.is_empty() {
        return AdmissionResponse::deny(
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
    let mut pod: Pod = match decode_object(request.object, "request.object") {
        Ok(pod) => pod,
        Err(message) => return AdmissionResponse::deny(uid, 400, message),
    };
    if pod.metadata.namespace.as_deref().unwrap_or("").is_empty() {
        pod.metadata.namespace = request.namespace.clone();
    }

    let namespace = pod.metadata.namespace.as_deref().unwrap_or("default");
    let namespace_labels = input.catalogue.namespace_labels(namespace);
    let context = InjectionContext {
        sidecarsets: input.catalogue.sidecarsets(),
        namespace_labels: namespace_labels.as_deref(),
        now: input.now,
        sort_sidecars_by_name: input.sort_sidecars_by_name,
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
    let injected = match inject_sidecars(&mut mutated, &context) {
        Ok(changed) => changed,
        Err(e) => return AdmissionResponse::deny(uid, 500, e.to_string()),
    };
    let prioritized = match apply_launch_priority(&mut mutated, input.name_suffix) {
        Ok(changed) => changed,
        Err(e) => return AdmissionResponse::deny(uid, 500, e.to_string()),
    };
    if !injected && !prioritized {
        return AdmissionResponse::allow(uid);
    }
    #[cfg(debug_assertions)]
    debug_assert!(
        matches!(before, Before::Whole(_))
            || differs_only_in_mutable_parts(original, mutated.clone()),
        "injection changed a pod field outside its mutable parts"
    );
    let patch = match before {
        Before::MutableParts(parts) => pod_parts_patch(&parts, &mutated),
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
