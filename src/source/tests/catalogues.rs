//! Random catalogues for the property tests: few names, labels and values, so SidecarSets share
//! containers, volumes and annotations and their selectors overlap or not in every way the
//! conflict rule tells apart (wildcards, `ALL`, empty lists and a bad operator included).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{HostPathVolumeSource, Volume};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};
use proptest::prelude::*;

use crate::api::{SidecarSet, SidecarSetBuilder, SidecarSetPatchPodMetadata, keys};
use crate::defaults::sidecarset::default_and_hash;

fn one_of(options: &'static [&'static str]) -> impl Strategy<Value = String> {
    proptest::sample::select(options).prop_map(String::from)
}

fn requirement() -> impl Strategy<Value = LabelSelectorRequirement> {
    (
        one_of(&["app", "tier", keys::NAMESPACE_NAME_LABEL]),
        prop_oneof![
            8 => one_of(&["In", "NotIn", "Exists", "DoesNotExist"]),
            1 => Just("Near".to_string()),
        ],
        prop_oneof![
            9 => proptest::collection::vec(one_of(&["x", "y", "z", "ALL", "ns1", "ns2"]), 1..3),
            1 => Just(Vec::new()),
        ],
    )
        .prop_map(|(key, operator, values)| {
            let values = matches!(operator.as_str(), "In" | "NotIn").then_some(values);
            LabelSelectorRequirement {
                key,
                operator,
                values,
            }
        })
}

/// A selector; mostly valid and non-empty, sometimes not.
pub fn selector() -> impl Strategy<Value = LabelSelector> {
    (
        proptest::collection::btree_map(
            one_of(&["app", "tier", keys::NAMESPACE_NAME_LABEL]),
            one_of(&["x", "y", "z", "ALL", "ns1", "ns2"]),
            0..3,
        ),
        proptest::collection::vec(requirement(), 0..3),
    )
        .prop_map(|(labels, expressions)| LabelSelector {
            match_labels: (!labels.is_empty()).then_some(labels),
            match_expressions: (!expressions.is_empty()).then_some(expressions),
        })
}

fn volume() -> impl Strategy<Value = Volume> {
    (one_of(&["v1", "v2"]), one_of(&["/a", "/b"])).prop_map(|(name, path)| Volume {
        name,
        host_path: Some(HostPathVolumeSource { path, type_: None }),
        ..Default::default()
    })
}

fn patch() -> impl Strategy<Value = SidecarSetPatchPodMetadata> {
    (
        proptest::collection::btree_map(one_of(&["k1", "k2"]), Just("{}".to_string()), 1..3),
        proptest::option::of(one_of(&[
            keys::PATCH_POLICY_RETAIN,
            keys::PATCH_POLICY_OVERWRITE,
            keys::PATCH_POLICY_MERGE_PATCH_JSON,
        ])),
    )
        .prop_map(|(annotations, patch_policy)| SidecarSetPatchPodMetadata {
            annotations: Some(annotations),
            patch_policy,
        })
}

/// One defaulted SidecarSet named from a small alphabet.
pub fn sidecarset() -> impl Strategy<Value = SidecarSet> {
    (
        (
            one_of(&[
                "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n",
            ]),
            prop_oneof![9 => selector().prop_map(Some), 1 => Just(None)],
            proptest::option::of(one_of(&["ns1", "ns2"])),
            proptest::option::of(selector()),
        ),
        (
            proptest::collection::btree_set(one_of(&["c1", "c2", "c3"]), 1..3),
            proptest::collection::btree_set(one_of(&["c1", "i1"]), 0..2),
            proptest::collection::vec(volume(), 0..2),
            proptest::collection::vec(patch(), 0..2),
        ),
        prop_oneof![5 => Just(None), 1 => one_of(&["a", "b", "c", "d"]).prop_map(Some)],
    )
        .prop_map(
            |((name, selector, namespace, namespace_selector), parts, canary_of)| {
                let (containers, inits, volumes, patches) = parts;
                let mut builder = SidecarSetBuilder::new(&name)
                    .label_selector(selector)
                    .namespace_selector(namespace_selector.filter(|_| namespace.is_none()))
                    .namespace(namespace.as_deref())
                    .volumes(volumes)
                    .patch_pod_metadata((!patches.is_empty()).then_some(patches));
                for container in &containers {
                    builder = builder.container(container, "image:1");
                }
                for init in &inits {
                    builder = builder.init_container(init, "image:1");
                }
                if let Some(base) = canary_of {
                    builder = builder
                        .annotation(keys::SIDECARSET_CANARY, "true")
                        .annotation(keys::SIDECARSET_BASE, &base);
                }
                let mut set = builder.build();
                default_and_hash(&mut set);
                if set.canary_base().is_some() {
                    // Canaries must not roll pods; make most of them valid.
                    let strategy = set.spec.update_strategy.get_or_insert_default();
                    strategy.type_ = Some(keys::NOT_UPDATE.to_string());
                }
                set
            },
        )
}

/// A catalogue of `size` SidecarSets, names repeating.
pub fn catalogue(size: std::ops::Range<usize>) -> impl Strategy<Value = Vec<SidecarSet>> {
    proptest::collection::vec(sidecarset(), size)
}

/// Labels from the same small alphabet, for pods and namespaces.
pub fn labels() -> impl Strategy<Value = BTreeMap<String, String>> {
    proptest::collection::btree_map(
        one_of(&["app", "tier", "other"]),
        one_of(&["x", "y", "z", "ALL"]),
        0..3,
    )
}
