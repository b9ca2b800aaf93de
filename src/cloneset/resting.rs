//! Which pods the in-place engine is at rest on, remembered from one round to the next.

use std::collections::HashMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;

use super::update::engine_at_rest;

/// [`engine_at_rest`] verdicts kept from one round to the next, each with the `resourceVersion`
/// of the pod it was taken on: the apiserver changes it with every change of the pod, so only
/// pods that changed are judged again.
#[derive(Debug, Default)]
pub struct RestingPods {
    /// By uid.
    known: HashMap<String, Verdict>,
    /// Entries left by the last sweep.
    after_sweep: usize,
}

#[derive(Debug)]
struct Verdict {
    namespace: String,
    name: String,
    resource_version: String,
    at_rest: bool,
}

impl RestingPods {
    /// [`engine_at_rest`] of each of `pods`, in order. `exists(namespace, name, uid)`: whether
    /// the pod is still in the cache, asked only once the map has doubled since the last sweep,
    /// so that the entries of deleted pods go.
    pub fn verdicts(
        &mut self,
        pods: &[Arc<Pod>],
        exists: impl Fn(&str, &str, &str) -> bool,
    ) -> Vec<bool> {
        let verdicts = pods.iter().map(|p| self.verdict(p)).collect();
        if self.known.len() > 2 * self.after_sweep.max(1024) {
            self.known
                .retain(|uid, v| exists(&v.namespace, &v.name, uid));
            self.after_sweep = self.known.len();
        }
        verdicts
    }

    fn verdict(&mut self, p: &Pod) -> bool {
        let meta = &p.metadata;
        let (Some(uid), Some(version)) = (meta.uid.as_deref(), meta.resource_version.as_deref())
        else {
            return engine_at_rest(p);
        };
        if let Some(known) = self.known.get(uid)
            && known.resource_version == version
        {
            return known.at_rest;
        }
        let at_rest = engine_at_rest(p);
        let verdict = Verdict {
            namespace: meta.namespace.clone().unwrap_or_default(),
            name: meta.name.clone().unwrap_or_default(),
            resource_version: version.to_string(),
            at_rest,
        };
        self.known.insert(uid.to_string(), verdict);
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
