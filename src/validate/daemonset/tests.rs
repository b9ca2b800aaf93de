use super::*;
use crate::validate::field::aggregate;
use serde_json::{Value, json};

fn base() -> Value {
    json!({
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "DaemonSet",
        "metadata": {"name": "ds-1", "namespace": "default", "uid": "u-1", "resourceVersion": "2"},
        "spec": {
            "selector": {"matchLabels": {"a": "b"}},
            "template": {
                "metadata": {"labels": {"a": "b"}},
                "spec": {
                    "restartPolicy": "Always",
                    "dnsPolicy": "ClusterFirst",
                    "containers": [{"name": "abc", "image": "image", "imagePullPolicy": "IfNotPresent", "terminationMessagePolicy": "File"}]
                }
            },
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}},
            "burstReplicas": 250,
            "revisionHistoryLimit": 10
        }
    })
}

fn with(patch: Value) -> Value {
    let mut value = base();
    json_patch::merge(&mut value, &patch);
    value
}

/// `base` with a rolling update holding exactly `fields` (no default maxUnavailable).
fn rolling(fields: Value) -> Value {
    let mut value =
        with(json!({"spec": {"updateStrategy": {"rollingUpdate": {"maxUnavailable": null}}}}));
    json_patch::merge(
        &mut value["spec"]["updateStrategy"]["rollingUpdate"],
        &fields,
    );
    value
}

fn decode(value: Value) -> DaemonSet {
    serde_json::from_value(value).unwrap()
}

fn errors(new: Value, old: Option<Value>) -> Vec<FieldError> {
    let old = old.map(decode);
    validate_daemonset(&decode(new), old.as_ref())
}

fn run(cases: Vec<(&str, Value, Option<Value>, &[&str])>) {
    for (name, new, old, expect) in cases {
        let found = errors(new, old);
        let mut paths: Vec<String> = found.iter().map(|e| e.path.clone()).collect();
        paths.sort();
        paths.dedup();
        let mut expect: Vec<String> = expect.iter().map(|p| p.to_string()).collect();
        expect.sort();
        assert_eq!(paths, expect, "{name}: {}", aggregate(&found));
    }
}

#[test]
fn spec_rules() {
    run(vec![
        ("base", base(), None, &[]),
        // 1 selector
        (
            "1 selector mismatch",
            with(json!({"spec": {"selector": {"matchLabels": {"a": "c"}}}})),
            None,
            &["spec.template.metadata.labels"],
        ),
        (
            "1 empty selector",
            with(json!({"spec": {"selector": {"matchLabels": null}}})),
            None,
            &["spec.selector"],
        ),
        (
            "1 no selector",
            with(json!({"spec": {"selector": null}})),
            None,
            &["spec.template.metadata.labels"],
        ),
        (
            "1 invalid selector",
            with(
                json!({"spec": {"selector": {"matchExpressions": [{"key": "a", "operator": "Near"}]}}}),
            ),
            None,
            &["spec.selector.matchExpressions[0].operator"],
        ),
        // 2 template
        (
            "2 restartPolicy unset",
            with(json!({"spec": {"template": {"spec": {"restartPolicy": null}}}})),
            None,
            &["spec.template.spec.restartPolicy"],
        ),
        (
            "2 restartPolicy OnFailure",
            with(json!({"spec": {"template": {"spec": {"restartPolicy": "OnFailure"}}}})),
            None,
            &["spec.template.spec.restartPolicy"],
        ),
        (
            "2 activeDeadlineSeconds",
            with(json!({"spec": {"template": {"spec": {"activeDeadlineSeconds": 10}}}})),
            None,
            &["spec.template.spec.activeDeadlineSeconds"],
        ),
        (
            "2 no containers",
            with(json!({"spec": {"template": {"spec": {"containers": null}}}})),
            None,
            &["spec.template.spec.containers"],
        ),
        (
            "2 minReadySeconds",
            with(json!({"spec": {"minReadySeconds": -1}})),
            None,
            &["spec.minReadySeconds"],
        ),
        (
            "2 revisionHistoryLimit 0",
            with(json!({"spec": {"revisionHistoryLimit": 0}})),
            None,
            &[],
        ),
        (
            "2 revisionHistoryLimit",
            with(json!({"spec": {"revisionHistoryLimit": -1}})),
            None,
            &["spec.revisionHistoryLimit"],
        ),
        // 3 lifecycle
        (
            "3 inPlaceUpdate hook",
            with(
                json!({"spec": {"lifecycle": {"inPlaceUpdate": {"finalizersHandler": ["example.com/x"]}}}}),
            ),
            None,
            &["spec.lifecycle.inPlaceUpdate"],
        ),
        (
            "3 preDelete and preNormal hooks",
            with(
                json!({"spec": {"lifecycle": {"preDelete": {"labelsHandler": {"k": "v"}}, "preNormal": {"finalizersHandler": ["example.com/y"]}}}}),
            ),
            None,
            &[],
        ),
        // 4 type
        (
            "4 OnDelete",
            with(json!({"spec": {"updateStrategy": {"type": "OnDelete", "rollingUpdate": null}}})),
            None,
            &[],
        ),
        (
            "4 RollingUpdate without rollingUpdate",
            with(json!({"spec": {"updateStrategy": {"rollingUpdate": null}}})),
            None,
            &["spec.updateStrategy.rollingUpdate"],
        ),
        (
            "4 unset type",
            with(json!({"spec": {"updateStrategy": {"type": null}}})),
            None,
            &["spec.updateStrategy"],
        ),
        // 5 bounds
        (
            "5 surge only",
            rolling(json!({"maxSurge": "10%"})),
            None,
            &[],
        ),
        (
            "5 both set",
            rolling(json!({"maxUnavailable": 1, "maxSurge": 1})),
            None,
            &["spec.updateStrategy.rollingUpdate.maxSurge"],
        ),
        (
            "5 both zero",
            rolling(json!({"maxUnavailable": "0%", "maxSurge": 0})),
            None,
            &["spec.updateStrategy.rollingUpdate.maxUnavailable"],
        ),
        (
            "5 both unset",
            rolling(json!({})),
            None,
            &["spec.updateStrategy.rollingUpdate.maxUnavailable"],
        ),
        (
            "5 over 100%",
            rolling(json!({"maxUnavailable": "101%"})),
            None,
            &["spec.updateStrategy.rollingUpdate.maxUnavailable"],
        ),
        (
            "5 negative",
            rolling(json!({"maxUnavailable": -1})),
            None,
            &["spec.updateStrategy.rollingUpdate.maxUnavailable"],
        ),
        (
            "5 bare number string",
            rolling(json!({"maxUnavailable": "5"})),
            None,
            &["spec.updateStrategy.rollingUpdate.maxUnavailable"],
        ),
        // 6 rollingUpdateType
        (
            "6 InPlaceIfPossible",
            rolling(json!({"rollingUpdateType": "InPlaceIfPossible", "maxUnavailable": 2})),
            None,
            &[],
        ),
        (
            "6 InPlaceIfPossible with surge",
            rolling(json!({"rollingUpdateType": "InPlaceIfPossible", "maxSurge": 1})),
            None,
            &["spec.updateStrategy.rollingUpdate.maxSurge"],
        ),
        (
            "6 Surging with surge",
            rolling(json!({"rollingUpdateType": "Surging", "maxSurge": 1})),
            None,
            &[],
        ),
        (
            "6 Surging with maxUnavailable",
            rolling(json!({"rollingUpdateType": "Surging", "maxUnavailable": 1})),
            None,
            &["spec.updateStrategy.rollingUpdate.maxUnavailable"],
        ),
        (
            "6 unknown type",
            rolling(json!({"rollingUpdateType": "Fast", "maxUnavailable": 1})),
            None,
            &["spec.updateStrategy.rollingUpdate.rollingUpdate.type"],
        ),
        // 7 partition
        (
            "7 partition 100%",
            rolling(json!({"maxUnavailable": 1, "partition": "100%"})),
            None,
            &[],
        ),
        (
            "7 partition 3",
            rolling(json!({"maxUnavailable": 1, "partition": 3})),
            None,
            &[],
        ),
        (
            "7 partition over 100%",
            rolling(json!({"maxUnavailable": 1, "partition": "150%"})),
            None,
            &["spec.updateStrategy.rollingUpdate.rollingUpdate.partition"],
        ),
        (
            "7 negative partition",
            rolling(json!({"maxUnavailable": 1, "partition": -1})),
            None,
            &["spec.updateStrategy.rollingUpdate.rollingUpdate.partition"],
        ),
        // metadata on create
        (
            "name",
            with(json!({"metadata": {"name": "Bad_Name"}})),
            None,
            &["metadata.name"],
        ),
    ]);
}

#[test]
fn update_rules() {
    let mut old = base();
    old["metadata"]["resourceVersion"] = json!("1");
    run(vec![
        (
            "mutable fields change",
            with(json!({"spec": {
                "burstReplicas": 10, "minReadySeconds": 5, "revisionHistoryLimit": 3,
                "lifecycle": {"preDelete": {"finalizersHandler": ["example.com/z"]}},
                "updateStrategy": {"rollingUpdate": {"maxUnavailable": "20%"}},
                "template": {"spec": {"containers": [{"name": "abc", "image": "image:v2", "imagePullPolicy": "Always", "terminationMessagePolicy": "File"}]}}
            }})),
            Some(old.clone()),
            &[],
        ),
        (
            "selector change",
            with(
                json!({"spec": {"selector": {"matchLabels": {"c": "d"}}, "template": {"metadata": {"labels": {"c": "d"}}}}}),
            ),
            Some(old.clone()),
            &["spec"],
        ),
        (
            "spec rules run on update",
            with(json!({"spec": {"updateStrategy": {"rollingUpdate": {"maxSurge": 1}}}})),
            Some(old.clone()),
            &["spec.updateStrategy.rollingUpdate.maxSurge"],
        ),
        (
            "metadata update rules",
            with(json!({"metadata": {"uid": "u-2"}})),
            Some(old.clone()),
            &["metadata.uid"],
        ),
        (
            "create-only metadata rules are skipped on update",
            with(json!({"metadata": {"generateName": "Bad_"}})),
            Some(old),
            &[],
        ),
    ]);
}

#[test]
fn messages_match_openkruise() {
    let cases = [
        (
            rolling(json!({"maxUnavailable": 1, "maxSurge": 1})),
            "spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:0, IntVal:1, StrVal:\"\"}: may not be set when maxUnavailable is non-zero",
        ),
        (
            rolling(json!({})),
            "spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when maxSurge is 0",
        ),
        (
            rolling(json!({"rollingUpdateType": "Fast", "maxUnavailable": 1})),
            "spec.updateStrategy.rollingUpdate.rollingUpdate.type: Unsupported value: \"Fast\": supported values: \"Standard\", \"Surging\", \"InPlaceIfPossible\"",
        ),
        (
            with(json!({"spec": {"updateStrategy": {"type": "Rolling", "rollingUpdate": null}}})),
            "spec.updateStrategy: Unsupported value: v1alpha1.DaemonSetUpdateStrategy{Type:\"Rolling\", RollingUpdate:(*v1alpha1.RollingUpdateDaemonSet)(nil)}: supported values: \"RollingUpdate\", \"OnDelete\"",
        ),
        (
            with(json!({"spec": {"lifecycle": {"inPlaceUpdate": {}}}})),
            "spec.lifecycle.inPlaceUpdate: Forbidden: inPlaceUpdate hook has not supported yet",
        ),
        (
            with(json!({"spec": {"selector": {"matchLabels": null}}})),
            "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for daemonset",
        ),
        (
            with(json!({"spec": {"template": {"spec": {"restartPolicy": null}}}})),
            "[spec.template.spec.restartPolicy: Required value, spec.template.spec.restartPolicy: Unsupported value: \"\": supported values: \"Always\"]",
        ),
    ];
    for (new, expected) in cases {
        assert_eq!(aggregate(&errors(new, None)), expected);
    }
}

#[test]
fn warnings() {
    assert!(daemonset_warnings(&decode(base())).is_empty());
    let mut host_port_surge = rolling(json!({"maxSurge": 1}));
    host_port_surge["spec"]["template"]["spec"]["containers"][0]["ports"] =
        json!([{"containerPort": 80, "hostPort": 80}]);
    let warnings = daemonset_warnings(&decode(host_port_surge));
    assert_eq!(warnings.len(), 1);
    assert!(warnings[0].contains("HostPort"));
    let risky = rolling(
        json!({"maxUnavailable": "100%", "partition": "100%", "paused": true, "rollingUpdateType": "Surging"}),
    );
    assert_eq!(daemonset_warnings(&decode(risky)).len(), 4);
}
