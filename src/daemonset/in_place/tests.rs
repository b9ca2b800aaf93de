use super::*;
use crate::api::daemonset::{DaemonSet, IN_PLACE_IF_POSSIBLE};
use crate::api::keys;
use crate::daemonset::round::Round;
use crate::daemonset::tests::fixtures::*;
use crate::podmarks::inplace_state::read_state;
use crate::workload::Purpose;
use crate::workload::lifecycle::LIFECYCLE_STATE;
use k8s_openapi::api::core::v1::Pod;
use serde_json::json;

fn in_place_agent() -> DaemonSet {
    let mut set = agent();
    rolling(&mut set).rolling_update_type = Some(IN_PLACE_IF_POSSIBLE.into());
    set
}

#[test]
fn ds13_an_image_change_starts_in_place_with_the_bare_hash() {
    let v1 = revision_of(&in_place_agent(), 1);
    let set = with_image(in_place_agent(), "agent:v2");
    let v2 = revision_of(&set, 2);
    let (h1, h2) = (revision_hash(&v1), revision_hash(&v2));
    let nodes = [node("n1")];
    let pods = [pod("p1", "n1", h1).gate(Some("True")).listed()];
    let round = Round::new(&set, h2, &nodes, &pods, at(100));
    let mut out = Vec::new();
    let delete = start_updates(&round, &[v1.clone(), v2.clone()], vec![0], &mut out);
    assert!(delete.is_empty());
    let [
        Action::WritePod {
            writes, purpose, ..
        },
    ] = out.as_slice()
    else {
        panic!("{out:?}")
    };
    assert_eq!(
        *purpose,
        Purpose::InPlace {
            revision: h2.to_string()
        }
    );
    assert_eq!(writes.len(), 2);
    assert!(writes[0].status);
    let not_ready = &*writes[0].pod;
    let condition = |p: &Pod, t: &str| {
        p.status
            .as_ref()
            .unwrap()
            .conditions
            .as_ref()
            .unwrap()
            .iter()
            .find(|c| c.type_ == t)
            .unwrap()
            .status
            .clone()
    };
    assert_eq!(condition(not_ready, keys::INPLACE_UPDATE_READY), "False");
    assert!(!writes[1].status);
    let started = &*writes[1].pod;
    assert_eq!(
        started.metadata.labels.as_ref().unwrap()[keys::CONTROLLER_REVISION_HASH],
        h2
    );
    assert_eq!(
        started.spec.as_ref().unwrap().containers[0]
            .image
            .as_deref(),
        Some("agent:v2")
    );
    let state = read_state(started).unwrap().unwrap();
    assert_eq!(state.revision, h2);
    assert!(state.update_images);
    // The core's start marks the pod Updating (the refresh moves it on when done).
    assert_eq!(
        started.metadata.labels.as_ref().unwrap()[LIFECYCLE_STATE],
        crate::workload::lifecycle::UPDATING
    );
}

#[test]
fn ds14_what_cannot_be_done_in_place_is_deleted() {
    let v1 = revision_of(&in_place_agent(), 1);
    let mut env = in_place_agent();
    env.spec.template.spec.as_mut().unwrap().containers[0].env = Some(vec![
        serde_json::from_value(json!({"name": "A", "value": "1"})).unwrap(),
    ]);
    let v2 = revision_of(&env, 2);
    let h1 = revision_hash(&v1).to_string();
    let nodes = [node("n1"), node("n2"), node("n3")];
    let pods = [
        pod("env", "n1", &h1).gate(Some("True")).listed(),
        // Created while the type was Standard: no gate.
        pod("no-gate", "n2", &h1).listed(),
        // At a revision that is not listed.
        pod("stranger", "n3", "zzz").gate(Some("True")).listed(),
    ];
    let round = Round::new(&env, revision_hash(&v2), &nodes, &pods, at(100));
    let mut out = Vec::new();
    let delete = start_updates(&round, &[v1.clone(), v2.clone()], vec![0, 1, 2], &mut out);
    assert!(out.is_empty());
    assert_eq!(delete, [0, 1, 2]);

    // An image-only change still deletes the pod without the gate.
    let set = with_image(in_place_agent(), "agent:v2");
    let v2 = revision_of(&set, 2);
    let round = Round::new(&set, revision_hash(&v2), &nodes, &pods, at(100));
    let mut out = Vec::new();
    assert_eq!(
        start_updates(&round, &[v1.clone(), v2.clone()], vec![1], &mut out),
        [1]
    );
}

#[test]
fn beyond_the_burst_pods_wait() {
    let v1 = revision_of(&in_place_agent(), 1);
    let mut set = with_image(in_place_agent(), "agent:v2");
    set.spec.burst_replicas = int(1);
    let v2 = revision_of(&set, 2);
    let h1 = revision_hash(&v1).to_string();
    let nodes = [node("n1"), node("n2")];
    let pods = [
        pod("p1", "n1", &h1).gate(Some("True")).listed(),
        pod("p2", "n2", &h1).gate(Some("True")).listed(),
    ];
    let round = Round::new(&set, revision_hash(&v2), &nodes, &pods, at(100));
    let mut out = Vec::new();
    assert!(start_updates(&round, &[v1.clone(), v2.clone()], vec![0, 1], &mut out).is_empty());
    assert_eq!(out.len(), 1);
}

#[test]
fn refresh_marks_a_finished_update_ready_and_leaves_pods_at_rest_alone() {
    let set = in_place_agent();
    let v1 = revision_of(&set, 1);
    let h1 = revision_hash(&v1).to_string();
    let nodes = [node("n1"), node("n2")];
    let pods = [
        // Gate without a condition: the first refresh sets it True.
        pod("fresh", "n1", &h1).gate(None).listed(),
        pod("rest", "n2", &h1).gate(Some("True")).listed(),
    ];
    let round = Round::new(&set, &h1, &nodes, &pods, at(100));
    let mut out = Vec::new();
    let mut requeue = None;
    assert!(refresh(&round, &[v1], &mut out, &mut requeue));
    let [
        Action::WritePod {
            before,
            writes,
            purpose,
        },
    ] = out.as_slice()
    else {
        panic!("{out:?}")
    };
    assert_eq!(before.metadata.name.as_deref(), Some("fresh"));
    assert_eq!(*purpose, Purpose::Refresh);
    assert!(writes[0].status);
    assert_eq!(requeue, None);
}
