//! The default update order as flat, owned keys, for the workloads' large candidate lists.
//!
//! [`OrderKey`](super::order::OrderKey) borrows the pod's timestamps and identity, so
//! every comparison of two keys reaches back into both pods — several cache misses each, and
//! choosing among the thousands of candidates of a large workload compares tens of thousands of
//! times. These keys copy the timestamps, rank the namespaces once, and keep the first bytes of
//! the name inline; they order pods exactly as `(PreparingUpdate first, OrderKey, position)`
//! does (tested against it).

use std::cmp::Reverse;
use std::collections::BTreeMap;

use jiff::Timestamp;

use crate::podmarks::PodView;

/// Bytes of the name compared inline; longer names that tie on them compare in full.
const NAME_HEAD: usize = 16;

/// Field order is rule order (see `OrderKey`), then the position.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct FlatKey<'p> {
    not_preparing_update: bool,
    scheduled: bool,
    phase_rank: u8,
    ready: bool,
    ready_since: Option<Reverse<Timestamp>>,
    restarts: Reverse<i32>,
    created: Option<Reverse<Timestamp>>,
    /// The namespace's rank among the keyed pods' namespaces.
    namespace: usize,
    /// The name's first bytes, zero-padded: a difference here is the names' order (zeros sort
    /// first, as a shorter name does), a tie is settled by `name`.
    name_head: [u8; NAME_HEAD],
    name: &'p str,
    pub position: usize,
}

/// Keys of `pods` (pod, PreparingUpdate, position).
pub fn flat_keys<'p, P: PodView + 'p>(
    pods: impl Iterator<Item = (&'p P, bool, usize)> + Clone,
) -> Vec<FlatKey<'p>> {
    let mut namespaces: BTreeMap<&str, usize> = pods
        .clone()
        .map(|(p, _, _)| (PodView::namespace(p), 0))
        .collect();
    for (rank, slot) in namespaces.values_mut().enumerate() {
        *slot = rank;
    }
    pods.map(|(p, preparing_update, position)| {
        let ready = p.has_ready_condition();
        let name = PodView::name(p);
        let mut name_head = [0u8; NAME_HEAD];
        let head = &name.as_bytes()[..name.len().min(NAME_HEAD)];
        name_head[..head.len()].copy_from_slice(head);
        FlatKey {
            not_preparing_update: !preparing_update,
            scheduled: p.scheduled(),
            phase_rank: match p.phase() {
                "Unknown" => 1,
                "Running" => 2,
                _ => 0,
            },
            ready,
            ready_since: p.ready_since().filter(|_| ready).copied().map(Reverse),
            restarts: Reverse(
                p.container_statuses()
                    .map(|s| s.restart_count)
                    .max()
                    .unwrap_or(0),
            ),
            created: p.created().copied().map(Reverse),
            namespace: namespaces.get(PodView::namespace(p)).copied().unwrap_or(0),
            name_head,
            name,
            position,
        }
    })
    .collect()
}

#[cfg(test)]
mod tests;
