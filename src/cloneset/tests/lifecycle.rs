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
