use super::*;
use crate::api::SidecarSetSpec;
use crate::inject::hash::{hash_input, hash_input_without_image};
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
            Some(PULL_IF_NOT_PRESENT)
        );
    }
}

#[test]
fn pull_policy_follows_the_tag() {
    let digest = format!("sha256:{}", "a".repeat(64));
    let cases = [
        ("nginx", PULL_ALWAYS),
        ("nginx:latest", PULL_ALWAYS),
        ("nginx:1.0", PULL_IF_NOT_PRESENT),
        ("nginx:LATEST", PULL_IF_NOT_PRESENT),
        ("library/nginx", PULL_ALWAYS),
        ("docker.io/nginx:1.0", PULL_IF_NOT_PRESENT),
        ("index.docker.io/nginx", PULL_ALWAYS),
        ("host:5000/img", PULL_ALWAYS),
        ("host:5000/img:1", PULL_IF_NOT_PRESENT),
        ("host:5000/img:latest", PULL_ALWAYS),
        ("localhost/img", PULL_ALWAYS),
        ("[::1]:5000/img:2", PULL_IF_NOT_PRESENT),
        ("registry.example.com/team/app", PULL_ALWAYS),
        ("Registry.Example.com/app:v1", PULL_IF_NOT_PRESENT),
        ("dns:1.0", PULL_IF_NOT_PRESENT),
        ("fluent-bit:2.0", PULL_IF_NOT_PRESENT),
        ("", PULL_IF_NOT_PRESENT),
        ("Nginx", PULL_IF_NOT_PRESENT),
        ("nginx:", PULL_IF_NOT_PRESENT),
        ("nginx@sha256:short", PULL_IF_NOT_PRESENT),
        (
            "nginx@md5:0123456789abcdef0123456789abcdef",
            PULL_IF_NOT_PRESENT,
        ),
    ];
    for (image, expected) in cases {
        assert_eq!(default_pull_policy(image), expected, "image {image:?}");
    }
    assert_eq!(default_pull_policy(&"ab".repeat(32)), PULL_IF_NOT_PRESENT);
    assert_eq!(
        default_pull_policy(&format!("nginx@{digest}")),
        PULL_IF_NOT_PRESENT
    );
    assert_eq!(
        default_pull_policy(&format!("nginx:1@{digest}")),
        PULL_IF_NOT_PRESENT
    );
    assert_eq!(
        default_pull_policy(&format!("nginx:latest@{digest}")),
        PULL_ALWAYS
    );
    let long = format!("registry.example.com/{}", "a".repeat(256));
    assert_eq!(default_pull_policy(&long), PULL_IF_NOT_PRESENT);
}

#[test]
fn explicit_pull_policy_is_kept() {
    let set = defaulted("containers: [{name: a, image: nginx, imagePullPolicy: Never}]");
    assert_eq!(
        only_container(&set).container.image_pull_policy.as_deref(),
        Some("Never")
    );
}

#[test]
fn core_container_defaults() {
    let set = defaulted(
        r#"
containers:
- name: a
  image: a:1
  ports: [{containerPort: 80}, {containerPort: 53, protocol: UDP}]
  env:
  - {name: NODE, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}
  - {name: KEEP, valueFrom: {fieldRef: {apiVersion: v2, fieldPath: x}}}
  - {name: PLAIN, value: x}
  - {name: CM, valueFrom: {configMapKeyRef: {name: c, key: k}}}
  transferEnv:
  - {sourceContainerNameFrom: {fieldRef: {fieldPath: "metadata.labels['app']"}}, envName: X}
  - {sourceContainerNameFrom: {}, envName: Y}
  - {sourceContainerName: app, envName: Z}
"#,
    );
    let c = only_container(&set);
    assert_eq!(
        c.container.termination_message_path.as_deref(),
        Some(DEFAULT_TERMINATION_MESSAGE_PATH)
    );
    assert_eq!(
        c.container.termination_message_policy.as_deref(),
        Some("File")
    );
    assert_eq!(
        c.container.image_pull_policy.as_deref(),
        Some(PULL_IF_NOT_PRESENT)
    );
    let protocols: Vec<_> = c
        .container
        .ports
        .iter()
        .flatten()
        .map(|p| p.protocol.as_deref())
        .collect();
    assert_eq!(protocols, [Some("TCP"), Some("UDP")]);
    let env = c.container.env.as_deref().unwrap();
    let api_version = |i: usize| {
        env[i]
            .value_from
            .as_ref()
            .and_then(|f| f.field_ref.as_ref())
            .and_then(|f| f.api_version.as_deref())
    };
    assert_eq!(api_version(0), Some("v1"));
    assert_eq!(api_version(1), Some("v2"));
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
fn resources_round_up_to_milli_and_keep_garbage() {
    let set = defaulted(
        r#"
containers:
- name: a
  resources:
    limits: {cpu: "1.0001m", memory: "1024Mi", example.com/dev: "1000m"}
    requests: {cpu: "100u", memory: "not-a-quantity"}
"#,
    );
    let resources = only_container(&set).container.resources.as_ref().unwrap();
    let get = |list: &Option<BTreeMap<String, Quantity>>, key: &str| {
        list.as_ref().unwrap()[key].0.clone()
    };
    assert_eq!(get(&resources.limits, "cpu"), "2m");
    assert_eq!(get(&resources.limits, "memory"), "1Gi");
    assert_eq!(get(&resources.limits, "example.com/dev"), "1");
    assert_eq!(get(&resources.requests, "cpu"), "1m");
    assert_eq!(get(&resources.requests, "memory"), "not-a-quantity");
}

#[test]
fn probe_and_lifecycle_defaults() {
    let set = defaulted(
        r#"
containers:
- name: a
  livenessProbe: {httpGet: {port: 80}}
  readinessProbe: {tcpSocket: {port: 80}, periodSeconds: 5, failureThreshold: 0}
  startupProbe: {httpGet: {port: 80}}
  lifecycle:
    postStart: {httpGet: {port: 80, path: /start, scheme: HTTPS}}
    preStop: {httpGet: {port: 80}}
"#,
    );
    let c = &only_container(&set).container;
    let liveness = c.liveness_probe.as_ref().unwrap();
    assert_eq!(
        (
            liveness.timeout_seconds,
            liveness.period_seconds,
            liveness.success_threshold,
            liveness.failure_threshold
        ),
        (Some(1), Some(10), Some(1), Some(3))
    );
    let http = liveness.http_get.as_ref().unwrap();
    assert_eq!(
        (http.path.as_deref(), http.scheme.as_deref()),
        (Some("/"), Some("HTTP"))
    );
    let readiness = c.readiness_probe.as_ref().unwrap();
    assert_eq!(readiness.period_seconds, Some(5));
    assert_eq!(readiness.failure_threshold, Some(3));
    let startup = c.startup_probe.as_ref().unwrap();
    assert_eq!(startup.timeout_seconds, None);
    assert_eq!(startup.http_get.as_ref().unwrap().path, None);
    let lifecycle = c.lifecycle.as_ref().unwrap();
    let post_start = lifecycle
        .post_start
        .as_ref()
        .unwrap()
        .http_get
        .as_ref()
        .unwrap();
    assert_eq!(
        (post_start.path.as_deref(), post_start.scheme.as_deref()),
        (Some("/start"), Some("HTTPS"))
    );
    let pre_stop = lifecycle
        .pre_stop
        .as_ref()
        .unwrap()
        .http_get
        .as_ref()
        .unwrap();
    assert_eq!(
        (pre_stop.path.as_deref(), pre_stop.scheme.as_deref()),
        (Some("/"), Some("HTTP"))
    );
}

#[test]
fn volume_defaults() {
    let set = defaulted(
        r#"
volumes:
- {name: bare}
- {name: host, hostPath: {path: /x}}
- {name: typed-host, hostPath: {path: /x, type: Directory}}
- {name: secret, secret: {secretName: s}}
- {name: cm, configMap: {name: c, defaultMode: 256}}
- name: downward
  downwardAPI: {items: [{path: n, fieldRef: {fieldPath: metadata.name}}]}
- name: projected
  projected:
    sources:
    - serviceAccountToken: {path: token}
    - serviceAccountToken: {path: token2, expirationSeconds: 600}
    - downwardAPI: {items: [{path: n, fieldRef: {fieldPath: metadata.name}}]}
"#,
    );
    let volumes = set.volumes();
    assert!(volumes[0].empty_dir.is_some());
    assert_eq!(
        volumes[1].host_path.as_ref().unwrap().type_.as_deref(),
        Some("")
    );
    assert!(volumes[1].empty_dir.is_none());
    assert_eq!(
        volumes[2].host_path.as_ref().unwrap().type_.as_deref(),
        Some("Directory")
    );
    assert_eq!(volumes[3].secret.as_ref().unwrap().default_mode, Some(420));
    assert_eq!(
        volumes[4].config_map.as_ref().unwrap().default_mode,
        Some(256)
    );
    let downward = volumes[5].downward_api.as_ref().unwrap();
    assert_eq!(downward.default_mode, Some(420));
    let items = downward.items.as_deref().unwrap();
    assert_eq!(
        items[0].field_ref.as_ref().unwrap().api_version.as_deref(),
        Some("v1")
    );
    let projected = volumes[6].projected.as_ref().unwrap();
    assert_eq!(projected.default_mode, Some(420));
    let sources = projected.sources.as_deref().unwrap();
    let expiration = |i: usize| {
        sources[i]
            .service_account_token
            .as_ref()
            .unwrap()
            .expiration_seconds
    };
    assert_eq!(expiration(0), Some(3600));
    assert_eq!(expiration(1), Some(600));
    let items = sources[2]
        .downward_api
        .as_ref()
        .unwrap()
        .items
        .as_deref()
        .unwrap();
    assert_eq!(
        items[0].field_ref.as_ref().unwrap().api_version.as_deref(),
        Some("v1")
    );
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
    fn pull_policy_never_panics(image in "\\PC{0,80}") {
        let policy = default_pull_policy(&image);
        prop_assert!(policy == PULL_ALWAYS || policy == PULL_IF_NOT_PRESENT);
    }

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
