//! The scale-in order (OpenKruise `ActivePodsWithRanks` with the same-node ranker): which pods
//! of a workload go first when it has too many.

use std::cmp::{Ordering, Reverse};
use std::collections::BTreeMap;

use super::pod;
use crate::podmarks::PodView;

/// OpenKruise's scale-in order, most deletable first. The same-node rank is used as the spread
/// ranker (the topology-spread ranker is not implemented).
pub fn sort_for_deletion<P: PodView>(
    pods: &mut [&P],
    min_ready_seconds: i32,
    now: jiff::Timestamp,
) {
    let base = |a: &P, b: &P| compare(a, b, min_ready_seconds, now, None);
    let mut by_node: BTreeMap<&str, Vec<&P>> = BTreeMap::new();
    for &p in pods.iter().filter(pod::scheduled) {
        by_node.entry(pod::node(p)).or_default().push(p);
    }
    let mut rank: BTreeMap<&str, i64> = BTreeMap::new();
    for group in by_node.values_mut().filter(|g| g.len() >= 2) {
        group.sort_by(|a, b| base(a, b));
        let k = group.len() as i64;
        for (i, &p) in group.iter().take(group.len() - 1).enumerate() {
            rank.insert(pod::name(p), k - i as i64);
        }
    }
    pods.sort_by(|a, b| compare(a, b, min_ready_seconds, now, Some(&rank)));
}

fn compare<P: PodView>(
    a: &P,
    b: &P,
    min_ready_seconds: i32,
    now: jiff::Timestamp,
    rank: Option<&BTreeMap<&str, i64>>,
) -> Ordering {
    let key = |p: &P| {
        (
            pod::scheduled(p),
            pod::phase_rank(p),
            pod::is_available(p, min_ready_seconds, now),
            pod::has_ready_condition(p),
            pod::deletion_cost(p),
            Reverse(rank.and_then(|r| r.get(pod::name(p))).copied().unwrap_or(0)),
        )
    };
    key(a)
        .cmp(&key(b))
        .then_with(|| {
            if pod::has_ready_condition(a) && pod::has_ready_condition(b) {
                // More recently ready first, unknown time first of all.
                Reverse(pod::ready_time(a)).cmp(&Reverse(pod::ready_time(b)))
            } else {
                Ordering::Equal
            }
        })
        .then_with(|| pod::max_restarts(b).cmp(&pod::max_restarts(a)))
        .then_with(|| Reverse(pod::created(a)).cmp(&Reverse(pod::created(b))))
        .then_with(|| pod::name(a).cmp(pod::name(b)))
}
