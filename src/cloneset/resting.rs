//! Which pods the in-place engine is at rest on, remembered from one round to the next.

use std::collections::HashMap;
use std::sync::{Arc, Weak};

use k8s_openapi::api::core::v1::Pod;

use super::update::engine_at_rest;

/// [`engine_at_rest`] verdicts kept from one round to the next. The pod cache hands out an
/// unchanged pod as the same `Arc` and a changed one as a new `Arc`, so a verdict is reused while
/// the pod's `Arc` is the one it was taken on (the `Weak` kept with it keeps that allocation, and
/// so its address, from being reused).
#[derive(Debug, Default)]
pub struct RestingPods {
    /// By pod uid.
    known: HashMap<String, (Weak<Pod>, bool)>,
    /// Entries after the last sweep of pods gone from the cache.
    after_sweep: usize,
}

impl RestingPods {
    /// [`engine_at_rest`] of each of `pods`, in order.
    pub fn verdicts(&mut self, pods: &[Arc<Pod>]) -> Vec<bool> {
        let verdicts = pods.iter().map(|p| self.verdict(p)).collect();
        // Pods gone from the cache leave entries behind: swept once they could be half the map.
        if self.known.len() > 2 * self.after_sweep.max(1024) {
            self.known.retain(|_, (pod, _)| pod.strong_count() > 0);
            self.after_sweep = self.known.len();
        }
        verdicts
    }

    fn verdict(&mut self, p: &Arc<Pod>) -> bool {
        let Some(uid) = p.metadata.uid.as_deref() else {
            return engine_at_rest(p);
        };
        if let Some((pod, at_rest)) = self.known.get(uid)
            && std::ptr::eq(pod.as_ptr(), Arc::as_ptr(p))
        {
            return *at_rest;
        }
        let at_rest = engine_at_rest(p);
        self.known
            .insert(uid.to_string(), (Arc::downgrade(p), at_rest));
        at_rest
    }

    /// How many verdicts are kept (tests).
    pub fn len(&self) -> usize {
        self.known.len()
    }

    pub fn is_empty(&self) -> bool {
        self.known.is_empty()
    }
}

#[cfg(test)]
mod tests;
