use std::sync::Arc;

use serde_json::{Value, json};

use super::*;
use crate::admission::review::decode_envelope;
use crate::admission::test_reviews::{denial, review};
use crate::api::{SidecarSetBuilder, match_labels};

fn sidecarset(version: &str, spec: Value) -> Value {
    let mut spec = spec;
    spec["selector"] = json!({"matchLabels": {"app": "web"}});
    // As the mutating webhook leaves it: validation judges the defaulted object.
    spec["containers"] = json!([{
        "name": "log", "image": "fluent-bit:2", "imagePullPolicy": "IfNotPresent",
        "terminationMessagePolicy": "File", "podInjectPolicy": "BeforeAppContainer",
        "shareVolumePolicy": {"type": "disabled"}
    }]);
    json!({
        "apiVersion": format!("apps.kruise.io/{version}"), "kind": "SidecarSet",
        "metadata": {"name": "logs"}, "spec": spec
    })
}

fn validate(version: &str, spec: Value, others: &[Arc<SidecarSet>]) -> AdmissionResponse {
    let body = review(
        "SidecarSet",
        version,
        "CREATE",
        sidecarset(version, spec),
        None,
    );
    let (_, request) = decode_envelope(&body).unwrap();
    validate_sidecarset_request(&request, others, &crate::validate::sidecarset::NoHistory)
}

/// A v1alpha1 SidecarSet is judged in its v1beta1 form, as OpenKruise converts it: its
/// namespace is a namespace selector, for the field rules and for conflicts alike.
#[test]
fn v1alpha1_is_validated_as_v1beta1() {
    let (code, message) = denial(&validate("v1alpha1", json!({"namespace": "Bad_NS!"}), &[]));
    assert_eq!(code, 500);
    assert!(
        message.starts_with("[spec.namespaceSelector.matchLabels: Invalid value: \"Bad_NS!\""),
        "{message}"
    );
    let shop = |name: &str| {
        Arc::new(
            SidecarSetBuilder::new(name)
                .selector(&[("app", "web")])
                .namespace_selector(match_labels(&[(keys::NAMESPACE_NAME_LABEL, "shop")]))
                .container("log", "fluent-bit:1")
                .build(),
        )
    };
    let (_, message) = denial(&validate(
        "v1alpha1",
        json!({"namespace": "shop"}),
        &[shop("stored")],
    ));
    assert!(
        message.contains("container log already exist in stored"),
        "{message}"
    );
    assert!(validate("v1alpha1", json!({"namespace": "other"}), &[shop("stored")]).allowed);
}

#[test]
fn v1beta1_custom_version_is_accepted() {
    let response = validate("v1beta1", json!({"customVersion": "v2"}), &[]);
    assert!(response.allowed, "{response:?}");
    // Pinned by selector only: no warning about every namespace.
    let response = validate(
        "v1beta1",
        json!({"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "shop"}}}),
        &[],
    );
    assert!(
        response.allowed && response.warnings.is_empty(),
        "{response:?}"
    );
}

#[test]
fn other_versions_are_refused() {
    let (code, message) = denial(&validate("v2", json!({}), &[]));
    assert_eq!(code, 400);
    assert!(message.contains("v1beta1, v1alpha1"), "{message}");
}
