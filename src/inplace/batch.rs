//! Applying one batch of an update to a pod (OpenKruise's `PatchSpecToPod`).
//!
//! Containers with a launch priority are updated highest priority first, one priority level per
//! batch, so a sidecar that must run before the app is upgraded before it; containers without a
//! priority go in the first batch. Whatever is left is parked in the state's `next*` maps.

use std::collections::{BTreeMap, BTreeSet};

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};

use super::completion::{container_statuses, spec_containers};
use super::metadata_patch::{self, MetadataPatchError};
use super::restart_record;
use super::state::{
    self, AnnotationError, ContainerBatch, InPlaceUpdateState, LastContainerStatus,
    PreCheckBeforeNext, UpdateSpec,
};
use crate::inject::launch_priority::barrier_priority;

#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    /// Patching the others would leave the pod half-updated.
    #[error("the update names container {0:?}, which the pod does not have")]
    UnknownContainer(String),
    #[error(transparent)]
    MetadataPatch(#[from] MetadataPatchError),
    #[error(transparent)]
    Annotation(#[from] AnnotationError),
}

/// The containers of the next batch, in pod order: every container the spec touches that has no
/// launch priority, the ones at the highest priority, then (repeatedly) any container that sets a
/// label or annotation key one of those sets, whatever its priority.
pub fn plan_batch(pod: &Pod, spec: &UpdateSpec) -> BTreeSet<String> {
    let mut batch = BTreeSet::new();
    let mut highest: Option<(i64, Vec<&str>)> = None;
    for container in spec_containers(pod) {
        if !spec.touches(&container.name) {
            continue;
        }
        match (barrier_priority(container), highest.as_mut()) {
            (None, _) => {
                batch.insert(container.name.clone());
            }
            (Some(p), Some((top, names))) if p == *top => names.push(&container.name),
            (Some(p), Some((top, _))) if p < *top => {}
            (Some(p), _) => highest = Some((p, vec![container.name.as_str()])),
        }
    }
    if let Some((_, names)) = highest {
        batch.extend(names.into_iter().map(str::to_string));
    }
    add_metadata_sharers(&mut batch, &spec.container_ref_metadata);
    batch
}

/// Two containers writing the same label must move together, or the second would see the value
/// change under it a batch early.
fn add_metadata_sharers(batch: &mut BTreeSet<String>, ref_metadata: &BTreeMap<String, ObjectMeta>) {
    loop {
        let mut labels = BTreeSet::new();
        let mut annotations = BTreeSet::new();
        for name in batch.iter() {
            if let Some(meta) = ref_metadata.get(name) {
                labels.extend(meta.labels.iter().flatten().map(|(k, _)| k.as_str()));
                annotations.extend(meta.annotations.iter().flatten().map(|(k, _)| k.as_str()));
            }
        }
        let joining: Vec<String> = ref_metadata
            .iter()
            .filter(|(name, _)| !batch.contains(*name))
            .filter(|(_, meta)| {
                meta.labels
                    .iter()
                    .flatten()
                    .any(|(k, _)| labels.contains(k.as_str()))
                    || meta
                        .annotations
                        .iter()
                        .flatten()
                        .any(|(k, _)| annotations.contains(k.as_str()))
            })
            .map(|(name, _)| name.clone())
            .collect();
        if joining.is_empty() {
            return;
        }
        batch.extend(joining);
    }
}

/// Every container the spec names exists in the pod; otherwise nothing may be applied.
pub fn check_containers(pod: &Pod, spec: &UpdateSpec) -> Result<(), BatchError> {
    // Pods have a handful of containers: a scan beats building a set for every started pod.
    let containers = spec_containers(pod);
    let named = spec
        .container_images
        .keys()
        .chain(spec.container_ref_metadata.keys())
        .chain(spec.container_resources.keys());
    for name in named {
        if !containers.iter().any(|c| c.name == *name) {
            return Err(BatchError::UnknownContainer(name.clone()));
        }
    }
    Ok(())
}

/// Applies the next batch of `spec` to `pod` and records it in `state`, which is then written to
/// the pod's state annotation. Returns the batch (sorted names). On error the pod is unchanged.
pub fn patch_batch(
    pod: &Pod,
    spec: &UpdateSpec,
    state: InPlaceUpdateState,
    now: Timestamp,
) -> Result<(Pod, Vec<String>), BatchError> {
    patch_batch_owned(pod.clone(), spec, state, now)
}

/// [`patch_batch`] on a pod the caller gives up (it is dropped on error).
pub fn patch_batch_owned(
    mut pod: Pod,
    spec: &UpdateSpec,
    mut state: InPlaceUpdateState,
    now: Timestamp,
) -> Result<(Pod, Vec<String>), BatchError> {
    check_containers(&pod, spec)?;
    state.next_container_images.clear();
    state.next_container_ref_metadata.clear();
    state.next_container_resources.clear();
    if !spec.meta_data_patch.is_empty() {
        metadata_patch::apply_metadata_patch(&mut pod, &spec.meta_data_patch)?;
    }
    let batch = plan_batch(&pod, spec);

    let mut images_changed = BTreeSet::new();
    if let Some(pod_spec) = pod.spec.as_mut() {
        for container in pod_spec.containers.iter_mut() {
            let in_batch = batch.contains(&container.name);
            if let Some(image) = spec.container_images.get(&container.name) {
                if in_batch {
                    container.image = Some(image.clone());
                    images_changed.insert(container.name.clone());
                } else {
                    state
                        .next_container_images
                        .insert(container.name.clone(), image.clone());
                }
            }
            if let Some(resources) = spec.container_resources.get(&container.name) {
                if in_batch {
                    container.resources = Some(resources.clone());
                } else {
                    state
                        .next_container_resources
                        .insert(container.name.clone(), resources.clone());
                }
            }
        }
    }
    // The imageID seen before the patch is what completion compares against; the first one
    // recorded for a container wins, so a retried batch cannot erase it.
    for status in container_statuses(&pod) {
        if images_changed.contains(&status.name) {
            state
                .last_container_statuses
                .get_or_insert_with(BTreeMap::new)
                .entry(status.name.clone())
                .or_insert_with(|| LastContainerStatus {
                    image_id: status.image_id.clone(),
                });
        }
    }
    // Container IDs and restart counts change with every restart, even into the same digest.
    let patched: Vec<_> = container_statuses(&pod)
        .iter()
        .filter(|s| images_changed.contains(&s.name))
        .cloned()
        .collect();
    if !patched.is_empty() {
        restart_record::record_patch(&mut pod, &state.revision, now, &patched);
    }
    for (name, meta) in &spec.container_ref_metadata {
        if batch.contains(name) {
            let labels = meta.labels.iter().flatten();
            let pod_labels = pod.metadata.labels.get_or_insert_with(BTreeMap::new);
            pod_labels.extend(labels.map(|(k, v)| (k.clone(), v.clone())));
            let annotations = meta.annotations.iter().flatten();
            let pod_annotations = pod.metadata.annotations.get_or_insert_with(BTreeMap::new);
            pod_annotations.extend(annotations.map(|(k, v)| (k.clone(), v.clone())));
        } else {
            state
                .next_container_ref_metadata
                .insert(name.clone(), meta.clone());
        }
    }

    let containers: Vec<String> = batch.into_iter().collect();
    state.pre_check_before_next = state.has_next_batch().then(|| PreCheckBeforeNext {
        containers_required_ready: containers.clone(),
    });
    state.container_batches_record.push(ContainerBatch {
        timestamp: Some(Time(now)),
        containers: containers.clone(),
    });
    state::write_state(&mut pod, &state)?;
    Ok((pod, containers))
}

#[cfg(test)]
mod tests;
