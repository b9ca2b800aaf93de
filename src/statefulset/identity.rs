//! A pod's identity in its set (OpenKruise `stateful_set_utils.go` `newStatefulSetPod`,
//! `initIdentity`, `updateIdentity`, `identityMatches`, `storageMatches`,
//! `isCurrentRevisionNeeded`): its name `<set>-<ordinal>`, the labels naming it, its hostname
//! and subdomain, the volumes of its claims; and at which revision a new pod is made.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Pod, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::ordinals::{Slot, Slots, is_canonical, is_ordinal_text, parent_and_ordinal, pod_name};
use super::pod::StatefulPodFacts;
use crate::api::keys;
use crate::api::statefulset::{ROLLING_UPDATE, StatefulSet};
use crate::workload::Workload;
use crate::workload::lifecycle::{
    self, LIFECYCLE_STATE, LIFECYCLE_TIMESTAMP, NORMAL, PREPARING_NORMAL,
};
use crate::workload::pvc::{claim_suffix, mount};

fn set_name(set: &StatefulSet) -> &str {
    set.metadata.name.as_deref().unwrap_or("")
}

/// The lifecycle state a new pod starts in: `PreparingNormal` while a `preNormal` hook's
/// labels and finalizers are not all on it, else `Normal`.
pub fn first_lifecycle_state(set: &StatefulSet, pod: &Pod) -> &'static str {
    match lifecycle::pre_normal(set.lifecycle()) {
        Some(hook) if !lifecycle::all_hooked(pod, hook) => PREPARING_NORMAL,
        _ => NORMAL,
    }
}

/// The pod of `ordinal` from `template` at `revision`, as it is created: the template's labels,
/// annotations and finalizers, the identity labels, the revision, the lifecycle state and its
/// timestamp; hostname, subdomain; the claims' volumes before the template's other volumes.
pub fn new_pod(
    set: &StatefulSet,
    template: &PodTemplateSpec,
    revision: &str,
    ordinal: i64,
    now_text: &str,
) -> Pod {
    let name = set_name(set);
    let meta = template.metadata.clone().unwrap_or_default();
    let mut pod = Pod {
        metadata: ObjectMeta {
            name: Some(pod_name(name, ordinal)),
            generate_name: Some(format!("{name}-")),
            namespace: set.metadata.namespace.clone(),
            labels: Some(meta.labels.unwrap_or_default()),
            annotations: meta.annotations,
            finalizers: meta.finalizers,
            owner_references: Some(vec![set.owner_reference()]),
            ..ObjectMeta::default()
        },
        spec: Some(template.spec.clone().unwrap_or_default()),
        status: None,
    };
    set_identity_labels(&mut pod, ordinal);
    let labels = pod.metadata.labels.get_or_insert_with(BTreeMap::new);
    labels.insert(keys::CONTROLLER_REVISION_HASH.into(), revision.into());
    let spec = pod.spec.get_or_insert_with(Default::default);
    spec.hostname = pod.metadata.name.clone();
    spec.subdomain = set.spec.service_name.clone().filter(|s| !s.is_empty());
    mount(set, spec, &ordinal.to_string());
    let state = first_lifecycle_state(set, &pod);
    pod.metadata
        .labels
        .get_or_insert_with(BTreeMap::new)
        .insert(LIFECYCLE_STATE.into(), state.into());
    pod.metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(LIFECYCLE_TIMESTAMP.into(), now_text.into());
    pod
}

/// `updateIdentity`'s labels: the pod's name and ordinal.
fn set_identity_labels(pod: &mut Pod, ordinal: i64) {
    let name = pod.metadata.name.clone().unwrap_or_default();
    let labels = pod.metadata.labels.get_or_insert_with(BTreeMap::new);
    labels.insert(keys::STATEFULSET_POD_NAME.into(), name);
    labels.insert(keys::POD_INDEX.into(), ordinal.to_string());
}

/// `identityMatches`, for a pod of the set at `ordinal`: its name is the ordinal's, it lives in
/// the set's namespace and carries its name label (the index label is not checked).
pub fn identity_matches(
    set: &StatefulSet,
    ordinal: i64,
    name: &str,
    namespace: &str,
    name_label: Option<&str>,
) -> bool {
    parent_and_ordinal(name) == Some((set_name(set), ordinal))
        && is_canonical(name)
        && namespace == set.metadata.namespace.as_deref().unwrap_or("")
        && name_label == Some(name)
}

/// `storageMatches`: every claim template has a volume of its name that mounts the ordinal's
/// claim. `volumes`: the pod's volumes with a PVC source, as (name, claim name)
/// (`PodView::claim_volumes`).
pub fn storage_matches<'a>(
    set: &StatefulSet,
    ordinal: i64,
    volumes: impl Iterator<Item = (&'a str, &'a str)> + Clone,
) -> bool {
    let name = set_name(set);
    set.volume_claim_templates().iter().all(|template| {
        let template = template.metadata.name.as_deref().unwrap_or("");
        volumes.clone().any(|(volume, claim)| {
            volume == template
                && claim_suffix(claim, template, name).is_some_and(|s| is_ordinal_text(s, ordinal))
        })
    })
}

/// `UpdateStatefulPod`'s pod: the identity labels set where the identity does not match, the
/// claims' volumes mounted where the storage does not.
pub fn with_identity(
    set: &StatefulSet,
    pod: &Pod,
    ordinal: i64,
    identity_ok: bool,
    storage_ok: bool,
) -> Pod {
    let mut after = pod.clone();
    if !identity_ok {
        after.metadata.namespace = set.metadata.namespace.clone();
        set_identity_labels(&mut after, ordinal);
    }
    if !storage_ok {
        mount(
            set,
            after.spec.get_or_insert_with(Default::default),
            &ordinal.to_string(),
        );
    }
    after
}

/// Which revision each missing slot's new pod takes (`isCurrentRevisionNeeded`), in slot order:
/// `true` for the current revision. `existing` gives the facts of the listed pod at a position.
///
/// - `updateStrategy.type` other than `RollingUpdate`: the update revision;
/// - no `rollingUpdate`: the current revision below `status.currentReplicas`;
/// - no `unorderedUpdate`: the current revision while the pods up to this slot (reserved slots
///   not counted) are no more than `partition`;
/// - `unorderedUpdate`: the current revision while fewer than `partition` other pods are not at
///   the update revision (the new pods of lower slots, decided first, included).
///
/// When the current revision is the update revision the answer names the same revision either
/// way.
pub fn new_pod_revisions(
    set: &StatefulSet,
    slots: &Slots,
    existing: impl Fn(usize) -> StatefulPodFacts,
) -> Vec<(usize, bool)> {
    let strategy = &set.spec.update_strategy;
    let missing = slots
        .slots
        .iter()
        .enumerate()
        .filter(|(_, s)| **s == Slot::Missing)
        .map(|(i, _)| i);
    if strategy.type_.as_deref() != Some(ROLLING_UPDATE) {
        return missing.map(|i| (i, false)).collect();
    }
    let Some(rolling) = strategy.rolling_update.as_ref() else {
        let current = i64::from(set.status.as_ref().map_or(0, |s| s.current_replicas));
        return missing
            .map(|i| (i, slots.ordinal_at(i) < slots.range.start + current))
            .collect();
    };
    let partition = i64::from(rolling.partition.unwrap_or(0));
    if rolling.unordered_update.is_none() {
        let mut replicas_below = 0;
        let mut out = Vec::new();
        for (i, slot) in slots.slots.iter().enumerate() {
            if *slot == Slot::Missing {
                out.push((i, replicas_below < partition));
            }
            replicas_below += i64::from(slot.is_replica());
        }
        return out;
    }
    // Pods not at the update revision: the listed ones, then the new ones as they are decided.
    let not_updated = |slot: &Slot| slot.pod().is_some_and(|p| !existing(p).names_update);
    let old_listed = slots.slots.iter().filter(|s| not_updated(s)).count() as i64;
    let mut old_new = 0;
    let mut out = Vec::new();
    for (i, slot) in slots.slots.iter().enumerate() {
        if *slot != Slot::Missing {
            continue;
        }
        let current = old_listed + old_new < partition;
        old_new += i64::from(current);
        out.push((i, current));
    }
    out
}

#[cfg(test)]
mod tests;
