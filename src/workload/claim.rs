//! Which of the listed pods a workload controls this round (OpenKruise `claimPods`, the ref
//! manager's `ClaimOwnedObjects`). Active pods only: finished and terminating ones pass as listed,
//! since OpenKruise claims only the active ones and keeps the others for PVC bookkeeping. Of the
//! active pods, one
//!
//! - controlled by another owner: ignored;
//! - controlled by this workload and selected by its selector: kept;
//! - controlled by this workload but no longer selected (relabelled): released, i.e. our
//!   ownerReference removed, unless the workload is being deleted (then only left out);
//! - controlled by nobody, selected, and the workload not being deleted:
//!   adopted, i.e. our controller ownerReference set (replacing a reference to the same object).
//!
//! Which pods are listed is the caller's choice (the shell's `Listing`). OpenKruise lists a
//! CloneSet's pods by their ownerReferences, so a bare pod that merely carries its labels is not
//! adopted (its maintainers declined adoption by labels: the pod would lack an instance id and
//! the PVCs of one); the shell lists the StatefulSet's the same way. The DaemonSet, as upstream,
//! lists every pod of the namespace and adopts the orphans its selector selects.

use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

use super::pod::is_active;
use super::{ListedPod, Workload};
use crate::k8s::selector::{self, SelectorError};
use crate::podmarks::PodView;

/// One ownership write: `after` is `before` with its new ownerReferences.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub before: Arc<Pod>,
    pub after: Pod,
    /// `true`: adoption; `false`: release.
    pub adopt: bool,
}

/// The outcome of claiming.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Claims {
    /// Pods the workload controls and keeps, and the inactive pods as listed, in list order.
    pub kept: Vec<ListedPod>,
    /// Adoptions and releases to send, in list order. Adopted pods are the workload's once
    /// written; released ones are not its any more.
    pub changes: Vec<Change>,
    /// Pods to adopt or release that were listed as summaries only, by name: claim again with
    /// them whole.
    pub needs_whole: Vec<String>,
}

/// Claims `pods` for `set`. A missing or unusable selector is an error naming the field.
pub fn claim<W: Workload>(set: &W, pods: &[ListedPod]) -> Result<Claims, SelectorError> {
    let selector = set.selector().ok_or_else(|| SelectorError {
        field: "spec.selector".into(),
        message: "Required value".into(),
    })?;
    let uid = set.uid();
    let deleting = set.deleting();
    let mut claims = Claims::default();
    for pod in pods {
        if !is_active(pod) {
            claims.kept.push(pod.clone());
            continue;
        }
        let selected = selector::matches(selector, pod.labels(), "spec.selector")?;
        let adopt = match pod.controller_uid() {
            Some(owner) if owner != uid => continue,
            Some(_) if selected => {
                claims.kept.push(pod.clone());
                continue;
            }
            Some(_) if deleting => continue,
            Some(_) => false,
            None if deleting || !selected => continue,
            None => true,
        };
        let Some(before) = &pod.whole else {
            claims.needs_whole.push(pod.name().to_string());
            continue;
        };
        let after = if adopt {
            adopted(before, set.owner_reference())
        } else {
            released(before, uid)
        };
        claims.changes.push(Change {
            before: before.clone(),
            after,
            adopt,
        });
    }
    Ok(claims)
}

/// `pod` without its first ownerReference to `uid`.
fn released(pod: &Pod, uid: &str) -> Pod {
    let mut after = pod.clone();
    let mut owners = after.metadata.owner_references.take().unwrap_or_default();
    if let Some(index) = owners.iter().position(|o| o.uid == uid) {
        owners.remove(index);
    }
    after.metadata.owner_references = (!owners.is_empty()).then_some(owners);
    after
}

/// `pod` with `owner` as its controller: it replaces a reference to the same object (same API
/// group, kind and name), else it is appended (controller-runtime `SetControllerReference`).
fn adopted(pod: &Pod, owner: OwnerReference) -> Pod {
    let group = |api_version: &str| api_version.split('/').next().unwrap_or("").to_string();
    let same_object = |o: &OwnerReference| {
        group(&o.api_version) == group(&owner.api_version)
            && o.kind == owner.kind
            && o.name == owner.name
    };
    let mut after = pod.clone();
    let owners = after.metadata.owner_references.get_or_insert_with(Vec::new);
    match owners.iter_mut().find(|o| same_object(o)) {
        Some(existing) => *existing = owner,
        None => owners.push(owner),
    }
    after
}

#[cfg(test)]
mod tests;
