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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::CloneSetBuilder;
    use crate::api::cloneset::CloneSet;
    use crate::k8s::history::fnv32;
    use k8s_openapi::api::core::v1::Container;

    fn sample(image: &str) -> CloneSet {
        CloneSetBuilder::new("sample")
            .uid("uid-1")
            .image(image)
            .build()
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
        assert!(
            RevisionScheme::CLONESET
                .history_to_truncate(&history, &live, &["h2"], 2)
                .is_empty()
        );
        assert_eq!(
            RevisionScheme::CLONESET.history_to_truncate(&history, &live, &["h2"], 1),
            ["cs-h3"]
        );
        assert_eq!(
            RevisionScheme::CLONESET.history_to_truncate(&history, &live, &["h2"], 0),
            ["cs-h3", "cs-h4"]
        );
        let dropped = RevisionScheme::CLONESET.history_to_truncate(&history, &["cs-h5"], &[], 3);
        assert_eq!(dropped, ["cs-h1"]);
        assert!(
            RevisionScheme::CLONESET
                .history_to_truncate(&history, &[], &[], 10)
                .is_empty()
        );
    }
}
