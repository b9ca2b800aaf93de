//! The spec's worked cases (AS-n) in the simulated cluster.

use super::*;

fn policy(when_scaled: &str, when_deleted: &str) -> Value {
    json!({"persistentVolumeClaimRetentionPolicy":
        {"whenScaled": when_scaled, "whenDeleted": when_deleted}})
}

#[test]
fn as_1_ordered_creation_with_claims() {
    let mut world = World::new(statefulset(3, policy("Delete", "Retain")));
    let plan = world.round();
    let revision = world.history[0].metadata.name.clone().unwrap();
    // The claim first, then the pod; nothing else.
    assert_eq!(plan.actions.len(), 2, "{:#?}", plan.actions);
    let Action::CreatePvc {
        pvc: claim,
        pod,
        fix,
    } = &plan.actions[0]
    else {
        panic!("{:?}", plan.actions[0])
    };
    assert_eq!((pod.as_str(), *fix), ("web-0", PvcFix::NewPod));
    assert_eq!(
        serde_json::to_value(claim.as_ref()).unwrap(),
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data-web-0", "namespace": "db", "labels": {"app": "web"}},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}})
    );
    assert_eq!(creates(&plan), vec!["web-0"]);
    let web0 = world.pod("web-0");
    let labels = web0.metadata.labels.as_ref().unwrap();
    assert_eq!(labels["controller-revision-hash"], revision);
    assert_eq!(labels["statefulset.kubernetes.io/pod-name"], "web-0");
    assert_eq!(labels["apps.kubernetes.io/pod-index"], "0");
    assert_eq!(labels["lifecycle.apps.kruise.io/state"], "Normal");
    assert_eq!(
        serde_json::to_value(&plan.status).unwrap(),
        json!({"observedGeneration": 1, "replicas": 0, "readyReplicas": 0,
            "availableReplicas": 0, "currentReplicas": 0, "updatedReplicas": 0,
            "currentRevision": revision, "updateRevision": revision, "collisionCount": 0,
            "labelSelector": "app=web",
            "volumeClaims": [{"volumeClaimName": "data", "compatibleReplicas": 0,
                "compatibleReadyReplicas": 0}]})
    );
    // web-0 running and ready: web-1 next, one per round, in order.
    let mut made = vec!["web-0".to_string()];
    for _ in 0..10 {
        let plan = world.round();
        made.extend(creates(&plan).iter().map(|n| n.to_string()));
    }
    assert_eq!(made, vec!["web-0", "web-1", "web-2"]);
    assert_eq!(world.claims.len(), 3);
    // In range under Delete/Retain: no owners.
    assert!(
        world
            .claims
            .values()
            .all(|c| c.metadata.owner_references.is_none())
    );
    let status = world.status();
    assert_eq!(
        (
            status.replicas,
            status.ready_replicas,
            status.updated_replicas
        ),
        (3, 3, 3)
    );
    world.settle(5);
}

#[test]
fn as_2_ordered_scale_in_deletes_one_at_a_time_highest_first() {
    let mut world = World::new(statefulset(5, policy("Retain", "Retain")));
    world.settle(30);
    world.scale(3);
    let plan = world.round();
    assert_eq!(deletes(&plan), vec!["web-4"]);
    let plan = world.round();
    assert_eq!(deletes(&plan), vec!["web-3"]);
    world.settle(5);
    assert_eq!(world.names(), vec!["web-0", "web-1", "web-2"]);
    // The claims stay, unowned.
    assert_eq!(world.claims.len(), 5);
    assert!(world.owners("data-web-4").is_empty());
    // Parallel: both at once.
    let mut world = World::new(statefulset(5, json!({"podManagementPolicy": "Parallel"})));
    world.settle(10);
    world.scale(3);
    assert_eq!(deletes(&world.round()), vec!["web-4", "web-3"]);
}

#[test]
fn as_3_scale_in_under_each_policy() {
    for (scaled, deleted, kept) in [
        ("Retain", "Retain", true),
        ("Retain", "Delete", true),
        ("Delete", "Retain", false),
        ("Delete", "Delete", false),
    ] {
        let mut world = World::new(statefulset(3, policy(scaled, deleted)));
        world.settle(30);
        let set_owned = deleted == "Delete";
        for claim in ["data-web-0", "data-web-1", "data-web-2"] {
            let want: Vec<String> = if set_owned {
                vec!["StatefulSet/web".into()]
            } else {
                vec![]
            };
            assert_eq!(world.owners(claim), want, "{scaled}/{deleted} {claim}");
        }
        world.scale(1);
        let plan = world.round();
        if scaled == "Delete" {
            // The pod refs are written before the pod goes.
            assert_eq!(
                claim_writes(&plan),
                vec![
                    ("data-web-2".to_string(), vec!["Pod/web-2".to_string()]),
                    ("data-web-1".to_string(), vec!["Pod/web-1".to_string()]),
                ],
                "{scaled}/{deleted}"
            );
            let write = plan
                .actions
                .iter()
                .position(|a| matches!(a, Action::UpdatePvcOwners { .. }))
                .unwrap();
            let delete = plan
                .actions
                .iter()
                .position(|a| matches!(a, Action::DeletePod { .. }))
                .unwrap();
            assert!(write < delete);
        } else {
            assert!(claim_writes(&plan).is_empty());
        }
        assert_eq!(deletes(&plan), vec!["web-2"]);
        world.settle(20);
        assert_eq!(world.names(), vec!["web-0"]);
        let survivors: Vec<&String> = world.claims.keys().collect();
        if kept {
            assert_eq!(survivors.len(), 3, "{scaled}/{deleted}");
        } else {
            assert_eq!(survivors, vec!["data-web-0"], "{scaled}/{deleted}");
        }
        // Scaling out again: the kept claims are reused, gone ones made anew.
        world.scale(3);
        world.settle(30);
        assert_eq!(world.claims.len(), 3);
        assert_eq!(world.names(), vec!["web-0", "web-1", "web-2"]);
    }
}

#[test]
fn as_4_set_deletion_writes_status_only_and_the_collector_follows_the_policy() {
    for (deleted, survive) in [("Retain", 2), ("Delete", 0)] {
        let mut world = World::new(statefulset(2, policy("Retain", deleted)));
        world.settle(20);
        world.set.metadata.deletion_timestamp = Some(Time(at(world.now)));
        let plan = world.plan();
        assert!(plan.actions.is_empty());
        world.collect_garbage();
        assert_eq!(world.claims.len(), survive, "whenDeleted {deleted}");
    }
}

#[test]
fn as_5_retention_added_later_fixes_every_slot_in_one_round() {
    let mut world = World::new(statefulset(3, policy("Retain", "Retain")));
    world.settle(30);
    world.set.spec = statefulset(3, policy("Retain", "Delete")).spec;
    let plan = world.round();
    assert_eq!(
        claim_writes(&plan),
        ["data-web-0", "data-web-1", "data-web-2"]
            .iter()
            .map(|c| (c.to_string(), vec!["StatefulSet/web".to_string()]))
            .collect::<Vec<_>>()
    );
    let identity_writes = plan
        .actions
        .iter()
        .filter(|a| matches!(a, Action::UpdatePod { .. }))
        .count();
    assert_eq!(identity_writes, 3);
    assert_eq!(world.settle(5), 0);
}

#[test]
fn as_6_a_failed_pod_is_recreated_on_its_claim() {
    let mut world = World::new(statefulset(3, policy("Delete", "Retain")));
    world.settle(30);
    let index = world.pod_index("web-1").unwrap();
    let mut evicted = Pod::clone(&world.pods[index]);
    evicted.status.as_mut().unwrap().phase = Some("Failed".into());
    let old_uid = evicted.metadata.uid.clone();
    world.pods[index] = Arc::new(evicted);
    let plan = world.round();
    assert_eq!(deletes(&plan), vec!["web-1"]);
    let plan = world.round();
    assert_eq!(creates(&plan), vec!["web-1"]);
    assert!(
        !plan
            .actions
            .iter()
            .any(|a| matches!(a, Action::CreatePvc { .. }))
    );
    world.settle(10);
    assert_ne!(world.pod("web-1").metadata.uid, old_uid);
    assert_eq!(world.claims.len(), 3);
}

#[test]
fn as_7_reserved_ordinals() {
    let mut world = World::new(statefulset(3, json!({"reserveOrdinals": [1]})));
    let mut made = Vec::new();
    for _ in 0..12 {
        made.extend(creates(&world.round()).iter().map(|n| n.to_string()));
    }
    assert_eq!(made, vec!["web-0", "web-2", "web-3"]);
    let mut keys: Vec<&String> = world.claims.keys().collect();
    keys.sort();
    assert_eq!(keys, vec!["data-web-0", "data-web-2", "data-web-3"]);
    // A range reserves both; the pods move: web-2 condemned, web-4 made.
    world.set.spec.reserve_ordinals = Some(vec![
        k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::String("1-2".into()),
    ]);
    world.settle(30);
    assert_eq!(world.names(), vec!["web-0", "web-3", "web-4"]);
}

#[test]
fn a_stale_claim_blocks_the_pod_until_the_collector_removes_it() {
    let mut world = World::new(statefulset(2, policy("Delete", "Retain")));
    world.settle(20);
    // web-1 deleted behind the controller's back, while its claim still names the old pod (a
    // scale-in that was reverted before the collector ran).
    let old_uid = world.pod("web-1").metadata.uid.clone().unwrap();
    let mut claim = PersistentVolumeClaim::clone(&world.claims["data-web-1"]);
    claim.metadata.owner_references = Some(vec![
        retention::wanted_refs(
            retention::Policy::of(&world.set),
            &[],
            retention::Owner {
                name: "web",
                uid: "set-uid",
            },
            retention::Owner {
                name: "web-1",
                uid: &old_uid,
            },
            true,
        )
        .unwrap()
        .remove(0),
    ]);
    world.claims.insert("data-web-1".into(), Arc::new(claim));
    world
        .pods
        .retain(|p| p.metadata.name.as_deref() != Some("web-1"));
    let plan = world.plan();
    assert!(creates(&plan).is_empty(), "blocked by data-web-1");
    // The collector deletes the claim (its owner is gone); then the pod comes back with a new
    // claim.
    world.collect_garbage();
    assert!(!world.claims.contains_key("data-web-1"));
    world.settle(10);
    assert_eq!(world.names(), vec!["web-0", "web-1"]);
    assert!(world.claims.contains_key("data-web-1"));
}

#[test]
fn a_claim_being_deleted_blocks_its_pod_with_an_event_and_a_condition() {
    let mut world = World::new(statefulset(1, json!({})));
    let mut claim: PersistentVolumeClaim = serde_json::from_value(json!({
        "metadata": {"name": "data-web-0", "namespace": "db", "resourceVersion": "1",
            "deletionTimestamp": at(0).to_string(), "finalizers": ["kubernetes.io/pvc-protection"]}
    }))
    .unwrap();
    claim.metadata.uid = Some("claim-x".into());
    world.claims.insert("data-web-0".into(), Arc::new(claim));
    let plan = world.plan();
    assert!(creates(&plan).is_empty());
    assert_eq!(
        plan.error.as_deref(),
        Some("pvc data-web-0 is to be deleted")
    );
    assert_eq!(
        plan.actions,
        vec![Action::Event(events::pod(
            events::Verb::Create,
            "web",
            "web-0",
            Some("pvc data-web-0 is to be deleted")
        ))]
    );
    let condition = &plan.status.conditions.as_ref().unwrap()[0];
    assert_eq!(condition.type_, "FailedCreatePod");
    assert_eq!(
        condition.message.as_deref(),
        Some("StatefulPodControl failed to create Pod error: pvc data-web-0 is to be deleted")
    );
}

#[test]
fn as_11_recreate_update_within_max_unavailable() {
    let mut world = World::new(statefulset(
        5,
        json!({"podManagementPolicy": "Parallel",
            "updateStrategy": {"rollingUpdate": {"maxUnavailable": "40%"}}}),
    ));
    world.settle(10);
    let old = world.history[0].metadata.name.clone().unwrap();
    world.set_template(template("nginx:2"));
    let plan = world.round();
    assert_eq!(deletes(&plan), vec!["web-4", "web-3"]);
    // Both gone (the kubelet removed them): made again at the new revision.
    let plan = world.round();
    assert_eq!(creates(&plan), vec!["web-3", "web-4"]);
    world.settle(30);
    let status = world.status();
    assert_eq!(status.updated_replicas, 5);
    assert_ne!(status.current_revision.as_deref(), Some(old.as_str()));
    assert_eq!(status.current_revision, status.update_revision);
}

#[test]
fn ordered_update_goes_highest_first_and_keeps_the_partition() {
    let mut world = World::new(statefulset(
        4,
        json!({"updateStrategy": {"rollingUpdate": {"partition": 2}}}),
    ));
    world.settle(30);
    let old = world.history[0].metadata.name.clone().unwrap();
    world.set_template(template("nginx:2"));
    let mut deleted = Vec::new();
    for _ in 0..40 {
        let plan = world.round();
        deleted.extend(deletes(&plan).iter().map(|n| n.to_string()));
    }
    assert_eq!(deleted, vec!["web-3", "web-2"]);
    let status = world.status();
    assert_eq!((status.updated_replicas, status.current_replicas), (2, 2));
    assert_eq!(status.current_revision.as_deref(), Some(old.as_str()));
}

#[test]
fn as_12_parallel_scale_out_within_scale_max_unavailable() {
    let mut world = World::new(statefulset(
        5,
        json!({"podManagementPolicy": "Parallel", "scaleStrategy": {"maxUnavailable": 2}}),
    ));
    world.stuck = vec!["web-0".into(), "web-1".into()];
    assert_eq!(creates(&world.round()), vec!["web-0", "web-1"]);
    assert!(creates(&world.round()).is_empty());
    world.stuck.clear();
    world.kubelet();
    let plan = world.round();
    assert_eq!(creates(&plan), vec!["web-2", "web-3"]);
}

#[test]
fn as_13_pre_delete_holds_a_condemned_pod() {
    let mut template = template("nginx:1");
    template["metadata"]["labels"]["example.io/hold"] = json!("true");
    let mut world = World::new(statefulset(
        3,
        json!({"template": template,
            "lifecycle": {"preDelete": {"labelsHandler": {"example.io/hold": "true"}}}}),
    ));
    world.settle(30);
    world.scale(2);
    let plan = world.round();
    assert!(deletes(&plan).is_empty());
    assert_eq!(lifecycle(world.pod("web-2")), "PreparingDelete");
    // Held: nothing more while the label stays.
    for _ in 0..3 {
        assert!(deletes(&world.round()).is_empty());
    }
    let index = world.pod_index("web-2").unwrap();
    let mut released = Pod::clone(&world.pods[index]);
    released
        .metadata
        .labels
        .as_mut()
        .unwrap()
        .remove("example.io/hold");
    world.pods[index] = Arc::new(released);
    assert_eq!(deletes(&world.round()), vec!["web-2"]);
}

fn in_place(partition: i32) -> Value {
    json!({"updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible",
        "partition": partition}}})
}

fn uid(world: &World, name: &str) -> String {
    world.pod(name).metadata.uid.clone().unwrap()
}

/// The order in which pods got their first in-place write of the round's target.
fn in_place_starts(plan: &Plan) -> Vec<String> {
    plan.actions
        .iter()
        .filter_map(|a| match a {
            Action::WritePod {
                before,
                purpose: Purpose::InPlace { .. },
                ..
            } => before.metadata.name.clone(),
            _ => None,
        })
        .collect()
}

#[test]
fn as_8_in_place_highest_first_down_to_the_partition() {
    let mut world = World::new(statefulset(5, in_place(2)));
    world.settle(40);
    let uids: Vec<String> = (0..5).map(|i| uid(&world, &format!("web-{i}"))).collect();
    let old = world.status().current_revision.clone();
    world.set_template(template("nginx:2"));
    let mut started = Vec::new();
    for _ in 0..60 {
        let plan = world.round();
        assert!(deletes(&plan).is_empty() && creates(&plan).is_empty());
        started.extend(in_place_starts(&plan));
        // One pod at a time (maxUnavailable 1): never two updates in flight.
        let updating = world
            .pods
            .iter()
            .filter(|p| lifecycle(&***p) == "Updating")
            .count();
        assert!(updating <= 1, "{:?}", world.summary());
    }
    assert_eq!(started, vec!["web-4", "web-3", "web-2"]);
    let now: Vec<String> = (0..5).map(|i| uid(&world, &format!("web-{i}"))).collect();
    assert_eq!(now, uids, "same pods");
    let status = world.status();
    assert_eq!((status.updated_replicas, status.current_replicas), (3, 2));
    assert_eq!(status.current_revision, old);
    assert!(world.pods.iter().all(|p| lifecycle(&**p) == "Normal"));
    // Partition 0: web-1 and web-0, then the new revision is current.
    world
        .set
        .spec
        .update_strategy
        .rolling_update
        .as_mut()
        .unwrap()
        .partition = Some(0);
    world.settle(40);
    let status = world.status();
    assert_eq!((status.updated_replicas, status.current_replicas), (5, 5));
    assert_eq!(status.current_revision, status.update_revision);
    let image = |p: &Pod| {
        p.spec.as_ref().unwrap().containers[0]
            .image
            .clone()
            .unwrap()
    };
    assert!(world.pods.iter().all(|p| image(p) == "nginx:2"));
}

#[test]
fn as_9_in_place_only_refuses_what_cannot_change_in_place() {
    let mut world = World::new(statefulset(
        3,
        json!({"updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "InPlaceOnly"}}}),
    ));
    world.settle(30);
    let mut changed = template("nginx:1");
    changed["spec"]["containers"][0]["env"] = json!([{"name": "MODE", "value": "b"}]);
    world.set_template(changed);
    let plan = world.round();
    assert!(plan.actions.is_empty(), "{:?}", plan.actions);
    assert_eq!(
        plan.error.as_deref(),
        Some("find strategy is InPlaceOnly but Pod web-2 can not update in-place")
    );
    assert!(plan.status.conditions.is_none());
}

#[test]
fn as_10_in_place_if_possible_recreates_what_cannot_change_in_place() {
    let mut world = World::new(statefulset(2, in_place(0)));
    world.settle(30);
    let mut changed = template("nginx:1");
    changed["spec"]["containers"][0]["env"] = json!([{"name": "MODE", "value": "b"}]);
    world.set_template(changed);
    let plan = world.round();
    assert_eq!(deletes(&plan), vec!["web-1"]);
    let plan = world.round();
    assert_eq!(creates(&plan), vec!["web-1"]);
    world.settle(30);
    assert_eq!(world.claims.len(), 2, "claims reused");
    assert_eq!(world.status().updated_replicas, 2);
}

#[test]
fn as_14_only_a_pre_delete_hook_passes_updated_pods_through_updated() {
    let mut spec = in_place(0);
    spec["lifecycle"] = json!({"preDelete": {"labelsHandler": {"example.io/hold": "true"}}});
    let mut world = World::new(statefulset(1, spec));
    world.settle(30);
    world.set_template(template("nginx:2"));
    let mut states = Vec::new();
    for _ in 0..20 {
        world.round();
        let state = lifecycle(world.pod("web-0")).to_string();
        if states.last() != Some(&state) {
            states.push(state);
        }
    }
    assert_eq!(states, vec!["Updating", "Updated", "Normal"]);
}

#[test]
fn as_16_rollback_renumbers_the_old_revision_and_updates_back_in_place() {
    let mut world = World::new(statefulset(2, in_place(0)));
    world.settle(30);
    let first = world.history[0].metadata.name.clone().unwrap();
    let uids = (uid(&world, "web-0"), uid(&world, "web-1"));
    world.set_template(template("nginx:2"));
    world.settle(40);
    world.set_template(template("nginx:1"));
    world.settle(40);
    let status = world.status();
    assert_eq!(status.update_revision.as_deref(), Some(first.as_str()));
    assert_eq!(status.current_revision.as_deref(), Some(first.as_str()));
    assert_eq!(world.history.last().unwrap().revision, 3);
    assert_eq!((uid(&world, "web-0"), uid(&world, "web-1")), uids);
}
