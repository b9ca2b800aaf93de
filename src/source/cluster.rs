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

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Namespace;
use kube::api::DynamicObject;
use kube::core::PartialObjectMeta;
use kube::runtime::watcher::Event;

use super::{Catalogue, accept_in_name_order};
use crate::api::SidecarSet;
use crate::defaults::sidecarset::default_and_hash;
use crate::k8s::selector::{self, Labels};

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
    /// Applies one event; returns whether the complete view (`items`) changed.
    fn handle<K>(
        &mut self,
        event: Event<K>,
        name: impl Fn(&K) -> String,
        convert: impl Fn(K) -> T,
    ) -> bool {
        match event {
            Event::Init => {
                self.relisting = Some(HashMap::new());
                false
            }
            Event::InitApply(object) => {
                let buffer = self.relisting.get_or_insert_with(HashMap::new);
                buffer.insert(name(&object), convert(object));
                false
            }
            Event::InitDone => {
                self.items = self.relisting.take().unwrap_or_default();
                self.synced = true;
                true
            }
            Event::Apply(object) => {
                self.items.insert(name(&object), convert(object));
                true
            }
            Event::Delete(object) => self.items.remove(&name(&object)).is_some(),
        }
    }
}

/// A SidecarSet as read from the cluster: defaulted and hashed, or why it could not be decoded.
type Decoded = Result<Arc<SidecarSet>, String>;

/// Where a SidecarSet came from, for messages.
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
    /// Recomputed from `sidecarsets` when they changed since the last snapshot.
    accepted: Vec<Arc<SidecarSet>>,
    /// SidecarSet name → why it is left out of the catalogue.
    refused: BTreeMap<String, String>,
    sidecarsets_changed: bool,
}

/// A new snapshot and what changed in the set of refused SidecarSets since the previous one.
#[derive(Debug)]
pub struct Snapshot {
    pub catalogue: Arc<Catalogue>,
    /// `(name, message)` of SidecarSets refused now that were not refused (for that reason) before.
    pub newly_refused: Vec<(String, String)>,
    /// Number of SidecarSets currently refused.
    pub refused: usize,
}

impl ClusterState {
    /// Applies a SidecarSet watch event; returns whether a new snapshot is due.
    pub fn sidecarset_event(&mut self, event: Event<DynamicObject>) -> bool {
        let changed =
            self.sidecarsets
                .handle(event, |o| object_name(&o.metadata), decode_sidecarset);
        self.sidecarsets_changed |= changed;
        changed
    }

    /// Applies a Namespace watch event; returns whether a new snapshot is due.
    pub fn namespace_event(&mut self, event: Event<PartialObjectMeta<Namespace>>) -> bool {
        self.namespaces
            .handle(event, |o| object_name(&o.metadata), namespace_labels)
    }

    /// Both watches have completed their first list.
    pub fn is_synced(&self) -> bool {
        self.sidecarsets.synced && self.namespaces.synced
    }

    /// The catalogue for what is known now; `None` until both watches have synced (a partial
    /// view would inject too little, or validate against too few SidecarSets).
    pub fn snapshot(&mut self) -> Option<Snapshot> {
        if !self.is_synced() {
            return None;
        }
        let mut newly_refused = Vec::new();
        if std::mem::take(&mut self.sidecarsets_changed) {
            let mut refused = BTreeMap::new();
            let mut candidates = Vec::with_capacity(self.sidecarsets.items.len());
            for (name, decoded) in &self.sidecarsets.items {
                match decoded {
                    Ok(set) => candidates.push((set.clone(), FromCluster)),
                    Err(message) => {
                        refused.insert(name.clone(), message.clone());
                    }
                }
            }
            let (accepted, validation_refused) = accept_in_name_order(candidates);
            refused.extend(validation_refused.into_iter().map(|r| (r.name, r.message)));
            newly_refused = refused
                .iter()
                .filter(|(name, message)| self.refused.get(*name) != Some(*message))
                .map(|(name, message)| (name.clone(), message.clone()))
                .collect();
            self.accepted = accepted;
            self.refused = refused;
        }
        // A Namespace the watch has not delivered yet exists nonetheless (the apiserver refuses
        // pods in unknown namespaces): assume it carries only its name label, as in directory mode.
        let catalogue = Arc::new(Catalogue::new(
            self.accepted.clone(),
            self.namespaces.items.clone(),
            true,
        ));
        Some(Snapshot {
            catalogue,
            newly_refused,
            refused: self.refused.len(),
        })
    }
}

fn object_name(metadata: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> String {
    metadata.name.clone().unwrap_or_default()
}

/// Decodes a watched SidecarSet and applies what the mutating webhook does (defaults, hashes).
/// The message names the offending field.
pub fn decode_sidecarset(object: DynamicObject) -> Decoded {
    let value = serde_json::to_value(&object).map_err(|e| format!("re-encoding: {e}"))?;
    let mut set: SidecarSet = super::dir::decode(value)?;
    default_and_hash(&mut set);
    Ok(Arc::new(set))
}

/// A watched Namespace's labels, its name label included (see [`selector::namespace_labels`]).
pub fn namespace_labels(namespace: PartialObjectMeta<Namespace>) -> Labels {
    let name = object_name(&namespace.metadata);
    selector::namespace_labels(name, namespace.metadata.labels)
}

#[cfg(test)]
mod tests;
