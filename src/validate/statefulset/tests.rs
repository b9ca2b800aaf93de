use super::*;
use crate::validate::field::aggregate;
use serde_json::{Value, json};

/// §5.8 base StatefulSet (template defaults filled in as the defaulting webhook would).
fn base() -> Value {
    json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "StatefulSet",
        "metadata": {"name": "abc", "namespace": "default", "uid": "u-1", "resourceVersion": "2"},
        "spec": {
            "podManagementPolicy": "OrderedReady",
            "selector": {"matchLabels": {"a": "b"}},
            "template": {
                "metadata": {"labels": {"a": "b"}},
                "spec": {
                    "restartPolicy": "Always",
                    "dnsPolicy": "ClusterFirst",
                    "containers": [{"name": "abc", "image": "image", "imagePullPolicy": "IfNotPresent", "terminationMessagePolicy": "File"}]
                }
            },
            "updateStrategy": {"type": "RollingUpdate"}
        }
    })
}

fn with(patch: Value) -> Value {
    let mut value = base();
    json_patch::merge(&mut value, &patch);
    value
}

/// A complete, valid rolling update with these overrides.
fn rolling(overrides: Value) -> Value {
    let mut rolling = json!({"partition": 0, "maxUnavailable": 1, "podUpdatePolicy": "ReCreate", "minReadySeconds": 0});
    json_patch::merge(&mut rolling, &overrides);
    json!({"spec": {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": rolling}}})
}

fn decode(value: Value) -> StatefulSet {
    serde_json::from_value(value).unwrap()
}

fn errors(new: Value, old: Option<Value>) -> Vec<FieldError> {
    let old = old.map(decode);
    validate_statefulset(&decode(new), old.as_ref())
}

fn run(cases: Vec<(&str, Value, Option<Value>, &[&str])>) {
    for (name, new, old, expect) in cases {
        let found = errors(new, old);
        let mut paths: Vec<String> = found.iter().map(|e| e.path.clone()).collect();
        paths.sort();
        paths.dedup();
        let mut expect: Vec<String> = expect.iter().map(|p| p.to_string()).collect();
        expect.sort();
        expect.dedup();
        assert_eq!(paths, expect, "{name}: {}", aggregate(&found));
    }
}

#[test]
fn section_5_8_cases() {
    let restart =
        |policy: &str| with(json!({"spec": {"template": {"spec": {"restartPolicy": policy}}}}));
    let on_delete = |rolling: Value| {
        with(json!({"spec": {"updateStrategy": {"type": "OnDelete", "rollingUpdate": rolling}}}))
    };
    let partition_and_ready =
        |ready: i32| with(rolling(json!({"partition": -1, "minReadySeconds": ready})));
    run(vec![
        ("AS-1 OrderedReady", base(), None, &[]),
        (
            "AS-1 Parallel",
            with(json!({"spec": {"podManagementPolicy": "Parallel"}})),
            None,
            &[],
        ),
        (
            "AS-1 OnDelete",
            with(json!({"spec": {"updateStrategy": {"type": "OnDelete"}}})),
            None,
            &[],
        ),
        (
            "AS-2 rolling update",
            {
                let mut value = with(rolling(json!({"partition": 2, "minReadySeconds": 10})));
                value["spec"]["replicas"] = json!(3);
                value
            },
            None,
            &[],
        ),
        (
            "AS-3 no name",
            with(json!({"metadata": {"name": ""}})),
            None,
            &["metadata.name"],
        ),
        (
            "AS-4 no namespace",
            with(json!({"metadata": {"namespace": null}})),
            None,
            &["metadata.namespace"],
        ),
        (
            "AS-5 no selector",
            with(json!({"spec": {"selector": null}})),
            None,
            &["spec.selector", "spec.template.metadata.labels"],
        ),
        (
            "AS-6 selector does not match",
            with(json!({"spec": {"selector": {"matchLabels": {"a": null, "foo": "bar"}}}})),
            None,
            &["spec.template.metadata.labels"],
        ),
        (
            "AS-7 no template",
            with(json!({"spec": {"template": null}})),
            None,
            &["spec.template.metadata.labels"],
        ),
        (
            "AS-8 negative replicas, no template",
            with(json!({"spec": {"replicas": -1, "template": null}})),
            None,
            &["spec.replicas", "spec.template.metadata.labels"],
        ),
        (
            "AS-9 bad label key",
            with(json!({"metadata": {"labels": {"bad key": "v"}}})),
            None,
            &["metadata.labels"],
        ),
        (
            "AS-9 bad annotation key",
            with(json!({"metadata": {"annotations": {"bad key": "v"}}})),
            None,
            &["metadata.annotations"],
        ),
        (
            "AS-10 OnFailure",
            restart("OnFailure"),
            None,
            &["spec.template.spec.restartPolicy"],
        ),
        (
            "AS-10 Never",
            restart("Never"),
            None,
            &["spec.template.spec.restartPolicy"],
        ),
        (
            "AS-11 type foo",
            with(json!({"spec": {"updateStrategy": {"type": "foo"}}})),
            None,
            &["spec.updateStrategy"],
        ),
        (
            "AS-11 type empty",
            with(json!({"spec": {"updateStrategy": {"type": ""}}})),
            None,
            &["spec.updateStrategy"],
        ),
        (
            "AS-12 OnDelete partition",
            on_delete(json!({"partition": 1})),
            None,
            &["spec.updateStrategy.rollingUpdate"],
        ),
        (
            "AS-12 OnDelete maxUnavailable",
            on_delete(json!({"maxUnavailable": "120%"})),
            None,
            &["spec.updateStrategy.rollingUpdate"],
        ),
        (
            "AS-12 OnDelete unknown policy",
            on_delete(json!({"podUpdatePolicy": "Unknown"})),
            None,
            &["spec.updateStrategy.rollingUpdate"],
        ),
        (
            "AS-12 OnDelete in place",
            on_delete(json!({"podUpdatePolicy": "InPlaceIfPossible"})),
            None,
            &["spec.updateStrategy.rollingUpdate"],
        ),
        (
            "AS-13 negative partition",
            with(rolling(json!({"partition": -1}))),
            None,
            &["spec.updateStrategy.rollingUpdate.partition"],
        ),
        (
            "AS-13 negative partition and minReadySeconds",
            partition_and_ready(-1),
            None,
            &[
                "spec.updateStrategy.rollingUpdate.partition",
                "spec.updateStrategy.rollingUpdate.minReadySeconds",
            ],
        ),
        (
            "AS-13 negative partition, minReadySeconds 301",
            partition_and_ready(301),
            None,
            &[
                "spec.updateStrategy.rollingUpdate.partition",
                "spec.updateStrategy.rollingUpdate.minReadySeconds",
            ],
        ),
        (
            "AS-14 no policy",
            with(json!({"spec": {"podManagementPolicy": ""}})),
            None,
            &["spec.podManagementPolicy"],
        ),
        (
            "AS-14 policy foo",
            with(json!({"spec": {"podManagementPolicy": "foo"}})),
            None,
            &["spec.podManagementPolicy"],
        ),
        (
            "AS-15 several errors",
            with(json!({"spec": {
                "podManagementPolicy": "foo",
                "template": {"metadata": {"labels": {"a": null, "foo": "bar"}}, "spec": {"restartPolicy": "OnFailure", "activeDeadlineSeconds": 60}}
            }})),
            None,
            &[
                "spec.podManagementPolicy",
                "spec.template.metadata.labels",
                "spec.template.spec.activeDeadlineSeconds",
                "spec.template.spec.restartPolicy",
            ],
        ),
    ]);
}

/// AS-16 / AS-17: the old object of the update cases.
fn updatable() -> Value {
    with(json!({"spec": {
        "replicas": 5,
        "podManagementPolicy": "Parallel",
        "serviceName": "foo",
        "revisionHistoryLimit": 5,
        "reserveOrdinals": [1],
        "lifecycle": {"preDelete": {"finalizersHandler": ["foo/bar"]}},
        "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {"resources": {"requests": {"storage": "30Gi"}}}}],
        "scaleStrategy": {"maxUnavailable": 1},
        "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"},
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 5, "maxUnavailable": 1, "podUpdatePolicy": "ReCreate", "minReadySeconds": 0}},
        "template": {"spec": {"containers": [{"name": "abc", "image": "image:v1", "imagePullPolicy": "IfNotPresent", "terminationMessagePolicy": "File"}]}}
    }}))
}

fn updated(patch: Value) -> Value {
    let mut new = updatable();
    json_patch::merge(&mut new, &patch);
    new
}

#[test]
fn section_5_8_update_cases() {
    let mut old = updatable();
    old["metadata"]["resourceVersion"] = json!("1");
    run(vec![
        (
            "AS-16 every mutable field changes",
            updated(json!({"spec": {
                "replicas": 10,
                "revisionHistoryLimit": 10,
                "reserveOrdinals": [2],
                "lifecycle": {"preDelete": {"finalizersHandler": ["foo/hello"]}},
                "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {"resources": {"requests": {"storage": "60Gi"}}}}],
                "scaleStrategy": {"maxUnavailable": 2},
                "updateStrategy": {"rollingUpdate": {"partition": 10}},
                "template": {"spec": {"containers": [{"name": "abc", "image": "image:v2", "imagePullPolicy": "IfNotPresent", "terminationMessagePolicy": "File"}]}}
            }})),
            Some(old.clone()),
            &[],
        ),
        (
            "AS-17 selector change",
            updated(json!({"spec": {
                "selector": {"matchLabels": {"c": "d"}},
                "template": {"metadata": {"labels": {"c": "d"}}}
            }})),
            Some(old.clone()),
            &["spec"],
        ),
        (
            "AS-17 serviceName change",
            updated(json!({"spec": {"serviceName": "bar"}})),
            Some(old.clone()),
            &["spec"],
        ),
        (
            "AS-17 podManagementPolicy change",
            updated(
                json!({"spec": {"podManagementPolicy": "OrderedReady", "scaleStrategy": null, "updateStrategy": {"rollingUpdate": {"maxUnavailable": 1}}}}),
            ),
            Some(old.clone()),
            &["spec"],
        ),
        (
            "9 ordinals and volumeClaimUpdateStrategy may change",
            updated(
                json!({"spec": {"ordinals": {"start": 2}, "volumeClaimUpdateStrategy": {"type": "OnDelete"}}}),
            ),
            Some(old.clone()),
            &[],
        ),
        (
            "10 retention policy on update",
            updated(
                json!({"spec": {"persistentVolumeClaimRetentionPolicy": {"whenScaled": "Keep"}}}),
            ),
            Some(old.clone()),
            &["spec.persistentVolumeClaimRetentionPolicy.whenScaled"],
        ),
        (
            "18 renamed",
            updated(json!({"metadata": {"name": "other"}})),
            Some(old.clone()),
            &["metadata.name"],
        ),
    ]);
}

#[test]
fn section_5_8_reserve_ordinals_retention_and_max_unavailable() {
    let ordinals = |value: Value| with(json!({"spec": {"reserveOrdinals": value}}));
    let retention =
        |value: Value| with(json!({"spec": {"persistentVolumeClaimRetentionPolicy": value}}));
    let parallel = |max_unavailable: Value| {
        let mut value = with(rolling(json!({"maxUnavailable": max_unavailable})));
        value["spec"]["podManagementPolicy"] = json!("Parallel");
        value
    };
    run(vec![
        ("AS-18 none", ordinals(json!([])), None, &[]),
        ("AS-18 range", ordinals(json!(["1-2"])), None, &[]),
        (
            "AS-18 bare number string",
            ordinals(json!(["12"])),
            None,
            &["spec"],
        ),
        ("AS-18 int", ordinals(json!([1])), None, &[]),
        ("AS-18 negative", ordinals(json!([-1])), None, &["spec"]),
        (
            "2 reversed range",
            ordinals(json!(["5-2"])),
            None,
            &["spec"],
        ),
        (
            "AS-19 Delete/Retain",
            retention(json!({"whenDeleted": "Delete", "whenScaled": "Retain"})),
            None,
            &[],
        ),
        (
            "AS-19 whenDeleted empty",
            retention(json!({"whenDeleted": "", "whenScaled": "Retain"})),
            None,
            &["spec.persistentVolumeClaimRetentionPolicy.whenDeleted"],
        ),
        (
            "AS-19 whenScaled Foo",
            retention(json!({"whenDeleted": "Retain", "whenScaled": "Foo"})),
            None,
            &["spec.persistentVolumeClaimRetentionPolicy.whenScaled"],
        ),
        (
            "AS-20 in place without readiness gate",
            with(rolling(json!({"podUpdatePolicy": "InPlaceIfPossible"}))),
            None,
            &["spec.template.spec.readinessGates"],
        ),
        (
            "5 in place with readiness gate",
            {
                let mut value = with(rolling(json!({"podUpdatePolicy": "InPlaceOnly"})));
                value["spec"]["template"]["spec"]["readinessGates"] =
                    json!([{"conditionType": "InPlaceUpdateReady"}]);
                value
            },
            None,
            &[],
        ),
        ("AS-20 Parallel 50%", parallel(json!("50%")), None, &[]),
        ("6 Parallel 1%", parallel(json!("1%")), None, &[]),
        (
            "AS-20 OrderedReady maxUnavailable 2",
            with(rolling(json!({"maxUnavailable": 2}))),
            None,
            &["spec.updateStrategy.rollingUpdate.maxUnavailable"],
        ),
        (
            "AS-20 maxUnavailable 0",
            parallel(json!(0)),
            None,
            &["spec.updateStrategy.rollingUpdate.maxUnavailable"],
        ),
        (
            "6 maxUnavailable 0%",
            parallel(json!("0%")),
            None,
            &["spec.updateStrategy.rollingUpdate.maxUnavailable"],
        ),
        (
            "5 missing maxUnavailable and policy",
            with(rolling(
                json!({"maxUnavailable": null, "podUpdatePolicy": null}),
            )),
            None,
            &[
                "spec.updateStrategy.rollingUpdate.maxUnavailable",
                "spec.updateStrategy.rollingUpdate.podUpdatePolicy",
            ],
        ),
        (
            "5 unknown pod update policy",
            with(rolling(json!({"podUpdatePolicy": "Replace"}))),
            None,
            &["spec.updateStrategy.rollingUpdate.podUpdatePolicy"],
        ),
        (
            "5 unordered update needs Parallel",
            with(rolling(
                json!({"unorderedUpdate": {"priorityStrategy": {"orderPriority": [{"orderedKey": ""}]}}}),
            )),
            None,
            &[
                "spec.updateStrategy.rollingUpdate.unorderedUpdate",
                "spec.updateStrategy.rollingUpdate.unorderedUpdate.priorityStrategy",
            ],
        ),
        (
            "3 scale maxUnavailable needs Parallel",
            with(json!({"spec": {"scaleStrategy": {"maxUnavailable": 3}}})),
            None,
            &["spec.scaleStrategy.maxUnavailable"],
        ),
        (
            "8 empty selector",
            with(json!({"spec": {"selector": {"matchLabels": null}}})),
            None,
            &["spec.selector"],
        ),
        (
            "8 pod spec is not validated",
            with(json!({"spec": {"template": {"spec": {"containers": null, "dnsPolicy": null}}}})),
            None,
            &[],
        ),
    ]);
}

#[test]
fn in_place_only_updates() {
    let in_place = |image: &str, pull: &str| {
        let mut value = with(rolling(json!({"podUpdatePolicy": "InPlaceOnly"})));
        value["spec"]["template"]["spec"]["readinessGates"] =
            json!([{"conditionType": "InPlaceUpdateReady"}]);
        value["spec"]["template"]["spec"]["containers"][0]["image"] = json!(image);
        value["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] = json!(pull);
        value
    };
    let mut old = in_place("image:v1", "IfNotPresent");
    old["metadata"]["resourceVersion"] = json!("1");
    run(vec![
        (
            "11 image change",
            in_place("image:v2", "IfNotPresent"),
            Some(old.clone()),
            &[],
        ),
        // The unanchored regex lets imagePullPolicy through, as upstream.
        (
            "11 imagePullPolicy slips through",
            in_place("image:v2", "Always"),
            Some(old.clone()),
            &[],
        ),
        (
            "11 env change",
            {
                let mut value = in_place("image:v1", "IfNotPresent");
                value["spec"]["template"]["spec"]["containers"][0]["env"] =
                    json!([{"name": "A", "value": "1"}]);
                value
            },
            Some(old.clone()),
            &["spec.template.spec"],
        ),
    ]);
    let mut env = in_place("image:v1", "IfNotPresent");
    env["spec"]["template"]["spec"]["containers"][0]["env"] = json!([{"name": "A", "value": "1"}]);
    assert_eq!(
        aggregate(&errors(env, Some(old.clone()))),
        "spec.template.spec: Forbidden: invalid template modified with InPlaceOnly strategy: add /containers/0/env, currently only image update is allowed for InPlaceOnly"
    );
    // Other errors first: the in-place check only runs on an otherwise valid update.
    let mut both = in_place("image:v1", "IfNotPresent");
    both["spec"]["template"]["spec"]["containers"][0]["env"] = json!([{"name": "A", "value": "1"}]);
    both["spec"]["replicas"] = json!(-1);
    assert_eq!(
        aggregate(&errors(both, Some(old))),
        "spec.replicas: Invalid value: -1: must be greater than or equal to 0"
    );
}

#[test]
fn messages_match_openkruise() {
    let cases = [
        (
            with(
                json!({"spec": {"persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Keep", "whenScaled": "Retain"}}}),
            ),
            "spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: \"Keep\": supported values: \"Retain\", \"Delete\"",
        ),
        (
            with(json!({"spec": {"reserveOrdinals": [-1]}})),
            "spec: Invalid value: []intstr.IntOrString{intstr.IntOrString{Type:0, IntVal:-1, StrVal:\"\"}}: 0 th reserve ordinal is negative: -1",
        ),
        (
            with(json!({"spec": {"podManagementPolicy": "foo"}})),
            "spec.podManagementPolicy: Invalid value: \"foo\": must be 'OrderedReady' or 'Parallel'",
        ),
        (
            with(rolling(json!({"maxUnavailable": 2}))),
            "spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:0, IntVal:2, StrVal:\"\"}: can only work with Parallel PodManagementPolicyType",
        ),
        (
            with(rolling(json!({"minReadySeconds": 301}))),
            "spec.updateStrategy.rollingUpdate.minReadySeconds: Invalid value: 301: must be no more than 300 seconds",
        ),
        (
            with(rolling(json!({"podUpdatePolicy": "InPlaceIfPossible"}))),
            "spec.template.spec.readinessGates: Invalid value: []v1.PodReadinessGate(nil): must contains InPlaceUpdateReady when podUpdatePolicy is InPlaceIfPossible",
        ),
        (
            with(json!({"spec": {"updateStrategy": {"type": "foo"}}})),
            "spec.updateStrategy: Invalid value: v1beta1.StatefulSetUpdateStrategy{Type:\"foo\", RollingUpdate:(*v1beta1.RollingUpdateStatefulSetStrategy)(nil)}: must be 'RollingUpdate' or 'OnDelete'",
        ),
        (
            with(json!({"spec": {"template": {"spec": {"activeDeadlineSeconds": 5}}}})),
            "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in StatefulSet is not Supported",
        ),
    ];
    for (new, expected) in cases {
        assert_eq!(aggregate(&errors(new, None)), expected);
    }
    let zero = {
        let mut value = with(rolling(json!({"maxUnavailable": "0%"})));
        value["spec"]["podManagementPolicy"] = json!("Parallel");
        value
    };
    assert_eq!(
        aggregate(&errors(zero, None)),
        "spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: 0: should not be less than 1"
    );
    let ranges: Vec<String> = errors(with(json!({"spec": {"reserveOrdinals": [1, "12"]}})), None)
        .iter()
        .map(|e| e.detail.clone())
        .collect();
    assert_eq!(
        ranges,
        [
            "1 th reserve ordinal is not a valid range: 12",
            "1 th reserve ordinal is invalid: 12, err = invalid range \"12\": want start-end",
        ]
    );
}

#[test]
fn v1alpha1_objects_are_validated_as_v1beta1() {
    let mut alpha = base();
    alpha["apiVersion"] = json!("apps.kruise.io/v1alpha1");
    let decode_alpha =
        |value: Value| serde_json::from_value::<v1alpha1::StatefulSet>(value).unwrap();
    assert!(validate_statefulset_v1alpha1(&decode_alpha(alpha.clone()), None).is_empty());
    let mut bad = alpha.clone();
    bad["spec"]["podManagementPolicy"] = json!("foo");
    bad["spec"]["serviceName"] = json!("other");
    let mut old = alpha;
    old["metadata"]["resourceVersion"] = json!("1");
    let found = validate_statefulset_v1alpha1(&decode_alpha(bad), Some(&decode_alpha(old)));
    let paths: Vec<&str> = found.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(paths, ["spec.podManagementPolicy", "spec"]);
}

#[test]
fn deletion_protection_and_warnings() {
    let protected = decode(with(
        json!({"metadata": {"labels": {"policy.kruise.io/delete-protection": "Always"}}}),
    ));
    assert_eq!(
        statefulset_deletion_protection(&protected).as_deref(),
        Some(
            "forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Always"
        )
    );
    assert_eq!(statefulset_deletion_protection(&decode(base())), None);
    assert!(statefulset_warnings(&decode(with(rolling(json!({}))))).is_empty());
    let mut risky = with(rolling(json!({"partition": 3, "paused": true})));
    risky["spec"]["replicas"] = json!(3);
    risky["spec"]["persistentVolumeClaimRetentionPolicy"] =
        json!({"whenDeleted": "Delete", "whenScaled": "Delete"});
    let warnings = statefulset_warnings(&decode(risky));
    assert_eq!(warnings.len(), 4, "{warnings:#?}");
    assert!(
        warnings[0].starts_with("spec.updateStrategy.rollingUpdate.partition 3 covers all 3 pods")
    );
}
