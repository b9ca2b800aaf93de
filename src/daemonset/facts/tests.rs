use super::*;
use crate::daemonset::tests::fixtures::*;
use crate::workload::lifecycle::PREPARING_DELETE;

fn facts(p: PodBuilder) -> DaemonPodFacts {
    DaemonPodFacts::of(&p.build(), "h2", None)
}

#[test]
fn availability_is_kubernetes_is_pod_available() {
    let ready = facts(pod("p", "n1", "h2").ready_since(50));
    assert!(ready.available(0, at(50)));
    // Strictly later than ready + minReadySeconds.
    assert!(!ready.available(10, at(60)));
    assert!(ready.available(10, at(61)));
    assert_eq!(
        ready.available_in(10, at(55)),
        std::time::Duration::from_secs(5)
    );
    // Lifecycle and phase do not matter to it.
    let going = facts(pod("p", "n1", "h2").lifecycle(PREPARING_DELETE));
    assert!(going.available(0, at(1)) && going.pre_deleting);
    assert!(!facts(pod("p", "n1", "h2").not_ready()).available(0, at(1)));
    assert!(!facts(pod("p", "n1", "h2").pending()).ready);
}

#[test]
fn the_status_also_waits_for_the_in_place_condition() {
    let now = at(10);
    let updating = facts(pod("p", "n1", "h2").gate(Some("False")));
    assert!(updating.available(0, now) && !updating.daemon_available(0, now));
    assert!(facts(pod("p", "n1", "h2").gate(Some("True"))).daemon_available(0, now));
    // Gate without a condition yet, or a condition without the gate: available.
    assert!(facts(pod("p", "n1", "h2").gate(None)).daemon_available(0, now));
}

#[test]
fn updated_is_the_hash_or_the_template_generation() {
    assert!(facts(pod("p", "n1", "h2")).updated);
    assert!(!facts(pod("p", "n1", "h1")).updated);
    let generation = pod("p", "n1", "h1")
        .label(crate::daemonset::daemon_pod::TEMPLATE_GENERATION_LABEL, "3")
        .build();
    assert!(DaemonPodFacts::of(&generation, "h2", Some(3)).updated);
    assert!(!DaemonPodFacts::of(&generation, "h2", Some(4)).updated);
}

#[test]
fn oldest_first_puts_scheduled_pods_first_then_age_then_name() {
    let a = facts(pod("a", "n1", "h2").created(5));
    let b = facts(pod("b", "n1", "h2").created(5));
    let young = facts(pod("c", "n1", "h2").created(9));
    let unbound = facts(pod("d", "n1", "h2").created(1).unscheduled());
    let mut all = [(&unbound, "d"), (&young, "c"), (&b, "b"), (&a, "a")];
    all.sort_by(|x, y| oldest_first(*x, *y));
    let order: Vec<&str> = all.iter().map(|(_, n)| *n).collect();
    assert_eq!(order, ["a", "b", "c", "d"]);
}
