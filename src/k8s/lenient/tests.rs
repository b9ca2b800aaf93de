use kube::core::ObjectList;
use serde_json::json;

use super::*;
use crate::api::SidecarSet;

fn sidecarset(name: &str, revision_history_limit: i64) -> serde_json::Value {
    json!({
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "SidecarSet",
        "metadata": {
            "name": name,
            "resourceVersion": "7",
            "annotations": {
                "kubectl.kubernetes.io/last-applied-configuration": "{\"big\":true}",
                "team": "a"
            },
            "managedFields": [{"manager": "kubectl", "operation": "Update", "fieldsType": "FieldsV1",
                               "fieldsV1": {"f:spec": {"f:containers": {}}}}]
        },
        "spec": {
            "revisionHistoryLimit": revision_history_limit,
            "containers": [{"name": "proxy", "image": "proxy:v1"}]
        }
    })
}

#[test]
fn a_list_with_one_refused_object_decodes_the_others_and_keeps_the_refused_ones_metadata() {
    let answer = json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "SidecarSetList",
        "metadata": {"resourceVersion": "9"},
        "items": [sidecarset("a", 10), sidecarset("b", 99_999_999_999), sidecarset("c", 3)]
    })
    .to_string();
    let list: ObjectList<Lenient<SidecarSet>> = serde_json::from_str(&answer).unwrap();
    let mut items = list.items.into_iter();

    let a = items.next().unwrap().into_result().unwrap();
    assert_eq!(a.spec.revision_history_limit, Some(10));
    let b = items.next().unwrap().into_result().unwrap_err();
    assert_eq!(b.metadata.name.as_deref(), Some("b"));
    assert_eq!(b.metadata.resource_version.as_deref(), Some("7"));
    assert_eq!(b.path, "spec.revisionHistoryLimit");
    assert!(b.message.contains("99999999999"), "{}", b.message);
    assert_eq!(
        b.describe(),
        format!("spec.revisionHistoryLimit: {}", b.message)
    );
    let c = items.next().unwrap().into_result().unwrap();
    assert_eq!(c.spec.revision_history_limit, Some(3));
}

#[test]
fn managed_fields_and_the_last_applied_copy_are_dropped_as_objects_are_read() {
    for limit in [10, 99_999_999_999] {
        let read: Lenient<SidecarSet> = serde_json::from_value(sidecarset("a", limit)).unwrap();
        let metadata = read.meta();
        assert_eq!(metadata.managed_fields, None);
        let annotations = metadata.annotations.clone().unwrap();
        assert_eq!(annotations.keys().collect::<Vec<_>>(), ["team"]);
    }
    let mut bare = sidecarset("a", 10);
    bare["metadata"]["annotations"] =
        json!({"kubectl.kubernetes.io/last-applied-configuration": "{}"});
    let read: Lenient<SidecarSet> = serde_json::from_value(bare).unwrap();
    assert_eq!(read.meta().annotations, None);
}

#[test]
fn an_object_whose_metadata_cannot_be_read_fails_the_answer() {
    let mut broken = sidecarset("a", 10);
    broken["metadata"]["name"] = json!(["not", "a", "name"]);
    assert!(serde_json::from_value::<Lenient<SidecarSet>>(broken).is_err());
}

#[test]
fn a_refused_root_is_described_by_the_message_alone() {
    // Not an object at all: no metadata to keep, so the answer fails.
    assert!(Lenient::<SidecarSet>::from_json("[1]").is_err());
    let refusal = Refusal {
        metadata: ObjectMeta::default(),
        path: ".".into(),
        message: "invalid type".into(),
    };
    assert_eq!(refusal.describe(), "invalid type");
}

#[test]
fn lenient_objects_have_the_kind_and_address_of_theirs() {
    assert_eq!(Lenient::<SidecarSet>::kind(&()), "SidecarSet");
    assert_eq!(
        Lenient::<SidecarSet>::url_path(&(), None),
        SidecarSet::url_path(&(), None)
    );
}
