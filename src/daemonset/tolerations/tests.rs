use super::*;
use crate::daemonset::node::NodeTaint;

fn toleration(key: &str, operator: &str, value: &str, effect: &str) -> Toleration {
    let text = |s: &str| (!s.is_empty()).then(|| s.to_string());
    Toleration {
        key: text(key),
        operator: text(operator),
        value: text(value),
        effect: text(effect),
        toleration_seconds: None,
    }
}

fn taint(key: &str, value: &str, effect: TaintEffect) -> NodeTaint {
    NodeTaint {
        key: key.into(),
        value: value.into(),
        effect,
    }
}

fn keys(spec: &PodSpec) -> Vec<String> {
    spec.tolerations
        .iter()
        .flatten()
        .map(|t| {
            format!(
                "{}:{}:{}",
                t.key.as_deref().unwrap_or(""),
                t.effect.as_deref().unwrap_or(""),
                t.toleration_seconds
                    .map_or(String::new(), |s| s.to_string())
            )
        })
        .collect()
}

#[test]
fn the_six_defaults_in_order_and_network_unavailable_with_host_network() {
    let mut spec = PodSpec::default();
    add_default_tolerations(&mut spec);
    assert_eq!(
        keys(&spec),
        [
            "node.kubernetes.io/not-ready:NoExecute:",
            "node.kubernetes.io/unreachable:NoExecute:",
            "node.kubernetes.io/disk-pressure:NoSchedule:",
            "node.kubernetes.io/memory-pressure:NoSchedule:",
            "node.kubernetes.io/pid-pressure:NoSchedule:",
            "node.kubernetes.io/unschedulable:NoSchedule:",
        ]
    );
    assert!(
        spec.tolerations
            .iter()
            .flatten()
            .all(|t| t.operator.as_deref() == Some("Exists"))
    );
    let mut host = PodSpec {
        host_network: Some(true),
        ..Default::default()
    };
    add_default_tolerations(&mut host);
    assert_eq!(
        keys(&host).last().unwrap(),
        "node.kubernetes.io/network-unavailable:NoSchedule:"
    );
    assert_eq!(keys(&host).len(), 7);
}

#[test]
fn user_tolerations_come_first_identical_ones_are_not_doubled_and_seconds_are_replaced() {
    let mut with_seconds = toleration(NOT_READY, "Exists", "", "NoExecute");
    with_seconds.toleration_seconds = Some(300);
    let mut spec = PodSpec {
        tolerations: Some(vec![
            toleration("dedicated", "Equal", "infra", "NoSchedule"),
            with_seconds.clone(),
            toleration(UNSCHEDULABLE, "Exists", "", "NoSchedule"),
            // Same key and effect, but operator Equal: a different toleration.
            toleration(UNREACHABLE, "Equal", "", "NoExecute"),
            // A duplicate of the first default: both are replaced.
            with_seconds,
        ]),
        ..Default::default()
    };
    add_default_tolerations(&mut spec);
    assert_eq!(
        keys(&spec),
        [
            "dedicated:NoSchedule:",
            "node.kubernetes.io/not-ready:NoExecute:",
            "node.kubernetes.io/unschedulable:NoSchedule:",
            "node.kubernetes.io/unreachable:NoExecute:",
            "node.kubernetes.io/not-ready:NoExecute:",
            "node.kubernetes.io/unreachable:NoExecute:",
            "node.kubernetes.io/disk-pressure:NoSchedule:",
            "node.kubernetes.io/memory-pressure:NoSchedule:",
            "node.kubernetes.io/pid-pressure:NoSchedule:",
        ]
    );
    // Adding them again changes nothing.
    let before = spec.clone();
    add_default_tolerations(&mut spec);
    assert_eq!(spec, before);
}

#[test]
fn toleration_matching_over_every_operator_key_and_effect() {
    let t = taint("k", "v", TaintEffect::NoSchedule);
    let cases = [
        (toleration("k", "Exists", "", ""), true),
        (toleration("k", "Exists", "", "NoSchedule"), true),
        (toleration("k", "Exists", "", "NoExecute"), false),
        (toleration("", "Exists", "", ""), true),
        (toleration("", "Exists", "", "NoExecute"), false),
        (toleration("k", "Equal", "v", ""), true),
        (toleration("k", "", "v", "NoSchedule"), true),
        (toleration("k", "Equal", "w", ""), false),
        (toleration("k", "Equal", "", ""), false),
        (toleration("other", "Exists", "", ""), false),
        (toleration("k", "Lt", "v", ""), false),
        (toleration("k", "exists", "", ""), false),
    ];
    for (toleration, expected) in cases {
        assert_eq!(tolerates(&toleration, &t), expected, "{toleration:?}");
    }
    let empty_value = taint("k", "", TaintEffect::NoExecute);
    assert!(tolerates(&toleration("k", "", "", ""), &empty_value));
    assert!(!tolerates(&toleration("k", "Equal", "x", ""), &empty_value));
}

#[test]
fn only_the_considered_effects_count() {
    let taints = [
        taint("a", "", TaintEffect::NoSchedule),
        taint("b", "", TaintEffect::NoExecute),
    ];
    let tolerate_a = [toleration("a", "Exists", "", "")];
    assert!(has_untolerated_taint(&taints, &tolerate_a, |_| true));
    assert!(!has_untolerated_taint(&taints, &tolerate_a, |e| e == TaintEffect::NoSchedule));
    assert!(has_untolerated_taint(&taints, &[], |e| e == TaintEffect::NoExecute));
    assert!(!has_untolerated_taint(&[], &[], |_| true));
}
