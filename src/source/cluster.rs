//! Cluster mode, the pure part: watch events on SidecarSets and Namespaces in, catalogue
//! snapshots out. No I/O; [`super::watch`] feeds it from the apiserver.
//!
//! Each SidecarSet goes through what the directory loader does to a file's documents (decode,
//! defaults, hash annotations, validation in name order), so a SidecarSet created while the
//! webhooks were not registered is treated as the webhooks would have treated it. One that fails
//! is reported and left out; the others keep serving.
//!
//! A (re)list is buffered and replaces the previous contents only once complete, so a watch that
//! restarts keeps the last complete view in service until the new one is whole.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Namespace;
use kube::Resource;
use kube::core::PartialObjectMeta;
use kube::runtime::watcher::Event;

use super::Catalogue;
use super::acceptance::{Acceptance, Verdict};
use super::history::{SharedRevisions, WatchedRevision, read, write};
use crate::api::{SidecarSet, SidecarSetInjectRevision};
use crate::defaults::sidecarset::default_and_hash;
use crate::inject::revision::{HistoryRevision, InjectionRevisions, requested};
use crate::k8s::lenient::Lenient;
use crate::k8s::selector::{self, Labels};
use crate::k8s::shared::Shared;
use crate::rollout::refusal::{Refusal, RefusalReason};

/// The objects of one watch, by name, with the (re)list in progress.
#[derive(Debug)]
struct Collection<T> {
    items: HashMap<String, T>,
    /// Objects of a list in progress; replaces `items` at `InitDone`.
    relisting: Option<HashMap<String, T>>,
    /// A first complete list has been received.
    synced: bool,
}

impl<T> Default for Collection<T> {
    fn default() -> Self {
        Collection {
            items: HashMap::new(),
            relisting: None,
            synced: false,
        }
    }
}

impl<T> Collection<T> {
    /// Applies one event: the view holds the newest reading of each object. `matters(name,
    /// before, after)` is asked about each object of the complete view (`items`) the event
    /// replaces, adds or removes (`None`: absent), and says whether the change counts. Returns
    /// whether this completed the first list.
    fn handle<K>(
        &mut self,
        event: Event<K>,
        name: impl Fn(&K) -> String,
        convert: impl Fn(K) -> T,
        mut matters: impl FnMut(&str, Option<&T>, Option<&T>) -> bool,
    ) -> bool {
        match event {
            Event::Init => self.relisting = Some(HashMap::new()),
            Event::InitApply(object) => {
                let buffer = self.relisting.get_or_insert_with(HashMap::new);
                buffer.insert(name(&object), convert(object));
            }
            Event::InitDone => {
                let listed = self.relisting.take().unwrap_or_default();
                let previous = std::mem::replace(&mut self.items, listed);
                for (name, before) in &previous {
                    matters(name, Some(before), self.items.get(name));
                }
                for (name, after) in &self.items {
                    if !previous.contains_key(name) {
                        matters(name, None, Some(after));
                    }
                }
                let first = !self.synced;
                self.synced = true;
                return first;
            }
            Event::Apply(object) => {
                let key = name(&object);
                let after = convert(object);
                matters(&key, self.items.get(&key), Some(&after));
                self.items.insert(key, after);
            }
            Event::Delete(object) => {
                let key = name(&object);
                if let Some(before) = self.items.remove(&key) {
                    matters(&key, Some(&before), None);
                }
            }
        }
        false
    }
}

/// A SidecarSet as read from the cluster: defaulted and hashed, or why it could not be decoded.
type Decoded = Result<Arc<SidecarSet>, String>;

/// Where a SidecarSet came from, for messages.
#[derive(Debug)]
struct FromCluster;

impl fmt::Display for FromCluster {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the cluster")
    }
}

/// What the watches have delivered so far, and the SidecarSets accepted from it.
#[derive(Debug, Default)]
pub struct ClusterState {
    sidecarsets: Collection<Decoded>,
    namespaces: Collection<Labels>,
    /// The decoded SidecarSets, judged in name order; kept current event by event.
    acceptance: Acceptance<Arc<str>, FromCluster>,
    /// SidecarSet name → why it could not be decoded.
    undecodable: BTreeMap<String, String>,
    /// SidecarSet names whose verdict may have changed since the last snapshot.
    touched: BTreeSet<String>,
    /// SidecarSet name → why the webhooks cannot serve it, as last reported.
    refused: BTreeMap<String, Refusal>,
    /// The watched revision history; `None`: none is watched, every revision is missing.
    history: Option<SharedRevisions>,
    /// The decoded SidecarSets that name a revision to inject, and the one they name.
    using: BTreeMap<String, SidecarSetInjectRevision>,
    /// The last snapshot, whose prepared work the next one reuses.
    last: Option<Arc<Catalogue>>,
    changed: bool,
    /// SidecarSets held in a newer reading than the last snapshot's, that differs in nothing
    /// the catalogue uses (a status write): the snapshot still holds the older one.
    newer_readings: usize,
}

/// The share (1/32) of the SidecarSets held in a newer reading than the last snapshot's at which
/// a new snapshot is due, though nothing the catalogue uses changed: it lets the older readings
/// go (the process would otherwise hold two readings of every SidecarSet once the controller has
/// written every status: 250 MB at 50,000). At 50,000 that is a snapshot (66 ms, `cargo bench
/// --bench catalogue`) per 1,562 status writes, with at most 8 MB of older readings held.
/// Below [`MIN_NEWER_READINGS`] (about 1 MB) the older readings are not worth a snapshot.
const NEWER_READINGS_SHARE: usize = 32;
const MIN_NEWER_READINGS: usize = 256;

/// A new snapshot and what changed in the set of refused SidecarSets since the previous one.
#[derive(Debug)]
pub struct Snapshot {
    pub catalogue: Arc<Catalogue>,
    /// `(name, message)` of SidecarSets refused now that were not refused (for that reason) before.
    pub newly_refused: Vec<(String, String)>,
    /// Number of SidecarSets currently refused.
    pub refused: usize,
    /// Every SidecarSet the webhooks cannot serve now, and why.
    pub refusals: BTreeMap<String, Refusal>,
}

impl ClusterState {
    /// A state that resolves `injectionStrategy.revision` against `history`, fed by
    /// [`Self::revision_event`]; it is synced once the history has listed too.
    pub fn with_history(history: SharedRevisions) -> Self {
        ClusterState {
            acceptance: Acceptance::resolving_revisions_later(),
            history: Some(history),
            ..ClusterState::default()
        }
    }

    /// Applies a watch event of the revision history; returns whether a new snapshot is due:
    /// after a list, or when a revision of a set that names one changed.
    pub fn revision_event(&mut self, event: Event<Lenient<WatchedRevision>>) -> bool {
        let Some(history) = &self.history else {
            return false;
        };
        let changed = write(history).apply(event);
        let due = match changed {
            None => true,
            Some(sets) => self.concerns(&sets),
        };
        self.changed |= due;
        due
    }

    /// Adds the content of a revision read again ([`Self::missing_content`]); returns whether a
    /// new snapshot is due.
    pub fn revision_content(&mut self, revision: WatchedRevision) -> bool {
        let Some(history) = &self.history else {
            return false;
        };
        let added = write(history).add_content(revision);
        let due = added.is_some_and(|set| self.concerns(&[set]));
        self.changed |= due;
        due
    }

    /// Revisions the sets that name one may inject whose content is not held: to be read.
    pub fn missing_content(&self) -> Vec<String> {
        self.history
            .as_ref()
            .map(|history| read(history).missing_content())
            .unwrap_or_default()
    }

    /// Whether a change of the revisions of `sets` can change what a set that names a revision
    /// injects: one of them names a revision, or names one of theirs (`<set>-<hash>`).
    fn concerns(&self, sets: &[Box<str>]) -> bool {
        sets.iter().any(|set| {
            self.using.contains_key(&**set)
                || self.using.values().any(|revision| {
                    revision
                        .revision_name
                        .as_deref()
                        .and_then(|name| name.rsplit_once('-'))
                        .is_some_and(|(prefix, _)| prefix == &**set)
                })
        })
    }

    /// Applies a SidecarSet watch event; returns whether a new snapshot is due. An object that
    /// changed only where the catalogue does not look (its status but `latestRevision`, its
    /// resourceVersion and managedFields: the controllers' own status writes) changes nothing.
    pub fn sidecarset_event(&mut self, event: Event<WatchedSidecarSet>) -> bool {
        let mut updates = Vec::new();
        let mut newer = Vec::new();
        let first_list = self.sidecarsets.handle(
            event,
            |o| object_name(o.meta()),
            |o| {
                o.into_result()
                    .map(|set| set.arc().clone())
                    .map_err(|refusal| refusal.describe())
            },
            |name, before, after| {
                let matters = !same_for_catalogue(before, after);
                if matters {
                    updates.push((name.to_string(), after.cloned()));
                } else if let Some(Ok(set)) = after {
                    newer.push((name.to_string(), set.clone()));
                }
                matters
            },
        );
        for (name, set) in newer {
            if self
                .acceptance
                .replace_reading(&Arc::from(name.as_str()), set)
            {
                self.newer_readings += 1;
            }
        }
        let let_go = self.newer_readings
            >= MIN_NEWER_READINGS.max(self.sidecarsets.items.len() / NEWER_READINGS_SHARE);
        let due = first_list || !updates.is_empty() || let_go;
        let using_before = self.using.len();
        let mut using_changed = false;
        for (name, decoded) in updates {
            using_changed |= self.track_revision(&name, decoded.as_ref());
            self.apply(name, decoded);
        }
        if (using_changed || using_before != self.using.len())
            && let Some(history) = &self.history
        {
            write(history).set_wanted(self.using.iter().map(|(k, v)| (k.as_str(), v)));
        }
        self.changed |= due;
        due
    }

    /// Keeps [`Self::using`] current for a changed SidecarSet; returns whether it changed.
    fn track_revision(&mut self, name: &str, decoded: Option<&Decoded>) -> bool {
        let named = match decoded {
            Some(Ok(set)) => requested(set).cloned(),
            _ => None,
        };
        match named {
            Some(revision) => {
                self.using.insert(name.to_string(), revision.clone()) != Some(revision)
            }
            None => self.using.remove(name).is_some(),
        }
    }

    /// Hands a changed SidecarSet (`None`: deleted) to the acceptance.
    fn apply(&mut self, name: String, decoded: Option<Decoded>) {
        let key: Arc<str> = Arc::from(name.as_str());
        match decoded {
            Some(Ok(set)) => {
                self.undecodable.remove(&name);
                self.acceptance.upsert(key, set, FromCluster);
            }
            Some(Err(message)) => {
                self.acceptance.remove(&key);
                self.undecodable.insert(name.clone(), message);
            }
            None => {
                self.acceptance.remove(&key);
                self.undecodable.remove(&name);
            }
        }
        self.touched.insert(name);
    }

    /// Applies a Namespace watch event; returns whether a new snapshot is due.
    pub fn namespace_event(&mut self, event: Event<PartialObjectMeta<Namespace>>) -> bool {
        let mut due = false;
        let first_list = self.namespaces.handle(
            event,
            |o| object_name(&o.metadata),
            namespace_labels,
            |_, before, after| {
                let matters = before != after;
                due |= matters;
                matters
            },
        );
        due |= first_list;
        self.changed |= due;
        due
    }

    /// Both watches have completed their first list (and the history's, if watched).
    pub fn is_synced(&self) -> bool {
        let history = self.history.as_ref().is_none_or(|h| read(h).is_synced());
        self.sidecarsets.synced && self.namespaces.synced && history
    }

    /// Whether the SidecarSets' watch has completed its first list: the history is watched
    /// from then on, knowing which sets name a revision.
    pub fn sidecarsets_synced(&self) -> bool {
        self.sidecarsets.synced
    }

    /// The catalogue for what is known now; `None` until both watches have synced (a partial
    /// view would inject too little, or validate against too few SidecarSets).
    pub fn snapshot(&mut self) -> Option<Snapshot> {
        if !self.is_synced() {
            return None;
        }
        let mut touched = std::mem::take(&mut self.touched);
        touched.extend(self.acceptance.settle().iter().map(|k| k.to_string()));
        let rebuild = self.last.is_none() || std::mem::take(&mut self.changed);
        let revisions = if rebuild {
            // The sets that name a revision are few: resolved afresh with every catalogue.
            let revisions = self.resolve_revisions();
            touched.extend(self.using.keys().cloned());
            touched.extend(
                self.refused
                    .iter()
                    .filter(|(_, r)| r.reason == RefusalReason::RevisionNotFound)
                    .map(|(name, _)| name.clone()),
            );
            Some(revisions)
        } else {
            None
        };
        let mut newly_refused = Vec::new();
        for name in touched {
            let key: Arc<str> = Arc::from(name.as_str());
            let refusal = match (self.undecodable.get(&name), self.acceptance.verdict(&key)) {
                (Some(message), _) => Some(Refusal {
                    reason: RefusalReason::Undecodable,
                    message: message.clone(),
                }),
                (None, Some(Verdict::Refused(message))) => Some(Refusal {
                    reason: RefusalReason::Invalid,
                    message: message.clone(),
                }),
                (None, Some(Verdict::Accepted)) => match revisions.as_ref().map(|r| r.get(&name)) {
                    Some(Some(HistoryRevision::Unresolved(message))) => Some(Refusal {
                        reason: RefusalReason::RevisionNotFound,
                        message: message.clone(),
                    }),
                    // Not resolved again: what was reported stands.
                    None => self.refused.get(&name).cloned(),
                    _ => None,
                },
                _ => None,
            };
            match refusal {
                Some(refusal) => {
                    if self.refused.get(&name) != Some(&refusal) {
                        newly_refused.push((name.clone(), refusal.message.clone()));
                    }
                    self.refused.insert(name, refusal);
                }
                None => {
                    self.refused.remove(&name);
                }
            }
        }
        newly_refused.sort();
        let catalogue = match (&self.last, revisions) {
            (Some(last), None) => last.clone(),
            (last, revisions) => {
                self.newer_readings = 0;
                // A Namespace the watch has not delivered yet exists nonetheless (the apiserver
                // refuses pods in unknown namespaces): assume it carries only its name label, as
                // in directory mode.
                let accepted = self.acceptance.accepted().cloned().collect();
                let namespaces = self.namespaces.items.clone();
                let next = Catalogue::next(last.as_deref(), accepted, namespaces, true)
                    .with_history(revisions.unwrap_or_default(), self.history.clone());
                Arc::new(next)
            }
        };
        self.last = Some(catalogue.clone());
        Some(Snapshot {
            catalogue,
            newly_refused,
            refused: self.refused.len(),
            refusals: self.refused.clone(),
        })
    }

    /// What each accepted set that names a revision injects: the restored set, or why not.
    fn resolve_revisions(&self) -> InjectionRevisions {
        let index = self.history.as_ref().map(read);
        let mut revisions = InjectionRevisions::new();
        let accepted = self.using.keys().filter_map(|name| {
            let key: Arc<str> = Arc::from(name.as_str());
            let accepted = self.acceptance.verdict(&key) == Some(&Verdict::Accepted);
            match self.sidecarsets.items.get(name) {
                Some(Ok(set)) if accepted => Some(set),
                _ => None,
            }
        });
        for set in accepted {
            let resolved = match &index {
                Some(index) => index.resolve(set),
                None => None,
            };
            let resolved = match resolved {
                Some(Ok(restored)) => HistoryRevision::Restored(Arc::new(restored)),
                Some(Err(unresolved)) if unresolved.pending => {
                    HistoryRevision::Pending(unresolved.message)
                }
                Some(Err(unresolved)) => HistoryRevision::Unresolved(unresolved.message),
                None => {
                    let revision = requested(set).cloned().unwrap_or_default();
                    HistoryRevision::Unresolved(crate::k8s::history::injection_revision_not_found(
                        &revision,
                        set.name(),
                    ))
                }
            };
            revisions.insert(set.name().to_string(), resolved);
        }
        revisions
    }
}

/// Whether two readings of a SidecarSet differ in nothing the catalogue uses: everything but
/// the resourceVersion, managedFields and the status other than `latestRevision` (which the
/// hash annotation's entry records).
fn same_for_catalogue(before: Option<&Decoded>, after: Option<&Decoded>) -> bool {
    match (before, after) {
        (Some(Ok(a)), Some(Ok(b))) => {
            fn revision(set: &SidecarSet) -> Option<&str> {
                set.status.as_ref()?.latest_revision.as_deref()
            }
            a.same_beyond_status(b) && revision(a) == revision(b)
        }
        (Some(Err(a)), Some(Err(b))) => a == b,
        (None, None) => true,
        _ => false,
    }
}

fn object_name(metadata: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> String {
    metadata.name.clone().unwrap_or_default()
}

/// A SidecarSet of the watch as this process holds it: what the SidecarSet webhook would have
/// stored, one copy for the catalogue and the SidecarSet controller's store.
pub type WatchedSidecarSet = Lenient<Shared<SidecarSet>>;

/// Applies what the SidecarSet webhook does (defaults, hashes) to a SidecarSet as read, once for
/// every holder: a SidecarSet created while the webhooks were not registered (or under another
/// version of them) is injected and rolled out as the webhook would have stored it.
pub fn as_admitted(object: Lenient<SidecarSet>) -> WatchedSidecarSet {
    match object {
        Lenient::Decoded(mut set) => {
            default_and_hash(&mut set);
            Lenient::Decoded(Box::new(Shared::from(*set)))
        }
        Lenient::Refused(refusal) => Lenient::Refused(refusal),
    }
}

/// A watched Namespace's labels, its name label included (see [`selector::namespace_labels`]).
pub fn namespace_labels(namespace: PartialObjectMeta<Namespace>) -> Labels {
    let name = object_name(&namespace.metadata);
    selector::namespace_labels(name, namespace.metadata.labels)
}

#[cfg(test)]
mod tests;
