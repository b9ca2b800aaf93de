use serde_json::json;

use super::*;

fn review(api_version: &str, desired: &str, objects: Vec<Value>) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "apiVersion": api_version, "kind": "ConversionReview",
        "request": {"uid": "c-1", "desiredAPIVersion": desired, "objects": objects}
    }))
    .unwrap()
}

fn sidecarset(version: &str, name: &str) -> Value {
    json!({
        "apiVersion": format!("apps.kruise.io/{version}"), "kind": "SidecarSet",
        "metadata": {"name": name, "resourceVersion": "5"},
        "spec": {"namespace": "shop", "containers": [{"name": "log", "image": "log:1"}]}
    })
}

/// Answered in the review's own version, every object converted, in order, objects already in
/// the desired version included.
#[test]
fn every_object_is_converted_in_either_review_version() {
    for api_version in [API_VERSION_V1, API_VERSION_V1BETA1] {
        let objects = vec![
            sidecarset("v1alpha1", "a"),
            json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet", "metadata": {"name": "b"}, "spec": {}}),
        ];
        let answered = answer(&review(api_version, "apps.kruise.io/v1beta1", objects)).unwrap();
        let text = serde_json::to_value(&answered).unwrap();
        assert_eq!(text["apiVersion"], api_version);
        assert_eq!(text["kind"], "ConversionReview");
        assert_eq!(text["response"]["uid"], "c-1");
        assert_eq!(text["response"]["result"], json!({"status": "Success"}));
        let converted = text["response"]["convertedObjects"].as_array().unwrap();
        assert_eq!(converted.len(), 2);
        assert_eq!(converted[0]["apiVersion"], "apps.kruise.io/v1beta1");
        assert_eq!(
            converted[0]["spec"]["namespaceSelector"],
            json!({"matchLabels": {"kubernetes.io/metadata.name": "shop"}})
        );
        assert_eq!(converted[0]["metadata"]["resourceVersion"], "5");
        assert_eq!(converted[1]["metadata"]["name"], "b");
    }
}

/// One object that cannot be converted fails the review, naming the object and the field.
#[test]
fn a_failure_names_the_object_and_the_field() {
    let mut bad = sidecarset("v1alpha1", "bad");
    bad["spec"]["updateStrategy"] = json!({"paused": "yes"});
    let objects = vec![sidecarset("v1alpha1", "good"), bad];
    let failed = answer(&review(API_VERSION_V1, "apps.kruise.io/v1beta1", objects)).unwrap();
    assert_eq!(failed.response.converted_objects, None);
    assert_eq!(failed.response.result.status, "Failure");
    assert_eq!(
        failed.response.result.message,
        "objects[1] (SidecarSet bad): spec.updateStrategy.paused: Invalid value: invalid type: string \"yes\", expected a boolean"
    );
    let unknown = json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "BroadcastJob",
        "metadata": {"name": "job", "namespace": "ns"}});
    let refused = answer(&review(
        API_VERSION_V1,
        "apps.kruise.io/v1beta1",
        vec![unknown],
    ))
    .unwrap();
    let message = &refused.response.result.message;
    assert!(
        message.starts_with("objects[0] (BroadcastJob ns/job): cannot convert BroadcastJob"),
        "{message}"
    );
}

#[test]
fn what_is_no_conversion_review_is_refused() {
    assert!(matches!(answer(b"nope"), Err(ReviewError::NotJson(_))));
    assert_eq!(
        answer(br#"{"apiVersion": "admission.k8s.io/v1", "kind": "ConversionReview"}"#),
        Err(ReviewError::UnsupportedVersion(
            "admission.k8s.io/v1".into()
        ))
    );
    assert_eq!(
        answer(br#"{"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview"}"#),
        Err(ReviewError::MissingRequest)
    );
    assert!(matches!(
        answer(br#"{"apiVersion": "apiextensions.k8s.io/v1", "kind": "AdmissionReview"}"#),
        Err(ReviewError::NotJson(_))
    ));
}
