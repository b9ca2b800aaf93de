//! What the SidecarSet controller reads off one pod: is it updated, may it be upgraded, are its
//! sidecars done rolling, is it ready. Computed once per pod per round, reading the pod in place.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{ContainerStatus, Pod};
use serde_json::Value;

use crate::api::{SidecarSet, keys};
use crate::inject::sidecar::parse_upgrade_specs;

/// The copy of a hot-upgrade sidecar that is not the working one.
pub fn idle_copy(sidecar: &str, working: &BTreeMap<String, String>) -> String {
    let (first, second) = hot_upgrade_copies(sidecar);
    if working.get(sidecar) == Some(&first) {
        second
    } else {
        first
    }
}

/// The parts of a SidecarSet every per-pod check needs, worked out once per round.
#[derive(Debug, Clone)]
pub struct SidecarSetView<'a> {
    pub name: &'a str,
    /// The SidecarSet's `kruise.io/sidecarset-hash` annotation ("" when absent).
    pub hash: &'a str,
    /// The SidecarSet's `kruise.io/sidecarset-hash-without-image` annotation ("" when absent).
    pub hash_without_image: &'a str,
    /// Pod container names the SidecarSet owns: a hot-upgrade sidecar stands for its two copies.
    pub sidecar_names: Vec<String>,
    /// Hot-upgrade sidecars: (name, image of the idle copy).
    pub hot_upgrade: Vec<(&'a str, &'a str)>,
    /// ColdUpgrade sidecar names (containers only: init containers are never checked).
    pub cold_upgrade: Vec<&'a str>,
}

impl<'a> SidecarSetView<'a> {
    pub fn new(set: &'a SidecarSet) -> Self {
        let mut sidecar_names = Vec::new();
        let mut hot_upgrade = Vec::new();
        let mut cold_upgrade = Vec::new();
        for sidecar in set.containers() {
            let name = sidecar.name();
            if sidecar.is_hot_upgrade() {
                let empty_image = sidecar
                    .upgrade_strategy
                    .as_ref()
                    .and_then(|s| s.hot_upgrade_empty_image.as_deref())
                    .unwrap_or("");
                hot_upgrade.push((name, empty_image));
                let (first, second) = hot_upgrade_copies(name);
                sidecar_names.push(first);
                sidecar_names.push(second);
            } else {
                cold_upgrade.push(name);
                sidecar_names.push(name.to_string());
            }
        }
        sidecar_names.sort();
        sidecar_names.dedup();
        Self {
            name: set.name(),
            hash: set.annotation(keys::SIDECARSET_HASH).unwrap_or(""),
            hash_without_image: set
                .annotation(keys::SIDECARSET_HASH_WITHOUT_IMAGE)
                .unwrap_or(""),
            sidecar_names,
            hot_upgrade,
            cold_upgrade,
        }
    }
}

/// The two pod containers a hot-upgrade sidecar becomes.
pub fn hot_upgrade_copies(name: &str) -> (String, String) {
    (format!("{name}-1"), format!("{name}-2"))
}

/// Everything one round needs to know about one matched pod.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PodFacts {
    /// The pod records the SidecarSet's current hash.
    pub updated: bool,
    /// The pod's hash-without-image equals the SidecarSet's: only images differ, so the sidecars
    /// can be upgraded in place.
    pub upgradable: bool,
    /// Ready in the SidecarSet sense (§2.9).
    pub ready: bool,
    /// Every sidecar container runs what its spec says (no in-place update still rolling).
    pub consistent: bool,
    /// Some sidecar reports ready while a previous in-place update of it is still rolling: the
    /// pod waits for that update before the next one.
    pub upgrade_in_progress: bool,
    /// Hot upgrade done (updated, running and ready on the new working copies) but some idle copy
    /// still holds a real image: time to reset it to the empty image.
    pub idle_copy_to_reset: bool,
}

impl PodFacts {
    /// Counted in `readyPods` and able to absorb an upgrade without adding to unavailability.
    pub fn available(&self) -> bool {
        self.consistent && self.ready
    }
}

/// Reads one matched pod against one SidecarSet. The in-place state annotation is parsed once.
pub fn pod_facts(pod: &Pod, view: &SidecarSetView<'_>) -> PodFacts {
    let state = SidecarState::read(pod, view.name);
    let all: Vec<&str> = view.sidecar_names.iter().map(String::as_str).collect();
    let ready_statuses: Vec<&str> = container_statuses(pod)
        .iter()
        .filter(|s| s.ready)
        .map(|s| s.name.as_str())
        .collect();
    let upgrade_in_progress = all
        .iter()
        .any(|name| ready_statuses.contains(name) && !state.consistent(pod, &[name]));
    let mut facts = PodFacts {
        updated: recorded_hash(pod, keys::SIDECARSET_HASH, view.name) == view.hash,
        upgradable: recorded_hash(pod, keys::SIDECARSET_HASH_WITHOUT_IMAGE, view.name)
            == view.hash_without_image,
        ready: is_ready(pod, view),
        consistent: state.consistent(pod, &all),
        upgrade_in_progress,
        idle_copy_to_reset: false,
    };
    facts.idle_copy_to_reset = facts.updated && hot_upgrade_finished(pod, view, &state);
    facts
}

/// Every hot-upgrade sidecar's working copy runs its spec image and is ready, the pod is running
/// and ready, and some idle copy does not run the empty image yet.
fn hot_upgrade_finished(pod: &Pod, view: &SidecarSetView<'_>, state: &SidecarState) -> bool {
    if !hot_upgrade_pending(pod, view)
        || phase(pod) != "Running"
        || !has_ready_condition(pod)
        || pod.metadata.deletion_timestamp.is_some()
    {
        return false;
    }
    let working = working_containers(pod);
    view.hot_upgrade.iter().all(|(name, _)| {
        let Some(copy) = working.get(*name) else {
            return false;
        };
        let ready = container_statuses(pod)
            .iter()
            .any(|s| s.name == *copy && s.ready);
        ready && state.consistent(pod, &[copy.as_str()])
    })
}

pub fn annotation<'p>(pod: &'p Pod, key: &str) -> Option<&'p str> {
    pod.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(key))
        .map(String::as_str)
}

pub fn container_statuses(pod: &Pod) -> &[ContainerStatus] {
    pod.status
        .as_ref()
        .and_then(|s| s.container_statuses.as_deref())
        .unwrap_or(&[])
}

/// The hash a pod records for one SidecarSet ("" when absent or unreadable, as upstream).
pub fn recorded_hash(pod: &Pod, key: &str, sidecarset: &str) -> String {
    annotation(pod, key)
        .and_then(|value| parse_upgrade_specs(value).ok())
        .and_then(|mut specs| specs.remove(sidecarset))
        .map(|spec| spec.hash)
        .unwrap_or_default()
}

/// Was the SidecarSet injected into the pod (`kruise.io/sidecarset-injected-list`)?
pub fn is_injected(pod: &Pod, sidecarset: &str) -> bool {
    annotation(pod, keys::SIDECARSET_INJECTED_LIST)
        .is_some_and(|list| list.split(',').any(|name| name == sidecarset))
}

/// Does the pod still carry every sidecar of the SidecarSet (§2.4)? Hot-upgrade sidecars need both
/// copies and an entry in the working-container annotation.
pub fn carries_sidecars(pod: &Pod, view: &SidecarSetView<'_>) -> bool {
    let containers = pod.spec.as_ref().map(|s| s.containers.as_slice());
    let has = |name: &str| containers.unwrap_or(&[]).iter().any(|c| c.name == name);
    let working = working_containers(pod);
    view.cold_upgrade.iter().all(|name| has(name))
        && view.hot_upgrade.iter().all(|(name, _)| {
            let (first, second) = hot_upgrade_copies(name);
            working.contains_key(*name) && has(&first) && has(&second)
        })
}

/// `kruise.io/sidecarset-working-hotupgrade-container`: sidecar name → working copy.
pub fn working_containers(pod: &Pod) -> BTreeMap<String, String> {
    annotation(pod, keys::SIDECARSET_WORKING_HOTUPGRADE_CONTAINER)
        .and_then(|value| serde_json::from_str(value).ok())
        .unwrap_or_default()
}

/// Kubernetes' `IsPodReady`: condition Ready is True.
pub fn has_ready_condition(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|conditions| {
            conditions
                .iter()
                .any(|c| c.type_ == "Ready" && c.status == "True")
        })
}

pub fn phase(pod: &Pod) -> &str {
    pod.status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .unwrap_or("")
}

/// Ready in the SidecarSet sense: no hot upgrade half done (every idle copy runs the empty image),
/// Running, Ready and not terminating.
pub fn is_ready(pod: &Pod, view: &SidecarSetView<'_>) -> bool {
    if hot_upgrade_pending(pod, view) {
        return false;
    }
    phase(pod) == "Running" && has_ready_condition(pod) && pod.metadata.deletion_timestamp.is_none()
}

/// Some hot-upgrade sidecar's idle copy does not run the empty image yet.
pub fn hot_upgrade_pending(pod: &Pod, view: &SidecarSetView<'_>) -> bool {
    if view.hot_upgrade.is_empty() {
        return false;
    }
    let working = working_containers(pod);
    let containers = pod.spec.as_ref().map(|s| s.containers.as_slice());
    view.hot_upgrade.iter().any(|(name, empty_image)| {
        let idle = idle_copy(name, &working);
        containers
            .unwrap_or(&[])
            .iter()
            .find(|c| c.name == idle)
            .is_some_and(|c| c.image.as_deref().unwrap_or("") != *empty_image)
    })
}

/// The pod's `kruise.io/sidecarset-inplace-update-state`, as far as one SidecarSet is concerned.
#[derive(Debug, Clone, PartialEq)]
pub enum SidecarState {
    /// No annotation: the sidecars were only injected, never updated in place.
    Absent,
    /// Not JSON of the expected shape: nothing can be trusted.
    Unreadable,
    /// Container name → imageID recorded before this SidecarSet's last in-place update.
    Recorded(BTreeMap<String, String>),
}

impl SidecarState {
    pub fn read(pod: &Pod, sidecarset: &str) -> Self {
        let Some(value) = annotation(pod, keys::SIDECARSET_INPLACE_UPDATE_STATE) else {
            return Self::Absent;
        };
        let Ok(states) = serde_json::from_str::<BTreeMap<String, Value>>(value) else {
            return Self::Unreadable;
        };
        let mut recorded = BTreeMap::new();
        if let Some(state) = states.get(sidecarset) {
            if !state.is_object() && !state.is_null() {
                return Self::Unreadable;
            }
            let statuses = state
                .get("lastContainerStatuses")
                .and_then(Value::as_object);
            for (name, status) in statuses.into_iter().flatten() {
                let image_id = status.get("imageID").and_then(Value::as_str).unwrap_or("");
                recorded.insert(name.clone(), image_id.to_string());
            }
        }
        Self::Recorded(recorded)
    }

    /// Upstream's `IsSidecarContainerUpdateCompleted` over the named containers (§2.9).
    pub fn consistent(&self, pod: &Pod, names: &[&str]) -> bool {
        let containers = pod
            .spec
            .as_ref()
            .map(|s| s.containers.as_slice())
            .unwrap_or(&[]);
        let statuses = container_statuses(pod);
        // Statuses missing: containers are still being created.
        if containers.len() != statuses.len() {
            return false;
        }
        let checked = || {
            containers
                .iter()
                .filter(|c| names.contains(&c.name.as_str()))
        };
        let all_digests = checked().all(|c| is_digest_reference(c.image.as_deref().unwrap_or("")));
        if all_digests {
            return statuses
                .iter()
                .filter(|s| names.contains(&s.name.as_str()))
                .all(|status| {
                    let spec_image = checked()
                        .find(|c| c.name == status.name)
                        .and_then(|c| c.image.as_deref())
                        .unwrap_or("");
                    digest_images_equal(spec_image, status.image_id.as_str())
                });
        }
        let recorded = match self {
            Self::Absent => return true,
            Self::Unreadable => return false,
            Self::Recorded(recorded) => recorded,
        };
        statuses
            .iter()
            .filter(|s| names.contains(&s.name.as_str()))
            .all(|status| {
                let Some(old_image_id) = recorded.get(&status.name) else {
                    return true;
                };
                let spec_image = containers
                    .iter()
                    .find(|c| c.name == status.name)
                    .and_then(|c| c.image.as_deref())
                    .unwrap_or("");
                // Same image ID as before the update while the spec asks for another image: the
                // runtime has not switched yet.
                !(*old_image_id == status.image_id && spec_image != status.image)
            })
    }
}

/// `repo@sha256:…` (optionally with a tag before the `@`).
pub fn is_digest_reference(image: &str) -> bool {
    split_digest(image).is_some()
}

fn split_digest(image: &str) -> Option<(String, &str)> {
    let (name, digest) = image.rsplit_once('@')?;
    let (algorithm, hex) = digest.split_once(':')?;
    if algorithm.is_empty() || hex.is_empty() || name.is_empty() {
        return None;
    }
    Some((normalized_repository(name), digest))
}

/// Docker's name normalisation: `nginx` is `docker.io/library/nginx`, tags are dropped.
fn normalized_repository(name: &str) -> String {
    let last_slash = name.rfind('/').map_or(0, |i| i + 1);
    let without_tag = match name[last_slash..].find(':') {
        Some(colon) => &name[..last_slash + colon],
        None => name,
    };
    let (first, rest) = match without_tag.split_once('/') {
        Some((first, rest)) => (first, Some(rest)),
        None => (without_tag, None),
    };
    let first_is_registry =
        rest.is_some() && (first.contains('.') || first.contains(':') || first == "localhost");
    match (first_is_registry, rest) {
        (true, _) => without_tag.to_string(),
        (false, Some(_)) => format!("docker.io/{without_tag}"),
        (false, None) => format!("docker.io/library/{without_tag}"),
    }
}

/// Upstream's `IsContainerImageEqual` for a digest spec image against a status imageID (which
/// may carry a `docker-pullable://` style scheme).
fn digest_images_equal(spec_image: &str, image_id: &str) -> bool {
    let image_id = image_id
        .split_once("://")
        .map_or(image_id, |(_, rest)| rest);
    match (split_digest(spec_image), split_digest(image_id)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_comparison_normalises_repositories() {
        assert!(digest_images_equal(
            "nginx@sha256:abc",
            "docker-pullable://docker.io/library/nginx@sha256:abc"
        ));
        assert!(digest_images_equal(
            "reg.io:5000/team/app:v1@sha256:abc",
            "reg.io:5000/team/app@sha256:abc"
        ));
        assert!(!digest_images_equal(
            "nginx@sha256:abc",
            "docker.io/library/nginx@sha256:abd"
        ));
        assert!(!digest_images_equal(
            "team/app@sha256:abc",
            "app@sha256:abc"
        ));
        assert!(!is_digest_reference("nginx:1.25"));
    }
}
