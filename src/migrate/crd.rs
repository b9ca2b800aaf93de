//! This project's CRDs next to the cluster's, pure: whether a CRD differs from ours in what the
//! switch replaces, and the object that replaces it in place.
//!
//! The conversion webhook's client config (where the apiserver sends ConversionReviews, and the
//! CA it trusts there) is the install's and the `certs` job's: it is neither compared nor
//! replaced while the cluster's CRD has one, so a replacement keeps conversion reaching whatever
//! it reached before.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, CustomResourceDefinitionSpec,
};

use super::plan::CrdState;

/// The versions a CRD serves.
pub fn served_versions(crd: &CustomResourceDefinition) -> Vec<String> {
    crd.spec
        .versions
        .iter()
        .filter(|version| version.served)
        .map(|version| version.name.clone())
        .collect()
}

/// What the switch decides on for one of this project's CRDs found in the cluster.
pub fn state(cluster: &CustomResourceDefinition, ours: &CustomResourceDefinition) -> CrdState {
    CrdState {
        name: ours.metadata.name.clone().unwrap_or_default(),
        stored_versions: cluster
            .status
            .as_ref()
            .and_then(|status| status.stored_versions.clone())
            .unwrap_or_default(),
        wanted_versions: served_versions(ours),
        spec_differs: comparable(&cluster.spec) != comparable(&ours.spec),
    }
}

/// A spec as compared: the apiserver's defaults filled in (so that ours, as generated, equals
/// what the apiserver stores once it is applied), the conversion webhook's client config left
/// out.
fn comparable(spec: &CustomResourceDefinitionSpec) -> serde_json::Value {
    let mut spec = spec.clone();
    let kind = spec.names.kind.clone();
    spec.names
        .singular
        .get_or_insert_with(|| kind.to_lowercase());
    spec.names
        .list_kind
        .get_or_insert_with(|| format!("{kind}List"));
    if spec.preserve_unknown_fields == Some(false) {
        spec.preserve_unknown_fields = None;
    }
    if let Some(webhook) = spec
        .conversion
        .as_mut()
        .and_then(|conversion| conversion.webhook.as_mut())
    {
        webhook.client_config = None;
    }
    serde_json::to_value(&spec).unwrap_or_default()
}

/// The object that replaces `cluster` in place: its metadata (name, resourceVersion, labels and
/// annotations) with our spec, keeping the cluster's conversion client config when it converts
/// through a webhook (see the module documentation). The resourceVersion makes a concurrent
/// change a conflict.
pub fn replacement(
    cluster: &CustomResourceDefinition,
    ours: &CustomResourceDefinition,
) -> CustomResourceDefinition {
    let mut spec = ours.spec.clone();
    let kept = crate::tls::bundle_targets::conversion_client_config(cluster).cloned();
    if let (Some(kept), Some(webhook)) = (
        kept,
        spec.conversion
            .as_mut()
            .and_then(|conversion| conversion.webhook.as_mut()),
    ) {
        webhook.client_config = Some(kept);
    }
    CustomResourceDefinition {
        metadata: cluster.metadata.clone(),
        spec,
        status: None,
    }
}

#[cfg(test)]
mod tests;
