use super::*;
use crate::daemonset::node::TaintEffect;
use crate::daemonset::round::Round;
use crate::daemonset::tests::fixtures::*;

#[test]
fn counters_per_node_from_its_oldest_pod() {
    let mut set = agent();
    set.spec.min_ready_seconds = Some(30);
    set.metadata.generation = Some(3);
    set.status.as_mut().unwrap().collision_count = Some(2);
    let nodes = [
        node("ready-new"),
        node("ready-old-young"),
        node("pending"),
        node("empty"),
        node("surging"),
        tainted("misscheduled", "k", TaintEffect::NoSchedule),
        tainted("evicted", "k", TaintEffect::NoExecute),
    ];
    let pods = [
        pod("a", "ready-new", "h2").ready_since(0).listed(),
        // Ready for 10 s only: ready, not available.
        pod("b", "ready-old-young", "h1").ready_since(90).listed(),
        pod("c", "pending", "h2").pending().listed(),
        // The old pod is the oldest: the node counts as not updated.
        pod("d-old", "surging", "h1").created(1).listed(),
        pod("d-new", "surging", "h2").created(2).listed(),
        pod("e", "misscheduled", "h2").listed(),
        pod("f", "evicted", "h2").deleting().listed(),
        pod("g", "unlisted", "h2").listed(),
    ];
    let round = Round::new(&set, "h2", &nodes, &pods, at(100));
    let status = compute(&round, true);
    assert_eq!(status.desired_number_scheduled, 5);
    assert_eq!(status.current_number_scheduled, 4);
    assert_eq!(status.number_misscheduled, 2, "terminating pods count");
    assert_eq!(status.number_ready, 3);
    assert_eq!(status.number_available, Some(2));
    assert_eq!(status.number_unavailable, Some(3));
    assert_eq!(status.updated_number_scheduled, 2);
    assert_eq!(status.observed_generation, Some(3));
    assert_eq!(status.update_revision, "h2");
    assert_eq!(status.collision_count, Some(2));
    assert_eq!(
        requeue(&round, &status),
        Some(std::time::Duration::from_secs(30))
    );

    // Without observing the generation, the last observed one stays.
    set.status.as_mut().unwrap().observed_generation = Some(2);
    let round = Round::new(&set, "h2", &nodes, &pods, at(100));
    assert_eq!(compute(&round, false).observed_generation, Some(2));
}

#[test]
fn the_write_is_skipped_only_when_nothing_upstream_compares_changed() {
    let set = agent();
    let nodes = [node("n1")];
    let pods = [pod("a", "n1", "h2").listed()];
    let round = Round::new(&set, "h2", &nodes, &pods, at(100));
    let status = compute(&round, true);
    assert!(changed(None, Some(1), &status));
    assert!(!changed(Some(&status), Some(1), &status));
    // A newer generation not yet observed: written.
    assert!(changed(Some(&status), Some(2), &status));
    let mut other = status.clone();
    other.update_revision = "h1".into();
    assert!(changed(Some(&other), Some(1), &status));
    let mut other = status.clone();
    other.number_unavailable = None;
    assert!(!changed(Some(&other), Some(1), &status), "unset reads as 0");
    other.number_ready = 0;
    assert!(changed(Some(&other), Some(1), &status));
    // Conditions and the collision count alone are not compared.
    let mut other = status.clone();
    other.collision_count = Some(9);
    assert!(!changed(Some(&other), Some(1), &status));
    assert_eq!(requeue(&round, &status), None);
}
