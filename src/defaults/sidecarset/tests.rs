use super::*;
use crate::api::SidecarSetSpec;
use crate::inject::hash::{hash_input, hash_input_without_image};
use k8s_openapi::api::core::v1::{ObjectFieldSelector, Probe};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use proptest::prelude::*;

fn set_from_yaml(yaml: &str) -> SidecarSet {
    let spec: SidecarSetSpec = crate::yaml::from_str(yaml).unwrap();
    SidecarSet::new("test", spec)
}

fn defaulted(yaml: &str) -> SidecarSet {
    let mut set = set_from_yaml(yaml);
    apply_defaults(&mut set);
    set
}

fn only_container(set: &SidecarSet) -> &SidecarContainer {
    &set.containers()[0]
}

#[test]
fn update_strategy_defaults() {
    let set = defaulted("{}");
    let strategy = set.spec.update_strategy.as_ref().unwrap();
    assert_eq!(strategy.type_.as_deref(), Some(keys::ROLLING_UPDATE));
    assert_eq!(strategy.max_unavailable, Some(IntOrString::Int(1)));
    assert_eq!(strategy.partition, Some(IntOrString::Int(0)));

    let set = defaulted("updateStrategy: {type: NotUpdate, partition: '10%', maxUnavailable: 3}");
    let strategy = set.spec.update_strategy.as_ref().unwrap();
    assert_eq!(strategy.type_.as_deref(), Some(keys::NOT_UPDATE));
    assert_eq!(strategy.max_unavailable, Some(IntOrString::Int(3)));
    assert_eq!(strategy.partition, Some(IntOrString::String("10%".into())));
}

#[test]
fn inject_policy_upgrade_and_share_defaults() {
    let set = defaulted(
        r#"
containers:
- {name: a}
- {name: b, podInjectPolicy: AfterAppContainer, upgradeStrategy: {upgradeType: HotUpgrade}, shareVolumePolicy: {type: enabled}}
- {name: c, podInjectPolicy: "", upgradeStrategy: {hotUpgradeEmptyImage: e}}
initContainers:
- {name: i}
- {name: j, podInjectPolicy: BeforeAppContainer}
"#,
    );
    let policies: Vec<_> = set
        .containers()
        .iter()
        .map(|c| c.pod_inject_policy())
        .collect();
    assert_eq!(
        policies,
        [
            keys::BEFORE_APP_CONTAINER,
            keys::AFTER_APP_CONTAINER,
            keys::BEFORE_APP_CONTAINER
        ]
    );
    let init_policies: Vec<_> = set
        .init_containers()
        .iter()
        .map(|c| c.pod_inject_policy())
        .collect();
    assert_eq!(
        init_policies,
        [keys::AFTER_APP_CONTAINER, keys::BEFORE_APP_CONTAINER]
    );

    let upgrade: Vec<_> = set.containers().iter().map(|c| c.upgrade_type()).collect();
    assert_eq!(
        upgrade,
        [keys::COLD_UPGRADE, keys::HOT_UPGRADE, keys::COLD_UPGRADE]
    );
    let c = &set.containers()[2];
    let strategy = c.upgrade_strategy.as_ref().unwrap();
    assert_eq!(strategy.hot_upgrade_empty_image.as_deref(), Some("e"));

    let share: Vec<_> = set
        .containers()
        .iter()
        .map(|c| c.shares_volumes())
        .collect();
    assert_eq!(share, [false, true, false]);
    for c in set.containers().iter().chain(set.init_containers()) {
        let share_type = c
            .share_volume_policy
            .as_ref()
            .and_then(|p| p.type_.as_deref());
        assert!(share_type.is_some());
        assert!(c.share_volume_device_policy.is_none());
        // No image at all does not parse as a reference: IfNotPresent.
        assert_eq!(
            c.container.image_pull_policy.as_deref(),
            Some("IfNotPresent")
        );
    }
}

#[test]
fn transfer_env_field_refs_default_to_v1() {
    let set = defaulted(
        r#"
containers:
- name: a
  image: a:1
  transferEnv:
  - {sourceContainerNameFrom: {fieldRef: {fieldPath: "metadata.labels['app']"}}, envName: X}
  - {sourceContainerNameFrom: {}, envName: Y}
  - {sourceContainerName: app, envName: Z}
"#,
    );
    let c = only_container(&set);
    let transfer = c.transfer_env.as_deref().unwrap();
    let field_ref = transfer[0]
        .source_container_name_from
        .as_ref()
        .and_then(|f| f.field_ref.as_ref())
        .unwrap();
    assert_eq!(field_ref.api_version.as_deref(), Some("v1"));
    assert!(
        transfer[1]
            .source_container_name_from
            .as_ref()
            .unwrap()
            .field_ref
            .is_none()
    );
    assert!(transfer[2].source_container_name_from.is_none());
}

#[test]
fn spec_level_defaults() {
    let set = defaulted(
        r#"
patchPodMetadata: [{annotations: {a: b}}, {annotations: {c: d}, patchPolicy: Overwrite}]
injectionStrategy: {revision: {revisionName: r}}
containers:
- {name: a, resourcesPolicy: {targetContainersMode: sum}}
- {name: b, resourcesPolicy: {targetContainersMode: max, targetContainersNameRegex: "^app$"}}
- {name: c, resourcesPolicy: {targetContainersMode: max, targetContainersNameRegex: ""}}
"#,
    );
    assert_eq!(set.spec.revision_history_limit, Some(10));
    let policies: Vec<_> = set
        .spec
        .patch_pod_metadata
        .iter()
        .flatten()
        .map(|p| p.patch_policy.as_deref())
        .collect();
    assert_eq!(
        policies,
        [
            Some(keys::PATCH_POLICY_RETAIN),
            Some(keys::PATCH_POLICY_OVERWRITE)
        ]
    );
    let revision = set
        .spec
        .injection_strategy
        .as_ref()
        .unwrap()
        .revision
        .as_ref()
        .unwrap();
    assert_eq!(revision.policy.as_deref(), Some("Always"));
    let regexes: Vec<_> = set
        .containers()
        .iter()
        .map(|c| {
            c.resources_policy
                .as_ref()
                .unwrap()
                .target_containers_name_regex
                .as_deref()
        })
        .collect();
    assert_eq!(regexes, [Some(".*"), Some("^app$"), Some("")]);

    let set = defaulted("revisionHistoryLimit: 3\ninjectionStrategy: {paused: true}");
    assert_eq!(set.spec.revision_history_limit, Some(3));
    assert!(
        set.spec
            .injection_strategy
            .as_ref()
            .unwrap()
            .revision
            .is_none()
    );
    assert!(set.spec.containers.is_none());
    assert!(set.spec.volumes.is_none());
}

#[test]
fn defaulting_is_idempotent() {
    let yaml = r#"
containers: [{name: a, image: a, resources: {limits: {cpu: "0.1"}}, livenessProbe: {httpGet: {port: 1}}}]
initContainers: [{name: i, image: i:1, restartPolicy: Always}]
volumes: [{name: v}]
"#;
    let once = defaulted(yaml);
    let mut twice = once.clone();
    apply_defaults(&mut twice);
    assert_eq!(once.spec, twice.spec);
    assert_eq!(once.metadata, twice.metadata);
}

#[test]
fn vector_row_5_comes_from_defaulting() {
    let set = defaulted(r#"containers: [{name: dns-f, image: "dns:1.0"}]"#);
    assert_eq!(
        hash_input(&set.spec),
        concat!(
            r#"{"containers":[{"name":"dns-f","image":"dns:1.0","resources":{},"terminationMessagePath":"/dev/termination-log","#,
            r#""terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent","podInjectPolicy":"BeforeAppContainer","#,
            r#""upgradeStrategy":{"upgradeType":"ColdUpgrade"},"shareVolumePolicy":{"type":"disabled"}}]}"#
        )
    );
    assert_eq!(
        sidecarset_hash(&set.spec),
        "6wbd76bd7984x24fb4f44fv9222cw9v9bcf85x766744wddd4zwx927zzz2zb684"
    );
    assert_eq!(
        sidecarset_hash_without_image(&set.spec),
        "82684vwf9d4cb4wz4vffx4ddfbb47ww4z4wwxdbwb8w2zbb7zvf4524cdd49bv94"
    );
}

/// Spec §13.0, written without the defaults the webhook adds.
const GOLDEN_INPUT: &str = r#"
selector: {matchLabels: {app: web}}
containers:
- name: log-agent
  image: fluent-bit:2.0
  volumeMounts: [{name: fb-config, mountPath: /fluent-bit/etc}]
  podInjectPolicy: AfterAppContainer
  shareVolumePolicy: {type: enabled}
  transferEnv: [{sourceContainerName: app, envName: LOG_LEVEL}]
volumes:
- {name: fb-config, configMap: {name: fb-config}}
- {name: unused}
imagePullSecrets: [{name: regcred}]
"#;

#[test]
fn golden_sidecarset_defaults_to_the_golden_hashes() {
    let mut set = set_from_yaml(GOLDEN_INPUT);
    set.metadata.annotations = Some(BTreeMap::from([
        (keys::SIDECARSET_HASH.to_string(), "stale".to_string()),
        ("team".to_string(), "logging".to_string()),
    ]));
    default_and_hash(&mut set);
    assert_eq!(
        set.annotation(keys::SIDECARSET_HASH),
        Some("dzw7fx282v47vxxddxb4d44448bcvz2875xx89x4bcxww8f9xf9ff4d45v22vc4c")
    );
    assert_eq!(
        set.annotation(keys::SIDECARSET_HASH_WITHOUT_IMAGE),
        Some("v4497x7v99fdbcd9dfvcc2xd759zcv27fxb4c68fd9f8b52b4f77c72ff988cwbd")
    );
    assert_eq!(set.annotation("team"), Some("logging"));
    assert!(!hash_input_without_image(&set.spec).contains(r#""image""#));

    // The rest of the stored object shown in §13.0.
    let expected: SidecarSetSpec = crate::yaml::from_str(
        r#"
selector: {matchLabels: {app: web}}
containers:
- name: log-agent
  image: fluent-bit:2.0
  volumeMounts: [{name: fb-config, mountPath: /fluent-bit/etc}]
  terminationMessagePath: /dev/termination-log
  terminationMessagePolicy: File
  imagePullPolicy: IfNotPresent
  podInjectPolicy: AfterAppContainer
  upgradeStrategy: {upgradeType: ColdUpgrade}
  shareVolumePolicy: {type: enabled}
  transferEnv: [{sourceContainerName: app, envName: LOG_LEVEL}]
volumes:
- {name: fb-config, configMap: {name: fb-config, defaultMode: 420}}
- {name: unused, emptyDir: {}}
imagePullSecrets: [{name: regcred}]
updateStrategy: {type: RollingUpdate, partition: 0, maxUnavailable: 1}
revisionHistoryLimit: 10
"#,
    )
    .unwrap();
    assert_eq!(set.spec, expected);
}

#[test]
fn hash_annotations_are_created_when_missing() {
    let mut set = set_from_yaml("containers: [{name: a, image: a:1}]");
    default_and_hash(&mut set);
    let annotations = set.metadata.annotations.as_ref().unwrap();
    assert_eq!(annotations.len(), 2);
    assert_eq!(
        annotations[keys::SIDECARSET_HASH],
        sidecarset_hash(&set.spec)
    );
}

proptest! {
    #[test]
    fn defaulting_never_panics(
        image in "\\PC{0,20}",
        cpu in "\\PC{0,12}",
        period in proptest::option::of(any::<i32>()),
        has_field_ref in any::<bool>(),
    ) {
        let mut set = set_from_yaml("containers: [{name: a}]\ninitContainers: [{name: b}]");
        let field_ref = has_field_ref.then(|| ObjectFieldSelector {
            api_version: None,
            field_path: "metadata.name".into(),
        });
        for sidecar in set.spec.containers.iter_mut().chain(set.spec.init_containers.iter_mut()).flatten() {
            sidecar.container.image = Some(image.clone());
            sidecar.container.resources = Some(k8s_openapi::api::core::v1::ResourceRequirements {
                limits: Some(BTreeMap::from([("cpu".to_string(), Quantity(cpu.clone()))])),
                ..Default::default()
            });
            sidecar.container.liveness_probe = Some(Probe { period_seconds: period, ..Default::default() });
            sidecar.transfer_env = Some(vec![crate::api::TransferEnvVar {
                source_container_name_from: Some(crate::api::SourceContainerNameSource {
                    field_ref: field_ref.clone(),
                }),
                ..Default::default()
            }]);
        }
        default_and_hash(&mut set);
        prop_assert!(set.annotation(keys::SIDECARSET_HASH).is_some());
    }
}

/// The injection tests write the webhook's defaults out for their sets (`inject::tests`): for
/// such a set they store what this module stores.
#[test]
fn the_injection_tests_store_sets_as_the_webhook_does() {
    let set = set_from_yaml(
        r#"
selector: {matchLabels: {app: web}}
containers: [{name: proxy, image: "envoy:1.30"}]
initContainers: [{name: init-mesh, image: "busybox:1.36"}]
patchPodMetadata: [{annotations: {mesh/enabled: "true"}}]
injectionStrategy: {revision: {revisionName: mesh-old}}
"#,
    );
    let (mut by_tests, mut by_webhook) = (set.clone(), set);
    crate::inject::tests::default_and_hash(&mut by_tests);
    default_and_hash(&mut by_webhook);
    assert_eq!(
        serde_json::to_value(&by_tests).unwrap(),
        serde_json::to_value(&by_webhook).unwrap()
    );
}
