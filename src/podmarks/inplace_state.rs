//! The two pod annotations that carry an in-place update: the progress record
//! (`apps.kruise.io/inplace-update-state`) and the grace-period spec
//! (`apps.kruise.io/inplace-update-grace`).
//!
//! Field names, field order and empty-value rules follow OpenKruise's Go structs, because pods
//! mid-update may be handed over between OpenKruise and this controller in either direction.

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Pod, PodTemplateSpec, ResourceRequirements};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use serde::{Deserialize, Deserializer, Serialize};

use crate::api::keys;

/// Progress record of one in-place update (Go `InPlaceUpdateState`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InPlaceUpdateState {
    #[serde(default, deserialize_with = "null_as_default")]
    pub revision: String,
    /// When the update started; also the start of the grace period. Written with its fraction
    /// of a second (`2024-05-01T10:00:00.25Z`), which Go's RFC 3339 parser reads into
    /// OpenKruise's `metav1.Time` as it reads whole seconds; OpenKruise writes whole seconds
    /// (cut, not rounded), and `null` when unset.
    #[serde(default, serialize_with = "exact_time")]
    pub update_timestamp: Option<Time>,
    /// Image IDs of the containers whose image was patched, captured just before the patch.
    /// Not omitted when empty: Go writes `null` for a nil map, `{}` for an empty one.
    #[serde(default)]
    pub last_container_statuses: Option<BTreeMap<String, LastContainerStatus>>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub update_env_from_metadata: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub update_resources: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub update_images: bool,
    /// Lower-priority containers still waiting for their image.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub next_container_images: BTreeMap<String, String>,
    /// Lower-priority containers still waiting for label/annotation values their env reads.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub next_container_ref_metadata: BTreeMap<String, ObjectMeta>,
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub next_container_resources: BTreeMap<String, ResourceRequirements>,
    /// Containers of the batch just patched; all must be ready before the next batch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_check_before_next: Option<PreCheckBeforeNext>,
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub container_batches_record: Vec<ContainerBatch>,
}

impl InPlaceUpdateState {
    /// Whether lower-priority containers are still waiting for a later batch.
    pub fn has_next_batch(&self) -> bool {
        !self.next_container_images.is_empty()
            || !self.next_container_ref_metadata.is_empty()
            || !self.next_container_resources.is_empty()
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LastContainerStatus {
    #[serde(
        rename = "imageID",
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub image_id: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PreCheckBeforeNext {
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub containers_required_ready: Vec<String>,
}

/// One patched batch: when, and which containers (sorted).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ContainerBatch {
    #[serde(default)]
    pub timestamp: Option<Time>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub containers: Vec<String>,
}

/// What an in-place update changes (Go `UpdateSpec`); stored whole in the grace annotation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateSpec {
    #[serde(default, deserialize_with = "null_as_default")]
    pub revision: String,
    /// Container name → new image.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub container_images: BTreeMap<String, String>,
    /// Container name → label/annotation values its env reads through the downward API.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub container_ref_metadata: BTreeMap<String, ObjectMeta>,
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub container_resources: BTreeMap<String, ResourceRequirements>,
    /// Strategic merge patch (`{"metadata":{…}}`) for the pod; base64 on the wire (Go `[]byte`).
    #[serde(default, with = "base64_bytes", skip_serializing_if = "Vec::is_empty")]
    pub meta_data_patch: Vec<u8>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub update_env_from_metadata: bool,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub grace_seconds: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_template: Option<PodTemplateSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_template: Option<PodTemplateSpec>,
}

impl UpdateSpec {
    /// A spec that only swaps images: what a SidecarSet-style caller, which has no revisions to
    /// diff, hands to the engine.
    pub fn images(revision: impl Into<String>, images: BTreeMap<String, String>) -> Self {
        UpdateSpec {
            revision: revision.into(),
            container_images: images,
            ..Default::default()
        }
    }

    /// Names of every container this spec touches.
    pub fn touches(&self, container: &str) -> bool {
        self.container_images.contains_key(container)
            || self.container_ref_metadata.contains_key(container)
            || self.container_resources.contains_key(container)
    }
}

/// Why an annotation could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum AnnotationError {
    #[error("annotation {key}: {source}")]
    Json {
        key: &'static str,
        #[source]
        source: serde_json::Error,
    },
}

/// The pod's update state: the current key first, then the legacy one. `None` when neither is set.
pub fn read_state(pod: &Pod) -> Option<Result<InPlaceUpdateState, AnnotationError>> {
    let (key, raw) = annotation_with_fallback(
        pod,
        keys::INPLACE_UPDATE_STATE,
        keys::INPLACE_UPDATE_STATE_LEGACY,
    )?;
    Some(serde_json::from_str(raw).map_err(|source| AnnotationError::Json { key, source }))
}

/// The pod's grace spec: the current key first, then the legacy one. `None` when neither is set.
pub fn read_grace(pod: &Pod) -> Option<Result<UpdateSpec, AnnotationError>> {
    let (key, raw) = annotation_with_fallback(
        pod,
        keys::INPLACE_UPDATE_GRACE,
        keys::INPLACE_UPDATE_GRACE_LEGACY,
    )?;
    Some(serde_json::from_str(raw).map_err(|source| AnnotationError::Json { key, source }))
}

/// Writes the state under the current key and drops the legacy one, so only one copy is ever read.
pub fn write_state(pod: &mut Pod, state: &InPlaceUpdateState) -> Result<(), AnnotationError> {
    let value = serde_json::to_string(state).map_err(|source| AnnotationError::Json {
        key: keys::INPLACE_UPDATE_STATE,
        source,
    })?;
    let annotations = pod.metadata.annotations.get_or_insert_with(BTreeMap::new);
    annotations.remove(keys::INPLACE_UPDATE_STATE_LEGACY);
    annotations.insert(keys::INPLACE_UPDATE_STATE.to_string(), value);
    Ok(())
}

/// Writes the grace spec (the pod then waits out `spec.grace_seconds` before its first batch).
pub fn write_grace(pod: &mut Pod, spec: &UpdateSpec) -> Result<(), AnnotationError> {
    let value = serde_json::to_string(spec).map_err(|source| AnnotationError::Json {
        key: keys::INPLACE_UPDATE_GRACE,
        source,
    })?;
    pod.metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(keys::INPLACE_UPDATE_GRACE.to_string(), value);
    Ok(())
}

/// Moves the start of the pod's grace period (its state's `updateTimestamp`) to `now` when it is
/// earlier, for a pod whose `InPlaceUpdateReady` gate was turned False by a write that has only
/// now been answered: the grace counts from when the pod left Service endpoints, not from when the
/// round that sent both writes was planned. `false` when nothing changed (no grace period, no
/// readable state, or a stamp at `now` or later).
pub fn restamp_grace_start(pod: &mut Pod, now: Timestamp) -> Result<bool, AnnotationError> {
    if !has_grace(pod) {
        return Ok(false);
    }
    let Some(Ok(mut state)) = read_state(pod) else {
        return Ok(false);
    };
    if state.update_timestamp.as_ref().is_some_and(|t| t.0 >= now) {
        return Ok(false);
    }
    state.update_timestamp = Some(Time(now));
    write_state(pod, &state)?;
    Ok(true)
}

/// Ends the grace period: both the current and the legacy key go.
pub fn remove_grace(pod: &mut Pod) {
    if let Some(annotations) = pod.metadata.annotations.as_mut() {
        annotations.remove(keys::INPLACE_UPDATE_GRACE);
        annotations.remove(keys::INPLACE_UPDATE_GRACE_LEGACY);
    }
}

/// Whether the pod is inside a grace period (either key, non-empty).
pub fn has_grace(pod: &Pod) -> bool {
    annotation_with_fallback(
        pod,
        keys::INPLACE_UPDATE_GRACE,
        keys::INPLACE_UPDATE_GRACE_LEGACY,
    )
    .is_some()
}

/// Whether the pod carries an update state (either key, non-empty), without reading it.
pub fn has_state(pod: &Pod) -> bool {
    annotation_with_fallback(
        pod,
        keys::INPLACE_UPDATE_STATE,
        keys::INPLACE_UPDATE_STATE_LEGACY,
    )
    .is_some()
}

/// An empty value counts as absent, as Go's `if v := annotations[k]; v != ""` does.
fn annotation_with_fallback<'a>(
    pod: &'a Pod,
    key: &'static str,
    legacy: &'static str,
) -> Option<(&'static str, &'a str)> {
    let annotations = pod.metadata.annotations.as_ref()?;
    [key, legacy].into_iter().find_map(|k| {
        annotations
            .get(k)
            .filter(|v| !v.is_empty())
            .map(|v| (k, v.as_str()))
    })
}

/// RFC 3339 in UTC with the fraction of a second it has (none when it is whole), unlike
/// `metav1.Time`'s whole seconds; `null` for none, as Go writes a zero `metav1.Time`.
fn exact_time<S: serde::Serializer>(time: &Option<Time>, serializer: S) -> Result<S::Ok, S::Error> {
    match time {
        Some(Time(timestamp)) => serializer.collect_str(timestamp),
        None => serializer.serialize_none(),
    }
}

fn is_false(value: &bool) -> bool {
    !*value
}

fn is_zero(value: &i32) -> bool {
    *value == 0
}

/// Go decodes `null` into a nil map/slice/empty string; serde would reject it.
fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// Go's `[]byte` JSON form: standard base64 with padding, `null` for nil.
mod base64_bytes {
    use base64_simd::STANDARD;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&STANDARD.encode_to_string(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u8>, D::Error> {
        let Some(text) = Option::<String>::deserialize(deserializer)? else {
            return Ok(Vec::new());
        };
        STANDARD
            .decode_to_vec(text.as_bytes())
            .map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests;
