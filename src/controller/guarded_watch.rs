//! Typed watches that survive objects their Rust types refuse.
//!
//! The apiserver stores what the CRD schema lets through, and a schema says less than a Rust type
//! (an `int32` field holding `99999999999`, a string outside an enum). kube-runtime's typed
//! watcher fails the whole list on one such object, which stalls a controller for every object
//! of the kind. Here the objects are decoded one by one as the answer is read
//! ([`Lenient`]): an object that fails is reported once per resourceVersion (log, metric, Warning event on the object)
//! and left out; the others flow on. A stored object that stops decoding leaves the store, as if
//! deleted, so a controller never acts on a version that is no longer the object's.
//!
//! [`DecodeGuard`] decides (no I/O); [`guard_events`] applies it to a stream of watch events; [`watch`] is the shell a controller starts from:
//!
//! ```ignore
//! let (store, objects) = guarded_watch::watch::<CloneSet>(client, config, reporter);
//! Controller::for_stream(objects, store)
//! ```

use std::collections::HashMap;
use std::fmt::Debug;
use std::hash::Hash;
use std::sync::Arc;

use futures::{Stream, StreamExt};
use k8s_openapi::api::core::v1::ObjectReference;
use kube::api::{Api, ObjectMeta};
use kube::runtime::WatchStreamExt;
use kube::runtime::events::{Event as KubeEvent, EventType};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::watcher::{self, Event, watcher};
use kube::{Client, Resource};
use serde::de::DeserializeOwned;

use super::events::EventRecorder;
use crate::k8s::lenient::{Lenient, Refusal};
use crate::metrics::Metrics;

/// Event reason of the Warning published on an object its controller cannot decode.
pub const UNDECODABLE_REASON: &str = "Undecodable";

/// An object the typed decode refused.
#[derive(Clone, Debug, PartialEq)]
pub struct Undecodable {
    /// `namespace/name`, or `name` for a cluster-scoped object.
    pub key: String,
    pub resource_version: Option<String>,
    /// Where in the object the decode failed (`spec.revisionHistoryLimit`; `.` for the root).
    pub path: String,
    /// What the decoder said of the value at `path`.
    pub message: String,
    /// The object, for an event about it.
    pub reference: ObjectReference,
}

impl Undecodable {
    /// The report of `refusal`, an object of kind `K`.
    fn of<K>(refusal: Box<Refusal>) -> Box<Self>
    where
        K: Resource,
        K::DynamicType: Default,
    {
        let Refusal {
            metadata,
            path,
            message,
        } = *refusal;
        Box::new(Undecodable {
            key: key_of(&metadata),
            resource_version: metadata.resource_version.clone(),
            path,
            message,
            reference: reference::<K>(&metadata),
        })
    }
}

fn key_of(meta: &ObjectMeta) -> String {
    let name = meta.name.as_deref().unwrap_or("");
    match meta.namespace.as_deref() {
        Some(namespace) => format!("{namespace}/{name}"),
        None => name.to_string(),
    }
}

fn reference<K>(meta: &ObjectMeta) -> ObjectReference
where
    K: Resource,
    K::DynamicType: Default,
{
    let dyntype = K::DynamicType::default();
    ObjectReference {
        api_version: Some(K::api_version(&dyntype).into_owned()),
        kind: Some(K::kind(&dyntype).into_owned()),
        name: meta.name.clone(),
        namespace: meta.namespace.clone(),
        uid: meta.uid.clone(),
        resource_version: meta.resource_version.clone(),
        field_path: None,
    }
}

fn object_ref<K>(meta: &ObjectMeta) -> ObjectRef<K>
where
    K: Resource,
    K::DynamicType: Default,
{
    let name = ObjectRef::new_with(meta.name.as_deref().unwrap_or(""), Default::default());
    match meta.namespace.as_deref() {
        Some(namespace) => name.within(namespace),
        None => name,
    }
}

/// What one event of lenient objects becomes.
#[derive(Debug)]
pub struct Admitted<K> {
    /// The typed event to pass on, if any.
    pub event: Option<Event<K>>,
    /// An object refused at a resourceVersion not reported before.
    pub newly_undecodable: Option<Box<Undecodable>>,
}

/// Turns watch events of lenient objects into typed ones, leaving out what did not decode and
/// remembering what it reported so each (object, resourceVersion) is reported once.
#[derive(Debug)]
pub struct DecodeGuard<K> {
    /// Object key → resourceVersion of the refused version last reported; holds only objects
    /// refused now, so it stays as small as the set of bad objects.
    reported: HashMap<String, Option<String>>,
    /// Reports of before the current relist; an object listed again at the same version is not
    /// reported again, one that is gone is forgotten at `InitDone`.
    before_relist: HashMap<String, Option<String>>,
    kind: std::marker::PhantomData<fn() -> K>,
}

impl<K> Default for DecodeGuard<K> {
    fn default() -> Self {
        DecodeGuard {
            reported: HashMap::new(),
            before_relist: HashMap::new(),
            kind: std::marker::PhantomData,
        }
    }
}

impl<K> DecodeGuard<K>
where
    K: Resource + DeserializeOwned + Clone,
    K::DynamicType: Default,
{
    /// Turns one event of objects decoded or refused into a typed one. `known` looks up the
    /// version the consumer holds (the store the typed events feed): an object that stops
    /// decoding is deleted from it.
    pub fn admit(
        &mut self,
        event: Event<Lenient<K>>,
        known: impl Fn(&ObjectRef<K>) -> Option<Arc<K>>,
    ) -> Admitted<K> {
        let pass = |event| Admitted {
            event: Some(event),
            newly_undecodable: None,
        };
        match event {
            Event::Init => {
                self.before_relist = std::mem::take(&mut self.reported);
                pass(Event::Init)
            }
            Event::InitDone => {
                self.before_relist.clear();
                pass(Event::InitDone)
            }
            Event::InitApply(object) => match object.into_result() {
                Ok(decoded) => {
                    self.reported.remove(&key_of(decoded.meta()));
                    pass(Event::InitApply(decoded))
                }
                // The relist replaces the consumer's contents at `InitDone`: leaving the object
                // out of the list is enough to drop a version held before.
                Err(refusal) => Admitted {
                    event: None,
                    newly_undecodable: self.first_report(Undecodable::of::<K>(refusal)),
                },
            },
            Event::Apply(object) => match object.into_result() {
                Ok(decoded) => {
                    self.reported.remove(&key_of(decoded.meta()));
                    pass(Event::Apply(decoded))
                }
                Err(refusal) => Admitted {
                    event: known(&object_ref(&refusal.metadata))
                        .map(|held| Event::Delete(held.as_ref().clone())),
                    newly_undecodable: self.first_report(Undecodable::of::<K>(refusal)),
                },
            },
            Event::Delete(object) => {
                self.reported.remove(&key_of(object.meta()));
                let gone = match object.into_result() {
                    Ok(decoded) => Some(decoded),
                    Err(refusal) => {
                        known(&object_ref(&refusal.metadata)).map(|held| held.as_ref().clone())
                    }
                };
                Admitted {
                    event: gone.map(Event::Delete),
                    newly_undecodable: None,
                }
            }
        }
    }

    fn first_report(&mut self, refused: Box<Undecodable>) -> Option<Box<Undecodable>> {
        let version = &refused.resource_version;
        let seen = self.reported.get(&refused.key) == Some(version)
            || self.before_relist.get(&refused.key) == Some(version);
        self.reported.insert(refused.key.clone(), version.clone());
        (!seen).then_some(refused)
    }
}

/// Applies a [`DecodeGuard`] to a stream of watch events of lenient objects; `report` hears of each newly
/// refused version. Errors of the watch pass through.
pub fn guard_events<K, S>(
    events: S,
    known: Store<K>,
    mut report: impl FnMut(&Undecodable) + Send + 'static,
) -> impl Stream<Item = Result<Event<K>, watcher::Error>> + Send
where
    K: Resource + DeserializeOwned + Clone + Send + Sync + 'static,
    K::DynamicType: Default + Eq + Hash + Clone,
    S: Stream<Item = Result<Event<Lenient<K>>, watcher::Error>> + Send,
{
    let mut guard = DecodeGuard::<K>::default();
    events.filter_map(move |item| {
        let typed = match item {
            Ok(event) => {
                let admitted = guard.admit(event, |key| known.get(key));
                if let Some(refused) = &admitted.newly_undecodable {
                    report(refused);
                }
                admitted.event.map(Ok)
            }
            Err(error) => Some(Err(error)),
        };
        futures::future::ready(typed)
    })
}

/// Reports refused objects: a warning in the log, `controller_objects_undecodable{kind}`, and a
/// Warning event on the object.
#[derive(Clone)]
pub struct UndecodableReporter {
    pub kind: String,
    pub metrics: Arc<Metrics>,
    pub recorder: EventRecorder,
}

impl UndecodableReporter {
    pub fn new<K>(metrics: Arc<Metrics>, recorder: EventRecorder) -> Self
    where
        K: Resource,
        K::DynamicType: Default,
    {
        UndecodableReporter {
            kind: K::kind(&Default::default()).into_owned(),
            metrics,
            recorder,
        }
    }

    /// Logs and counts now; the event is sent in the background so the watch does not wait on
    /// the apiserver.
    pub fn report(&self, refused: &Undecodable) {
        tracing::warn!(
            kind = %self.kind,
            object = %refused.key,
            resource_version = refused.resource_version.as_deref().unwrap_or(""),
            field = %refused.path,
            error = %refused.message,
            "object cannot be decoded; skipped until it changes"
        );
        self.metrics.record_undecodable_object(&self.kind);
        let event = KubeEvent {
            type_: EventType::Warning,
            reason: UNDECODABLE_REASON.into(),
            note: Some(undecodable_note(refused)),
            action: "Decode".into(),
            secondary: None,
        };
        let recorder = self.recorder.clone();
        let reference = refused.reference.clone();
        tokio::spawn(async move { recorder.record(&reference, &event).await });
    }
}

/// The event note: the field and the decoder's words, within the 1 KiB an event note may hold.
fn undecodable_note(refused: &Undecodable) -> String {
    const NOTE_LIMIT: usize = 1024;
    let mut note = format!(
        "the controller cannot read this object and skips it: {}: {}",
        refused.path, refused.message
    );
    if note.len() > NOTE_LIMIT {
        let mut end = NOTE_LIMIT;
        while !note.is_char_boundary(end) {
            end -= 1;
        }
        note.truncate(end);
    }
    note
}

/// A typed list-and-watch of every `K` in the cluster that skips undecodable objects: the store
/// of the decodable ones, and the stream of applied objects to drive a controller with
/// (`Controller::for_stream(objects, store)`).
pub fn watch<K>(
    client: Client,
    config: watcher::Config,
    reporter: UndecodableReporter,
) -> (
    Store<K>,
    impl Stream<Item = Result<K, watcher::Error>> + Send + 'static,
)
where
    K: Resource + DeserializeOwned + Clone + Debug + Send + Sync + 'static,
    K::DynamicType: Default + Eq + Hash + Clone,
{
    watch_pruned(client, config, reporter, |_: &mut K| {})
}

/// [`watch`], each object pruned by `prune` before the store keeps it and the stream hands it on:
/// for kinds whose objects carry much that the controller never reads (a Node's status).
pub fn watch_pruned<K>(
    client: Client,
    config: watcher::Config,
    reporter: UndecodableReporter,
    prune: fn(&mut K),
) -> (
    Store<K>,
    impl Stream<Item = Result<K, watcher::Error>> + Send + 'static,
)
where
    K: Resource + DeserializeOwned + Clone + Debug + Send + Sync + 'static,
    K::DynamicType: Default + Eq + Hash + Clone,
{
    let lenient = watcher(
        Api::<Lenient<K>>::all_with(client, &Default::default()),
        config,
    )
    .default_backoff();
    let (store, writer) = reflector::store::<K>();
    let objects = guard_events(lenient, store.clone(), move |refused| {
        reporter.report(refused)
    })
    .map(move |event| event.map(|event| event.modify(prune)))
    .reflect(writer)
    .applied_objects();
    (store, objects)
}

#[cfg(test)]
mod tests;
