//! The hash of the env values a container reads from its pod's labels and annotations
//! (`extractedEnvFromMetadataHash` in `apps.kruise.io/runtime-containers-meta`), byte-compatible
//! with OpenKruise's `pkg/util/containermeta`.
//!
//! Two sides compute it: the *expected* hash takes each value from the pod's current metadata, the
//! *current* hash from the environment of the running container. They differ exactly when the
//! container was started before the label or annotation it reads last changed.
//!
//! The bytes hashed are not the JSON itself: OpenKruise hashes the JSON through go-spew's `%#v`,
//! which prints a byte slice as `([]uint8)[110 117 108 108]`. A container reading no metadata
//! hashes `null`, so every container has a non-zero hash.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use k8s_openapi::api::core::v1::{Container, Pod};

use super::completion::{ContainerHasher, container_status, runtime_meta, spec_containers};
use crate::api::keys;
use crate::k8s::gojson::write_go_string;

/// One env variable whose value comes from `metadata.labels['k']` or `metadata.annotations['k']`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetadataEnv<'a> {
    pub name: &'a str,
    pub source: MetadataSource,
    pub key: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetadataSource {
    Labels,
    Annotations,
}

impl MetadataSource {
    /// The field path a `fieldRef` subscripts: `metadata.labels` / `metadata.annotations`.
    pub fn path(self) -> &'static str {
        match self {
            MetadataSource::Labels => "metadata.labels",
            MetadataSource::Annotations => "metadata.annotations",
        }
    }
}

/// The env entries that read pod metadata: an empty `value`, a `fieldRef` of the subscripted form,
/// and not one of the SidecarSet version variables (those change on every SidecarSet update and
/// are handled by the SidecarSet path).
pub fn metadata_envs(container: &Container) -> Vec<MetadataEnv<'_>> {
    let mut found = Vec::new();
    for env in container.env.iter().flatten() {
        if !env.value.as_deref().unwrap_or("").is_empty()
            || env.name == keys::ENV_SIDECARSET_VERSION
            || env.name == keys::ENV_SIDECARSET_VERSION_ALT
        {
            continue;
        }
        let Some(field_ref) = env.value_from.as_ref().and_then(|f| f.field_ref.as_ref()) else {
            continue;
        };
        if let Some((source, key)) = split_subscripted_path(&field_ref.field_path) {
            found.push(MetadataEnv {
                name: &env.name,
                source,
                key,
            });
        }
    }
    found
}

/// `metadata.labels['k']` → (Labels, "k"), as Kubernetes' `fieldpath.SplitMaybeSubscriptedPath`.
fn split_subscripted_path(path: &str) -> Option<(MetadataSource, String)> {
    let (field, rest) = path.split_once("['")?;
    let key = rest.strip_suffix("']")?;
    let source = [MetadataSource::Labels, MetadataSource::Annotations]
        .into_iter()
        .find(|s| s.path() == field)?;
    Some((source, key.to_string()))
}

/// The hash the container would have if it were started now, with the pod's current metadata.
pub fn expected_hash(pod: &Pod, container: &Container) -> u64 {
    let metadata = &pod.metadata;
    let values = metadata_envs(container).into_iter().map(|env| {
        let map = match env.source {
            MetadataSource::Labels => metadata.labels.as_ref(),
            MetadataSource::Annotations => metadata.annotations.as_ref(),
        };
        let value = map.and_then(|m| m.get(&env.key)).map_or("", String::as_str);
        (env.name, value)
    });
    hash_envs(values.collect())
}

/// The hash of the running container, from the output of `env` run inside it (one `NAME=value`
/// per line, split at the first `=`; a variable it does not print counts as empty).
pub fn current_hash(container: &Container, env_output: &str) -> u64 {
    let running: BTreeMap<&str, &str> = env_output
        .lines()
        .filter_map(|line| line.split_once('='))
        .collect();
    let values = metadata_envs(container)
        .into_iter()
        .map(|env| (env.name, running.get(env.name).copied().unwrap_or("")))
        .collect();
    hash_envs(values)
}

/// FNV-32a over go-spew's rendering of the JSON of `[]EnvVar{name, value}`, sorted by name.
pub fn hash_envs(mut envs: Vec<(&str, &str)>) -> u64 {
    // Go's sort.SliceStable by name.
    envs.sort_by(|a, b| a.0.cmp(b.0));
    let json = env_json(&envs);
    let mut spew = String::with_capacity(json.len() * 4 + 12);
    spew.push_str("([]uint8)[");
    for (i, byte) in json.bytes().enumerate() {
        if i > 0 {
            spew.push(' ');
        }
        let _ = write!(spew, "{byte}");
    }
    spew.push(']');
    u64::from(fnv32a(spew.as_bytes()))
}

/// `json.Marshal([]v1.EnvVar)`: a nil slice is `null`, `value` is omitted when empty.
fn env_json(envs: &[(&str, &str)]) -> String {
    if envs.is_empty() {
        return "null".to_string();
    }
    let mut out = String::from("[");
    for (i, (name, value)) in envs.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str("{\"name\":");
        write_go_string(&mut out, name);
        if !value.is_empty() {
            out.push_str(",\"value\":");
            write_go_string(&mut out, value);
        }
        out.push('}');
    }
    out.push(']');
    out
}

/// FNV-32a (xor, then multiply), Go's `hash/fnv.New32a`.
fn fnv32a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5_u32, |hash, &byte| {
        (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
    })
}

/// Whether a node agent looks after the pod: its runtime record covers every container as it runs
/// now (same container IDs as the pod's status) with an env hash read from the container. A record
/// left behind by an agent that stopped running goes stale at the next container restart.
pub fn node_agent_reports(pod: &Pod) -> bool {
    let Some(meta) = runtime_meta(pod) else {
        return false;
    };
    let containers = spec_containers(pod);
    !containers.is_empty()
        && containers.iter().all(|container| {
            let Some(status) = container_status(pod, &container.name) else {
                return false;
            };
            meta.containers.iter().any(|entry| {
                entry.name == container.name
                    && Some(entry.container_id.as_str()) == status.container_id.as_deref()
                    && entry.hashes.extracted_env_from_metadata_hash != 0
            })
        })
}

/// The controller's side of a node that runs the agent: env hashes are computed from the pod's
/// metadata; kubelet's plain container hash is not reproduced, so image changes are confirmed by
/// imageID as without an agent.
#[derive(Debug, Clone, Copy, Default)]
pub struct MetadataEnvHasher;

impl ContainerHasher for MetadataEnvHasher {
    fn plain_hash(&self, _: &Container) -> Option<u64> {
        None
    }
    fn env_from_metadata_hash(&self, pod: &Pod, container: &Container) -> Option<u64> {
        Some(expected_hash(pod, container))
    }
}

#[cfg(test)]
mod tests;
