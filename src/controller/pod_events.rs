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

use std::collections::HashMap;
use std::pin::pin;
use std::sync::Arc;

use futures::channel::mpsc;
use futures::{SinkExt, Stream, StreamExt};
use k8s_openapi::api::core::v1::Pod;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};

use super::pod_cache;
use crate::podmarks::PodSummary;

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

/// What the cache holds of the cluster's pods (see [`pod_cache`]).
#[derive(Clone)]
pub struct PodStores {
    /// The pruned pods that some controller reads whole ([`pod_cache::held`]).
    pub pods: Store<Pod>,
    /// Every pod's summary, for the SidecarSet planner.
    pub summaries: Store<PodSummary>,
}

/// The pod stores and their subscribers; [`PodEvents::run`] feeds them from a pod watch.
pub struct PodEvents {
    pods: reflector::store::Writer<Pod>,
    summaries: reflector::store::Writer<PodSummary>,
    held: fn(&Pod, &PodSummary) -> bool,
    buffer: usize,
    subscribers: Vec<Subscriber>,
}

impl PodEvents {
    /// The stores, and the feed of them; `held` chooses the pods kept whole (pruned), given the
    /// pruned pod and its summary. A subscriber may lag `buffer` events behind before the watch
    /// waits for it.
    pub fn new(buffer: usize, held: fn(&Pod, &PodSummary) -> bool) -> (PodStores, PodEvents) {
        let (pods, pod_writer) = reflector::store::<Pod>();
        let (summaries, summary_writer) = reflector::store::<PodSummary>();
        let events = PodEvents {
            pods: pod_writer,
            summaries: summary_writer,
            held,
            buffer,
            subscribers: Vec::new(),
        };
        (PodStores { pods, summaries }, events)
    }

    /// A stream of the pods of every event from now on; it must be drained, or the watch stalls.
    pub fn subscribe(&mut self, deletions: Deletions) -> mpsc::Receiver<Arc<Pod>> {
        let (sender, receiver) = mpsc::channel(self.buffer);
        self.subscribers.push(Subscriber { sender, deletions });
        receiver
    }

    /// Applies `events` (a watch of whole pods) to the stores and tells the subscribers the
    /// pruned pod; ends with `events`.
    pub async fn run(
        self,
        events: impl Stream<Item = Result<watcher::Event<Pod>, watcher::Error>> + Send,
    ) {
        let PodEvents {
            pods: mut writer,
            summaries: mut summary_writer,
            held,
            mut subscribers,
            ..
        } = self;
        let store = writer.as_reader();
        let summaries = summary_writer.as_reader();
        let mut events = pin!(events.default_backoff());
        // The pods held, and the summaries of all pods, when a relist began: those it does not
        // find again were deleted.
        let mut before_relist: Vec<Arc<Pod>> = Vec::new();
        let mut summaries_before_relist: Vec<Arc<PodSummary>> = Vec::new();
        while let Some(event) = events.next().await {
            let Ok(event) = event else {
                continue;
            };
            // Summaries are made from the whole pod, and stored before anyone is told, so a
            // reconcile an event triggers reads the new summary.
            let summarized = pod_cache::summarize(&event);
            summary_writer.apply_watcher_event(&summarized);
            // What `held` decides on: the pruned pod and the summary of the whole one.
            let is_held = |pod: &Pod| match &summarized {
                watcher::Event::Apply(summary) | watcher::Event::InitApply(summary) => {
                    held(pod, summary)
                }
                _ => false,
            };
            match event.modify(pod_cache::prune) {
                watcher::Event::Apply(pod) => {
                    let key = ObjectRef::from_obj(&pod);
                    let told = if is_held(&pod) {
                        writer.apply_watcher_event(&watcher::Event::Apply(pod));
                        store.get(&key)
                    } else {
                        // Not held (any more): gone from the store.
                        if store.get(&key).is_some() {
                            writer.apply_watcher_event(&watcher::Event::Delete(pod.clone()));
                        }
                        Some(Arc::new(pod))
                    };
                    if let Some(pod) = told {
                        tell(&mut subscribers, pod, false).await;
                    }
                }
                watcher::Event::Delete(pod) => {
                    writer.apply_watcher_event(&watcher::Event::Delete(pod.clone()));
                    tell(&mut subscribers, Arc::new(pod), true).await;
                }
                watcher::Event::Init => {
                    writer.apply_watcher_event(&watcher::Event::Init);
                    before_relist = store.state();
                    summaries_before_relist = summaries.state();
                }
                watcher::Event::InitApply(pod) => {
                    if is_held(&pod) {
                        writer.apply_watcher_event(&watcher::Event::InitApply(pod));
                    }
                }
                watcher::Event::InitDone => {
                    writer.apply_watcher_event(&watcher::Event::InitDone);
                    let mut held_before: HashMap<ObjectRef<Pod>, Arc<Pod>> = before_relist
                        .drain(..)
                        .map(|pod| (ObjectRef::from_obj(pod.as_ref()), pod))
                        .collect();
                    for summary in std::mem::take(&mut summaries_before_relist) {
                        if summaries.get(&pod_cache::store_key(&summary)).is_some() {
                            continue;
                        }
                        // Gone: told as the pod held then, or else as its summary's stand-in.
                        let pod = held_before
                            .remove(&pod_cache::store_key(&summary))
                            .unwrap_or_else(|| Arc::new(pod_cache::stand_in(&summary)));
                        tell(&mut subscribers, pod, true).await;
                    }
                    for pod in store.state() {
                        tell(&mut subscribers, pod, false).await;
                    }
                    // The pods not held are told as the stand-in their summary gives, one at a
                    // time: what the subscribers map events by (names, labels, injected list).
                    for summary in summaries.state() {
                        if store.get(&pod_cache::store_key(&summary)).is_none() {
                            let pod = Arc::new(pod_cache::stand_in(&summary));
                            tell(&mut subscribers, pod, false).await;
                        }
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
mod tests;
