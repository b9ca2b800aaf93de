//! Reading an object's owner references as Kubernetes' `metav1.GetControllerOf` does.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

/// The owner reference with `controller: true`, if any (there is at most one; the first wins).
pub fn controller_of(meta: &ObjectMeta) -> Option<&OwnerReference> {
    meta.owner_references
        .iter()
        .flatten()
        .find(|o| o.controller == Some(true))
}

/// Whether `owner` names an object of API group `group`, any version.
pub fn in_group(owner: &OwnerReference, group: &str) -> bool {
    owner.api_version.split('/').next() == Some(group)
}

#[cfg(test)]
mod tests;
