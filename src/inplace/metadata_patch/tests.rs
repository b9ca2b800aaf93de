use super::*;

fn meta(json: Value) -> ObjectMeta {
    serde_json::from_value(json).expect("test metadata")
}

fn patch_text(old: Value, new: Value) -> String {
    let bytes = create_metadata_patch(&meta(old), &meta(new)).unwrap();
    String::from_utf8(bytes).unwrap()
}

#[test]
fn label_added() {
    assert_eq!(
        patch_text(
            serde_json::json!({"labels":{"k":"v"}}),
            serde_json::json!({"labels":{"k":"v","k1":"v1"}})
        ),
        r#"{"metadata":{"labels":{"k1":"v1"}}}"#
    );
}

#[test]
fn labels_and_finalizers_as_kubernetes_writes_them() {
    assert_eq!(
        patch_text(
            serde_json::json!({"labels":{"k":"v","k2":"v2"},"finalizers":["fz1","fz2"]}),
            serde_json::json!({"labels":{"k":"v","k1":"v1"},"finalizers":["fz2"]})
        ),
        r#"{"metadata":{"$deleteFromPrimitiveList/finalizers":["fz1"],"$setElementOrder/finalizers":["fz2"],"labels":{"k1":"v1","k2":null}}}"#
    );
}

#[test]
fn equal_metadata_gives_empty_patch() {
    let m = serde_json::json!({"labels":{"a":"b"}});
    assert_eq!(patch_text(m.clone(), m), "{}");
}

#[test]
fn removed_field_is_nulled() {
    assert_eq!(
        patch_text(
            serde_json::json!({"labels":{"a":"b"},"annotations":{"x":"y"}}),
            serde_json::json!({"labels":{"a":"b"}})
        ),
        r#"{"metadata":{"annotations":null}}"#
    );
}

/// Applying the patch made from old→new to a pod whose metadata equals old yields new, and
/// keeps what the pod has beyond the template (here a pod-only label and name).
#[test]
fn apply_reproduces_the_new_metadata() {
    let cases = [
        (
            serde_json::json!({"labels":{"k":"v","k2":"v2"},"finalizers":["fz1","fz2"]}),
            serde_json::json!({"labels":{"k":"v","k1":"v1"},"finalizers":["fz2","fz3"]}),
        ),
        (
            serde_json::json!({"annotations":{"a":"1"}}),
            serde_json::json!({"labels":{"l":"2"},"finalizers":["f"]}),
        ),
        (
            serde_json::json!({"labels":{"l":"2"},"finalizers":["f"]}),
            serde_json::json!({}),
        ),
    ];
    for (old, new) in cases {
        let patch = create_metadata_patch(&meta(old.clone()), &meta(new.clone())).unwrap();
        let mut pod = Pod {
            metadata: meta(old),
            ..Default::default()
        };
        apply_metadata_patch(&mut pod, &patch).unwrap();
        assert_eq!(pod.metadata, meta(new.clone()), "patch {patch:?}");
    }
}

#[test]
fn apply_keeps_pod_only_fields() {
    let mut pod = Pod {
        metadata: meta(serde_json::json!({"name":"p","labels":{"own":"x","k2":"v2"}})),
        ..Default::default()
    };
    apply_metadata_patch(
        &mut pod,
        br#"{"metadata":{"labels":{"k1":"v1","k2":null}}}"#,
    )
    .unwrap();
    assert_eq!(
        pod.metadata,
        meta(serde_json::json!({"name":"p","labels":{"own":"x","k1":"v1"}}))
    );
}

#[test]
fn malformed_patch_is_an_error() {
    let mut pod = Pod::default();
    assert!(apply_metadata_patch(&mut pod, b"[1]").is_err());
    assert!(apply_metadata_patch(&mut pod, br#"{"metadata":3}"#).is_err());
    assert!(apply_metadata_patch(&mut pod, b"{").is_err());
}
