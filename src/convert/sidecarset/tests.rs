use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::api::{
    SidecarSetBuilder, SidecarSetInjectRevision, SidecarSetInjectionStrategy, SidecarSetStatus,
    SidecarSetUpdateStrategy, match_labels,
};
use crate::convert::convert;
use crate::convert::tests::{one_of, with_unknown_fields};

fn alpha(json: Value) -> v1alpha1::SidecarSet {
    serde_json::from_value(json).unwrap()
}

#[test]
fn namespace_becomes_a_selector_on_the_name_label_and_wins() {
    let old = alpha(json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "SidecarSet",
        "metadata": {"name": "mesh"},
        "spec": {
            "namespace": "shop",
            "namespaceSelector": {"matchLabels": {"team": "a"}},
            "selector": {"matchLabels": {"app": "web"}}
        }
    }));
    let new = to_v1beta1(old);
    assert_eq!(
        new.spec.namespace_selector,
        Some(match_labels(&[(keys::NAMESPACE_NAME_LABEL, "shop")]))
    );
    // Lossy on the way back: v1alpha1 readers see the selector, not the namespace.
    let back = to_v1alpha1(new.clone());
    assert_eq!(back.spec.namespace, None);
    assert_eq!(back.spec.namespace_selector, new.spec.namespace_selector);
    // An empty namespace is no namespace: the selector stays.
    let unpinned = alpha(json!({
        "metadata": {"name": "mesh"},
        "spec": {"namespace": "", "namespaceSelector": {"matchLabels": {"team": "a"}}}
    }));
    assert_eq!(
        to_v1beta1(unpinned).spec.namespace_selector,
        Some(match_labels(&[("team", "a")]))
    );
}

#[test]
fn custom_version_label_and_field() {
    let old = alpha(json!({
        "metadata": {"name": "mesh", "labels": {
            "apps.kruise.io/sidecarset-custom-version": "v2", "team": "a"}},
        "spec": {}
    }));
    let new = to_v1beta1(old.clone());
    assert_eq!(new.spec.custom_version.as_deref(), Some("v2"));
    assert_eq!(
        new.metadata.labels,
        Some(BTreeMap::from([("team".to_string(), "a".to_string())]))
    );
    assert_eq!(to_v1alpha1(new), old);
    // The label alone: no labels left at all; an empty label is no custom version.
    for value in ["v3", ""] {
        let old = alpha(json!({
            "metadata": {"name": "mesh", "labels": {"apps.kruise.io/sidecarset-custom-version": value}},
            "spec": {}
        }));
        let new = to_v1beta1(old);
        assert_eq!(new.metadata.labels, None);
        assert_eq!(
            new.spec.custom_version.as_deref(),
            Some(value).filter(|v| !v.is_empty())
        );
    }
    // spec.customVersion overrides a label a v1beta1 writer set by hand.
    let new = SidecarSetBuilder::new("mesh")
        .label(keys::SIDECARSET_CUSTOM_VERSION, "stale")
        .custom_version("v4")
        .build();
    let old = to_v1alpha1(new);
    assert_eq!(
        old.metadata.labels.unwrap()[keys::SIDECARSET_CUSTOM_VERSION],
        "v4"
    );
}

/// The sidecar containers are the same JSON in both versions: the hash annotations, computed
/// over them, do not depend on the version a set was written in.
#[test]
fn containers_are_the_same_json_in_both_versions() {
    let raw = json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "SidecarSet",
        "metadata": {"name": "mesh"},
        "spec": {
            "namespace": "shop",
            "containers": [{
                "name": "envoy", "image": "envoy:1", "podInjectPolicy": "AfterAppContainer",
                "shareVolumePolicy": {"type": "enabled"},
                "upgradeStrategy": {"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": "empty:1"},
                "transferEnv": [{"sourceContainerName": "main", "envName": "PROXY"}],
                "resources": {"limits": {"cpu": "100m"}}
            }],
            "initContainers": [{"name": "init", "image": "init:1", "restartPolicy": "Always"}]
        }
    });
    let converted = convert(&raw, "apps.kruise.io/v1beta1").unwrap();
    for field in ["containers", "initContainers"] {
        assert_eq!(converted["spec"][field], raw["spec"][field], "{field}");
    }
    assert_eq!(converted["apiVersion"], "apps.kruise.io/v1beta1");
    assert_eq!(converted["spec"].get("namespace"), None);
}

fn hub_sidecarset() -> impl Strategy<Value = SidecarSet> {
    (
        (
            one_of(&["a", "b"]),
            proptest::option::of(one_of(&["app", "tier"])),
            proptest::option::of(one_of(&["shop", "team"])),
            proptest::option::of(one_of(&["v1", "v2"])),
        ),
        (
            proptest::collection::btree_set(one_of(&["c1", "c2", "c3"]), 0..3),
            proptest::option::of((0i32..5, any::<bool>())),
            proptest::option::of((proptest::option::of(one_of(&["v1"])), any::<bool>())),
            proptest::option::of((0i32..9, proptest::option::of(0i64..4))),
        ),
    )
        .prop_map(
            |(
                (name, label, namespace, custom_version),
                (containers, strategy, injection, status),
            )| {
                let mut builder = SidecarSetBuilder::new(&name)
                    .namespace(namespace.as_deref())
                    .custom_version(custom_version.as_deref());
                if let Some(label) = label {
                    builder = builder
                        .selector(&[(&label, "x")])
                        .label(&label, "y")
                        .annotation("note", &label);
                }
                for container in &containers {
                    builder = builder.container(container, "image:1");
                }
                if let Some((partition, paused)) = strategy {
                    builder = builder.update_strategy(SidecarSetUpdateStrategy {
                        partition: Some(IntOrString::Int(partition)),
                        paused: Some(paused),
                        ..Default::default()
                    });
                }
                if let Some((custom_version, paused)) = injection {
                    builder = builder.injection_strategy(SidecarSetInjectionStrategy {
                        paused: Some(paused),
                        revision: Some(SidecarSetInjectRevision {
                            custom_version,
                            ..Default::default()
                        }),
                    });
                }
                if let Some((matched, generation)) = status {
                    builder = builder.status(SidecarSetStatus {
                        matched_pods: matched,
                        observed_generation: generation,
                        ..Default::default()
                    });
                }
                builder.build()
            },
        )
}

proptest! {
    /// Every v1beta1 SidecarSet survives v1alpha1 and back, as OpenKruise's does (the one lossy
    /// case, the custom-version label on a v1beta1 object, is not generated: see the unit test).
    #[test]
    fn v1beta1_survives_a_round_trip(set in hub_sidecarset()) {
        prop_assert_eq!(to_v1beta1(to_v1alpha1(set.clone())), set);
    }

    /// Every v1alpha1 SidecarSet without `spec.namespace` survives v1beta1 and back.
    #[test]
    fn v1alpha1_survives_a_round_trip(set in hub_sidecarset()) {
        let old = to_v1alpha1(set);
        prop_assert_eq!(to_v1alpha1(to_v1beta1(old.clone())), old);
    }

    /// The same through [`convert`], with fields neither type knows added anywhere: they come
    /// back where they were.
    #[test]
    fn unknown_fields_survive_a_round_trip(
        set in hub_sidecarset(),
        unknown in proptest::collection::vec((0usize..64, any::<u8>()), 0..6),
    ) {
        let mut raw = serde_json::to_value(&set).unwrap();
        with_unknown_fields(&mut raw, &unknown, &[]);
        let there = convert(&raw, "apps.kruise.io/v1alpha1").unwrap();
        prop_assert_eq!(&there["apiVersion"], "apps.kruise.io/v1alpha1");
        let back = convert(&there, "apps.kruise.io/v1beta1").unwrap();
        prop_assert_eq!(back, raw);
    }
}
