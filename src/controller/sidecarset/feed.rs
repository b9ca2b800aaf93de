//! The SidecarSets the controller reconciles, fed by the catalogue's own list and watch.
//!
//! At 50,000 SidecarSets a second list and watch of the same objects doubles what the apiserver
//! serves at start (a list of every set, every status write sent twice) and what the process
//! holds. Here one watch serves both, and one copy of each SidecarSet ([`Shared`]: as the
//! SidecarSet webhook would have stored it, [`crate::source::cluster::as_admitted`]): the catalogue's thread hands each SidecarSet event to a
//! [`FeedWriter`] ([`crate::source::watch::SidecarSetTap`]), which decodes it as the controllers'
//! guarded watches do ([`super::super::guarded_watch`]) into one store, and tells the controller
//! of the terms that lead which sets changed ([`SidecarSetFeed::triggers`]).
//!
//! The store lives as long as the process, across leadership terms: a new term reconciles every
//! set the store holds, then what changes. A change of the status alone (the controller's own
//! writes, 50,000 of them after a start) triggers no reconcile.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, RwLock};

use futures::{Stream, StreamExt};
use kube::runtime::reflector::{ObjectRef, Store, store::Writer};
use kube::runtime::watcher::Event;
use tokio::sync::{broadcast, watch};

use crate::api::SidecarSet;
use crate::controller::guarded_watch::{DecodeGuard, UndecodableReporter};
use crate::k8s::shared::Shared;
use crate::rollout::refusal::Refusals;
use crate::source::cluster::WatchedSidecarSet;
use crate::source::history::SharedRevisions;

/// Changes a term's controller may lag behind before it reconciles every set again.
const CHANGES_BUFFER: usize = 4096;

/// What the store went through, for the controller of the term that leads.
#[derive(Clone, Debug)]
enum Change {
    /// A set was created or changed beyond its status.
    Applied(Arc<Shared<SidecarSet>>),
    /// A (re)list completed: any set may have changed.
    Relisted,
}

/// The reading side: the store and the changes, for the controller of each term; the revision
/// history the catalogue's process watches, and what its catalogue cannot serve.
#[derive(Clone)]
pub struct SidecarSetFeed {
    store: Store<Shared<SidecarSet>>,
    canaries: CanaryIndex,
    changes: broadcast::Sender<Change>,
    revisions: SharedRevisions,
    refusals: watch::Receiver<Arc<Refusals>>,
}

impl std::fmt::Debug for SidecarSetFeed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SidecarSetFeed")
            .field("sidecarsets", &self.store.len())
            .finish()
    }
}

/// The writing side, called with every SidecarSet watch event (off the async runtime).
pub struct FeedWriter {
    writer: Writer<Shared<SidecarSet>>,
    canaries: CanaryIndex,
    guard: DecodeGuard<Shared<SidecarSet>>,
    reporter: UndecodableReporter,
    changes: broadcast::Sender<Change>,
    /// The runtime the reporter's events are sent on.
    runtime: tokio::runtime::Handle,
}

/// A feed and its writer; `reporter` reports sets the types refuse (log, metric, event);
/// `revisions` is the history held beside the feed, `refusals` what the catalogue cannot serve.
pub fn feed(
    reporter: UndecodableReporter,
    revisions: SharedRevisions,
    refusals: watch::Receiver<Arc<Refusals>>,
) -> (SidecarSetFeed, FeedWriter) {
    let writer = Writer::default();
    let (changes, _) = broadcast::channel(CHANGES_BUFFER);
    let canaries = CanaryIndex::default();
    let feed = SidecarSetFeed {
        store: writer.as_reader(),
        canaries: canaries.clone(),
        changes: changes.clone(),
        revisions,
        refusals,
    };
    let writer = FeedWriter {
        writer,
        canaries,
        guard: DecodeGuard::default(),
        reporter,
        changes,
        runtime: tokio::runtime::Handle::current(),
    };
    (feed, writer)
}

impl FeedWriter {
    /// Applies one watch event to the store and tells the controllers what it changed.
    pub fn apply(&mut self, event: &Event<WatchedSidecarSet>) {
        let store = self.writer.as_reader();
        let admitted = self.guard.admit(event.clone(), |key| store.get(key));
        if let Some(refused) = &admitted.newly_undecodable {
            // The reporter sends its event as a task of the runtime.
            let _runtime = self.runtime.enter();
            self.reporter.report(refused);
        }
        let Some(event) = admitted.event else {
            return;
        };
        let before = match &event {
            Event::Apply(set) => store.get(&ObjectRef::from_obj(set)),
            _ => None,
        };
        self.writer.apply_watcher_event(&event);
        match &event {
            Event::Apply(set) => self.canaries.apply(set.name(), set.canary_base()),
            Event::Delete(set) => self.canaries.apply(set.name(), None),
            // The store swaps in the relisted sets only now.
            Event::InitDone => self.canaries.rebuild(&store.state()),
            Event::Init | Event::InitApply(_) => {}
        }
        // No receiver (no term leads) is no error: a term reads the whole store when it starts.
        match event {
            Event::Apply(set) if changed_beyond_status(before.as_deref().map(|b| &**b), &set) => {
                let stored = store.get(&ObjectRef::from_obj(&set));
                let _ = self
                    .changes
                    .send(Change::Applied(stored.unwrap_or_else(|| Arc::new(set))));
            }
            Event::InitDone => {
                let _ = self.changes.send(Change::Relisted);
            }
            _ => {}
        }
    }
}

/// Whether `after` differs from `before` in more than its status, resourceVersion and
/// managedFields (what the controller's own status writes change).
pub fn changed_beyond_status(before: Option<&SidecarSet>, after: &SidecarSet) -> bool {
    before.is_none_or(|before| !before.same_beyond_status(after))
}

impl SidecarSetFeed {
    /// The SidecarSets as stored (those the types accept), current as the watch delivers them.
    pub fn store(&self) -> Store<Shared<SidecarSet>> {
        self.store.clone()
    }

    /// Which sets name each set as their canary base, current with the store.
    pub fn canaries(&self) -> CanaryIndex {
        self.canaries.clone()
    }

    /// The SidecarSet revisions of the manager's namespace, as watched.
    pub fn revisions(&self) -> &SharedRevisions {
        &self.revisions
    }

    /// What the catalogue cannot serve, current with each of its snapshots (empty in a process
    /// without the catalogue).
    pub fn refusals(&self) -> watch::Receiver<Arc<Refusals>> {
        self.refusals.clone()
    }

    /// What a term's controller reconciles: every set held now, then each set that changes
    /// beyond its status; every set again after a relist, or when the controller fell more
    /// than [`CHANGES_BUFFER`] changes behind.
    pub fn triggers(&self) -> impl Stream<Item = Arc<Shared<SidecarSet>>> + Send + 'static {
        // Subscribed before the store is read: a change in between is seen twice, never missed.
        let changes = self.changes.subscribe();
        let store = self.store.clone();
        let held = futures::stream::iter(self.store.state());
        let changes = futures::stream::unfold(changes, |mut changes| async move {
            match changes.recv().await {
                Err(broadcast::error::RecvError::Closed) => None,
                received => Some((received, changes)),
            }
        })
        .flat_map(move |received| {
            let sets = match received {
                Ok(Change::Applied(set)) => vec![set],
                Ok(Change::Relisted) | Err(_) => store.state(),
            };
            futures::stream::iter(sets)
        });
        held.chain(changes)
    }
}

/// Which SidecarSets name each set as their canary base, kept as the store changes. The safety
/// net asks for one set's canaries on every reconcile: reading every set for it made a term's
/// first pass over N sets cost N² (2.5 billion looks at 50,000 sets).
#[derive(Clone, Debug, Default)]
pub struct CanaryIndex(Arc<RwLock<Canaries>>);

#[derive(Debug, Default)]
struct Canaries {
    /// Base name → the canaries naming it.
    by_base: BTreeMap<String, BTreeSet<String>>,
    /// Canary name → its base (only canaries are here).
    base_of: BTreeMap<String, String>,
}

impl Canaries {
    fn forget(&mut self, name: &str) {
        if let Some(base) = self.base_of.remove(name)
            && let Some(canaries) = self.by_base.get_mut(&base)
        {
            canaries.remove(name);
            if canaries.is_empty() {
                self.by_base.remove(&base);
            }
        }
    }

    fn insert(&mut self, name: &str, base: &str) {
        self.base_of.insert(name.to_string(), base.to_string());
        self.by_base
            .entry(base.to_string())
            .or_default()
            .insert(name.to_string());
    }
}

impl CanaryIndex {
    /// The names of the sets that name `base` as their canary base (never `base` itself).
    pub fn canaries_of(&self, base: &str) -> Vec<String> {
        let canaries = self.read();
        canaries
            .by_base
            .get(base)
            .into_iter()
            .flatten()
            .filter(|name| name.as_str() != base)
            .cloned()
            .collect()
    }

    /// `name` is stored with this canary base (`None`: not a canary, or gone).
    pub fn apply(&self, name: &str, base: Option<&str>) {
        let mut canaries = self.write();
        canaries.forget(name);
        if let Some(base) = base {
            canaries.insert(name, base);
        }
    }

    /// The index of exactly these sets.
    pub fn rebuild(&self, sets: &[Arc<Shared<SidecarSet>>]) {
        let mut rebuilt = Canaries::default();
        for set in sets {
            if let Some(base) = set.canary_base() {
                rebuilt.insert(set.name(), base);
            }
        }
        *self.write() = rebuilt;
    }

    // A panic while holding the lock leaves whole maps (each change is one insert or remove
    // pair): still a sane answer.
    fn read(&self) -> std::sync::RwLockReadGuard<'_, Canaries> {
        self.0.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Canaries> {
        self.0.write().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests;
