//! PVCs from a workload's `volumeClaimTemplates` (OpenKruise `pkg/util/volumeclaimtemplate`,
//! Kubernetes' `getPersistentVolumeClaims`): each template gives a pod one PVC
//! `<template>-<workload>-<suffix>`, where the suffix is what tells the pods apart (a CloneSet's
//! instance id, a StatefulSet's ordinal), mounted as the volume named like the template.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{
    PersistentVolumeClaim, PersistentVolumeClaimVolumeSource, PodSpec, Volume,
};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

use super::Workload;

/// A PVC whose owner becomes a pod instead of the workload (the CloneSet's `disablePVCReuse`:
/// garbage collection then takes it with the pod).
#[derive(Debug, Clone, PartialEq)]
pub struct HandOver {
    pub claim: String,
    /// The version the decision was made on (the write is guarded by it).
    pub resource_version: Option<String>,
    pub pod: String,
    /// The PVC's new `ownerReferences`: the workload's removed, the pod's added as controller.
    pub owner_references: Vec<OwnerReference>,
}

/// The templates that can name a volume, with their names (validation refuses the others).
pub fn templates<W: Workload>(set: &W) -> impl Iterator<Item = (&str, &PersistentVolumeClaim)> {
    set.volume_claim_templates().iter().filter_map(|t| {
        let name = t.metadata.name.as_deref().filter(|n| !n.is_empty())?;
        Some((name, t))
    })
}

/// `<template>-<workload>-<suffix>`.
pub fn claim_name(template: &str, workload: &str, suffix: &str) -> String {
    format!("{template}-{workload}-{suffix}")
}

/// The suffix of a name built by [`claim_name`] from `template` and `workload`, read without
/// building one: `Some("2")` for `data-web-2` of `data` and `web`.
pub fn claim_suffix<'a>(name: &'a str, template: &str, workload: &str) -> Option<&'a str> {
    name.strip_prefix(template)?
        .strip_prefix('-')?
        .strip_prefix(workload)?
        .strip_prefix('-')
}

/// The PVCs of the pod with `suffix`, one per template, as they are created: a copy of the
/// template named [`claim_name`], in the workload's namespace, labelled with the selector's
/// `matchLabels` and `labels`, with `owner` (if any) among its ownerReferences.
pub fn claims_for<W: Workload>(
    set: &W,
    suffix: &str,
    labels: &[(&str, &str)],
    owner: Option<&k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference>,
) -> Vec<PersistentVolumeClaim> {
    let match_labels = set.selector().and_then(|s| s.match_labels.as_ref());
    templates(set)
        .map(|(name, template)| {
            let mut claim = template.clone();
            claim.metadata.name = Some(claim_name(name, set.name(), suffix));
            claim.metadata.namespace = set.meta().namespace.clone();
            let claim_labels = claim.metadata.labels.get_or_insert_with(BTreeMap::new);
            claim_labels.extend(
                match_labels
                    .into_iter()
                    .flatten()
                    .map(|(k, v)| (k.clone(), v.clone())),
            );
            for (key, value) in labels {
                claim_labels.insert((*key).into(), (*value).into());
            }
            if let Some(owner) = owner {
                claim
                    .metadata
                    .owner_references
                    .get_or_insert_with(Vec::new)
                    .push(owner.clone());
            }
            claim
        })
        .collect()
}

/// Mounts the PVCs of `suffix` into a new pod's spec: one volume per template, named like the
/// template (first, in template order), then the spec's own volumes except those of the same
/// name. Without templates the spec is left as it is.
pub fn mount<W: Workload>(set: &W, spec: &mut PodSpec, suffix: &str) {
    let mut volumes: Vec<Volume> = templates(set)
        .map(|(name, _)| Volume {
            name: name.to_string(),
            persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                claim_name: claim_name(name, set.name(), suffix),
                read_only: None,
            }),
            ..Default::default()
        })
        .collect();
    if volumes.is_empty() {
        return;
    }
    let names: BTreeSet<String> = volumes.iter().map(|v| v.name.clone()).collect();
    volumes.extend(
        spec.volumes
            .take()
            .into_iter()
            .flatten()
            .filter(|v| !names.contains(&v.name)),
    );
    spec.volumes = Some(volumes);
}

#[cfg(test)]
mod tests;
