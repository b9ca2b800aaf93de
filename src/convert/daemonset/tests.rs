use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::convert::convert;
use crate::convert::tests::with_unknown_fields;

const ALPHA: &str = "apps.kruise.io/v1alpha1";
const BETA: &str = "apps.kruise.io/v1beta1";

fn manifest(api_version: &str) -> Value {
    json!({
        "apiVersion": api_version,
        "kind": "DaemonSet",
        "metadata": {"name": "node-agent", "namespace": "kube-system"},
        "spec": {
            "selector": {"matchLabels": {"app": "node-agent"}},
            "template": {
                "metadata": {"labels": {"app": "node-agent"}},
                "spec": {"containers": [{"name": "agent", "image": "agent:1.0"}]}
            },
            "updateStrategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"rollingUpdateType": "InPlaceIfPossible", "maxUnavailable": "10%", "partition": 2}
            },
            "burstReplicas": 100,
            "lifecycle": {"preDelete": {"labelsHandler": {"example.com/drain": "true"}}}
        },
        "status": {
            "currentNumberScheduled": 3, "numberMisscheduled": 0, "desiredNumberScheduled": 3,
            "numberReady": 3, "updatedNumberScheduled": 3, "observedGeneration": 2
        }
    })
}

#[test]
fn hash_and_revision_are_the_same_status_field() {
    let mut alpha = manifest(ALPHA);
    alpha["status"]["daemonSetHash"] = json!("6f4d8c");
    let beta = convert(&alpha, BETA).unwrap();
    assert_eq!(beta["status"]["updateRevision"], "6f4d8c");
    assert_eq!(beta["status"].get("daemonSetHash"), None);
    assert_eq!(convert(&beta, ALPHA).unwrap(), alpha);
}

#[test]
fn progressive_creation_annotation_and_partitioned_scaling() {
    let mut alpha = manifest(ALPHA);
    alpha["metadata"]["annotations"] = json!({PROGRESSIVE_CREATE_ANNOTATION: "true"});
    let beta = convert(&alpha, BETA).unwrap();
    assert_eq!(
        beta["spec"]["scaleStrategy"],
        json!({"partitionedScaling": true})
    );
    // Moved, not copied (OpenKruise keeps a copy): no stale annotation on the v1beta1 object.
    assert_eq!(beta["metadata"].get("annotations"), None);
    assert_eq!(convert(&beta, ALPHA).unwrap(), alpha);

    // v1beta1 written with the field only: v1alpha1 readers get the annotation.
    let mut beta = manifest(BETA);
    beta["spec"]["scaleStrategy"] = json!({"partitionedScaling": true});
    let alpha = convert(&beta, ALPHA).unwrap();
    assert_eq!(
        alpha["metadata"]["annotations"],
        json!({PROGRESSIVE_CREATE_ANNOTATION: "true"})
    );
    assert_eq!(alpha["spec"].get("scaleStrategy"), None);

    // Any other value is no progressive creation.
    let mut alpha = manifest(ALPHA);
    alpha["metadata"]["annotations"] = json!({PROGRESSIVE_CREATE_ANNOTATION: "false"});
    assert_eq!(
        convert(&alpha, BETA).unwrap()["spec"].get("scaleStrategy"),
        None
    );
}

/// Lossy, as OpenKruise's: `Surging` is `Standard` for every reader from then on.
#[test]
fn surging_becomes_standard() {
    let mut alpha = manifest(ALPHA);
    alpha["spec"]["updateStrategy"]["rollingUpdate"]["rollingUpdateType"] = json!("Surging");
    let beta = convert(&alpha, BETA).unwrap();
    assert_eq!(
        beta["spec"]["updateStrategy"]["rollingUpdate"]["rollingUpdateType"],
        "Standard"
    );
    let back = convert(&beta, ALPHA).unwrap();
    assert_eq!(
        back["spec"]["updateStrategy"]["rollingUpdate"]["rollingUpdateType"],
        "Standard"
    );
}

/// A v1beta1 manifest with or without partitioned scaling, revision and annotations.
fn beta_set() -> impl Strategy<Value = Value> {
    (
        proptest::option::of(Just(json!({"partitionedScaling": true}))),
        proptest::option::of("[a-f0-9]{6}"),
        proptest::option::of(Just(json!({"note": "kept"}))),
        prop_oneof![Just("Standard"), Just("InPlaceIfPossible")],
    )
        .prop_map(|(scale, revision, annotations, kind)| {
            let mut set = manifest(BETA);
            if let Some(scale) = scale {
                set["spec"]["scaleStrategy"] = scale;
            }
            if let Some(revision) = revision {
                set["status"]["updateRevision"] = json!(revision);
            }
            if let Some(annotations) = annotations {
                set["metadata"]["annotations"] = annotations;
            }
            set["spec"]["updateStrategy"]["rollingUpdate"]["rollingUpdateType"] = json!(kind);
            set
        })
}

proptest! {
    /// Every v1beta1 DaemonSet, unknown fields anywhere included, survives v1alpha1 and back
    /// (the one lossy case, the annotation `"true"` on a v1beta1 object without the field, is in
    /// docs/conversion.md and not generated).
    #[test]
    fn v1beta1_survives_a_round_trip(
        set in beta_set(),
        unknown in proptest::collection::vec((0usize..64, any::<u8>()), 0..6),
    ) {
        let mut raw = set;
        with_unknown_fields(&mut raw, &unknown, &["scaleStrategy"]);
        let there = convert(&raw, ALPHA).unwrap();
        prop_assert_eq!(convert(&there, BETA).unwrap(), raw);
    }

    /// Every v1alpha1 DaemonSet without `Surging` survives v1beta1 and back.
    #[test]
    fn v1alpha1_survives_a_round_trip(
        set in beta_set(),
        unknown in proptest::collection::vec((0usize..64, any::<u8>()), 0..6),
    ) {
        let mut raw = convert(&set, ALPHA).unwrap();
        with_unknown_fields(&mut raw, &unknown, &["scaleStrategy"]);
        let there = convert(&raw, BETA).unwrap();
        prop_assert_eq!(convert(&there, ALPHA).unwrap(), raw);
    }
}
