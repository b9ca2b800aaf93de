//! SidecarSet `v1alpha1` ↔ `v1beta1` (the working and storage version), as OpenKruise v1.9.0's
//! `sidecarset_conversion.go`: `spec.namespace: X` becomes (and replaces any)
//! `namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: X}}`; the label
//! `apps.kruise.io/sidecarset-custom-version` becomes `spec.customVersion` and back. Everything
//! else is the same field, status included, so the sidecar containers (and their hashes) are the
//! same JSON in both.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::Served;
use crate::api::sidecarset::v1alpha1;
use crate::api::{SidecarSet, SidecarSetSpec, keys};

/// OpenKruise's `ConvertTo`.
pub fn to_v1beta1(old: v1alpha1::SidecarSet) -> SidecarSet {
    let v1alpha1::SidecarSet {
        mut metadata,
        spec,
        status,
    } = old;
    let namespace_selector = match spec.namespace.filter(|n| !n.is_empty()) {
        Some(namespace) => Some(pinned_to(namespace)),
        None => spec.namespace_selector,
    };
    let custom_version = metadata
        .labels
        .as_mut()
        .and_then(|labels| labels.remove(keys::SIDECARSET_CUSTOM_VERSION))
        .filter(|v| !v.is_empty());
    if metadata.labels.as_ref().is_some_and(BTreeMap::is_empty) {
        metadata.labels = None;
    }
    SidecarSet {
        metadata,
        spec: SidecarSetSpec {
            selector: spec.selector,
            namespace_selector,
            init_containers: spec.init_containers,
            containers: spec.containers,
            volumes: spec.volumes,
            update_strategy: spec.update_strategy,
            injection_strategy: spec.injection_strategy,
            image_pull_secrets: spec.image_pull_secrets,
            revision_history_limit: spec.revision_history_limit,
            patch_pod_metadata: spec.patch_pod_metadata,
            custom_version,
        },
        status,
    }
}

/// OpenKruise's `ConvertFrom`.
pub fn to_v1alpha1(new: SidecarSet) -> v1alpha1::SidecarSet {
    let SidecarSet {
        mut metadata,
        spec,
        status,
    } = new;
    if let Some(version) = spec.custom_version.filter(|v| !v.is_empty()) {
        metadata
            .labels
            .get_or_insert_default()
            .insert(keys::SIDECARSET_CUSTOM_VERSION.to_string(), version);
    }
    v1alpha1::SidecarSet {
        metadata,
        spec: v1alpha1::SidecarSetSpec {
            selector: spec.selector,
            namespace: None,
            namespace_selector: spec.namespace_selector,
            init_containers: spec.init_containers,
            containers: spec.containers,
            volumes: spec.volumes,
            update_strategy: spec.update_strategy,
            injection_strategy: spec.injection_strategy,
            image_pull_secrets: spec.image_pull_secrets,
            revision_history_limit: spec.revision_history_limit,
            patch_pod_metadata: spec.patch_pod_metadata,
        },
        status,
    }
}

/// The namespace selector `spec.namespace` means: the namespace's name label, which every
/// Namespace carries from Kubernetes 1.21 and which this project assumes on older apiservers
/// (see `crate::k8s::selector::namespace_labels`).
pub fn pinned_to(namespace: String) -> LabelSelector {
    LabelSelector {
        match_labels: Some(BTreeMap::from([(
            keys::NAMESPACE_NAME_LABEL.to_string(),
            namespace,
        )])),
        match_expressions: None,
    }
}

impl Served for v1alpha1::SidecarSet {
    type Working = SidecarSet;
    fn into_working(self) -> SidecarSet {
        to_v1beta1(self)
    }
    fn from_working(working: SidecarSet) -> Self {
        to_v1alpha1(working)
    }
}

#[cfg(test)]
mod tests;
