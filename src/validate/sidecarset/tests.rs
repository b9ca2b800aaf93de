use super::*;
use crate::api::{
    ResourceExprPair, ResourcesExpr, ShareVolumePolicy, SidecarContainer,
    SidecarContainerUpgradeStrategy, SidecarSetBuilder, SidecarSetInjectionStrategy,
    SidecarSetPatchPodMetadata, SourceContainerNameSource, TransferEnvVar, UpdatePriorityOrderTerm,
    UpdatePriorityStrategy, UpdatePriorityWeightTerm, UpdateScatterTerm, match_labels,
};
use crate::validate::field::aggregate;
use k8s_openapi::api::core::v1::{
    EmptyDirVolumeSource, EnvVar, HostPathVolumeSource, PersistentVolumeClaimVolumeSource,
    ProjectedVolumeSource, ResourceRequirements, ServiceAccountTokenProjection, Volume,
    VolumeDevice, VolumeMount, VolumeProjection,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement;

// ----- builders -----------------------------------------------------------------------

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn expression(key: &str, operator: &str, values: &[&str]) -> LabelSelectorRequirement {
    LabelSelectorRequirement {
        key: key.into(),
        operator: operator.into(),
        values: (!values.is_empty()).then(|| values.iter().map(|v| v.to_string()).collect()),
    }
}

fn with_expressions(
    mut selector: LabelSelector,
    expressions: Vec<LabelSelectorRequirement>,
) -> LabelSelector {
    selector.match_expressions = Some(expressions);
    selector
}

/// A sidecar as the defaulting webhook leaves it.
fn sidecar(name: &str) -> SidecarContainer {
    SidecarContainer {
        container: Container {
            name: name.into(),
            image: Some("test-image".into()),
            image_pull_policy: Some("IfNotPresent".into()),
            termination_message_policy: Some("File".into()),
            ..Default::default()
        },
        pod_inject_policy: Some(keys::BEFORE_APP_CONTAINER.into()),
        upgrade_strategy: Some(SidecarContainerUpgradeStrategy {
            upgrade_type: Some(keys::COLD_UPGRADE.into()),
            hot_upgrade_empty_image: None,
        }),
        share_volume_policy: Some(ShareVolumePolicy {
            type_: Some(keys::SHARE_VOLUME_DISABLED.into()),
        }),
        ..Default::default()
    }
}

fn native_sidecar(name: &str) -> SidecarContainer {
    let mut init = sidecar(name);
    init.container.restart_policy = Some("Always".into());
    init
}

fn strategy(type_: &str) -> Option<SidecarSetUpdateStrategy> {
    Some(SidecarSetUpdateStrategy {
        type_: Some(type_.into()),
        ..Default::default()
    })
}

/// The "valid base" of the V table: name `test-sidecarset`, selector `a=b`, one container
/// `test-sidecar`/`test-image`, updateStrategy `NotUpdate`.
fn base() -> SidecarSetBuilder {
    named("test-sidecarset")
}

fn named(name: &str) -> SidecarSetBuilder {
    SidecarSetBuilder::new(name)
        .selector(&[("a", "b")])
        .sidecar(sidecar("test-sidecar"))
        .update_strategy(strategy(keys::NOT_UPDATE))
}

fn canary(set: SidecarSetBuilder, base_name: &str) -> SidecarSetBuilder {
    set.annotation(keys::SIDECARSET_CANARY, "true")
        .annotation(keys::SIDECARSET_BASE, base_name)
}

fn empty_dir(name: &str) -> Volume {
    Volume {
        name: name.into(),
        empty_dir: Some(EmptyDirVolumeSource::default()),
        ..Default::default()
    }
}

fn host_path(name: &str, path: &str) -> Volume {
    Volume {
        name: name.into(),
        host_path: Some(HostPathVolumeSource {
            path: path.into(),
            type_: Some(String::new()),
        }),
        ..Default::default()
    }
}

fn pvc(name: &str, claim: &str) -> Volume {
    Volume {
        name: name.into(),
        persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
            claim_name: claim.into(),
            read_only: None,
        }),
        ..Default::default()
    }
}

fn patch(policy: &str, pairs: &[(&str, &str)]) -> SidecarSetPatchPodMetadata {
    SidecarSetPatchPodMetadata {
        annotations: Some(labels(pairs)),
        patch_policy: Some(policy.into()),
    }
}

fn revision(
    custom_version: Option<&str>,
    revision_name: Option<&str>,
    policy: &str,
) -> Option<SidecarSetInjectionStrategy> {
    Some(SidecarSetInjectionStrategy {
        paused: None,
        revision: Some(SidecarSetInjectRevision {
            custom_version: custom_version.map(Into::into),
            revision_name: revision_name.map(Into::into),
            policy: Some(policy.into()),
        }),
    })
}

fn resources_policy(regex: &str, cpu_limit: Option<&str>) -> Option<ResourcesPolicy> {
    Some(ResourcesPolicy {
        target_containers_mode: "sum".into(),
        target_containers_name_regex: Some(regex.into()),
        resources_expr: Some(ResourcesExpr {
            limits: cpu_limit.map(|cpu| ResourceExprPair {
                cpu: Some(cpu.into()),
                memory: None,
            }),
            requests: None,
        }),
    })
}

fn transfer_env(api_version: Option<&str>, field_path: &str) -> Option<Vec<TransferEnvVar>> {
    Some(vec![TransferEnvVar {
        source_container_name_from: Some(SourceContainerNameSource {
            field_ref: Some(ObjectFieldSelector {
                api_version: api_version.map(Into::into),
                field_path: field_path.into(),
            }),
        }),
        env_name: Some("PROXY".into()),
        ..Default::default()
    }])
}

fn others(sets: Vec<SidecarSet>) -> Vec<Arc<SidecarSet>> {
    sets.into_iter().map(Arc::new).collect()
}

/// The other SidecarSet of the conflict cases: `sidecarset1`, selector `a=b`.
fn other() -> SidecarSetBuilder {
    named("sidecarset1").containers(vec![sidecar("other-sidecar")])
}

// ----- the V table ----------------------------------------------------------------------

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
            contains: "spec.container.shareVolumePolicy: Invalid value: v1alpha1.ShareVolumePolicy{Type:\"\"}: unsupported share volume policy",
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
            errors: 2,
            contains: "spec[0].resourcesPolicy: Invalid value: v1alpha1.ResourcesPolicy{TargetContainersMode:\"sum\", TargetContainersNameRegex:\"\"}: resourcesPolicy and resources cannot be configured together",
        },
        Case {
            // + this server's Forbidden
            id: "V21 invalid mode and empty regex",
            build: || {
                let mut container = sidecar("test-sidecar");
                container.resources_policy = resources_policy("", Some("cpu*50%"));
                if let Some(policy) = container.resources_policy.as_mut() {
                    policy.target_containers_mode = "invalid".into();
                }
                create(base().containers(vec![container]).build())
            },
            errors: 2,
            contains: "spec[0].resourcesPolicy.targetContainersNameRegex: Required value: invalid empty regex",
        },
        Case {
            // + this server's Forbidden
            id: "V22 plain init container with resourcesPolicy",
            build: || {
                let mut init = sidecar("test-init");
                init.resources_policy = resources_policy(".*", Some("cpu*50%"));
                create(base().init_containers(vec![init]).containers(None).build())
            },
            errors: 2,
            contains: "spec[0].resourcesPolicy: Forbidden: resourcesPolicy is only supported for containers with RestartPolicy Always",
        },
        Case {
            // upstream: 0 errors; here: only this server's Forbidden
            id: "V23 native init container with resourcesPolicy",
            build: || {
                let mut init = native_sidecar("test-init");
                init.resources_policy = resources_policy(".*", Some("cpu*50%"));
                create(base().init_containers(vec![init]).containers(None).build())
            },
            errors: 1,
            contains: "spec[0].resourcesPolicy: Forbidden: resourcesPolicy is not supported by this server yet",
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

// ----- rules the table does not cover: one passing and one failing case each --------------

fn check(set: &SidecarSet) -> Vec<String> {
    validate_sidecarset(set, None, &[])
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn the_valid_base_passes() {
    assert_eq!(check(&base().build()), Vec::<String>::new());
}

#[test]
fn metadata_rules() {
    let mut set = base()
        .annotation("Example.com/Fine", "x")
        .label("app", "web")
        .build();
    assert!(check(&set).is_empty());

    set.metadata.labels = Some(labels(&[("app", "bad value!")]));
    set.metadata.namespace = Some("default".into());
    let errors = check(&set);
    assert_eq!(errors.len(), 2, "{errors:#?}");
    assert_eq!(
        errors[0],
        "metadata.namespace: Forbidden: not allowed on this type"
    );
    assert!(errors[1].starts_with("metadata.labels: Invalid value: \"bad value!\""));
}

#[test]
fn canary_with_a_valid_base_passes_and_skips_the_base_in_conflicts() {
    let set = canary(base(), "base-sidecarset")
        .volumes(vec![host_path("shared", "/a")])
        .build();
    let base_set = named("base-sidecarset")
        .volumes(vec![host_path("shared", "/b")])
        .build();
    let stored = others(vec![base_set]);
    assert!(validate_sidecarset(&set, None, &stored).is_empty());
    // Any other SidecarSet does conflict with the base (here: the container name).
    assert_eq!(validate_sidecarset(&base().build(), None, &stored).len(), 1);
    let errors = validate_sidecarset(&named("x").build(), None, &stored);
    assert_eq!(
        aggregate(&errors),
        "spec.containers: Invalid value: \"test-sidecar\": container test-sidecar already exist in base-sidecarset"
    );
}

#[test]
fn canary_marker_needs_both_annotations() {
    let mut set = base().annotation(keys::SIDECARSET_CANARY, "true").build();
    assert!(check(&set).is_empty());
    set.metadata.annotations = Some(labels(&[
        (keys::SIDECARSET_CANARY, "false"),
        (keys::SIDECARSET_BASE, "nope"),
    ]));
    assert!(check(&set).is_empty());
}

#[test]
fn v1alpha1_namespace_acts_as_a_namespace_selector() {
    let mut set = base().namespace("default").build();
    assert!(check(&set).is_empty());

    set.spec.namespace = Some("Bad_NS!".into());
    let errors = check(&set);
    assert_eq!(errors.len(), 2, "{errors:#?}");
    assert!(
        errors[0].starts_with("spec.namespaceSelector.matchLabels: Invalid value: \"Bad_NS!\"")
    );
    assert!(errors[1].starts_with("spec.namespaceSelector.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"kubernetes.io/metadata.name\":\"Bad_NS!\"}"));

    // Conflicts: different namespaces never overlap; the same one does, even against a selector.
    let mine = base().namespace("ns-a").build();
    let mut theirs = other()
        .containers(vec![sidecar("test-sidecar")])
        .namespace("ns-b")
        .build();
    assert!(validate_sidecarset(&mine, None, &others(vec![theirs.clone()])).is_empty());
    theirs.spec.namespace = None;
    theirs.spec.namespace_selector = Some(match_labels(&[(keys::NAMESPACE_NAME_LABEL, "ns-a")]));
    assert_eq!(
        validate_sidecarset(&mine, None, &others(vec![theirs])).len(),
        1
    );
}

#[test]
fn update_strategy_selector_is_checked_only_for_rolling_update() {
    let bad_selector = with_expressions(
        LabelSelector::default(),
        vec![expression("k", "In", &["bad-"])],
    );
    let mut set = base()
        .update_strategy(SidecarSetUpdateStrategy {
            type_: Some(keys::NOT_UPDATE.into()),
            selector: Some(bad_selector.clone()),
            partition: Some(IntOrString::String("x".into())),
            ..Default::default()
        })
        .build();
    assert!(check(&set).is_empty());
    if let Some(strategy) = set.spec.update_strategy.as_mut() {
        strategy.type_ = Some(keys::ROLLING_UPDATE.into());
        strategy.partition = None;
    }
    let errors = check(&set);
    assert_eq!(errors.len(), 2, "{errors:#?}");
    assert!(errors[0].starts_with(
        "spec.updateStrategy.selector.matchExpressions[0].values[0]: Invalid value: \"bad-\""
    ));
    assert!(errors[1].starts_with("spec.updateStrategy.selector.selector: Invalid value:"));
}

#[test]
fn revision_policy_must_be_known() {
    let mut set = base()
        .injection_strategy(revision(None, Some("rev"), "Sometimes"))
        .build();
    let errors = check(&set);
    assert_eq!(errors.len(), 2, "{errors:#?}");
    assert_eq!(
        errors[1],
        "revision.policy: Invalid value: v1alpha1.SidecarSetInjectRevision{CustomVersion:(*string)(nil), RevisionName:(*string)(\"rev\"), Policy:\"Sometimes\"}: Invalid policy Sometimes, supported: [Always, Partial]"
    );
    // Without any revision there is nothing to check.
    set.spec.injection_strategy = Some(SidecarSetInjectionStrategy {
        paused: Some(true),
        revision: None,
    });
    assert!(check(&set).is_empty());
}

#[test]
fn priority_strategy_rules() {
    let weight = |weight, selector: LabelSelector| UpdatePriorityWeightTerm {
        weight,
        match_selector: selector,
    };
    let order = |key: &str| UpdatePriorityOrderTerm {
        ordered_key: key.into(),
    };
    let cases: Vec<(UpdatePriorityStrategy, Option<&str>)> = vec![
        (
            UpdatePriorityStrategy {
                weight_priority: Some(vec![weight(50, match_labels(&[("a", "b")]))]),
                order_priority: None,
            },
            None,
        ),
        (
            UpdatePriorityStrategy {
                weight_priority: None,
                order_priority: Some(vec![order("rank")]),
            },
            None,
        ),
        (
            UpdatePriorityStrategy {
                weight_priority: Some(vec![weight(50, match_labels(&[("a", "b")]))]),
                order_priority: Some(vec![order("rank")]),
            },
            Some("only one of weightPriority and orderPriority can be used"),
        ),
        (
            UpdatePriorityStrategy {
                weight_priority: Some(vec![weight(101, match_labels(&[("a", "b")]))]),
                order_priority: None,
            },
            Some("weight must be valid number in the range 1-100"),
        ),
        (
            UpdatePriorityStrategy {
                weight_priority: Some(vec![weight(10, LabelSelector::default())]),
                order_priority: None,
            },
            Some("selector can not be empty"),
        ),
        (
            UpdatePriorityStrategy {
                weight_priority: Some(vec![weight(
                    10,
                    with_expressions(LabelSelector::default(), vec![expression("a", "In", &[])]),
                )]),
                order_priority: None,
            },
            Some(
                "invalid selector values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty",
            ),
        ),
        (
            UpdatePriorityStrategy {
                weight_priority: None,
                order_priority: Some(vec![order("")]),
            },
            Some("order key can not be empty"),
        ),
    ];
    for (priority, expected) in cases {
        let set = base()
            .update_strategy(SidecarSetUpdateStrategy {
                type_: Some(keys::ROLLING_UPDATE.into()),
                priority_strategy: Some(priority),
                ..Default::default()
            })
            .build();
        let message = aggregate(&validate_sidecarset(&set, None, &[]));
        match expected {
            None => assert_eq!(message, ""),
            Some(detail) => assert_eq!(
                message,
                format!("spec.updateStrategy.priorityStrategy: Required value: {detail}")
            ),
        }
    }
}

#[test]
fn scatter_terms_need_a_key() {
    let term = |key: &str, value: &str| UpdateScatterTerm {
        key: key.into(),
        value: value.into(),
    };
    let mut set = base()
        .update_strategy(SidecarSetUpdateStrategy {
            type_: Some(keys::ROLLING_UPDATE.into()),
            scatter_strategy: Some(vec![term("zone", "a"), term("zone", "*")]),
            ..Default::default()
        })
        .build();
    assert!(check(&set).is_empty());
    if let Some(strategy) = set.spec.update_strategy.as_mut() {
        strategy.scatter_strategy = Some(vec![term("", "a")]);
    }
    assert_eq!(
        check(&set),
        vec!["spec.updateStrategy.scatterStrategy: Required value: key should not be empty"]
    );
}

#[test]
fn transfer_env_field_refs() {
    let run = |api_version: Option<&str>, field_path: &str| {
        let proxy = SidecarContainer {
            transfer_env: transfer_env(api_version, field_path),
            ..sidecar("test-sidecar")
        };
        check(&base().containers(vec![proxy]).build())
    };
    assert!(run(Some("v1"), "metadata.labels['app.kubernetes.io/name']").is_empty());
    assert!(run(Some("v1"), "metadata.annotations['Example.com/Sidecar']").is_empty());
    assert_eq!(
        run(None, "metadata.labels['a']"),
        vec!["spec[0].transferEnv.fieldRef.apiVersion: Required value"]
    );
    assert_eq!(
        run(Some("v1"), ""),
        vec!["spec[0].transferEnv.fieldRef.fieldPath: Required value"]
    );
    assert_eq!(
        run(Some("v2"), "metadata.labels['a']"),
        vec![
            "spec[0].transferEnv.fieldRef.fieldPath: Invalid value: \"metadata.labels['a']\": error converting fieldPath: unsupported pod version: v2"
        ]
    );
    assert_eq!(
        run(Some("v1"), "metadata.name"),
        vec![
            "spec[0].transferEnv.fieldRef.fieldPath: Invalid value: \"metadata.name\": error converting fieldPath: field label not supported: metadata.name"
        ]
    );
    assert_eq!(
        run(Some("v1"), "spec.containers['x']"),
        vec![
            "spec[0].transferEnv.fieldRef.fieldPath: Invalid value: \"spec.containers['x']\": error converting fieldPath: field path not supported: spec.containers"
        ]
    );
    let errors = run(Some("v1"), "metadata.labels['bad key']");
    assert_eq!(errors.len(), 1);
    assert!(errors[0].starts_with(
        "spec[0].transferEnv.fieldRef: Invalid value: \"bad key\": name part must consist of"
    ));
}

#[test]
fn resources_policy_structure() {
    let run = |policy: Option<ResourcesPolicy>| {
        let sized = SidecarContainer {
            resources_policy: policy,
            ..sidecar("test-sidecar")
        };
        check(&base().containers(vec![sized]).build())
    };
    let forbidden =
        "spec[0].resourcesPolicy: Forbidden: resourcesPolicy is not supported by this server yet";
    assert_eq!(
        run(resources_policy("^app.*$", Some("max(cpu*50%, 50m)"))),
        vec![forbidden]
    );

    let errors = run(resources_policy("[invalid(regex", Some("cpu*50%")));
    assert_eq!(errors.len(), 2, "{errors:#?}");
    assert!(errors[1].starts_with("spec[0].resourcesPolicy.targetContainersNameRegex: Invalid value: \"[invalid(regex\": invalid regex pattern: error parsing regexp:"), "{}", errors[1]);

    // Expressions are not evaluated: the refusal is the only error of a malformed one.
    assert_eq!(
        run(resources_policy(".*", Some("max(cpu*50%)"))),
        vec![forbidden]
    );

    let mut no_expressions = resources_policy(".*", None);
    if let Some(policy) = no_expressions.as_mut() {
        policy.resources_expr = None;
    }
    let errors = run(no_expressions);
    assert_eq!(errors.len(), 2, "{errors:#?}");
    assert!(errors[1].ends_with("at least one of limits or requests must be configured"));
}

#[test]
fn sidecars_are_validated_as_a_pod() {
    let mut a = sidecar("dup");
    a.container.env = Some(vec![EnvVar {
        name: "1BAD".into(),
        value: Some("x".into()),
        value_from: None,
    }]);
    let b = sidecar("dup");
    let init = sidecar("dup");
    let set = base()
        .containers(vec![a, b])
        .init_containers(vec![init])
        .volumes(vec![empty_dir("v"), empty_dir("v")])
        .build();
    let errors = check(&set);
    assert_eq!(errors.len(), 4, "{errors:#?}");
    assert_eq!(errors[0], "spec.volumes[1].name: Duplicate value: \"v\"");
    assert!(errors[1].starts_with("spec.containers[0].env[0].name: Invalid value: \"1BAD\""));
    assert_eq!(
        errors[2],
        "spec.containers[1].name: Duplicate value: \"dup\""
    );
    assert_eq!(
        errors[3],
        "spec.initContainers[0].name: Duplicate value: \"dup\""
    );

    // Init containers' own podInjectPolicy is not validated, and a lone init container is fine.
    let mut init = sidecar("init");
    init.pod_inject_policy = Some("Sideways".into());
    let set = base().containers(None).init_containers(vec![init]).build();
    assert!(check(&set).is_empty());
}

#[test]
fn patch_pod_metadata_entries() {
    let mut set = base()
        .patch_pod_metadata(vec![
            patch(keys::PATCH_POLICY_RETAIN, &[("a", "1")]),
            patch(keys::PATCH_POLICY_OVERWRITE, &[("b", "2")]),
        ])
        .build();
    assert!(check(&set).is_empty());

    set.spec.patch_pod_metadata = Some(vec![
        SidecarSetPatchPodMetadata {
            annotations: None,
            patch_policy: Some(keys::PATCH_POLICY_RETAIN.into()),
        },
        SidecarSetPatchPodMetadata {
            annotations: Some(labels(&[("ok", "1")])),
            patch_policy: None,
        },
        patch(keys::PATCH_POLICY_RETAIN, &[("bad key", "1")]),
    ]);
    let errors = check(&set);
    assert_eq!(errors.len(), 3, "{errors:#?}");
    assert_eq!(
        errors[0],
        "spec.patchPodMetadata: Required value: no annotations defined for SidecarSet"
    );
    assert_eq!(
        errors[1],
        "spec.patchPodMetadata: Required value: no patchPolicy defined for patchPodMetadata"
    );
    assert!(errors[2].starts_with("patchPodMetadata.annotations: Invalid value: \"bad key\""));
}

#[test]
fn updates_may_remove_containers_and_change_init_containers() {
    let old = base().sidecar(sidecar("second")).build();
    let set = base().init_containers(vec![sidecar("added-init")]).build();
    assert!(validate_sidecarset(&set, Some(&old), &[]).is_empty());

    // An old container without an upgrade type may take one.
    let untyped = SidecarContainer {
        upgrade_strategy: None,
        ..sidecar("test-sidecar")
    };
    let old = base().containers(vec![untyped]).build();
    assert!(validate_sidecarset(&base().build(), Some(&old), &[]).is_empty());
}

#[test]
fn conflicts_need_overlapping_pods_and_are_skipped_after_earlier_errors() {
    let mut theirs = other()
        .containers(vec![sidecar("test-sidecar")])
        .label_selector(match_labels(&[("a", "c")]))
        .build();
    assert!(validate_sidecarset(&base().build(), None, &others(vec![theirs.clone()])).is_empty());

    theirs.spec.selector = Some(match_labels(&[("a", "b")]));
    let stored = others(vec![theirs]);
    assert_eq!(validate_sidecarset(&base().build(), None, &stored).len(), 1);

    // The SidecarSet being updated appears in the list itself and is ignored.
    let same = base().volumes(vec![host_path("v", "/other")]).build();
    let set = base().volumes(vec![host_path("v", "/mine")]).build();
    assert!(validate_sidecarset(&set, Some(&base().build()), &others(vec![same])).is_empty());

    // With a spec error, conflicts are not reported.
    let broken = base().label_selector(None).build();
    let errors = validate_sidecarset(&broken, None, &stored);
    assert_eq!(
        aggregate(&errors),
        "spec.selector: Required value: no selector defined for SidecarSet"
    );
}

#[test]
fn init_container_names_only_clash_with_init_containers() {
    let set = base().init_containers(vec![sidecar("shared")]).build();
    let theirs = other().containers(vec![sidecar("shared")]).build();
    assert!(validate_sidecarset(&set, None, &others(vec![theirs])).is_empty());
}

#[test]
fn the_last_overlapping_owner_of_a_name_is_reported() {
    let set = base().volumes(vec![host_path("v", "/a")]).build();
    let first = named("first")
        .containers(vec![sidecar("c1")])
        .volumes(vec![host_path("v", "/b")])
        .build();
    let second = named("second")
        .containers(vec![sidecar("c2")])
        .volumes(vec![host_path("v", "/a")])
        .build();
    // `second` defines the volume identically and owns the name last: no conflict.
    assert!(
        validate_sidecarset(&set, None, &others(vec![first.clone(), second.clone()])).is_empty()
    );
    let errors = validate_sidecarset(&set, None, &others(vec![second, first]));
    assert_eq!(
        aggregate(&errors),
        "spec.volumes: Invalid value: \"v\": volume v is in conflict with sidecarset first"
    );
}

#[test]
fn selector_overlap_truth_table() {
    let labels_of = |pairs: &[(&str, &str)]| match_labels(pairs);
    let exprs =
        |list: Vec<LabelSelectorRequirement>| with_expressions(LabelSelector::default(), list);
    let cases = [
        (labels_of(&[("a", "h")]), labels_of(&[("a", "h")]), true),
        (labels_of(&[("a", "h")]), labels_of(&[("a", "i")]), false),
        (labels_of(&[("a", "h")]), labels_of(&[("b", "i")]), true),
        (
            labels_of(&[("a", "h"), ("b", "i"), ("c", "j")]),
            labels_of(&[("a", "h"), ("b", "x"), ("c", "j")]),
            false,
        ),
        (
            labels_of(&[("a", "h")]),
            exprs(vec![expression("a", "In", &["h", "i", "j"])]),
            true,
        ),
        (
            labels_of(&[("a", "h")]),
            exprs(vec![expression("a", "In", &["i", "j"])]),
            false,
        ),
        (
            exprs(vec![expression("a", "NotIn", &["h", "i"])]),
            labels_of(&[("a", "h")]),
            false,
        ),
        (
            labels_of(&[("a", "h")]),
            exprs(vec![expression("a", "Exists", &[])]),
            true,
        ),
        (
            exprs(vec![expression("a", "DoesNotExist", &[])]),
            labels_of(&[("a", "h")]),
            false,
        ),
        // The rough edge the spec calls out: `Exists` on a key the other does not pin.
        (
            labels_of(&[("a", "h")]),
            exprs(vec![expression("b", "Exists", &[])]),
            false,
        ),
        (LabelSelector::default(), labels_of(&[("a", "h")]), true),
    ];
    for (a, b, expected) in cases {
        assert_eq!(selectors_overlap(&a, &b), expected, "{a:?} vs {b:?}");
        assert_eq!(selectors_overlap(&b, &a), expected, "{b:?} vs {a:?}");
    }
}

// ----- never panics --------------------------------------------------------------------------

mod fuzz {
    use super::*;
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
                    container.resources_policy =
                        policy.map(|(regex, cpu, memory)| ResourcesPolicy {
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
                        .injection_strategy(injection.map(
                            |(custom_version, revision_name, policy)| SidecarSetInjectionStrategy {
                                paused: None,
                                revision: Some(SidecarSetInjectRevision {
                                    custom_version,
                                    revision_name,
                                    policy,
                                }),
                            },
                        ))
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
}
