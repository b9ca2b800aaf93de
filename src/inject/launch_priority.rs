//! Container launch priority: containers start in priority order, gated by a per-pod barrier
//! ConfigMap that a controller fills in as higher-priority containers become ready.
//!
//! The webhook's part is to give every container a `KRUISE_CONTAINER_BARRIER` env var that reads
//! key `p_<priority>` of ConfigMap `<pod>-barrier`; kubelet holds a container until its key exists.

use k8s_openapi::api::core::v1::{ConfigMapKeySelector, Container, EnvVar, EnvVarSource, Pod};

use crate::api::keys;

/// Characters Kubernetes uses for `generateName` suffixes.
pub const NAME_SUFFIX_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
/// Length of a generated name suffix.
pub const NAME_SUFFIX_LEN: usize = 5;
/// `generateName` is cut to this length before the suffix, as the apiserver does.
const MAX_GENERATE_NAME_PREFIX: usize = 58;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "spec.containers[{index}].env[{env}]: Invalid value: {value:?}: container {container:?}: launch priority must be a base-10 integer ({reason})",
    env = keys::ENV_CONTAINER_PRIORITY
)]
pub struct PriorityError {
    pub index: usize,
    pub container: String,
    pub value: String,
    /// Go's `strconv.Atoi` wording, which OpenKruise users see in the same situation.
    pub reason: String,
}

/// Applies launch priority to a pod being created. `name_suffix` (5 characters from
/// [`NAME_SUFFIX_ALPHABET`]) completes `metadata.generateName` when the pod has no name yet, since
/// the barrier ConfigMap is named after the pod. Returns whether the pod changed.
pub fn apply_launch_priority(pod: &mut Pod, name_suffix: &str) -> Result<bool, PriorityError> {
    let Some(spec) = pod.spec.as_ref() else {
        return Ok(false);
    };
    if spec.containers.len() <= 1 {
        return Ok(false);
    }
    let priorities = container_priorities(pod)?;
    let first = priorities[0];
    if priorities.iter().all(|p| *p == first) {
        // Nothing to order: all zero (no priority given) or all equal.
        return Ok(false);
    }

    let mut changed = false;
    if pod.metadata.name.as_deref().unwrap_or("").is_empty()
        && let Some(prefix) = pod
            .metadata
            .generate_name
            .as_deref()
            .filter(|g| !g.is_empty())
    {
        let cut: String = prefix.chars().take(MAX_GENERATE_NAME_PREFIX).collect();
        pod.metadata.name = Some(format!("{cut}{name_suffix}"));
        changed = true;
    }
    let barrier = format!(
        "{}{}",
        pod.metadata.name.as_deref().unwrap_or(""),
        keys::BARRIER_CONFIGMAP_SUFFIX
    );
    let Some(spec) = pod.spec.as_mut() else {
        return Ok(changed);
    };
    for (container, priority) in spec.containers.iter_mut().zip(priorities) {
        let env = barrier_env(&barrier, priority);
        let envs = container.env.get_or_insert_with(Vec::new);
        // Reinvocation must be a no-op: an identical barrier env already present is not repeated.
        if envs.last() != Some(&env) {
            envs.push(env);
            changed = true;
        }
    }
    Ok(changed)
}

/// Whether the pod asks for its containers to start in the order they are listed
/// (`apps.kruise.io/container-launch-priority: Ordered`).
pub fn is_ordered(pod: &Pod) -> bool {
    pod.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(keys::CONTAINER_LAUNCH_PRIORITY))
        .is_some_and(|v| v == keys::CONTAINER_LAUNCH_PRIORITY_ORDERED)
}

/// Priority of each container: `-index` under the `Ordered` annotation, otherwise the last
/// `KRUISE_CONTAINER_PRIORITY` env value (0 when absent).
pub fn container_priorities(pod: &Pod) -> Result<Vec<i64>, PriorityError> {
    let containers = pod
        .spec
        .as_ref()
        .map(|s| s.containers.as_slice())
        .unwrap_or(&[]);
    if is_ordered(pod) {
        return Ok((0..containers.len()).map(|i| -(i as i64)).collect());
    }
    containers
        .iter()
        .enumerate()
        .map(|(index, container)| env_priority(index, container))
        .collect()
}

fn env_priority(index: usize, container: &Container) -> Result<i64, PriorityError> {
    let Some(var) = container
        .env
        .iter()
        .flatten()
        .rev()
        .find(|e| e.name == keys::ENV_CONTAINER_PRIORITY)
    else {
        return Ok(0);
    };
    let value = var.value.as_deref().unwrap_or("");
    parse_go_int(value).map_err(|reason| PriorityError {
        index,
        container: container.name.clone(),
        value: value.to_string(),
        reason,
    })
}

/// Go's `strconv.Atoi` on a 64-bit platform: optional sign, ASCII digits, no spaces.
fn parse_go_int(value: &str) -> Result<i64, String> {
    let digits = value.strip_prefix(['+', '-']).unwrap_or(value);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("strconv.Atoi: parsing {value:?}: invalid syntax"));
    }
    value
        .parse::<i64>()
        .map_err(|_| format!("strconv.Atoi: parsing {value:?}: value out of range"))
}

/// `KRUISE_CONTAINER_BARRIER` reading key `p_<priority>` of the ConfigMap `configmap`.
pub fn barrier_env(configmap: &str, priority: i64) -> EnvVar {
    EnvVar {
        name: keys::ENV_CONTAINER_BARRIER.to_string(),
        value: None,
        value_from: Some(EnvVarSource {
            config_map_key_ref: Some(ConfigMapKeySelector {
                name: configmap.to_string(),
                key: format!("{}{priority}", keys::BARRIER_KEY_PREFIX),
                optional: None,
            }),
            ..Default::default()
        }),
    }
}

/// The priority a container was given at creation, read back from its first
/// `KRUISE_CONTAINER_BARRIER` env (`p_<n>`); `None` when it has no barrier env.
///
/// Batching of in-place updates uses this, not `KRUISE_CONTAINER_PRIORITY`: only the barrier
/// says the webhook actually ordered the containers. An unreadable key counts as 0, as
/// OpenKruise's `strconv.Atoi` fallback does.
pub fn barrier_priority(container: &Container) -> Option<i64> {
    let var = container
        .env
        .iter()
        .flatten()
        .find(|e| e.name == keys::ENV_CONTAINER_BARRIER)?;
    let key = var
        .value_from
        .as_ref()
        .and_then(|from| from.config_map_key_ref.as_ref())
        .map(|r| r.key.as_str())
        .unwrap_or("");
    let number = key.get(keys::BARRIER_KEY_PREFIX.len()..).unwrap_or("");
    Some(parse_go_int(number).unwrap_or(0))
}

/// A random `generateName` suffix, as the apiserver would make one.
pub fn random_name_suffix() -> String {
    (0..NAME_SUFFIX_LEN)
        .map(|_| NAME_SUFFIX_ALPHABET[fastrand::usize(..NAME_SUFFIX_ALPHABET.len())] as char)
        .collect()
}

#[cfg(test)]
mod tests;
