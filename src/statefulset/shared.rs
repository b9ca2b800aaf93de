//! What the Advanced StatefulSet borrows from the CloneSet's core: PVCs from
//! `volumeClaimTemplates` (claim names `<template>-<set>-<suffix>`, mounted as volumes named
//! like the template). The CloneSet's functions take a CloneSet; the set's name, namespace,
//! selector and templates are all they read of it.

use k8s_openapi::api::core::v1::{PersistentVolumeClaim, PodSpec};

use crate::api::cloneset::CloneSet;
use crate::api::statefulset::StatefulSet;
use crate::cloneset::pod::INSTANCE_ID;
use crate::cloneset::pvc;

fn as_claim_owner(set: &StatefulSet) -> CloneSet {
    let mut owner = CloneSet::default();
    owner.metadata.name = set.metadata.name.clone();
    owner.metadata.namespace = set.metadata.namespace.clone();
    owner.spec.selector = set.spec.selector.clone();
    owner.spec.volume_claim_templates = set.spec.volume_claim_templates.clone();
    owner
}

/// Mounts the claims of `ordinal` into a pod's spec (OpenKruise `updateStorage`, in template
/// order where Go walks a map).
pub fn mount_claims(set: &StatefulSet, spec: &mut PodSpec, ordinal: i64) {
    pvc::mount(&as_claim_owner(set), spec, &ordinal.to_string());
}

/// The claims of `ordinal` as they are created (`getPersistentVolumeClaims`): the template named
/// `<template>-<set>-<ordinal>`, in the set's namespace, its labels with the selector's
/// `matchLabels` written over them, and no owner.
pub fn claims_of(set: &StatefulSet, ordinal: i64) -> Vec<PersistentVolumeClaim> {
    let mut claims = pvc::claims_for(&as_claim_owner(set), &ordinal.to_string());
    for claim in &mut claims {
        if let Some(labels) = claim.metadata.labels.as_mut() {
            labels.remove(INSTANCE_ID);
        }
        claim.metadata.owner_references = None;
    }
    claims
}

/// `<template>-<set>-<ordinal>`.
pub fn claim_name(template: &str, set_name: &str, ordinal: i64) -> String {
    format!("{template}-{set_name}-{ordinal}")
}
