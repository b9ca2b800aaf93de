//! PVCs from a CloneSet's `volumeClaimTemplates` (OpenKruise `cloneset_utils.go`
//! `GetPersistentVolumeClaims`/`UpdateStorage`, `cloneset_scale.go` `getOrGenAvailableIDs`/
//! `deletePods`, `cloneset_controller.go` `cleanupPVCs`).
//!
//! Every pod has an instance id: the label `apps.kruise.io/cloneset-instance-id` and the suffix of
//! its name `<cloneset>-<id>`. Each template gives the pod one PVC `<template>-<cloneset>-<id>`
//! with the same label, created before the pod and mounted as the volume named like the template.
//!
//! - A new pod takes the id of PVCs no pod uses, so a pod deleted behind the controller's back
//!   comes back with its storage (unless `scaleStrategy.disablePVCReuse`).
//! - When the controller deletes a pod (scale-in, specified delete, re-create update) it deletes
//!   the PVCs of the pod's id once the pod's deletion is accepted.
//! - `disablePVCReuse`: every round, PVCs whose id no active pod carries are deleted, or handed to
//!   the finished or terminating pod of that id so that garbage collection takes them with it.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

use crate::api::cloneset::CloneSet;
use crate::podmarks::PodView;
pub use crate::workload::pvc::HandOver;
use crate::workload::{Action, Workload, pod, pvc};

/// Pod and PVC label: the 5-character id shared by a pod and its PVCs.
pub const INSTANCE_ID: &str = "apps.kruise.io/cloneset-instance-id";

/// Characters of instance ids (Kubernetes' `rand.String` alphabet).
const ID_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
const ID_LEN: usize = 5;

/// What the shell does about PVCs in one round, besides the pods.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClaimPlan {
    /// New pod name → the PVCs to create before it (those that do not exist yet).
    pub create: BTreeMap<String, Vec<PersistentVolumeClaim>>,
    /// Pod name → the PVCs to delete once that pod's deletion is accepted.
    pub delete_with_pod: BTreeMap<String, Vec<String>>,
    /// `disablePVCReuse`: PVCs of no pod, deleted before the pod actions.
    pub delete: Vec<String>,
    /// `disablePVCReuse`: PVCs of a finished or terminating pod, handed to that pod.
    pub hand_over: Vec<HandOver>,
}

impl ClaimPlan {
    pub fn is_empty(&self) -> bool {
        self.create.values().all(Vec::is_empty)
            && self.delete_with_pod.values().all(Vec::is_empty)
            && self.delete.is_empty()
            && self.hand_over.is_empty()
    }
}

fn id_of(meta: &ObjectMeta) -> Option<&str> {
    meta.labels
        .as_ref()?
        .get(INSTANCE_ID)
        .map(String::as_str)
        .filter(|id| !id.is_empty())
}

/// The pod's instance id, as [`id_of`] reads a PVC's.
fn pod_id<P: PodView>(pod: &P) -> Option<&str> {
    pod::label(pod, INSTANCE_ID).filter(|id| !id.is_empty())
}

fn terminating(meta: &ObjectMeta) -> bool {
    meta.deletion_timestamp.is_some()
}

/// `scaleStrategy.disablePVCReuse`.
pub fn reuse_disabled(cloneset: &CloneSet) -> bool {
    cloneset.spec.scale_strategy.disable_pvc_reuse == Some(true)
}

/// `<template>-<cloneset>-<id>`.
pub fn claim_name(template: &str, cloneset: &CloneSet, id: &str) -> String {
    pvc::claim_name(template, cloneset.name(), id)
}

/// The PVCs of the pod with instance id `id`, one per template, as they are created
/// ([`pvc::claims_for`]), labelled with the id and owned by the CloneSet (controller).
pub fn claims_for(cloneset: &CloneSet, id: &str) -> Vec<PersistentVolumeClaim> {
    pvc::claims_for(
        cloneset,
        id,
        &[(INSTANCE_ID, id)],
        Some(&cloneset.owner_reference()),
    )
}

/// Where the ids of new pods come from: first the ids of PVCs no pod uses (sorted), then random
/// ids that no pod and no PVC carries.
#[derive(Debug, Clone)]
pub struct InstanceIds {
    reusable: Vec<String>,
    used: BTreeSet<String>,
}

impl InstanceIds {
    /// `pods`: every pod of the CloneSet, in any state; `claims`: its listed PVCs, terminating ones
    /// included.
    ///
    /// Reusable: ids of non-terminating PVCs that no active pod carries (OpenKruise) and no
    /// finished pod either: a Failed or Succeeded pod keeps the name `<cloneset>-<id>` until
    /// someone deletes it, so a new pod of that id could not be created before then. A terminating
    /// pod's id is reusable: its replacement is refused (409) until the old pod is gone, and then
    /// gets the old pod's storage back. Ids no pod carries come first, those of terminating pods
    /// last, so that a refused creation does not hold back the others.
    pub fn new<P: PodView>(cloneset: &CloneSet, pods: &[P], claims: &[&ObjectMeta]) -> Self {
        let mut used: BTreeSet<String> = claims
            .iter()
            .filter_map(|c| id_of(c))
            .map(str::to_string)
            .collect();
        let mut blocked = BTreeSet::new();
        let mut later = BTreeSet::new();
        for p in pods {
            let Some(id) = pod_id(p) else {
                continue;
            };
            used.insert(id.to_string());
            if pod::is_active(p) || !p.deleting() {
                blocked.insert(id);
            } else {
                later.insert(id);
            }
        }
        let mut reusable = Vec::new();
        if !reuse_disabled(cloneset) {
            let free: BTreeSet<&str> = claims
                .iter()
                .filter(|c| !terminating(c))
                .filter_map(|c| id_of(c))
                .filter(|id| !blocked.contains(id))
                .collect();
            let (waiting, now): (Vec<&str>, Vec<&str>) =
                free.into_iter().partition(|id| later.contains(id));
            reusable = now.into_iter().chain(waiting).map(str::to_string).collect();
        }
        reusable.reverse();
        InstanceIds { reusable, used }
    }

    /// The id of the next new pod.
    pub fn next(&mut self, rng: &mut fastrand::Rng) -> String {
        if let Some(id) = self.reusable.pop() {
            return id;
        }
        loop {
            let id: String = (0..ID_LEN)
                .map(|_| char::from(ID_ALPHABET[rng.usize(..ID_ALPHABET.len())]))
                .collect();
            if self.used.insert(id.clone()) {
                return id;
            }
        }
    }
}

/// The PVC side of a round whose pod actions are `actions`: the PVCs to create for each new pod,
/// to delete with each deleted pod, and (with `disablePVCReuse`) the clean-up of PVCs no active
/// pod uses. `pods` are every pod of the CloneSet, `claims` its listed PVCs.
pub fn plan<P: PodView>(
    cloneset: &CloneSet,
    pods: &[P],
    claims: &[&ObjectMeta],
    actions: &[Action],
) -> ClaimPlan {
    let mut out = ClaimPlan::default();
    let existing: BTreeSet<&str> = claims.iter().filter_map(|c| c.name.as_deref()).collect();
    let live: Vec<&ObjectMeta> = claims.iter().copied().filter(|c| !terminating(c)).collect();
    let of_id = |id: &str| -> Vec<String> {
        live.iter()
            .filter(|c| id_of(c) == Some(id))
            .filter_map(|c| c.name.clone())
            .collect()
    };
    for action in actions {
        match action {
            Action::CreatePod { pod: new, .. } => {
                let Some(id) = id_of(&new.metadata) else {
                    continue;
                };
                let missing: Vec<PersistentVolumeClaim> = claims_for(cloneset, id)
                    .into_iter()
                    .filter(|c| !existing.contains(c.metadata.name.as_deref().unwrap_or("")))
                    .collect();
                if !missing.is_empty() {
                    out.create.insert(pod::name(new).to_string(), missing);
                }
            }
            Action::DeletePod { name } => {
                let Some(id) = pods
                    .iter()
                    .find(|p| pod::name(*p) == name.as_str())
                    .and_then(pod_id)
                else {
                    continue;
                };
                let names = of_id(id);
                if !names.is_empty() {
                    out.delete_with_pod.insert(name.clone(), names);
                }
            }
            // A CloneSet's PVCs go with its pods (above); it plans no PVC action of its own.
            Action::WritePod { .. }
            | Action::UpdatePod { .. }
            | Action::CreatePvc { .. }
            | Action::UpdatePvcOwners { .. }
            | Action::Event(_) => {}
        }
    }
    if reuse_disabled(cloneset) {
        clean_up(cloneset, pods, &live, &mut out);
    }
    out
}

/// `disablePVCReuse` (OpenKruise `cleanupPVCs`): a PVC whose id no active pod carries is handed
/// to the inactive pod of that id, or deleted when there is none.
fn clean_up<P: PodView>(
    cloneset: &CloneSet,
    pods: &[P],
    live: &[&ObjectMeta],
    out: &mut ClaimPlan,
) {
    let active: BTreeSet<&str> = pods
        .iter()
        .filter(|p| pod::is_active(*p))
        .filter_map(pod_id)
        .collect();
    let inactive: BTreeMap<&str, &P> = pods
        .iter()
        .filter(|p| !pod::is_active(*p))
        .filter_map(|p| Some((pod_id(p)?, p)))
        .collect();
    let set_uid = cloneset.uid();
    for claim in live {
        let Some(id) = id_of(claim) else {
            continue;
        };
        let Some(name) = claim.name.clone() else {
            continue;
        };
        if active.contains(id) {
            continue;
        }
        let Some(owner) = inactive.get(id) else {
            out.delete.push(name);
            continue;
        };
        let pod_uid = owner.uid().to_string();
        let mut owner_references: Vec<OwnerReference> = claim
            .owner_references
            .iter()
            .flatten()
            .filter(|o| o.uid != set_uid)
            .cloned()
            .collect();
        if !owner_references.iter().any(|o| o.uid == pod_uid) {
            owner_references.push(OwnerReference {
                api_version: "v1".into(),
                kind: "Pod".into(),
                name: pod::name(owner).to_string(),
                uid: pod_uid,
                controller: Some(true),
                block_owner_deletion: Some(true),
            });
        }
        out.hand_over.push(HandOver {
            claim: name,
            resource_version: claim.resource_version.clone(),
            pod: pod::name(owner).to_string(),
            owner_references,
        });
    }
}

#[cfg(test)]
mod tests;
