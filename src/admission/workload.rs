//! The Kruise workload webhooks: CloneSet, Advanced StatefulSet and Advanced DaemonSet, each in
//! both served versions. Decisions are made on the working type (see `crate::convert`), a patch
//! is written against the version sent.
//!
//! `/mutate-apps-kruise-io-<kind>` stores OpenKruise's defaults; `/validate-apps-kruise-io-<kind>`
//! checks the defaulted form of the object (so a manifest is judged the same whether or not the
//! mutating webhook ran first) and answers with OpenKruise's status codes: 422 for CloneSet and
//! StatefulSet refusals and DaemonSet updates, 500 for a refused DaemonSet creation, 403 for a
//! deletion refused by `policy.kruise.io/delete-protection`, 400 for undecodable objects.

use super::patch::served_defaulting_patch;
use super::review::{AdmissionResponse, RequestEnvelope, decode_object};
use crate::api::cloneset::{self, CloneSet};
use crate::api::daemonset::{self, DaemonSet};
use crate::api::keys;
use crate::api::statefulset::{self, StatefulSet};
use crate::convert::Served;
use crate::defaults::workload::{
    default_cloneset, default_cloneset_v1beta1, default_daemonset, default_daemonset_v1alpha1,
    default_statefulset, default_statefulset_v1alpha1,
};
use crate::validate::cloneset::{
    CloneSetContext, cloneset_deletion_protection, cloneset_warnings, validate_cloneset,
};
use crate::validate::daemonset::{daemonset_warnings, validate_daemonset};
use crate::validate::field::{FieldError, aggregate};
use crate::validate::statefulset::{
    statefulset_deletion_protection, statefulset_warnings, validate_statefulset,
};

const ALPHA: &str = "v1alpha1";
const BETA: &str = "v1beta1";

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
            Workload::StatefulSet | Workload::DaemonSet => &[BETA, ALPHA],
            Workload::CloneSet => &[ALPHA, BETA],
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
    let alpha = request.kind.version == ALPHA;
    match workload {
        Workload::CloneSet if alpha => {
            mutate_in(request, Defaults::<CloneSet>::working(default_cloneset))
        }
        Workload::CloneSet => mutate_in(request, cloneset_v1beta1_defaults()),
        Workload::StatefulSet if alpha => mutate_in(request, statefulset_v1alpha1_defaults()),
        Workload::StatefulSet => mutate_in(
            request,
            Defaults::<StatefulSet>::working(default_statefulset),
        ),
        Workload::DaemonSet if alpha => mutate_in(request, daemonset_v1alpha1_defaults()),
        Workload::DaemonSet => {
            mutate_in(request, Defaults::<DaemonSet>::working(default_daemonset))
        }
    }
}

/// The defaults of one served version `S`: OpenKruise's webhook for that version applies those
/// of `served` to `S` itself (what the working type cannot express), then those of `working`.
struct Defaults<S: Served> {
    served: fn(&mut S),
    working: fn(&mut S::Working),
}

impl<S: Served> Defaults<S> {
    fn working(working: fn(&mut S::Working)) -> Self {
        Defaults {
            served: |_| {},
            working,
        }
    }

    fn apply(&self, mut object: S) -> S::Working {
        (self.served)(&mut object);
        let mut working = object.into_working();
        (self.working)(&mut working);
        working
    }
}

/// OpenKruise's v1alpha1 StatefulSet defaults are those of v1alpha1: no retention policy.
fn statefulset_v1alpha1_defaults() -> Defaults<statefulset::v1alpha1::StatefulSet> {
    Defaults {
        served: default_statefulset_v1alpha1,
        working: |_| {},
    }
}

fn cloneset_v1beta1_defaults() -> Defaults<cloneset::v1beta1::CloneSet> {
    Defaults {
        served: default_cloneset_v1beta1,
        working: default_cloneset,
    }
}

fn daemonset_v1alpha1_defaults() -> Defaults<daemonset::v1alpha1::DaemonSet> {
    Defaults {
        served: default_daemonset_v1alpha1,
        working: default_daemonset,
    }
}

fn mutate_in<S: Served + Clone>(
    request: &RequestEnvelope<'_>,
    defaults: Defaults<S>,
) -> AdmissionResponse {
    let uid = request.uid.as_str();
    let object: S = match decode_object(request.object, "request.object") {
        Ok(object) => object,
        Err(message) => return AdmissionResponse::deny(uid, BAD_REQUEST, message),
    };
    // Present: `decode_object` refuses a missing object.
    let raw = request.object.map_or("null", |raw| raw.get());
    match served_defaulting_patch(raw, object, defaults.served, defaults.working) {
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

/// The objects of `request`, sent as `S`, as the defaulted working type.
fn decode_request<S: Served>(
    request: &RequestEnvelope<'_>,
    defaults: Defaults<S>,
) -> Result<Decoded<S::Working>, Box<AdmissionResponse>> {
    let decode = |raw, field| {
        decode_object::<S>(raw, field)
            .map(|object| defaults.apply(object))
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
    // v1beta1 objects are checked in their v1alpha1 form, the one this project works in.
    let decoded = if request.kind.version == ALPHA {
        decode_request(request, Defaults::<CloneSet>::working(default_cloneset))
    } else {
        decode_request(request, cloneset_v1beta1_defaults())
    };
    match decoded {
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
    let decoded = if request.kind.version == ALPHA {
        decode_request(request, statefulset_v1alpha1_defaults())
    } else {
        decode_request(
            request,
            Defaults::<StatefulSet>::working(default_statefulset),
        )
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
    let decoded = if request.kind.version == ALPHA {
        decode_request(request, daemonset_v1alpha1_defaults())
    } else {
        decode_request(request, Defaults::<DaemonSet>::working(default_daemonset))
    };
    match decoded {
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
