//! The partial order the plan sorts when nothing reads the whole order.

use k8s_openapi::api::core::v1::Pod;
use proptest::prelude::*;
use serde_json::json;

use super::*;
use crate::updatesort::budget::take_within_budget;

/// A pod with the fields the default order reads; few distinct values, so that ties are common.
fn pod(name: u8, scheduled: bool, phase: u8, ready: bool, ready_at: u8, restarts: u8) -> Pod {
    let time = |minute: u8| format!("2026-11-26T10:{:02}:00Z", minute % 4);
    let phase = ["Pending", "Unknown", "Running"][usize::from(phase % 3)];
    serde_json::from_value(json!({
        "metadata": {"name": format!("p{}", name % 8), "namespace": "ns",
            "creationTimestamp": time(name / 8)},
        "spec": {"containers": [{"name": "app"}], "nodeName": if scheduled { "n" } else { "" }},
        "status": {"phase": phase,
            "conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" },
                "lastTransitionTime": time(ready_at)}],
            "containerStatuses": [{"name": "app", "image": "a", "imageID": "", "ready": ready,
                "restartCount": restarts % 3}]}
    }))
    .unwrap()
}

fn pods() -> impl Strategy<Value = Vec<Arc<Pod>>> {
    prop::collection::vec(
        (
            any::<u8>(),
            any::<bool>(),
            any::<u8>(),
            any::<bool>(),
            any::<u8>(),
            any::<u8>(),
        )
            .prop_map(|(n, s, p, r, t, c)| Arc::new(pod(n, s, p, r, t, c))),
        0..40,
    )
}

proptest! {
    #[test]
    fn the_first_in_order_are_the_head_of_the_whole_order(
        pods in pods(),
        keep in prop::collection::vec(any::<bool>(), 40),
        count in 0usize..45,
    ) {
        let waiting: Vec<usize> = (0..pods.len()).filter(|&i| keep[i]).collect();
        let whole = upgrade_order(&SidecarSetUpdateStrategy::default(), &pods, waiting.clone());
        let first = first_in_order(&pods, waiting, count);
        prop_assert_eq!(&first[..], &whole[..count.min(whole.len())]);
    }

    /// The budget takes a head of the order that ends before the first ready pod past it: it
    /// never reaches beyond every pod not ready plus the budget's ready ones.
    #[test]
    fn the_budget_never_reaches_past_the_pods_not_ready_and_its_ready_ones(
        ready in prop::collection::vec(any::<bool>(), 0..40),
        kept in 0usize..45,
        unavailable in 0usize..10,
        max_unavailable in 0usize..10,
    ) {
        let order: Vec<usize> = (0..ready.len()).collect();
        let kept = kept.min(order.len());
        let is_ready = |i: usize| ready[i];
        let whole = take_within_budget(&order[..kept], is_ready, unavailable, max_unavailable);
        let not_ready = ready.iter().filter(|r| !**r).count();
        let reachable = kept.min(not_ready + max_unavailable.saturating_sub(unavailable));
        let head = take_within_budget(&order[..reachable], is_ready, unavailable, max_unavailable);
        prop_assert_eq!(whole, head);
    }
}
