//! `persistentVolumeClaimRetentionPolicy` (OpenKruise `stateful_set_utils.go`
//! `claimOwnerMatchesSetAndPod`, `updateClaimOwnerRefForSetAndPod`, `hasStaleOwnerRef`;
//! `stateful_pod_control.go` `PodClaimIsStale`).
//!
//! The controller never deletes a PVC. It writes ownerReferences, and the garbage collector does
//! the rest: a PVC owned by the set goes with the set, one owned by its pod goes with that pod.
//!
//! | whenScaled / whenDeleted | pod in range        | pod scaled down     |
//! |--------------------------|---------------------|---------------------|
//! | Retain / Retain          | –                   | –                   |
//! | Retain / Delete          | set                 | set                 |
//! | Delete / Retain          | –                   | pod                 |
//! | Delete / Delete          | set                 | pod                 |
//!
//! A pod is *scaled down* when its ordinal is outside the replica range or reserved. References
//! are matched by uid only; those written carry `apiVersion`, `kind`, `name` and `uid` and nothing
//! else (no `controller`, no `blockOwnerDeletion`).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

use crate::api::statefulset::{DELETE, RETAIN, StatefulSet};

/// The policy's two answers. Any combination other than the four of Retain and Delete reads as
/// Retain / Retain, as OpenKruise's switch falls through to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    pub delete_when_scaled: bool,
    pub delete_when_deleted: bool,
}

impl Policy {
    pub const RETAIN: Policy = Policy {
        delete_when_scaled: false,
        delete_when_deleted: false,
    };

    pub fn of(set: &StatefulSet) -> Policy {
        let Some(policy) = set.spec.persistent_volume_claim_retention_policy.as_ref() else {
            return Policy::RETAIN;
        };
        let read = |value: &Option<String>| match value.as_deref() {
            Some(RETAIN) => Some(false),
            Some(DELETE) => Some(true),
            _ => None,
        };
        match (read(&policy.when_scaled), read(&policy.when_deleted)) {
            (Some(delete_when_scaled), Some(delete_when_deleted)) => Policy {
                delete_when_scaled,
                delete_when_deleted,
            },
            _ => Policy::RETAIN,
        }
    }

    /// The owners a claim of a pod should have: (the set, the pod).
    pub fn owners(self, scaled_down: bool) -> (bool, bool) {
        match (self.delete_when_scaled, self.delete_when_deleted) {
            (false, false) => (false, false),
            (false, true) => (true, false),
            (true, false) => (false, scaled_down),
            (true, true) => (!scaled_down, scaled_down),
        }
    }
}

/// OpenKruise `PodClaimIsStale`, for the claims of a pod about to be created: unless
/// `whenScaled` is `Retain` (exactly: a policy without one counts as Retain only when the whole
/// policy is absent), a claim referring to a pod of that name is stale (it belongs to a pod
/// that is gone; the garbage collector is about to delete it) and blocks the pod.
pub fn blocks_creation<'a>(
    set: &StatefulSet,
    pod_name: &str,
    claims: impl IntoIterator<Item = &'a [OwnerReference]>,
) -> bool {
    let when_scaled = set
        .spec
        .persistent_volume_claim_retention_policy
        .as_ref()
        .map_or(Some(RETAIN), |p| p.when_scaled.as_deref());
    if when_scaled == Some(RETAIN) {
        return false;
    }
    // The new pod has no uid yet: every reference by its name is to another pod.
    claims
        .into_iter()
        .any(|refs| refs.iter().any(|r| r.name == pod_name))
}

/// One owner: the set or the pod.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Owner<'a> {
    pub name: &'a str,
    pub uid: &'a str,
}

/// Whether a claim's references match the policy (`claimOwnerMatchesSetAndPod`).
pub fn matches(
    policy: Policy,
    refs: &[OwnerReference],
    set_uid: &str,
    pod_uid: &str,
    scaled_down: bool,
) -> bool {
    let (want_set, want_pod) = policy.owners(scaled_down);
    has(refs, set_uid) == want_set && has(refs, pod_uid) == want_pod
}

fn has(refs: &[OwnerReference], uid: &str) -> bool {
    refs.iter().any(|r| r.uid == uid)
}

/// The claim's references as the policy wants them, or `None` when they already are
/// (`updateClaimOwnerRefForSetAndPod`): unwanted owners removed (the others keep their order),
/// a wanted one missing appended. A pod without a uid (not created yet) gets no reference.
pub fn wanted_refs(
    policy: Policy,
    refs: &[OwnerReference],
    set: Owner<'_>,
    pod: Owner<'_>,
    scaled_down: bool,
) -> Option<Vec<OwnerReference>> {
    let (want_set, want_pod) = policy.owners(scaled_down);
    let mut out: Vec<OwnerReference> = refs
        .iter()
        .filter(|r| (want_set || r.uid != set.uid) && (want_pod || r.uid != pod.uid))
        .cloned()
        .collect();
    if want_set && !has(&out, set.uid) {
        out.push(set_ref(set));
    }
    if want_pod && !pod.uid.is_empty() && !has(&out, pod.uid) {
        out.push(OwnerReference {
            api_version: "v1".into(),
            kind: "Pod".into(),
            name: pod.name.into(),
            uid: pod.uid.into(),
            ..OwnerReference::default()
        });
    }
    (out != refs).then_some(out)
}

/// The reference to the set a claim carries under `whenDeleted: Delete`.
pub fn set_ref(set: Owner<'_>) -> OwnerReference {
    OwnerReference {
        api_version: "apps.kruise.io/v1beta1".into(),
        kind: "StatefulSet".into(),
        name: set.name.into(),
        uid: set.uid.into(),
        ..OwnerReference::default()
    }
}

#[cfg(test)]
mod tests;
