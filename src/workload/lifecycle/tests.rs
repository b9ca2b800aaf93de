use super::*;

fn hook() -> LifecycleHook {
    LifecycleHook {
        labels_handler: Some(BTreeMap::from([("hold".into(), "true".into())])),
        finalizers_handler: Some(vec!["example.com/drain".into()]),
        mark_pod_not_ready: None,
    }
}

#[test]
fn any_marker_holds_all_markers_release_from_updated() {
    let mut pod = Pod::default();
    assert!(!hooked(&pod, &hook()) && !all_hooked(&pod, &hook()));
    pod.metadata.finalizers = Some(vec!["example.com/drain".into()]);
    assert!(hooked(&pod, &hook()) && !all_hooked(&pod, &hook()));
    // A label with another value is not the marker.
    pod.metadata.labels = Some(BTreeMap::from([("hold".into(), "false".into())]));
    assert!(!all_hooked(&pod, &hook()));
    add_markers(&mut pod, &hook());
    assert!(all_hooked(&pod, &hook()));
    assert_eq!(
        pod.metadata.finalizers.as_ref().unwrap().len(),
        1,
        "not added twice"
    );
    assert!(
        all_hooked(&Pod::default(), &LifecycleHook::default()),
        "an empty hook"
    );
}

#[test]
fn the_two_tables_differ_where_openkruise_does() {
    let in_state = |state: &str, scheduled: bool, markers: bool| {
        let mut pod = Pod::default();
        set_lifecycle(&mut pod, state, "t");
        if scheduled {
            pod.spec = Some(k8s_openapi::api::core::v1::PodSpec {
                node_name: Some("n".into()),
                ..Default::default()
            });
        }
        if markers {
            add_markers(&mut pod, &hook());
        }
        pod
    };
    let only_pre_delete = Lifecycle {
        pre_delete: Some(hook()),
        ..Lifecycle::default()
    };
    let with_update_hook = Lifecycle {
        in_place_update: Some(hook()),
        ..Lifecycle::default()
    };
    let next = |pod: &Pod, hooks: Option<&Lifecycle>, table: Table| {
        next_state(pod, hooks, table, true, || true)
    };
    // PreparingNormal without a preNormal hook: the CloneSet waits for scheduling.
    let unscheduled = in_state(PREPARING_NORMAL, false, false);
    assert_eq!(next(&unscheduled, None, Table::CloneSet), None);
    assert_eq!(next(&unscheduled, None, Table::StatefulSet), Some(NORMAL));
    let scheduled = in_state(PREPARING_NORMAL, true, false);
    assert_eq!(next(&scheduled, None, Table::CloneSet), Some(NORMAL));
    // Updating, complete, with only a preDelete hook: the StatefulSet passes through
    // Updated, then Normal.
    let updating = in_state(UPDATING, true, false);
    let hooks = Some(&only_pre_delete);
    assert_eq!(next(&updating, hooks, Table::CloneSet), Some(NORMAL));
    assert_eq!(next(&updating, hooks, Table::StatefulSet), Some(UPDATED));
    let updated = in_state(UPDATED, true, false);
    assert_eq!(next(&updated, hooks, Table::StatefulSet), Some(NORMAL));
    assert_eq!(next(&updating, None, Table::StatefulSet), Some(NORMAL));
    // With an inPlaceUpdate hook both tables wait in Updated for all its markers.
    for table in [Table::CloneSet, Table::StatefulSet] {
        let hooks = Some(&with_update_hook);
        assert_eq!(next(&updating, hooks, table), Some(UPDATED), "{table:?}");
        assert_eq!(next(&updated, hooks, table), None, "{table:?}");
        let back = in_state(UPDATED, true, true);
        assert_eq!(next(&back, hooks, table), Some(NORMAL), "{table:?}");
        let marked = in_state(UPDATING, true, true);
        assert_eq!(next(&marked, hooks, table), Some(NORMAL), "{table:?}");
    }
}
