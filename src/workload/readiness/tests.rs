use k8s_openapi::api::core::v1::Pod;
use serde_json::json;

use super::*;
use crate::podmarks::kruise_ready::condition;

fn hooks(value: serde_json::Value) -> Lifecycle {
    serde_json::from_value(value).unwrap()
}

fn now() -> Timestamp {
    "2026-11-29T10:00:00Z".parse().unwrap()
}

fn gated(conditions: serde_json::Value) -> Pod {
    serde_json::from_value(json!({"metadata": {"name": "p"},
        "spec": {"containers": [], "readinessGates": [{"conditionType": "KruisePodReady"}]},
        "status": {"conditions": conditions}}))
    .unwrap()
}

#[test]
fn keys_follow_the_state_only_where_the_hook_marks() {
    let both = hooks(json!({"preDelete": {"markPodNotReady": true},
        "inPlaceUpdate": {"markPodNotReady": true}}));
    let neither = hooks(json!({"preDelete": {"labelsHandler": {"a": "b"}},
        "inPlaceUpdate": {"markPodNotReady": false}}));
    let keys = |state: &str, hooks: Option<&Lifecycle>| {
        let k = wanted_keys(state, hooks);
        (k.pre_delete, k.pre_update)
    };
    assert_eq!(keys("PreparingDelete", Some(&both)), (true, false));
    assert_eq!(keys("PreparingUpdate", Some(&both)), (false, true));
    assert_eq!(keys("Updating", Some(&both)), (false, true));
    for state in ["", "Normal", "PreparingNormal", "Updated"] {
        assert_eq!(keys(state, Some(&both)), (false, false), "{state}");
    }
    for state in ["PreparingDelete", "PreparingUpdate", "Updating"] {
        assert_eq!(keys(state, Some(&neither)), (false, false), "{state}");
        assert_eq!(keys(state, None), (false, false), "{state}");
    }
}

/// Another writer's key stays, and keeps the condition False after the lifecycle's key goes.
#[test]
fn another_writers_key_is_kept() {
    let pod = gated(json!([{"type": "KruisePodReady", "status": "False",
        "message": r#"[{"userAgent":"ContainerRecreateRequest","key":"crr"}]"#}]));
    let drained = with_condition(
        &pod,
        LifecycleKeys {
            pre_delete: false,
            pre_update: true,
        },
        now(),
    )
    .unwrap();
    assert_eq!(
        condition(&drained).unwrap().message.as_deref(),
        Some(
            r#"[{"userAgent":"ContainerRecreateRequest","key":"crr"},{"userAgent":"Lifecycle","key":"preUpdateHook"}]"#
        )
    );
    let released = with_condition(&drained, LifecycleKeys::default(), now()).unwrap();
    let c = condition(&released).unwrap();
    assert_eq!(c.status, "False");
    assert_eq!(
        c.message.as_deref(),
        Some(r#"[{"userAgent":"ContainerRecreateRequest","key":"crr"}]"#)
    );
    // Nothing to write when it already agrees; nothing at all without the gate.
    assert!(with_condition(&pod, LifecycleKeys::default(), now()).is_none());
    let mut ungated = pod.clone();
    ungated.spec.as_mut().unwrap().readiness_gates = None;
    assert!(with_condition(&ungated, LifecycleKeys::default(), now()).is_none());
}

/// A gated pod without the condition gets it True with no message (what OpenKruise's
/// pod-readiness controller writes), so the gate never keeps a new pod out of service.
#[test]
fn a_new_gated_pod_gets_the_condition_true() {
    let pod = gated(json!([]));
    let ready = with_condition(&pod, LifecycleKeys::default(), now()).unwrap();
    let c = condition(&ready).unwrap();
    assert_eq!((c.status.as_str(), c.message.as_deref()), ("True", None));
}
