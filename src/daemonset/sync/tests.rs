use super::*;
use crate::api::cloneset::{Lifecycle, LifecycleHook};
use crate::daemonset::listed::DaemonPod;
use crate::daemonset::round::Round;
use crate::daemonset::tests::fixtures::*;
use crate::workload::lifecycle::LIFECYCLE_STATE;

fn hooked_set() -> crate::api::daemonset::DaemonSet {
    let mut set = agent();
    set.spec.lifecycle = Some(Lifecycle {
        pre_delete: Some(LifecycleHook {
            labels_handler: Some(
                [("example.io/block-deleting".to_string(), "true".to_string())].into(),
            ),
            finalizers_handler: Some(vec!["example.io/drain".into()]),
            mark_pod_not_ready: None,
        }),
        ..Default::default()
    });
    set
}

fn describe(actions: &[Action]) -> Vec<String> {
    actions
        .iter()
        .map(|a| match a {
            Action::CreatePod { pod, revision } => format!(
                "create {} at {revision}",
                crate::daemonset::daemon_pod::target_node(pod).unwrap()
            ),
            Action::DeletePod { name } => format!("delete {name}"),
            Action::WritePod { before, writes, .. } => {
                let after = &*writes[0].pod;
                format!(
                    "{} -> {}",
                    before.metadata.name.as_deref().unwrap(),
                    after.metadata.labels.as_ref().unwrap()[LIFECYCLE_STATE]
                )
            }
            Action::Event(e) => e.message.clone(),
            other => panic!("a DaemonSet plans no {other:?}"),
        })
        .collect()
}

#[test]
fn without_a_hook_pods_are_deleted_and_nodes_get_pods() {
    let set = agent();
    let nodes = [node("n1"), node("n2")];
    let pods = [pod("a", "n1", "h1").listed()];
    let round = Round::new(&set, "h2", &nodes, &pods, at(100));
    let mut out = Vec::new();
    assert!(sync_nodes(&round, vec![0], vec!["n2"], &mut out));
    assert_eq!(describe(&out), ["create n2 at h2", "delete a"]);
    assert!(!sync_nodes(&round, vec![], vec![], &mut Vec::new()));
}

#[test]
fn a_hooked_pod_goes_to_preparing_delete_once_and_an_unhooked_one_is_deleted() {
    let set = hooked_set();
    let nodes = [node("n1")];
    let pods = [
        pod("labelled", "n1", "h1")
            .label("example.io/block-deleting", "true")
            .listed(),
        pod("finalized", "n1", "h1")
            .finalizer("example.io/drain")
            .listed(),
        pod("other-value", "n1", "h1")
            .label("example.io/block-deleting", "false")
            .listed(),
        pod("waiting", "n1", "h1")
            .label("example.io/block-deleting", "true")
            .lifecycle(PREPARING_DELETE)
            .listed(),
        pod("released", "n1", "h1")
            .lifecycle(PREPARING_DELETE)
            .listed(),
    ];
    let round = Round::new(&set, "h2", &nodes, &pods, at(100));
    let mut out = Vec::new();
    sync_nodes(&round, (0..5).collect(), vec![], &mut out);
    assert_eq!(
        describe(&out),
        [
            "labelled -> PreparingDelete",
            "finalized -> PreparingDelete",
            "delete other-value",
            "delete released",
        ]
    );
    let Action::WritePod {
        writes, purpose, ..
    } = &out[0]
    else {
        unreachable!()
    };
    assert_eq!(*purpose, Purpose::ScaleLifecycle);
    assert!(!writes[0].status);
    let after = &*writes[0].pod;
    assert_eq!(
        after.metadata.annotations.as_ref().unwrap()
            [crate::workload::lifecycle::LIFECYCLE_TIMESTAMP],
        crate::workload::rfc3339(at(100))
    );
}

#[test]
fn a_hook_needs_the_whole_pod() {
    let set = hooked_set();
    let nodes = [node("n1")];
    let whole = pod("a", "n1", "h1").listed();
    let pods = [DaemonPod::summary(
        whole.summary.clone(),
        whole.node.clone(),
    )];
    let round = Round::new(&set, "h2", &nodes, &pods, at(100));
    let mut out = Vec::new();
    sync_nodes(&round, vec![0], vec![], &mut out);
    assert!(out.is_empty());
    assert_eq!(round.whole_pods.needed(), ["a"]);
}

#[test]
fn bursts_cut_both_lists() {
    let mut set = agent();
    set.spec.burst_replicas = int(2);
    let nodes: Vec<_> = (1..=5).map(|i| node(&format!("n{i}"))).collect();
    let pods: Vec<_> = (1..=3)
        .map(|i| pod(&format!("p{i}"), &format!("n{i}"), "h1").listed())
        .collect();
    let round = Round::new(&set, "h2", &nodes, &pods, at(100));
    let mut out = Vec::new();
    sync_nodes(&round, vec![0, 1, 2], vec!["n4", "n5", "n1"], &mut out);
    assert_eq!(
        describe(&out),
        [
            "create n4 at h2",
            "create n5 at h2",
            "delete p1",
            "delete p2"
        ]
    );
}
