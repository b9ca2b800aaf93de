use super::*;

fn labels(pairs: &[(&str, &str)]) -> Labels {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn expr(key: &str, op: &str, values: &[&str]) -> LabelSelectorRequirement {
    LabelSelectorRequirement {
        key: key.into(),
        operator: op.into(),
        values: Some(values.iter().map(|v| v.to_string()).collect()),
    }
}

#[test]
fn match_labels_and_expressions() {
    let selector = LabelSelector {
        match_labels: Some(labels(&[("app", "web")])),
        match_expressions: Some(vec![
            expr("tier", "In", &["a", "b"]),
            expr("canary", "DoesNotExist", &[]),
        ]),
    };
    let pod = labels(&[("app", "web"), ("tier", "b")]);
    assert_eq!(matches(&selector, Some(&pod), "spec.selector"), Ok(true));
    let pod = labels(&[("app", "web"), ("tier", "c")]);
    assert_eq!(matches(&selector, Some(&pod), "spec.selector"), Ok(false));
    let pod = labels(&[("app", "web"), ("tier", "a"), ("canary", "x")]);
    assert_eq!(matches(&selector, Some(&pod), "spec.selector"), Ok(false));
    assert_eq!(matches(&selector, None, "spec.selector"), Ok(false));
}

#[test]
fn not_in_and_exists() {
    let selector = LabelSelector {
        match_expressions: Some(vec![
            expr("env", "NotIn", &["prod"]),
            expr("app", "Exists", &[]),
        ]),
        ..Default::default()
    };
    assert_eq!(
        matches(&selector, Some(&labels(&[("app", "x")])), "s"),
        Ok(true)
    );
    assert_eq!(
        matches(
            &selector,
            Some(&labels(&[("app", "x"), ("env", "prod")])),
            "s"
        ),
        Ok(false)
    );
    assert_eq!(matches(&selector, Some(&labels(&[])), "s"), Ok(false));
}

#[test]
fn unknown_operator_is_an_error_naming_the_field() {
    let selector = LabelSelector {
        match_expressions: Some(vec![expr("a", "Near", &[])]),
        ..Default::default()
    };
    let err = matches(&selector, Some(&labels(&[("a", "b")])), "spec.selector").unwrap_err();
    assert_eq!(err.field, "spec.selector.matchExpressions[0].operator");
    assert!(err.message.contains("\"Near\""), "{err}");
}

#[test]
fn emptiness() {
    assert!(is_empty(&LabelSelector::default()));
    assert!(is_empty(&LabelSelector {
        match_labels: Some(Default::default()),
        match_expressions: Some(vec![])
    }));
    assert!(!is_empty(&LabelSelector {
        match_labels: Some(labels(&[("a", "b")])),
        ..Default::default()
    }));
}
