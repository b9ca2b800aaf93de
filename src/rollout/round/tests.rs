use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Pod;
use serde_json::json;

use super::*;
use crate::api::keys;
use crate::rollout::engine::tests::two_priority_upgrade;
use crate::rollout::{Halt, PodFacts};

fn facts(ready: bool, consistent: bool) -> PodFacts {
    PodFacts {
        ready,
        consistent,
        ..Default::default()
    }
}

fn status(matched: i32, updated: i32, updated_ready: Option<i32>) -> SidecarSetStatus {
    SidecarSetStatus {
        matched_pods: matched,
        updated_pods: updated,
        ready_pods: matched,
        updated_ready_pods: updated_ready,
        ..Default::default()
    }
}

fn plan(status: SidecarSetStatus, facts: Vec<PodFacts>, upgrade: Vec<usize>) -> RoundPlan {
    RoundPlan {
        status,
        halted: None,
        upgrade,
        not_upgradable: Vec::new(),
        reset_idle: Vec::new(),
        facts,
    }
}

fn mesh(hash: Option<&str>, stored: Option<SidecarSetStatus>) -> SidecarSet {
    let mut set = SidecarSet::new("mesh", Default::default());
    set.metadata.annotations =
        hash.map(|h| BTreeMap::from([(keys::SIDECARSET_HASH.to_string(), h.to_string())]));
    set.status = stored;
    set
}

/// A pod whose in-place state names `revision`, with a later batch still waiting or not.
fn pod(revision: Option<&str>, next_batch: bool) -> Arc<Pod> {
    let mut pod = Pod::default();
    if let Some(revision) = revision {
        let mut state = json!({"revision": revision});
        if next_batch {
            state["nextContainerImages"] = json!({"agent": "agent:v2"});
        }
        pod.metadata.annotations = Some(BTreeMap::from([(
            keys::INPLACE_UPDATE_STATE.to_string(),
            state.to_string(),
        )]));
    }
    Arc::new(pod)
}

#[test]
fn the_status_is_written_only_when_it_changed() {
    let seen = status(2, 1, Some(1));
    let unchanged = round_actions(
        &mesh(None, Some(seen.clone())),
        &[pod(None, false), pod(None, false)],
        plan(seen.clone(), vec![facts(true, true); 2], vec![]),
    );
    assert_eq!(unchanged.status, None);
    let first = round_actions(
        &mesh(None, None),
        &[pod(None, false), pod(None, false)],
        plan(seen.clone(), vec![facts(true, true); 2], vec![]),
    );
    assert_eq!(first.status, Some(seen));
}

#[test]
fn pods_of_this_revision_are_driven_and_between_batches_hold_budget() {
    let matched = [
        pod(Some("mesh-h2"), true),
        pod(Some("mesh-h2"), false),
        pod(Some("web-1"), true),
        pod(None, false),
        pod(None, false),
    ];
    let round = |hash| {
        round_actions(
            &mesh(hash, None),
            &matched,
            plan(
                status(5, 2, Some(2)),
                vec![facts(true, true); 5],
                vec![3, 4],
            ),
        )
    };
    let actions = round(Some("h2"));
    assert_eq!(actions.revision.as_deref(), Some("mesh-h2"));
    assert_eq!(actions.drive, vec![0, 1]);
    // Pod 0 is available between two batches: one of the two upgrades waits.
    assert_eq!(actions.upgrade, vec![3]);
    // Without a hash there is no revision: nothing is driven, nothing held.
    let actions = round(None);
    assert_eq!(actions.revision, None);
    assert!(actions.drive.is_empty());
    assert_eq!(actions.upgrade, vec![3, 4]);
}

#[test]
fn a_budget_hold_of_everything_upgrades_nothing() {
    let matched = [pod(Some("mesh-h2"), true), pod(None, false)];
    let actions = round_actions(
        &mesh(Some("h2"), None),
        &matched,
        plan(status(2, 1, Some(1)), vec![facts(true, true); 2], vec![1]),
    );
    assert!(actions.upgrade.is_empty());
    // The engine moving the held pod on looks again; nothing else does.
    assert_eq!(actions.requeue_after(true), Some(IN_FLIGHT_REQUEUE));
    assert_eq!(actions.requeue_after(false), None);
}

/// Only a round that writes to pods (or an engine still driving one) looks again on a timer; a
/// rollout that waits on its pods waits for a change of them, so an idle process with thousands
/// of such sets does nothing.
#[test]
fn the_round_looks_again_only_after_writing_to_pods() {
    let settled = |status, halted| {
        let mut plan = plan(status, vec![facts(true, true)], vec![]);
        plan.halted = halted;
        round_actions(&mesh(None, None), &[pod(None, false)], plan)
    };
    let done = settled(status(1, 1, Some(1)), Some(Halt::Complete));
    assert_eq!(done.requeue_after(false), None);
    assert_eq!(done.requeue_after(true), Some(IN_FLIGHT_REQUEUE));
    // Updated but not yet ready again: the pod's readiness changing reconciles the set.
    let not_ready = settled(status(1, 1, None), Some(Halt::Complete));
    assert_eq!(not_ready.requeue_after(false), None);
    // Pods left to update, none of them upgradable now (budget, readiness): the same.
    let waiting = settled(status(1, 0, None), None);
    assert_eq!(waiting.requeue_after(false), None);
    // A pod left to update that needs a recreate: its recreate reconciles the set.
    let mut recreate = plan(status(1, 0, None), vec![facts(true, true)], vec![]);
    recreate.not_upgradable = vec![0];
    let recreate = round_actions(&mesh(None, None), &[pod(None, false)], recreate);
    assert_eq!(recreate.not_upgradable, vec![0]);
    assert_eq!(recreate.requeue_after(false), None);
    // Pods left to update, but the rollout is paused.
    let paused = settled(status(1, 0, None), Some(Halt::Paused));
    assert_eq!(paused.requeue_after(false), None);

    let mut resetting = plan(status(1, 1, Some(1)), vec![facts(true, true)], vec![]);
    resetting.halted = Some(Halt::ResettingIdleCopies);
    resetting.reset_idle = vec![0];
    let resetting = round_actions(&mesh(None, None), &[pod(None, false)], resetting);
    assert_eq!(resetting.reset_idle, vec![0]);
    assert_eq!(resetting.requeue_after(false), Some(IN_FLIGHT_REQUEUE));

    let upgrading = round_actions(
        &mesh(None, None),
        &[pod(None, false)],
        plan(status(1, 0, None), vec![facts(true, true)], vec![0]),
    );
    assert_eq!(upgrading.upgrade, vec![0]);
    assert_eq!(upgrading.requeue_after(false), Some(IN_FLIGHT_REQUEUE));
}

#[test]
fn pods_between_batches_hold_budget_from_ready_candidates_only() {
    let ready = |i: usize| i != 1;
    assert_eq!(
        hold_budget_for_batches(&[0, 1, 2, 3], ready, 0),
        vec![0, 1, 2, 3]
    );
    assert_eq!(
        hold_budget_for_batches(&[0, 1, 2, 3], ready, 1),
        vec![0, 1, 2]
    );
    assert_eq!(hold_budget_for_batches(&[0, 1, 2, 3], ready, 3), vec![1]);
    assert_eq!(hold_budget_for_batches(&[0, 1, 2, 3], ready, 9), vec![1]);
    assert!(hold_budget_for_batches(&[], ready, 1).is_empty());
}

#[test]
fn events_name_the_images_and_the_pod() {
    let upgrade = two_priority_upgrade();
    let set = mesh(Some("h2"), None);
    let upgraded = upgraded_event(&set, &upgrade);
    assert_eq!(upgraded.about, Subject::Pod);
    assert_eq!(upgraded.type_, EventType::Normal);
    assert_eq!(upgraded.reason, "SidecarSetUpgrade");
    assert_eq!(
        upgraded.note,
        "sidecarset mesh upgrades proxy=proxy:v2, agent=agent:v2"
    );
    let [on_pod, on_set] = not_upgradable_events(&set, "default/web");
    assert_eq!(
        (on_pod.about, on_pod.type_, on_pod.reason),
        (Subject::Pod, EventType::Warning, "NotUpgradablePods")
    );
    assert_eq!(on_set.note, "pod default/web cannot be upgraded in place");
    assert_eq!(on_set.about, Subject::SidecarSet);
    assert!(
        [upgraded, on_pod, on_set]
            .iter()
            .all(|e| e.action == "Upgrade")
    );
}

#[test]
fn idle_copy_resets_are_told_on_the_pod_in_openkruise_words() {
    let done = idle_reset_event();
    assert_eq!(
        (done.about, done.type_, done.reason, done.note.as_str()),
        (
            Subject::Pod,
            EventType::Normal,
            "ResetContainerSucceed",
            "reset sidecar container image empty successfully"
        )
    );
    let failed = idle_reset_failed_event("the apiserver said no");
    assert_eq!(
        (
            failed.about,
            failed.type_,
            failed.reason,
            failed.note.as_str()
        ),
        (
            Subject::Pod,
            EventType::Warning,
            "ResetContainerFailed",
            "reset sidecar container image empty failed: the apiserver said no"
        )
    );
}
