//! The order in which waiting pods are updated: Kubernetes' "active pods" order (the pods least
//! worth keeping first), then `priorityStrategy`, then `scatterStrategy`.

use std::cmp::{Ordering, Reverse};
use std::collections::BTreeMap;

use k8s_openapi::jiff::Timestamp;

use super::scatter::scatter;
use crate::api::{UpdatePriorityStrategy, UpdateScatterTerm};
use crate::k8s::selector;
use crate::podmarks::PodView;

/// Kubernetes' `ActivePods` order; pods that compare equal there are ordered by namespace and
/// name, so that the result never depends on the order pods came out of the cache.
pub fn default_order<P: PodView>(a: &P, b: &P) -> Ordering {
    OrderKey::of(a).cmp(&OrderKey::of(b))
}

/// A pod's place in [`default_order`], computed once per pod so that sorting compares plain
/// values. Field order is rule order:
/// 1. unscheduled before scheduled;
/// 2. phase Pending (and any other phase) < Unknown < Running;
/// 3. not ready before ready;
/// 4. among ready pods, the more recently ready first (no recorded time first of all);
/// 5. more container restarts first;
/// 6. newer first (no creation time first of all).
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct OrderKey<'p> {
    scheduled: bool,
    phase_rank: u8,
    ready: bool,
    ready_since: Option<Reverse<&'p Timestamp>>,
    restarts: Reverse<i32>,
    created: Option<Reverse<&'p Timestamp>>,
    identity: (&'p str, &'p str),
}

impl<'p> OrderKey<'p> {
    pub fn of(pod: &'p impl PodView) -> Self {
        let ready = pod.has_ready_condition();
        Self {
            scheduled: pod.scheduled(),
            phase_rank: match pod.phase() {
                "Unknown" => 1,
                "Running" => 2,
                _ => 0,
            },
            ready,
            // Only compared between ready pods.
            ready_since: pod.ready_since().filter(|_| ready).map(Reverse),
            restarts: Reverse(
                pod.container_statuses()
                    .map(|s| s.restart_count)
                    .max()
                    .unwrap_or(0),
            ),
            created: pod.created().map(Reverse),
            identity: (pod.namespace(), pod.name()),
        }
    }
}

/// `priorityStrategy` as a comparator: `Less` means "upgrade first". Weight terms win over order
/// terms; equal pods compare `Equal` so that a stable sort keeps the default order among them.
pub fn priority_order(
    strategy: &UpdatePriorityStrategy,
    a: Option<&BTreeMap<String, String>>,
    b: Option<&BTreeMap<String, String>>,
) -> Ordering {
    let weights = strategy.weight_priority.as_deref().unwrap_or(&[]);
    if !weights.is_empty() {
        let weight = |labels: Option<&BTreeMap<String, String>>| -> i64 {
            weights
                .iter()
                .filter(|term| {
                    selector::matches(&term.match_selector, labels, "matchSelector")
                        .unwrap_or(false)
                })
                .map(|term| i64::from(term.weight))
                .sum()
        };
        return weight(b).cmp(&weight(a));
    }
    let orders = strategy.order_priority.as_deref().unwrap_or(&[]);
    if !orders.is_empty() {
        let rank = |labels: Option<&BTreeMap<String, String>>| -> (i64, i64) {
            orders
                .iter()
                .enumerate()
                .find_map(|(level, term)| {
                    let value = labels?.get(&term.ordered_key)?;
                    Some((level as i64, trailing_number(value)))
                })
                // No key at all: level -1, so such pods go before keyed ones (upstream behaviour).
                .unwrap_or((-1, 0))
        };
        let (level_a, order_a) = rank(a);
        let (level_b, order_b) = rank(b);
        return level_a.cmp(&level_b).then(order_b.cmp(&order_a));
    }
    Ordering::Equal
}

/// `chosen` (indexes into `pods`) in update order: the default order ([`OrderKey`]), then by
/// `priority` (stable), then spread by `scatter` terms.
pub fn priority_and_scatter<P: PodView>(
    pods: &[&P],
    mut chosen: Vec<usize>,
    priority: Option<&UpdatePriorityStrategy>,
    scatter_terms: Option<&[UpdateScatterTerm]>,
) -> Vec<usize> {
    let keys: Vec<OrderKey<'_>> = pods.iter().map(|p| OrderKey::of(*p)).collect();
    chosen.sort_by(|a, b| keys[*a].cmp(&keys[*b]));
    if let Some(priority) = priority {
        chosen.sort_by(|a, b| priority_order(priority, pods[*a].labels(), pods[*b].labels()));
    }
    if let Some(terms) = scatter_terms {
        let labels: Vec<_> = pods.iter().map(|p| p.labels()).collect();
        chosen = scatter(terms, &labels, chosen);
    }
    chosen
}

/// The integer formed by a value's trailing digits (0 when none, or when it does not fit).
fn trailing_number(value: &str) -> i64 {
    let digits = value.len()
        - value
            .bytes()
            .rev()
            .take_while(|b| b.is_ascii_digit())
            .count();
    value[digits..].parse().unwrap_or(0)
}

#[cfg(test)]
mod tests;
