//! The pod a [`super::PodWrite`] turns its pod into, either built already or built on first read.
//!
//! A round of a large CloneSet starts thousands of in-place updates, each with two writes whose
//! pods are whole copies of the listed pod with a few fields changed (and, for the spec write, a
//! state annotation serialized). The planner decides everything that could make a start fail
//! before it returns, so what is left — copying and applying the change — is the same function of
//! the listed pod whenever it runs: it is deferred until someone reads the pod (the shell, to
//! compute its patch just before sending it; tests). A round that is cut short by a conflict or
//! an error then never builds the pods it did not send.

use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, OnceLock};

use k8s_openapi::api::core::v1::Pod;

/// How a deferred pod is made from the listed pod.
pub type Build = Arc<dyn Fn(&Pod) -> Pod + Send + Sync>;

/// Reads as the pod to write (`Deref<Target = Pod>`); cloning it (`pod.clone()`) gives that
/// `Pod`. Two are equal when their pods are.
pub struct PodAfter(Inner);

#[derive(Clone)]
enum Inner {
    Built(Pod),
    Deferred {
        listed: Arc<Pod>,
        build: Build,
        built: OnceLock<Pod>,
    },
}

impl PodAfter {
    pub fn built(pod: Pod) -> Self {
        PodAfter(Inner::Built(pod))
    }

    /// `build(listed)`, made when first read.
    pub fn deferred(listed: Arc<Pod>, build: Build) -> Self {
        PodAfter(Inner::Deferred {
            listed,
            build,
            built: OnceLock::new(),
        })
    }

    /// A second handle on the same pod (deferred ones stay deferred). Not `Clone`, so that
    /// `pod.clone()` is the `Pod`'s clone.
    pub fn duplicate(&self) -> Self {
        PodAfter(self.0.clone())
    }

    /// The pod changed by `change` after it is built (deferred ones stay deferred).
    pub fn then(self, change: impl Fn(&mut Pod) + Send + Sync + 'static) -> Self {
        match self.0 {
            Inner::Built(mut pod) => {
                change(&mut pod);
                PodAfter(Inner::Built(pod))
            }
            Inner::Deferred { listed, build, .. } => PodAfter::deferred(
                listed,
                Arc::new(move |pod: &Pod| {
                    let mut built = build(pod);
                    change(&mut built);
                    built
                }),
            ),
        }
    }

    /// Whether the pod has been built (tests of the deferral).
    pub fn is_built(&self) -> bool {
        match &self.0 {
            Inner::Built(_) => true,
            Inner::Deferred { built, .. } => built.get().is_some(),
        }
    }
}

impl Deref for PodAfter {
    type Target = Pod;

    fn deref(&self) -> &Pod {
        match &self.0 {
            Inner::Built(pod) => pod,
            Inner::Deferred {
                listed,
                build,
                built,
            } => built.get_or_init(|| build(listed)),
        }
    }
}

impl PartialEq for PodAfter {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl fmt::Debug for PodAfter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Pod::fmt(self, f)
    }
}

#[cfg(test)]
mod tests;
