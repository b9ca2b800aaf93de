use super::*;
use k8s_openapi::api::core::v1::{Affinity, NodeAffinity, NodeSelector};

fn node(name: &str, labels: &[(&str, &str)]) -> NodeSummary {
    NodeSummary {
        name: name.into(),
        labels: labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        taints: Box::new([]),
    }
}

fn req(key: &str, operator: &str, values: &[&str]) -> NodeSelectorRequirement {
    NodeSelectorRequirement {
        key: key.into(),
        operator: operator.into(),
        values: (!values.is_empty()).then(|| values.iter().map(|v| v.to_string()).collect()),
    }
}

fn term(
    expressions: Vec<NodeSelectorRequirement>,
    fields: Vec<NodeSelectorRequirement>,
) -> NodeSelectorTerm {
    NodeSelectorTerm {
        match_expressions: (!expressions.is_empty()).then_some(expressions),
        match_fields: (!fields.is_empty()).then_some(fields),
    }
}

fn spec(selector: &[(&str, &str)], terms: Option<Vec<NodeSelectorTerm>>) -> PodSpec {
    PodSpec {
        node_selector: (!selector.is_empty()).then(|| {
            selector
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        }),
        affinity: terms.map(|node_selector_terms| Affinity {
            node_affinity: Some(NodeAffinity {
                required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                    node_selector_terms,
                }),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn matches(spec: &PodSpec, node: &NodeSummary) -> bool {
    RequiredNodeAffinity::of(spec).matches(node)
}

#[test]
fn no_selector_and_no_affinity_match_every_node() {
    assert!(matches(&spec(&[], None), &node("n", &[])));
    // An empty nodeSelector map is no selector.
    let mut empty = spec(&[], None);
    empty.node_selector = Some(Default::default());
    assert!(matches(&empty, &node("n", &[])));
}

#[test]
fn node_selector_pairs_must_all_be_labels() {
    let s = spec(&[("role", "agent"), ("zone", "")], None);
    assert!(matches(&s, &node("n", &[("role", "agent"), ("zone", "")])));
    assert!(
        !matches(&s, &node("n", &[("role", "agent")])),
        "an empty value still needs the key"
    );
    assert!(!matches(&s, &node("n", &[("role", "web"), ("zone", "")])));
}

#[test]
fn ds3_terms_are_ored_and_the_node_selector_still_applies() {
    let terms = vec![
        term(vec![req("zone", "In", &["a"])], vec![]),
        term(vec![req("gpu", "Exists", &[])], vec![]),
    ];
    let s = spec(&[], Some(terms.clone()));
    assert!(matches(&s, &node("n1", &[("zone", "b"), ("gpu", "1")])));
    assert!(matches(&s, &node("n2", &[("zone", "a")])));
    assert!(!matches(&s, &node("n3", &[])));
    let with_selector = spec(&[("role", "agent")], Some(terms));
    assert!(!matches(&with_selector, &node("n2", &[("zone", "a")])));
    assert!(matches(
        &with_selector,
        &node("n2", &[("zone", "a"), ("role", "agent")])
    ));
}

#[test]
fn empty_terms_and_empty_term_lists_match_nothing() {
    assert!(!matches(&spec(&[], Some(vec![])), &node("n", &[])));
    assert!(!matches(
        &spec(&[], Some(vec![term(vec![], vec![])])),
        &node("n", &[])
    ));
    // An empty term next to a matching one is skipped.
    let s = spec(
        &[],
        Some(vec![
            term(vec![], vec![]),
            term(vec![req("a", "Exists", &[])], vec![]),
        ]),
    );
    assert!(matches(&s, &node("n", &[("a", "")])));
}

#[test]
fn every_label_operator() {
    let n = node("n", &[("a", "x"), ("cores", "8"), ("word", "many")]);
    let cases = [
        (req("a", "In", &["x", "y"]), true),
        (req("a", "In", &["y"]), false),
        (req("missing", "In", &["x"]), false),
        (req("a", "NotIn", &["y"]), true),
        (req("a", "NotIn", &["x"]), false),
        (req("missing", "NotIn", &["x"]), true),
        (req("a", "Exists", &[]), true),
        (req("missing", "Exists", &[]), false),
        (req("a", "DoesNotExist", &[]), false),
        (req("missing", "DoesNotExist", &[]), true),
        (req("cores", "Gt", &["7"]), true),
        (req("cores", "Gt", &["8"]), false),
        (req("cores", "Lt", &["9"]), true),
        (req("cores", "Lt", &["8"]), false),
        // A label that is not a number, or missing, never compares.
        (req("word", "Gt", &["1"]), false),
        (req("missing", "Lt", &["1"]), false),
    ];
    for (requirement, expected) in cases {
        let s = spec(&[], Some(vec![term(vec![requirement.clone()], vec![])]));
        assert_eq!(matches(&s, &n), expected, "{requirement:?}");
    }
}

#[test]
fn a_requirement_that_does_not_parse_drops_its_whole_term() {
    let n = node("n", &[("a", "x"), ("cores", "8")]);
    let invalid = [
        req("a", "In", &[]),
        req("a", "NotIn", &[]),
        req("a", "Exists", &["x"]),
        req("a", "DoesNotExist", &["x"]),
        req("cores", "Gt", &["7", "8"]),
        req("cores", "Gt", &["seven"]),
        req("cores", "Lt", &[]),
        req("a", "Near", &["x"]),
        req("a", "in", &["x"]),
        req("bad key!", "Exists", &[]),
        req("a", "In", &["not a label value"]),
    ];
    for requirement in invalid {
        // With a matching requirement beside it the term still matches nothing...
        let s = spec(
            &[],
            Some(vec![term(
                vec![req("a", "Exists", &[]), requirement.clone()],
                vec![],
            )]),
        );
        assert!(!matches(&s, &n), "{requirement:?}");
        // ...and another valid term still can.
        let s = spec(
            &[],
            Some(vec![
                term(vec![requirement.clone()], vec![]),
                term(vec![req("a", "In", &["x"])], vec![]),
            ]),
        );
        assert!(matches(&s, &n), "{requirement:?}");
    }
}

#[test]
fn match_fields_name_the_node() {
    let n = node("n1", &[("a", "x")]);
    let field = |operator: &str, values: &[&str]| {
        spec(
            &[],
            Some(vec![term(
                vec![],
                vec![req(NODE_NAME_FIELD, operator, values)],
            )]),
        )
    };
    assert!(matches(&field("In", &["n1"]), &n));
    assert!(!matches(&field("In", &["n2"]), &n));
    assert!(matches(&field("NotIn", &["n2"]), &n));
    assert!(!matches(&field("NotIn", &["n1"]), &n));
    // One value exactly, and only In/NotIn.
    assert!(!matches(&field("In", &["n1", "n2"]), &n));
    assert!(!matches(&field("Exists", &[]), &n));
    // Another field reads as "".
    let other = spec(
        &[],
        Some(vec![term(
            vec![],
            vec![req("spec.unschedulable", "In", &[""])],
        )]),
    );
    assert!(matches(&other, &n));
    // Labels and fields of one term are ANDed.
    let both = spec(
        &[],
        Some(vec![term(
            vec![req("a", "In", &["y"])],
            vec![req(NODE_NAME_FIELD, "In", &["n1"])],
        )]),
    );
    assert!(!matches(&both, &n));
    // A node without a name has no fields: field requirements do not apply.
    assert!(matches(&field("In", &["n2"]), &node("", &[])));
}
