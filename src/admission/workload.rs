//! The Kruise workload webhooks: CloneSet, Advanced StatefulSet (`v1beta1`, and `v1alpha1`
//! through conversion) and Advanced DaemonSet.
//!
//! `/mutate-apps-kruise-io-<kind>` stores OpenKruise's defaults; `/validate-apps-kruise-io-<kind>`
//! checks the defaulted form of the object (so a manifest is judged the same whether or not the
//! mutating webhook ran first) and answers with OpenKruise's status codes: 422 for CloneSet and
//! StatefulSet refusals and DaemonSet updates, 500 for a refused DaemonSet creation, 403 for a
//! deletion refused by `policy.kruise.io/delete-protection`, 400 for undecodable objects.

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::patch::defaulting_patch;
use super::review::{AdmissionResponse, RequestEnvelope, decode_object};
use crate::api::cloneset::CloneSet;
use crate::api::daemonset::DaemonSet;
use crate::api::keys;
use crate::api::statefulset::{self, v1alpha1};
use crate::defaults::workload::{
    default_cloneset, default_daemonset, default_statefulset, default_statefulset_v1alpha1,
};
use crate::validate::cloneset::{
    CloneSetContext, cloneset_deletion_protection, cloneset_warnings, validate_cloneset,
};
use crate::validate::daemonset::{daemonset_warnings, validate_daemonset};
use crate::validate::field::{FieldError, aggregate};
use crate::validate::statefulset::{
    statefulset_deletion_protection, statefulset_warnings, validate_statefulset,
};

const UNPROCESSABLE: u16 = 422;
const FORBIDDEN: u16 = 403;
const BAD_REQUEST: u16 = 400;
const SERVER_ERROR: u16 = 500;

/// The workload kinds, with the API versions each webhook accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workload {
    CloneSet,
    StatefulSet,
    DaemonSet,
}

impl Workload {
    fn kind(self) -> &'static str {
        match self {
            Workload::CloneSet => "CloneSet",
            Workload::StatefulSet => "StatefulSet",
            Workload::DaemonSet => "DaemonSet",
        }
    }

    fn versions(self) -> &'static [&'static str] {
        match self {
            Workload::StatefulSet => &["v1beta1", "v1alpha1"],
            Workload::CloneSet | Workload::DaemonSet => &["v1alpha1"],
        }
    }

    /// A denial when the request is not about this kind in a version this webhook speaks (a
    /// misconfigured webhook rule), as OpenKruise refuses unknown versions with 400.
    fn refuse_other_kinds(self, request: &RequestEnvelope<'_>) -> Option<AdmissionResponse> {
        let kind = &request.kind;
        if kind.group == keys::GROUP
            && kind.kind == self.kind()
            && self.versions().contains(&kind.version.as_str())
        {
            return None;
        }
        Some(AdmissionResponse::fail(
            &request.uid,
            BAD_REQUEST,
            format!(
                "request.kind: Unsupported value: \"{}/{}, Kind={}\": this webhook handles {} {} of {} only",
                kind.group,
                kind.version,
                kind.kind,
                self.kind(),
                self.versions().join(", "),
                keys::GROUP
            ),
        ))
    }
}

/// `/mutate-apps-kruise-io-<kind>`: the defaults of [`crate::defaults::workload`] as a JSON
/// patch, on CREATE and UPDATE. No I/O.
pub fn mutate_workload(workload: Workload, request: &RequestEnvelope<'_>) -> AdmissionResponse {
    if let Some(denial) = workload.refuse_other_kinds(request) {
        return denial;
    }
    if !matches!(request.operation.as_str(), "CREATE" | "UPDATE") {
        return AdmissionResponse::allow(&request.uid);
    }
    match (workload, request.kind.version.as_str()) {
        (Workload::CloneSet, _) => mutate_with(request, default_cloneset),
        (Workload::StatefulSet, "v1alpha1") => mutate_with(request, default_statefulset_v1alpha1),
        (Workload::StatefulSet, _) => mutate_with(request, default_statefulset),
        (Workload::DaemonSet, _) => mutate_with(request, default_daemonset),
    }
}

fn mutate_with<T: DeserializeOwned + Serialize>(
    request: &RequestEnvelope<'_>,
    apply_defaults: fn(&mut T),
) -> AdmissionResponse {
    let uid = request.uid.as_str();
    let object: T = match decode_object(request.object, "request.object") {
        Ok(object) => object,
        Err(message) => return AdmissionResponse::deny(uid, BAD_REQUEST, message),
    };
    // Present: `decode_object` refuses a missing object.
    let raw = request.object.map_or("null", |raw| raw.get());
    match defaulting_patch(raw, object, apply_defaults) {
        Ok(ops) => AdmissionResponse::allow(uid).with_patch(&ops),
        Err(message) => AdmissionResponse::fail(uid, SERVER_ERROR, message),
    }
}

/// `/validate-apps-kruise-io-<kind>`: CREATE, UPDATE and (CloneSet, StatefulSet) DELETE. No I/O;
/// the webhook does not watch pods, so CloneSet `podsToDelete` names are not looked up.
pub fn validate_workload(workload: Workload, request: &RequestEnvelope<'_>) -> AdmissionResponse {
    if let Some(denial) = workload.refuse_other_kinds(request) {
        return denial;
    }
    match workload {
        Workload::CloneSet => validate_cloneset_request(request),
        Workload::StatefulSet => validate_statefulset_request(request),
        Workload::DaemonSet => validate_daemonset_request(request),
    }
}

/// The objects of one request, decoded and defaulted.
enum Decoded<T> {
    Write { new: T, old: Option<T> },
    Delete { old: Option<T> },
    Other,
}

fn decode_request<T: DeserializeOwned>(
    request: &RequestEnvelope<'_>,
    apply_defaults: impl Fn(&mut T),
) -> Result<Decoded<T>, Box<AdmissionResponse>> {
    let decode = |raw, field| {
        decode_object::<T>(raw, field)
            .map(|mut object| {
                apply_defaults(&mut object);
                object
            })
            .map_err(|message| {
                Box::new(AdmissionResponse::deny(&request.uid, BAD_REQUEST, message))
            })
    };
    match request.operation.as_str() {
        "CREATE" => Ok(Decoded::Write {
            new: decode(request.object, "request.object")?,
            old: None,
        }),
        "UPDATE" => Ok(Decoded::Write {
            new: decode(request.object, "request.object")?,
            old: Some(decode(request.old_object, "request.oldObject")?),
        }),
        // An absent old object (older apiservers) cannot be protected: allowed, as upstream.
        "DELETE" if request.old_object.is_none() => Ok(Decoded::Delete { old: None }),
        "DELETE" => Ok(Decoded::Delete {
            old: Some(decode(request.old_object, "request.oldObject")?),
        }),
        _ => Ok(Decoded::Other),
    }
}

fn answer(
    uid: &str,
    errors: &[FieldError],
    refusal_code: u16,
    warnings: Vec<String>,
) -> AdmissionResponse {
    if !errors.is_empty() {
        return AdmissionResponse::deny(uid, refusal_code, aggregate(errors));
    }
    let mut response = AdmissionResponse::allow(uid);
    response.warnings = warnings;
    response
}

fn protect_deletion(uid: &str, refusal: Option<String>) -> AdmissionResponse {
    match refusal {
        Some(message) => AdmissionResponse::deny(uid, FORBIDDEN, message),
        None => AdmissionResponse::allow(uid),
    }
}

fn validate_cloneset_request(request: &RequestEnvelope<'_>) -> AdmissionResponse {
    let uid = request.uid.as_str();
    match decode_request::<CloneSet>(request, default_cloneset) {
        Err(denial) => *denial,
        Ok(Decoded::Write { new, old }) => answer(
            uid,
            &validate_cloneset(&new, old.as_ref(), &CloneSetContext::without_pods()),
            UNPROCESSABLE,
            cloneset_warnings(&new),
        ),
        Ok(Decoded::Delete { old }) => {
            protect_deletion(uid, old.as_ref().and_then(cloneset_deletion_protection))
        }
        Ok(Decoded::Other) => AdmissionResponse::allow(uid),
    }
}

fn validate_statefulset_request(request: &RequestEnvelope<'_>) -> AdmissionResponse {
    let uid = request.uid.as_str();
    // v1alpha1 objects are checked in their v1beta1 form, as OpenKruise converts them.
    let decoded = if request.kind.version == "v1alpha1" {
        decode_request::<v1alpha1::StatefulSet>(request, default_statefulset_v1alpha1).map(
            |decoded| match decoded {
                Decoded::Write { new, old } => Decoded::Write {
                    new: statefulset::StatefulSet::from(new),
                    old: old.map(statefulset::StatefulSet::from),
                },
                Decoded::Delete { old } => Decoded::Delete {
                    old: old.map(statefulset::StatefulSet::from),
                },
                Decoded::Other => Decoded::Other,
            },
        )
    } else {
        decode_request::<statefulset::StatefulSet>(request, default_statefulset)
    };
    match decoded {
        Err(denial) => *denial,
        Ok(Decoded::Write { new, old }) => answer(
            uid,
            &validate_statefulset(&new, old.as_ref()),
            UNPROCESSABLE,
            statefulset_warnings(&new),
        ),
        Ok(Decoded::Delete { old }) => {
            protect_deletion(uid, old.as_ref().and_then(statefulset_deletion_protection))
        }
        Ok(Decoded::Other) => AdmissionResponse::allow(uid),
    }
}

fn validate_daemonset_request(request: &RequestEnvelope<'_>) -> AdmissionResponse {
    let uid = request.uid.as_str();
    match decode_request::<DaemonSet>(request, default_daemonset) {
        Err(denial) => *denial,
        Ok(Decoded::Write { new, old }) => {
            // OpenKruise answers a refused creation with 500 and a refused update with 422.
            let code = if old.is_some() {
                UNPROCESSABLE
            } else {
                SERVER_ERROR
            };
            answer(
                uid,
                &validate_daemonset(&new, old.as_ref()),
                code,
                daemonset_warnings(&new),
            )
        }
        Ok(Decoded::Delete { .. } | Decoded::Other) => AdmissionResponse::allow(uid),
    }
}

#[cfg(test)]
mod tests;
