//! `scatterStrategy`: spread pods carrying a given label evenly through the upgrade order, so
//! that they are not all upgraded (and unavailable) at once.

use std::collections::BTreeMap;

use crate::api::UpdateScatterTerm;

type Labels = BTreeMap<String, String>;

const ANY_VALUE: &str = "*";

/// Expands `key: "*"` into one term per distinct value of that label among `all_pods`, in pod
/// order; duplicate terms are dropped.
pub fn expand_terms(
    terms: &[UpdateScatterTerm],
    all_pods: &[Option<&Labels>],
) -> Vec<UpdateScatterTerm> {
    let mut expanded: Vec<UpdateScatterTerm> = Vec::new();
    let mut push = |term: UpdateScatterTerm| {
        if !expanded.contains(&term) {
            expanded.push(term);
        }
    };
    for term in terms {
        if term.value != ANY_VALUE {
            push(term.clone());
            continue;
        }
        for labels in all_pods.iter().flatten() {
            if let Some(value) = labels.get(&term.key) {
                push(UpdateScatterTerm {
                    key: term.key.clone(),
                    value: value.clone(),
                });
            }
        }
    }
    expanded
}

/// Reorders `waiting` (indexes into `all_pods`) term by term. With more than one term, terms
/// matching no waiting pod are dropped and the rest applied most-matching first.
pub fn scatter(
    terms: &[UpdateScatterTerm],
    all_pods: &[Option<&Labels>],
    mut waiting: Vec<usize>,
) -> Vec<usize> {
    if terms.is_empty() || waiting.len() <= 1 {
        return waiting;
    }
    let matches = |index: usize, term: &UpdateScatterTerm| {
        all_pods
            .get(index)
            .copied()
            .flatten()
            .and_then(|labels| labels.get(&term.key))
            == Some(&term.value)
    };
    let applied: Vec<&UpdateScatterTerm> = if terms.len() == 1 {
        terms.iter().collect()
    } else {
        let mut counted: Vec<(usize, &UpdateScatterTerm)> = terms
            .iter()
            .map(|term| (waiting.iter().filter(|&&i| matches(i, term)).count(), term))
            .filter(|(count, _)| *count > 0)
            .collect();
        counted.sort_by_key(|(count, _)| std::cmp::Reverse(*count));
        counted.into_iter().map(|(_, term)| term).collect()
    };
    for term in applied {
        let (total_matched, total_unmatched) =
            all_pods
                .iter()
                .enumerate()
                .fold((0usize, 0usize), |(m, u), (index, _)| {
                    if matches(index, term) {
                        (m + 1, u)
                    } else {
                        (m, u + 1)
                    }
                });
        waiting = scatter_by_term(
            waiting,
            |i| matches(i, term),
            total_matched,
            total_unmatched,
        );
    }
    waiting
}

fn scatter_by_term(
    waiting: Vec<usize>,
    matches: impl Fn(usize) -> bool,
    total_matched: usize,
    total_unmatched: usize,
) -> Vec<usize> {
    let (mut matched, unmatched): (Vec<usize>, Vec<usize>) =
        waiting.iter().partition(|&&i| matches(i));
    if matched.len() <= 1 || unmatched.len() <= 1 {
        return waiting;
    }
    // The last matched pod goes to the very end.
    let Some(last_matched) = matched.pop() else {
        return waiting;
    };
    let total_matched = total_matched.saturating_sub(1).max(1);

    let waiting_ratio = unmatched.len() as f64 / matched.len() as f64;
    let total_ratio = total_unmatched as f64 / total_matched as f64;
    let (groups, matched_size, unmatched_size, remainder) = if total_ratio >= waiting_ratio {
        let (groups, m, u) = group_sizes(matched.len(), unmatched.len());
        (groups, m, u, 0)
    } else {
        let (_, m, u) = group_sizes(total_matched, total_unmatched);
        let groups = (matched.len() / m.max(1)).min(unmatched.len() / u.max(1));
        (groups, m, u, unmatched.len().saturating_sub(groups * u))
    };

    let mut order = Vec::with_capacity(waiting.len());
    let mut matched = matched.into_iter();
    let mut unmatched = unmatched.into_iter();
    order.extend(unmatched.by_ref().take(remainder));
    for _ in 0..groups {
        order.extend(matched.by_ref().take(matched_size));
        order.extend(unmatched.by_ref().take(unmatched_size));
    }
    order.extend(matched);
    order.extend(unmatched);
    order.push(last_matched);
    order
}

/// (groups, matched per group, unmatched per group), sizes rounded half away from zero.
fn group_sizes(matched: usize, unmatched: usize) -> (usize, usize, usize) {
    let groups = matched.min(unmatched);
    if groups == 0 {
        return (0, matched, unmatched);
    }
    let round = |n: usize| (n as f64 / groups as f64).round() as usize;
    (groups, round(matched), round(unmatched))
}

#[cfg(test)]
mod tests {
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
}
