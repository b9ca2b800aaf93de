use super::*;
use crate::inplace::state::LastContainerStatus;
use k8s_openapi::api::core::v1::{PodSpec, PodStatus};
use std::collections::BTreeMap;

fn pod(spec: &[(&str, &str)], statuses: &[(&str, &str, &str)]) -> Pod {
    Pod {
        spec: Some(PodSpec {
            containers: spec
                .iter()
                .map(|(name, image)| Container {
                    name: name.to_string(),
                    image: Some(image.to_string()),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }),
        status: Some(PodStatus {
            container_statuses: Some(
                statuses
                    .iter()
                    .map(|(name, image, id)| ContainerStatus {
                        name: name.to_string(),
                        image: image.to_string(),
                        image_id: id.to_string(),
                        container_id: Some(format!("containerd://{name}")),
                        ..Default::default()
                    })
                    .collect(),
            ),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn state(recorded: &[(&str, &str)]) -> InPlaceUpdateState {
    InPlaceUpdateState {
        last_container_statuses: Some(
            recorded
                .iter()
                .map(|(n, id)| {
                    (
                        n.to_string(),
                        LastContainerStatus {
                            image_id: id.to_string(),
                        },
                    )
                })
                .collect(),
        ),
        ..Default::default()
    }
}

#[test]
fn image_id_change_completes() {
    let p = pod(&[("c1", "nginx:2")], &[("c1", "nginx:1", "id-2")]);
    assert_eq!(
        batch_completed(&p, &state(&[("c1", "id-1")]), &NoRuntimeHashes),
        Ok(())
    );
}

#[test]
fn same_image_id_completes_only_when_status_shows_spec_image() {
    let recorded = state(&[("c1", "id-1")]);
    let waiting = pod(&[("c1", "nginx:2")], &[("c1", "nginx:1", "id-1")]);
    assert_eq!(
        batch_completed(&waiting, &recorded, &NoRuntimeHashes),
        Err(Incomplete::ImageIdNotChanged("c1".into()))
    );
    let retagged = pod(&[("c1", "nginx:2")], &[("c1", "nginx:2", "id-1")]);
    assert_eq!(
        batch_completed(&retagged, &recorded, &NoRuntimeHashes),
        Ok(())
    );
    // No tag at all means `:latest`.
    let latest = pod(&[("c1", "nginx")], &[("c1", "nginx:latest", "id-1")]);
    assert_eq!(
        batch_completed(&latest, &recorded, &NoRuntimeHashes),
        Ok(())
    );
    // A registry port is a colon too: no `:latest` is added.
    let port = pod(
        &[("c1", "reg:5000/nginx")],
        &[("c1", "reg:5000/nginx:latest", "id-1")],
    );
    assert!(batch_completed(&port, &recorded, &NoRuntimeHashes).is_err());
}

#[test]
fn missing_status_is_incomplete_and_unrecorded_containers_are_ignored() {
    let p = pod(&[("c1", "a"), ("c2", "b")], &[("c2", "b", "same")]);
    assert_eq!(
        batch_completed(&p, &state(&[("c1", "x")]), &NoRuntimeHashes),
        Err(Incomplete::StatusesMissing(vec!["c1".into()]))
    );
    assert_eq!(
        batch_completed(&p, &state(&[("c2", "other")]), &NoRuntimeHashes),
        Ok(())
    );
    assert_eq!(
        batch_completed(&p, &InPlaceUpdateState::default(), &NoRuntimeHashes),
        Ok(())
    );
}

struct Fixed(u64);
impl ContainerHasher for Fixed {
    fn plain_hash(&self, _: &Container) -> Option<u64> {
        Some(self.0)
    }
    fn env_from_metadata_hash(&self, _: &Pod, _: &Container) -> Option<u64> {
        Some(self.0 + 1)
    }
}

fn with_runtime_meta(mut p: Pod, plain: u64, env: u64) -> Pod {
    let meta = RuntimeContainersMeta {
        containers: spec_containers(&p)
            .iter()
            .map(|c| RuntimeContainerMeta {
                name: c.name.clone(),
                container_id: format!("containerd://{}", c.name),
                restart_count: 0,
                hashes: RuntimeContainerHashes {
                    plain_hash: plain,
                    extracted_env_from_metadata_hash: env,
                },
            })
            .collect(),
    };
    p.metadata.annotations = Some(BTreeMap::from([(
        keys::RUNTIME_CONTAINERS_META.to_string(),
        serde_json::to_string(&meta).unwrap(),
    )]));
    p
}

#[test]
fn consistent_runtime_hashes_short_circuit() {
    let stuck = pod(&[("c1", "nginx:2")], &[("c1", "nginx:1", "id-1")]);
    let recorded = state(&[("c1", "id-1")]);
    let p = with_runtime_meta(stuck.clone(), 7, 0);
    assert_eq!(batch_completed(&p, &recorded, &Fixed(7)), Ok(()));
    assert!(batch_completed(&p, &recorded, &Fixed(8)).is_err());
    assert!(batch_completed(&p, &recorded, &NoRuntimeHashes).is_err());
}

#[test]
fn env_from_metadata_needs_the_daemon() {
    let done = pod(&[("c1", "a")], &[("c1", "a", "id")]);
    let mut env_state = state(&[]);
    env_state.update_env_from_metadata = true;
    assert_eq!(
        batch_completed(&done, &env_state, &Fixed(7)),
        Err(Incomplete::RuntimeMetaMissing)
    );
    let stale = with_runtime_meta(done.clone(), 7, 1);
    assert_eq!(
        batch_completed(&stale, &env_state, &Fixed(7)),
        Err(Incomplete::HashesInconsistent)
    );
    let fresh = with_runtime_meta(done, 7, 8);
    assert_eq!(batch_completed(&fresh, &env_state, &Fixed(7)), Ok(()));
}

/// The agent's side as the controllers use it: env steps judged by the agent's record, images
/// still by imageID (kubelet's plain hash is not reproduced).
#[test]
fn metadata_env_hasher_judges_env_by_record_and_images_by_image_id() {
    use crate::inplace::env_hash::MetadataEnvHasher;
    const NO_ENV: u64 = 86_995_377;
    let mut env_only = state(&[]);
    env_only.update_env_from_metadata = true;
    let running = pod(&[("c1", "nginx:1")], &[("c1", "nginx:1", "id-1")]);
    assert_eq!(
        batch_completed(
            &with_runtime_meta(running.clone(), 5, NO_ENV),
            &env_only,
            &MetadataEnvHasher
        ),
        Ok(())
    );
    assert_eq!(
        batch_completed(
            &with_runtime_meta(running.clone(), 5, 1),
            &env_only,
            &MetadataEnvHasher
        ),
        Err(Incomplete::HashesInconsistent)
    );
    let mut image_batch = state(&[("c1", "id-1")]);
    image_batch.update_env_from_metadata = true;
    let not_yet = pod(&[("c1", "nginx:2")], &[("c1", "nginx:1", "id-1")]);
    assert_eq!(
        batch_completed(
            &with_runtime_meta(not_yet, 5, NO_ENV),
            &image_batch,
            &MetadataEnvHasher
        ),
        Err(Incomplete::ImageIdNotChanged("c1".into()))
    );
    let done = pod(&[("c1", "nginx:2")], &[("c1", "nginx:2", "id-2")]);
    assert_eq!(
        batch_completed(
            &with_runtime_meta(done, 5, NO_ENV),
            &image_batch,
            &MetadataEnvHasher
        ),
        Ok(())
    );
}

#[test]
fn pod_level_check_order() {
    let mut p = pod(&[("c1", "a")], &[("c1", "a", "id")]);
    assert_eq!(pod_update_completed(&p, &NoRuntimeHashes), Ok(()));
    let mut s = state(&[]);
    s.next_container_images.insert("c2".into(), "b".into());
    state::write_state(&mut p, &s).unwrap();
    assert_eq!(
        pod_update_completed(&p, &NoRuntimeHashes),
        Err(Incomplete::NextBatchesPending)
    );
    state::write_grace(&mut p, &Default::default()).unwrap();
    assert_eq!(
        pod_update_completed(&p, &NoRuntimeHashes),
        Err(Incomplete::InGracePeriod)
    );
}
