use super::*;
use crate::api::daemonset::DaemonSet;
use crate::daemonset::listed::DaemonPod;
use crate::daemonset::node::NodeSummary;
use crate::daemonset::tests::fixtures::*;
use crate::workload::lifecycle::PREPARING_DELETE;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

fn names(round: &Round<'_>, pods: &[usize]) -> Vec<String> {
    pods.iter().map(|p| round.name(*p).to_string()).collect()
}

fn rollout(
    set: &DaemonSet,
    nodes: &[NodeSummary],
    pods: &[DaemonPod],
) -> (Vec<String>, Vec<String>) {
    let round = Round::new(set, "h2", nodes, pods, at(100));
    match rolling_update(&round).unwrap() {
        Rollout::Replace(pods) => (names(&round, &pods), Vec::new()),
        Rollout::Surge { create_on, delete } => (
            names(&round, &delete),
            create_on.into_iter().map(str::to_string).collect(),
        ),
    }
}

fn three_old() -> (Vec<NodeSummary>, Vec<DaemonPod>) {
    (
        vec![node("n1"), node("n2"), node("n3")],
        vec![
            pod("p1", "n1", "h1").listed(),
            pod("p2", "n2", "h1").listed(),
            pod("p3", "n3", "h1").listed(),
        ],
    )
}

#[test]
fn one_old_pod_at_a_time_from_the_highest_node_name() {
    let (nodes, pods) = three_old();
    assert_eq!(rollout(&agent(), &nodes, &pods).0, ["p3"]);
}

#[test]
fn ds16_max_unavailable_rounds_up() {
    let mut set = agent();
    rolling(&mut set).max_unavailable = percent("30%");
    let nodes = [node("n1"), node("n2"), node("n3"), node("n4")];
    let pods: Vec<_> = (1..=4)
        .map(|i| pod(&format!("p{i}"), &format!("n{i}"), "h1").listed())
        .collect();
    assert_eq!(rollout(&set, &nodes, &pods).0, ["p4", "p3"]);
    let round = Round::new(&set, "h2", &nodes, &pods, at(100));
    assert_eq!(
        budget(&round).unwrap(),
        Budget {
            max_unavailable: 2,
            max_surge: 0
        }
    );
}

#[test]
fn neither_budget_reads_as_one_unavailable_and_a_bad_one_is_an_error() {
    let mut set = agent();
    rolling(&mut set).max_unavailable = int(0);
    let (nodes, pods) = three_old();
    let round = Round::new(&set, "h2", &nodes, &pods, at(100));
    assert_eq!(budget(&round).unwrap().max_unavailable, 1);
    rolling(&mut set).max_unavailable = percent("1.5%");
    let round = Round::new(&set, "h2", &nodes, &pods, at(100));
    assert_eq!(
        budget(&round).unwrap_err(),
        "couldn't get unavailable numbers: invalid value for MaxUnavailable: invalid value for IntOrString: invalid value \"1.5%\": strconv.Atoi: parsing \"1.5\": invalid syntax"
    );
}

#[test]
fn unavailable_new_pods_and_missing_pods_use_the_budget() {
    let (nodes, _) = three_old();
    let pods = vec![
        pod("p1", "n1", "h1").listed(),
        pod("p2", "n2", "h1").listed(),
        pod("p3", "n3", "h2").pending().listed(),
    ];
    assert!(rollout(&agent(), &nodes, &pods).0.is_empty());
    // n3 has no pod at all (manage creates it): the same.
    let pods = vec![
        pod("p1", "n1", "h1").listed(),
        pod("p2", "n2", "h1").listed(),
    ];
    assert!(rollout(&agent(), &nodes, &pods).0.is_empty());
    // Once n3's new pod is available, n2 is next.
    let pods = vec![
        pod("p1", "n1", "h1").listed(),
        pod("p2", "n2", "h1").listed(),
        pod("p3", "n3", "h2").listed(),
    ];
    assert_eq!(rollout(&agent(), &nodes, &pods).0, ["p2"]);
}

#[test]
fn an_old_pod_that_is_not_available_is_replaced_and_counts() {
    let (nodes, _) = three_old();
    let pods = vec![
        pod("p1", "n1", "h1").not_ready().listed(),
        pod("p2", "n2", "h1").listed(),
        pod("p3", "n3", "h1").listed(),
    ];
    // Kruise would also take p3; here the replacement uses the one slot.
    assert_eq!(rollout(&agent(), &nodes, &pods).0, ["p1"]);
    let mut set = agent();
    rolling(&mut set).max_unavailable = int(2);
    assert_eq!(rollout(&set, &nodes, &pods).0, ["p1", "p3"]);
}

#[test]
fn back_to_back_updates_within_min_ready_seconds_keep_the_budget() {
    let mut set = agent();
    set.spec.min_ready_seconds = Some(60);
    let (nodes, _) = three_old();
    // The template moved on twice: n3 holds the pod of the update in between, ready but not yet
    // available. It is replaced, and it takes the one slot.
    let pods = vec![
        pod("p1", "n1", "h1").listed(),
        pod("p2", "n2", "h1").listed(),
        pod("p3", "n3", "h1-5").ready_since(90).listed(),
    ];
    assert_eq!(rollout(&set, &nodes, &pods).0, ["p3"]);
}

#[test]
fn pre_deleting_pods_count_and_the_node_is_updating() {
    let (nodes, _) = three_old();
    let pods = vec![
        pod("p1", "n1", "h1").listed(),
        pod("p2", "n2", "h1").listed(),
        pod("p3", "n3", "h1").lifecycle(PREPARING_DELETE).listed(),
    ];
    assert!(rollout(&agent(), &nodes, &pods).0.is_empty());
    // A pre-deleting new pod counts, and its live old pod is no candidate.
    let pods = vec![
        pod("p1", "n1", "h1").listed(),
        pod("p2", "n2", "h1").listed(),
        pod("p3", "n3", "h1").listed(),
        pod("p3new", "n3", "h2")
            .lifecycle(PREPARING_DELETE)
            .listed(),
    ];
    assert!(rollout(&agent(), &nodes, &pods).0.is_empty());
}

#[test]
fn nodes_with_excess_pods_count_and_wait() {
    let (nodes, _) = three_old();
    let pods = vec![
        pod("p1", "n1", "h1").listed(),
        pod("p2", "n2", "h1").listed(),
        pod("p3", "n3", "h1").listed(),
        pod("p3b", "n3", "h1").listed(),
    ];
    assert!(rollout(&agent(), &nodes, &pods).0.is_empty());
}

#[test]
fn ds9_partition_holds_the_lowest_names() {
    let mut set = agent();
    rolling(&mut set).partition = int(1);
    with_previous_desired(&mut set, 3);
    let (nodes, pods) = three_old();
    let round = Round::new(&set, "h2", &nodes, &pods, at(100));
    assert_eq!(
        nodes_to_update(&round).unwrap(),
        (vec!["n3", "n2"], vec!["n1"])
    );
    rolling(&mut set).max_unavailable = int(3);
    assert_eq!(rollout(&set, &nodes, &pods).0, ["p3", "p2"]);
    rolling(&mut set).partition = percent("50%");
    assert_eq!(rollout(&set, &nodes, &pods).0, ["p3", "p2"]);
    rolling(&mut set).partition = int(3);
    assert!(rollout(&set, &nodes, &pods).0.is_empty());
    // Updated nodes come first and count toward what the partition leaves.
    rolling(&mut set).partition = int(1);
    let pods = vec![
        pod("p1", "n1", "h2").listed(),
        pod("p2", "n2", "h1").listed(),
        pod("p3", "n3", "h1").listed(),
    ];
    let round = Round::new(&set, "h2", &nodes, &pods, at(100));
    assert_eq!(
        nodes_to_update(&round).unwrap(),
        (vec!["n1", "n3"], vec!["n2"])
    );
    assert_eq!(rollout(&set, &nodes, &pods).0, ["p3"]);
}

#[test]
fn a_held_node_without_an_available_pod_counts() {
    let mut set = agent();
    rolling(&mut set).partition = int(1);
    with_previous_desired(&mut set, 3);
    let (nodes, _) = three_old();
    let pods = vec![
        pod("p1", "n1", "h1").not_ready().listed(),
        pod("p2", "n2", "h1").listed(),
        pod("p3", "n3", "h1").listed(),
    ];
    assert!(rollout(&set, &nodes, &pods).0.is_empty());
}

#[test]
fn ds10_the_selector_chooses_nodes() {
    let mut set = agent();
    rolling(&mut set).selector = Some(LabelSelector {
        match_labels: Some([("canary".to_string(), "true".to_string())].into()),
        ..Default::default()
    });
    rolling(&mut set).max_unavailable = int(3);
    let nodes = [
        node("n1"),
        labelled("n2", &[("canary", "true")]),
        node("n3"),
    ];
    let (_, pods) = three_old();
    assert_eq!(rollout(&set, &nodes, &pods).0, ["p2"]);
    rolling(&mut set).partition = int(1);
    with_previous_desired(&mut set, 3);
    assert_eq!(rollout(&set, &nodes, &pods).0, ["p2"]);
    // Partition 2 leaves one node to update: still n2. Partition 3 leaves none.
    rolling(&mut set).partition = int(2);
    assert_eq!(rollout(&set, &nodes, &pods).0, ["p2"]);
    rolling(&mut set).partition = int(3);
    assert!(rollout(&set, &nodes, &pods).0.is_empty());
}

#[test]
fn nodes_not_listed_are_not_part_of_the_rollout() {
    let nodes = [node("n1")];
    let pods = vec![
        pod("p1", "n1", "h1").listed(),
        pod("p9", "n9", "h1").listed(),
    ];
    let mut set = agent();
    rolling(&mut set).max_unavailable = int(5);
    assert_eq!(rollout(&set, &nodes, &pods).0, ["p1"]);
}

fn surging() -> DaemonSet {
    let mut set = agent();
    let r = rolling(&mut set);
    r.max_surge = int(1);
    r.max_unavailable = int(0);
    set
}

#[test]
fn ds8_surge_one_node_at_a_time() {
    let (nodes, pods) = three_old();
    assert_eq!(
        rollout(&surging(), &nodes, &pods),
        (vec![], vec!["n3".to_string()])
    );
    // n3's new pod pending: surging 1, nothing more.
    let mut pods2 = pods.clone();
    pods2.push(pod("p3new", "n3", "h2").pending().listed());
    assert_eq!(rollout(&surging(), &nodes, &pods2), (vec![], vec![]));
    // Available: the old one goes (and n2 waits for the next round's count).
    let mut pods3 = pods.clone();
    pods3.push(pod("p3new", "n3", "h2").listed());
    assert_eq!(
        rollout(&surging(), &nodes, &pods3),
        (vec!["p3".to_string()], vec!["n2".to_string()])
    );
}

#[test]
fn surge_creates_at_once_beside_an_old_pod_that_is_not_available() {
    let (nodes, _) = three_old();
    let pods = vec![
        pod("p1", "n1", "h1").not_ready().listed(),
        pod("p2", "n2", "h1").listed(),
        pod("p3", "n3", "h1").listed(),
    ];
    assert_eq!(
        rollout(&surging(), &nodes, &pods),
        (vec![], vec!["n1".to_string(), "n3".to_string()])
    );
    let mut set = surging();
    rolling(&mut set).max_surge = percent("100%");
    assert_eq!(rollout(&set, &nodes, &pods).1, ["n1", "n3", "n2"]);
}
