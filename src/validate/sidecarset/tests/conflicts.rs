//! Conflicts with the cluster's other SidecarSets (E) and the selector overlap they rest on.

use super::*;
use crate::api::match_labels;
use crate::validate::field::aggregate;

#[test]
fn conflicts_need_overlapping_pods_and_are_skipped_after_earlier_errors() {
    let mut theirs = other()
        .containers(vec![sidecar("test-sidecar")])
        .label_selector(match_labels(&[("a", "c")]))
        .build();
    assert!(validate_sidecarset(&base().build(), None, &others(vec![theirs.clone()])).is_empty());

    theirs.spec.selector = Some(match_labels(&[("a", "b")]));
    let stored = others(vec![theirs]);
    assert_eq!(validate_sidecarset(&base().build(), None, &stored).len(), 1);

    // The SidecarSet being updated appears in the list itself and is ignored.
    let same = base().volumes(vec![host_path("v", "/other")]).build();
    let set = base().volumes(vec![host_path("v", "/mine")]).build();
    assert!(validate_sidecarset(&set, Some(&base().build()), &others(vec![same])).is_empty());

    // With a spec error, conflicts are not reported.
    let broken = base().label_selector(None).build();
    let errors = validate_sidecarset(&broken, None, &stored);
    assert_eq!(
        aggregate(&errors),
        "spec.selector: Required value: no selector defined for SidecarSet"
    );
}

#[test]
fn init_container_names_only_clash_with_init_containers() {
    let set = base().init_containers(vec![sidecar("shared")]).build();
    let theirs = other().containers(vec![sidecar("shared")]).build();
    assert!(validate_sidecarset(&set, None, &others(vec![theirs])).is_empty());
}

#[test]
fn the_last_overlapping_owner_of_a_name_is_reported() {
    let set = base().volumes(vec![host_path("v", "/a")]).build();
    let first = named("first")
        .containers(vec![sidecar("c1")])
        .volumes(vec![host_path("v", "/b")])
        .build();
    let second = named("second")
        .containers(vec![sidecar("c2")])
        .volumes(vec![host_path("v", "/a")])
        .build();
    // `second` defines the volume identically and owns the name last: no conflict.
    assert!(
        validate_sidecarset(&set, None, &others(vec![first.clone(), second.clone()])).is_empty()
    );
    let errors = validate_sidecarset(&set, None, &others(vec![second, first]));
    assert_eq!(
        aggregate(&errors),
        "spec.volumes: Invalid value: \"v\": volume v is in conflict with sidecarset first"
    );
}

#[test]
fn selector_overlap_truth_table() {
    let labels_of = |pairs: &[(&str, &str)]| match_labels(pairs);
    let exprs =
        |list: Vec<LabelSelectorRequirement>| with_expressions(LabelSelector::default(), list);
    let cases = [
        (labels_of(&[("a", "h")]), labels_of(&[("a", "h")]), true),
        (labels_of(&[("a", "h")]), labels_of(&[("a", "i")]), false),
        (labels_of(&[("a", "h")]), labels_of(&[("b", "i")]), true),
        (
            labels_of(&[("a", "h"), ("b", "i"), ("c", "j")]),
            labels_of(&[("a", "h"), ("b", "x"), ("c", "j")]),
            false,
        ),
        (
            labels_of(&[("a", "h")]),
            exprs(vec![expression("a", "In", &["h", "i", "j"])]),
            true,
        ),
        (
            labels_of(&[("a", "h")]),
            exprs(vec![expression("a", "In", &["i", "j"])]),
            false,
        ),
        (
            exprs(vec![expression("a", "NotIn", &["h", "i"])]),
            labels_of(&[("a", "h")]),
            false,
        ),
        (
            labels_of(&[("a", "h")]),
            exprs(vec![expression("a", "Exists", &[])]),
            true,
        ),
        (
            exprs(vec![expression("a", "DoesNotExist", &[])]),
            labels_of(&[("a", "h")]),
            false,
        ),
        // The rough edge the spec calls out: `Exists` on a key the other does not pin.
        (
            labels_of(&[("a", "h")]),
            exprs(vec![expression("b", "Exists", &[])]),
            false,
        ),
        (LabelSelector::default(), labels_of(&[("a", "h")]), true),
    ];
    for (a, b, expected) in cases {
        assert_eq!(selectors_overlap(&a, &b), expected, "{a:?} vs {b:?}");
        assert_eq!(selectors_overlap(&b, &a), expected, "{b:?} vs {a:?}");
    }
}
