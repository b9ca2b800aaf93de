use super::*;
use crate::api::keys;
use k8s_openapi::api::core::v1::{
    ContainerStatus, PodCondition, PodReadinessGate, PodSpec, PodStatus,
};

/// A pod with the in-place gate, its condition `gate`, and a finished update's state.
fn pod(uid: &str, gate: &str) -> Arc<Pod> {
    let mut p = Pod::default();
    p.metadata.uid = Some(uid.into());
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

#[test]
fn verdicts_are_the_engines_and_follow_each_change_of_a_pod() {
    let mut resting = RestingPods::default();
    let settled = pod("a", "True");
    let moving = pod("b", "False");
    let pods = vec![settled.clone(), moving.clone()];
    assert_eq!(resting.verdicts(&pods), vec![true, false]);
    assert_eq!(
        resting.verdicts(&pods),
        pods.iter().map(|p| engine_at_rest(p)).collect::<Vec<_>>()
    );
    assert_eq!(resting.len(), 2);

    // The gate turned True: a new `Arc` for the same uid, judged again.
    let moved = pod("b", "True");
    assert_eq!(
        resting.verdicts(&[settled.clone(), moved]),
        vec![true, true]
    );
    // And back: the verdict is not the one kept for the uid.
    assert_eq!(resting.verdicts(&[settled, moving]), vec![true, false]);
}

#[test]
fn a_pod_without_uid_is_judged_every_time_and_not_kept() {
    let mut resting = RestingPods::default();
    let mut p = Pod::clone(&pod("x", "False"));
    p.metadata.uid = None;
    assert_eq!(resting.verdicts(&[Arc::new(p)]), vec![false]);
    assert!(resting.is_empty());
}

#[test]
fn pods_gone_from_the_cache_are_swept() {
    let mut resting = RestingPods::default();
    for round in 0..5 {
        // Each round sees 1,000 new pods; the previous rounds' are dropped.
        let pods: Vec<Arc<Pod>> = (0..1000)
            .map(|i| pod(&format!("{round}-{i}"), "True"))
            .collect();
        assert!(resting.verdicts(&pods).iter().all(|at_rest| *at_rest));
    }
    assert!(resting.len() <= 3000, "{} kept", resting.len());
}
