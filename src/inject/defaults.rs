//! SidecarSet defaulting, as OpenKruise's SidecarSet mutating webhook does it, then hashing.
//!
//! The defaults matter twice: users see them in the stored object, and the hashes (computed on
//! the defaulted containers) must match OpenKruise's, so every default below is one OpenKruise
//! applies, no more: for instance startup probes and `shareVolumeDevicePolicy` stay untouched.
//!
//! Nothing here panics, whatever the input: a value Kubernetes would reject (an unparseable
//! quantity, an odd image reference) is left alone or gets the conservative default.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use k8s_openapi::api::core::v1::{
    Container, DownwardAPIVolumeFile, HTTPGetAction, ObjectFieldSelector, Probe, Volume,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use regex::Regex;
use serde_json::Value;

use crate::api::keys;
use crate::api::{SidecarContainer, SidecarSet, SidecarSetUpdateStrategy};

use super::hash::{sidecarset_hash, sidecarset_hash_without_image};
use super::quantity;

/// `injectionStrategy.revision.policy` default.
const INJECT_REVISION_POLICY_ALWAYS: &str = "Always";
/// `resourcesPolicy.targetContainersNameRegex` default (from the CRD schema).
const TARGET_CONTAINERS_NAME_REGEX_ALL: &str = ".*";
const DEFAULT_REVISION_HISTORY_LIMIT: i32 = 10;
/// 0644, the mode Kubernetes gives secret, configMap, downwardAPI and projected files.
const DEFAULT_VOLUME_MODE: i32 = 0o644;
/// One hour, Kubernetes' default lifetime of a projected service account token.
const DEFAULT_TOKEN_EXPIRATION_SECONDS: i64 = 3600;
const DEFAULT_TERMINATION_MESSAGE_PATH: &str = "/dev/termination-log";
const DEFAULT_TERMINATION_MESSAGE_POLICY: &str = "File";
const PULL_ALWAYS: &str = "Always";
const PULL_IF_NOT_PRESENT: &str = "IfNotPresent";

/// Applies every default OpenKruise's SidecarSet webhook applies (identical for v1alpha1 and
/// v1beta1), in place.
pub fn apply_defaults(set: &mut SidecarSet) {
    let spec = &mut set.spec;
    default_update_strategy(spec.update_strategy.get_or_insert_default());
    for container in spec.init_containers.iter_mut().flatten() {
        default_sidecar_container(container, keys::AFTER_APP_CONTAINER);
    }
    for container in spec.containers.iter_mut().flatten() {
        default_sidecar_container(container, keys::BEFORE_APP_CONTAINER);
    }
    for volume in spec.volumes.iter_mut().flatten() {
        default_volume(volume);
    }
    spec.revision_history_limit
        .get_or_insert(DEFAULT_REVISION_HISTORY_LIMIT);
    for patch in spec.patch_pod_metadata.iter_mut().flatten() {
        set_if_empty(&mut patch.patch_policy, keys::PATCH_POLICY_RETAIN);
    }
    let revision = spec
        .injection_strategy
        .as_mut()
        .and_then(|strategy| strategy.revision.as_mut());
    if let Some(revision) = revision {
        set_if_empty(&mut revision.policy, INJECT_REVISION_POLICY_ALWAYS);
    }
}

/// [`apply_defaults`], then (re)writes both hash annotations, replacing any value the user gave.
pub fn default_and_hash(set: &mut SidecarSet) {
    apply_defaults(set);
    let hash = sidecarset_hash(&set.spec);
    let hash_without_image = sidecarset_hash_without_image(&set.spec);
    let annotations = set.metadata.annotations.get_or_insert_with(BTreeMap::new);
    annotations.insert(keys::SIDECARSET_HASH.to_string(), hash);
    annotations.insert(
        keys::SIDECARSET_HASH_WITHOUT_IMAGE.to_string(),
        hash_without_image,
    );
}

/// Kubernetes' image pull policy default: `Always` when the image names tag `latest`, or no tag
/// and no digest; `IfNotPresent` otherwise, including when the reference does not parse (Kubernetes
/// ignores that error here and leaves it to validation).
pub fn default_pull_policy(image: &str) -> &'static str {
    match parse_image_reference(image) {
        Some(reference) if reference.pulls_latest() => PULL_ALWAYS,
        _ => PULL_IF_NOT_PRESENT,
    }
}

/// The part of Kubernetes' own container defaulting OpenKruise applies to sidecars (startup
/// probes excepted).
pub fn default_container(container: &mut Container) {
    if is_empty(&container.image_pull_policy) {
        let image = container.image.as_deref().unwrap_or_default();
        container.image_pull_policy = Some(default_pull_policy(image).to_string());
    }
    set_if_empty(
        &mut container.termination_message_path,
        DEFAULT_TERMINATION_MESSAGE_PATH,
    );
    set_if_empty(
        &mut container.termination_message_policy,
        DEFAULT_TERMINATION_MESSAGE_POLICY,
    );
    for port in container.ports.iter_mut().flatten() {
        set_if_empty(&mut port.protocol, "TCP");
    }
    for env in container.env.iter_mut().flatten() {
        let field_ref = env
            .value_from
            .as_mut()
            .and_then(|from| from.field_ref.as_mut());
        if let Some(field_ref) = field_ref {
            default_field_ref(field_ref);
        }
    }
    if let Some(resources) = container.resources.as_mut() {
        round_up_to_milli(&mut resources.limits);
        round_up_to_milli(&mut resources.requests);
    }
    let probes = [
        container.liveness_probe.as_mut(),
        container.readiness_probe.as_mut(),
    ];
    for probe in probes.into_iter().flatten() {
        default_probe(probe);
    }
    if let Some(lifecycle) = container.lifecycle.as_mut() {
        let handlers = [lifecycle.post_start.as_mut(), lifecycle.pre_stop.as_mut()];
        for handler in handlers.into_iter().flatten() {
            if let Some(http_get) = handler.http_get.as_mut() {
                default_http_get(http_get);
            }
        }
    }
}

fn default_update_strategy(strategy: &mut SidecarSetUpdateStrategy) {
    set_if_empty(&mut strategy.type_, keys::ROLLING_UPDATE);
    strategy.max_unavailable.get_or_insert(IntOrString::Int(1));
    strategy.partition.get_or_insert(IntOrString::Int(0));
}

fn default_sidecar_container(sidecar: &mut SidecarContainer, inject_policy: &str) {
    set_if_empty(&mut sidecar.pod_inject_policy, inject_policy);
    set_if_empty(
        &mut sidecar
            .upgrade_strategy
            .get_or_insert_default()
            .upgrade_type,
        keys::COLD_UPGRADE,
    );
    set_if_empty(
        &mut sidecar.share_volume_policy.get_or_insert_default().type_,
        keys::SHARE_VOLUME_DISABLED,
    );
    default_container(&mut sidecar.container);
    for transfer in sidecar.transfer_env.iter_mut().flatten() {
        // OpenKruise dereferences fieldRef without a nil check here; we skip a missing one.
        let field_ref = transfer
            .source_container_name_from
            .as_mut()
            .and_then(|from| from.field_ref.as_mut());
        if let Some(field_ref) = field_ref {
            default_field_ref(field_ref);
        }
    }
    if let Some(policy) = sidecar.resources_policy.as_mut() {
        // A CRD schema default: applies when the field is absent, not when it is "".
        policy
            .target_containers_name_regex
            .get_or_insert_with(|| TARGET_CONTAINERS_NAME_REGEX_ALL.to_string());
    }
}

fn default_field_ref(field_ref: &mut ObjectFieldSelector) {
    set_if_empty(&mut field_ref.api_version, "v1");
}

/// Kubernetes rounds resource quantities up to milli precision; Go then writes them canonically.
/// A value that does not parse is kept: validation is where it gets refused.
fn round_up_to_milli(list: &mut Option<BTreeMap<String, Quantity>>) {
    for value in list.iter_mut().flat_map(|list| list.values_mut()) {
        if let Ok(rounded) = quantity::round_up_milli_canonical(&value.0) {
            value.0 = rounded;
        }
    }
}

/// Kubernetes' probe defaults (timeouts, periods, thresholds, HTTP path and scheme).
pub fn default_probe(probe: &mut Probe) {
    set_if_zero(&mut probe.timeout_seconds, 1);
    set_if_zero(&mut probe.period_seconds, 10);
    set_if_zero(&mut probe.success_threshold, 1);
    set_if_zero(&mut probe.failure_threshold, 3);
    if let Some(http_get) = probe.http_get.as_mut() {
        default_http_get(http_get);
    }
}

fn default_http_get(action: &mut HTTPGetAction) {
    set_if_empty(&mut action.path, "/");
    set_if_empty(&mut action.scheme, "HTTP");
}

pub fn default_volume(volume: &mut Volume) {
    if has_no_source(volume) {
        volume.empty_dir = Some(Default::default());
    }
    if let Some(host_path) = volume.host_path.as_mut() {
        host_path.type_.get_or_insert_with(String::new);
    }
    if let Some(secret) = volume.secret.as_mut() {
        secret.default_mode.get_or_insert(DEFAULT_VOLUME_MODE);
    }
    if let Some(config_map) = volume.config_map.as_mut() {
        config_map.default_mode.get_or_insert(DEFAULT_VOLUME_MODE);
    }
    if let Some(downward_api) = volume.downward_api.as_mut() {
        downward_api.default_mode.get_or_insert(DEFAULT_VOLUME_MODE);
        default_downward_api_items(&mut downward_api.items);
    }
    if let Some(projected) = volume.projected.as_mut() {
        projected.default_mode.get_or_insert(DEFAULT_VOLUME_MODE);
        for source in projected.sources.iter_mut().flatten() {
            if let Some(downward_api) = source.downward_api.as_mut() {
                default_downward_api_items(&mut downward_api.items);
            }
            if let Some(token) = source.service_account_token.as_mut() {
                token
                    .expiration_seconds
                    .get_or_insert(DEFAULT_TOKEN_EXPIRATION_SECONDS);
            }
        }
    }
}

fn default_downward_api_items(items: &mut Option<Vec<DownwardAPIVolumeFile>>) {
    for item in items.iter_mut().flatten() {
        if let Some(field_ref) = item.field_ref.as_mut() {
            default_field_ref(field_ref);
        }
    }
}

/// Kubernetes checks that every volume-source pointer is nil. Asking serde which keys besides
/// `name` are present avoids listing the ~30 source kinds (and missing a future one).
fn has_no_source(volume: &Volume) -> bool {
    match serde_json::to_value(volume) {
        Ok(Value::Object(fields)) => fields.keys().all(|key| key == "name"),
        _ => false,
    }
}

fn is_empty(field: &Option<String>) -> bool {
    field.as_deref().is_none_or(str::is_empty)
}

/// Go defaults a string field when it is `""`; for us that is absent or empty.
fn set_if_empty(field: &mut Option<String>, default: &str) {
    if is_empty(field) {
        *field = Some(default.to_string());
    }
}

/// Go defaults an int32 field when it is `0`; for us that is absent or zero.
fn set_if_zero(field: &mut Option<i32>, default: i32) {
    if field.unwrap_or(0) == 0 {
        *field = Some(default);
    }
}

/// What the pull-policy default needs from an image reference.
struct ImageReference {
    tag: Option<String>,
    has_digest: bool,
}

impl ImageReference {
    fn pulls_latest(&self) -> bool {
        match &self.tag {
            Some(tag) => tag == "latest",
            None => !self.has_digest,
        }
    }
}

/// The Docker reference grammar (github.com/distribution/reference), anchored, applied to the
/// normalised `domain/path[:tag][@digest]`.
static REFERENCE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    let domain_component = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])";
    let domain =
        format!(r"(?:{domain_component}(?:\.{domain_component})*|\[[a-fA-F0-9:]+\])(?::[0-9]+)?");
    let path_component = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*";
    let tag = r"[0-9A-Za-z_][0-9A-Za-z_.-]{0,127}";
    let digest = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}";
    Regex::new(&format!(
        r"^(?P<name>(?:{domain}/)?{path_component}(?:/{path_component})*)(?::(?P<tag>{tag}))?(?:@(?P<digest>{digest}))?$"
    ))
    .ok()
});

/// Docker Hub's domain and the prefix of its official images.
const DEFAULT_DOMAIN: &str = "docker.io";
const LEGACY_DEFAULT_DOMAIN: &str = "index.docker.io";
const OFFICIAL_REPO_PREFIX: &str = "library/";
/// Longest repository name (domain and path) a reference may have.
const NAME_TOTAL_LENGTH_MAX: usize = 255;

/// `ParseNormalizedNamed` as Kubernetes uses it; `None` wherever it returns an error.
fn parse_image_reference(image: &str) -> Option<ImageReference> {
    let is_image_id = image.len() == 64
        && image
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    if is_image_id {
        return None;
    }
    let (domain, remainder) = split_docker_domain(image);
    let repository = remainder.split(':').next().unwrap_or_default();
    if repository.to_lowercase() != repository {
        return None;
    }
    let normalized = format!("{domain}/{remainder}");
    let captures = REFERENCE.as_ref()?.captures(&normalized)?;
    if captures.name("name")?.as_str().len() > NAME_TOTAL_LENGTH_MAX {
        return None;
    }
    let digest = captures.name("digest").map(|d| d.as_str());
    if digest.is_some_and(|d| !is_supported_digest(d)) {
        return None;
    }
    Some(ImageReference {
        tag: captures.name("tag").map(|t| t.as_str().to_string()),
        has_digest: digest.is_some(),
    })
}

/// Splits off the registry: the first path element is one when it looks like a host
/// (`.` or `:`, `localhost`, or upper case); otherwise Docker Hub is implied.
fn split_docker_domain(name: &str) -> (String, String) {
    let Some((first, rest)) = name.split_once('/') else {
        return (
            DEFAULT_DOMAIN.to_string(),
            format!("{OFFICIAL_REPO_PREFIX}{name}"),
        );
    };
    let (domain, remainder) = if first == LEGACY_DEFAULT_DOMAIN {
        (DEFAULT_DOMAIN, rest)
    } else if first == "localhost" || first.contains(['.', ':']) || first.to_lowercase() != first {
        (first, rest)
    } else {
        (DEFAULT_DOMAIN, name)
    };
    let remainder = if domain == DEFAULT_DOMAIN && !remainder.contains('/') {
        format!("{OFFICIAL_REPO_PREFIX}{remainder}")
    } else {
        remainder.to_string()
    };
    (domain.to_string(), remainder)
}

/// go-digest accepts only the algorithms it has registered, with their exact hex length.
fn is_supported_digest(digest: &str) -> bool {
    let Some((algorithm, hex)) = digest.split_once(':') else {
        return false;
    };
    let expected_len = match algorithm {
        "sha256" => 64,
        "sha384" => 96,
        "sha512" => 128,
        _ => return false,
    };
    hex.len() == expected_len
        && hex
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::SidecarSetSpec;
    use crate::inject::hash::{hash_input, hash_input_without_image};
    use proptest::prelude::*;

    fn set_from_yaml(yaml: &str) -> SidecarSet {
        let spec: SidecarSetSpec = serde_yaml::from_str(yaml).unwrap();
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

        let set =
            defaulted("updateStrategy: {type: NotUpdate, partition: '10%', maxUnavailable: 3}");
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
        let expected: SidecarSetSpec = serde_yaml::from_str(
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
}
