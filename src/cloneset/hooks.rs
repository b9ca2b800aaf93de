//! Lifecycle hooks (`spec.lifecycle`, OpenKruise `apps/pub`): a user's controller holds a pod in
//! `PreparingDelete` / `PreparingUpdate` by leaving the hook's labels or finalizers on it, lets it
//! go by removing them, and puts them back to let an updated pod return to `Normal`.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Pod;

use crate::api::cloneset::{CloneSet, LifecycleHook};

/// The hooks a CloneSet sets.
pub fn pre_delete(set: &CloneSet) -> Option<&LifecycleHook> {
    set.spec.lifecycle.as_ref()?.pre_delete.as_ref()
}

pub fn in_place_update(set: &CloneSet) -> Option<&LifecycleHook> {
    set.spec.lifecycle.as_ref()?.in_place_update.as_ref()
}

pub fn pre_normal(set: &CloneSet) -> Option<&LifecycleHook> {
    set.spec.lifecycle.as_ref()?.pre_normal.as_ref()
}

fn has_label(pod: &Pod, key: &str, value: &str) -> bool {
    pod.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(key))
        .is_some_and(|v| v == value)
}

fn has_finalizer(pod: &Pod, finalizer: &str) -> bool {
    pod.metadata
        .finalizers
        .iter()
        .flatten()
        .any(|f| f == finalizer)
}

fn labels(hook: &LifecycleHook) -> impl Iterator<Item = (&String, &String)> {
    hook.labels_handler.iter().flatten()
}

fn finalizers(hook: &LifecycleHook) -> impl Iterator<Item = &String> {
    hook.finalizers_handler.iter().flatten()
}

/// The pod carries **any** of the hook's labels or finalizers: the hook holds it.
pub fn hooked(pod: &Pod, hook: &LifecycleHook) -> bool {
    labels(hook).any(|(k, v)| has_label(pod, k, v))
        || finalizers(hook).any(|f| has_finalizer(pod, f))
}

/// The pod carries **all** of them (an empty hook counts as all).
pub fn all_hooked(pod: &Pod, hook: &LifecycleHook) -> bool {
    labels(hook).all(|(k, v)| has_label(pod, k, v))
        && finalizers(hook).all(|f| has_finalizer(pod, f))
}

/// Puts the hook's labels and finalizers (back) on the pod.
pub fn add_markers(pod: &mut Pod, hook: &LifecycleHook) {
    let pod_labels = pod.metadata.labels.get_or_insert_with(BTreeMap::new);
    for (k, v) in labels(hook) {
        pod_labels.insert(k.clone(), v.clone());
    }
    for finalizer in finalizers(hook) {
        if !has_finalizer(pod, finalizer) {
            pod.metadata
                .finalizers
                .get_or_insert_with(Vec::new)
                .push(finalizer.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hook() -> LifecycleHook {
        LifecycleHook {
            labels_handler: Some(BTreeMap::from([("hold".into(), "true".into())])),
            finalizers_handler: Some(vec!["example.com/drain".into()]),
            mark_pod_not_ready: None,
        }
    }

    #[test]
    fn any_marker_holds_all_markers_release_from_updated() {
        let mut pod = Pod::default();
        assert!(!hooked(&pod, &hook()) && !all_hooked(&pod, &hook()));
        pod.metadata.finalizers = Some(vec!["example.com/drain".into()]);
        assert!(hooked(&pod, &hook()) && !all_hooked(&pod, &hook()));
        // A label with another value is not the marker.
        pod.metadata.labels = Some(BTreeMap::from([("hold".into(), "false".into())]));
        assert!(!all_hooked(&pod, &hook()));
        add_markers(&mut pod, &hook());
        assert!(all_hooked(&pod, &hook()));
        assert_eq!(
            pod.metadata.finalizers.as_ref().unwrap().len(),
            1,
            "not added twice"
        );
        assert!(
            all_hooked(&Pod::default(), &LifecycleHook::default()),
            "an empty hook"
        );
    }
}
