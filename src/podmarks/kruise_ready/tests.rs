use k8s_openapi::api::core::v1::{Pod, PodCondition};

use super::*;

fn pod(gate: bool, condition: Option<(&str, &str)>) -> Pod {
    let mut value = serde_json::json!({"metadata": {"name": "p"}, "spec": {"containers": []}});
    if gate {
        value["spec"]["readinessGates"] = serde_json::json!([{"conditionType": "KruisePodReady"}]);
    }
    if let Some((status, message)) = condition {
        value["status"] = serde_json::json!({"conditions": [
            {"type": "KruisePodReady", "status": status, "message": message}
        ]});
    }
    serde_json::from_value(value).unwrap()
}

#[test]
fn dump_is_openkruises_sorted_compact_list() {
    let messages = vec![
        NotReadyKey::lifecycle(PRE_UPDATE_HOOK),
        NotReadyKey {
            user_agent: "ContainerRecreateRequest".into(),
            key: "crr".into(),
        },
        NotReadyKey::lifecycle(PRE_DELETE_HOOK),
    ];
    assert_eq!(
        dump(messages),
        r#"[{"userAgent":"ContainerRecreateRequest","key":"crr"},{"userAgent":"Lifecycle","key":"preDeleteHook"},{"userAgent":"Lifecycle","key":"preUpdateHook"}]"#
    );
    assert_eq!(dump(Vec::new()), "[]");
}

#[test]
fn marks_read_the_gate_and_the_message() {
    assert_eq!(ReadinessMarks::of(&pod(false, Some(("False", "")))), None);
    let missing = ReadinessMarks::of(&pod(true, None)).unwrap();
    assert!(!missing.present);
    assert!(!missing.agrees_with(LifecycleKeys::default()));
    let held = ReadinessMarks::of(&pod(
        true,
        Some((
            "False",
            r#"[{"userAgent":"Lifecycle","key":"preUpdateHook"}]"#,
        )),
    ))
    .unwrap();
    assert!(held.lifecycle.pre_update && !held.lifecycle.pre_delete && !held.others);
    let wanted = LifecycleKeys {
        pre_update: true,
        ..Default::default()
    };
    assert!(held.agrees_with(wanted));
    assert!(!held.agrees_with(LifecycleKeys::default()));
    let ready = ReadinessMarks::of(&pod(true, Some(("True", "")))).unwrap();
    assert!(ready.agrees_with(LifecycleKeys::default()));
    // Another writer's key keeps the condition False after the lifecycle lets go.
    let other = ReadinessMarks::of(&pod(
        true,
        Some(("False", r#"[{"userAgent":"Other","key":"x"}]"#)),
    ))
    .unwrap();
    assert!(other.agrees_with(LifecycleKeys::default()));
}

#[test]
fn unreadable_message_counts_as_empty() {
    let condition = PodCondition {
        message: Some("not json".into()),
        ..Default::default()
    };
    assert!(messages(&condition).is_empty());
}

#[test]
fn lifecycle_keys_replace_only_the_lifecycles() {
    let p = pod(
        true,
        Some((
            "False",
            r#"[{"userAgent":"Other","key":"x"},{"userAgent":"Lifecycle","key":"preDeleteHook"}]"#,
        )),
    );
    let wanted = LifecycleKeys {
        pre_update: true,
        ..Default::default()
    };
    assert_eq!(
        dump(with_lifecycle_keys(condition(&p), wanted)),
        r#"[{"userAgent":"Lifecycle","key":"preUpdateHook"},{"userAgent":"Other","key":"x"}]"#
    );
}

#[test]
fn the_gate_goes_to_pods_of_the_workloads_this_project_runs() {
    let with_owner = |owner: serde_json::Value| -> Pod {
        serde_json::from_value(serde_json::json!({"metadata": {"name": "p",
            "ownerReferences": [owner]}, "spec": {"containers": []}}))
        .unwrap()
    };
    let controller = |api_version: &str, kind: &str| {
        serde_json::json!({"apiVersion": api_version, "kind": kind, "name": "w", "uid": "u",
            "controller": true})
    };
    for kind in ["CloneSet", "StatefulSet", "DaemonSet"] {
        for version in ["v1alpha1", "v1beta1"] {
            let mut pod = with_owner(controller(&format!("apps.kruise.io/{version}"), kind));
            assert!(wants_gate(&pod), "{kind} {version}");
            assert!(add_gate(&mut pod));
            assert!(has_gate(&pod));
            assert!(!add_gate(&mut pod), "added twice");
            assert_eq!(pod.spec.unwrap().readiness_gates.unwrap().len(), 1);
        }
    }
    for owner in [
        controller("apps/v1", "StatefulSet"),
        controller("apps/v1", "ReplicaSet"),
        controller("apps.kruise.io/v1alpha1", "BroadcastJob"),
        serde_json::json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
            "name": "w", "uid": "u"}),
    ] {
        let mut pod = with_owner(owner.clone());
        assert!(!wants_gate(&pod), "{owner}");
        assert!(!add_gate(&mut pod));
    }
    let mut no_owner = pod(false, None);
    assert!(!add_gate(&mut no_owner));
}
