//! What the controller writes to a pod it upgrades (§2.10): the new sidecar images and nothing
//! else of the containers, the SidecarSet's hash entry, the in-place update state that lets later
//! rounds tell when the runtime has switched images, and the `SidecarSetUpgradable` condition.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Pod, PodCondition};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde_json::{Map, Value, json};

use crate::api::{SidecarContainer, SidecarSet, keys};
use crate::inject::launch_priority::barrier_priority;
use crate::inject::sidecar::{InjectError, apply_patch_pod_metadata};
use crate::podmarks::PodView;
use crate::podmarks::sidecarset::{
    UpgradeSpec, annotation, container_statuses, hot_upgrade_copies, idle_copy,
    parse_upgrade_specs, working_containers,
};

/// One sidecar container whose image the upgrade changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageChange {
    pub container: String,
    pub image: String,
    pub previous_image: Option<String>,
    /// Launch priority from the container's barrier key; `None` means no priority.
    pub priority: Option<i64>,
}

/// The upgraded pod and the image changes it carries, grouped for batch-by-batch application.
#[derive(Debug, Clone, PartialEq)]
pub struct PodUpgrade {
    /// The pod with every new image and all annotations written: what OpenKruise PUTs.
    pub pod: Pod,
    /// Changed containers grouped by launch priority, highest first; containers without a
    /// priority join the first batch. At most one batch when priorities do not differ.
    pub batches: Vec<Vec<ImageChange>>,
}

impl PodUpgrade {
    /// [`Self::pod`] with only the first batch's images applied: the starting point for an
    /// in-place engine that applies the later batches once the earlier ones run and are ready.
    pub fn pod_for_first_batch(&self) -> Pod {
        let mut pod = self.pod.clone();
        let later = self.batches.iter().skip(1).flatten();
        if let Some(spec) = pod.spec.as_mut() {
            for change in later {
                if let Some(container) = spec
                    .containers
                    .iter_mut()
                    .find(|c| c.name == change.container)
                {
                    container.image = change.previous_image.clone();
                }
            }
        }
        pod
    }
}

#[derive(Debug, thiserror::Error)]
pub enum UpgradeError {
    #[error(transparent)]
    PatchPodMetadata(#[from] InjectError),
}

/// Upgrades `pod` (a fresh read) to the SidecarSet's sidecars. `now` is RFC 3339 UTC, written
/// into the hash entry and a new in-place state entry. Only container images change.
pub fn upgrade_pod(pod: &Pod, set: &SidecarSet, now: &str) -> Result<PodUpgrade, UpgradeError> {
    let mut upgraded = pod.clone();
    let mut changes = Vec::new();
    let mut working = working_containers(pod);
    let mut hot_annotations = BTreeMap::new();
    for sidecar in set.containers() {
        let target = if sidecar.is_hot_upgrade() {
            hot_upgrade_target(pod, sidecar, &working)
        } else {
            sidecar.name().to_string()
        };
        let Some(change) = set_image(&mut upgraded, &target, sidecar) else {
            continue;
        };
        if sidecar.is_hot_upgrade() {
            record_hot_upgrade(
                pod,
                set,
                sidecar.name(),
                &target,
                &mut working,
                &mut hot_annotations,
            );
        }
        changes.push(change);
    }

    let annotations = upgraded
        .metadata
        .annotations
        .get_or_insert_with(BTreeMap::new);
    annotations.extend(hot_annotations);
    if set
        .containers()
        .iter()
        .any(SidecarContainer::is_hot_upgrade)
    {
        annotations.insert(
            keys::SIDECARSET_WORKING_HOTUPGRADE_CONTAINER.to_string(),
            to_json(&working),
        );
    }
    annotations.insert(
        keys::SIDECARSET_HASH.to_string(),
        hash_annotation(annotation(pod, keys::SIDECARSET_HASH), set, now),
    );
    if let Some(converted) = converted_legacy(annotation(pod, keys::SIDECARSET_HASH_WITHOUT_IMAGE))
    {
        annotations.insert(keys::SIDECARSET_HASH_WITHOUT_IMAGE.to_string(), converted);
    }
    annotations.insert(
        keys::SIDECARSET_INPLACE_UPDATE_STATE.to_string(),
        state_annotation(pod, set, &changes, now),
    );
    annotations
        .entry(keys::SIDECARSET_INJECTED_LIST.to_string())
        .or_insert_with(|| set.name().to_string());
    apply_patch_pod_metadata(&mut upgraded, &[set])?;

    Ok(PodUpgrade {
        pod: upgraded,
        batches: priority_batches(changes),
    })
}

/// Sets the container's image to the sidecar's; `None` when it already matches or is absent.
fn set_image(pod: &mut Pod, target: &str, sidecar: &SidecarContainer) -> Option<ImageChange> {
    let container = pod
        .spec
        .as_mut()?
        .containers
        .iter_mut()
        .find(|c| c.name == target)?;
    let image = sidecar.container.image.clone().unwrap_or_default();
    if container.image.as_deref().unwrap_or("") == image {
        return None;
    }
    let previous_image = container.image.replace(image.clone());
    Some(ImageChange {
        container: target.to_string(),
        image,
        previous_image,
        priority: barrier_priority(container),
    })
}

/// The copy of a hot-upgrade sidecar to upgrade: the one running the empty image, else the one
/// not ready, else the one not working.
fn hot_upgrade_target(
    pod: &Pod,
    sidecar: &SidecarContainer,
    working: &BTreeMap<String, String>,
) -> String {
    let (first, second) = hot_upgrade_copies(sidecar.name());
    let empty_image = sidecar
        .upgrade_strategy
        .as_ref()
        .and_then(|s| s.hot_upgrade_empty_image.as_deref())
        .unwrap_or("");
    let image_of = |name: &str| {
        pod.spec
            .as_ref()
            .and_then(|s| s.containers.iter().find(|c| c.name == name))
            .and_then(|c| c.image.as_deref())
    };
    let ready = |name: &str| {
        container_statuses(pod)
            .iter()
            .any(|s| s.name == name && s.ready)
    };
    for copy in [&first, &second] {
        if image_of(copy) == Some(empty_image) {
            return copy.clone();
        }
    }
    for copy in [&first, &second] {
        if !ready(copy) {
            return copy.clone();
        }
    }
    idle_copy(sidecar.name(), working)
}

/// Hot upgrade bookkeeping: the upgraded copy becomes the working one, and both copies learn each
/// other's version through the version annotations.
fn record_hot_upgrade(
    pod: &Pod,
    set: &SidecarSet,
    sidecar: &str,
    upgraded: &str,
    working: &mut BTreeMap<String, String>,
    annotations: &mut BTreeMap<String, String>,
) {
    let (first, second) = hot_upgrade_copies(sidecar);
    let older = if upgraded == first { second } else { first };
    let version = set.metadata.resource_version.clone().unwrap_or_default();
    let older_version = annotation(pod, &format!("{}{older}", keys::SIDECARSET_VERSION_PREFIX))
        .unwrap_or("")
        .to_string();
    annotations.insert(
        format!("{}{upgraded}", keys::SIDECARSET_VERSION_PREFIX),
        version.clone(),
    );
    annotations.insert(
        format!("{}{upgraded}", keys::SIDECARSET_VERSION_ALT_PREFIX),
        older_version,
    );
    annotations.insert(
        format!("{}{older}", keys::SIDECARSET_VERSION_ALT_PREFIX),
        version,
    );
    working.insert(sidecar.to_string(), upgraded.to_string());
}

/// `kruise.io/sidecarset-hash` with this SidecarSet's entry replaced; other entries kept (an
/// unreadable annotation is replaced whole).
fn hash_annotation(existing: Option<&str>, set: &SidecarSet, now: &str) -> String {
    let mut specs = existing
        .and_then(|value| parse_upgrade_specs(value).ok())
        .unwrap_or_default();
    let mut sidecar_list: Vec<String> = set
        .containers()
        .iter()
        .chain(
            set.init_containers()
                .iter()
                .filter(|c| c.is_native_sidecar()),
        )
        .map(|c| c.name().to_string())
        .collect();
    sidecar_list.sort();
    sidecar_list.dedup();
    specs.insert(
        set.name().to_string(),
        UpgradeSpec {
            update_timestamp: Some(now.to_string()),
            hash: set
                .annotation(keys::SIDECARSET_HASH)
                .unwrap_or("")
                .to_string(),
            sidecar_set_name: set.name().to_string(),
            sidecar_list: Some(sidecar_list),
            controller_revision: set
                .status
                .as_ref()
                .and_then(|s| s.latest_revision.clone())
                .unwrap_or_default(),
        },
    );
    to_json(&specs)
}

/// A legacy `{"<set>":"<hash>"}` without-image annotation rewritten in the object format;
/// `None` when there is nothing to convert.
fn converted_legacy(existing: Option<&str>) -> Option<String> {
    let value = existing?;
    if serde_json::from_str::<BTreeMap<String, UpgradeSpec>>(value).is_ok() {
        return None;
    }
    parse_upgrade_specs(value).ok().map(|specs| to_json(&specs))
}

/// `kruise.io/sidecarset-inplace-update-state` with the changed containers' current imageIDs
/// recorded under this SidecarSet. An existing entry keeps its revision and timestamp, and fields
/// this code does not know are kept.
fn state_annotation(pod: &Pod, set: &SidecarSet, changes: &[ImageChange], now: &str) -> String {
    let mut states: Map<String, Value> = annotation(pod, keys::SIDECARSET_INPLACE_UPDATE_STATE)
        .and_then(|value| serde_json::from_str(value).ok())
        .unwrap_or_default();
    let entry = states
        .entry(set.name().to_string())
        .or_insert_with(|| Value::Null);
    if !entry.is_object() {
        *entry = json!({
            "revision": set.annotation(keys::SIDECARSET_HASH).unwrap_or(""),
            "updateTimestamp": now,
            "lastContainerStatuses": {},
        });
    }
    if let Some(state) = entry.as_object_mut() {
        let last = state
            .entry("lastContainerStatuses")
            .or_insert_with(|| json!({}));
        if !last.is_object() {
            *last = json!({});
        }
        if let Some(last) = last.as_object_mut() {
            for status in container_statuses(pod) {
                if changes.iter().any(|c| c.container == status.name) {
                    last.insert(status.name.clone(), json!({"imageID": status.image_id}));
                }
            }
        }
    }
    to_json(&states)
}

/// After a hot upgrade finished: every idle copy goes back to the empty image, its version
/// annotations to "0", and its current imageID is recorded so that later rounds see it switch.
pub fn reset_idle_copies(pod: &Pod, set: &SidecarSet, now: &str) -> Pod {
    let mut reset = pod.clone();
    let working = working_containers(pod);
    let mut changes = Vec::new();
    let mut versions = BTreeMap::new();
    for sidecar in set.containers().iter().filter(|s| s.is_hot_upgrade()) {
        let idle = idle_copy(sidecar.name(), &working);
        let empty_image = sidecar
            .upgrade_strategy
            .as_ref()
            .and_then(|s| s.hot_upgrade_empty_image.clone())
            .unwrap_or_default();
        let Some(container) = reset
            .spec
            .as_mut()
            .and_then(|s| s.containers.iter_mut().find(|c| c.name == idle))
        else {
            continue;
        };
        if container.image.as_deref() == Some(empty_image.as_str()) {
            continue;
        }
        let previous_image = container.image.replace(empty_image.clone());
        versions.insert(
            format!("{}{idle}", keys::SIDECARSET_VERSION_PREFIX),
            "0".to_string(),
        );
        if let Some(working_copy) = working.get(sidecar.name()) {
            versions.insert(
                format!("{}{working_copy}", keys::SIDECARSET_VERSION_ALT_PREFIX),
                "0".to_string(),
            );
        }
        changes.push(ImageChange {
            container: idle,
            image: empty_image,
            previous_image,
            priority: None,
        });
    }
    if changes.is_empty() {
        return reset;
    }
    let state = state_annotation(pod, set, &changes, now);
    let annotations = reset.metadata.annotations.get_or_insert_with(BTreeMap::new);
    annotations.extend(versions);
    annotations.insert(keys::SIDECARSET_INPLACE_UPDATE_STATE.to_string(), state);
    reset
}

/// Image changes grouped by priority, highest first; no-priority changes join the first batch.
fn priority_batches(changes: Vec<ImageChange>) -> Vec<Vec<ImageChange>> {
    let mut by_priority: BTreeMap<i64, Vec<ImageChange>> = BTreeMap::new();
    let mut unprioritised = Vec::new();
    for change in changes {
        match change.priority {
            Some(priority) => by_priority.entry(priority).or_default().push(change),
            None => unprioritised.push(change),
        }
    }
    let mut batches: Vec<Vec<ImageChange>> = by_priority.into_values().rev().collect();
    match batches.first_mut() {
        Some(first) => first.extend(unprioritised),
        None if !unprioritised.is_empty() => batches.push(unprioritised),
        None => {}
    }
    batches
}

/// The pod's `SidecarSetUpgradable` condition after recording whether this SidecarSet can be
/// upgraded in place; `None` when the condition would not change.
pub fn upgradable_condition(
    pod: &impl PodView,
    sidecarset: &str,
    upgradable: bool,
    now: &Time,
) -> Option<PodCondition> {
    let existing = pod.upgradable_condition();
    let mut verdicts: BTreeMap<String, bool> = existing
        .and_then(|c| c.message)
        .and_then(|message| serde_json::from_str(message).ok())
        .unwrap_or_default();
    verdicts.insert(sidecarset.to_string(), upgradable);
    let all_upgradable = verdicts.values().all(|v| *v);
    let (status, reason) = if all_upgradable {
        ("True", keys::REASON_ALL_SIDECARSETS_UPGRADABLE)
    } else {
        ("False", keys::REASON_UPDATE_IMMUTABLE_FIELD)
    };
    let message = to_json(&verdicts);
    let unchanged = existing.is_some_and(|c| {
        c.status == status && c.reason == Some(reason) && c.message == Some(message.as_str())
    });
    (!unchanged).then(|| PodCondition {
        type_: keys::SIDECARSET_UPGRADABLE_CONDITION.to_string(),
        status: status.to_string(),
        reason: Some(reason.to_string()),
        message: Some(message),
        last_transition_time: Some(now.clone()),
        ..Default::default()
    })
}

/// `pod` with its `SidecarSetUpgradable` condition recording `sidecarset`'s verdict (the others'
/// entries kept, the condition replaced in place or appended); `None` when it already says so.
pub fn with_upgradable_condition(
    pod: &Pod,
    sidecarset: &str,
    upgradable: bool,
    now: &Time,
) -> Option<Pod> {
    let condition = upgradable_condition(pod, sidecarset, upgradable, now)?;
    let mut marked = pod.clone();
    let conditions = marked
        .status
        .get_or_insert_with(Default::default)
        .conditions
        .get_or_insert_with(Vec::new);
    match conditions.iter_mut().find(|c| c.type_ == condition.type_) {
        Some(existing) => *existing = condition,
        None => conditions.push(condition),
    }
    Some(marked)
}

/// Compact JSON of an annotation value. String-keyed maps of plain values always serialize.
fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}
