use super::*;
use crate::api::keys;
use k8s_openapi::api::core::v1::{
    ContainerStatus, PodCondition, PodReadinessGate, PodSpec, PodStatus,
};

/// Pod `uid` at `version`, with the in-place gate, its condition `gate`, and a finished update's
/// state.
fn pod(uid: &str, version: &str, gate: &str) -> Arc<Pod> {
    let mut p = Pod::default();
    p.metadata.namespace = Some("default".into());
    p.metadata.name = Some(format!("web-{uid}"));
    p.metadata.uid = Some(uid.into());
    p.metadata.resource_version = Some(version.into());
    p.metadata.annotations = Some(
        [(
            keys::INPLACE_UPDATE_STATE.to_string(),
            r#"{"revision":"web-2","updateImages":true,"lastContainerStatuses":{"main":{"imageID":"sha256:old"}}}"#
                .to_string(),
        )]
        .into(),
    );
    p.spec = Some(PodSpec {
        readiness_gates: Some(vec![PodReadinessGate {
            condition_type: keys::INPLACE_UPDATE_READY.into(),
        }]),
        ..Default::default()
    });
    p.status = Some(PodStatus {
        conditions: Some(vec![PodCondition {
            type_: keys::INPLACE_UPDATE_READY.into(),
            status: gate.into(),
            ..Default::default()
        }]),
        container_statuses: Some(vec![ContainerStatus {
            name: "main".into(),
            image_id: "sha256:new".into(),
            ..Default::default()
        }]),
        ..Default::default()
    });
    Arc::new(p)
}

fn always(_: &str, _: &str, _: &str) -> bool {
    true
}

#[test]
fn verdicts_are_the_engines_and_follow_each_new_version_of_a_pod() {
    let mut resting = RestingPods::default();
    let pods = vec![pod("a", "1", "True"), pod("b", "1", "False")];
    assert_eq!(resting.verdicts(&pods, always), vec![true, false]);
    assert_eq!(
        resting.verdicts(&pods, always),
        pods.iter().map(|p| engine_at_rest(p)).collect::<Vec<_>>()
    );
    assert_eq!(resting.len(), 2);

    // The gate turned True in version 2: judged again.
    let moved = pod("b", "2", "True");
    assert_eq!(
        resting.verdicts(&[pods[0].clone(), moved], always),
        vec![true, true]
    );
    // A version is what is compared, not which one is newer.
    assert_eq!(resting.verdicts(&pods, always), vec![true, false]);
}

#[test]
fn a_pod_without_uid_or_version_is_judged_every_time_and_not_kept() {
    let mut resting = RestingPods::default();
    let mut no_uid = Pod::clone(&pod("x", "1", "False"));
    no_uid.metadata.uid = None;
    let mut no_version = Pod::clone(&pod("y", "1", "False"));
    no_version.metadata.resource_version = None;
    let pods = [Arc::new(no_uid), Arc::new(no_version)];
    assert_eq!(resting.verdicts(&pods, always), vec![false, false]);
    assert!(resting.is_empty());
}

#[test]
fn entries_of_deleted_pods_go_once_the_map_has_doubled() {
    let mut resting = RestingPods::default();
    let kept = pod("kept", "1", "True");
    for round in 0..10 {
        // Each round the previous round's 1,000 pods are deleted and 1,000 others created.
        let pods: Vec<Arc<Pod>> = std::iter::once(kept.clone())
            .chain((0..1000).map(|i| pod(&format!("{round}-{i}"), "1", "True")))
            .collect();
        let exists =
            |_: &str, _: &str, uid: &str| uid == "kept" || uid.starts_with(&format!("{round}-"));
        assert!(
            resting
                .verdicts(&pods, exists)
                .iter()
                .all(|at_rest| *at_rest)
        );
        assert!(
            resting.len() <= 3 * 1001,
            "round {round}: {} kept",
            resting.len()
        );
    }
    assert!(resting.known.contains_key("kept"));
}
