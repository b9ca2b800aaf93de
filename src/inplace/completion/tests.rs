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
    // A registry port is not a tag: the CRI's `:latest` is added (OpenKruise's rule hung here).
    let port = pod(
        &[("c1", "reg:5000/nginx")],
        &[("c1", "reg:5000/nginx:latest", "id-1")],
    );
    assert_eq!(batch_completed(&port, &recorded, &NoRuntimeHashes), Ok(()));
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

fn patched(id: &str, restarts: i32, image: &str, image_id: &str, started: i64) -> ContainerStatus {
    use k8s_openapi::api::core::v1::{ContainerState, ContainerStateRunning};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    ContainerStatus {
        name: "main".into(),
        container_id: Some(id.into()),
        restart_count: restarts,
        image: image.into(),
        image_id: image_id.into(),
        state: Some(ContainerState {
            running: Some(ContainerStateRunning {
                started_at: Some(Time(jiff::Timestamp::from_second(started).unwrap())),
            }),
            ..Default::default()
        }),
        ..Default::default()
    }
}

const PATCHED_AT: i64 = 1_000;

#[test]
fn same_digest_new_tag_completes_after_the_restart_only() {
    let start = ContainerStart {
        container_id: "containerd://old".into(),
        restart_count: 0,
    };
    let patched_at = jiff::Timestamp::from_second(PATCHED_AT)
        .unwrap()
        .to_string();
    let rule = RestartEvidence {
        start: Some((&start, &patched_at)),
        image_id_before: "sha256:same",
    };
    // Before the restart: even the spec image reported is not enough.
    let before = patched("containerd://old", 0, "app:v2", "sha256:same", 10);
    assert_eq!(
        rule.runs_spec(&before, "app:v2"),
        Err(Incomplete::NotRestarted("main".into()))
    );
    // After it, reported under the old tag (containerd lists one of its tags): done.
    let after = patched(
        "containerd://new",
        1,
        "app:v1",
        "sha256:same",
        PATCHED_AT + 2,
    );
    assert_eq!(rule.runs_spec(&after, "app:v2"), Ok(()));
    // A short name against a fully qualified one.
    let after = patched(
        "containerd://new",
        1,
        "docker.io/library/nginx:alpine",
        "sha256:same",
        1,
    );
    assert_eq!(rule.runs_spec(&after, "nginx:alpine"), Ok(()));
}

#[test]
fn canonical_reference_normalises_as_the_cri_does() {
    use crate::podmarks::codec::canonical_reference;
    assert_eq!(
        canonical_reference("nginx"),
        "docker.io/library/nginx:latest"
    );
    assert_eq!(
        canonical_reference("nginx:alpine"),
        "docker.io/library/nginx:alpine"
    );
    assert_eq!(canonical_reference("me/app:1"), "docker.io/me/app:1");
    assert_eq!(
        canonical_reference("localhost:5000/app"),
        "localhost:5000/app:latest"
    );
    assert_eq!(
        canonical_reference("nginx:1@sha256:abc"),
        canonical_reference("docker.io/library/nginx@sha256:abc")
    );
}

proptest::proptest! {
    /// Never done before the container restarted; always done after a restart into the spec image.
    #[test]
    fn never_done_before_a_restart_always_after_one(
        restarts in 0i32..5,
        image_id_moved in proptest::bool::ANY,
        started in 0i64..2_000,
        tag in "[a-z0-9]{1,6}",
        qualified in proptest::bool::ANY,
    ) {
        let start = ContainerStart { container_id: "containerd://old".into(), restart_count: restarts };
        let patched_at = jiff::Timestamp::from_second(PATCHED_AT).unwrap().to_string();
        let rule = RestartEvidence { start: Some((&start, &patched_at)), image_id_before: "sha256:a" };
        let spec = format!("app:{tag}");
        let reported = if qualified { format!("docker.io/library/app:{tag}") } else { spec.clone() };
        let image_id = if image_id_moved { "sha256:b" } else { "sha256:a" };
        let same = patched("containerd://old", restarts, &reported, image_id, started);
        proptest::prop_assert!(rule.runs_spec(&same, &spec).is_err());
        let new = patched("containerd://new", restarts + 1, &reported, image_id, started);
        proptest::prop_assert_eq!(rule.runs_spec(&new, &spec), Ok(()));
    }
}
