use super::*;
use proptest::prelude::*;
use serde_json::json;

fn apply(doc: &Value, ops: &[PatchOperation]) -> Value {
    let mut doc = doc.clone();
    json_patch::patch(&mut doc, ops).expect("patch applies");
    doc
}

#[test]
fn equal_documents_give_no_operations() {
    let doc = json!({"a": [1, {"name": "x"}], "b": {"c": null}});
    assert!(diff(&doc, &doc).is_empty());
}

#[test]
fn inserting_a_named_element_keeps_its_neighbours_untouched() {
    let before = json!({"containers": [{"name": "app", "image": "a"}]});
    let after =
        json!({"containers": [{"name": "sidecar"}, {"name": "app", "image": "a", "env": [1]}]});
    let ops = diff(&before, &after);
    let paths: Vec<String> = ops.iter().map(|op| op.path().to_string()).collect();
    assert_eq!(paths, vec!["/containers/0", "/containers/1/env"]);
    // Applied to a raw object with a field the typed model does not know, it survives.
    let raw = json!({"containers": [{"name": "app", "image": "a", "futureField": true}]});
    let patched = apply(&raw, &ops);
    assert_eq!(patched["containers"][1]["futureField"], json!(true));
    assert_eq!(patched["containers"][0], json!({"name": "sidecar"}));
}

#[test]
fn keys_are_escaped() {
    let before = json!({"annotations": {}});
    let after = json!({"annotations": {"kruise.io/sidecarset-hash": "x", "a~b": "y"}});
    let ops = diff(&before, &after);
    let paths: Vec<String> = ops.iter().map(|op| op.path().to_string()).collect();
    assert!(paths.contains(&"/annotations/kruise.io~1sidecarset-hash".to_string()));
    assert!(paths.contains(&"/annotations/a~0b".to_string()));
    assert_eq!(apply(&before, &ops), after);
}

#[test]
fn unnamed_elements_are_replaced_in_place() {
    let before = json!(["a", "b", "c"]);
    let after = json!(["a", "x", "c", "d"]);
    let ops = diff(&before, &after);
    assert_eq!(ops.len(), 2, "{ops:?}");
    assert_eq!(apply(&before, &ops), after);
}

fn arbitrary_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (0i64..5).prop_map(|n| json!(n)),
        "[a-c]{0,2}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map("(name|[a-c/~]{1,2})", inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    #[test]
    fn patch_turns_before_into_after(before in arbitrary_json(), after in arbitrary_json()) {
        let ops = diff(&before, &after);
        prop_assert_eq!(apply(&before, &ops), after);
    }

    #[test]
    fn patch_of_a_mutation_is_exact(before in arbitrary_json(), after_leaf in arbitrary_json()) {
        // Small edits of one document (the common case) also round-trip.
        let mut after = before.clone();
        if let Value::Array(items) = &mut after { items.insert(0, after_leaf.clone()); }
        if let Value::Object(map) = &mut after { map.insert("new".into(), after_leaf); }
        let ops = diff(&before, &after);
        prop_assert_eq!(apply(&before, &ops), after);
    }
}

fn written_ops(patch: PatchWriter) -> Vec<PatchOperation> {
    patch
        .finish()
        .map(|json| serde_json::from_slice(&json).expect("patch is JSON"))
        .unwrap_or_default()
}

/// What injection does: volumes appended, a container added, an app container and the
/// annotations changed. The patch from the kept parts (volumes as a count) is the full diff.
#[test]
fn parts_patch_with_appended_volumes_is_the_full_diff() {
    for volumes in [
        json!(null),
        json!([]),
        json!([{"name": "a"}, {"name": "b"}]),
    ] {
        let mut pod = json!({"metadata": {"name": "p"},
                "spec": {"containers": [{"name": "app", "image": "app:1"}]}});
        if !volumes.is_null() {
            pod["spec"]["volumes"] = volumes.clone();
        }
        let before: Pod = serde_json::from_value(pod.clone()).unwrap();
        let parts = PodMutableParts::copy_of(&before);
        let mut after = before.clone();
        let spec = after.spec.as_mut().unwrap();
        spec.volumes.get_or_insert_with(Vec::new).push(Volume {
            name: "logs".into(),
            ..Default::default()
        });
        spec.containers.push(Container {
            name: "sidecar".into(),
            ..Default::default()
        });
        spec.containers[0].args = Some(vec!["--x".into()]);
        after.metadata.annotations = Some(BTreeMap::from([("k".into(), "v".into())]));
        spec.readiness_gates
            .get_or_insert_with(Vec::new)
            .push(PodReadinessGate {
                condition_type: "KruisePodReady".into(),
            });
        assert!(differs_only_in_mutable_parts(before.clone(), after.clone()));

        let ops = written_ops(pod_parts_patch(&parts, &after));
        assert_eq!(ops, written_ops(pod_patch(before.clone(), after.clone())));
        let patched = apply(&serde_json::to_value(&before).unwrap(), &ops);
        assert_eq!(patched, serde_json::to_value(&after).unwrap(), "{volumes}");
    }
}

/// Changing or dropping an existing volume breaks what the count relies on, and is caught.
#[test]
fn changed_existing_volume_is_not_an_append() {
    let before: Pod = serde_json::from_value(json!({
            "spec": {"containers": [], "volumes": [{"name": "a"}]}}))
    .unwrap();
    let mut changed = before.clone();
    changed.spec.as_mut().unwrap().volumes.as_mut().unwrap()[0].name = "b".into();
    assert!(!differs_only_in_mutable_parts(before.clone(), changed));
    let mut dropped = before.clone();
    dropped.spec.as_mut().unwrap().volumes = None;
    assert!(!differs_only_in_mutable_parts(before, dropped));
}

#[test]
fn carried_over_changes_apply_to_the_raw_object() {
    // The typed rendering adds `strategy: {}` and drops `unknown`; defaulting fills a field
    // inside `strategy` and one inside the first container.
    let raw = json!({"spec": {"containers": [{"name": "a", "unknown": 1}], "x": 1}});
    let before = json!({"spec": {"containers": [{"name": "a"}], "strategy": {}, "x": 1}});
    let after = json!({"spec": {"containers": [{"name": "a", "pull": "Always"}], "strategy": {"type": "ReCreate"}, "x": 1}});
    let merged = carry_over(&raw, &before, &after);
    assert_eq!(
        merged,
        json!({"spec": {"containers": [{"name": "a", "unknown": 1, "pull": "Always"}], "strategy": {"type": "ReCreate"}, "x": 1}})
    );
    let mut patched = raw.clone();
    json_patch::patch(&mut patched, &diff(&raw, &merged)).unwrap();
    assert_eq!(patched, merged);
    // Nothing changed: the raw object comes back untouched.
    assert_eq!(carry_over(&raw, &before, &before), raw);
}
