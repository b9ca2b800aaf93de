use super::*;
use crate::validate::field::aggregate;
use serde_json::{Value, json};

const UID: &str = "6a1c1b2e-0000-4000-8000-000000000001";

fn cluster() -> BTreeMap<String, PodFacts> {
    BTreeMap::from([
        (
            "p0".to_string(),
            PodFacts {
                controller_uid: Some(UID.into()),
                terminating: false,
            },
        ),
        (
            "gone".to_string(),
            PodFacts {
                controller_uid: Some(UID.into()),
                terminating: true,
            },
        ),
        (
            "stranger".to_string(),
            PodFacts {
                controller_uid: Some("someone-else".into()),
                terminating: false,
            },
        ),
    ])
}

/// §5.7 base CloneSet.
fn base() -> Value {
    json!({
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "cs-1", "namespace": "default", "uid": UID, "resourceVersion": "2"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"a": "b"}},
            "template": {
                "metadata": {"labels": {"a": "b"}},
                "spec": {
                    "restartPolicy": "Always",
                    "dnsPolicy": "ClusterFirst",
                    "containers": [{"name": "abc", "image": "image", "imagePullPolicy": "IfNotPresent", "terminationMessagePolicy": "File"}]
                }
            },
            "updateStrategy": {"type": "InPlaceIfPossible", "partition": 2, "maxUnavailable": 1}
        }
    })
}

/// `base` with a JSON merge patch applied (`null` removes a key).
fn with(patch: Value) -> Value {
    let mut value = base();
    json_patch::merge(&mut value, &patch);
    value
}

fn decode(value: Value) -> CloneSet {
    serde_json::from_value(value).unwrap()
}

/// The sorted, distinct error paths of validating `new` (against `old` when given).
fn paths(new: Value, old: Option<Value>) -> Vec<String> {
    let pods = cluster();
    let ctx = CloneSetContext::new(&pods);
    let old = old.map(decode);
    let errors = validate_cloneset(&decode(new), old.as_ref(), &ctx);
    let mut paths: Vec<String> = errors.iter().map(|e| e.path.clone()).collect();
    paths.sort();
    paths.dedup();
    paths
}

fn messages(new: Value, old: Option<Value>) -> String {
    let pods = cluster();
    let old = old.map(decode);
    aggregate(&validate_cloneset(
        &decode(new),
        old.as_ref(),
        &CloneSetContext::new(&pods),
    ))
}

struct Case {
    name: &'static str,
    new: Value,
    old: Option<Value>,
    /// Expected error paths; empty means accepted.
    expect: &'static [&'static str],
}

fn ok(name: &'static str, new: Value) -> Case {
    Case {
        name,
        new,
        old: None,
        expect: &[],
    }
}

fn err(name: &'static str, new: Value, expect: &'static [&'static str]) -> Case {
    Case {
        name,
        new,
        old: None,
        expect,
    }
}

fn update(name: &'static str, old: Value, new: Value, expect: &'static [&'static str]) -> Case {
    Case {
        name,
        new,
        old: Some(old),
        expect,
    }
}

fn run(cases: Vec<Case>) {
    for case in cases {
        let mut expect: Vec<String> = case.expect.iter().map(|p| p.to_string()).collect();
        expect.sort();
        expect.dedup();
        let got = paths(case.new.clone(), case.old.clone());
        assert_eq!(
            got,
            expect,
            "{}: {}",
            case.name,
            messages(case.new, case.old)
        );
    }
}

fn image_update(
    old_image: &str,
    old_pull: &str,
    new_image: &str,
    new_pull: &str,
    strategy: &str,
) -> (Value, Value) {
    let container = |image: &str, pull: &str| {
        json!({"spec": {"template": {"spec": {"containers": [{"name": "abc", "image": image, "imagePullPolicy": pull, "terminationMessagePolicy": "File"}]}}},
                   "metadata": {}})
    };
    let mut old = with(container(old_image, old_pull));
    old["metadata"]["resourceVersion"] = json!("1");
    let mut new = with(container(new_image, new_pull));
    new["spec"]["updateStrategy"]["type"] = json!(strategy);
    (old, new)
}

#[test]
fn section_5_7_cases() {
    let (cs17_old, cs17_new) =
        image_update("image2", "Always", "image", "IfNotPresent", "InPlaceOnly");
    run(vec![
        ok(
            "CS-1 podsToDelete [p0]",
            with(json!({"spec": {"scaleStrategy": {"podsToDelete": ["p0"]}}})),
        ),
        ok(
            "CS-2 maxSurge 1",
            with(json!({"spec": {"updateStrategy": {"maxSurge": 1}}})),
        ),
        ok(
            "CS-3 maxUnavailable 0 maxSurge 1",
            with(json!({"spec": {"updateStrategy": {"maxUnavailable": 0, "maxSurge": 1}}})),
        ),
        ok(
            "CS-4 maxUnavailable 120%",
            with(json!({"spec": {"updateStrategy": {"maxUnavailable": "120%"}}})),
        ),
        ok(
            "CS-4 with weightPriority",
            with(
                json!({"spec": {"updateStrategy": {"maxUnavailable": "120%", "priorityStrategy": {"weightPriority": [{"weight": 20, "matchSelector": {"matchLabels": {"key": "foo"}}}]}}}}),
            ),
        ),
        update(
            "CS-5 update: replicas, image, limit, podsToDelete, VCT, strategy",
            {
                let mut old = with(json!({"spec": {
                    "replicas": 2,
                    "revisionHistoryLimit": 2,
                    "scaleStrategy": {"podsToDelete": ["p1"]},
                    "volumeClaimTemplates": [{"metadata": {"name": "foo"}, "spec": {"resources": {"requests": {"storage": "60Gi"}}}}],
                    "updateStrategy": {"type": "ReCreate"},
                    "template": {"spec": {"containers": [{"name": "abc", "image": "image1", "imagePullPolicy": "IfNotPresent", "terminationMessagePolicy": "File"}]}}
                }}));
                old["metadata"]["resourceVersion"] = json!("1");
                old
            },
            with(json!({"spec": {
                "replicas": 1,
                "revisionHistoryLimit": 1,
                "scaleStrategy": {"podsToDelete": ["p0"]},
                "volumeClaimTemplates": [{"metadata": {"name": "foo"}, "spec": {"resources": {"requests": {"storage": "30Gi"}}}}],
                "updateStrategy": {"type": "InPlaceOnly"}
            }})),
            &[],
        ),
        update(
            "CS-6 update progressDeadlineSeconds",
            {
                let mut old =
                    with(json!({"spec": {"progressDeadlineSeconds": 10, "minReadySeconds": 5}}));
                old["metadata"]["resourceVersion"] = json!("1");
                old
            },
            with(
                json!({"spec": {"progressDeadlineSeconds": 2147483647, "minReadySeconds": 2147483647}}),
            ),
            &[],
        ),
        err(
            "CS-7 replicas -1",
            with(json!({"spec": {"replicas": -1}})),
            &["spec.replicas"],
        ),
        err(
            "CS-8 bad template label key, no containers",
            with(
                json!({"spec": {"template": {"metadata": {"labels": {"a": "b", "bad key": "v"}}, "spec": {"containers": null}}}}),
            ),
            &["spec.template.labels", "spec.template.spec.containers"],
        ),
        err(
            "CS-9 selector does not match",
            with(json!({"spec": {"selector": {"matchLabels": {"a": "b", "c": "d"}}}})),
            &["spec.template.metadata.labels"],
        ),
        err(
            "CS-10 type empty",
            with(json!({"spec": {"updateStrategy": {"type": ""}}})),
            &["spec.updateStrategy.type"],
        ),
        err(
            "CS-11 partition -1",
            with(json!({"spec": {"updateStrategy": {"partition": -1}}})),
            &["spec.updateStrategy.partition"],
        ),
        err(
            "CS-12 maxUnavailable 0",
            with(json!({"spec": {"updateStrategy": {"maxUnavailable": 0}}})),
            &["spec.updateStrategy.maxUnavailable"],
        ),
        err(
            "CS-13 maxUnavailable 0 maxSurge 0",
            with(json!({"spec": {"updateStrategy": {"maxUnavailable": 0, "maxSurge": 0}}})),
            &["spec.updateStrategy.maxUnavailable"],
        ),
        err(
            "CS-14 duplicated podsToDelete",
            with(json!({"spec": {"scaleStrategy": {"podsToDelete": ["p0", "p0"]}}})),
            &["spec.scaleStrategy.podsToDelete"],
        ),
        err(
            "CS-15 podsToDelete with a missing pod",
            with(json!({"spec": {"scaleStrategy": {"podsToDelete": ["p0", "p1"]}}})),
            &["spec.scaleStrategy.podsToDelete"],
        ),
        err(
            "CS-16 podsToDelete [p1]",
            with(json!({"spec": {"scaleStrategy": {"podsToDelete": ["p1"]}}})),
            &["spec.scaleStrategy.podsToDelete"],
        ),
        update(
            "CS-17 InPlaceOnly changes imagePullPolicy",
            cs17_old,
            cs17_new,
            &["spec"],
        ),
        err(
            "CS-18 maxSurge \"5\" (create)",
            with(json!({"spec": {"updateStrategy": {"type": "ReCreate", "maxSurge": "5"}}})),
            &["spec.updateStrategy.maxSurge"],
        ),
        update(
            "CS-18 maxSurge \"5\" (update)",
            {
                let mut old = with(json!({"spec": {"updateStrategy": {"type": "ReCreate"}}}));
                old["metadata"]["resourceVersion"] = json!("1");
                old
            },
            with(json!({"spec": {"updateStrategy": {"type": "ReCreate", "maxSurge": "5"}}})),
            &["spec.updateStrategy.maxSurge"],
        ),
        err(
            "CS-19 maxUnavailable \"5\" (create)",
            with(json!({"spec": {"updateStrategy": {"maxUnavailable": "5"}}})),
            &["spec.updateStrategy.maxUnavailable"],
        ),
        update(
            "CS-19 maxUnavailable \"5\" (update)",
            {
                let mut old = base();
                old["metadata"]["resourceVersion"] = json!("1");
                old
            },
            with(json!({"spec": {"updateStrategy": {"maxUnavailable": "5"}}})),
            &["spec.updateStrategy.maxUnavailable"],
        ),
        err(
            "CS-20 progressDeadlineSeconds -1",
            with(json!({"spec": {"progressDeadlineSeconds": -1}})),
            &["spec.progressDeadlineSeconds"],
        ),
        err(
            "CS-20 deadline equal to minReadySeconds",
            with(json!({"spec": {"progressDeadlineSeconds": 10, "minReadySeconds": 10}})),
            &["spec.progressDeadlineSeconds"],
        ),
        err(
            "CS-20 deadline below minReadySeconds",
            with(json!({"spec": {"progressDeadlineSeconds": 10, "minReadySeconds": 15}})),
            &["spec.progressDeadlineSeconds"],
        ),
        update(
            "CS-21 selector change",
            {
                let mut old = with(
                    json!({"spec": {"selector": {"matchLabels": {"a": null, "app": "webserver"}}, "template": {"metadata": {"labels": {"app": "webserver", "a": "b"}}}}}),
                );
                old["metadata"]["resourceVersion"] = json!("1");
                old
            },
            with(
                json!({"spec": {"template": {"metadata": {"labels": {"app": "webserver", "a": "b"}}}}}),
            ),
            &["spec"],
        ),
    ]);
}

#[test]
fn one_case_per_rule() {
    run(vec![
        // 1 replicas
        ok(
            "1 replicas 0",
            with(json!({"spec": {"replicas": 0, "updateStrategy": {"maxUnavailable": 0}}})),
        ),
        // 2 selector
        err(
            "2 no selector",
            with(json!({"spec": {"selector": null}})),
            &["spec.selector", "spec.template.metadata.labels"],
        ),
        err(
            "2 empty selector",
            with(json!({"spec": {"selector": {"matchLabels": null}}})),
            &["spec.selector"],
        ),
        err(
            "2 invalid selector value",
            with(
                json!({"spec": {"selector": {"matchLabels": {"a": "b!"}}, "template": {"metadata": {"labels": {"a": "b!"}}}}}),
            ),
            &["spec.selector.matchLabels", "spec.selector"],
        ),
        ok(
            "2 expression selector",
            with(
                json!({"spec": {"selector": {"matchExpressions": [{"key": "a", "operator": "In", "values": ["b", "c"]}]}}}),
            ),
        ),
        // 3 selector/labels
        err(
            "3 labels missing",
            with(json!({"spec": {"template": {"metadata": {"labels": null}}}})),
            &["spec.template.metadata.labels"],
        ),
        // 4 template, with claim templates as volumes
        ok(
            "4 mount of a claim template",
            with(json!({"spec": {
                "volumeClaimTemplates": [{"metadata": {"name": "data"}}],
                "template": {"spec": {"containers": [{"name": "abc", "image": "image", "imagePullPolicy": "IfNotPresent", "terminationMessagePolicy": "File", "volumeMounts": [{"name": "data", "mountPath": "/data"}]}]}}
            }})),
        ),
        err(
            "4 mount of nothing",
            with(
                json!({"spec": {"template": {"spec": {"containers": [{"name": "abc", "image": "image", "imagePullPolicy": "IfNotPresent", "terminationMessagePolicy": "File", "volumeMounts": [{"name": "data", "mountPath": "/data"}]}]}}}}),
            ),
            &["spec.template.spec.containers[0].volumeMounts[0].name"],
        ),
        err(
            "4 missing image and dnsPolicy",
            with(
                json!({"spec": {"template": {"spec": {"dnsPolicy": null, "containers": [{"name": "abc", "imagePullPolicy": "IfNotPresent", "terminationMessagePolicy": "File"}]}}}}),
            ),
            &[
                "spec.template.spec.containers[0].image",
                "spec.template.spec.dnsPolicy",
            ],
        ),
        // 5 restartPolicy
        err(
            "5 restartPolicy Never",
            with(json!({"spec": {"template": {"spec": {"restartPolicy": "Never"}}}})),
            &["spec.template.spec.restartPolicy"],
        ),
        // 6 activeDeadlineSeconds
        err(
            "6 activeDeadlineSeconds",
            with(json!({"spec": {"template": {"spec": {"activeDeadlineSeconds": 60}}}})),
            &["spec.template.spec.activeDeadlineSeconds"],
        ),
        // 7 podsToDelete
        err(
            "7 terminating pod",
            with(json!({"spec": {"scaleStrategy": {"podsToDelete": ["gone"]}}})),
            &["spec.scaleStrategy.podsToDelete"],
        ),
        err(
            "7 pod of another owner",
            with(json!({"spec": {"scaleStrategy": {"podsToDelete": ["stranger"]}}})),
            &["spec.scaleStrategy.podsToDelete"],
        ),
        // 8 type
        ok(
            "8 ReCreate",
            with(json!({"spec": {"updateStrategy": {"type": "ReCreate"}}})),
        ),
        err(
            "8 OnDelete",
            with(json!({"spec": {"updateStrategy": {"type": "OnDelete"}}})),
            &["spec.updateStrategy.type"],
        ),
        // 9 partition
        ok(
            "9 partition above replicas",
            with(json!({"spec": {"updateStrategy": {"partition": "150%"}}})),
        ),
        err(
            "9 partition not a percent",
            with(json!({"spec": {"updateStrategy": {"partition": "1"}}})),
            &["spec.updateStrategy.partition"],
        ),
        // 10 priority
        err(
            "10 both priorities",
            with(json!({"spec": {"updateStrategy": {"priorityStrategy": {
                "weightPriority": [{"weight": 20, "matchSelector": {"matchLabels": {"key": "foo"}}}],
                "orderPriority": [{"orderedKey": "k"}]
            }}}})),
            &["spec.updateStrategy.priorityStrategy"],
        ),
        ok(
            "10 order priority",
            with(
                json!({"spec": {"updateStrategy": {"priorityStrategy": {"orderPriority": [{"orderedKey": "k"}]}}}}),
            ),
        ),
        // 11 scatter
        ok(
            "11 scatter",
            with(
                json!({"spec": {"updateStrategy": {"scatterStrategy": [{"key": "zone", "value": "a"}]}}}),
            ),
        ),
        err(
            "11 duplicated scatter",
            with(
                json!({"spec": {"updateStrategy": {"scatterStrategy": [{"key": "zone", "value": "a"}, {"key": "zone", "value": "a"}]}}}),
            ),
            &["spec.updateStrategy.scatterStrategy"],
        ),
        // 12 parseable maxUnavailable / maxSurge
        ok(
            "12 fractional percent",
            with(json!({"spec": {"updateStrategy": {"maxUnavailable": "12.5%"}}})),
        ),
        err(
            "12 garbage percent",
            with(json!({"spec": {"updateStrategy": {"maxSurge": "x%"}}})),
            &["spec.updateStrategy.maxSurge"],
        ),
        // 13 InPlaceOnly and surge
        err(
            "13 InPlaceOnly with maxSurge",
            with(json!({"spec": {"updateStrategy": {"type": "InPlaceOnly", "maxSurge": "50%"}}})),
            &["spec.updateStrategy.maxSurge"],
        ),
        ok(
            "13 InPlaceOnly with maxSurge 0",
            with(json!({"spec": {"updateStrategy": {"type": "InPlaceOnly", "maxSurge": 0}}})),
        ),
        // 14 not both below 1
        err(
            "14 unset maxUnavailable",
            with(json!({"spec": {"updateStrategy": {"maxUnavailable": null}}})),
            &["spec.updateStrategy.maxUnavailable"],
        ),
        ok(
            "14 tiny percent rounds up",
            with(json!({"spec": {"updateStrategy": {"maxUnavailable": "1%"}}})),
        ),
        // 15 progress deadline
        ok(
            "15 deadline above minReadySeconds",
            with(json!({"spec": {"progressDeadlineSeconds": 600, "minReadySeconds": 10}})),
        ),
        // metadata
        err(
            "18 bad name",
            with(json!({"metadata": {"name": "Bad_Name"}})),
            &["metadata.name"],
        ),
        err(
            "18 no namespace",
            with(json!({"metadata": {"namespace": null}})),
            &["metadata.namespace"],
        ),
    ]);
}

fn stored(patch: Value) -> Value {
    let mut old = with(patch);
    old["metadata"]["resourceVersion"] = json!("1");
    old
}

#[test]
fn update_rules() {
    let (image_only_old, image_only_new) = image_update(
        "image2",
        "IfNotPresent",
        "image",
        "IfNotPresent",
        "InPlaceOnly",
    );
    let (recreate_old, recreate_new) =
        image_update("image2", "Always", "image", "IfNotPresent", "ReCreate");
    run(vec![
        update(
            "16 metadata-only update",
            stored(json!({})),
            with(json!({"metadata": {"labels": {"x": "y"}}})),
            &[],
        ),
        update(
            "16 minReadySeconds and lifecycle may change",
            stored(json!({})),
            with(
                json!({"spec": {"minReadySeconds": 5, "lifecycle": {"preDelete": {"finalizersHandler": ["example.com/x"]}}}}),
            ),
            &[],
        ),
        update(
            "16 selector expression change",
            stored(json!({})),
            with(
                json!({"spec": {"selector": {"matchLabels": null, "matchExpressions": [{"key": "a", "operator": "In", "values": ["b"]}]}}}),
            ),
            &["spec"],
        ),
        update("17 image-only change", image_only_old, image_only_new, &[]),
        update(
            "17 any change without InPlaceOnly",
            recreate_old,
            recreate_new,
            &[],
        ),
        update(
            "17 template metadata is free",
            stored(json!({"spec": {"updateStrategy": {"type": "InPlaceOnly"}}})),
            with(
                json!({"spec": {"updateStrategy": {"type": "InPlaceOnly"}, "template": {"metadata": {"labels": {"a": "b", "new": "label"}}}}}),
            ),
            &[],
        ),
        update(
            "17 adding a container",
            stored(json!({"spec": {"updateStrategy": {"type": "InPlaceOnly"}}})),
            with(
                json!({"spec": {"updateStrategy": {"type": "InPlaceOnly"}, "template": {"spec": {"containers": [
                    {"name": "abc", "image": "image", "imagePullPolicy": "IfNotPresent", "terminationMessagePolicy": "File"},
                    {"name": "def", "image": "image", "imagePullPolicy": "IfNotPresent", "terminationMessagePolicy": "File"}
                ]}}}}),
            ),
            &["spec"],
        ),
        update(
            "18 rename",
            stored(json!({})),
            with(json!({"metadata": {"name": "cs-2"}})),
            &["metadata.name"],
        ),
        update(
            "18 no resourceVersion",
            stored(json!({})),
            with(json!({"metadata": {"resourceVersion": null}})),
            &["metadata.resourceVersion"],
        ),
        update(
            "7 names already listed are not looked up again",
            stored(json!({"spec": {"scaleStrategy": {"podsToDelete": ["p1"]}}})),
            with(json!({"spec": {"scaleStrategy": {"podsToDelete": ["p1", "p0"]}}})),
            &[],
        ),
    ]);
}

#[test]
fn messages_match_openkruise() {
    let cases = [
        (
            with(json!({"spec": {"updateStrategy": {"type": ""}}})),
            "spec.updateStrategy.type: Invalid value: \"\": must be 'ReCreate', InPlaceIfPossible or 'InPlaceOnly'",
        ),
        (
            with(json!({"spec": {"updateStrategy": {"maxUnavailable": "5", "maxSurge": 1}}})),
            "spec.updateStrategy.maxUnavailable: Invalid value: \"5\": failed GetScaledValueFromIntOrPercent for maxUnavailable: invalid type: string is not a percentage",
        ),
        (
            with(json!({"spec": {"scaleStrategy": {"podsToDelete": ["p0", "p0"]}}})),
            "spec.scaleStrategy.podsToDelete: Invalid value: []string{\"p0\", \"p0\"}: duplicated items [p0]",
        ),
        (
            with(json!({"spec": {"scaleStrategy": {"podsToDelete": ["p1"]}}})),
            "spec.scaleStrategy.podsToDelete: Invalid value: \"p1\": find pod p1 failed: pods \"p1\" not found",
        ),
        (
            with(json!({"spec": {"scaleStrategy": {"podsToDelete": ["stranger"]}}})),
            "spec.scaleStrategy.podsToDelete: Invalid value: \"stranger\": find pod stranger owner is not this CloneSet",
        ),
        (
            with(json!({"spec": {"scaleStrategy": {"podsToDelete": ["gone"]}}})),
            "spec.scaleStrategy.podsToDelete: Invalid value: \"gone\": find pod gone already terminating",
        ),
        (
            with(json!({"spec": {"updateStrategy": {"maxUnavailable": 0}}})),
            "spec.updateStrategy.maxUnavailable: Invalid value: intstr.IntOrString{Type:0, IntVal:0, StrVal:\"\"}: maxUnavailable and maxSurge should not both be less than 1",
        ),
        (
            with(json!({"spec": {"updateStrategy": {"type": "InPlaceOnly", "maxSurge": 1}}})),
            "spec.updateStrategy.maxSurge: Invalid value: \"1\": can not use maxSurge with strategy type InPlaceOnly",
        ),
        (
            with(json!({"spec": {"template": {"spec": {"activeDeadlineSeconds": 60}}}})),
            "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in cloneset is not Supported",
        ),
        (
            with(json!({"spec": {"selector": {"matchLabels": {"a": "b", "c": "d"}}}})),
            "spec.template.metadata.labels: Invalid value: map[string]string{\"a\":\"b\"}: `selector` does not match template `labels`",
        ),
        (
            with(
                json!({"spec": {"updateStrategy": {"priorityStrategy": {"weightPriority": [{"weight": 101, "matchSelector": {"matchLabels": {"k": "v"}}}]}}}}),
            ),
            "spec.updateStrategy.priorityStrategy: Required value: weight must be valid number in the range 1-100",
        ),
        (
            with(json!({"spec": {"progressDeadlineSeconds": 10, "minReadySeconds": 10}})),
            "spec.progressDeadlineSeconds: Invalid value: 10: must be greater than minReadySeconds",
        ),
    ];
    for (new, expected) in cases {
        assert_eq!(messages(new, None), expected);
    }
    let (old, new) = image_update("image2", "Always", "image", "IfNotPresent", "InPlaceOnly");
    assert_eq!(
        messages(new, Some(old)),
        "spec: Forbidden: only allowed to update images in spec for InPlaceOnly, but found replace /containers/0/imagePullPolicy"
    );
}

#[test]
fn default_context_knows_no_pods() {
    let set = decode(with(
        json!({"spec": {"scaleStrategy": {"podsToDelete": ["p0"]}}}),
    ));
    let errors = validate_cloneset(&set, None, &CloneSetContext::default());
    assert_eq!(
        aggregate(&errors),
        "spec.scaleStrategy.podsToDelete: Invalid value: \"p0\": find pod p0 failed: pods \"p0\" not found"
    );
}

#[test]
fn pod_facts_from_a_pod() {
    let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": "p0", "deletionTimestamp": "2024-01-02T03:04:05Z", "ownerReferences": [
                {"apiVersion": "v1", "kind": "X", "name": "x", "uid": "not-controller"},
                {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "cs", "uid": UID, "controller": true}
            ]}
        }))
        .unwrap();
    assert_eq!(
        PodFacts::of(&pod),
        PodFacts {
            controller_uid: Some(UID.into()),
            terminating: true
        }
    );
    assert_eq!(PodFacts::of(&Pod::default()), PodFacts::default());
}

#[test]
fn deletion_protection_and_warnings() {
    let protected = decode(with(
        json!({"metadata": {"labels": {"policy.kruise.io/delete-protection": "Cascading"}}, "spec": {"replicas": 2}}),
    ));
    assert_eq!(
        cloneset_deletion_protection(&protected).as_deref(),
        Some(
            "forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Cascading and replicas 2>0"
        )
    );
    assert_eq!(cloneset_deletion_protection(&decode(base())), None);

    assert!(
        cloneset_warnings(&decode(with(
            json!({"spec": {"updateStrategy": {"partition": 0}}})
        )))
        .is_empty()
    );
    let risky = decode(with(json!({"spec": {"replicas": 4, "updateStrategy": {
        "partition": "100%", "maxUnavailable": "100%", "paused": true,
        "priorityStrategy": {"orderPriority": [{"orderedKey": "k"}]},
        "scatterStrategy": [{"key": "zone", "value": "a"}]
    }}})));
    let warnings = cloneset_warnings(&risky);
    assert_eq!(warnings.len(), 4, "{warnings:#?}");
    assert!(warnings[0].starts_with("spec.updateStrategy.partition 100% keeps all 4 pods"));
    assert!(warnings[1].starts_with("spec.updateStrategy.maxUnavailable 100% lets all 4 pods"));
}

#[test]
fn unknown_replicas_defaults_to_one() {
    // With replicas unset (defaulted to 1), maxUnavailable 0 and no surge cannot update anything.
    let paths = paths(
        with(json!({"spec": {"replicas": null, "updateStrategy": {"maxUnavailable": 0}}})),
        None,
    );
    assert_eq!(paths, ["spec.updateStrategy.maxUnavailable"]);
}
