use super::*;
use proptest::prelude::*;

/// A container from YAML, after [`default_container`].
fn defaulted_container(yaml: &str) -> Container {
    let mut container: Container = crate::yaml::from_str(yaml).unwrap();
    default_container(&mut container);
    container
}

/// Volumes from a YAML list, after [`default_volume`].
fn defaulted_volumes(yaml: &str) -> Vec<Volume> {
    let mut volumes: Vec<Volume> = crate::yaml::from_str(yaml).unwrap();
    volumes.iter_mut().for_each(default_volume);
    volumes
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
    let container = defaulted_container("{name: a, image: nginx, imagePullPolicy: Never}");
    assert_eq!(container.image_pull_policy.as_deref(), Some("Never"));
}

#[test]
fn core_container_defaults() {
    let container = defaulted_container(
        r#"
name: a
image: a:1
ports: [{containerPort: 80}, {containerPort: 53, protocol: UDP}]
env:
- {name: NODE, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}
- {name: KEEP, valueFrom: {fieldRef: {apiVersion: v2, fieldPath: x}}}
- {name: PLAIN, value: x}
- {name: CM, valueFrom: {configMapKeyRef: {name: c, key: k}}}
"#,
    );
    assert_eq!(
        container.termination_message_path.as_deref(),
        Some(DEFAULT_TERMINATION_MESSAGE_PATH)
    );
    assert_eq!(
        container.termination_message_policy.as_deref(),
        Some("File")
    );
    assert_eq!(
        container.image_pull_policy.as_deref(),
        Some(PULL_IF_NOT_PRESENT)
    );
    let protocols: Vec<_> = container
        .ports
        .iter()
        .flatten()
        .map(|p| p.protocol.as_deref())
        .collect();
    assert_eq!(protocols, [Some("TCP"), Some("UDP")]);
    let env = container.env.as_deref().unwrap();
    let api_version = |i: usize| {
        env[i]
            .value_from
            .as_ref()
            .and_then(|f| f.field_ref.as_ref())
            .and_then(|f| f.api_version.as_deref())
    };
    assert_eq!(api_version(0), Some("v1"));
    assert_eq!(api_version(1), Some("v2"));
}

#[test]
fn resources_round_up_to_milli_and_keep_garbage() {
    let container = defaulted_container(
        r#"
name: a
resources:
  limits: {cpu: "1.0001m", memory: "1024Mi", example.com/dev: "1000m"}
  requests: {cpu: "100u", memory: "not-a-quantity"}
"#,
    );
    let resources = container.resources.as_ref().unwrap();
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
    let c = defaulted_container(
        r#"
name: a
livenessProbe: {httpGet: {port: 80}}
readinessProbe: {tcpSocket: {port: 80}, periodSeconds: 5, failureThreshold: 0}
startupProbe: {httpGet: {port: 80}}
lifecycle:
  postStart: {httpGet: {port: 80, path: /start, scheme: HTTPS}}
  preStop: {httpGet: {port: 80}}
"#,
    );
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
    let volumes = defaulted_volumes(
        r#"
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

proptest! {
    #[test]
    fn pull_policy_never_panics(image in "\\PC{0,80}") {
        let policy = default_pull_policy(&image);
        prop_assert!(policy == PULL_ALWAYS || policy == PULL_IF_NOT_PRESENT);
    }
}
