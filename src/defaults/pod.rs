//! Kubernetes' own defaults of containers, probes and volumes (`SetDefaults_Container`,
//! `_Probe`, `_Volume`, …), as far as OpenKruise applies them. SidecarSet defaulting applies them
//! to sidecars and their volumes, workload defaulting to pod templates.
//!
//! Nothing here panics, whatever the input: a value Kubernetes would reject (an unparseable
//! quantity, an odd image reference) is left alone or gets the conservative default.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use k8s_openapi::api::core::v1::{
    Container, DownwardAPIVolumeFile, HTTPGetAction, ObjectFieldSelector, Probe, Volume,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use regex::Regex;
use serde_json::Value;

use crate::k8s::quantity;

/// 0644, the mode Kubernetes gives secret, configMap, downwardAPI and projected files.
const DEFAULT_VOLUME_MODE: i32 = 0o644;
/// One hour, Kubernetes' default lifetime of a projected service account token.
const DEFAULT_TOKEN_EXPIRATION_SECONDS: i64 = 3600;
const DEFAULT_TERMINATION_MESSAGE_PATH: &str = "/dev/termination-log";
const DEFAULT_TERMINATION_MESSAGE_POLICY: &str = "File";
const PULL_ALWAYS: &str = "Always";
const PULL_IF_NOT_PRESENT: &str = "IfNotPresent";

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
/// probes excepted; pod templates default them too).
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

pub(super) fn default_field_ref(field_ref: &mut ObjectFieldSelector) {
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

/// Kubernetes' volume defaults: `emptyDir` for a volume with no source, file modes, token
/// lifetimes, `fieldRef` API versions.
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
pub(super) fn set_if_empty(field: &mut Option<String>, default: &str) {
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
mod tests;
