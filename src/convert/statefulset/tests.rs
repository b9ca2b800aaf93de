use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::api::statefulset::tests::{beta_manifest, manifest};
use crate::convert::convert;
use crate::convert::tests::with_unknown_fields;

const ALPHA: &str = "apps.kruise.io/v1alpha1";
const BETA: &str = "apps.kruise.io/v1beta1";

/// The objects only v1beta1 has (see `with_unknown_fields`).
const V1BETA1_ONLY: &[&str] = &[
    "lifecycle",
    "scaleStrategy",
    "persistentVolumeClaimRetentionPolicy",
    "ordinals",
    "volumeClaimUpdateStrategy",
];

#[test]
fn v1alpha1_converts_field_for_field() {
    let alpha: v1alpha1::StatefulSet = serde_json::from_value(manifest(ALPHA)).unwrap();
    let converted = to_v1beta1(alpha.clone());
    let expected: StatefulSet = serde_json::from_value(manifest(BETA)).unwrap();
    assert_eq!(converted, expected);
    assert_eq!(to_v1alpha1(converted), alpha);
    // Through `convert`, the JSON is the manifest's own: the claim templates are not re-rendered.
    assert_eq!(convert(&manifest(ALPHA), BETA).unwrap(), manifest(BETA));
    assert_eq!(convert(&manifest(BETA), ALPHA).unwrap(), manifest(ALPHA));
}

/// OpenKruise's v1alpha1 drops the v1beta1-only spec fields; here a v1alpha1 reader gets them in
/// an annotation, so writing back what it read keeps them.
#[test]
fn v1beta1_only_fields_travel_in_an_annotation() {
    let beta = beta_manifest();
    let alpha = convert(&beta, ALPHA).unwrap();
    let carried = &alpha["metadata"]["annotations"][V1BETA1_FIELDS_ANNOTATION];
    assert_eq!(
        carried,
        r#"{"reserveOrdinals":[1,"3-5"],"lifecycle":{"preDelete":{"finalizersHandler":["example.com/hold"]}},"scaleStrategy":{"maxUnavailable":2},"persistentVolumeClaimRetentionPolicy":{"whenDeleted":"Delete","whenScaled":"Retain"},"ordinals":{"start":1},"volumeClaimUpdateStrategy":{"type":"OnPodRollingUpdate"}}"#
    );
    for field in ["reserveOrdinals", "lifecycle", "ordinals"] {
        assert_eq!(alpha["spec"].get(field), None, "{field}");
    }
    // A v1alpha1 read-modify-write: the replicas change, the v1beta1 fields stay.
    let mut edited = alpha.clone();
    edited["spec"]["replicas"] = json!(5);
    let mut expected = beta.clone();
    expected["spec"]["replicas"] = json!(5);
    assert_eq!(convert(&edited, BETA).unwrap(), expected);
    // Without any v1beta1-only field there is no annotation, and a stale one goes.
    let mut plain = convert(&manifest(BETA), ALPHA).unwrap();
    assert_eq!(plain["metadata"].get("annotations"), None);
    plain["metadata"]["annotations"] = json!({V1BETA1_FIELDS_ANNOTATION: "{}", "keep": "me"});
    let up = convert(&plain, BETA).unwrap();
    assert_eq!(up["metadata"]["annotations"], json!({"keep": "me"}));
}

/// An annotation that does not decode is kept for the validating webhook to refuse, not
/// dropped.
#[test]
fn a_broken_annotation_is_kept() {
    let mut alpha = manifest(ALPHA);
    alpha["metadata"]["annotations"] = json!({V1BETA1_FIELDS_ANNOTATION: "{\"ordinals\": 1}"});
    let beta = convert(&alpha, BETA).unwrap();
    assert_eq!(
        beta["metadata"]["annotations"],
        alpha["metadata"]["annotations"]
    );
    let set: StatefulSet = serde_json::from_value(beta).unwrap();
    let error = v1beta1_fields(set.metadata.annotations.as_ref()).unwrap_err();
    assert!(error.contains("invalid type: integer `1`"), "{error}");
}

/// The status fields v1alpha1 lacks are dropped for its readers (listed in docs/conversion.md).
#[test]
fn v1beta1_only_status_is_dropped_for_v1alpha1() {
    let mut beta = manifest(BETA);
    beta["status"]["updatedReadyReplicas"] = json!(2);
    let alpha = convert(&beta, ALPHA).unwrap();
    assert_eq!(alpha["status"].get("updatedReadyReplicas"), None);
    assert_eq!(alpha["status"]["readyReplicas"], 3);
}

fn optional(value: Value) -> impl Strategy<Value = Option<Value>> {
    proptest::option::of(Just(value))
}

/// A v1beta1 manifest with any subset of the v1beta1-only fields.
fn beta_set() -> impl Strategy<Value = Value> {
    (
        optional(json!([1, "3-5"])),
        optional(json!({"preDelete": {"labelsHandler": {"example.com/hold": "true"}}})),
        optional(json!({"maxUnavailable": "10%"})),
        optional(json!({"whenDeleted": "Delete"})),
        optional(json!({"start": 2})),
        optional(json!({"type": "OnPodRollingUpdate"})),
        optional(json!({"note": "kept"})),
    )
        .prop_map(
            |(reserve, lifecycle, scale, retention, ordinals, claims, annotations)| {
                let mut set = manifest(BETA);
                let spec = set["spec"].as_object_mut().unwrap();
                for (key, value) in [
                    ("reserveOrdinals", reserve),
                    ("lifecycle", lifecycle),
                    ("scaleStrategy", scale),
                    ("persistentVolumeClaimRetentionPolicy", retention),
                    ("ordinals", ordinals),
                    ("volumeClaimUpdateStrategy", claims),
                ] {
                    if let Some(value) = value {
                        spec.insert(key.into(), value);
                    }
                }
                if let Some(annotations) = annotations {
                    set["metadata"]["annotations"] = annotations;
                }
                set
            },
        )
}

proptest! {
    /// Every v1beta1 StatefulSet, unknown fields anywhere included, survives v1alpha1 and back.
    #[test]
    fn v1beta1_survives_a_round_trip(
        set in beta_set(),
        unknown in proptest::collection::vec((0usize..64, any::<u8>()), 0..6),
    ) {
        let mut raw = set;
        with_unknown_fields(&mut raw, &unknown, V1BETA1_ONLY);
        let there = convert(&raw, ALPHA).unwrap();
        prop_assert_eq!(convert(&there, BETA).unwrap(), raw);
    }

    /// Every v1alpha1 StatefulSet survives v1beta1 and back.
    #[test]
    fn v1alpha1_survives_a_round_trip(
        set in beta_set(),
        unknown in proptest::collection::vec((0usize..64, any::<u8>()), 0..6),
    ) {
        let mut raw = convert(&set, ALPHA).unwrap();
        with_unknown_fields(&mut raw, &unknown, V1BETA1_ONLY);
        let there = convert(&raw, BETA).unwrap();
        prop_assert_eq!(convert(&there, ALPHA).unwrap(), raw);
    }
}
