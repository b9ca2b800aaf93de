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

/// Priority of each container: `-index` under the `Ordered` annotation, otherwise the last
/// `KRUISE_CONTAINER_PRIORITY` env value (0 when absent).
pub fn container_priorities(pod: &Pod) -> Result<Vec<i64>, PriorityError> {
    let containers = pod
        .spec
        .as_ref()
        .map(|s| s.containers.as_slice())
        .unwrap_or(&[]);
    let ordered = pod
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(keys::CONTAINER_LAUNCH_PRIORITY))
        .is_some_and(|v| v == keys::CONTAINER_LAUNCH_PRIORITY_ORDERED);
    if ordered {
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
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::PodSpec;
    use std::collections::BTreeMap;

    fn container(name: &str, priority: Option<&str>) -> Container {
        Container {
            name: name.into(),
            image: Some("img".into()),
            env: priority.map(|p| {
                vec![EnvVar {
                    name: keys::ENV_CONTAINER_PRIORITY.into(),
                    value: Some(p.into()),
                    value_from: None,
                }]
            }),
            ..Default::default()
        }
    }

    fn pod(containers: Vec<Container>) -> Pod {
        Pod {
            metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                name: Some("web-0".into()),
                ..Default::default()
            },
            spec: Some(PodSpec {
                containers,
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn barrier_key(container: &Container) -> Option<(String, String)> {
        container.env.iter().flatten().rev().find_map(|e| {
            let r = e.value_from.as_ref()?.config_map_key_ref.as_ref()?;
            (e.name == keys::ENV_CONTAINER_BARRIER).then(|| (r.name.clone(), r.key.clone()))
        })
    }

    #[test]
    fn env_priorities_get_barriers() {
        let mut p = pod(vec![
            container("a", Some("10")),
            container("b", Some("-2")),
            container("c", None),
        ]);
        assert_eq!(apply_launch_priority(&mut p, "xxxxx"), Ok(true));
        let keys: Vec<_> = p
            .spec
            .as_ref()
            .unwrap()
            .containers
            .iter()
            .map(barrier_key)
            .collect();
        assert_eq!(
            keys,
            vec![
                Some(("web-0-barrier".into(), "p_10".into())),
                Some(("web-0-barrier".into(), "p_-2".into())),
                Some(("web-0-barrier".into(), "p_0".into())),
            ]
        );
        // Reinvocation adds nothing.
        let again = p.clone();
        assert_eq!(apply_launch_priority(&mut p, "xxxxx"), Ok(false));
        assert_eq!(p, again);
    }

    #[test]
    fn ordered_annotation_overrides_env() {
        let mut p = pod(vec![
            container("a", Some("-5")),
            container("b", Some("100")),
            container("c", None),
        ]);
        p.metadata.annotations = Some(BTreeMap::from([(
            keys::CONTAINER_LAUNCH_PRIORITY.to_string(),
            "Ordered".to_string(),
        )]));
        assert_eq!(container_priorities(&p), Ok(vec![0, -1, -2]));
        // Case matters.
        p.metadata
            .annotations
            .as_mut()
            .unwrap()
            .insert(keys::CONTAINER_LAUNCH_PRIORITY.into(), "ordered".into());
        assert_eq!(container_priorities(&p), Ok(vec![-5, 100, 0]));
    }

    #[test]
    fn skips_single_container_and_equal_priorities() {
        let mut single = pod(vec![container("a", Some("5"))]);
        assert_eq!(apply_launch_priority(&mut single, "xxxxx"), Ok(false));
        let mut equal = pod(vec![container("a", Some("3")), container("b", Some("3"))]);
        assert_eq!(apply_launch_priority(&mut equal, "xxxxx"), Ok(false));
        let mut none = pod(vec![container("a", None), container("b", None)]);
        assert_eq!(apply_launch_priority(&mut none, "xxxxx"), Ok(false));
    }

    #[test]
    fn generate_name_gets_a_name() {
        let mut p = pod(vec![container("a", Some("1")), container("b", None)]);
        p.metadata.name = None;
        p.metadata.generate_name = Some(format!("{}-", "x".repeat(70)));
        assert_eq!(apply_launch_priority(&mut p, "bcd42"), Ok(true));
        let name = p.metadata.name.clone().unwrap();
        assert_eq!(name, format!("{}bcd42", "x".repeat(58)));
        assert_eq!(
            barrier_key(&p.spec.as_ref().unwrap().containers[1])
                .unwrap()
                .0,
            format!("{name}-barrier")
        );
    }

    #[test]
    fn bad_priority_names_the_container() {
        for (value, reason) in [
            ("abc", "invalid syntax"),
            ("", "invalid syntax"),
            (" 1", "invalid syntax"),
            ("1.5", "invalid syntax"),
            ("99999999999999999999", "value out of range"),
        ] {
            let mut p = pod(vec![
                container("app", None),
                container("sidecar", Some(value)),
            ]);
            let err = apply_launch_priority(&mut p, "xxxxx").unwrap_err();
            assert_eq!(err.container, "sidecar");
            assert_eq!(err.index, 1);
            let message = err.to_string();
            assert!(message.contains("\"sidecar\""), "{message}");
            assert!(message.contains(reason), "{message}");
            assert!(
                message.starts_with("spec.containers[1].env[KRUISE_CONTAINER_PRIORITY]"),
                "{message}"
            );
        }
    }

    #[test]
    fn barrier_priority_reads_the_barrier_key_only() {
        let mut p = pod(vec![
            container("a", Some("10")),
            container("b", Some("-2")),
            container("c", None),
        ]);
        let before: Vec<_> = p
            .spec
            .as_ref()
            .unwrap()
            .containers
            .iter()
            .map(barrier_priority)
            .collect();
        assert_eq!(before, vec![None, None, None]);
        apply_launch_priority(&mut p, "xxxxx").unwrap();
        let after: Vec<_> = p
            .spec
            .as_ref()
            .unwrap()
            .containers
            .iter()
            .map(barrier_priority)
            .collect();
        assert_eq!(after, vec![Some(10), Some(-2), Some(0)]);
    }

    #[test]
    fn sign_and_range() {
        assert_eq!(parse_go_int("+7"), Ok(7));
        assert_eq!(parse_go_int("-9223372036854775808"), Ok(i64::MIN));
        assert!(parse_go_int("+-1").is_err());
        assert!(parse_go_int("-").is_err());
    }

    #[test]
    fn barrier_priority_reads_the_injected_key() {
        let mut p = pod(vec![
            container("a", Some("10")),
            container("b", Some("-2")),
            container("c", None),
        ]);
        assert_eq!(apply_launch_priority(&mut p, "xxxxx"), Ok(true));
        let read: Vec<_> = p
            .spec
            .as_ref()
            .unwrap()
            .containers
            .iter()
            .map(barrier_priority)
            .collect();
        assert_eq!(read, vec![Some(10), Some(-2), Some(0)]);
        // The priority env alone is not a barrier.
        assert_eq!(barrier_priority(&container("x", Some("7"))), None);
        // A malformed key still marks the container as ordered.
        let mut odd = container("y", None);
        odd.env = Some(vec![barrier_env("y-barrier", 3)]);
        odd.env.as_mut().unwrap()[0]
            .value_from
            .as_mut()
            .unwrap()
            .config_map_key_ref
            .as_mut()
            .unwrap()
            .key = "p".into();
        assert_eq!(barrier_priority(&odd), Some(0));
    }

    #[test]
    fn suffix_alphabet() {
        let s = random_name_suffix();
        assert_eq!(s.len(), NAME_SUFFIX_LEN);
        assert!(s.bytes().all(|b| NAME_SUFFIX_ALPHABET.contains(&b)));
    }
}
