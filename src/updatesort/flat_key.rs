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
mod tests {
    use super::*;
    use crate::updatesort::order::OrderKey;
    use k8s_openapi::api::core::v1::{ContainerStatus, Pod, PodCondition, PodSpec, PodStatus};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    fn random_pod(rng: &mut fastrand::Rng) -> Pod {
        let mut p = Pod::default();
        let names = [
            "web",
            "web-a",
            "web-ab",
            "web-abcdefghijklmnop",
            "web-abcdefghijklmnoq",
        ];
        let mut name = names[rng.usize(..names.len())].to_string();
        if rng.bool() {
            name.push(char::from(b'a' + rng.u8(0..3)));
        }
        if rng.u8(0..8) == 0 {
            name.push('\0');
        }
        p.metadata.name = Some(name);
        p.metadata.namespace = ["default", "a", "default-x", ""][rng.usize(..4)]
            .to_string()
            .into();
        let time = |rng: &mut fastrand::Rng| Time(Timestamp::from_second(rng.i64(0..4)).unwrap());
        p.metadata.creation_timestamp = rng.bool().then(|| time(rng));
        p.spec = Some(PodSpec {
            node_name: [None, Some(""), Some("n1")][rng.usize(..3)].map(String::from),
            ..Default::default()
        });
        let ready = PodCondition {
            type_: "Ready".into(),
            status: ["True", "False"][rng.usize(..2)].into(),
            last_transition_time: rng.bool().then(|| time(rng)),
            ..Default::default()
        };
        p.status = Some(PodStatus {
            phase: ["Running", "Pending", "Unknown", "Failed"][rng.usize(..4)]
                .to_string()
                .into(),
            conditions: rng.bool().then(|| vec![ready]),
            container_statuses: Some(
                (0..rng.usize(0..3))
                    .map(|_| ContainerStatus {
                        restart_count: rng.i32(0..3),
                        ..Default::default()
                    })
                    .collect(),
            ),
            ..Default::default()
        });
        p
    }

    #[test]
    fn flat_keys_order_pods_as_order_keys_do() {
        let mut rng = fastrand::Rng::with_seed(5);
        for _ in 0..300 {
            let pods: Vec<(Pod, bool)> = (0..rng.usize(0..40))
                .map(|_| (random_pod(&mut rng), rng.u8(0..4) == 0))
                .collect();
            let mut reference: Vec<(bool, OrderKey<'_>, usize)> = pods
                .iter()
                .enumerate()
                .map(|(i, (p, preparing))| (!preparing, OrderKey::of(p), i))
                .collect();
            reference.sort();
            let mut flat = flat_keys(pods.iter().enumerate().map(|(i, (p, u))| (p, *u, i)));
            flat.sort();
            let reference: Vec<usize> = reference.into_iter().map(|(_, _, i)| i).collect();
            let flat: Vec<usize> = flat.into_iter().map(|k| k.position).collect();
            assert_eq!(flat, reference);
        }
    }
}
