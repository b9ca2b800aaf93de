use super::*;
use crate::api::daemonset::DaemonSet;
use crate::daemonset::listed::DaemonPod;
use crate::daemonset::node::{NodeSummary, TaintEffect};
use crate::daemonset::round::Round;
use crate::daemonset::tests::fixtures::*;
use crate::workload::lifecycle::PREPARING_DELETE;

fn managed<'a>(
    set: &'a DaemonSet,
    nodes: &'a [NodeSummary],
    pods: &'a [DaemonPod],
    backoff: &FailedPodBackoff,
) -> (Vec<&'a str>, Vec<String>, Vec<String>, Option<Duration>) {
    let round = Round::new(set, "h2", nodes, pods, at(100));
    let out = manage(&round, backoff);
    let deleted = out
        .delete
        .iter()
        .map(|p| round.name(*p).to_string())
        .collect();
    let events = out.events.iter().map(|e| e.message.clone()).collect();
    (out.create_on, deleted, events, out.requeue)
}

#[test]
fn nodes_without_a_pod_get_one_in_name_order() {
    let set = agent();
    let nodes = [node("n3"), node("n1"), node("n2")];
    let pods = [pod("a", "n2", "h2").listed()];
    let (create, delete, _, _) = managed(&set, &nodes, &pods, &Default::default());
    assert_eq!(create, ["n1", "n3"]);
    assert!(delete.is_empty());
}

#[test]
fn terminating_pods_hold_their_node_until_gone() {
    let set = agent();
    let nodes = [node("n1")];
    let pods = [pod("a", "n1", "h2").deleting().listed()];
    let (create, delete, _, _) = managed(&set, &nodes, &pods, &Default::default());
    assert!(create.is_empty() && delete.is_empty());
}

#[test]
fn without_surge_the_oldest_scheduled_pod_stays() {
    let set = agent();
    let nodes = [node("n1")];
    let pods = [
        pod("young", "n1", "h2").created(20).listed(),
        pod("old", "n1", "h1").created(10).listed(),
        pod("unbound", "n1", "h2").created(1).unscheduled().listed(),
        pod("twin-b", "n1", "h1").created(10).listed(),
    ];
    let (create, delete, _, _) = managed(&set, &nodes, &pods, &Default::default());
    assert!(create.is_empty());
    // Scheduled first, then by age, then by name.
    assert_eq!(delete, ["twin-b", "young", "unbound"]);
}

#[test]
fn ds15_failed_pods_are_deleted_once_per_backoff_step() {
    let mut set = agent();
    set.status.as_mut().unwrap().observed_generation = Some(4);
    let nodes = [node("n1")];
    let pods = [pod("f", "n1", "h2").phase("Failed").listed()];
    let mut backoff = FailedPodBackoff::default();
    let (create, delete, events, requeue) = managed(&set, &nodes, &pods, &backoff);
    assert!(create.is_empty(), "the failed pod still holds the node");
    assert_eq!(delete, ["f"]);
    assert_eq!(
        events,
        ["Found failed daemon pod sys/f on node n1, will try to kill it"]
    );
    assert_eq!(requeue, None);
    let round = Round::new(&set, "h2", &nodes, &pods, at(100));
    assert_eq!(manage(&round, &backoff).backoff, ["ds-uid/4/n1"]);

    // Within the step: skipped, and the rest of the step is the requeue.
    backoff.advance("ds-uid/4/n1", at(100));
    backoff.advance("ds-uid/4/n1", at(100));
    let (_, delete, events, requeue) = managed(&set, &nodes, &pods, &backoff);
    assert!(delete.is_empty() && events.is_empty());
    assert_eq!(requeue, Some(Duration::from_secs(2)));
}

#[test]
fn two_failed_pods_on_one_node_count_one_step() {
    let set = agent();
    let nodes = [node("n1")];
    let pods = [
        pod("f1", "n1", "h2").phase("Failed").listed(),
        pod("f2", "n1", "h2").phase("Failed").listed(),
    ];
    let (_, delete, events, requeue) = managed(&set, &nodes, &pods, &Default::default());
    assert_eq!(delete, ["f1"]);
    assert_eq!(events.len(), 1);
    assert_eq!(requeue, Some(backoff::INITIAL));
}

#[test]
fn pre_deleting_pods_are_submitted_again() {
    let set = agent();
    let nodes = [node("n1")];
    let pods = [pod("p", "n1", "h1").lifecycle(PREPARING_DELETE).listed()];
    let (create, delete, _, _) = managed(&set, &nodes, &pods, &Default::default());
    assert_eq!(delete, ["p"]);
    assert!(
        create.is_empty(),
        "without surge the node waits for the pod to go"
    );
}

#[test]
fn nodes_that_stop_qualifying_lose_their_live_pods() {
    let mut set = agent();
    set.spec.template.spec.as_mut().unwrap().node_selector =
        Some([("role".to_string(), "agent".to_string())].into());
    let nodes = [
        labelled("kept", &[("role", "agent")]),
        node("dropped"),
        // NoSchedule added later: no new pod, but the running one stays.
        {
            let mut n = tainted("tainted", "dedicated", TaintEffect::NoSchedule);
            n.labels.insert("role".into(), "agent".into());
            n
        },
        {
            let mut n = tainted("evicting", "gone", TaintEffect::NoExecute);
            n.labels.insert("role".into(), "agent".into());
            n
        },
    ];
    let pods = [
        pod("a", "kept", "h2").listed(),
        pod("b", "dropped", "h2").listed(),
        pod("b2", "dropped", "h2").deleting().listed(),
        pod("c", "tainted", "h2").listed(),
        pod("d", "evicting", "h2").listed(),
    ];
    let (create, delete, _, _) = managed(&set, &nodes, &pods, &Default::default());
    assert!(create.is_empty());
    assert_eq!(delete, ["b", "d"]);
}

#[test]
fn unscheduled_pods_meant_for_nodes_that_are_gone_are_deleted() {
    let set = agent();
    let nodes = [node("n1")];
    let pods = [
        pod("a", "n1", "h2").listed(),
        pod("lost", "n9", "h2").unscheduled().listed(),
        // Bound pods of a gone node are the pod garbage collector's.
        pod("bound", "n9", "h2").listed(),
    ];
    let (_, delete, _, _) = managed(&set, &nodes, &pods, &Default::default());
    assert_eq!(delete, ["lost"]);
}

fn surging() -> DaemonSet {
    let mut set = agent();
    let r = rolling(&mut set);
    r.max_surge = int(1);
    r.max_unavailable = int(0);
    set
}

#[test]
fn surge_keeps_the_oldest_new_and_oldest_old_then_swaps_when_the_new_is_available() {
    let mut set = surging();
    set.spec.min_ready_seconds = Some(30);
    let nodes = [node("n1")];
    // New pod ready since 80: available only after 110 (now is 100).
    let pods = [
        pod("old", "n1", "h1").created(1).listed(),
        pod("old2", "n1", "h1").created(2).listed(),
        pod("new", "n1", "h2").created(3).ready_since(80).listed(),
        pod("new2", "n1", "h2").created(4).pending().listed(),
    ];
    let (create, delete, _, requeue) = managed(&set, &nodes, &pods, &Default::default());
    assert!(create.is_empty());
    assert_eq!(delete, ["old2", "new2"]);
    assert_eq!(requeue, Some(Duration::from_secs(10)));

    set.spec.min_ready_seconds = Some(10);
    let (_, delete, _, requeue) = managed(&set, &nodes, &pods, &Default::default());
    assert_eq!(delete, ["old2", "new2", "old"]);
    assert_eq!(requeue, None);
}

#[test]
fn surge_drops_an_old_pod_that_is_not_ready_and_creates_beside_pre_deleting_ones() {
    let set = surging();
    let nodes = [node("n1"), node("n2")];
    let pods = [
        pod("old", "n1", "h1").created(1).not_ready().listed(),
        pod("new", "n1", "h2").created(3).pending().listed(),
        pod("going", "n2", "h1")
            .lifecycle(PREPARING_DELETE)
            .listed(),
    ];
    let (create, delete, _, _) = managed(&set, &nodes, &pods, &Default::default());
    assert_eq!(delete, ["old", "going"]);
    assert_eq!(create, ["n2"], "a surging node needs one live pod");
}

#[test]
fn partitioned_creation_waits_for_the_partition() {
    let mut set = agent();
    rolling(&mut set).partition = int(2);
    with_previous_desired(&mut set, 4);
    let nodes = [node("n1"), node("n2"), node("n3"), node("n4")];
    let pods = [pod("a", "n4", "h2").listed()];
    // Without partitioned scaling every node gets its pod.
    let (create, _, _, _) = managed(&set, &nodes, &pods, &Default::default());
    assert_eq!(create, ["n1", "n2", "n3"]);
    set.spec.scale_strategy = Some(crate::api::daemonset::DaemonSetScaleStrategy {
        partitioned_scaling: Some(true),
    });
    // desired 4 − 1 new − partition 2 = 1.
    let (create, _, _, _) = managed(&set, &nodes, &pods, &Default::default());
    assert_eq!(create, ["n1"]);
    rolling(&mut set).partition = int(9);
    let (create, _, _, _) = managed(&set, &nodes, &pods, &Default::default());
    assert!(create.is_empty());
    rolling(&mut set).partition = percent("50%");
    let (create, _, _, _) = managed(&set, &nodes, &pods, &Default::default());
    assert_eq!(create, ["n1"]);
    // Partition 0: no limit.
    rolling(&mut set).partition = int(0);
    let (create, _, _, _) = managed(&set, &nodes, &pods, &Default::default());
    assert_eq!(create.len(), 3);
}

#[test]
fn surge_keeps_an_available_old_pod_over_an_older_one_that_is_not() {
    let mut set = surging();
    set.spec.min_ready_seconds = Some(10);
    let nodes = [node("n1"), node("n2")];
    // Updates back to back: neither pod is at the round's hash.
    let pods = [
        pod("oldest", "n1", "h0").created(1).not_ready().listed(),
        pod("newer", "n1", "h1").created(2).listed(),
        // Ready, but for 5 s only: the available one stays.
        pod("young-ready", "n2", "h0")
            .created(1)
            .ready_since(95)
            .listed(),
        pod("available", "n2", "h1").created(2).listed(),
    ];
    let (create, delete, _, _) = managed(&set, &nodes, &pods, &Default::default());
    assert_eq!(delete, ["oldest", "young-ready"]);
    assert!(create.is_empty());
}
