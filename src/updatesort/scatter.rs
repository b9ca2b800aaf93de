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
mod tests;
