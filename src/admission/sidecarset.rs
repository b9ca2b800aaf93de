//! `/mutate-apps-kruise-io-sidecarset`: SidecarSet defaults and the two hash annotations, on
//! CREATE and UPDATE.

use super::patch::diff;
use super::review::{AdmissionResponse, RequestEnvelope, decode_object};
use crate::api::{SidecarSet, keys};
use crate::inject::defaults::default_and_hash;

/// Decides the answer to one SidecarSet mutation request. No I/O.
pub fn mutate_sidecarset(request: &RequestEnvelope<'_>) -> AdmissionResponse {
    let uid = request.uid.as_str();
    if request.kind.kind != "SidecarSet" || request.kind.group != keys::GROUP {
        return AdmissionResponse::deny(
            uid,
            400,
            format!(
                "request.kind: Unsupported value: \"{}.{}\": this webhook mutates SidecarSets ({}) only",
                request.kind.kind,
                request.kind.group,
                keys::GROUP
            ),
        );
    }
    if !matches!(request.operation.as_str(), "CREATE" | "UPDATE") {
        return AdmissionResponse::allow(uid);
    }
    let set: SidecarSet = match decode_object(request.object, "request.object") {
        Ok(set) => set,
        Err(message) => return AdmissionResponse::deny(uid, 400, message),
    };
    let before = match serde_json::to_value(&set) {
        Ok(value) => value,
        Err(e) => return AdmissionResponse::deny(uid, 500, format!("re-encoding: {e}")),
    };
    let mut defaulted = set;
    default_and_hash(&mut defaulted);
    match serde_json::to_value(&defaulted) {
        Ok(after) => AdmissionResponse::allow(uid).with_patch(&diff(&before, &after)),
        Err(e) => AdmissionResponse::deny(uid, 500, format!("re-encoding: {e}")),
    }
}
