//! Whether a revision change can be applied to running pods in place, and if so, what to change
//! (OpenKruise's `CalculateSpec`).
//!
//! The decision is made on an RFC 6902 diff of the two revisions' data, so that nothing the diff
//! reports is ever left out: only `replace` of a container image is allowed inside the pod spec;
//! template metadata changes travel as a strategic merge patch; every other change means the pod
//! must be recreated. There is no partial answer.

use std::collections::BTreeMap;

use json_patch::PatchOperation;
use k8s_openapi::api::core::v1::{Container, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::{Value, json};

use super::env_hash::{MetadataSource, metadata_envs};
use super::metadata_patch::{self, MetadataPatchError};
use super::state::UpdateSpec;

/// What a diff operation does, as far as the decision cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Add,
    Replace,
    /// A removal (json-patch's diff makes no other kind).
    Other,
}

/// One side of the comparison: a ControllerRevision's name and data
/// (`{"spec":{"template":{"$patch":"replace", …}}}` for CloneSet and Advanced StatefulSet).
#[derive(Debug, Clone, Copy)]
pub struct Revision<'a> {
    pub name: &'a str,
    pub data: &'a Value,
    /// The revision's volume-claim-templates hash annotation, when the workload sets one.
    pub volume_claim_templates_hash: Option<&'a str>,
}

/// Builds revision data in the CloneSet form from a pod template, for callers that hold templates
/// rather than ControllerRevisions.
pub fn revision_data(template: &PodTemplateSpec) -> Result<Value, serde_json::Error> {
    let mut template = serde_json::to_value(template)?;
    if let Value::Object(map) = &mut template {
        map.insert("$patch".to_string(), Value::String("replace".to_string()));
    }
    Ok(json!({ "spec": { "template": template } }))
}

/// What to do when a changed label or annotation is read by a container's env through the
/// downward API (a `fieldRef` on `metadata.labels['k']` / `metadata.annotations['k']`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EnvFromMetadata {
    /// OpenKruise HEAD (feature `InPlaceUpdateEnvFromMetadata` on): update in place and record the
    /// values in `containerRefMetadata`; a node agent (kruise-daemon) must restart the container,
    /// and completion is judged from its runtime hashes.
    InPlace,
    /// The default here: without a node agent nothing restarts the container, so the new value can
    /// only reach its env through a new pod. Choosing `InPlace` without such an agent would leave
    /// the pod waiting forever.
    #[default]
    Recreate,
    /// OpenKruise v1.1 (feature off): patch the metadata only; the env keeps its old value.
    Ignore,
}

/// Knobs of the decision.
#[derive(Debug, Clone, Default)]
pub struct CalculateOptions {
    /// Becomes the spec's `graceSeconds`.
    pub grace_seconds: i32,
    pub env_from_metadata: EnvFromMetadata,
    /// Feature `RecreatePodWhenChangeVCTInCloneSetGate`: differing volume-claim-template hashes force
    /// a recreate...
    pub recreate_on_volume_claim_templates_change: bool,
    /// ...unless the caller tolerates it (CloneSet `InPlaceOnly`).
    pub ignore_volume_claim_templates_hash_diff: bool,
}

/// Why a change cannot be applied in place.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NotInPlace {
    #[error("the {0} revision is missing")]
    MissingRevision(Side),
    #[error("the {side} revision's pod template cannot be read: {error}")]
    UnreadableTemplate { side: Side, error: String },
    #[error("volume claim templates changed")]
    VolumeClaimTemplatesChanged,
    #[error("{path} changed outside the pod template's spec and metadata")]
    OutsidePodSpec { path: String },
    #[error("{path} was added or removed, only replacements can be done in place")]
    NotAReplacement { path: String },
    #[error("{path} changed, only container images can change in place")]
    FieldChanged { path: String },
    #[error("{path} names container index {index}, which the old template does not have")]
    UnknownContainer { path: String, index: usize },
    #[error("{path}: the new image is not a string")]
    ImageNotAString { path: String },
    #[error("container {container:?} reads {field}['{key}'] into its env, which changed")]
    EnvReadsChangedMetadata {
        container: String,
        field: &'static str,
        key: String,
    },
    #[error("cannot build the metadata patch: {0}")]
    MetadataPatch(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Old,
    New,
}

impl std::fmt::Display for Side {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Side::Old => "old",
            Side::New => "new",
        })
    }
}

impl From<MetadataPatchError> for NotInPlace {
    fn from(error: MetadataPatchError) -> Self {
        NotInPlace::MetadataPatch(error.to_string())
    }
}

const IMAGE_PATH_PREFIX: &str = "/spec/containers/";
const IMAGE_PATH_SUFFIX: &str = "/image";

/// The in-place update from `old` to `new`, or why the pod must be recreated instead.
pub fn calculate_spec(
    old: Option<&Revision<'_>>,
    new: Option<&Revision<'_>>,
    options: &CalculateOptions,
) -> Result<UpdateSpec, NotInPlace> {
    let old = old.ok_or(NotInPlace::MissingRevision(Side::Old))?;
    let new = new.ok_or(NotInPlace::MissingRevision(Side::New))?;
    if options.recreate_on_volume_claim_templates_change
        && !options.ignore_volume_claim_templates_hash_diff
        && let (Some(a), Some(b)) = (
            old.volume_claim_templates_hash,
            new.volume_claim_templates_hash,
        )
        && a != b
    {
        return Err(NotInPlace::VolumeClaimTemplatesChanged);
    }
    let old_template = template_of(old.data, Side::Old)?;
    let new_template = template_of(new.data, Side::New)?;
    let old_containers = containers(&old_template);

    let mut spec = UpdateSpec {
        revision: new.name.to_string(),
        grace_seconds: options.grace_seconds,
        ..Default::default()
    };
    let mut metadata_ops = Vec::new();
    // json-patch's diff goes key by key and index by index (changing one env value is a replace at
    // `…/env/0/value`, adding a container an add at `…/containers/1`), which is the shape
    // OpenKruise's decision reads.
    for operation in json_patch::diff(old.data, new.data).0 {
        let (op, pointer, value) = match operation {
            PatchOperation::Add(add) => (Op::Add, add.path, add.value),
            PatchOperation::Replace(replace) => (Op::Replace, replace.path, replace.value),
            PatchOperation::Remove(remove) => (Op::Other, remove.path, Value::Null),
            other => (Op::Other, other.path().to_owned(), Value::Null),
        };
        let path = pointer.to_string().replacen("/spec/template", "", 1);
        if path.starts_with("/metadata/") {
            metadata_ops.push((op, path));
            continue;
        }
        if !path.starts_with("/spec/") {
            return Err(NotInPlace::OutsidePodSpec { path });
        }
        if op != Op::Replace {
            return Err(NotInPlace::NotAReplacement { path });
        }
        let Some(index) = image_index(&path) else {
            return Err(NotInPlace::FieldChanged { path });
        };
        let Some(container) = old_containers.get(index) else {
            return Err(NotInPlace::UnknownContainer { path, index });
        };
        let Value::String(image) = value else {
            return Err(NotInPlace::ImageNotAString { path });
        };
        spec.container_images.insert(container.name.clone(), image);
    }

    if metadata_ops.is_empty() {
        return Ok(spec);
    }
    let mut old_meta = old_template.metadata.clone().unwrap_or_default();
    let mut new_meta = new_template.metadata.clone().unwrap_or_default();
    if options.env_from_metadata != EnvFromMetadata::Ignore {
        for (op, path) in &metadata_ops {
            if !matches!(op, Op::Replace | Op::Add) {
                continue;
            }
            let Some((field, key)) = metadata_key(path) else {
                continue;
            };
            let value = meta_map(&new_meta, field)
                .and_then(|m| m.get(&key))
                .cloned()
                .unwrap_or_default();
            let mut referenced = false;
            for container in containers(&new_template) {
                if !reads_metadata(container, field, &key) {
                    continue;
                }
                if options.env_from_metadata == EnvFromMetadata::Recreate {
                    return Err(NotInPlace::EnvReadsChangedMetadata {
                        container: container.name.clone(),
                        field: field.path(),
                        key,
                    });
                }
                let meta = spec
                    .container_ref_metadata
                    .entry(container.name.clone())
                    .or_default();
                meta_map_mut(meta, field).insert(key.clone(), value.clone());
                referenced = true;
            }
            if referenced {
                spec.update_env_from_metadata = true;
                // Carried by containerRefMetadata batch by batch, not by the pod-wide patch.
                remove_meta_key(&mut old_meta, field, &key);
                remove_meta_key(&mut new_meta, field, &key);
            }
        }
    }
    spec.meta_data_patch = metadata_patch::create_metadata_patch(&old_meta, &new_meta)?;
    Ok(spec)
}

fn template_of(data: &Value, side: Side) -> Result<PodTemplateSpec, NotInPlace> {
    let Some(template) = data.pointer("/spec/template") else {
        // Go decodes a revision without a template into an empty one.
        return Ok(PodTemplateSpec::default());
    };
    serde_json::from_value(template.clone()).map_err(|e| NotInPlace::UnreadableTemplate {
        side,
        error: e.to_string(),
    })
}

fn containers(template: &PodTemplateSpec) -> &[Container] {
    template
        .spec
        .as_ref()
        .map(|s| s.containers.as_slice())
        .unwrap_or(&[])
}

/// `Some(i)` for exactly `/spec/containers/<i>/image`.
fn image_index(path: &str) -> Option<usize> {
    let digits = path
        .strip_prefix(IMAGE_PATH_PREFIX)?
        .strip_suffix(IMAGE_PATH_SUFFIX)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// `/metadata/labels/<key>` or `/metadata/annotations/<key>`, key unescaped.
fn metadata_key(path: &str) -> Option<(MetadataSource, String)> {
    let words: Vec<&str> = path.split('/').collect();
    let [_, _, field, key] = words.as_slice() else {
        return None;
    };
    let field = match *field {
        "labels" => MetadataSource::Labels,
        "annotations" => MetadataSource::Annotations,
        _ => return None,
    };
    let key = jsonptr::Token::from_encoded(key)
        .ok()?
        .decoded()
        .into_owned();
    Some((field, key))
}

/// Whether the container's env reads the key through a downward-API `fieldRef`. Env with a literal
/// value and the hot-upgrade version env are not references.
fn reads_metadata(container: &Container, field: MetadataSource, key: &str) -> bool {
    metadata_envs(container)
        .iter()
        .any(|env| env.source == field && env.key == key)
}

fn meta_map(meta: &ObjectMeta, field: MetadataSource) -> Option<&BTreeMap<String, String>> {
    match field {
        MetadataSource::Labels => meta.labels.as_ref(),
        MetadataSource::Annotations => meta.annotations.as_ref(),
    }
}

fn meta_map_mut(meta: &mut ObjectMeta, field: MetadataSource) -> &mut BTreeMap<String, String> {
    match field {
        MetadataSource::Labels => meta.labels.get_or_insert_with(BTreeMap::new),
        MetadataSource::Annotations => meta.annotations.get_or_insert_with(BTreeMap::new),
    }
}

fn remove_meta_key(meta: &mut ObjectMeta, field: MetadataSource, key: &str) {
    let map = match field {
        MetadataSource::Labels => &mut meta.labels,
        MetadataSource::Annotations => &mut meta.annotations,
    };
    if let Some(m) = map.as_mut() {
        m.remove(key);
        // Go's omitempty: an emptied map is not written, so it must not show up in the diff.
        if m.is_empty() {
            *map = None;
        }
    }
}

#[cfg(test)]
mod tests;
