//! The contract's worked example W1: container launch priorities and env from pod metadata.

use std::collections::BTreeMap;

use super::*;
use crate::inject::launch_priority::barrier_env;

/// W1 with both images changed: a sidecar of launch priority 10 goes first, main after it is ready.
#[test]
fn w1_two_priorities_update_in_two_batches_sidecar_first() {
    let w1 = |sidecar: &str, main: &str| {
        json!({
            "metadata": {"labels": {"app": "cs"}, "annotations": {"app-config": "config v1"}},
            "spec": {"containers": [
                {"name": "sidecar", "image": sidecar, "env": [
                    {"name": "KRUISE_CONTAINER_PRIORITY", "value": "10"},
                    serde_json::to_value(barrier_env("x-barrier", 10)).unwrap()
                ]},
                {"name": "main", "image": main, "env": [
                    serde_json::to_value(barrier_env("x-barrier", 0)).unwrap()
                ]}
            ]}
        })
    };
    let mut world = World::new(cloneset(
        1,
        w1("sidecar:v1", "main:v1"),
        json!({"type": "InPlaceIfPossible"}),
    ));
    world.settle(30);
    let uid = pod::name(&world.pods[0]).to_string();
    world.set_template(w1("sidecar:v2", "main:v2"));
    let plan = world.plan();
    let started = writes(&plan);
    assert_eq!(started.len(), 1);
    let after = &started[0].2.last().unwrap().pod;
    assert_eq!(image_of(after, "sidecar"), "sidecar:v2");
    assert_eq!(
        image_of(after, "main"),
        "main:v1",
        "main waits for the next batch"
    );
    assert_eq!(pod::lifecycle(&**after), UPDATING);
    let state: Value =
        serde_json::from_str(pod::annotation(after, keys::INPLACE_UPDATE_STATE).unwrap()).unwrap();
    assert_eq!(state["nextContainerImages"], json!({"main": "main:v2"}));
    assert_eq!(
        state["preCheckBeforeNext"],
        json!({"containersRequiredReady": ["sidecar"]})
    );
    assert_eq!(
        plan.status.updated_replicas, 0,
        "counted from the pods listed at the start"
    );
    world.apply(&plan);
    world.now += 1;
    world.kubelet();
    let mut batches = Vec::new();
    for _ in 0..30 {
        let plan = world.round();
        for (_, purpose, ws) in writes(&plan) {
            if *purpose == Purpose::Refresh && !ws[0].status {
                batches.push(image_of(&ws[0].pod, "main"));
            }
        }
        if plan.actions.is_empty() && !plan.write_status {
            break;
        }
    }
    assert_eq!(batches, ["main:v2"]);
    let p = &world.pods[0];
    assert_eq!(pod::name(p), uid);
    assert_eq!(pod::lifecycle(p), NORMAL);
    let restarts: BTreeMap<String, i32> = p
        .status
        .as_ref()
        .unwrap()
        .container_statuses
        .iter()
        .flatten()
        .map(|s| (s.name.clone(), s.restart_count))
        .collect();
    assert_eq!(
        restarts,
        [("main".to_string(), 1), ("sidecar".to_string(), 1)].into()
    );
    let status = world.status();
    assert_eq!((status.updated_ready_replicas, status.replicas), (1, 1));
    let state: Value =
        serde_json::from_str(pod::annotation(p, keys::INPLACE_UPDATE_STATE).unwrap()).unwrap();
    let record: Vec<Value> = state["containerBatchesRecord"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["containers"].clone())
        .collect();
    assert_eq!(record, [json!(["sidecar"]), json!(["main"])]);
}

/// W1 proper: a changed annotation read by the sidecar's env. Without a node agent nothing can
/// restart the sidecar, so InPlaceIfPossible recreates and InPlaceOnly says why it cannot.
#[test]
fn w1_env_from_metadata_recreates_or_is_refused() {
    let w1 = |config: &str, main: &str| {
        json!({
            "metadata": {"labels": {"app": "cs"}, "annotations": {"app-config": config}},
            "spec": {"containers": [
                {"name": "sidecar", "image": "sidecar:v1", "env": [
                    {"name": "KRUISE_CONTAINER_PRIORITY", "value": "10"},
                    {"name": "APP_CONFIG", "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations['app-config']"}}}
                ]},
                {"name": "main", "image": main}
            ]}
        })
    };
    for (strategy, recreated) in [("InPlaceIfPossible", true), ("InPlaceOnly", false)] {
        let mut world = World::new(cloneset(
            1,
            w1("config v1", "main:v1"),
            json!({"type": strategy}),
        ));
        world.settle(30);
        world.set_template(w1("config v2", "main:v2"));
        let plan = world.plan();
        if recreated {
            let w = writes(&plan);
            assert!(matches!(w[0].1, Purpose::Recreate { .. }));
            world.apply(&plan);
            world.settle(40);
            assert_eq!(world.at_update(), 1);
            assert_eq!(
                pod::annotation(&world.pods[0], "app-config"),
                Some("config v2")
            );
        } else {
            assert!(writes(&plan).is_empty());
            let error = plan.error.unwrap();
            assert!(
                error.contains("container \"sidecar\" reads metadata.annotations['app-config']"),
                "{error}"
            );
        }
    }
}

/// With a current node agent record on the pod, the v1.1 example's env change goes in place: the
/// first batch is the sidecar, carried by the pod's annotation; main's image waits.
#[test]
fn w1_env_from_metadata_in_place_on_a_pod_the_node_agent_reports() {
    use crate::inplace::completion::{
        RuntimeContainerHashes, RuntimeContainerMeta, RuntimeContainersMeta,
    };
    let w1 = |config: &str, main: &str| {
        json!({
            "metadata": {"labels": {"app": "cs"}, "annotations": {"app-config": config}},
            "spec": {"containers": [
                {"name": "sidecar", "image": "sidecar:v1", "env": [
                    {"name": "KRUISE_CONTAINER_PRIORITY", "value": "10"},
                    // what the launch-priority webhook adds at creation
                    serde_json::to_value(barrier_env("x-barrier", 10)).unwrap(),
                    {"name": "APP_CONFIG", "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations['app-config']"}}}
                ]},
                {"name": "main", "image": main, "env": [
                    serde_json::to_value(barrier_env("x-barrier", 0)).unwrap()
                ]}
            ]}
        })
    };
    let mut world = World::new(cloneset(
        1,
        w1("config v1", "main:v1"),
        json!({"type": "InPlaceOnly"}),
    ));
    world.settle(30);
    let record = RuntimeContainersMeta {
        containers: ["main", "sidecar"]
            .iter()
            .map(|name| RuntimeContainerMeta {
                name: name.to_string(),
                container_id: format!("containerd://{name}"),
                restart_count: 0,
                hashes: RuntimeContainerHashes {
                    plain_hash: 1,
                    extracted_env_from_metadata_hash: 7,
                },
            })
            .collect(),
    };
    Arc::make_mut(&mut world.pods[0])
        .metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert(
            keys::RUNTIME_CONTAINERS_META.into(),
            serde_json::to_string(&record).unwrap(),
        );
    world.set_template(w1("config v2", "main:v2"));
    let plan = world.plan();
    assert_eq!(plan.error, None);
    let w = writes(&plan);
    assert!(matches!(w[0].1, Purpose::InPlace { .. }), "{w:?}");
    let patched = &w[0].2.last().unwrap().pod;
    assert_eq!(pod::annotation(patched, "app-config"), Some("config v2"));
    assert_eq!(image_of(patched, "main"), "main:v1");
    let state = crate::inplace::state::read_state(patched).unwrap().unwrap();
    assert!(state.update_env_from_metadata);
    assert_eq!(
        state.next_container_images.get("main").map(String::as_str),
        Some("main:v2")
    );
}
