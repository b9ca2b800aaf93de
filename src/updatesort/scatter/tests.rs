use super::*;

fn term(key: &str, value: &str) -> UpdateScatterTerm {
    UpdateScatterTerm {
        key: key.into(),
        value: value.into(),
    }
}

fn zone_pods(zones: &[&str]) -> Vec<Labels> {
    zones
        .iter()
        .map(|z| Labels::from([("zone".to_string(), z.to_string())]))
        .collect()
}

#[test]
fn matched_pods_are_spread_and_one_goes_last() {
    let pods = zone_pods(&["a", "a", "a", "b", "b", "b", "b", "b", "b"]);
    let all: Vec<Option<&Labels>> = pods.iter().map(Some).collect();
    let order = scatter(&[term("zone", "a")], &all, (0..pods.len()).collect());
    // 2 matched (one set aside) against 6 unmatched: groups of 1 matched + 3 unmatched.
    assert_eq!(order, vec![0, 3, 4, 5, 1, 6, 7, 8, 2]);
    let mut sorted = order.clone();
    sorted.sort();
    assert_eq!(sorted, (0..pods.len()).collect::<Vec<_>>());
}

#[test]
fn too_few_matched_or_unmatched_leaves_the_order() {
    let pods = zone_pods(&["a", "b", "b", "b"]);
    let all: Vec<Option<&Labels>> = pods.iter().map(Some).collect();
    assert_eq!(
        scatter(&[term("zone", "a")], &all, vec![3, 2, 1, 0]),
        vec![3, 2, 1, 0]
    );
}

#[test]
fn several_terms_apply_most_matching_first_and_drop_unmatched_terms() {
    let pods: Vec<Labels> = (0..12)
        .map(|i| {
            let mut labels = Labels::new();
            labels.insert("zone".into(), if i % 2 == 0 { "a" } else { "b" }.into());
            if i < 4 {
                labels.insert("rack".into(), "r".into());
            }
            labels
        })
        .collect();
    let all: Vec<Option<&Labels>> = pods.iter().map(Some).collect();
    let waiting: Vec<usize> = (0..12).collect();
    let (rack, zone, absent) = (term("rack", "r"), term("zone", "a"), term("zone", "c"));
    let sequential = |first: &UpdateScatterTerm, second: &UpdateScatterTerm| {
        let once = scatter(std::slice::from_ref(first), &all, waiting.clone());
        scatter(std::slice::from_ref(second), &all, once)
    };
    let expected = sequential(&zone, &rack);
    // The order of application matters for this population…
    assert_ne!(expected, sequential(&rack, &zone));
    // …and the zone term (6 waiting pods) goes before the rack term (4), whatever the list order.
    let listed = [rack.clone(), absent.clone(), zone.clone()];
    assert_eq!(scatter(&listed, &all, waiting.clone()), expected);
}

proptest::proptest! {
    #[test]
    fn scatter_is_a_permutation(
        zones in proptest::collection::vec(0u8..3, 0..30),
        drop in proptest::collection::vec(proptest::bool::ANY, 30),
    ) {
        let pods: Vec<Labels> = zones
            .iter()
            .map(|z| Labels::from([("zone".to_string(), z.to_string())]))
            .collect();
        let all: Vec<Option<&Labels>> = pods.iter().map(Some).collect();
        let waiting: Vec<usize> = (0..pods.len()).filter(|&i| !drop[i]).collect();
        let terms = expand_terms(&[term("zone", "*")], &all);
        let mut order = scatter(&terms, &all, waiting.clone());
        order.sort();
        proptest::prop_assert_eq!(order, waiting);
    }
}

#[test]
fn unmatched_remainder_comes_first_when_totals_are_more_balanced() {
    // Totals: 5 matched (4 after setting one aside), 5 unmatched; waiting: 3 matched, 5 unmatched.
    let pods = zone_pods(&["a", "a", "a", "a", "a", "b", "b", "b", "b", "b"]);
    let all: Vec<Option<&Labels>> = pods.iter().map(Some).collect();
    let waiting = vec![0, 1, 2, 5, 6, 7, 8, 9];
    let order = scatter(&[term("zone", "a")], &all, waiting);
    // Waiting matched 2 (after set-aside), unmatched 5: ratio 2.5 > totals' 5/4, so total
    // sizing: 1 matched + 1 unmatched per group, 2 groups, remainder 3 unmatched first.
    assert_eq!(order, vec![5, 6, 7, 0, 8, 1, 9, 2]);
}
