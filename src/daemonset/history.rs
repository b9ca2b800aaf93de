//! The DaemonSet's ControllerRevisions (upstream `constructHistory`): which one is current, the
//! duplicates to fold, the renumbering of a rollback, or the revision to create; and the old ones
//! to delete beyond `revisionHistoryLimit` (`cleanupHistory`).
//!
//! Revision data is the CloneSet's ([`crate::cloneset::revision::revision_data`]); a revision
//! matches the template when its data is byte-equal. New revisions are named `<set>-<hash>` with
//! the CloneSet's hash function; the hash pods carry is always read from the revision's
//! `controller-revision-hash` label, so revisions an OpenKruise manager made keep working.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::runtime::RawExtension;

use super::daemon_pod::owner_reference;
use super::in_place::revision_hash;
use crate::api::daemonset::DaemonSet;
use crate::api::keys;
use crate::cloneset::revision::{
    RevisionError, revision_data, revision_hash as hash_of, revision_name, stored_data,
};

/// What to do about the current revision.
#[derive(Debug, Clone, PartialEq)]
pub enum Current {
    /// This revision holds the template; give it `renumber` when that is set (a rollback).
    Existing { name: String, renumber: Option<i64> },
    /// None does: create this one. On AlreadyExists with other data, bump the collision count.
    Create(Box<ControllerRevision>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct HistoryPlan {
    pub current: Current,
    /// Revisions without a `controller-revision-hash` label: labelled with their own name.
    pub label_with_name: Vec<String>,
    /// Other revisions holding the same template: deleted, after `relabel_pods`.
    pub duplicates: Vec<String>,
    /// With duplicates: every pod whose hash is not the kept revision's gets it (upstream
    /// `dedupCurHistories`). Pod names.
    pub relabel_pods_to: Option<String>,
}

/// `history`: every revision the DaemonSet owns.
pub fn plan_history(
    set: &DaemonSet,
    history: &[ControllerRevision],
    collision_count: i32,
) -> Result<HistoryPlan, RevisionError> {
    let data = revision_data(&set.spec.template)?;
    let label_with_name = history
        .iter()
        .filter(|r| {
            r.metadata
                .labels
                .as_ref()
                .and_then(|l| l.get(keys::CONTROLLER_REVISION_HASH))
                .is_none()
        })
        .filter_map(|r| r.metadata.name.clone())
        .collect();
    let (matching, old): (Vec<&ControllerRevision>, Vec<&ControllerRevision>) =
        history.iter().partition(|r| stored_data(r) == data);
    let next = old.iter().map(|r| r.revision).max().unwrap_or(0) + 1;
    let name = |r: &ControllerRevision| r.metadata.name.clone().unwrap_or_default();
    let Some(keep) = matching.iter().copied().max_by(|a, b| {
        a.revision
            .cmp(&b.revision)
            .then_with(|| b.metadata.name.cmp(&a.metadata.name))
    }) else {
        return Ok(HistoryPlan {
            current: Current::Create(Box::new(candidate(set, &data, collision_count, next))),
            label_with_name,
            duplicates: Vec::new(),
            relabel_pods_to: None,
        });
    };
    let duplicates: Vec<String> = matching
        .iter()
        .filter(|r| r.metadata.name != keep.metadata.name)
        .map(|r| name(r))
        .collect();
    Ok(HistoryPlan {
        current: Current::Existing {
            name: name(keep),
            renumber: (keep.revision < next).then_some(next),
        },
        label_with_name,
        relabel_pods_to: (!duplicates.is_empty()).then(|| hash_label(keep)),
        duplicates,
    })
}

/// The hash a revision stands for; a revision without the label stands for its name.
pub fn hash_label(revision: &ControllerRevision) -> String {
    match revision_hash(revision) {
        "" => revision.metadata.name.clone().unwrap_or_default(),
        hash => hash.to_string(),
    }
}

/// The revision of the live template, numbered `number`.
fn candidate(set: &DaemonSet, data: &str, collision_count: i32, number: i64) -> ControllerRevision {
    let hash = hash_of(data, collision_count);
    let mut labels: BTreeMap<String, String> = set
        .spec
        .template
        .metadata
        .as_ref()
        .and_then(|m| m.labels.clone())
        .unwrap_or_default();
    labels.insert(keys::CONTROLLER_REVISION_HASH.into(), hash.clone());
    ControllerRevision {
        metadata: ObjectMeta {
            name: Some(revision_name(
                set.metadata.name.as_deref().unwrap_or(""),
                &hash,
            )),
            namespace: set.metadata.namespace.clone(),
            labels: Some(labels),
            annotations: set.metadata.annotations.clone(),
            owner_references: Some(vec![owner_reference(set)]),
            ..Default::default()
        },
        // The data was produced from JSON: it parses.
        data: serde_json::from_str(data).ok().map(RawExtension),
        revision: number,
    }
}

/// Upstream `cleanupHistory`: old revisions beyond `revisionHistoryLimit` (default 10), lowest
/// `.revision` first, skipping those whose hash some claimed pod carries.
pub fn to_delete<'a>(
    set: &DaemonSet,
    old: &[&'a ControllerRevision],
    pod_hashes: &[&str],
) -> Vec<&'a str> {
    let keep = usize::try_from(set.spec.revision_history_limit.unwrap_or(10)).unwrap_or(0);
    let mut kill = old.len().saturating_sub(keep);
    let mut sorted = old.to_vec();
    sorted.sort_by_key(|r| r.revision);
    let mut out = Vec::new();
    for revision in sorted {
        if kill == 0 {
            break;
        }
        let hash = revision_hash(revision);
        if pod_hashes.contains(&hash) && !hash.is_empty() {
            continue;
        }
        if let Some(name) = revision.metadata.name.as_deref() {
            out.push(name);
            kill -= 1;
        }
    }
    out
}

#[cfg(test)]
mod tests;
