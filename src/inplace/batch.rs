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
mod tests {
    use super::*;
    use crate::inject::launch_priority::barrier_env;
    use k8s_openapi::api::core::v1::{Container, PodSpec};

    fn container(name: &str, priority: Option<i64>) -> Container {
        Container {
            name: name.into(),
            image: Some(format!("{name}:1")),
            env: priority.map(|p| vec![barrier_env("p-barrier", p)]),
            ..Default::default()
        }
    }

    fn pod(containers: Vec<Container>) -> Pod {
        Pod {
            spec: Some(PodSpec {
                containers,
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn images(names: &[&str]) -> UpdateSpec {
        UpdateSpec::images(
            "r2",
            names
                .iter()
                .map(|n| (n.to_string(), format!("{n}:2")))
                .collect(),
        )
    }

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn highest_priority_and_unprioritised_first() {
        let p = pod(vec![
            container("app", Some(0)),
            container("proxy", Some(10)),
            container("log", Some(10)),
            container("plain", None),
            container("low", Some(-5)),
        ]);
        let spec = images(&["app", "proxy", "log", "plain", "low"]);
        assert_eq!(plan_batch(&p, &spec), set(&["log", "plain", "proxy"]));
        // Untouched containers do not count, whatever their priority.
        assert_eq!(plan_batch(&p, &images(&["app", "low"])), set(&["app"]));
    }

    #[test]
    fn metadata_sharing_pulls_containers_forward() {
        let p = pod(vec![
            container("a", Some(3)),
            container("b", Some(2)),
            container("c", Some(1)),
            container("d", Some(0)),
        ]);
        let meta = |labels: &[&str], annotations: &[&str]| ObjectMeta {
            labels: Some(labels.iter().map(|k| (k.to_string(), "v".into())).collect()),
            annotations: Some(
                annotations
                    .iter()
                    .map(|k| (k.to_string(), "v".into()))
                    .collect(),
            ),
            ..Default::default()
        };
        let mut spec = images(&["a", "b", "c", "d"]);
        spec.container_ref_metadata = BTreeMap::from([
            ("a".to_string(), meta(&["x"], &[])),
            ("c".to_string(), meta(&["x"], &["y"])),
            ("d".to_string(), meta(&[], &["y"])),
        ]);
        // a sets x; c also sets x (and y); d also sets y: all three move together, b waits.
        assert_eq!(plan_batch(&p, &spec), set(&["a", "c", "d"]));
    }

    #[test]
    fn patch_records_batch_and_parks_the_rest() {
        let mut p = pod(vec![container("main", Some(1)), container("side", Some(0))]);
        p.status = Some(k8s_openapi::api::core::v1::PodStatus {
            container_statuses: Some(vec![
                k8s_openapi::api::core::v1::ContainerStatus {
                    name: "main".into(),
                    image_id: "main-id-1".into(),
                    ..Default::default()
                },
                k8s_openapi::api::core::v1::ContainerStatus {
                    name: "side".into(),
                    image_id: "side-id-1".into(),
                    ..Default::default()
                },
            ]),
            ..Default::default()
        });
        let now = Timestamp::from_second(1_700_000_000).unwrap();
        let (patched, batch) =
            patch_batch(&p, &images(&["main", "side"]), Default::default(), now).unwrap();
        assert_eq!(batch, vec!["main".to_string()]);
        let containers = &patched.spec.as_ref().unwrap().containers;
        assert_eq!(containers[0].image.as_deref(), Some("main:2"));
        assert_eq!(containers[1].image.as_deref(), Some("side:1"));
        let state = state::read_state(&patched).unwrap().unwrap();
        assert_eq!(
            state.next_container_images,
            BTreeMap::from([("side".to_string(), "side:2".to_string())])
        );
        assert_eq!(
            state
                .pre_check_before_next
                .unwrap()
                .containers_required_ready,
            vec!["main".to_string()]
        );
        assert_eq!(
            state.last_container_statuses,
            Some(BTreeMap::from([(
                "main".to_string(),
                LastContainerStatus {
                    image_id: "main-id-1".into()
                }
            )]))
        );
        assert_eq!(state.container_batches_record.len(), 1);
    }

    #[test]
    fn metadata_patch_and_ref_metadata_follow_the_batches() {
        let p = pod(vec![container("high", Some(1)), container("low", Some(0))]);
        let mut spec = images(&["high"]);
        spec.meta_data_patch = br#"{"metadata":{"labels":{"shared":"new"}}}"#.to_vec();
        spec.container_ref_metadata = BTreeMap::from([
            (
                "high".to_string(),
                ObjectMeta {
                    labels: Some(BTreeMap::from([("h".to_string(), "2".to_string())])),
                    ..Default::default()
                },
            ),
            (
                "low".to_string(),
                ObjectMeta {
                    annotations: Some(BTreeMap::from([("l".to_string(), "2".to_string())])),
                    ..Default::default()
                },
            ),
        ]);
        let (patched, batch) =
            patch_batch(&p, &spec, Default::default(), Timestamp::UNIX_EPOCH).unwrap();
        assert_eq!(batch, vec!["high".to_string()]);
        assert_eq!(
            patched.metadata.labels,
            Some(BTreeMap::from([
                ("h".to_string(), "2".to_string()),
                ("shared".to_string(), "new".to_string()),
            ]))
        );
        let state = state::read_state(&patched).unwrap().unwrap();
        assert_eq!(
            state.next_container_ref_metadata.keys().collect::<Vec<_>>(),
            vec!["low"]
        );
        // Only image changes are recorded for the imageID check.
        assert_eq!(state.last_container_statuses, None);
        assert!(state.has_next_batch());
        assert!(
            !patched
                .metadata
                .annotations
                .as_ref()
                .unwrap()
                .contains_key("l")
        );
    }

    #[test]
    fn unknown_container_changes_nothing() {
        let p = pod(vec![container("a", None)]);
        let err = patch_batch(
            &p,
            &images(&["a", "ghost"]),
            Default::default(),
            Timestamp::UNIX_EPOCH,
        )
        .unwrap_err();
        assert!(matches!(err, BatchError::UnknownContainer(ref n) if n == "ghost"));
    }
}
