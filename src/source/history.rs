//! The SidecarSet revision history as this process holds it, the pure part: a watch of the
//! ControllerRevisions labelled `kruise.io/sidecarset-name` in the manager's namespace in, an
//! index out, which the catalogue resolves `injectionStrategy.revision` against, the validating
//! webhook checks revisions against, and the SidecarSet controller plans each set's history from.
//!
//! What it costs follows the sets that use revisions, not the history: each revision is held as
//! a [`HeldRevision`] (name, number, labels, owner, a digest of its data: about 200 bytes); the
//! data and hash annotations a revision restores are kept only for the revisions of sets that
//! name one in `injectionStrategy.revision` (most never do). A set that starts naming one has its
//! revisions' content read again ([`RevisionIndex::missing_content`], one GET each); until it
//! arrives, pods the set matches are refused as still being read.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, RwLock};

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource;
use kube::runtime::watcher::Event;
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use crate::api::{SidecarSet, SidecarSetInjectRevision, keys};
use crate::inject::revision::{RevisionContent, requested, restore};
use crate::k8s::gojson;
use crate::k8s::history::injection_revision_not_found;
use crate::k8s::lenient::Lenient;
use crate::k8s::owner;
use crate::rollout::history::{HeldRevision, data_digest, own_history};
use crate::validate::sidecarset::RevisionHistory;

/// A ControllerRevision of the watch: what is held of it, and its content until the index
/// decides whether to keep it. Decoded straight from the answer's text, so a list of 50,000
/// never holds them as full objects.
#[derive(Debug, Clone)]
pub struct WatchedRevision {
    /// Name, namespace, uid and resourceVersion (what the watch itself reads).
    metadata: ObjectMeta,
    pub held: HeldRevision,
    pub content: Arc<RevisionContent>,
}

impl Resource for WatchedRevision {
    type DynamicType = ();
    type Scope = k8s_openapi::NamespaceResourceScope;

    fn kind(_: &()) -> std::borrow::Cow<'_, str> {
        ControllerRevision::kind(&())
    }
    fn group(_: &()) -> std::borrow::Cow<'_, str> {
        ControllerRevision::group(&())
    }
    fn version(_: &()) -> std::borrow::Cow<'_, str> {
        ControllerRevision::version(&())
    }
    fn api_version(_: &()) -> std::borrow::Cow<'_, str> {
        ControllerRevision::api_version(&())
    }
    fn plural(_: &()) -> std::borrow::Cow<'_, str> {
        ControllerRevision::plural(&())
    }
    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

impl<'de> Deserialize<'de> for WatchedRevision {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Wire {
            #[serde(default)]
            metadata: ObjectMeta,
            #[serde(default)]
            revision: i64,
            #[serde(default)]
            data: Option<Box<RawValue>>,
        }
        let wire = Wire::deserialize(deserializer)?;
        let data = match &wire.data {
            Some(raw) => serde_json::from_str(raw.get()).map_err(serde::de::Error::custom)?,
            None => serde_json::Value::Null,
        };
        Ok(WatchedRevision::new(wire.metadata, wire.revision, &data))
    }
}

impl WatchedRevision {
    fn new(metadata: ObjectMeta, number: i64, data: &serde_json::Value) -> Self {
        // Canonical bytes: data written by Go and by this project compare equal.
        let canonical = gojson::encode_value(data);
        let label = |key: &str| {
            let labels = metadata.labels.as_ref();
            labels.and_then(|l| l.get(key)).map(|v| v.as_str().into())
        };
        let annotation = |key: &str| {
            let annotations = metadata.annotations.as_ref();
            annotations.and_then(|a| a.get(key)).cloned()
        };
        let name: Box<str> = metadata.name.as_deref().unwrap_or("").into();
        let held = HeldRevision {
            name: name.clone(),
            uid: metadata.uid.as_deref().unwrap_or("").into(),
            set: label(keys::SIDECARSET_NAME_LABEL).unwrap_or_default(),
            number,
            created: metadata.creation_timestamp.as_ref().map(|t| t.0),
            custom_version: label(keys::SIDECARSET_CUSTOM_VERSION),
            controller: owner::controller_of(&metadata).map(|o| o.uid.as_str().into()),
            digest: data_digest(&canonical),
        };
        let content = Arc::new(RevisionContent {
            name: name.into(),
            data: canonical,
            hash: annotation(keys::SIDECARSET_HASH),
            hash_without_image: annotation(keys::SIDECARSET_HASH_WITHOUT_IMAGE),
        });
        let metadata = ObjectMeta {
            name: metadata.name,
            namespace: metadata.namespace,
            uid: metadata.uid,
            resource_version: metadata.resource_version,
            ..Default::default()
        };
        WatchedRevision {
            metadata,
            held,
            content,
        }
    }

    /// A revision read by a GET (its content, asked for by [`RevisionIndex::missing_content`]).
    pub fn from_object(revision: &ControllerRevision) -> Self {
        let data = revision
            .data
            .as_ref()
            .map(|d| d.0.clone())
            .unwrap_or_default();
        WatchedRevision::new(revision.metadata.clone(), revision.revision, &data)
    }
}

/// One revision held: its summary, and its content when a set injects it.
#[derive(Debug, Clone)]
struct Entry {
    held: HeldRevision,
    content: Option<Arc<RevisionContent>>,
}

/// The revisions of the manager's namespace, by SidecarSet.
#[derive(Debug, Default)]
pub struct RevisionIndex {
    by_set: HashMap<Box<str>, Vec<Entry>>,
    /// A (re)list in progress; replaces `by_set` at `InitDone`.
    relisting: Option<HashMap<Box<str>, Vec<Entry>>>,
    synced: bool,
    /// Sets whose revisions' content is kept (they name a revision to inject), and revision
    /// names such sets name.
    wanted_sets: HashSet<Box<str>>,
    wanted_names: HashSet<Box<str>>,
}

/// The index, shared by the catalogue thread (which writes it), the validating webhook and the
/// SidecarSet controller.
pub type SharedRevisions = Arc<RwLock<RevisionIndex>>;

/// An empty shared index.
pub fn shared() -> SharedRevisions {
    Arc::new(RwLock::new(RevisionIndex::default()))
}

/// The index, for reading. A writer that panicked left no half-applied event (each is applied
/// whole), so a poisoned lock still holds a usable index.
pub fn read(shared: &SharedRevisions) -> std::sync::RwLockReadGuard<'_, RevisionIndex> {
    shared
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The index, for writing (poisoning as in [`read`]).
pub fn write(shared: &SharedRevisions) -> std::sync::RwLockWriteGuard<'_, RevisionIndex> {
    shared
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Why a set's revision cannot be injected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unresolved {
    pub message: String,
    /// The revision is held but its content is still being read: transient, not reported.
    pub pending: bool,
}

impl RevisionIndex {
    /// Applies one event of the watch; returns the sets whose revisions changed (`None`: a list
    /// completed, any may have).
    pub fn apply(&mut self, event: Event<Lenient<WatchedRevision>>) -> Option<Vec<Box<str>>> {
        match event {
            Event::Init => {
                self.relisting = Some(HashMap::new());
                Some(Vec::new())
            }
            Event::InitApply(object) => {
                if let Ok(revision) = object.into_result() {
                    let entry = self.entry(revision);
                    let buffer = self.relisting.get_or_insert_with(HashMap::new);
                    insert(buffer, entry);
                }
                Some(Vec::new())
            }
            Event::InitDone => {
                self.by_set = self.relisting.take().unwrap_or_default();
                self.synced = true;
                None
            }
            Event::Apply(object) => match object.into_result() {
                Ok(revision) => {
                    let set = revision.held.set.clone();
                    let entry = self.entry(revision);
                    insert(&mut self.by_set, entry);
                    Some(vec![set])
                }
                // A revision the types refuse is held as absent.
                Err(refusal) => Some(self.remove(refusal.metadata.name.as_deref())),
            },
            Event::Delete(object) => Some(self.remove(object.meta().name.as_deref())),
        }
    }

    fn entry(&self, revision: WatchedRevision) -> Entry {
        let keep = self.wanted_sets.contains(&revision.held.set)
            || self.wanted_names.contains(&revision.held.name);
        Entry {
            held: revision.held,
            content: keep.then_some(revision.content),
        }
    }

    fn remove(&mut self, name: Option<&str>) -> Vec<Box<str>> {
        let Some(name) = name else { return Vec::new() };
        let Some(set) = self.set_of(name) else {
            return Vec::new();
        };
        if let Some(entries) = self.by_set.get_mut(&set) {
            entries.retain(|e| &*e.held.name != name);
            if entries.is_empty() {
                self.by_set.remove(&set);
            }
        }
        vec![set]
    }

    /// The set holding revision `name`: the one its name starts with (`<set>-<hash>`), else any.
    fn set_of(&self, name: &str) -> Option<Box<str>> {
        let holds = |entries: &Vec<Entry>| entries.iter().any(|e| &*e.held.name == name);
        if let Some((prefix, _)) = name.rsplit_once('-')
            && self.by_set.get(prefix).is_some_and(holds)
        {
            return Some(prefix.into());
        }
        self.by_set
            .iter()
            .find(|(_, entries)| holds(entries))
            .map(|(set, _)| set.clone())
    }

    fn find_by_name(&self, name: &str) -> Option<&Entry> {
        let set = self.set_of(name)?;
        self.by_set
            .get(&set)?
            .iter()
            .find(|e| &*e.held.name == name)
    }

    /// The newest revision of `set` labelled with `custom_version` (OpenKruise lists by labels,
    /// whoever owns them).
    fn newest_with_custom_version(&self, set: &str, custom_version: &str) -> Option<&Entry> {
        let mut labelled: Vec<&Entry> = self
            .by_set
            .get(set)?
            .iter()
            .filter(|e| e.held.custom_version.as_deref() == Some(custom_version))
            .collect();
        labelled.sort_by(|a, b| {
            let key = |e: &&Entry| (e.held.number, e.held.created, e.held.name.clone());
            key(a).cmp(&key(b))
        });
        labelled.pop()
    }

    fn lookup(&self, set: &str, revision: &SidecarSetInjectRevision) -> Option<&Entry> {
        match (&revision.revision_name, &revision.custom_version) {
            (Some(name), _) => self.find_by_name(name),
            (None, Some(version)) => self.newest_with_custom_version(set, version),
            (None, None) => None,
        }
    }

    /// Whether the watch has listed once.
    pub fn is_synced(&self) -> bool {
        self.synced
    }

    /// Number of revisions held.
    pub fn len(&self) -> usize {
        self.by_set.values().map(Vec::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.by_set.is_empty()
    }

    /// `set`'s own revisions, in history order (see [`own_history`]).
    pub fn history_of(&self, set: &SidecarSet) -> Vec<HeldRevision> {
        let held = self.by_set.get(set.name()).into_iter().flatten();
        own_history(set, held.map(|e| &e.held))
            .into_iter()
            .cloned()
            .collect()
    }

    /// Keeps the content of the revisions the sets in `using` (name → the revision they inject)
    /// may inject; drops it for the others.
    pub fn set_wanted<'a>(
        &mut self,
        using: impl IntoIterator<Item = (&'a str, &'a SidecarSetInjectRevision)>,
    ) {
        let mut sets = HashSet::new();
        let mut names = HashSet::new();
        for (set, revision) in using {
            sets.insert(Box::<str>::from(set));
            names.extend(revision.revision_name.as_deref().map(Box::<str>::from));
        }
        if sets == self.wanted_sets && names == self.wanted_names {
            return;
        }
        (self.wanted_sets, self.wanted_names) = (sets, names);
        for (set, entries) in &mut self.by_set {
            let set_wanted = self.wanted_sets.contains(set);
            for entry in entries {
                if !set_wanted && !self.wanted_names.contains(&entry.held.name) {
                    entry.content = None;
                }
            }
        }
    }

    /// Revisions whose content is wanted and not held: to be read again.
    pub fn missing_content(&self) -> Vec<String> {
        let mut missing = Vec::new();
        for (set, entries) in &self.by_set {
            let set_wanted = self.wanted_sets.contains(set);
            for entry in entries.iter().filter(|e| e.content.is_none()) {
                if set_wanted || self.wanted_names.contains(&entry.held.name) {
                    missing.push(entry.held.name.to_string());
                }
            }
        }
        missing.sort();
        missing
    }

    /// Adds the content of a revision read again, if the index still holds that very revision.
    /// Returns its set when something was added.
    pub fn add_content(&mut self, revision: WatchedRevision) -> Option<Box<str>> {
        let set = self.set_of(&revision.held.name)?;
        let entry = self
            .by_set
            .get_mut(&set)?
            .iter_mut()
            .find(|e| e.held.name == revision.held.name && e.held.uid == revision.held.uid)?;
        if entry.content.is_some() {
            return None;
        }
        entry.content = Some(revision.content);
        Some(set)
    }

    /// The SidecarSet `set` asks new pods to get (see [`requested`]), restored; `None` when it
    /// names no revision.
    pub fn resolve(&self, set: &SidecarSet) -> Option<Result<SidecarSet, Unresolved>> {
        let revision = requested(set)?;
        let Some(entry) = self.lookup(set.name(), revision) else {
            return Some(Err(Unresolved {
                message: injection_revision_not_found(revision, set.name()),
                pending: false,
            }));
        };
        let Some(content) = &entry.content else {
            return Some(Err(Unresolved {
                message: format!(
                    "ControllerRevision {} of sidecarset {} is still being read; try again",
                    entry.held.name,
                    set.name()
                ),
                pending: true,
            }));
        };
        Some(restore(set, content).map_err(|message| Unresolved {
            message,
            pending: false,
        }))
    }
}

/// Files `entry` under its set, replacing an earlier reading of the same name.
fn insert(by_set: &mut HashMap<Box<str>, Vec<Entry>>, entry: Entry) {
    let entries = by_set.entry(entry.held.set.clone()).or_default();
    match entries.iter_mut().find(|e| e.held.name == entry.held.name) {
        Some(existing) => {
            // The data of a ControllerRevision never changes: a content held stays.
            let content = entry.content.or_else(|| {
                (existing.held.uid == entry.held.uid)
                    .then(|| existing.content.take())
                    .flatten()
            });
            *existing = Entry { content, ..entry };
        }
        None => entries.push(entry),
    }
}

impl RevisionHistory for RevisionIndex {
    fn find(&self, set: &SidecarSet, revision: &SidecarSetInjectRevision) -> Result<(), String> {
        match self.lookup(set.name(), revision) {
            Some(_) => Ok(()),
            None => Err(injection_revision_not_found(revision, set.name())),
        }
    }
}

#[cfg(test)]
mod tests;
