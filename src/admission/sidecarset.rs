//! `/mutate-apps-kruise-io-sidecarset`: SidecarSet defaults and the two hash annotations, on
//! CREATE and UPDATE; `/validate-apps-kruise-io-sidecarset`: every SidecarSet rule, including
//! conflicts with the other SidecarSets. Both take `v1beta1` and `v1alpha1`: the decisions are
//! made on `v1beta1`, and a patch is written against the version sent.

use super::patch::served_defaulting_patch;
use super::review::{AdmissionResponse, RequestEnvelope, decode_object, decode_working};
use crate::api::sidecarset::v1alpha1;
use crate::api::{SidecarSet, keys};
use crate::convert::Served;
use crate::defaults::sidecarset::default_and_hash;
use crate::validate::field::aggregate;
use crate::validate::sidecarset::{RevisionHistory, validate_sidecarset_with};

/// Decides the answer to one SidecarSet mutation request. No I/O.
pub fn mutate_sidecarset(request: &RequestEnvelope<'_>) -> AdmissionResponse {
    let uid = request.uid.as_str();
    if let Some(denial) = refuse_other_kinds(request, "mutates") {
        return denial;
    }
    if !matches!(request.operation.as_str(), "CREATE" | "UPDATE") {
        return AdmissionResponse::allow(uid);
    }
    if request.kind.version == ALPHA {
        mutate_in::<v1alpha1::SidecarSet>(request)
    } else {
        mutate_in::<SidecarSet>(request)
    }
}

const ALPHA: &str = "v1alpha1";
const VERSIONS: [&str; 2] = ["v1beta1", ALPHA];

fn mutate_in<S: Served<Working = SidecarSet> + Clone>(
    request: &RequestEnvelope<'_>,
) -> AdmissionResponse {
    let uid = request.uid.as_str();
    let set: S = match decode_object(request.object, "request.object") {
        Ok(set) => set,
        Err(message) => return AdmissionResponse::deny(uid, 400, message),
    };
    // Present: `decode_object` refuses a missing object.
    let raw = request.object.map_or("null", |raw| raw.get());
    match served_defaulting_patch(raw, set, |_| {}, default_and_hash) {
        Ok(ops) => AdmissionResponse::allow(uid).with_patch(&ops),
        Err(message) => AdmissionResponse::fail(uid, 500, message),
    }
}

/// The object (`field`) of a request in either version, as `v1beta1`.
fn decode_set(
    request: &RequestEnvelope<'_>,
    raw: Option<&serde_json::value::RawValue>,
    field: &str,
) -> Result<SidecarSet, String> {
    if request.kind.version == ALPHA {
        decode_working::<v1alpha1::SidecarSet>(raw, field)
    } else {
        decode_object(raw, field)
    }
}

/// Decides the answer to one SidecarSet validation request against the other SidecarSets the
/// server knows, the revision it injects looked up in `history`. No I/O. Refusals use code 500,
/// as OpenKruise does for SidecarSets.
pub fn validate_sidecarset_request(
    request: &RequestEnvelope<'_>,
    others: &[std::sync::Arc<SidecarSet>],
    history: &dyn RevisionHistory,
) -> AdmissionResponse {
    let uid = request.uid.as_str();
    if let Some(denial) = refuse_other_kinds(request, "validates") {
        return denial;
    }
    let old = match request.operation.as_str() {
        "CREATE" => None,
        "UPDATE" => match decode_set(request, request.old_object, "request.oldObject") {
            Ok(old) => Some(old),
            Err(message) => return AdmissionResponse::deny(uid, 400, message),
        },
        _ => return AdmissionResponse::allow(uid),
    };
    let set = match decode_set(request, request.object, "request.object") {
        Ok(set) => set,
        Err(message) => return AdmissionResponse::deny(uid, 400, message),
    };
    let errors = validate_sidecarset_with(&set, old.as_ref(), others, history);
    if !errors.is_empty() {
        return AdmissionResponse::deny(uid, 500, aggregate(&errors));
    }
    let mut response = AdmissionResponse::allow(uid);
    response.warnings = sidecarset_warnings(&set);
    response
}

/// Accepted, but probably not what the author meant.
fn sidecarset_warnings(set: &SidecarSet) -> Vec<String> {
    let mut warnings = Vec::new();
    let unrestricted = set.spec.namespace_selector.is_none();
    if unrestricted {
        warnings.push(
            "spec: neither namespace nor namespaceSelector is set: matching pods in every namespace (kube-system included) get these sidecars"
                .to_string(),
        );
    }
    let max_unavailable = set
        .spec
        .update_strategy
        .as_ref()
        .and_then(|s| s.max_unavailable.as_ref());
    if let Some(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::String(percent)) =
        max_unavailable
        && percent
            .trim_end_matches('%')
            .parse::<u32>()
            .is_ok_and(|p| p >= 100)
    {
        warnings.push(format!(
            "spec.updateStrategy.maxUnavailable: {percent} lets a rollout take every matched pod's sidecars down at once"
        ));
    }
    warnings
}

/// A denial for a request that is not about a SidecarSet (a misconfigured webhook rule).
fn refuse_other_kinds(request: &RequestEnvelope<'_>, verb: &str) -> Option<AdmissionResponse> {
    let kind = &request.kind;
    if kind.kind == "SidecarSet"
        && kind.group == keys::GROUP
        && VERSIONS.contains(&kind.version.as_str())
    {
        return None;
    }
    Some(AdmissionResponse::fail(
        &request.uid,
        400,
        format!(
            "request.kind: Unsupported value: \"{}/{}, Kind={}\": this webhook {verb} SidecarSets ({} {}) only",
            kind.group,
            kind.version,
            kind.kind,
            keys::GROUP,
            VERSIONS.join(", ")
        ),
    ))
}

#[cfg(test)]
mod tests;
