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
