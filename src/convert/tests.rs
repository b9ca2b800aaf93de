use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;

pub fn one_of(options: &'static [&'static str]) -> impl Strategy<Value = String> {
    proptest::sample::select(options).prop_map(String::from)
}

/// Keys whose objects are string maps (labels, quantities), where an unknown field would be a
/// wrong value, not an unknown field.
const MAPS: &[&str] = &[
    "labels",
    "annotations",
    "matchLabels",
    "limits",
    "requests",
    "nodeSelector",
    "labelsHandler",
];

/// Adds, for each `(position, n)`, the field `zzUnknown<n>: {"n": n}` to the object at
/// `position` (modulo their number) in document order, maps of strings and the objects under
/// the keys `skip` left out.
///
/// The objects a version alone has (`skip`) get none: under this project's CRDs the apiserver
/// prunes fields its schema lacks there (they are not `x-kubernetes-preserve-unknown-fields`),
/// so no such field reaches a conversion (docs/conversion.md).
pub fn with_unknown_fields(object: &mut Value, fields: &[(usize, u8)], skip: &[&str]) {
    fn objects(value: &Value, path: String, skip: &[&str], out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                out.push(path.clone());
                for (key, child) in map {
                    if !MAPS.contains(&key.as_str()) && !skip.contains(&key.as_str()) {
                        objects(child, format!("{path}/{key}"), skip, out);
                    }
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    objects(item, format!("{path}/{i}"), skip, out);
                }
            }
            _ => {}
        }
    }
    for (position, n) in fields {
        let mut found = Vec::new();
        objects(object, String::new(), skip, &mut found);
        let path = &found[position % found.len()];
        if let Some(Value::Object(map)) = object.pointer_mut(path) {
            map.insert(format!("zzUnknown{n}"), json!({ "n": n }));
        }
    }
}

#[test]
fn an_object_in_the_desired_version_comes_back_unchanged() {
    let raw =
        json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet", "spec": {"x": 1}});
    assert_eq!(convert(&raw, "apps.kruise.io/v1beta1").unwrap(), raw);
}

#[test]
fn unsupported_kinds_and_versions_are_named() {
    for (raw, desired) in [
        (
            json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "BroadcastJob"}),
            "apps.kruise.io/v1beta1",
        ),
        (
            json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "SidecarSet"}),
            "apps.kruise.io/v2",
        ),
        (
            json!({"apiVersion": "apps/v1", "kind": "SidecarSet"}),
            "apps.kruise.io/v1beta1",
        ),
    ] {
        let error = convert(&raw, desired).unwrap_err();
        assert!(matches!(error, ConvertError::Unsupported { .. }), "{error}");
        assert!(error.to_string().contains(desired), "{error}");
    }
}

#[test]
fn a_field_that_does_not_decode_is_named() {
    let raw = json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "SidecarSet",
        "metadata": {"name": "mesh"},
        "spec": {"updateStrategy": {"paused": "yes"}}
    });
    let error = convert(&raw, "apps.kruise.io/v1beta1").unwrap_err();
    assert_eq!(
        error.to_string(),
        "spec.updateStrategy.paused: Invalid value: invalid type: string \"yes\", expected a boolean"
    );
}

/// The apiserver refuses a conversion that changes metadata other than labels and annotations:
/// what the types would re-render (timestamps, managed fields, fields they do not know) is kept
/// as sent.
#[test]
fn metadata_is_kept_but_for_labels_and_annotations() {
    let raw = json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "SidecarSet",
        "metadata": {
            "name": "mesh", "uid": "u-1", "resourceVersion": "7", "generation": 2,
            "creationTimestamp": "2026-01-02T03:04:05Z",
            "managedFields": [{"manager": "kubectl", "operation": "Update", "apiVersion": "apps.kruise.io/v1alpha1",
                "time": "2026-01-02T03:04:05Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}}}],
            "futureMetadata": true,
            "labels": {"apps.kruise.io/sidecarset-custom-version": "v2"}
        },
        "spec": {}
    });
    let converted = convert(&raw, "apps.kruise.io/v1beta1").unwrap();
    let mut expected = raw["metadata"].clone();
    expected.as_object_mut().unwrap().remove("labels");
    assert_eq!(converted["metadata"], expected);
    assert_eq!(converted["spec"]["customVersion"], "v2");
}

#[test]
fn what_the_conversion_does_not_touch_keeps_its_raw_json() {
    let raw = json!({
        "a": {"known": 1, "new": {"x": 1}, "spelled": 1.0},
        "list": [{"k": 1, "n": 2}],
        "gone": 3,
        "nil": null,
        "b": {"kept": 1}
    });
    // The typed reading: unknown fields dropped, a number re-rendered, an empty default added.
    let known = json!({
        "a": {"known": 1, "spelled": 1, "added": {}},
        "list": [{"k": 1}],
        "gone": 3,
        "b": {"kept": 1, "added": 0}
    });
    // The conversion renamed `gone` and changed `a.known`.
    let mut converted = json!({
        "a": {"known": 2, "spelled": 1, "added": {}},
        "list": [{"k": 1}],
        "moved": 3,
        "b": {"kept": 1, "added": 0}
    });
    unknown::restore(&raw, &known, &mut converted);
    assert_eq!(
        converted,
        json!({
            "a": {"known": 2, "new": {"x": 1}, "spelled": 1.0},
            "list": [{"k": 1, "n": 2}],
            "moved": 3,
            "b": {"kept": 1}
        })
    );
}
