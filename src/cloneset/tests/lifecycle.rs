//! Lifecycle hooks: preDelete and inPlaceUpdate hold a pod until its hook is released.

use super::*;
use crate::workload::lifecycle::{NORMAL, PREPARING_DELETE, PREPARING_UPDATE, UPDATED};

fn with_lifecycle(mut set: CloneSet, lifecycle: Value) -> CloneSet {
    set.spec.lifecycle = Some(serde_json::from_value(lifecycle).unwrap());
    set
}

fn held_template(image: &str) -> Value {
    json!({
        "metadata": {"labels": {"app": "cs", "hold": "true"}},
        "spec": {"containers": [{"name": "main", "image": image}]}
    })
}

fn without_label(world: &mut World, name: &str, key: &str) {
    let index = world
        .pods
        .iter()
        .position(|p| pod::name(p) == name)
        .unwrap();
    let version = world.next_version();
    let pod = Arc::make_mut(&mut world.pods[index]);
    pod.metadata.labels.as_mut().unwrap().remove(key);
    pod.metadata.resource_version = Some(version);
}

/// One pod at `nginx:v1`, updated in place, whose inPlaceUpdate hook waits for its `hold` label.
fn one_pod_held_for_in_place_updates() -> World {
    World::new(with_lifecycle(
        cloneset(
            1,
            held_template("nginx:v1"),
            json!({"type": "InPlaceIfPossible"}),
        ),
        json!({"inPlaceUpdate": {"labelsHandler": {"hold": "true"}}}),
    ))
}

/// preDelete: a hooked pod chosen for scale-in waits in PreparingDelete, counted and not deleted,
/// until its hook label is removed; then it is deleted.
#[test]
fn pre_delete_hook_holds_a_pod_in_preparing_delete_until_released() {
    let mut world = World::new(with_lifecycle(
        cloneset(3, held_template("nginx:v1"), json!({})),
        json!({"preDelete": {"labelsHandler": {"hold": "true"}}}),
    ));
    world.settle(30);
    world.set.spec.replicas = Some(2);
    let plan = world.round();
    assert!(deletes(&plan).is_empty(), "a hooked pod is not deleted");
    let purposes: Vec<&Purpose> = writes(&plan).into_iter().map(|(_, p, _)| p).collect();
    // The shell reports a failure of this write as a failed scale.
    assert_eq!(purposes, vec![&Purpose::ScaleLifecycle]);
    let held: Vec<String> = world
        .pods
        .iter()
        .filter(|p| pod::lifecycle(p) == PREPARING_DELETE)
        .map(|p| pod::name(p).to_string())
        .collect();
    assert_eq!(held.len(), 1, "{:?}", world.summary());
    // Held: nothing else happens however many rounds pass.
    world.settle(10);
    assert_eq!(world.pods.len(), 3);
    assert_eq!(world.status().replicas, 3);
    without_label(&mut world, &held[0], "hold");
    let plan = world.round();
    assert_eq!(deletes(&plan), vec![held[0].as_str()]);
    world.settle(10);
    assert_eq!(world.pods.len(), 2);
}

/// inPlaceUpdate: a hooked pod goes to PreparingUpdate and keeps its image while hooked; released,
/// it is updated in place, waits in Updated until the hook's label is back, then returns to Normal.
#[test]
fn in_place_update_hook_holds_before_and_after_the_update() {
    let mut world = one_pod_held_for_in_place_updates();
    world.settle(30);
    let name = pod::name(&world.pods[0]).to_string();
    world.set_template(held_template("nginx:v2"));
    world.settle(10);
    assert_eq!(pod::lifecycle(&world.pods[0]), PREPARING_UPDATE);
    assert_eq!(image_of(&world.pods[0], "main"), "nginx:v1");
    without_label(&mut world, &name, "hold");
    world.settle(30);
    assert_eq!(pod::name(&world.pods[0]), name, "updated in place");
    assert_eq!(image_of(&world.pods[0], "main"), "nginx:v2");
    assert_eq!(pod::lifecycle(&world.pods[0]), UPDATED);
    // The user's controller puts the marker back: the pod returns to Normal.
    let version = world.next_version();
    let pod = Arc::make_mut(&mut world.pods[0]);
    pod.metadata
        .labels
        .as_mut()
        .unwrap()
        .insert("hold".into(), "true".into());
    pod.metadata.resource_version = Some(version);
    world.settle(10);
    assert_eq!(pod::lifecycle(&world.pods[0]), NORMAL);
    assert_eq!(world.status().updated_ready_replicas, 1);
}

/// An Updated pod facing the next revision goes back to PreparingUpdate with the hook's markers
/// re-added in the same write.
#[test]
fn an_updated_pod_gets_its_markers_back_for_the_next_update() {
    let mut world = one_pod_held_for_in_place_updates();
    world.settle(30);
    let name = pod::name(&world.pods[0]).to_string();
    world.set_template(held_template("nginx:v2"));
    world.settle(10);
    without_label(&mut world, &name, "hold");
    world.settle(30);
    assert_eq!(pod::lifecycle(&world.pods[0]), UPDATED);
    world.set_template(held_template("nginx:v3"));
    world.round();
    assert_eq!(pod::lifecycle(&world.pods[0]), PREPARING_UPDATE);
    assert_eq!(pod::label(&world.pods[0], "hold"), Some("true"));
    assert_eq!(image_of(&world.pods[0], "main"), "nginx:v2");
}

/// The `KruisePodReady` condition of a pod: (status, message).
fn kruise_pod_ready(p: &Pod) -> Option<(String, String)> {
    crate::podmarks::kruise_ready::condition(p)
        .map(|c| (c.status.clone(), c.message.clone().unwrap_or_default()))
}

/// `held_template` with the `KruisePodReady` readiness gate (what the pod webhook adds).
fn gated_template(image: &str) -> Value {
    let mut template = held_template(image);
    template["spec"]["readinessGates"] = json!([{"conditionType": "KruisePodReady"}]);
    template
}

/// markPodNotReady on the inPlaceUpdate hook: a new gated pod gets the condition True; when an
/// update comes the pod waits in PreparingUpdate with the condition False (`preUpdateHook`) and
/// not Ready, its image patched only in a later round than the one that wrote the condition, and
/// True again once updated. The hook's own label still holds the pod as before.
#[test]
fn mark_pod_not_ready_drains_the_pod_before_its_in_place_update() {
    let not_ready = r#"[{"userAgent":"Lifecycle","key":"preUpdateHook"}]"#;
    for labels_handler in [json!({"hold": "true"}), json!({})] {
        let mut world = World::new(with_lifecycle(
            cloneset(
                1,
                gated_template("nginx:v1"),
                json!({"type": "InPlaceIfPossible"}),
            ),
            json!({"inPlaceUpdate": {"labelsHandler": labels_handler, "markPodNotReady": true}}),
        ));
        world.settle(30);
        let name = pod::name(&world.pods[0]).to_string();
        assert_eq!(
            kruise_pod_ready(&world.pods[0]).map(|c| c.0),
            Some("True".to_string()),
            "a new gated pod is put in service"
        );
        assert_eq!(world.available(), 1);
        world.set_template(gated_template("nginx:v2"));
        // Round by round: the condition turns False in a round that patches no image, and the
        // image is patched only once the pod shows it False.
        let mut drained_at = None;
        let mut patched_at = None;
        for round in 0..40 {
            if labels_handler == json!({"hold": "true"}) && round == 10 {
                assert_eq!(patched_at, None, "held by its label");
                assert_eq!(pod::lifecycle(&world.pods[0]), PREPARING_UPDATE);
                without_label(&mut world, &name, "hold");
            }
            let before = world.pods[0].clone();
            world.round();
            let after = &world.pods[0];
            let drained = kruise_pod_ready(after).is_some_and(|c| c.0 == "False");
            if drained && drained_at.is_none() {
                drained_at = Some(round);
                assert_eq!(kruise_pod_ready(after).unwrap().1, not_ready);
                assert_eq!(image_of(after, "main"), "nginx:v1");
                assert!(!pod::is_ready(&**after, at(world.now)), "out of endpoints");
            }
            if image_of(after, "main") == "nginx:v2" && patched_at.is_none() {
                patched_at = Some(round);
                assert_eq!(
                    kruise_pod_ready(&before).map(|c| c.0),
                    Some("False".to_string()),
                    "patched only after the pod showed it drained"
                );
            }
        }
        let (drained_at, patched_at) = (drained_at.unwrap(), patched_at.unwrap());
        assert!(drained_at < patched_at, "{drained_at} {patched_at}");
        assert_eq!(pod::name(&world.pods[0]), name, "updated in place");
        let (status, message) = kruise_pod_ready(&world.pods[0]).unwrap();
        assert_eq!((status.as_str(), message.as_str()), ("True", "[]"));
        assert!(pod::is_ready(&*world.pods[0], at(world.now)));
    }
}

/// markPodNotReady on the preDelete hook: a gated pod chosen for scale-in is held in
/// PreparingDelete with the condition False (`preDeleteHook`) until its label is removed.
#[test]
fn mark_pod_not_ready_drains_a_pod_held_before_deletion() {
    let mut world = World::new(with_lifecycle(
        cloneset(2, gated_template("nginx:v1"), json!({})),
        json!({"preDelete": {"labelsHandler": {"hold": "true"}, "markPodNotReady": true}}),
    ));
    world.settle(30);
    world.set.spec.replicas = Some(1);
    world.settle(10);
    let held: Vec<&Arc<Pod>> = world
        .pods
        .iter()
        .filter(|p| pod::lifecycle(p) == PREPARING_DELETE)
        .collect();
    assert_eq!(held.len(), 1);
    assert_eq!(
        kruise_pod_ready(held[0]),
        Some((
            "False".to_string(),
            r#"[{"userAgent":"Lifecycle","key":"preDeleteHook"}]"#.to_string()
        ))
    );
    assert!(!pod::is_ready(&**held[0], at(world.now)));
    let other = world
        .pods
        .iter()
        .find(|p| pod::lifecycle(p) != PREPARING_DELETE)
        .unwrap();
    assert_eq!(
        kruise_pod_ready(other).map(|c| c.0),
        Some("True".to_string())
    );
}
