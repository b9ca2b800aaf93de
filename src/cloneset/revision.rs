//! ControllerRevisions of a CloneSet, named and hashed byte for byte as OpenKruise (and the
//! Kubernetes history package it uses) does, so that pods and revisions written by either
//! controller are recognised by the other.
//!
//! - data: `{"spec":{"template":T}}` with T the template as Go encodes a `PodTemplateSpec`, keys
//!   sorted at every level, plus `"$patch":"replace"`;
//! - hash: FNV-32 (not 32a) over the data followed by the decimal collision count, printed in
//!   decimal and each digit mapped through Kubernetes' `SafeEncodeString`;
//! - name: `<cloneset name, at most 223 bytes>-<hash>`.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use k8s_openapi::apimachinery::pkg::runtime::RawExtension;
use serde_json::Value;

use crate::api::cloneset::CloneSet;
use crate::k8s::gojson;

/// Label on every ControllerRevision: its first hash (kept when a collision renames it).
pub const HASH_LABEL: &str = "controller.kubernetes.io/hash";
/// Kubernetes caps the name prefix so that `<prefix>-<hash>` stays a valid name.
const MAX_PREFIX_LEN: usize = 223;

#[derive(Debug, thiserror::Error)]
pub enum RevisionError {
    #[error("spec.template cannot be encoded: {0}")]
    Template(serde_json::Error),
    #[error("ControllerRevision {name}: data is not a CloneSet revision: {reason}")]
    Data { name: String, reason: String },
}

/// The revision data of a template, as the exact bytes OpenKruise stores and hashes.
pub fn revision_data(template: &PodTemplateSpec) -> Result<String, RevisionError> {
    let mut template = serde_json::to_value(template).map_err(RevisionError::Template)?;
    add_go_zero_values(&mut template);
    if let Value::Object(map) = &mut template {
        map.insert("$patch".into(), Value::String("replace".into()));
    }
    Ok(gojson::encode_value(
        &serde_json::json!({ "spec": { "template": template } }),
    ))
}

/// Go writes some struct fields even when they are empty; serde leaves them out. Those that a
/// defaulted template always has: `metadata.creationTimestamp: null`, `spec.containers` and each
/// container's `resources: {}`.
fn add_go_zero_values(template: &mut Value) {
    let Value::Object(map) = template else { return };
    let metadata = map
        .entry("metadata")
        .or_insert_with(|| Value::Object(Default::default()));
    if let Value::Object(meta) = metadata {
        meta.entry("creationTimestamp").or_insert(Value::Null);
    }
    let spec = map
        .entry("spec")
        .or_insert_with(|| Value::Object(Default::default()));
    if let Value::Object(spec) = spec {
        spec.entry("containers").or_insert(Value::Null);
        for list in ["initContainers", "containers"] {
            if let Some(Value::Array(containers)) = spec.get_mut(list) {
                for container in containers.iter_mut().filter_map(Value::as_object_mut) {
                    container
                        .entry("resources")
                        .or_insert_with(|| Value::Object(Default::default()));
                }
            }
        }
    }
}

/// FNV-32 (multiply, then xor), Go's `hash/fnv.New32`.
fn fnv32(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5_u32, |hash, &b| {
        hash.wrapping_mul(0x0100_0193) ^ u32::from(b)
    })
}

/// Kubernetes' `rand.SafeEncodeString`: digits become characters no word can be spelled from.
fn safe_encode(text: &str) -> String {
    const ALPHANUMS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    text.bytes()
        .map(|b| char::from(ALPHANUMS[usize::from(b) % ALPHANUMS.len()]))
        .collect()
}

/// The hash of revision data under a collision count.
pub fn revision_hash(data: &str, collision_count: i32) -> String {
    let mut bytes = data.as_bytes().to_vec();
    bytes.extend_from_slice(collision_count.to_string().as_bytes());
    safe_encode(&fnv32(&bytes).to_string())
}

/// `<prefix>-<hash>`, the prefix cut to 223 bytes (on a character boundary).
pub fn revision_name(cloneset: &str, hash: &str) -> String {
    let mut end = cloneset.len().min(MAX_PREFIX_LEN);
    while !cloneset.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}-{hash}", &cloneset[..end])
}

/// The part of a revision name after the last `-` (what `pod-template-hash` holds).
pub fn short_hash(revision: &str) -> &str {
    revision.rsplit_once('-').map_or(revision, |(_, hash)| hash)
}

/// Whether a pod's `controller-revision-hash` label names `revision` (full name or short hash).
pub fn label_names_revision(label: &str, revision: &str) -> bool {
    label == revision || short_hash(label) == short_hash(revision)
}

/// The controller ownerReference of everything a CloneSet creates.
pub fn owner_reference(cloneset: &CloneSet) -> OwnerReference {
    OwnerReference {
        api_version: "apps.kruise.io/v1alpha1".into(),
        kind: "CloneSet".into(),
        name: cloneset.metadata.name.clone().unwrap_or_default(),
        uid: cloneset.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// The revision the live CloneSet asks for, under `collision_count`, numbered `number`.
pub fn candidate(
    cloneset: &CloneSet,
    collision_count: i32,
    number: i64,
) -> Result<ControllerRevision, RevisionError> {
    let data = revision_data(&cloneset.spec.template)?;
    let hash = revision_hash(&data, collision_count);
    let name = revision_name(cloneset.metadata.name.as_deref().unwrap_or(""), &hash);
    let mut labels: BTreeMap<String, String> = cloneset
        .spec
        .template
        .metadata
        .as_ref()
        .and_then(|m| m.labels.clone())
        .unwrap_or_default();
    labels.insert(HASH_LABEL.into(), hash);
    let value: Value = serde_json::from_str(&data).map_err(RevisionError::Template)?;
    Ok(ControllerRevision {
        metadata: ObjectMeta {
            name: Some(name),
            namespace: cloneset.metadata.namespace.clone(),
            labels: Some(labels),
            annotations: cloneset.metadata.annotations.clone(),
            owner_references: Some(vec![owner_reference(cloneset)]),
            ..Default::default()
        },
        data: Some(RawExtension(value)),
        revision: number,
    })
}

/// The data of a stored revision in the canonical byte form [`revision_data`] produces.
pub fn stored_data(revision: &ControllerRevision) -> String {
    revision
        .data
        .as_ref()
        .map_or_else(|| "null".into(), |d| gojson::encode_value(&d.0))
}

/// The pod template a stored revision holds (without the `$patch` directive).
pub fn template_of(revision: &ControllerRevision) -> Result<PodTemplateSpec, RevisionError> {
    let name = revision.metadata.name.clone().unwrap_or_default();
    let mut template = revision
        .data
        .as_ref()
        .and_then(|d| d.0.pointer("/spec/template"))
        .cloned()
        .ok_or_else(|| RevisionError::Data {
            name: name.clone(),
            reason: "no spec.template".into(),
        })?;
    if let Value::Object(map) = &mut template {
        map.remove("$patch");
    }
    serde_json::from_value(template).map_err(|e| RevisionError::Data {
        name,
        reason: e.to_string(),
    })
}

/// Kubernetes' history order: by `.revision`, then creation time, then name.
pub fn sort_history(revisions: &mut [ControllerRevision]) {
    revisions.sort_by(|a, b| {
        a.revision
            .cmp(&b.revision)
            .then_with(|| {
                let time = |r: &ControllerRevision| r.metadata.creation_timestamp.clone();
                time(a).map(|t| t.0).cmp(&time(b).map(|t| t.0))
            })
            .then_with(|| a.metadata.name.cmp(&b.metadata.name))
    });
}

/// What to do to have an update revision matching the live template.
#[derive(Debug, Clone, PartialEq)]
pub enum UpdateRevision {
    /// The newest revision already holds this template.
    Latest { name: String },
    /// An older revision holds it (a rollback): give it the next number.
    Renumber { name: String, revision: i64 },
    /// None does: create this one (on AlreadyExists with other data, bump the collision count).
    Create(Box<ControllerRevision>),
}

/// Chooses the update revision among `history` (sorted by [`sort_history`]).
pub fn update_revision(
    cloneset: &CloneSet,
    history: &[ControllerRevision],
    collision_count: i32,
) -> Result<UpdateRevision, RevisionError> {
    let next_number = history.last().map_or(1, |r| r.revision + 1);
    let wanted = candidate(cloneset, collision_count, next_number)?;
    let data = stored_data(&wanted);
    let equal: Vec<&ControllerRevision> =
        history.iter().filter(|r| stored_data(r) == data).collect();
    let name_of = |r: &ControllerRevision| r.metadata.name.clone().unwrap_or_default();
    match (history.last(), equal.last()) {
        (Some(last), Some(_)) if stored_data(last) == data => Ok(UpdateRevision::Latest {
            name: name_of(last),
        }),
        (_, Some(older)) => Ok(UpdateRevision::Renumber {
            name: name_of(older),
            revision: next_number,
        }),
        _ => Ok(UpdateRevision::Create(Box::new(wanted))),
    }
}

/// Revisions to delete after a round: of those neither current, update, nor worn by an active
/// pod, the oldest, until at most `limit` of them remain (OpenKruise `truncateHistory` counts
/// only these against the limit).
pub fn history_to_truncate<'a>(
    history: &'a [ControllerRevision],
    live: &[&str],
    pod_labels: &[&str],
    limit: usize,
) -> Vec<&'a str> {
    let is_live = |name: &str| {
        live.contains(&name)
            || pod_labels
                .iter()
                .any(|label| label_names_revision(label, name))
    };
    let mut not_live: Vec<&str> = history
        .iter()
        .filter_map(|r| r.metadata.name.as_deref())
        .filter(|name| !is_live(name))
        .collect();
    not_live.truncate(not_live.len().saturating_sub(limit));
    not_live
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::Container;
    use serde_json::json;

    fn sample(image: &str) -> CloneSet {
        let mut set = CloneSet::new(
            "sample",
            serde_json::from_value(json!({
                "template": {
                    "metadata": {"labels": {"app": "sample"}},
                    "spec": {"containers": [{"name": "main", "image": image}]}
                }
            }))
            .unwrap(),
        );
        set.metadata.namespace = Some("default".into());
        set.metadata.uid = Some("uid-1".into());
        set
    }

    #[test]
    fn data_is_the_go_encoding_with_replace_directive() {
        let data = revision_data(&sample("nginx:alpine").spec.template).unwrap();
        assert_eq!(
            data,
            r#"{"spec":{"template":{"$patch":"replace","metadata":{"creationTimestamp":null,"labels":{"app":"sample"}},"spec":{"containers":[{"image":"nginx:alpine","name":"main","resources":{}}]}}}}"#
        );
    }

    #[test]
    fn hashes_match_the_go_algorithm() {
        let data = revision_data(&sample("nginx:alpine").spec.template).unwrap();
        let mut bytes = data.clone().into_bytes();
        bytes.push(b'0');
        assert_eq!(fnv32(&bytes), 2_823_198_129);
        assert_eq!(
            revision_name("sample", &revision_hash(&data, 0)),
            "sample-6d675fd56f"
        );
        assert_eq!(revision_hash(&data, 1), "6d675fd56d");
        assert_eq!(revision_hash(&data, 2), "6d675fd575");
        let other = revision_data(&sample("nginx:1.25").spec.template).unwrap();
        assert_eq!(revision_hash(&other, 0), "cd9bb944");
    }

    #[test]
    fn long_names_are_cut_before_the_hash() {
        let long = "a".repeat(300);
        assert_eq!(revision_name(&long, "h").len(), 225);
        assert_eq!(short_hash("sample-6d675fd56f"), "6d675fd56f");
        assert!(label_names_revision("6d675fd56f", "sample-6d675fd56f"));
        assert!(!label_names_revision("sample-x", "sample-6d675fd56f"));
    }

    #[test]
    fn candidate_carries_labels_annotations_owner_and_number() {
        let mut set = sample("nginx:alpine");
        set.metadata.annotations = Some([("team".to_string(), "a".to_string())].into());
        let revision = candidate(&set, 0, 3).unwrap();
        assert_eq!(revision.metadata.name.as_deref(), Some("sample-6d675fd56f"));
        assert_eq!(revision.revision, 3);
        let labels = revision.metadata.labels.unwrap();
        assert_eq!(labels[HASH_LABEL], "6d675fd56f");
        assert_eq!(labels["app"], "sample");
        assert_eq!(revision.metadata.annotations.unwrap()["team"], "a");
        assert_eq!(revision.metadata.owner_references.unwrap()[0].uid, "uid-1");
        let template = template_of(&candidate(&set, 0, 1).unwrap()).unwrap();
        assert_eq!(
            template.spec.unwrap().containers[0],
            Container {
                name: "main".into(),
                image: Some("nginx:alpine".into()),
                resources: Some(Default::default()),
                ..Default::default()
            }
        );
    }

    #[test]
    fn update_revision_reuses_creates_or_renumbers() {
        let v1 = sample("v1");
        let v2 = sample("v2");
        assert!(matches!(
            update_revision(&v1, &[], 0).unwrap(),
            UpdateRevision::Create(r) if r.revision == 1
        ));
        let r1 = candidate(&v1, 0, 1).unwrap();
        let r2 = candidate(&v2, 0, 2).unwrap();
        let history = vec![r1.clone(), r2.clone()];
        assert_eq!(
            update_revision(&v2, &history, 0).unwrap(),
            UpdateRevision::Latest {
                name: r2.metadata.name.clone().unwrap()
            }
        );
        assert_eq!(
            update_revision(&v1, &history, 0).unwrap(),
            UpdateRevision::Renumber {
                name: r1.metadata.name.clone().unwrap(),
                revision: 3
            }
        );
        // A collision count changes the name, not the data: still recognised.
        assert!(matches!(
            update_revision(&v2, &history, 4).unwrap(),
            UpdateRevision::Latest { .. }
        ));
    }

    #[test]
    fn truncation_keeps_live_and_worn_revisions() {
        let history: Vec<ControllerRevision> = (1..=5)
            .map(|n| {
                let mut r = candidate(&sample(&format!("v{n}")), 0, n).unwrap();
                r.metadata.name = Some(format!("cs-h{n}"));
                r
            })
            .collect();
        // Live: h5, h1 and h2 (a pod's short hash); h3 and h4 are within the limit of 2.
        let live = ["cs-h5", "cs-h1"];
        assert!(history_to_truncate(&history, &live, &["h2"], 2).is_empty());
        assert_eq!(history_to_truncate(&history, &live, &["h2"], 1), ["cs-h3"]);
        assert_eq!(
            history_to_truncate(&history, &live, &["h2"], 0),
            ["cs-h3", "cs-h4"]
        );
        let dropped = history_to_truncate(&history, &["cs-h5"], &[], 3);
        assert_eq!(dropped, ["cs-h1"]);
        assert!(history_to_truncate(&history, &[], &[], 10).is_empty());
    }
}
