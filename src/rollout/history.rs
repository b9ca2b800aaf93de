//! A SidecarSet's revision history, decided as OpenKruise's SidecarSet controller keeps it
//! (`registerLatestRevision`, `truncateHistory`): which revision is the latest (the newest one
//! equal to the set is reused, an older equal one is renumbered — a rollback —, else one is
//! created), the custom-version label it gets, and which old revisions go. The shell lists,
//! creates, patches and deletes; nothing here does I/O.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use k8s_openapi::apimachinery::pkg::runtime::RawExtension;
use k8s_openapi::jiff::Timestamp;
use kube::Resource;
use sha2::{Digest, Sha256};

use crate::api::{SidecarSet, keys};
use crate::inject::revision::revision_data;
use crate::k8s::history::{self, Equivalent, HASH_LABEL, find_equivalent};
use crate::podmarks::PodView;

/// `revisionHistoryLimit` when the set leaves it out.
const DEFAULT_HISTORY_LIMIT: i32 = 10;

/// A ControllerRevision of a SidecarSet as this process holds it: what choosing, truncating and
/// resolving revisions read. The data is held as a digest only (most sets never inject a
/// revision, and 50,000 sets have at least as many revisions).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldRevision {
    pub name: Box<str>,
    pub uid: Box<str>,
    /// Its `kruise.io/sidecarset-name` label.
    pub set: Box<str>,
    /// `.revision`.
    pub number: i64,
    pub created: Option<Timestamp>,
    /// Its `apps.kruise.io/sidecarset-custom-version` label.
    pub custom_version: Option<Box<str>>,
    /// The uid of its controller (owner reference with `controller: true`).
    pub controller: Option<Box<str>>,
    /// [`data_digest`] of its data.
    pub digest: u128,
}

/// A digest of revision data in canonical bytes: equal digests, equal data.
pub fn data_digest(canonical: &str) -> u128 {
    let sum = Sha256::digest(canonical.as_bytes());
    let mut first = [0u8; 16];
    first.copy_from_slice(&sum[..16]);
    u128::from_be_bytes(first)
}

/// The revisions of `set` among `held` (those of its name), in Kubernetes' history order: those
/// another object controls are not its own (a set deleted and created again under the name).
pub fn own_history<'a>(
    set: &SidecarSet,
    held: impl IntoIterator<Item = &'a HeldRevision>,
) -> Vec<&'a HeldRevision> {
    let uid = set.meta().uid.as_deref().unwrap_or("");
    let mut own: Vec<&HeldRevision> = held
        .into_iter()
        .filter(|r| &*r.set == set.name())
        .filter(|r| r.controller.as_deref().is_none_or(|c| c == uid))
        .collect();
    own.sort_by(|a, b| (a.number, a.created, &a.name).cmp(&(b.number, b.created, &b.name)));
    own
}

/// The revision of `set` as OpenKruise creates it, numbered `number`, named under
/// `collision_count`, in `namespace` (the manager's).
pub fn candidate(
    set: &SidecarSet,
    namespace: &str,
    number: i64,
    collision_count: i32,
) -> ControllerRevision {
    let data = revision_data(set);
    let hash = history::revision_hash(&data, collision_count);
    let mut labels: BTreeMap<String, String> = set.metadata.labels.clone().unwrap_or_default();
    labels.insert(HASH_LABEL.into(), hash.clone());
    labels.insert(keys::SIDECARSET_NAME_LABEL.into(), set.name().into());
    if let Some(version) = custom_version(set) {
        labels.insert(keys::SIDECARSET_CUSTOM_VERSION.into(), version.into());
    }
    let owner = OwnerReference {
        api_version: SidecarSet::api_version(&()).into_owned(),
        kind: SidecarSet::kind(&()).into_owned(),
        name: set.name().into(),
        uid: set.meta().uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    };
    ControllerRevision {
        metadata: ObjectMeta {
            name: Some(history::revision_name(set.name(), &hash)),
            namespace: Some(namespace.into()),
            labels: Some(labels),
            annotations: set.metadata.annotations.clone(),
            owner_references: Some(vec![owner]),
            ..Default::default()
        },
        data: Some(RawExtension(
            serde_json::from_str(&data).unwrap_or(serde_json::Value::Null),
        )),
        revision: number,
    }
}

fn custom_version(set: &SidecarSet) -> Option<&str> {
    set.spec.custom_version.as_deref().filter(|v| !v.is_empty())
}

/// What makes the latest revision match the set.
#[derive(Debug, Clone, PartialEq)]
pub enum Latest {
    /// The newest revision already holds the set.
    Reuse { name: String },
    /// An older revision holds it (a rollback): it takes the next number.
    Renumber { name: String, number: i64 },
    /// None does: create this one (on a name taken by other data, bump the collision count).
    Create(Box<ControllerRevision>),
}

impl Latest {
    /// The latest revision's name (a created one's before any collision renames it).
    pub fn name(&self) -> &str {
        match self {
            Latest::Reuse { name } | Latest::Renumber { name, .. } => name,
            Latest::Create(revision) => revision.metadata.name.as_deref().unwrap_or(""),
        }
    }
}

/// One reconcile's work on the history.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryPlan {
    pub latest: Latest,
    /// The custom-version label the latest revision is given (`spec.customVersion`, when its
    /// label says otherwise).
    pub label_custom_version: Option<String>,
    /// Revisions to delete, oldest first.
    pub delete: Vec<String>,
    /// Why the history stays above the limit (every revision beyond it is in use), in
    /// OpenKruise's words.
    pub over_limit: Option<String>,
}

/// Plans `set`'s history: `history` is [`own_history`], `pods` the pods the set matches (their
/// recorded revisions stay), `namespace` where revisions live.
pub fn plan_history<P: PodView>(
    set: &SidecarSet,
    history: &[&HeldRevision],
    pods: &[Arc<P>],
    namespace: &str,
) -> HistoryPlan {
    let collision_count = set
        .status
        .as_ref()
        .and_then(|s| s.collision_count)
        .unwrap_or(0);
    let number = history.last().map_or(1, |r| r.number + 1);
    let wanted = candidate(set, namespace, number, collision_count);
    let digest = data_digest(&revision_data(set));
    // The history after this round, in order, the latest last: (name, custom-version label).
    let mut after: Vec<(&str, Option<&str>)> = history
        .iter()
        .map(|r| (&*r.name, r.custom_version.as_deref()))
        .collect();
    let latest = match find_equivalent(history.len(), |i| history[i].digest == digest) {
        Equivalent::Latest(i) => Latest::Reuse {
            name: history[i].name.to_string(),
        },
        Equivalent::Older(i) => {
            let moved = after.remove(i);
            after.push(moved);
            Latest::Renumber {
                name: history[i].name.to_string(),
                number,
            }
        }
        Equivalent::None => Latest::Create(Box::new(wanted)),
    };
    if let Latest::Create(created) = &latest {
        after.push((created.metadata.name.as_deref().unwrap_or(""), None));
    }
    let label_custom_version = match (&latest, after.last()) {
        (Latest::Create(_), _) => None,
        (_, Some((_, label))) => custom_version(set)
            .filter(|v| *label != Some(*v))
            .map(str::to_string),
        (_, None) => None,
    };
    // The latest carries the set's custom version once this round is done.
    if let (Some(version), Some(last)) = (custom_version(set), after.last_mut()) {
        last.1 = Some(version);
    }
    let active = active_revisions(set, &after, pods);
    let names: Vec<&str> = after.iter().map(|(name, _)| *name).collect();
    let (delete, over_limit) = truncate(set, &names, &active);
    HistoryPlan {
        latest,
        label_custom_version,
        delete,
        over_limit,
    }
}

/// The revisions truncation keeps whatever the limit, of the history `after` (name, custom
/// version; latest last): those pods run, the `revisionName` new pods get, and the newest
/// revision of the `customVersion` they get.
fn active_revisions<P: PodView>(
    set: &SidecarSet,
    after: &[(&str, Option<&str>)],
    pods: &[Arc<P>],
) -> BTreeSet<String> {
    let mut active: BTreeSet<String> = pods
        .iter()
        .filter_map(|pod| pod.recorded_revision(set.name()).map(|r| r.into_owned()))
        .collect();
    let revision = set
        .spec
        .injection_strategy
        .as_ref()
        .and_then(|s| s.revision.as_ref());
    if let Some(revision) = revision {
        active.extend(revision.revision_name.clone());
        if let Some(wanted) = revision.custom_version.as_deref() {
            let newest = after.iter().rev().find(|(_, label)| *label == Some(wanted));
            active.extend(newest.map(|(name, _)| name.to_string()));
        }
    }
    active
}

/// OpenKruise's `truncateHistory` over the history `names` (latest last): beyond the limit
/// (`revisionHistoryLimit`, at least 1), the oldest revisions not in `active` go; never the
/// latest.
fn truncate(
    set: &SidecarSet,
    names: &[&str],
    active: &BTreeSet<String>,
) -> (Vec<String>, Option<String>) {
    let limit = set
        .spec
        .revision_history_limit
        .unwrap_or(DEFAULT_HISTORY_LIMIT)
        .max(1);
    let limit = usize::try_from(limit).unwrap_or(1);
    let Some(mut excess) = names.len().checked_sub(limit).filter(|&e| e > 0) else {
        return (Vec::new(), None);
    };
    let mut delete = Vec::new();
    for name in &names[..names.len() - 1] {
        if excess == 0 {
            break;
        }
        if !active.contains(*name) {
            delete.push(name.to_string());
            excess -= 1;
        }
    }
    let over_limit = (excess > 0).then(|| {
        format!(
            "failed to limit the number of stored revisions, limited: {limit}, actual: {}, name: {}",
            limit + excess,
            set.name()
        )
    });
    (delete, over_limit)
}

#[cfg(test)]
mod tests;
