//! AdmissionReview (`admission.k8s.io/v1` and `v1beta1`) decoding and encoding.
//!
//! A request is decoded in one pass where it can be: the envelope and its object together
//! ([`decode_review`]), the object straight into its typed form. When that fails (a malformed
//! object, an envelope we refuse), the two-pass decoding explains why: first the envelope,
//! borrowing the embedded objects as raw JSON ([`decode_envelope`]), so a request whose object is
//! malformed still yields its `uid` and can be answered with a denial that names the problem; then
//! the object into its typed form ([`decode_object`]). serde_json cannot resume after an error in
//! the middle of a value, and a `uid` may follow the object, so the error case pays for two passes
//! and the common case for one.

use json_patch::PatchOperation;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::patch::PatchWriter;

pub const API_VERSION_V1: &str = "admission.k8s.io/v1";
pub const API_VERSION_V1BETA1: &str = "admission.k8s.io/v1beta1";

/// An AdmissionReview whose request is of type `Request`.
#[derive(Deserialize, Debug)]
pub struct Review<Request> {
    #[serde(rename = "apiVersion", default)]
    pub api_version: Option<String>,
    #[serde(default)]
    pub kind: Option<String>,
    pub request: Option<Request>,
}

/// An AdmissionReview whose objects are borrowed as raw JSON.
pub type ReviewEnvelope<'a> = Review<RequestEnvelope<'a>>;

#[derive(Deserialize, Debug, Default, Clone, PartialEq, Eq)]
pub struct GroupVersionKind {
    #[serde(default)]
    pub group: String,
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub kind: String,
}

#[derive(Deserialize, Debug, Default, Clone, PartialEq, Eq)]
pub struct GroupVersionResource {
    #[serde(default)]
    pub group: String,
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub resource: String,
}

/// The request of an AdmissionReview, its object decoded as `Object` and its old object as
/// `OldObject`: raw JSON in a [`RequestEnvelope`], a typed object after [`decode_review`]. An
/// absent or `null` object is `None`.
#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionRequest<Object, OldObject = Object> {
    pub uid: String,
    #[serde(default)]
    pub kind: GroupVersionKind,
    #[serde(default)]
    pub resource: GroupVersionResource,
    #[serde(default)]
    pub sub_resource: Option<String>,
    #[serde(default)]
    pub operation: String,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub namespace: Option<String>,
    #[serde(default)]
    pub dry_run: Option<bool>,
    pub object: Option<Object>,
    pub old_object: Option<OldObject>,
}

/// A request whose objects are borrowed as raw JSON, decoded only when a decision needs them.
pub type RequestEnvelope<'a> = AdmissionRequest<&'a RawValue>;

/// A request that cannot be answered with an AdmissionReview naming its uid.
#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    #[error("request body is not a JSON AdmissionReview: {0}")]
    NotJson(String),
    #[error(
        "unsupported AdmissionReview apiVersion {0:?}: supported: \"admission.k8s.io/v1\", \"admission.k8s.io/v1beta1\""
    )]
    UnsupportedVersion(String),
    #[error("AdmissionReview has no request")]
    MissingRequest,
}

/// Decodes the envelope and checks it is an AdmissionReview request we can answer.
pub fn decode_envelope(body: &[u8]) -> Result<(String, RequestEnvelope<'_>), ReviewError> {
    let envelope: ReviewEnvelope<'_> =
        serde_json::from_slice(body).map_err(|e| ReviewError::NotJson(e.to_string()))?;
    answerable(envelope)
}

/// Decodes the envelope and its object, as `Object`, in one pass; the old object stays raw JSON.
/// `None` when anything is wrong with either: the two-pass [`decode_envelope`] and
/// [`decode_object`] then say what, with the request's uid.
pub fn decode_review<'a, Object: Deserialize<'a>>(
    body: &'a [u8],
) -> Option<(String, AdmissionRequest<Object, &'a RawValue>)> {
    // One UTF-8 check of the whole body, rather than one per string as `from_slice` does.
    let text = std::str::from_utf8(body).ok()?;
    let review: Review<AdmissionRequest<Object, &'a RawValue>> = serde_json::from_str(text).ok()?;
    answerable(review).ok()
}

/// The API version and request of a review we can answer.
fn answerable<Request>(review: Review<Request>) -> Result<(String, Request), ReviewError> {
    let api_version = review.api_version.unwrap_or_default();
    if api_version != API_VERSION_V1 && api_version != API_VERSION_V1BETA1 {
        return Err(ReviewError::UnsupportedVersion(api_version));
    }
    if review.kind.as_deref() != Some("AdmissionReview") {
        return Err(ReviewError::NotJson(format!(
            "kind is {:?}, expected \"AdmissionReview\"",
            review.kind.unwrap_or_default()
        )));
    }
    let request = review.request.ok_or(ReviewError::MissingRequest)?;
    Ok((api_version, request))
}

/// The error of a request without the object a decision needs.
pub fn missing_object(field: &str) -> String {
    format!("{field}: Required value: the request carries no object")
}

/// Decodes an embedded object, naming the field (`request.object`) in the error.
pub fn decode_object<T: DeserializeOwned>(
    raw: Option<&RawValue>,
    field: &str,
) -> Result<T, String> {
    let raw = raw.ok_or_else(|| missing_object(field))?;
    // The fast decoder first; the path-tracking one only to explain a failure.
    if let Ok(object) = serde_json::from_str(raw.get()) {
        return Ok(object);
    }
    let mut deserializer = serde_json::Deserializer::from_str(raw.get());
    serde_path_to_error::deserialize(&mut deserializer).map_err(|e| {
        let path = e.path().to_string();
        let location = if path == "." {
            field.to_string()
        } else {
            format!("{field}.{path}")
        };
        format!("{location}: Invalid value: {}", e.inner())
    })
}

/// Decodes an embedded object sent in the served version `S`, as its working type.
pub fn decode_working<S: crate::convert::Served>(
    raw: Option<&RawValue>,
    field: &str,
) -> Result<S::Working, String> {
    decode_object::<S>(raw, field).map(S::into_working)
}

/// The response half of an AdmissionReview, in the wire shape the apiserver reads.
#[derive(Serialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionResponse {
    pub uid: String,
    pub allowed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<ResponseStatus>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch_type: Option<&'static str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The webhook failed to decide (a fault of its own or of its configuration), as opposed to
    /// refusing what the request asks for. Counted as `result="error"`; never sent.
    #[serde(skip)]
    pub malfunction: bool,
}

#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct ResponseStatus {
    pub code: u16,
    pub message: String,
    #[serde(skip_serializing_if = "str::is_empty")]
    pub reason: &'static str,
}

impl AdmissionResponse {
    pub fn allow(uid: &str) -> Self {
        AdmissionResponse {
            uid: uid.to_string(),
            allowed: true,
            status: None,
            patch: None,
            patch_type: None,
            warnings: Vec::new(),
            malfunction: false,
        }
    }

    /// Refuses what the request asks for (a wrong object, a policy); `code` follows OpenKruise
    /// (400 bad object, 403 deletion protection, 422 invalid, and 500 for the refusals OpenKruise
    /// answers with it: SidecarSets, injection, a DaemonSet's creation).
    pub fn deny(uid: &str, code: u16, message: impl Into<String>) -> Self {
        let reason = match code {
            400 => "BadRequest",
            403 => "Forbidden",
            422 => "Invalid",
            _ => "InternalError",
        };
        AdmissionResponse {
            status: Some(ResponseStatus {
                code,
                message: message.into(),
                reason,
            }),
            allowed: false,
            ..AdmissionResponse::allow(uid)
        }
    }

    /// Refuses because the webhook could not decide: a fault of its own, or a webhook
    /// configuration that sends it what it does not handle.
    pub fn fail(uid: &str, code: u16, message: impl Into<String>) -> Self {
        AdmissionResponse {
            malfunction: true,
            ..AdmissionResponse::deny(uid, code, message)
        }
    }

    /// Allows with a JSON patch; an empty patch is a plain allow.
    pub fn with_patch(self, ops: &[PatchOperation]) -> Self {
        let mut patch = PatchWriter::new();
        ops.iter().for_each(|op| patch.push(op));
        self.with_written_patch(patch)
    }

    /// Allows with a patch already written as JSON text; an empty patch is a plain allow.
    pub fn with_written_patch(mut self, patch: PatchWriter) -> Self {
        let Some(json) = patch.finish() else {
            return self;
        };
        self.patch = Some(base64_simd::STANDARD.encode_to_string(json));
        self.patch_type = Some("JSONPatch");
        self
    }

    /// The decoded patch, if any.
    pub fn patch_operations(&self) -> Option<Vec<PatchOperation>> {
        let bytes = base64_simd::STANDARD
            .decode_to_vec(self.patch.as_ref()?)
            .ok()?;
        serde_json::from_slice(&bytes).ok()
    }
}

#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct ResponseReview<'a> {
    pub api_version: &'a str,
    pub kind: &'static str,
    pub response: &'a AdmissionResponse,
}

/// The full AdmissionReview answer, in the version the request used.
pub fn encode_review(api_version: &str, response: &AdmissionResponse) -> Vec<u8> {
    let patch_len = response.patch.as_ref().map_or(0, String::len);
    let mut body = Vec::with_capacity(256 + patch_len);
    if write_review(&mut body, api_version, response).is_err() {
        body.clear();
    }
    body
}

/// Writes what serde would write for [`ResponseReview`], except that the patch is copied in as it
/// is: base64 has no character JSON escapes, so the serializer's escaping scan over the longest
/// string of the answer is wasted work.
fn write_review(
    body: &mut Vec<u8>,
    api_version: &str,
    response: &AdmissionResponse,
) -> serde_json::Result<()> {
    body.extend_from_slice(b"{\"apiVersion\":");
    serde_json::to_writer(&mut *body, api_version)?;
    body.extend_from_slice(b",\"kind\":\"AdmissionReview\",\"response\":{\"uid\":");
    serde_json::to_writer(&mut *body, &response.uid)?;
    body.extend_from_slice(b",\"allowed\":");
    body.extend_from_slice(if response.allowed { b"true" } else { b"false" });
    if let Some(status) = &response.status {
        body.extend_from_slice(b",\"status\":");
        serde_json::to_writer(&mut *body, status)?;
    }
    if let Some(patch) = &response.patch {
        body.extend_from_slice(b",\"patch\":\"");
        body.extend_from_slice(patch.as_bytes());
        body.push(b'"');
    }
    if let Some(patch_type) = response.patch_type {
        body.extend_from_slice(b",\"patchType\":");
        serde_json::to_writer(&mut *body, patch_type)?;
    }
    if !response.warnings.is_empty() {
        body.extend_from_slice(b",\"warnings\":");
        serde_json::to_writer(&mut *body, &response.warnings)?;
    }
    body.extend_from_slice(b"}}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelope_keeps_uid_when_object_is_bad() {
        let body = br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",
            "request":{"uid":"u1","kind":{"group":"","version":"v1","kind":"Pod"},
            "operation":"CREATE","object":{"spec":{"containers":"oops"}}}}"#;
        let (version, request) = decode_envelope(body).unwrap();
        assert_eq!(version, API_VERSION_V1);
        assert_eq!(request.uid, "u1");
        let err =
            decode_object::<k8s_openapi::api::core::v1::Pod>(request.object, "request.object")
                .unwrap_err();
        assert!(
            err.starts_with("request.object.spec.containers: Invalid value: invalid type: string"),
            "{err}"
        );
    }

    #[test]
    fn null_object_is_missing() {
        let body = br#"{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview",
            "request":{"uid":"u2","operation":"CREATE","object":null}}"#;
        let (version, request) = decode_envelope(body).unwrap();
        assert_eq!(version, API_VERSION_V1BETA1);
        assert!(request.object.is_none());
    }

    #[test]
    fn envelope_errors() {
        assert!(matches!(
            decode_envelope(b"not json"),
            Err(ReviewError::NotJson(_))
        ));
        assert!(matches!(
            decode_envelope(br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}"#),
            Err(ReviewError::MissingRequest)
        ));
        assert!(matches!(
            decode_envelope(br#"{"apiVersion":"v1","kind":"Pod"}"#),
            Err(ReviewError::UnsupportedVersion(_))
        ));
    }

    #[test]
    fn hand_written_review_is_what_serde_writes() {
        let ops = [PatchOperation::Add(json_patch::AddOperation {
            path: jsonptr::PointerBuf::parse("/metadata/annotations/a~1b").unwrap(),
            value: serde_json::json!({"k": "v \"quoted\" \u{1}"}),
        })];
        let mut warned = AdmissionResponse::allow("u\"1\\").with_patch(&ops);
        warned.warnings = vec!["first \"one\"".to_string(), "second".to_string()];
        let responses = [
            AdmissionResponse::allow("plain"),
            AdmissionResponse::deny("d", 403, "no \"way\"\n"),
            AdmissionResponse::deny("e", 500, ""),
            AdmissionResponse::allow("p").with_patch(&ops),
            warned,
        ];
        for response in &responses {
            for version in [API_VERSION_V1, API_VERSION_V1BETA1] {
                let review = ResponseReview {
                    api_version: version,
                    kind: "AdmissionReview",
                    response,
                };
                assert_eq!(
                    String::from_utf8(encode_review(version, response)).unwrap(),
                    serde_json::to_string(&review).unwrap()
                );
            }
        }
    }

    #[test]
    fn response_shape() {
        let response = AdmissionResponse::deny("u", 500, "boom");
        let json: serde_json::Value =
            serde_json::from_slice(&encode_review(API_VERSION_V1, &response)).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",
                "response":{"uid":"u","allowed":false,"status":{"code":500,"message":"boom","reason":"InternalError"}}})
        );
    }
}
