use serde_json::json;

use super::*;
use crate::rollout::upgrade_pod;

/// A pod with two changed sidecars on two launch priorities (and an app container below them).
pub(crate) fn two_priority_upgrade() -> PodUpgrade {
    let barrier = |key: &str| {
        json!([{"name": "KRUISE_CONTAINER_BARRIER",
                "valueFrom": {"configMapKeyRef": {"name": "web-barrier", "key": key}}}])
    };
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": "web", "namespace": "default",
            "annotations": {keys::SIDECARSET_INJECTED_LIST: "mesh"}},
        "spec": {"containers": [
            {"name": "proxy", "image": "proxy:v1", "env": barrier("p_0")},
            {"name": "agent", "image": "agent:v1", "env": barrier("p_-1")},
            {"name": "app", "image": "app:v1", "env": barrier("p_-2")}]},
        "status": {"containerStatuses": [
            {"name": "proxy", "image": "proxy:v1", "imageID": "proxy@sha256:1", "ready": true, "restartCount": 0},
            {"name": "agent", "image": "agent:v1", "imageID": "agent@sha256:1", "ready": true, "restartCount": 0},
            {"name": "app", "image": "app:v1", "imageID": "app@sha256:1", "ready": true, "restartCount": 0}]}
    }))
    .unwrap();
    let set: SidecarSet = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "SidecarSet",
        "metadata": {"name": "mesh", "annotations": {keys::SIDECARSET_HASH: "h2"}},
        "spec": {"containers": [
            {"name": "proxy", "image": "proxy:v2"},
            {"name": "agent", "image": "agent:v2"}]}
    }))
    .unwrap();
    upgrade_pod(&pod, &set, "2024-01-01T00:00:00Z").unwrap()
}

pub(crate) fn images(pod: &Pod) -> Vec<(String, String)> {
    pod.spec
        .iter()
        .flat_map(|s| &s.containers)
        .map(|c| (c.name.clone(), c.image.clone().unwrap_or_default()))
        .collect()
}

fn owned(pairs: [(&str, &str); 3]) -> [(String, String); 3] {
    pairs.map(|(n, i)| (n.to_string(), i.to_string()))
}

#[test]
fn engine_starts_from_old_images_with_the_bookkeeping_written() {
    let upgrade = two_priority_upgrade();
    assert_eq!(upgrade.batches.len(), 2);
    let base = engine_base(&upgrade);
    assert_eq!(
        images(&base),
        owned([
            ("proxy", "proxy:v1"),
            ("agent", "agent:v1"),
            ("app", "app:v1")
        ])
    );
    let annotations = base.metadata.annotations.as_ref().unwrap();
    assert!(annotations.contains_key(keys::SIDECARSET_HASH));
    assert!(annotations.contains_key(keys::SIDECARSET_INPLACE_UPDATE_STATE));
}

#[test]
fn engine_target_holds_every_changed_image() {
    let target = engine_target(&two_priority_upgrade(), "mesh-h2");
    assert_eq!(target.revision, "mesh-h2");
    assert_eq!(
        target.container_images,
        BTreeMap::from([
            ("agent".to_string(), "agent:v2".to_string()),
            ("proxy".to_string(), "proxy:v2".to_string()),
        ])
    );
}

#[test]
fn engine_revision_needs_the_hash() {
    let mut s = SidecarSet::new("mesh", Default::default());
    assert_eq!(engine_revision(&s), None);
    s.metadata.annotations = Some(BTreeMap::from([(
        keys::SIDECARSET_HASH.to_string(),
        "abc".to_string(),
    )]));
    assert_eq!(engine_revision(&s).as_deref(), Some("mesh-abc"));
}

#[test]
fn several_priorities_go_through_the_engine_one_goes_at_once() {
    let upgrade = two_priority_upgrade();
    assert_eq!(
        upgrade_route(&upgrade, Some("mesh-h2"), None),
        UpgradeRoute::Engine {
            base: Box::new(engine_base(&upgrade)),
            target: Box::new(engine_target(&upgrade, "mesh-h2")),
        }
    );
    // Without a revision the engine cannot record its progress: everything at once.
    assert_eq!(upgrade_route(&upgrade, None, None), UpgradeRoute::Whole);
    let mut one_batch = upgrade.clone();
    one_batch.batches.truncate(1);
    assert_eq!(
        upgrade_route(&one_batch, Some("mesh-h2"), None),
        UpgradeRoute::Whole
    );
}

#[test]
fn another_owners_update_in_flight_is_waited_for_our_own_is_not() {
    let upgrade = two_priority_upgrade();
    assert_eq!(
        upgrade_route(&upgrade, Some("mesh-h2"), Some("web-7d9".into())),
        UpgradeRoute::WaitFor {
            other: "web-7d9".into()
        }
    );
    assert_eq!(
        upgrade_route(&upgrade, None, Some("web-7d9".into())),
        UpgradeRoute::WaitFor {
            other: "web-7d9".into()
        }
    );
    assert!(matches!(
        upgrade_route(&upgrade, Some("mesh-h2"), Some("mesh-h2".into())),
        UpgradeRoute::Engine { .. }
    ));
}

#[test]
fn engine_progress_is_read_per_revision() {
    let with_state = |state: serde_json::Value| {
        let mut pod = Pod::default();
        pod.metadata.annotations = Some(BTreeMap::from([(
            keys::INPLACE_UPDATE_STATE.to_string(),
            state.to_string(),
        )]));
        pod
    };
    let between =
        with_state(json!({"revision": "mesh-h2", "nextContainerImages": {"agent": "agent:v2"}}));
    assert!(engine_in_flight(&between, "mesh-h2"));
    assert!(between_batches(&between, "mesh-h2"));
    assert!(!engine_in_flight(&between, "mesh-other"));
    assert!(!between_batches(&between, "mesh-other"));
    let last_batch = with_state(json!({"revision": "mesh-h2"}));
    assert!(engine_in_flight(&last_batch, "mesh-h2"));
    assert!(!between_batches(&last_batch, "mesh-h2"));
    assert!(!engine_in_flight(&Pod::default(), "mesh-h2"));
}
