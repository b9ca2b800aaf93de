//! Updating by the contract's worked examples (CC3 to CC12), another owner's update, history.

use super::*;

#[test]
fn cc3_partition_keeps_the_longest_ready_pods_at_the_old_revision() {
    for partition in [json!(2), json!("40%"), json!("30%")] {
        let mut world = World::new(cloneset(
            5,
            template("nginx:v1"),
            json!({"type": "InPlaceIfPossible", "partition": partition}),
        ));
        world.settle(30);
        let old = world.status().update_revision.clone().unwrap();
        // Make the ready order known: the lower the index, the longer ready.
        let names: Vec<String> = world
            .pods
            .iter()
            .map(|p| pod::name(p).to_string())
            .collect();
        for (i, p) in world.pods.iter_mut().enumerate() {
            let mut next = Pod::clone(p);
            let ready = next.status.as_mut().unwrap().conditions.as_mut().unwrap();
            let ready = ready.iter_mut().find(|c| c.type_ == "Ready").unwrap();
            ready.last_transition_time = Some(Time(at(-100 + i as i64)));
            *p = Arc::new(next);
        }
        world.set_template(template("nginx:v2"));
        world.settle(60);
        let status = world.status();
        assert_eq!(status.updated_replicas, 3, "partition {partition}");
        assert_eq!(status.expected_updated_replicas, Some(3));
        assert_eq!(status.current_revision.as_deref(), Some(old.as_str()));
        let kept: Vec<&str> = world
            .pods
            .iter()
            .filter(|p| CloneSet::REVISIONS.pod_at(p, &old))
            .map(pod::name)
            .collect();
        assert_eq!(kept, [names[0].as_str(), names[1].as_str()]);
    }
}

#[test]
fn cc4_max_unavailable_one_in_place_never_two_pods_in_flight() {
    let mut world = World::new(cloneset(
        4,
        template("nginx:v1"),
        json!({"type": "InPlaceIfPossible", "maxUnavailable": 1}),
    ));
    world.settle(30);
    let uids: Vec<String> = world
        .pods
        .iter()
        .map(|p| pod::name(p).to_string())
        .collect();
    world.set_template(template("nginx:v2"));
    let mut saw_gate_false_before_image = false;
    for _ in 0..80 {
        let plan = world.plan();
        for (_, purpose, ws) in writes(&plan) {
            if matches!(purpose, Purpose::InPlace { .. }) {
                // The readiness gate goes False before the image changes, in the same action.
                assert_eq!(ws.len(), 2);
                assert!(ws[0].status);
                assert_eq!(image_of(&ws[0].pod, "main"), "nginx:v1");
                assert_eq!(image_of(&ws[1].pod, "main"), "nginx:v2");
                saw_gate_false_before_image = true;
            }
        }
        world.apply(&plan);
        assert!(4 - world.available() <= 1, "{:?}", world.summary());
        world.now += 1;
        world.kubelet();
        if plan.actions.is_empty() && !plan.write_status {
            break;
        }
    }
    assert!(saw_gate_false_before_image);
    let status = world.status();
    assert_eq!(
        (status.updated_replicas, status.updated_ready_replicas),
        (4, 4)
    );
    assert_eq!(status.current_revision, status.update_revision);
    // Same pods, updated in place.
    let names: Vec<String> = world
        .pods
        .iter()
        .map(|p| pod::name(p).to_string())
        .collect();
    assert_eq!(names, uids);
    assert!(world.pods.iter().all(|p| image_of(p, "main") == "nginx:v2"));
}

#[test]
fn cc5_surge_recreate_never_drops_below_replicas_available() {
    let mut world = World::new(cloneset(
        3,
        template("nginx:v1"),
        json!({"type": "ReCreate", "maxSurge": 1, "maxUnavailable": 0}),
    ));
    world.settle(30);
    let old_names: Vec<String> = world
        .pods
        .iter()
        .map(|p| pod::name(p).to_string())
        .collect();
    let mut t = template("nginx:v1");
    t["spec"]["containers"][0]["env"] = json!([{"name": "A", "value": "1"}]);
    world.set_template(t);
    let first = world.plan();
    assert_eq!(creates(&first).len(), 1, "surge pod first");
    world.apply(&first);
    world.now += 1;
    world.kubelet();
    for _ in 0..80 {
        let plan = world.round();
        assert!(world.pods.len() <= 4);
        assert!(
            world.available() >= 3
                || !plan
                    .actions
                    .iter()
                    .any(|a| matches!(a, Action::DeletePod { .. }))
        );
        if plan.actions.is_empty() && !plan.write_status {
            break;
        }
    }
    assert_eq!(world.pods.len(), 3);
    assert_eq!(world.at_update(), 3);
    assert!(
        world
            .pods
            .iter()
            .all(|p| !old_names.contains(&pod::name(p).to_string()))
    );
}

#[test]
fn cc6_in_place_only_refuses_a_non_image_change_without_touching_pods() {
    let mut world = World::new(cloneset(
        2,
        template("nginx:v1"),
        json!({"type": "InPlaceOnly"}),
    ));
    world.settle(30);
    let mut t = template("nginx:v1");
    t["spec"]["containers"][0]["env"] = json!([{"name": "A", "value": "1"}]);
    world.set_template(t);
    let plan = world.plan();
    assert!(writes(&plan).is_empty());
    let error = plan.error.clone().unwrap();
    assert!(
        error.starts_with("find Pod cs-")
            && error.contains("update strategy is InPlaceOnly but can not update in-place"),
        "{error}"
    );
    let condition = &plan.status.conditions.as_ref().unwrap()[0];
    assert_eq!(
        (condition.type_.as_str(), condition.status.as_str()),
        ("FailedUpdate", "True")
    );
    // A condition alone is never written; here it goes with the generation the round observed.
    assert!(plan.write_status);
    world.apply(&plan);
    // Repeating the round writes no new condition.
    let again = world.plan();
    assert!(!again.write_status);
}

#[test]
fn cc7_in_place_if_possible_falls_back_to_recreate() {
    let mut world = World::new(cloneset(
        3,
        template("nginx:v1"),
        json!({"type": "InPlaceIfPossible"}),
    ));
    world.settle(30);
    let mut t = template("nginx:v1");
    t["spec"]["containers"][0]["ports"] = json!([{"containerPort": 80}]);
    world.set_template(t);
    let plan = world.round();
    let marked = writes(&plan);
    assert_eq!(marked.len(), 1);
    assert!(matches!(marked[0].1, Purpose::Recreate { .. }));
    assert_eq!(
        pod::label(&*marked[0].2[0].pod, pod::SPECIFIED_DELETE),
        Some("true")
    );
    let victim = marked[0].0.to_string();
    let plan = world.round();
    assert_eq!(deletes(&plan), [victim.as_str()]);
    let plan = world.round();
    assert_eq!(creates(&plan).len(), 1);
    world.settle(80);
    assert_eq!(world.at_update(), 3);
}

/// One in-place update at a time per pod: a SidecarSet's batches in progress are neither driven
/// nor overtaken by the CloneSet; the pod is taken once they are done.
#[test]
fn an_in_place_update_of_another_owner_is_waited_for() {
    let mut world = World::new(cloneset(
        1,
        template("nginx:v1"),
        json!({"type": "InPlaceIfPossible"}),
    ));
    world.settle(30);
    let foreign = r#"{"revision":"mesh-h2","updateTimestamp":"2024-05-01T10:00:00Z","lastContainerStatuses":{},"nextContainerImages":{"proxy":"proxy:v2"}}"#;
    Arc::make_mut(&mut world.pods[0])
        .metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert(keys::INPLACE_UPDATE_STATE.into(), foreign.into());
    world.set_template(template("nginx:v2"));
    let plan = world.plan();
    assert!(writes(&plan).is_empty(), "{:?}", writes(&plan));
    assert!(plan.requeue_after.is_some());
    // Done: the gate is True and no batch is left.
    let done = r#"{"revision":"mesh-h2","updateTimestamp":"2024-05-01T10:00:00Z","lastContainerStatuses":{}}"#;
    Arc::make_mut(&mut world.pods[0])
        .metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert(keys::INPLACE_UPDATE_STATE.into(), done.into());
    let plan = world.plan();
    assert!(
        writes(&plan)
            .iter()
            .any(|(_, purpose, _)| matches!(purpose, Purpose::InPlace { .. })),
        "{:?}",
        writes(&plan)
    );
}

#[test]
fn cc9_grace_period_waits_before_the_image_patch() {
    let mut world = World::new(cloneset(
        1,
        template("img:v1"),
        json!({"type": "InPlaceIfPossible", "inPlaceUpdateStrategy": {"gracePeriodSeconds": 10}}),
    ));
    world.settle(30);
    world.set_template(template("img:v2"));
    let start = world.now;
    let plan = world.plan();
    let w = writes(&plan);
    let after = &w[0].2.last().unwrap().pod;
    assert_eq!(image_of(after, "main"), "img:v1");
    assert!(pod::annotation(after, keys::INPLACE_UPDATE_GRACE).is_some());
    assert_eq!(plan.requeue_after, Some(std::time::Duration::from_secs(10)));
    world.apply(&plan);
    world.now = start + 4;
    let plan = world.plan();
    assert!(plan.actions.is_empty(), "{:?}", plan.actions);
    assert_eq!(plan.requeue_after, Some(std::time::Duration::from_secs(6)));
    assert_eq!(plan.status.updated_replicas, 1);
    world.now = start + 10;
    let plan = world.plan();
    let w = writes(&plan);
    assert_eq!(w.len(), 1);
    assert_eq!(image_of(&w[0].2[0].pod, "main"), "img:v2");
    assert!(pod::annotation(&w[0].2[0].pod, keys::INPLACE_UPDATE_GRACE).is_none());
}

#[test]
fn cc10_paused_finishes_in_flight_pods_and_starts_none() {
    let mut world = World::new(cloneset(
        4,
        template("img:v1"),
        json!({"type": "InPlaceIfPossible", "maxUnavailable": 1}),
    ));
    world.settle(30);
    world.set_template(template("img:v2"));
    world.round();
    assert_eq!(world.at_update(), 1);
    world.set.spec.update_strategy.paused = Some(true);
    world.settle(30);
    assert_eq!(world.at_update(), 1);
    assert!(world.pods.iter().all(|p| pod::lifecycle(p) == NORMAL));
    world.set.spec.replicas = Some(5);
    world.settle(30);
    assert_eq!(world.pods.len(), 5);
    world.set.spec.update_strategy.paused = None;
    world.settle(60);
    assert_eq!(world.at_update(), 5);
}

#[test]
fn cc12_rollback_mid_update_moves_updated_pods_back_in_place() {
    let mut world = World::new(cloneset(
        4,
        template("img:v1"),
        json!({"type": "InPlaceIfPossible", "maxUnavailable": 1}),
    ));
    world.settle(30);
    let rev1 = world.status().update_revision.clone().unwrap();
    world.set_template(template("img:v2"));
    for _ in 0..40 {
        world.round();
        if world.at_update() == 2 && world.pods.iter().all(|p| pod::lifecycle(p) == NORMAL) {
            break;
        }
    }
    assert_eq!(world.at_update(), 2);
    world.set_template(template("img:v1"));
    let plan = world.round();
    assert_eq!(plan.status.update_revision.as_deref(), Some(rev1.as_str()));
    assert_eq!(
        world.history.last().unwrap().metadata.name.as_deref(),
        Some(rev1.as_str())
    );
    assert_eq!(world.history.last().unwrap().revision, 3);
    world.settle(60);
    assert!(
        world
            .pods
            .iter()
            .all(|p| CloneSet::REVISIONS.pod_at(p, &rev1) && image_of(p, "main") == "img:v1")
    );
    assert_eq!(world.pods.len(), 4);
}

#[test]
fn unreadable_state_annotation_is_reported_not_fatal() {
    let mut world = World::new(cloneset(
        1,
        template("img:v1"),
        json!({"type": "InPlaceIfPossible"}),
    ));
    world.settle(30);
    let mut p = Pod::clone(&world.pods[0]);
    p.metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert(keys::INPLACE_UPDATE_STATE.into(), "{not json".into());
    world.pods[0] = Arc::new(p);
    let plan = world.plan();
    assert!(
        plan.actions
            .iter()
            .any(|a| matches!(a, Action::Event(e) if e.reason == "InvalidInPlaceUpdateState"))
    );
}

#[test]
fn history_is_truncated_to_the_limit() {
    let mut world = World::new(cloneset(
        1,
        template("img:v0"),
        json!({"type": "InPlaceIfPossible"}),
    ));
    world.set.spec.revision_history_limit = Some(2);
    for n in 1..=4 {
        world.set_template(template(&format!("img:v{n}")));
        world.settle(40);
    }
    // The live revision and at most 2 others: OpenKruise counts only revisions no pod wears
    // against the limit.
    assert_eq!(world.history.len(), 3);
    let update = world.status().update_revision.clone().unwrap();
    assert!(
        world
            .history
            .iter()
            .any(|r| r.metadata.name.as_deref() == Some(update.as_str()))
    );
}
