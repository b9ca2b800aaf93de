//! The shared pod cache and the pod events its controllers hear.
//!
//! kube-runtime's shared reflector (`store_shared` and `subscribe`) tells a subscriber only the
//! key of an applied pod, and the subscriber reads the pod back from the store. A pod deleted
//! before the subscriber reads it is lost twice over: its deletion is never told (kube-rs#1590),
//! and the subscriber's stream answers `Pending` without a waker, so it never yields again and,
//! once its buffer is full, holds the reflector back for every controller. A force-deleted pod
//! (grace period 0) is stored with a deletionTimestamp and deleted in the same request: when both
//! watch events arrive together, the CloneSet controller never heard of the pod going and never
//! replaced it.
//!
//! Here every subscriber gets the pod of the event itself, once the store holds the event's
//! outcome: applied pods, and for those who ask, deleted ones, including the pods a relist no
//! longer finds (deleted while the watch was down).

use std::pin::pin;
use std::sync::Arc;

use futures::channel::mpsc;
use futures::{SinkExt, Stream, StreamExt};
use k8s_openapi::api::core::v1::Pod;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};

/// Whether a subscriber hears of deleted pods.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deletions {
    Told,
    Untold,
}

struct Subscriber {
    sender: mpsc::Sender<Arc<Pod>>,
    deletions: Deletions,
}

/// The pod store and its subscribers; [`PodEvents::run`] feeds both from a pod watch.
pub struct PodEvents {
    writer: reflector::store::Writer<Pod>,
    buffer: usize,
    subscribers: Vec<Subscriber>,
}

impl PodEvents {
    /// The store, and the feed of it. A subscriber may lag `buffer` events behind before the
    /// watch waits for it.
    pub fn new(buffer: usize) -> (Store<Pod>, PodEvents) {
        let (store, writer) = reflector::store::<Pod>();
        let events = PodEvents {
            writer,
            buffer,
            subscribers: Vec::new(),
        };
        (store, events)
    }

    /// A stream of the pods of every event from now on; it must be drained, or the watch stalls.
    pub fn subscribe(&mut self, deletions: Deletions) -> mpsc::Receiver<Arc<Pod>> {
        let (sender, receiver) = mpsc::channel(self.buffer);
        self.subscribers.push(Subscriber { sender, deletions });
        receiver
    }

    /// Applies `events` (a pod watch) to the store and tells the subscribers; ends with `events`.
    pub async fn run(
        self,
        events: impl Stream<Item = Result<watcher::Event<Pod>, watcher::Error>> + Send,
    ) {
        let PodEvents {
            writer,
            mut subscribers,
            ..
        } = self;
        let store = writer.as_reader();
        let mut applied = pin!(reflector::reflector(writer, events).default_backoff());
        // The pods held when a relist began: those it does not find again were deleted.
        let mut before_relist: Vec<Arc<Pod>> = Vec::new();
        while let Some(event) = applied.next().await {
            let Ok(event) = event else {
                continue;
            };
            match event {
                watcher::Event::Apply(pod) => {
                    let held = store.get(&ObjectRef::from_obj(&pod));
                    tell(
                        &mut subscribers,
                        held.unwrap_or_else(|| Arc::new(pod)),
                        false,
                    )
                    .await;
                }
                watcher::Event::Delete(pod) => tell(&mut subscribers, Arc::new(pod), true).await,
                watcher::Event::Init => before_relist = store.state(),
                watcher::Event::InitApply(_) => {}
                watcher::Event::InitDone => {
                    for pod in std::mem::take(&mut before_relist) {
                        if store.get(&ObjectRef::from_obj(pod.as_ref())).is_none() {
                            tell(&mut subscribers, pod, true).await;
                        }
                    }
                    for pod in store.state() {
                        tell(&mut subscribers, pod, false).await;
                    }
                }
            }
        }
    }
}

/// Sends `pod` to every subscriber; a `deleted` pod only to those told of deletions.
async fn tell(subscribers: &mut [Subscriber], pod: Arc<Pod>, deleted: bool) {
    for subscriber in subscribers {
        if deleted && subscriber.deletions == Deletions::Untold {
            continue;
        }
        // A subscriber that is gone (its controller stopped) hears nothing more.
        let _ = subscriber.sender.send(pod.clone()).await;
    }
}

#[cfg(test)]
#[path = "pod_events_tests.rs"]
mod tests;
