use super::*;
use crate::api::{UpdatePriorityOrderTerm, UpdatePriorityWeightTerm};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn weights(terms: &[(i32, &str, &str)]) -> UpdatePriorityStrategy {
    UpdatePriorityStrategy {
        weight_priority: Some(
            terms
                .iter()
                .map(|(weight, key, value)| UpdatePriorityWeightTerm {
                    weight: *weight,
                    match_selector: LabelSelector {
                        match_labels: Some(labels(&[(key, value)])),
                        ..Default::default()
                    },
                })
                .collect(),
        ),
        order_priority: None,
    }
}

/// The upstream comparator answers "I before J"; here that is `Less`.
fn before(strategy: &UpdatePriorityStrategy, i: &[(&str, &str)], j: &[(&str, &str)]) -> bool {
    priority_order(strategy, Some(&labels(i)), Some(&labels(j))) == Ordering::Less
}

#[test]
fn weight_priority_cases() {
    let strategy = weights(&[(20, "key", "foo"), (10, "key", "bar")]);
    assert_eq!(
        priority_order(&strategy, Some(&labels(&[])), Some(&labels(&[]))),
        Ordering::Equal
    );
    assert!(!before(&strategy, &[("key", "bar")], &[("key", "foo")]));
    assert!(!before(&strategy, &[], &[("key", "bar")]));
    let strategy = weights(&[
        (20, "key1", "foo"),
        (10, "key2", "bar"),
        (15, "key3", "baz"),
    ]);
    assert!(!before(
        &strategy,
        &[("key1", "foo")],
        &[("key2", "bar"), ("key3", "baz")]
    ));
    assert!(before(
        &strategy,
        &[("key2", "bar"), ("key3", "baz")],
        &[("key1", "foo")]
    ));
}

#[test]
fn order_priority_cases() {
    let strategy = UpdatePriorityStrategy {
        weight_priority: None,
        order_priority: Some(
            ["key1", "key2"]
                .iter()
                .map(|key| UpdatePriorityOrderTerm {
                    ordered_key: key.to_string(),
                })
                .collect(),
        ),
    };
    assert!(before(&strategy, &[("key1", "o-10")], &[("key1", "o-5")]));
    assert!(!before(&strategy, &[("key1", "o-10")], &[("key1", "o-20")]));
    assert!(!before(&strategy, &[("key2", "o-20")], &[("key1", "o-10")]));
    assert!(before(&strategy, &[("key2", "o-20")], &[("key2", "o-10")]));
    // No key at all sorts before keyed pods.
    assert!(before(&strategy, &[], &[("key1", "o-1")]));
}

#[test]
fn trailing_numbers() {
    assert_eq!(trailing_number("o-10"), 10);
    assert_eq!(trailing_number("abc"), 0);
    assert_eq!(trailing_number(""), 0);
    assert_eq!(trailing_number("v1.007"), 7);
    assert_eq!(trailing_number("x99999999999999999999999"), 0);
}
