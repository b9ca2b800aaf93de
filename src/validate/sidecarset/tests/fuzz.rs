//! Never panics: validation answers whatever SidecarSet, stored object and cluster it is given.

use super::*;
use crate::api::{UpdatePriorityStrategy, UpdatePriorityWeightTerm, UpdateScatterTerm};
use crate::validate::field::aggregate;
use k8s_openapi::api::core::v1::{EnvVar, VolumeDevice, VolumeMount};
use proptest::prelude::*;

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z0-9-]{0,8}",
        "[A-Za-z0-9_./ %'\\[\\]-]{0,12}",
        any::<String>().prop_map(|s| s.chars().take(12).collect()),
    ]
}

fn pick(options: &'static [&'static str]) -> impl Strategy<Value = Option<String>> {
    proptest::option::of(proptest::sample::select(options).prop_map(String::from))
}

fn selector() -> impl Strategy<Value = Option<LabelSelector>> {
    let requirement = (
        text(),
        pick(&["In", "NotIn", "Exists", "DoesNotExist", "Near"]),
        proptest::collection::vec(text(), 0..3),
    )
        .prop_map(|(key, operator, values)| LabelSelectorRequirement {
            key,
            operator: operator.unwrap_or_default(),
            values: Some(values),
        });
    proptest::option::of((
        proptest::option::of(proptest::collection::btree_map(text(), text(), 0..3)),
        proptest::option::of(proptest::collection::vec(requirement, 0..3)),
    ))
    .prop_map(|s| {
        s.map(|(match_labels, match_expressions)| LabelSelector {
            match_labels,
            match_expressions,
        })
    })
}

fn int_or_string() -> impl Strategy<Value = Option<IntOrString>> {
    proptest::option::of(prop_oneof![
        (-3i32..5).prop_map(IntOrString::Int),
        text().prop_map(IntOrString::String),
    ])
}

fn sidecar_container() -> impl Strategy<Value = SidecarContainer> {
    (
        (
            text(),
            proptest::option::of(text()),
            pick(&["Always", "IfNotPresent", "Never", "Sometimes"]),
            pick(&["Always", "OnFailure"]),
        ),
        (
            pick(&["BeforeAppContainer", "AfterAppContainer", "Middle"]),
            pick(&["enabled", "disabled", "on"]),
            pick(&["ColdUpgrade", "HotUpgrade"]),
        ),
        (
            proptest::collection::vec((text(), text()), 0..3),
            proptest::collection::vec((text(), text()), 0..2),
            proptest::collection::vec(text(), 0..2),
        ),
        (
            proptest::option::of((pick(&["v1", "v2"]), text())),
            proptest::option::of((text(), text(), text())),
        ),
    )
        .prop_map(
            |(
                (name, image, pull, restart),
                (inject, share, upgrade),
                (mounts, devices, env),
                (field_ref, policy),
            )| {
                let mut container = sidecar(&name);
                container.container.image = image;
                container.container.image_pull_policy = pull;
                container.container.restart_policy = restart;
                container.container.volume_mounts = Some(
                    mounts
                        .into_iter()
                        .map(|(name, mount_path)| VolumeMount {
                            name,
                            mount_path,
                            ..Default::default()
                        })
                        .collect(),
                );
                container.container.volume_devices = Some(
                    devices
                        .into_iter()
                        .map(|(name, device_path)| VolumeDevice { name, device_path })
                        .collect(),
                );
                container.container.env = Some(
                    env.into_iter()
                        .map(|name| EnvVar {
                            name,
                            value: None,
                            value_from: None,
                        })
                        .collect(),
                );
                container.pod_inject_policy = inject;
                container.share_volume_policy = Some(ShareVolumePolicy { type_: share });
                container.upgrade_strategy = Some(SidecarContainerUpgradeStrategy {
                    upgrade_type: upgrade,
                    hot_upgrade_empty_image: None,
                });
                if let Some((api_version, field_path)) = field_ref {
                    container.transfer_env = transfer_env(api_version.as_deref(), &field_path);
                }
                container.resources_policy = policy.map(|(regex, cpu, memory)| ResourcesPolicy {
                    target_containers_mode: "sum".into(),
                    target_containers_name_regex: Some(regex),
                    resources_expr: Some(ResourcesExpr {
                        limits: Some(ResourceExprPair {
                            cpu: Some(cpu),
                            memory: Some(memory),
                        }),
                        requests: None,
                    }),
                });
                container
            },
        )
}

fn volume() -> impl Strategy<Value = Volume> {
    (text(), 0u8..4, text()).prop_map(|(name, kind, path)| match kind {
        0 => Volume {
            name,
            ..Default::default()
        },
        1 => empty_dir(&name),
        2 => host_path(&name, &path),
        _ => pvc(&name, &path),
    })
}

fn sidecarset() -> impl Strategy<Value = SidecarSet> {
    (
        (text(), selector(), selector(), proptest::option::of(text())),
        (
            proptest::collection::vec(sidecar_container(), 0..3),
            proptest::collection::vec(sidecar_container(), 0..2),
            proptest::collection::vec(volume(), 0..3),
        ),
        (
            pick(&["RollingUpdate", "NotUpdate", "Other"]),
            int_or_string(),
            int_or_string(),
            selector(),
            proptest::collection::vec((text(), text()), 0..3),
        ),
        (
            proptest::option::of((
                proptest::option::of(text()),
                proptest::option::of(text()),
                pick(&["Always", "Partial", "Odd"]),
            )),
            proptest::collection::vec(
                (
                    pick(&["Retain", "Overwrite", "MergePatchJson"]),
                    proptest::collection::btree_map(text(), text(), 0..3),
                ),
                0..3,
            ),
        ),
        (proptest::option::of(text()), any::<bool>()),
    )
        .prop_map(
            |(
                (name, pods, namespaces, namespace),
                (containers, inits, volumes),
                (kind, partition, max_unavailable, update_selector, scatter),
                (injection, patches),
                (base, canary_flag),
            )| {
                let set = named(&name)
                    .label_selector(pods)
                    .namespace_selector(namespaces)
                    .namespace(namespace.as_deref())
                    .containers(containers)
                    .init_containers(inits)
                    .volumes(volumes)
                    .update_strategy(SidecarSetUpdateStrategy {
                        type_: kind,
                        partition,
                        max_unavailable,
                        selector: update_selector,
                        scatter_strategy: Some(
                            scatter
                                .into_iter()
                                .map(|(key, value)| UpdateScatterTerm { key, value })
                                .collect(),
                        ),
                        priority_strategy: Some(UpdatePriorityStrategy {
                            weight_priority: Some(vec![UpdatePriorityWeightTerm {
                                weight: 50,
                                match_selector: LabelSelector::default(),
                            }]),
                            order_priority: None,
                        }),
                        ..Default::default()
                    })
                    .injection_strategy(injection.map(|(custom_version, revision_name, policy)| {
                        SidecarSetInjectionStrategy {
                            paused: None,
                            revision: Some(SidecarSetInjectRevision {
                                custom_version,
                                revision_name,
                                policy,
                            }),
                        }
                    }))
                    .patch_pod_metadata(
                        patches
                            .into_iter()
                            .map(|(patch_policy, annotations)| SidecarSetPatchPodMetadata {
                                annotations: Some(annotations),
                                patch_policy,
                            })
                            .collect::<Vec<_>>(),
                    );
                match base {
                    Some(base) => set
                        .annotation(
                            keys::SIDECARSET_CANARY,
                            if canary_flag { "true" } else { "false" },
                        )
                        .annotation(keys::SIDECARSET_BASE, &base)
                        .build(),
                    None => set.build(),
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn validation_never_panics(
        set in sidecarset(),
        old in proptest::option::of(sidecarset()),
        stored in proptest::collection::vec(sidecarset(), 0..3),
    ) {
        let stored = others(stored);
        let errors = validate_sidecarset(&set, old.as_ref(), &stored);
        let _ = aggregate(&errors);
        for a in stored.iter() {
            if let (Some(x), Some(y)) = (&a.spec.selector, &set.spec.selector) {
                prop_assert_eq!(selectors_overlap(x, y), selectors_overlap(y, x));
            }
        }
    }

}
