use super::*;
use serde_json::json;

#[test]
fn pods_map_to_their_controlling_cloneset_only() {
    let pod = |owners: serde_json::Value| -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": "p", "namespace": "ns", "ownerReferences": owners}
        }))
        .unwrap()
    };
    let owner = |kind: &str, api: &str, controller: bool| json!({"apiVersion": api, "kind": kind, "name": "cs", "uid": "u", "controller": controller});
    assert_eq!(
        owner_of(&pod(json!([owner(
            "CloneSet",
            "apps.kruise.io/v1alpha1",
            true
        )]))),
        Some(ObjectRef::new("cs").within("ns"))
    );
    assert_eq!(
        owner_of(&pod(json!([owner(
            "CloneSet",
            "apps.kruise.io/v1beta1",
            true
        )]))),
        Some(ObjectRef::new("cs").within("ns"))
    );
    assert_eq!(
        owner_of(&pod(json!([owner(
            "CloneSet",
            "apps.kruise.io/v1alpha1",
            false
        )]))),
        None
    );
    assert_eq!(
        owner_of(&pod(json!([owner("ReplicaSet", "apps/v1", true)]))),
        None
    );
    assert_eq!(
        owner_of(&pod(json!([owner("CloneSet", "example.com/v1", true)]))),
        None
    );
}

mod adoption;
mod round;
mod shell;
