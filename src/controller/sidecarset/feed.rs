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

use std::sync::Arc;

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
    let feed = SidecarSetFeed {
        store: writer.as_reader(),
        changes: changes.clone(),
        revisions,
        refusals,
    };
    let writer = FeedWriter {
        writer,
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

#[cfg(test)]
mod tests;
