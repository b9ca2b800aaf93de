//! AdmissionReviews for the webhook handlers' unit tests.

use serde_json::{Value, json};

use super::review::AdmissionResponse;

/// The body of an AdmissionReview asking about `object` (and `old`) of `kind` in `version`.
pub fn review(
    kind: &str,
    version: &str,
    operation: &str,
    object: Value,
    old: Option<Value>,
) -> Vec<u8> {
    let mut request = json!({
        "uid": "u1",
        "kind": {"group": "apps.kruise.io", "version": version, "kind": kind},
        "operation": operation,
        "object": object,
    });
    if let Some(old) = old {
        request["oldObject"] = old;
    }
    serde_json::to_vec(&json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request
    }))
    .unwrap()
}

/// The code and message of a refusal.
pub fn denial(response: &AdmissionResponse) -> (u16, String) {
    assert!(!response.allowed, "{response:?}");
    let status = response.status.as_ref().unwrap();
    (status.code, status.message.clone())
}
