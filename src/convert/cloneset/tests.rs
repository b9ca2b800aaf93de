use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::convert::convert;
use crate::convert::tests::with_unknown_fields;

const ALPHA: &str = "apps.kruise.io/v1alpha1";
const BETA: &str = "apps.kruise.io/v1beta1";

fn manifest(api_version: &str) -> Value {
    json!({
        "apiVersion": api_version, "kind": "CloneSet",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                         "spec": {"containers": [{"name": "web", "image": "nginx"}]}},
            "volumeClaimTemplates": [{"metadata": {"name": "data"},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]
        },
        "status": {"replicas": 3, "readyReplicas": 3, "availableReplicas": 3, "updatedReplicas": 3,
                   "updatedReadyReplicas": 3, "updatedAvailableReplicas": 3, "updateRevision": "web-1"}
    })
}

fn with(mut object: Value, pointer: &str, value: Value) -> Value {
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    let mut at = &mut object;
    for part in parent.split('/').skip(1) {
        at = at
            .as_object_mut()
            .unwrap()
            .entry(part)
            .or_insert_with(|| json!({}));
    }
    at[key] = value;
    object
}

/// The conversions of OpenKruise's `conversion_test.go` cases, in JSON.
#[test]
fn update_strategy_moves_under_rolling_update() {
    let alpha = with(
        manifest(ALPHA),
        "/spec/updateStrategy",
        json!({"type": "InPlaceIfPossible", "partition": "20%", "maxUnavailable": 1, "maxSurge": 0,
               "paused": true, "inPlaceUpdateStrategy": {"gracePeriodSeconds": 10},
               "priorityStrategy": {"weightPriority": [{"weight": 50, "matchSelector": {"matchLabels": {"k": "v"}}}]},
               "scatterStrategy": [{"key": "zone", "value": "a"}]}),
    );
    let beta = convert(&alpha, BETA).unwrap();
    assert_eq!(
        beta["spec"]["updateStrategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {
            "podUpdatePolicy": "InPlaceIfPossible", "partition": "20%", "maxUnavailable": 1,
            "maxSurge": 0, "paused": true, "inPlaceUpdateStrategy": {"gracePeriodSeconds": 10},
            "priorityStrategy": {"weightPriority": [{"weight": 50, "matchSelector": {"matchLabels": {"k": "v"}}}]},
            "scatterStrategy": [{"key": "zone", "value": "a"}]}})
    );
    assert_eq!(convert(&beta, ALPHA).unwrap(), alpha);
    for (alpha_type, beta_strategy) in [
        (
            "ReCreate",
            json!({"type": "RollingUpdate", "rollingUpdate": {"podUpdatePolicy": "ReCreate"}}),
        ),
        (
            "InPlaceOnly",
            json!({"type": "RollingUpdate", "rollingUpdate": {"podUpdatePolicy": "InPlaceOnly"}}),
        ),
        ("OnDelete", json!({"type": "OnDelete"})),
    ] {
        let alpha = with(
            manifest(ALPHA),
            "/spec/updateStrategy",
            json!({"type": alpha_type}),
        );
        let beta = convert(&alpha, BETA).unwrap();
        assert_eq!(
            beta["spec"]["updateStrategy"], beta_strategy,
            "{alpha_type}"
        );
        assert_eq!(convert(&beta, ALPHA).unwrap(), alpha, "{alpha_type}");
    }
    // v1beta1 written without a policy: v1alpha1 reads ReCreate, the default, spelled out.
    let beta = with(
        manifest(BETA),
        "/spec/updateStrategy",
        json!({"type": "RollingUpdate"}),
    );
    let alpha = convert(&beta, ALPHA).unwrap();
    assert_eq!(alpha["spec"]["updateStrategy"], json!({"type": "ReCreate"}));
}

#[test]
fn pvc_reuse_is_inverted() {
    // v1alpha1 reuses unless disabled; v1beta1 reuses only when enabled.
    let alpha = manifest(ALPHA);
    let beta = convert(&alpha, BETA).unwrap();
    assert_eq!(
        beta["spec"]["scaleStrategy"],
        json!({"enablePVCReuse": true})
    );
    assert_eq!(convert(&beta, ALPHA).unwrap(), alpha);
    let alpha = with(
        manifest(ALPHA),
        "/spec/scaleStrategy/disablePVCReuse",
        json!(true),
    );
    let beta = convert(&alpha, BETA).unwrap();
    assert_eq!(beta["spec"].get("scaleStrategy"), None);
    assert_eq!(convert(&beta, ALPHA).unwrap(), alpha);
    // A new v1beta1 CloneSet says nothing and reuses nothing.
    let alpha = convert(&manifest(BETA), ALPHA).unwrap();
    assert_eq!(
        alpha["spec"]["scaleStrategy"],
        json!({"disablePVCReuse": true})
    );
}

#[test]
fn label_and_annotations_become_fields() {
    let alpha = json!({
        "apiVersion": ALPHA, "kind": "CloneSet",
        "metadata": {"name": "web", "namespace": "default",
            "labels": {EXCLUDE_PREPARING_DELETE_LABEL: "true", "app": "web"},
            "annotations": {IMAGE_PRE_DOWNLOAD_PARALLELISM: "50%", IMAGE_PRE_DOWNLOAD_TIMEOUT_SECONDS: "300",
                            IMAGE_PRE_DOWNLOAD_MIN_UPDATED_READY_PODS: "2"}},
        "spec": {"updateStrategy": {"type": "InPlaceIfPossible"}}
    });
    let beta = convert(&alpha, BETA).unwrap();
    assert_eq!(beta["metadata"]["labels"], json!({"app": "web"}));
    assert_eq!(beta["metadata"].get("annotations"), None);
    assert_eq!(
        beta["spec"]["scaleStrategy"]["excludePreparingDelete"],
        true
    );
    assert_eq!(
        beta["spec"]["updateStrategy"]["rollingUpdate"]["inPlaceUpdateStrategy"],
        json!({"imagePreDownloadParallelism": "50%", "imagePreDownloadTimeoutSeconds": 300,
               "imagePreDownloadMinUpdatedReadyPods": 2})
    );
    assert_eq!(convert(&beta, ALPHA).unwrap(), alpha);
    // A value that is not a number stays an annotation.
    let alpha = with(
        manifest(ALPHA),
        "/metadata/annotations",
        json!({IMAGE_PRE_DOWNLOAD_TIMEOUT_SECONDS: "soon", IMAGE_PRE_DOWNLOAD_PARALLELISM: "3"}),
    );
    let beta = convert(&alpha, BETA).unwrap();
    assert_eq!(
        beta["metadata"]["annotations"],
        json!({IMAGE_PRE_DOWNLOAD_TIMEOUT_SECONDS: "soon"})
    );
    assert_eq!(
        beta["spec"]["updateStrategy"]["rollingUpdate"]["inPlaceUpdateStrategy"],
        json!({"imagePreDownloadParallelism": 3})
    );
    assert_eq!(convert(&beta, ALPHA).unwrap(), alpha);
}

/// A v1alpha1 CloneSet with any combination of the converted settings.
fn alpha_set() -> impl Strategy<Value = Value> {
    let optional = |value: Value| proptest::option::of(Just(value));
    (
        proptest::option::of(prop_oneof![
            Just("ReCreate"),
            Just("InPlaceIfPossible"),
            Just("InPlaceOnly"),
            Just("OnDelete")
        ]),
        (
            optional(json!("10%")),
            optional(json!(2)),
            optional(json!(true)),
            proptest::option::of(proptest::option::of(0i32..30)),
        ),
        (
            optional(json!(true)),
            proptest::option::of(prop_oneof![Just("true"), Just("false")]),
            optional(json!("4")),
            optional(json!("600")),
        ),
    )
        .prop_map(
            |(
                kind,
                (partition, max_surge, paused, in_place),
                (disable, exclude, parallelism, timeout),
            )| {
                let mut set = manifest(ALPHA);
                let mut strategy = json!({});
                for (key, value) in [
                    ("type", kind.map(|k| json!(k))),
                    ("partition", partition),
                    ("maxSurge", max_surge),
                    ("paused", paused),
                ] {
                    if let Some(value) = value {
                        strategy[key] = value;
                    }
                }
                let downloads = parallelism.is_some() || timeout.is_some();
                // An empty in-place strategy beside the downloads comes back absent (lossy,
                // docs/conversion.md): not generated.
                let in_place = in_place.filter(|grace| !downloads || grace.is_some());
                if let Some(grace) = in_place {
                    strategy["inPlaceUpdateStrategy"] =
                        grace.map_or(json!({}), |g| json!({"gracePeriodSeconds": g}));
                }
                // An empty `updateStrategy: {}` may come back absent (docs/conversion.md).
                if strategy != json!({}) {
                    set["spec"]["updateStrategy"] = strategy;
                }
                if let Some(disable) = disable {
                    set["spec"]["scaleStrategy"] = json!({"disablePVCReuse": disable});
                }
                if let Some(exclude) = exclude {
                    set["metadata"]["labels"] = json!({EXCLUDE_PREPARING_DELETE_LABEL: exclude});
                }
                let mut annotations = serde_json::Map::new();
                if let Some(p) = parallelism {
                    annotations.insert(IMAGE_PRE_DOWNLOAD_PARALLELISM.into(), p);
                }
                if let Some(t) = timeout {
                    annotations.insert(IMAGE_PRE_DOWNLOAD_TIMEOUT_SECONDS.into(), t);
                }
                if !annotations.is_empty() {
                    set["metadata"]["annotations"] = Value::Object(annotations);
                }
                set
            },
        )
}

proptest! {
    /// Every v1alpha1 CloneSet, unknown fields included, survives v1beta1 and back.
    #[test]
    fn v1alpha1_survives_a_round_trip(
        set in alpha_set(),
        unknown in proptest::collection::vec((0usize..64, any::<u8>()), 0..6),
    ) {
        let mut raw = set;
        with_unknown_fields(&mut raw, &unknown, &["inPlaceUpdateStrategy"]);
        let there = convert(&raw, BETA).unwrap();
        prop_assert_eq!(convert(&there, ALPHA).unwrap(), raw);
    }

    /// Every v1beta1 CloneSet a v1alpha1 one converts to survives v1alpha1 and back.
    #[test]
    fn v1beta1_survives_a_round_trip(
        set in alpha_set(),
        unknown in proptest::collection::vec((0usize..64, any::<u8>()), 0..6),
    ) {
        let mut raw = convert(&set, BETA).unwrap();
        with_unknown_fields(&mut raw, &unknown, &["rollingUpdate", "scaleStrategy"]);
        let there = convert(&raw, ALPHA).unwrap();
        prop_assert_eq!(convert(&there, BETA).unwrap(), raw);
    }
}
