//! The V table: each case builds a request and names its error count and a piece of the message.

use super::*;
use crate::api::{UpdateScatterTerm, match_labels};
use crate::validate::field::aggregate;
use k8s_openapi::api::core::v1::{
    ProjectedVolumeSource, ResourceRequirements, ServiceAccountTokenProjection, VolumeDevice,
    VolumeMount, VolumeProjection,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;

/// The object under validation, the stored object on UPDATE, and the cluster's SidecarSets.
type Request = (SidecarSet, Option<SidecarSet>, Vec<Arc<SidecarSet>>);

struct Case {
    id: &'static str,
    build: fn() -> Request,
    errors: usize,
    contains: &'static str,
}

fn create(set: SidecarSet) -> Request {
    (set, None, Vec::new())
}

fn v_table() -> Vec<Case> {
    vec![
        Case {
            id: "V1 no selector",
            build: || create(base().label_selector(None).build()),
            errors: 1,
            contains: "spec.selector: Required value: no selector defined for SidecarSet",
        },
        Case {
            id: "V2 empty selector",
            build: || create(base().label_selector(LabelSelector::default()).build()),
            errors: 1,
            contains: "empty selector is not valid for sidecarset.",
        },
        Case {
            id: "V3 invalid selector value",
            build: || {
                create(
                    base()
                        .label_selector(with_expressions(
                            match_labels(&[("a", "b")]),
                            vec![expression("app-name", "NotIn", &["app-group", "app-risk-"])],
                        ))
                        .build(),
                )
            },
            errors: 2,
            contains: "spec.selector.selector: Invalid value: v1.LabelSelector{",
        },
        Case {
            id: "V4 invalid namespaceSelector",
            build: || {
                create(
                    base()
                        .label_selector(with_expressions(
                            match_labels(&[("a", "b")]),
                            vec![expression("app-name", "NotIn", &["app-group", "app-risk"])],
                        ))
                        .namespace_selector(with_expressions(
                            match_labels(&[("a", "b")]),
                            vec![expression("app-name", "NotIn", &["app-group", "app-risk-"])],
                        ))
                        .build(),
                )
            },
            errors: 2,
            contains: "spec.namespaceSelector.matchExpressions[0].values[1]: Invalid value: \"app-risk-\"",
        },
        Case {
            id: "V5 valid namespaceSelector",
            build: || {
                create(
                    base()
                        .namespace_selector(match_labels(&[("a", "b")]))
                        .build(),
                )
            },
            errors: 0,
            contains: "",
        },
        Case {
            id: "V6 duplicated scatter term",
            build: || {
                let term = || UpdateScatterTerm {
                    key: "key-1".into(),
                    value: "value-1".into(),
                };
                create(
                    base()
                        .update_strategy(SidecarSetUpdateStrategy {
                            type_: Some(keys::ROLLING_UPDATE.into()),
                            scatter_strategy: Some(vec![term(), term()]),
                            ..Default::default()
                        })
                        .build(),
                )
            },
            errors: 1,
            contains: "spec.updateStrategy.scatterStrategy: Required value: duplicated key=key-1 value=value-1",
        },
        Case {
            id: "V7 init container without image",
            build: || {
                let mut init = SidecarContainer::default();
                init.container.name = "test-sidecar".into();
                init.container.image_pull_policy = Some("IfNotPresent".into());
                init.container.termination_message_policy = Some("File".into());
                create(base().init_containers(vec![init]).containers(None).build())
            },
            errors: 1,
            contains: "spec.initContainers[0].image: Required value",
        },
        Case {
            id: "V8 no containers",
            build: || create(base().containers(None).build()),
            errors: 1,
            contains: "spec: Required value: no initContainer or container defined for SidecarSet",
        },
        Case {
            id: "V9 empty shareVolumePolicy",
            build: || {
                create(
                    base()
                        .containers(vec![SidecarContainer {
                            share_volume_policy: None,
                            ..sidecar("test-sidecar")
                        }])
                        .build(),
                )
            },
            errors: 1,
            contains: "spec.container.shareVolumePolicy: Invalid value: v1beta1.ShareVolumePolicy{Type:\"\"}: unsupported share volume policy",
        },
        Case {
            id: "V10 unknown podInjectPolicy",
            build: || {
                create(
                    base()
                        .containers(vec![SidecarContainer {
                            pod_inject_policy: Some("Middle".into()),
                            ..sidecar("test-sidecar")
                        }])
                        .build(),
                )
            },
            errors: 1,
            contains: "spec.container.podInjectPolicy: Invalid value: \"Middle\": unsupported pod inject policy",
        },
        Case {
            id: "V11 volume without source (not defaulted)",
            build: || {
                let token = Volume {
                    name: "istio-token".into(),
                    projected: Some(ProjectedVolumeSource {
                        default_mode: Some(420),
                        sources: Some(vec![VolumeProjection {
                            service_account_token: Some(ServiceAccountTokenProjection {
                                audience: Some("istio-ca".into()),
                                expiration_seconds: Some(43200),
                                path: "istio-token".into(),
                            }),
                            ..Default::default()
                        }]),
                    }),
                    ..Default::default()
                };
                create(
                    base()
                        .volumes(vec![
                            Volume {
                                name: "test-volume".into(),
                                ..Default::default()
                            },
                            token,
                        ])
                        .build(),
                )
            },
            errors: 1,
            contains: "spec.volumes[0]: Required value: must specify a volume type",
        },
        Case {
            id: "V12 volumeDevice without volume",
            build: || {
                let mut container = sidecar("test-sidecar");
                container.container.volume_devices = Some(vec![VolumeDevice {
                    name: "disk0".into(),
                    device_path: "/dev/nvme1".into(),
                }]);
                create(base().containers(vec![container]).build())
            },
            errors: 1,
            contains: "spec.containers[0].volumeDevices[0].name: Not found: \"disk0\"",
        },
        Case {
            id: "V13 volumeDevice with PVC volume",
            build: || {
                let mut container = sidecar("test-sidecar");
                container.container.volume_devices = Some(vec![VolumeDevice {
                    name: "disk0".into(),
                    device_path: "/dev/nvme1".into(),
                }]);
                create(
                    base()
                        .containers(vec![container])
                        .volumes(vec![pvc("disk0", "pvc-0")])
                        .build(),
                )
            },
            errors: 0,
            contains: "",
        },
        Case {
            id: "V14 device path equals mount path",
            build: || {
                let mut container = sidecar("test-sidecar");
                container.container.volume_devices = Some(vec![VolumeDevice {
                    name: "disk0".into(),
                    device_path: "/home/admin/log".into(),
                }]);
                container.container.volume_mounts = Some(vec![VolumeMount {
                    name: "log".into(),
                    mount_path: "/home/admin/log".into(),
                    ..Default::default()
                }]);
                create(
                    base()
                        .containers(vec![container])
                        .volumes(vec![pvc("disk0", "pvc-0"), empty_dir("log")])
                        .build(),
                )
            },
            errors: 2,
            contains: "must not already exist as a path in volumeMounts",
        },
        Case {
            id: "V15 duplicate patch annotation",
            build: || {
                create(
                    base()
                        .patch_pod_metadata(vec![
                            patch(keys::PATCH_POLICY_MERGE_PATCH_JSON, &[("key1", "value1")]),
                            patch(keys::PATCH_POLICY_OVERWRITE, &[("key1", "value1")]),
                        ])
                        .build(),
                )
            },
            errors: 1,
            contains: "spec.patchPodMetadata: Required value: patch annotation[key1] already exist",
        },
        Case {
            id: "V16 customVersion without revision",
            build: || {
                create(
                    base()
                        .injection_strategy(revision(
                            Some("normal-sidecarset-01234"),
                            None,
                            "Always",
                        ))
                        .build(),
                )
            },
            errors: 1,
            contains: "revision: Invalid value: \"null\": Cannot find specific ControllerRevision, err: ControllerRevision.apps \"test-sidecarset\" not found",
        },
        Case {
            id: "V17 revisionName without revision",
            build: || {
                create(
                    base()
                        .injection_strategy(revision(
                            None,
                            Some("test-sidecarset-678235"),
                            "Always",
                        ))
                        .build(),
                )
            },
            errors: 1,
            contains: "Cannot find specific ControllerRevision, err: controllerrevisions.apps \"test-sidecarset-678235\" not found",
        },
        Case {
            id: "V18 revision without name or version",
            build: || {
                create(
                    base()
                        .injection_strategy(revision(None, None, "Always"))
                        .build(),
                )
            },
            errors: 1,
            contains: "revisionName and customVersion cannot be empty simultaneously",
        },
        Case {
            id: "V19 native init container with RollingUpdate",
            build: || {
                create(
                    base()
                        .update_strategy(strategy(keys::ROLLING_UPDATE))
                        .init_containers(vec![native_sidecar("test-init")])
                        .build(),
                )
            },
            errors: 1,
            contains: "spec.updateStrategy: Required value: The initContainer in-place upgrade is not currently supported.",
        },
        Case {
            // + this server's Forbidden
            id: "V20 resourcesPolicy with resources",
            build: || {
                let mut container = sidecar("test-sidecar");
                container.container.resources = Some(ResourceRequirements {
                    limits: Some(BTreeMap::from([
                        ("cpu".to_string(), K8sQuantity("100m".into())),
                        ("memory".to_string(), K8sQuantity("100Mi".into())),
                    ])),
                    ..Default::default()
                });
                container.resources_policy = resources_policy("", Some("cpu*50%"));
                create(base().containers(vec![container]).build())
            },
            errors: 1,
            contains: "spec[0].resourcesPolicy: Invalid value: v1beta1.ResourcesPolicy{TargetContainersMode:\"sum\", TargetContainersNameRegex:\"\"}: resourcesPolicy and resources cannot be configured together",
        },
        Case {
            id: "V21 invalid mode and empty regex",
            build: || {
                let mut container = sidecar("test-sidecar");
                container.resources_policy = resources_policy("", Some("cpu*50%"));
                if let Some(policy) = container.resources_policy.as_mut() {
                    policy.target_containers_mode = "invalid".into();
                }
                create(base().containers(vec![container]).build())
            },
            errors: 1,
            contains: "spec[0].resourcesPolicy.targetContainersNameRegex: Required value: invalid empty regex",
        },
        Case {
            id: "V22 plain init container with resourcesPolicy",
            build: || {
                let mut init = sidecar("test-init");
                init.resources_policy = resources_policy(".*", Some("cpu*50%"));
                create(base().init_containers(vec![init]).containers(None).build())
            },
            errors: 1,
            contains: "spec[0].resourcesPolicy: Forbidden: resourcesPolicy is only supported for containers with RestartPolicy Always",
        },
        Case {
            id: "V23 native init container with resourcesPolicy",
            build: || {
                let mut init = native_sidecar("test-init");
                init.resources_policy = resources_policy(".*", Some("cpu*50%"));
                create(base().init_containers(vec![init]).containers(None).build())
            },
            errors: 0,
            contains: "",
        },
        Case {
            id: "V24 partition with selector",
            build: || {
                create(
                    base()
                        .update_strategy(SidecarSetUpdateStrategy {
                            type_: Some(keys::ROLLING_UPDATE.into()),
                            partition: Some(IntOrString::Int(1)),
                            selector: Some(match_labels(&[("canary", "true")])),
                            ..Default::default()
                        })
                        .build(),
                )
            },
            errors: 1,
            contains: "updateStrategy: Invalid value: \"&{Type:RollingUpdate Paused:false Selector:v1.LabelSelector{",
        },
        Case {
            id: "V24 partition 0 with selector",
            build: || {
                create(
                    base()
                        .update_strategy(SidecarSetUpdateStrategy {
                            type_: Some(keys::ROLLING_UPDATE.into()),
                            partition: Some(IntOrString::Int(0)),
                            selector: Some(match_labels(&[("canary", "true")])),
                            ..Default::default()
                        })
                        .build(),
                )
            },
            errors: 0,
            contains: "",
        },
        Case {
            id: "V25 partition abc%",
            build: || {
                create(
                    base()
                        .update_strategy(SidecarSetUpdateStrategy {
                            type_: Some(keys::ROLLING_UPDATE.into()),
                            partition: Some(IntOrString::String("abc%".into())),
                            ..Default::default()
                        })
                        .build(),
                )
            },
            errors: 1,
            contains: "spec.updateStrategy.partition: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"abc%\"}: a valid percent string must be a numeric string followed by an ending '%'",
        },
        Case {
            id: "V25 maxUnavailable -1",
            build: || {
                create(
                    base()
                        .update_strategy(SidecarSetUpdateStrategy {
                            type_: Some(keys::ROLLING_UPDATE.into()),
                            max_unavailable: Some(IntOrString::Int(-1)),
                            ..Default::default()
                        })
                        .build(),
                )
            },
            errors: 1,
            contains: "spec.updateStrategy.maxUnavailable: Invalid value: -1: must be greater than or equal to 0",
        },
        Case {
            id: "V26 container and init container names taken",
            build: || {
                let set = named("sidecarset2")
                    .containers(vec![sidecar("container-name")])
                    .init_containers(vec![sidecar("init-name")])
                    .volumes(vec![empty_dir("volume-name")])
                    .build();
                let theirs = other()
                    .containers(vec![sidecar("container-name")])
                    .init_containers(vec![sidecar("init-name")])
                    .volumes(vec![empty_dir("volume-name")])
                    .build();
                (set, None, others(vec![theirs]))
            },
            errors: 2,
            contains: "spec.containers: Invalid value: \"init-name\": container init-name already exist in sidecarset1",
        },
        Case {
            id: "V27 same namespaceSelector, same container",
            build: || {
                let set = base()
                    .namespace_selector(match_labels(&[("app", "nginx")]))
                    .build();
                let theirs = other()
                    .namespace_selector(match_labels(&[("app", "nginx")]))
                    .containers(vec![sidecar("test-sidecar")])
                    .build();
                (set, None, others(vec![theirs]))
            },
            errors: 1,
            contains: "container test-sidecar already exist in sidecarset1",
        },
        Case {
            id: "V28 disjoint namespaceSelectors",
            build: || {
                let set = base()
                    .namespace_selector(match_labels(&[("app", "nginx")]))
                    .build();
                let theirs = other()
                    .namespace_selector(match_labels(&[("app", "redis")]))
                    .containers(vec![sidecar("test-sidecar")])
                    .build();
                (set, None, others(vec![theirs]))
            },
            errors: 0,
            contains: "",
        },
        Case {
            id: "V29 same volume name, different definition",
            build: || {
                let set = base()
                    .volumes(vec![
                        empty_dir("volume-1"),
                        host_path("volume-2", "/home/work-1"),
                    ])
                    .build();
                let theirs = other()
                    .volumes(vec![
                        host_path("volume-2", "/home/work-2"),
                        empty_dir("volume-3"),
                    ])
                    .build();
                (set, None, others(vec![theirs]))
            },
            errors: 1,
            contains: "spec.volumes: Invalid value: \"volume-2\": volume volume-2 is in conflict with sidecarset sidecarset1",
        },
        Case {
            id: "V30 same volume, same definition",
            build: || {
                let set = base()
                    .volumes(vec![
                        empty_dir("volume-1"),
                        host_path("volume-2", "/home/work"),
                    ])
                    .build();
                let theirs = other()
                    .volumes(vec![
                        host_path("volume-2", "/home/work"),
                        empty_dir("volume-3"),
                    ])
                    .build();
                (set, None, others(vec![theirs]))
            },
            errors: 0,
            contains: "",
        },
        Case {
            id: "V31 Overwrite vs MergePatchJson",
            build: || {
                let set = base()
                    .patch_pod_metadata(vec![patch(keys::PATCH_POLICY_OVERWRITE, &[("key1", "v")])])
                    .build();
                let theirs = other()
                    .patch_pod_metadata(vec![patch(
                        keys::PATCH_POLICY_MERGE_PATCH_JSON,
                        &[("key1", "v")],
                    )])
                    .build();
                (set, None, others(vec![theirs]))
            },
            errors: 1,
            contains: "spec.patchPodMetadata: Invalid value: \"key1\": annotation key1 is in conflict with sidecarset sidecarset1",
        },
        Case {
            id: "V32 Retain vs Overwrite of another key",
            build: || {
                let set = base()
                    .patch_pod_metadata(vec![patch(keys::PATCH_POLICY_RETAIN, &[("key1", "v")])])
                    .build();
                let theirs = other()
                    .patch_pod_metadata(vec![patch(keys::PATCH_POLICY_OVERWRITE, &[("key2", "v")])])
                    .build();
                (set, None, others(vec![theirs]))
            },
            errors: 0,
            contains: "",
        },
        Case {
            id: "V33 MergePatchJson vs MergePatchJson",
            build: || {
                let set = base()
                    .patch_pod_metadata(vec![patch(
                        keys::PATCH_POLICY_MERGE_PATCH_JSON,
                        &[("oom-score", "{\"log-agent\": 1}")],
                    )])
                    .build();
                let theirs = other()
                    .patch_pod_metadata(vec![patch(
                        keys::PATCH_POLICY_MERGE_PATCH_JSON,
                        &[("oom-score", "{\"envoy\": 1}")],
                    )])
                    .build();
                (set, None, others(vec![theirs]))
            },
            errors: 0,
            contains: "",
        },
        Case {
            id: "V34 upgradeType changed",
            build: || {
                let old = base().build();
                let hot = SidecarContainer {
                    upgrade_strategy: Some(SidecarContainerUpgradeStrategy {
                        upgrade_type: Some(keys::HOT_UPGRADE.into()),
                        hot_upgrade_empty_image: Some("empty:1.0".into()),
                    }),
                    ..sidecar("test-sidecar")
                };
                let set = base().containers(vec![hot]).build();
                (set, Some(old), Vec::new())
            },
            errors: 1,
            contains: "spec.containers.upgradeStrategy.upgradeType: Invalid value: \"test-sidecar\": container test-sidecar upgradeType is immutable",
        },
        Case {
            id: "V35 container added on update",
            build: || {
                let old = base().build();
                let set = base().sidecar(sidecar("new")).build();
                (set, Some(old), Vec::new())
            },
            errors: 1,
            contains: "spec.containers.name: Invalid value: \"new\": container new is not found",
        },
        Case {
            id: "V36 canary of itself",
            build: || {
                let set = canary(base(), "test-sidecarset").build();
                let stored = Arc::new(base().build());
                (set, None, vec![stored])
            },
            errors: 1,
            contains: "base sidecarSet cannot be itself",
        },
        Case {
            id: "V37 base is a canary",
            build: || {
                let set = canary(base(), "base1-sidecarset").build();
                let base1 = canary(named("base1-sidecarset"), "other-base-sidecarset").build();
                (set, None, others(vec![base1]))
            },
            errors: 1,
            contains: "metadata: Invalid value: map[string]string{\"apps.kruise.io/sidecarset-base\":\"base1-sidecarset\", \"apps.kruise.io/sidecarset-canary\":\"true\"}: base sidecarSet cannot be canary",
        },
        Case {
            id: "V38 base does not exist",
            build: || create(canary(base(), "nonexistent-sidecarset").build()),
            errors: 1,
            contains: "fetch base sidecarSet[nonexistent-sidecarset] failed: sidecarsets.apps.kruise.io \"nonexistent-sidecarset\" not found",
        },
        Case {
            id: "V39 base changed on update",
            build: || {
                let old = canary(base(), "old-base-sidecarset").build();
                let set = canary(base(), "new-base-sidecarset").build();
                let bases = others(vec![
                    named("old-base-sidecarset").build(),
                    named("new-base-sidecarset").build(),
                ]);
                (set, Some(old), bases)
            },
            errors: 1,
            contains: "annotations[apps.kruise.io/sidecarset-base] is immutable",
        },
        Case {
            id: "V40 canary with RollingUpdate",
            build: || {
                let set = canary(base(), "base-sidecarset")
                    .update_strategy(strategy(keys::ROLLING_UPDATE))
                    .build();
                (set, None, others(vec![named("base-sidecarset").build()]))
            },
            errors: 1,
            contains: "RollingUpdate is not supported for canary sidecarSet",
        },
        Case {
            id: "V41 invalid name",
            build: || create(named("Bad_Name").build()),
            errors: 1,
            contains: "metadata.name: Invalid value: \"Bad_Name\": sidecarset name must consist of alphanumeric characters or '-' (e.g. 'example-com', regex used for validation is '^[a-zA-Z0-9\\-]+$')",
        },
        Case {
            id: "V41 name longer than 63",
            build: || create(named(&"A".repeat(64)).build()),
            errors: 1,
            contains: "must be no more than 63 characters",
        },
        Case {
            // No whitelist ConfigMap here: the DefaultsAllowed behaviour admits any valid key.
            id: "V42 key outside any whitelist",
            build: || {
                create(
                    base()
                        .patch_pod_metadata(vec![patch(
                            keys::PATCH_POLICY_RETAIN,
                            &[("not-whitelisted/key", "v")],
                        )])
                        .build(),
                )
            },
            errors: 0,
            contains: "",
        },
    ]
}

#[test]
fn v_table_cases() {
    let mut failures = Vec::new();
    for case in v_table() {
        let (set, old, others) = (case.build)();
        let errors = validate_sidecarset(&set, old.as_ref(), &others);
        let message = aggregate(&errors);
        if errors.len() != case.errors || !message.contains(case.contains) {
            failures.push(format!(
                "{}: expected {} error(s) containing {:?}, got {}: {}",
                case.id,
                case.errors,
                case.contains,
                errors.len(),
                message
            ));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}
