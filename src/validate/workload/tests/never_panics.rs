use proptest::prelude::*;
use serde_json::{Value, json};

use crate::api::cloneset::CloneSet;
use crate::api::daemonset::DaemonSet;
use crate::api::statefulset::{StatefulSet, v1alpha1};
use crate::validate::cloneset::{
    CloneSetContext, PodFacts, cloneset_deletion_protection, cloneset_warnings, validate_cloneset,
};
use crate::validate::daemonset::{daemonset_warnings, validate_daemonset};
use crate::validate::statefulset::{
    statefulset_deletion_protection, statefulset_warnings, validate_statefulset,
    validate_statefulset_v1alpha1,
};

/// Strings that mean something to some rule, and some that mean nothing.
fn word() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!("")),
        Just(json!("Always")),
        Just(json!("ReCreate")),
        Just(json!("InPlaceOnly")),
        Just(json!("InPlaceIfPossible")),
        Just(json!("RollingUpdate")),
        Just(json!("OnDelete")),
        Just(json!("Parallel")),
        Just(json!("Surging")),
        Just(json!("Retain")),
        Just(json!("p0")),
        "[a-z0-9./-]{0,12}".prop_map(Value::from),
        "\\PC{0,6}".prop_map(Value::from),
    ]
}

fn int_or_string() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i32>().prop_map(Value::from),
        (-3i32..3).prop_map(Value::from),
        "-?[0-9]{0,12}(\\.[0-9]{0,3})?%?".prop_map(Value::from),
        Just(json!("1e400%")),
        Just(json!("NaN%")),
        Just(json!("inf%")),
        Just(json!("5-2")),
        Just(json!("99999999999999999999%")),
        word(),
    ]
}

fn maybe<S: Strategy<Value = Value>>(strategy: S) -> impl Strategy<Value = Value> {
    prop_oneof![Just(Value::Null), strategy]
}

fn labels() -> impl Strategy<Value = Value> {
    prop::collection::btree_map(
        prop_oneof![Just("a".to_string()), "[a-z/ ]{0,4}"],
        "[a-zA-Z0-9! ]{0,4}",
        0..3,
    )
    .prop_map(|m| json!(m))
}

fn selector() -> impl Strategy<Value = Value> {
    maybe(
            (labels(), prop::collection::vec((word(), word(), prop::collection::vec(word(), 0..3)), 0..2)).prop_map(
                |(match_labels, expressions)| {
                    let expressions: Vec<Value> = expressions
                        .into_iter()
                        .map(|(key, operator, values)| json!({"key": key, "operator": operator, "values": values}))
                        .collect();
                    json!({"matchLabels": match_labels, "matchExpressions": expressions})
                },
            ),
        )
}

fn template() -> impl Strategy<Value = Value> {
    (
            labels(),
            prop::collection::vec((word(), maybe(word()), maybe(word())), 0..3),
            maybe(word()),
            maybe(any::<i64>().prop_map(Value::from)),
            prop::collection::vec(word(), 0..2),
        )
            .prop_map(|(labels, containers, restart_policy, deadline, gates)| {
                let containers: Vec<Value> = containers
                    .into_iter()
                    .map(|(name, image, pull)| json!({"name": name, "image": image, "imagePullPolicy": pull, "terminationMessagePolicy": "File"}))
                    .collect();
                let gates: Vec<Value> = gates.into_iter().map(|g| json!({"conditionType": g})).collect();
                json!({
                    "metadata": {"labels": labels},
                    "spec": {"containers": containers, "restartPolicy": restart_policy, "activeDeadlineSeconds": deadline,
                             "dnsPolicy": "ClusterFirst", "readinessGates": gates}
                })
            })
}

fn priority() -> impl Strategy<Value = Value> {
    maybe(
        (
            prop::collection::vec((any::<i32>(), labels()), 0..2),
            prop::collection::vec(word(), 0..2),
        )
            .prop_map(|(weights, orders)| {
                let weights: Vec<Value> = weights
                    .into_iter()
                    .map(|(w, l)| json!({"weight": w, "matchSelector": {"matchLabels": l}}))
                    .collect();
                let orders: Vec<Value> = orders
                    .into_iter()
                    .map(|o| json!({"orderedKey": o}))
                    .collect();
                json!({"weightPriority": weights, "orderPriority": orders})
            }),
    )
}

fn metadata() -> impl Strategy<Value = Value> {
    (word(), maybe(word()), maybe(word()), labels()).prop_map(|(name, namespace, version, labels)| {
            json!({"name": name, "namespace": namespace, "uid": "u", "resourceVersion": version, "labels": labels})
        })
}

fn cloneset() -> impl Strategy<Value = Value> {
    (
            metadata(),
            maybe(any::<i32>().prop_map(Value::from)),
            selector(),
            template(),
            prop::collection::vec(word(), 0..3),
            (word(), maybe(int_or_string()), maybe(int_or_string()), maybe(int_or_string())),
            priority(),
            prop::collection::vec((word(), word()), 0..3),
            (maybe(any::<i32>().prop_map(Value::from)), maybe(any::<i32>().prop_map(Value::from))),
        )
            .prop_map(|(metadata, replicas, selector, template, pods, (kind, partition, unavailable, surge), priority, scatter, (deadline, ready))| {
                let scatter: Vec<Value> = scatter.into_iter().map(|(k, v)| json!({"key": k, "value": v})).collect();
                json!({
                    "metadata": metadata,
                    "spec": {
                        "replicas": replicas, "selector": selector, "template": template,
                        "volumeClaimTemplates": [{"metadata": {"name": "data"}}],
                        "scaleStrategy": {"podsToDelete": pods},
                        "updateStrategy": {"type": kind, "partition": partition, "maxUnavailable": unavailable, "maxSurge": surge,
                                           "priorityStrategy": priority, "scatterStrategy": scatter},
                        "progressDeadlineSeconds": deadline, "minReadySeconds": ready
                    }
                })
            })
}

fn statefulset() -> impl Strategy<Value = Value> {
    (
            metadata(),
            maybe(any::<i32>().prop_map(Value::from)),
            selector(),
            template(),
            (word(), word(), maybe(word())),
            proptest::option::of((maybe(any::<i32>().prop_map(Value::from)), maybe(int_or_string()), maybe(word()), maybe(any::<i32>().prop_map(Value::from)), priority())),
            prop::collection::vec(int_or_string(), 0..3),
            (maybe(word()), maybe(word()), maybe(int_or_string())),
        )
            .prop_map(|(metadata, replicas, selector, template, (policy, kind, service), rolling, reserve, (deleted, scaled, scale))| {
                let rolling = rolling.map(|(partition, unavailable, update_policy, ready, priority)| {
                    json!({"partition": partition, "maxUnavailable": unavailable, "podUpdatePolicy": update_policy,
                           "minReadySeconds": ready, "unorderedUpdate": {"priorityStrategy": priority}})
                });
                json!({
                    "metadata": metadata,
                    "spec": {
                        "replicas": replicas, "selector": selector, "template": template,
                        "podManagementPolicy": policy, "serviceName": service,
                        "updateStrategy": {"type": kind, "rollingUpdate": rolling},
                        "reserveOrdinals": reserve,
                        "persistentVolumeClaimRetentionPolicy": {"whenDeleted": deleted, "whenScaled": scaled},
                        "scaleStrategy": {"maxUnavailable": scale}
                    }
                })
            })
}

fn daemonset() -> impl Strategy<Value = Value> {
    (
            metadata(),
            selector(),
            template(),
            word(),
            proptest::option::of((maybe(word()), maybe(int_or_string()), maybe(int_or_string()), maybe(int_or_string()))),
            (maybe(any::<i32>().prop_map(Value::from)), maybe(any::<i32>().prop_map(Value::from)), any::<bool>()),
        )
            .prop_map(|(metadata, selector, template, kind, rolling, (ready, history, hook))| {
                let rolling = rolling.map(|(rolling_type, unavailable, surge, partition)| {
                    json!({"rollingUpdateType": rolling_type, "maxUnavailable": unavailable, "maxSurge": surge, "partition": partition})
                });
                let lifecycle = if hook { json!({"inPlaceUpdate": {}}) } else { Value::Null };
                json!({
                    "metadata": metadata,
                    "spec": {
                        "selector": selector, "template": template,
                        "updateStrategy": {"type": kind, "rollingUpdate": rolling},
                        "minReadySeconds": ready, "revisionHistoryLimit": history, "lifecycle": lifecycle
                    }
                })
            })
}

/// The generators only build objects of the right shape: decoding must succeed, so that
/// every case reaches the validator.
fn decode<T: serde::de::DeserializeOwned>(value: Value) -> Option<T> {
    Some(serde_json::from_value(value).expect("generated objects decode"))
}

proptest! {
    #[test]
    fn cloneset_validation_never_panics(new in cloneset(), old in cloneset()) {
        let pods = std::collections::BTreeMap::from([("p0".to_string(), PodFacts::default())]);
        let ctx = CloneSetContext::new(&pods);
        if let Some(new) = decode::<CloneSet>(new) {
            let _ = validate_cloneset(&new, None, &ctx);
            let _ = cloneset_warnings(&new);
            let _ = cloneset_deletion_protection(&new);
            if let Some(old) = decode::<CloneSet>(old) {
                let _ = validate_cloneset(&new, Some(&old), &ctx);
            }
        }
    }

    #[test]
    fn statefulset_validation_never_panics(new in statefulset(), old in statefulset()) {
        if let Some(new) = decode::<StatefulSet>(new.clone()) {
            let _ = validate_statefulset(&new, None);
            let _ = statefulset_warnings(&new);
            let _ = statefulset_deletion_protection(&new);
            if let Some(old) = decode::<StatefulSet>(old.clone()) {
                let _ = validate_statefulset(&new, Some(&old));
            }
        }
        if let (Some(new), Some(old)) = (decode::<v1alpha1::StatefulSet>(new), decode::<v1alpha1::StatefulSet>(old)) {
            let _ = validate_statefulset_v1alpha1(&new, Some(&old));
        }
    }

    #[test]
    fn daemonset_validation_never_panics(new in daemonset(), old in daemonset()) {
        if let Some(new) = decode::<DaemonSet>(new) {
            let _ = validate_daemonset(&new, None);
            let _ = daemonset_warnings(&new);
            if let Some(old) = decode::<DaemonSet>(old) {
                let _ = validate_daemonset(&new, Some(&old));
            }
        }
    }
}
