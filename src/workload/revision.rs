//! ControllerRevisions of a workload, named and hashed byte for byte as OpenKruise (and the
//! Kubernetes history package it uses) does, so that pods and revisions written by either
//! controller are recognised by the other.
//!
//! - data: `{"spec":{"template":T}}` with T the template as Go encodes a `PodTemplateSpec`, keys
//!   sorted at every level, plus `"$patch":"replace"`;
//! - hash and name: Kubernetes' ([`crate::k8s::history`]).
//!
//! The kinds differ only in how pods and revisions name each other ([`RevisionScheme`]). The
//! Advanced DaemonSet's Go controller hashes with `ComputeHash` over a Go struct dump that no
//! other program can reproduce; new DaemonSet revisions are hashed as above, and its pods always
//! take the hash from the revision's label, so revisions Go created keep their Go hash.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::runtime::RawExtension;
use serde_json::Value;

use super::Workload;
use super::pod;
use crate::api::keys;
use crate::k8s::gojson;
use crate::k8s::history::{Equivalent, find_equivalent};
pub use crate::k8s::history::{
    HASH_LABEL, revision_hash, revision_name, sort_history, stored_data,
};
use crate::podmarks::PodView;

/// What a pod's `controller-revision-hash` label holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PodRevisionLabel {
    /// The revision's name (`web-6d675fd56f`).
    Name,
    /// The revision's hash label (`6d675fd56f`).
    Hash,
}

/// How a pod's revision label is compared with a revision (OpenKruise's revision adapters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RevisionMatch {
    /// The full name, or the same short hash (the CloneSet's own adapter).
    NameOrShortHash,
    /// The exact string (`revisionadapter.NewDefaultImpl`).
    Exact,
}

/// How one workload kind's pods and ControllerRevisions name each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RevisionScheme {
    /// The label on a ControllerRevision that holds its hash.
    pub hash_label: &'static str,
    pub pod_label: PodRevisionLabel,
    pub matching: RevisionMatch,
    /// Pods also carry the short hash as `pod-template-hash`.
    pub template_hash: bool,
}

impl RevisionScheme {
    pub const CLONESET: RevisionScheme = RevisionScheme {
        hash_label: HASH_LABEL,
        pod_label: PodRevisionLabel::Name,
        matching: RevisionMatch::NameOrShortHash,
        template_hash: true,
    };
    pub const STATEFULSET: RevisionScheme = RevisionScheme {
        hash_label: HASH_LABEL,
        pod_label: PodRevisionLabel::Name,
        matching: RevisionMatch::Exact,
        template_hash: false,
    };
    pub const DAEMONSET: RevisionScheme = RevisionScheme {
        hash_label: keys::CONTROLLER_REVISION_HASH,
        pod_label: PodRevisionLabel::Hash,
        matching: RevisionMatch::Exact,
        template_hash: false,
    };

    /// What the pods of `revision` carry as `controller-revision-hash`: its name, or its hash
    /// label (a revision without one is named by its name, as OpenKruise labels it).
    pub fn pod_value<'a>(&self, revision: &'a ControllerRevision) -> &'a str {
        let name = revision.metadata.name.as_deref().unwrap_or("");
        match self.pod_label {
            PodRevisionLabel::Name => name,
            PodRevisionLabel::Hash => revision
                .metadata
                .labels
                .as_ref()
                .and_then(|l| l.get(self.hash_label))
                .map_or(name, String::as_str),
        }
    }

    /// Whether a pod's revision label `label` names the revision the pods know as `revision`.
    pub fn names(&self, label: &str, revision: &str) -> bool {
        match self.matching {
            RevisionMatch::NameOrShortHash => label_names_revision(label, revision),
            RevisionMatch::Exact => label == revision,
        }
    }

    /// Whether pod `p` is at `revision` (its `controller-revision-hash` label names it).
    pub fn pod_at<P: PodView + ?Sized>(&self, p: &P, revision: &str) -> bool {
        pod::label(p, keys::CONTROLLER_REVISION_HASH).is_some_and(|l| self.names(l, revision))
    }

    /// Revisions to delete after a round: of those neither live (`live`) nor worn by an active
    /// pod (`pod_labels`), the oldest, until at most `limit` of them remain (OpenKruise
    /// `truncateHistory` counts only these against the limit).
    pub fn history_to_truncate<'a>(
        &self,
        history: &'a [ControllerRevision],
        live: &[&str],
        pod_labels: &[&str],
        limit: usize,
    ) -> Vec<&'a str> {
        let is_live = |r: &ControllerRevision| {
            let value = self.pod_value(r);
            live.contains(&value) || pod_labels.iter().any(|label| self.names(label, value))
        };
        let mut not_live: Vec<&str> = history
            .iter()
            .filter(|r| !is_live(r))
            .filter_map(|r| r.metadata.name.as_deref())
            .collect();
        not_live.truncate(not_live.len().saturating_sub(limit));
        not_live
    }
}
#[derive(Debug, thiserror::Error)]
pub enum RevisionError {
    #[error("spec.template cannot be encoded: {0}")]
    Template(serde_json::Error),
    #[error("ControllerRevision {name}: data is not a pod template revision: {reason}")]
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

/// The part of a revision name after the last `-` (what `pod-template-hash` holds).
pub fn short_hash(revision: &str) -> &str {
    revision.rsplit_once('-').map_or(revision, |(_, hash)| hash)
}

/// Whether a pod's `controller-revision-hash` label names `revision` (full name or short hash).
pub fn label_names_revision(label: &str, revision: &str) -> bool {
    label == revision || short_hash(label) == short_hash(revision)
}

/// The revision the live workload asks for, under `collision_count`, numbered `number`.
pub fn candidate<W: Workload>(
    set: &W,
    collision_count: i32,
    number: i64,
) -> Result<ControllerRevision, RevisionError> {
    let data = revision_data(set.template())?;
    let hash = revision_hash(&data, collision_count);
    let name = revision_name(set.name(), &hash);
    let mut labels: BTreeMap<String, String> = set
        .template()
        .metadata
        .as_ref()
        .and_then(|m| m.labels.clone())
        .unwrap_or_default();
    labels.insert(W::REVISIONS.hash_label.into(), hash);
    let value: Value = serde_json::from_str(&data).map_err(RevisionError::Template)?;
    Ok(ControllerRevision {
        metadata: ObjectMeta {
            name: Some(name),
            namespace: set.meta().namespace.clone(),
            labels: Some(labels),
            annotations: set.meta().annotations.clone(),
            owner_references: Some(vec![set.owner_reference()]),
            ..Default::default()
        },
        data: Some(RawExtension(value)),
        revision: number,
    })
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
pub fn update_revision<W: Workload>(
    set: &W,
    history: &[ControllerRevision],
    collision_count: i32,
) -> Result<UpdateRevision, RevisionError> {
    let next_number = history.last().map_or(1, |r| r.revision + 1);
    let wanted = candidate(set, collision_count, next_number)?;
    let data = stored_data(&wanted);
    let name_of = |i: usize| history[i].metadata.name.clone().unwrap_or_default();
    match find_equivalent(history.len(), |i| stored_data(&history[i]) == data) {
        Equivalent::Latest(i) => Ok(UpdateRevision::Latest { name: name_of(i) }),
        Equivalent::Older(i) => Ok(UpdateRevision::Renumber {
            name: name_of(i),
            revision: next_number,
        }),
        Equivalent::None => Ok(UpdateRevision::Create(Box::new(wanted))),
    }
}

/// What a shell does with [`update_revision`]'s answer where the history is kept in memory (the
/// simulated cluster): the revision renumbered or added, `history` sorted again; its name.
pub fn keep_update_revision<W: Workload>(
    set: &W,
    history: &mut Vec<ControllerRevision>,
    collision_count: i32,
) -> Result<String, RevisionError> {
    Ok(match update_revision(set, history, collision_count)? {
        UpdateRevision::Latest { name } => name,
        UpdateRevision::Renumber { name, revision } => {
            if let Some(r) = history
                .iter_mut()
                .find(|r| r.metadata.name.as_deref() == Some(&name))
            {
                r.revision = revision;
            }
            sort_history(history);
            name
        }
        UpdateRevision::Create(r) => {
            let name = r.metadata.name.clone().unwrap_or_default();
            history.push(*r);
            sort_history(history);
            name
        }
    })
}

#[cfg(test)]
mod tests;
