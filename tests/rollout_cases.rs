//! SidecarSet rollout cases from `shared/spec/inplace-rollout-validation-certs.md` §5.5
//! (GetNextUpgradePods) and the worked examples of §2.13, plus one test per rule of §2.4–§2.10
//! and property tests over simulated rollouts.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kruise_webhook::api::{
    SidecarSet, SidecarSetStatus, SidecarSetUpdateStrategy, UpdateScatterTerm, keys,
};
use kruise_webhook::k8s::selector::Labels;
use kruise_webhook::podmarks::{PodSummary, PodView};
use kruise_webhook::rollout::{
    self, Halt, PodFacts, RolloutError, RoundPlan, reset_idle_copies, upgradable_condition,
    upgrade_order, upgrade_pod,
};
use kruise_webhook::updatesort::order::default_order;
use kruise_webhook::updatesort::scatter::expand_terms;
use proptest::prelude::*;
use serde_json::{Value, json};
use support::SidecarSetBuilder;

mod support;

// ---------------------------------------------------------------------------------------------
// Fixture (§5.5): SidecarSet `test-sidecarset`, hash `bbb`, without-image `without-aaa`, one
// sidecar `test-sidecar` at `test-image:v2`; pods run `nginx` + `test-sidecar`.

const SET: &str = "test-sidecarset";
const NOW: &str = "2026-11-22T05:00:00Z";
const OLD_IMAGE: &str = "test-image:v1";
const NEW_IMAGE: &str = "test-image:v2";
const OLD_IMAGE_ID: &str = "docker-pullable://test-image@sha256:v1";
const NEW_IMAGE_ID: &str = "docker-pullable://test-image@sha256:v2";

fn sidecarset(strategy: Value) -> SidecarSet {
    let strategy: SidecarSetUpdateStrategy =
        serde_json::from_value(strategy).expect("fixture updateStrategy");
    SidecarSetBuilder::new(SET)
        .generation(7)
        .resource_version("4242")
        .annotation(keys::SIDECARSET_HASH, "bbb")
        .annotation(keys::SIDECARSET_HASH_WITHOUT_IMAGE, "without-aaa")
        .selector(&[("app", "nginx")])
        .container("test-sidecar", NEW_IMAGE)
        .update_strategy(strategy)
        .status(SidecarSetStatus {
            latest_revision: Some("test-sidecarset-rev2".into()),
            collision_count: Some(0),
            ..Default::default()
        })
        .build()
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Stage {
    /// Old sidecar, hash `aaa`.
    Old,
    /// Spec at v2 and hash `bbb`, the runtime still on v1: updated but not consistent.
    Upgraded,
    /// Upgraded and the runtime switched: updated, consistent.
    UpgradedAndReady,
}

fn hash_entry(hash: &str) -> String {
    json!({SET: {"updateTimestamp": "2026-01-01T00:00:00Z", "hash": hash, "sidecarSetName": SET,
        "sidecarList": ["test-sidecar"]}})
    .to_string()
}

fn pod(index: usize, stage: Stage) -> Pod {
    let (spec_image, hash) = match stage {
        Stage::Old => (OLD_IMAGE, "aaa"),
        _ => (NEW_IMAGE, "bbb"),
    };
    let (status_image, image_id) = match stage {
        Stage::UpgradedAndReady => (NEW_IMAGE, NEW_IMAGE_ID),
        _ => (OLD_IMAGE, OLD_IMAGE_ID),
    };
    let mut annotations = json!({
        keys::SIDECARSET_INJECTED_LIST: SET,
        keys::SIDECARSET_HASH: hash_entry(hash),
        keys::SIDECARSET_HASH_WITHOUT_IMAGE: hash_entry("without-aaa"),
    });
    if stage != Stage::Old {
        annotations[keys::SIDECARSET_INPLACE_UPDATE_STATE] = Value::String(
            json!({SET: {"revision": "bbb",
            "updateTimestamp": "2026-01-01T00:00:00Z",
            "lastContainerStatuses": {"test-sidecar": {"imageID": OLD_IMAGE_ID}}}})
            .to_string(),
        );
    }
    serde_json::from_value(json!({
        "metadata": {
            "name": format!("pod-{index}"),
            "namespace": "default",
            "labels": {"app": "nginx"},
            "annotations": annotations,
            "creationTimestamp": created_at(index),
        },
        "spec": {
            "nodeName": "node-1",
            "containers": [
                {"name": "nginx", "image": "nginx:1.25"},
                {"name": "test-sidecar", "image": spec_image, "env": [{"name": "KEEP", "value": "me"}]},
            ],
        },
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True"}],
            "containerStatuses": [
                status("nginx", "nginx:1.25", "docker-pullable://nginx@sha256:n"),
                status("test-sidecar", status_image, image_id),
            ],
        },
    }))
    .expect("fixture pod")
}

fn status(name: &str, image: &str, image_id: &str) -> Value {
    json!({"name": name, "image": image, "imageID": image_id, "ready": true, "restartCount": 0,
        "state": {"running": {}}})
}

fn created_at(index: usize) -> String {
    format!(
        "2026-01-01T{:02}:{:02}:{:02}Z",
        index / 3600 % 24,
        index / 60 % 60,
        index % 60
    )
}

fn set_not_ready(pod: &mut Pod) {
    if let Some(conditions) = pod.status.as_mut().and_then(|s| s.conditions.as_mut()) {
        for condition in conditions.iter_mut().filter(|c| c.type_ == "Ready") {
            condition.status = "False".into();
        }
    }
}

fn set_label(pod: &mut Pod, key: &str, value: &str) {
    pod.metadata
        .labels
        .get_or_insert_with(BTreeMap::new)
        .insert(key.into(), value.into());
}

/// `total` pods, the first `upgraded` of them upgraded and the first `consistent` of those
/// consistent, shuffled deterministically (the upstream cases randomise pod order).
fn population(total: usize, upgraded: usize, consistent: usize) -> Vec<Pod> {
    let mut pods: Vec<Pod> = (0..total)
        .map(|i| {
            let stage = if i < consistent {
                Stage::UpgradedAndReady
            } else if i < upgraded {
                Stage::Upgraded
            } else {
                Stage::Old
            };
            pod(i, stage)
        })
        .collect();
    fastrand::Rng::with_seed(total as u64 * 31 + upgraded as u64).shuffle(&mut pods);
    pods
}

// Every case plans on the pods and on their controller summaries, and both must agree.

fn summaries(pods: &[Arc<Pod>]) -> Vec<Arc<PodSummary>> {
    pods.iter().map(|p| Arc::new(PodSummary::of(p))).collect()
}

fn plan_round(set: &SidecarSet, pods: &[Arc<Pod>]) -> RoundPlan {
    let plan = rollout::plan_round(set, pods);
    assert_eq!(
        plan,
        rollout::plan_round(set, &summaries(pods)),
        "summaries"
    );
    plan
}

fn facts_of(set: &SidecarSet, pods: &[Arc<Pod>]) -> Vec<PodFacts> {
    let facts = rollout::facts_of(set, pods);
    assert_eq!(facts, rollout::facts_of(set, &summaries(pods)), "summaries");
    facts
}

fn matched_pods<'n>(
    set: &SidecarSet,
    pods: &[Arc<Pod>],
    namespace_labels: impl Fn(&str) -> Option<&'n Labels>,
) -> Result<Vec<Arc<Pod>>, RolloutError> {
    let matched = rollout::matched_pods(set, pods, &namespace_labels)?;
    let from_summaries = rollout::matched_pods(set, &summaries(pods), &namespace_labels)?;
    let matched_names: Vec<&str> = matched.iter().map(|p| name(p)).collect();
    let summary_names: Vec<&str> = from_summaries.iter().map(|p| p.name()).collect();
    assert_eq!(matched_names, summary_names, "summaries");
    Ok(matched)
}

fn shared(pods: Vec<Pod>) -> Vec<Arc<Pod>> {
    pods.into_iter().map(Arc::new).collect()
}

fn name(pod: &Pod) -> &str {
    pod.metadata.name.as_deref().unwrap_or("")
}

fn names(pods: &[Arc<Pod>], indexes: &[usize]) -> Vec<String> {
    indexes
        .iter()
        .map(|&i| name(&pods[i]).to_string())
        .collect()
}

// ---------------------------------------------------------------------------------------------
// §5.5 GetNextUpgradePods

struct Case {
    total: usize,
    upgraded: usize,
    consistent: usize,
    strategy: Value,
    upgrade: usize,
    not_upgradable: usize,
}

fn run_case(case: Case) {
    let set = sidecarset(case.strategy);
    let pods = shared(population(case.total, case.upgraded, case.consistent));
    let plan = plan_round(&set, &pods);
    assert_eq!(plan.halted, None);
    assert_eq!(plan.upgrade.len(), case.upgrade, "pods to upgrade");
    assert_eq!(
        plan.not_upgradable.len(),
        case.not_upgradable,
        "not upgradable"
    );
}

#[test]
fn ss01_max_unavailable_int() {
    run_case(Case {
        total: 100,
        upgraded: 30,
        consistent: 26,
        strategy: json!({"maxUnavailable": 10}),
        upgrade: 6,
        not_upgradable: 0,
    });
}

#[test]
fn ss02_max_unavailable_percent() {
    run_case(Case {
        total: 1000,
        upgraded: 300,
        consistent: 260,
        strategy: json!({"maxUnavailable": "10%"}),
        upgrade: 60,
        not_upgradable: 0,
    });
}

#[test]
fn ss03_budget_exhausted() {
    run_case(Case {
        total: 1000,
        upgraded: 300,
        consistent: 250,
        strategy: json!({"maxUnavailable": "5%"}),
        upgrade: 0,
        not_upgradable: 0,
    });
}

#[test]
fn ss04_budget_larger_than_waiting() {
    run_case(Case {
        total: 100,
        upgraded: 30,
        consistent: 27,
        strategy: json!({"maxUnavailable": 100}),
        upgrade: 70,
        not_upgradable: 0,
    });
}

#[test]
fn ss05_partition_int_limits() {
    run_case(Case {
        total: 1000,
        upgraded: 800,
        consistent: 760,
        strategy: json!({"partition": 180, "maxUnavailable": 100}),
        upgrade: 20,
        not_upgradable: 0,
    });
}

#[test]
fn ss06_partition_int_budget_limits() {
    run_case(Case {
        total: 1000,
        upgraded: 800,
        consistent: 760,
        strategy: json!({"partition": 100, "maxUnavailable": 100}),
        upgrade: 60,
        not_upgradable: 0,
    });
}

#[test]
fn ss07_partition_percent_limits() {
    run_case(Case {
        total: 1000,
        upgraded: 800,
        consistent: 760,
        strategy: json!({"partition": "18%", "maxUnavailable": 100}),
        upgrade: 20,
        not_upgradable: 0,
    });
}

#[test]
fn ss08_partition_percent_budget_limits() {
    run_case(Case {
        total: 1000,
        upgraded: 800,
        consistent: 760,
        strategy: json!({"partition": "10%", "maxUnavailable": 100}),
        upgrade: 60,
        not_upgradable: 0,
    });
}

#[test]
fn ss09_canary_selector() {
    let set =
        sidecarset(json!({"maxUnavailable": 100, "selector": {"matchLabels": {"app": "test"}}}));
    let mut pods = population(1000, 0, 0);
    for pod in pods.iter_mut().step_by(33).take(30) {
        set_label(pod, "app", "test");
    }
    let pods = shared(pods);
    let plan = plan_round(&set, &pods);
    assert_eq!(plan.upgrade.len(), 30);
    assert!(plan.upgrade.iter().all(|&i| {
        pods[i]
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("app"))
            .map(String::as_str)
            == Some("test")
    }));
}

#[test]
fn ss10_non_image_change_is_not_upgradable() {
    let mut set = sidecarset(json!({"maxUnavailable": 100}));
    set.metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(
            keys::SIDECARSET_HASH_WITHOUT_IMAGE.into(),
            "without-bbb".into(),
        );
    let pods = shared(population(100, 0, 0));
    let plan = plan_round(&set, &pods);
    assert!(plan.upgrade.is_empty());
    assert_eq!(plan.not_upgradable.len(), 100);
}

#[test]
fn ss11_small_percent_rounds_up_to_one() {
    run_case(Case {
        total: 5,
        upgraded: 0,
        consistent: 0,
        strategy: json!({"maxUnavailable": "5%"}),
        upgrade: 1,
        not_upgradable: 0,
    });
}

#[test]
fn ss12_partition_99_percent_leaves_one() {
    run_case(Case {
        total: 5,
        upgraded: 0,
        consistent: 0,
        strategy: json!({"maxUnavailable": 5, "partition": "99%"}),
        upgrade: 1,
        not_upgradable: 0,
    });
}

#[test]
fn ss13_partition_1_percent() {
    run_case(Case {
        total: 5,
        upgraded: 0,
        consistent: 0,
        strategy: json!({"maxUnavailable": 5, "partition": "1%"}),
        upgrade: 4,
        not_upgradable: 0,
    });
}

#[test]
fn partition_100_percent_upgrades_nothing() {
    run_case(Case {
        total: 5,
        upgraded: 0,
        consistent: 0,
        strategy: json!({"maxUnavailable": 5, "partition": "100%"}),
        upgrade: 0,
        not_upgradable: 0,
    });
}

#[test]
fn ss14_newest_first() {
    let set = sidecarset(json!({"maxUnavailable": 10}));
    let pods = shared(population(20, 10, 5));
    let plan = plan_round(&set, &pods);
    assert_eq!(
        names(&pods, &plan.upgrade),
        ["pod-19", "pod-18", "pod-17", "pod-16", "pod-15"]
    );
}

#[test]
fn ss15_not_ready_first_and_free() {
    let set = sidecarset(json!({"maxUnavailable": 10}));
    let mut pods = population(20, 10, 5);
    for pod in pods
        .iter_mut()
        .filter(|p| matches!(name(p), "pod-10" | "pod-13"))
    {
        set_not_ready(pod);
    }
    let pods = shared(pods);
    let plan = plan_round(&set, &pods);
    assert_eq!(
        names(&pods, &plan.upgrade),
        [
            "pod-13", "pod-10", "pod-19", "pod-18", "pod-17", "pod-16", "pod-15"
        ]
    );
}

#[test]
fn ss16_weight_priority() {
    let set = sidecarset(
        json!({"maxUnavailable": 10, "priorityStrategy": {"weightPriority": [
            {"weight": 50, "matchSelector": {"matchLabels": {"test-key": "foo"}}},
            {"weight": 30, "matchSelector": {"matchLabels": {"test-key": "bar"}}},
        ]}}),
    );
    let mut pods = population(20, 10, 2);
    for pod in pods.iter_mut() {
        match name(pod) {
            "pod-16" => set_label(pod, "test-key", "foo"),
            "pod-15" => set_label(pod, "test-key", "bar"),
            _ => {}
        }
    }
    let pods = shared(pods);
    assert_eq!(
        names(&pods, &plan_round(&set, &pods).upgrade),
        ["pod-16", "pod-15"]
    );
}

#[test]
fn ss17_order_priority() {
    let set = sidecarset(
        json!({"maxUnavailable": 10, "priorityStrategy": {"orderPriority": [{"orderedKey": "key1"}]}}),
    );
    let mut pods = population(20, 10, 2);
    for pod in pods.iter_mut() {
        let value = match name(pod) {
            "pod-17" => "10",
            "pod-18" => "20",
            _ => "5",
        };
        set_label(pod, "key1", value);
    }
    let pods = shared(pods);
    assert_eq!(
        names(&pods, &plan_round(&set, &pods).upgrade),
        ["pod-18", "pod-17"]
    );
}

#[test]
fn ss18_scatter_wildcard_expansion() {
    let term = |k: &str, v: &str| UpdateScatterTerm {
        key: k.into(),
        value: v.into(),
    };
    let terms = [
        term("key-1", "value-1"),
        term("key-2", "value-2"),
        term("key-3", "value-3"),
        term("key-4", "*"),
    ];
    let labels: Vec<BTreeMap<String, String>> = [
        "value-4-0",
        "value-4-1",
        "value-4-2",
        "value-4",
        "value-4",
        "value-4",
    ]
    .iter()
    .map(|v| BTreeMap::from([("key-4".to_string(), v.to_string())]))
    .collect();
    let refs: Vec<Option<&BTreeMap<String, String>>> = labels.iter().map(Some).collect();
    assert_eq!(
        expand_terms(&terms, &refs),
        [
            term("key-1", "value-1"),
            term("key-2", "value-2"),
            term("key-3", "value-3"),
            term("key-4", "value-4-0"),
            term("key-4", "value-4-1"),
            term("key-4", "value-4-2"),
            term("key-4", "value-4"),
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// A small simulator: the planner decides, `upgrade_pod` writes, a fake kubelet switches images.

/// The runtime has switched every container to its spec image and the pod is ready again.
fn kubelet_catches_up(pod: &mut Pod) {
    let images: BTreeMap<String, String> = pod
        .spec
        .iter()
        .flat_map(|s| s.containers.iter())
        .map(|c| (c.name.clone(), c.image.clone().unwrap_or_default()))
        .collect();
    if let Some(statuses) = pod
        .status
        .as_mut()
        .and_then(|s| s.container_statuses.as_mut())
    {
        for status in statuses.iter_mut() {
            if let Some(image) = images.get(&status.name)
                && *image != status.image
            {
                status.image = image.clone();
                status.image_id = format!("docker-pullable://{image}@sha256:new");
            }
            status.ready = true;
        }
    }
    if let Some(conditions) = pod.status.as_mut().and_then(|s| s.conditions.as_mut()) {
        for condition in conditions.iter_mut().filter(|c| c.type_ == "Ready") {
            condition.status = "True".into();
        }
    }
}

/// The kubelet restarting an upgraded sidecar: its container reports not ready, and so does the pod.
fn restarting(pod: &mut Pod) {
    if let Some(statuses) = pod
        .status
        .as_mut()
        .and_then(|s| s.container_statuses.as_mut())
    {
        for status in statuses.iter_mut().filter(|s| s.name == "test-sidecar") {
            status.ready = false;
        }
    }
    set_not_ready(pod);
}

/// Updated pods that are not (consistent and ready).
fn unavailable_updated(set: &SidecarSet, pods: &[Arc<Pod>]) -> usize {
    facts_of(set, pods)
        .iter()
        .filter(|f| f.updated && !f.available())
        .count()
}

/// Runs one round: upgrades the planned pods; returns how many were upgraded.
fn round(set: &SidecarSet, pods: &mut [Arc<Pod>]) -> usize {
    let plan = plan_round(set, pods);
    for &i in &plan.upgrade {
        let mut upgraded = upgrade_pod(&pods[i], set, NOW).expect("upgrade").pod;
        restarting(&mut upgraded);
        pods[i] = Arc::new(upgraded);
    }
    plan.upgrade.len()
}

/// Rounds until nothing moves, letting `ready_per_wave` unavailable pods recover between rounds.
/// Returns (rounds, peak unavailable).
fn roll_out(set: &SidecarSet, pods: &mut [Arc<Pod>], ready_per_wave: usize) -> (usize, usize) {
    let mut peak = 0;
    for rounds in 1..10_000 {
        let upgraded = round(set, pods);
        peak = peak.max(unavailable_updated(set, pods));
        let facts = facts_of(set, pods);
        let recovering: Vec<usize> = (0..pods.len())
            .filter(|&i| facts[i].updated && !facts[i].available())
            .take(ready_per_wave)
            .collect();
        if upgraded == 0 && recovering.is_empty() {
            return (rounds, peak);
        }
        for i in recovering {
            let mut pod = (*pods[i]).clone();
            kubelet_catches_up(&mut pod);
            pods[i] = Arc::new(pod);
        }
    }
    panic!("rollout did not settle");
}

// ---------------------------------------------------------------------------------------------
// §2.13 worked examples

#[test]
fn example_a_partition_not_budget_limits() {
    let set = sidecarset(json!({"partition": 980, "maxUnavailable": "10%"}));
    let mut pods = shared(population(1000, 0, 0));
    assert_eq!(round(&set, &mut pods), 20);
    assert_eq!(unavailable_updated(&set, &pods), 20);
    assert_eq!(round(&set, &mut pods), 0);
    let (_, peak) = roll_out(&set, &mut pods, 1000);
    assert_eq!(peak, 20);
    let status = plan_round(&set, &pods).status;
    assert_eq!(
        (
            status.matched_pods,
            status.updated_pods,
            status.updated_ready_pods
        ),
        (1000, 20, Some(20))
    );
    assert_eq!(status.ready_pods, 1000);
    assert_eq!(status.observed_generation, Some(7));
}

#[test]
fn example_b_waves_of_max_unavailable() {
    let set = sidecarset(json!({"partition": 50, "maxUnavailable": 10}));
    let mut pods = shared(population(100, 0, 0));
    assert_eq!(round(&set, &mut pods), 10);
    // Nothing recovers: nothing more moves.
    assert_eq!(round(&set, &mut pods), 0);
    // k recover -> k more slots.
    let facts = facts_of(&set, &pods);
    let recovering: Vec<usize> = (0..pods.len())
        .filter(|&i| facts[i].updated)
        .take(3)
        .collect();
    for i in recovering {
        let mut pod = (*pods[i]).clone();
        kubelet_catches_up(&mut pod);
        pods[i] = Arc::new(pod);
    }
    assert_eq!(round(&set, &mut pods), 3);
    let (_, peak) = roll_out(&set, &mut pods, 4);
    assert_eq!(peak, 10);
    let status = plan_round(&set, &pods).status;
    assert_eq!(
        (
            status.matched_pods,
            status.updated_pods,
            status.updated_ready_pods
        ),
        (100, 50, Some(50))
    );
}

#[test]
fn example_c_partition_within_budget() {
    let set = sidecarset(json!({"partition": 80, "maxUnavailable": 30}));
    let mut pods = shared(population(100, 0, 0));
    assert_eq!(round(&set, &mut pods), 20);
    assert_eq!(round(&set, &mut pods), 0);
    roll_out(&set, &mut pods, 100);
    let status = plan_round(&set, &pods).status;
    assert_eq!(
        (status.updated_pods, status.updated_ready_pods),
        (20, Some(20))
    );
}

// ---------------------------------------------------------------------------------------------
// Strategy rules

#[test]
fn not_update_and_paused_halt_but_status_is_computed() {
    let pods = shared(population(10, 3, 1));
    for (strategy, halt) in [
        (json!({"type": "NotUpdate"}), Halt::NotUpdate),
        (json!({"paused": true}), Halt::Paused),
    ] {
        let plan = plan_round(&sidecarset(strategy), &pods);
        assert_eq!(plan.halted, Some(halt));
        assert!(plan.upgrade.is_empty() && plan.not_upgradable.is_empty());
        assert_eq!(
            (
                plan.status.matched_pods,
                plan.status.updated_pods,
                plan.status.ready_pods
            ),
            (10, 3, 8)
        );
        assert_eq!(plan.status.updated_ready_pods, Some(1));
    }
}

#[test]
fn complete_rollout_halts() {
    let pods = shared(population(4, 4, 4));
    let plan = plan_round(&sidecarset(json!({})), &pods);
    assert_eq!(plan.halted, Some(Halt::Complete));
    assert_eq!(
        plan.status.latest_revision.as_deref(),
        Some("test-sidecarset-rev2")
    );
}

#[test]
fn max_unavailable_defaults_to_one() {
    let pods = shared(population(10, 0, 0));
    assert_eq!(plan_round(&sidecarset(json!({})), &pods).upgrade.len(), 1);
}

#[test]
fn invalid_canary_selector_selects_nothing() {
    let set = sidecarset(
        json!({"maxUnavailable": 5, "selector": {"matchExpressions": [{"key": "a", "operator": "Near"}]}}),
    );
    let pods = shared(population(10, 0, 0));
    assert!(plan_round(&set, &pods).upgrade.is_empty());
}

#[test]
fn pod_with_a_sidecar_update_still_rolling_waits() {
    // Hash `aaa` but a ready sidecar whose previous in-place update has not switched yet.
    let set = sidecarset(json!({"maxUnavailable": 5}));
    let mut rolling = pod(0, Stage::Upgraded);
    rolling
        .metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(keys::SIDECARSET_HASH.into(), hash_entry("aaa"));
    let pods = shared(vec![rolling, pod(1, Stage::Old)]);
    let plan = plan_round(&set, &pods);
    assert_eq!(names(&pods, &plan.upgrade), ["pod-1"]);
    assert!(plan.not_upgradable.is_empty());
}

#[test]
fn scatter_strategy_spreads_labelled_pods() {
    let set = sidecarset(
        json!({"maxUnavailable": 100, "scatterStrategy": [{"key": "zone", "value": "a"}]}),
    );
    let mut pods = population(9, 0, 0);
    for pod in pods.iter_mut() {
        let index: usize = name(pod).trim_start_matches("pod-").parse().unwrap_or(0);
        set_label(pod, "zone", if index >= 6 { "a" } else { "b" });
    }
    let pods = shared(pods);
    let order = names(&pods, &plan_round(&set, &pods).upgrade);
    // Default order puts the newest (zone a: 8, 7, 6) first; scatter interleaves them.
    assert_eq!(
        order,
        [
            "pod-8", "pod-5", "pod-4", "pod-3", "pod-7", "pod-2", "pod-1", "pod-0", "pod-6"
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// Default order (§2.7.1): one rule per test

fn order_of(pods: Vec<Pod>) -> Vec<String> {
    let pods = shared(pods);
    let strategy = Default::default();
    names(
        &pods,
        &upgrade_order(&strategy, &pods, (0..pods.len()).collect()),
    )
}

#[test]
fn order_unscheduled_before_scheduled() {
    let mut unscheduled = pod(1, Stage::Old);
    if let Some(spec) = unscheduled.spec.as_mut() {
        spec.node_name = None;
    }
    assert_eq!(
        order_of(vec![pod(2, Stage::Old), unscheduled]),
        ["pod-1", "pod-2"]
    );
}

#[test]
fn order_pending_unknown_running() {
    let with_phase = |i, phase: &str| {
        let mut p = pod(i, Stage::Old);
        if let Some(s) = p.status.as_mut() {
            s.phase = Some(phase.into());
        }
        p
    };
    assert_eq!(
        order_of(vec![
            with_phase(5, "Running"),
            with_phase(1, "Unknown"),
            with_phase(2, "Pending"),
            with_phase(3, "Failed")
        ]),
        ["pod-3", "pod-2", "pod-1", "pod-5"]
    );
}

#[test]
fn order_not_ready_before_ready() {
    let mut not_ready = pod(1, Stage::Old);
    set_not_ready(&mut not_ready);
    assert_eq!(
        order_of(vec![pod(2, Stage::Old), not_ready]),
        ["pod-1", "pod-2"]
    );
}

#[test]
fn order_recently_ready_first() {
    let ready_at = |i, at: Option<&str>| {
        let mut p = pod(i, Stage::Old);
        if let Some(c) = p.status.as_mut().and_then(|s| s.conditions.as_mut()) {
            c[0].last_transition_time = at.map(|t| Time(t.parse().expect("time")));
        }
        p
    };
    assert_eq!(
        order_of(vec![
            ready_at(1, Some("2026-01-01T00:00:00Z")),
            ready_at(2, Some("2026-02-01T00:00:00Z")),
            ready_at(3, None)
        ]),
        ["pod-3", "pod-2", "pod-1"]
    );
}

#[test]
fn order_more_restarts_first() {
    let mut restarted = pod(1, Stage::Old);
    if let Some(s) = restarted
        .status
        .as_mut()
        .and_then(|s| s.container_statuses.as_mut())
    {
        s[0].restart_count = 3;
    }
    assert_eq!(
        order_of(vec![pod(2, Stage::Old), restarted]),
        ["pod-1", "pod-2"]
    );
}

#[test]
fn order_newer_first_unset_creation_first_of_all() {
    let mut unset = pod(0, Stage::Old);
    unset.metadata.creation_timestamp = None;
    assert_eq!(
        order_of(vec![pod(1, Stage::Old), unset, pod(2, Stage::Old)]),
        ["pod-0", "pod-2", "pod-1"]
    );
}

// ---------------------------------------------------------------------------------------------
// Matched pods (§2.4) and status (§2.5)

#[test]
fn matched_pods_filters() {
    let set = sidecarset(json!({}));
    let mut finished = pod(1, Stage::Old);
    if let Some(s) = finished.status.as_mut() {
        s.phase = Some("Succeeded".into());
    }
    let mut terminating = pod(2, Stage::Old);
    terminating.metadata.deletion_timestamp =
        Some(Time("2026-01-01T00:00:00Z".parse().expect("time")));
    let mut not_injected = pod(3, Stage::Old);
    not_injected
        .metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(
            keys::SIDECARSET_INJECTED_LIST.into(),
            "other,test-sidecarset-x".into(),
        );
    let mut sidecar_removed = pod(4, Stage::Old);
    if let Some(s) = sidecar_removed.spec.as_mut() {
        s.containers.truncate(1);
    }
    let mut other_app = pod(5, Stage::Old);
    set_label(&mut other_app, "app", "other");
    let mut listed_among_others = pod(6, Stage::Old);
    listed_among_others
        .metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(keys::SIDECARSET_INJECTED_LIST.into(), format!("a,{SET},z"));
    let pods = shared(vec![
        pod(0, Stage::Old),
        finished,
        terminating,
        not_injected,
        sidecar_removed,
        other_app,
        listed_among_others,
    ]);
    let matched = matched_pods(&set, &pods, |_| None).expect("selector");
    let matched_names: Vec<&str> = matched.iter().map(|p| name(p)).collect();
    assert_eq!(matched_names, ["pod-0", "pod-6"]);
    // Shared handles, not copies.
    assert!(Arc::ptr_eq(&matched[0], &pods[0]));
}

#[test]
fn matched_pods_namespace_selector() {
    let mut set = sidecarset(json!({}));
    set.spec.namespace_selector =
        Some(serde_json::from_value(json!({"matchLabels": {"team": "a"}})).expect("selector"));
    let mut elsewhere = pod(1, Stage::Old);
    elsewhere.metadata.namespace = Some("other".into());
    let pods = shared(vec![pod(0, Stage::Old), elsewhere]);
    let team_a = BTreeMap::from([("team".to_string(), "a".to_string())]);
    let matched =
        matched_pods(&set, &pods, |ns| (ns == "default").then_some(&team_a)).expect("selector");
    assert_eq!(matched.len(), 1);
    assert_eq!(name(&matched[0]), "pod-0");
}

#[test]
fn matched_pods_hot_upgrade_needs_both_copies_and_working_entry() {
    let set: SidecarSet = {
        let mut s = sidecarset(json!({}));
        s.spec.containers = Some(vec![
            serde_json::from_value(json!({"name": "test-sidecar", "image": NEW_IMAGE,
            "upgradeStrategy": {"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": "empty:1"}}))
            .expect("sidecar"),
        ]);
        s
    };
    let hot = |i, working: bool| {
        let mut p = pod(i, Stage::Old);
        if let Some(spec) = p.spec.as_mut() {
            spec.containers[1].name = "test-sidecar-1".into();
            let mut second = spec.containers[1].clone();
            second.name = "test-sidecar-2".into();
            second.image = Some("empty:1".into());
            spec.containers.push(second);
        }
        if working {
            p.metadata
                .annotations
                .get_or_insert_with(BTreeMap::new)
                .insert(
                    keys::SIDECARSET_WORKING_HOTUPGRADE_CONTAINER.into(),
                    r#"{"test-sidecar":"test-sidecar-1"}"#.into(),
                );
        }
        p
    };
    let pods = shared(vec![hot(0, true), hot(1, false), pod(2, Stage::Old)]);
    let matched = matched_pods(&set, &pods, |_| None).expect("selector");
    assert_eq!(
        matched.iter().map(|p| name(p)).collect::<Vec<_>>(),
        ["pod-0"]
    );
}

#[test]
fn status_counts() {
    let mut pods = population(10, 6, 2);
    // One old pod not ready: not counted ready.
    if let Some(p) = pods.iter_mut().find(|p| name(p) == "pod-9") {
        set_not_ready(p);
    }
    let pods = shared(pods);
    let status = plan_round(&sidecarset(json!({"paused": true})), &pods).status;
    assert_eq!(status.matched_pods, 10);
    assert_eq!(status.updated_pods, 6);
    // Ready: 2 upgraded+consistent and 3 old ready pods (pod-6..8).
    assert_eq!(status.ready_pods, 5);
    assert_eq!(status.updated_ready_pods, Some(2));
    let none_ready = plan_round(
        &sidecarset(json!({"paused": true})),
        &shared(population(3, 3, 0)),
    )
    .status;
    assert_eq!(none_ready.updated_ready_pods, None);
}

// ---------------------------------------------------------------------------------------------
// What an upgrade writes (§2.10)

fn annotation_json(pod: &Pod, key: &str) -> Value {
    let raw = pod
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(key))
        .cloned()
        .unwrap_or_default();
    serde_json::from_str(&raw).unwrap_or(Value::Null)
}

#[test]
fn upgrade_changes_only_the_image_and_records_hash_and_state() {
    let set = sidecarset(json!({}));
    let before = pod(3, Stage::Old);
    let upgrade = upgrade_pod(&before, &set, NOW).expect("upgrade");
    let after = &upgrade.pod;

    let mut expected_spec = before.spec.clone().expect("spec");
    expected_spec.containers[1].image = Some(NEW_IMAGE.into());
    assert_eq!(
        after.spec.as_ref(),
        Some(&expected_spec),
        "only the sidecar image changes"
    );
    assert_eq!(after.status, before.status);

    assert_eq!(
        annotation_json(after, keys::SIDECARSET_HASH),
        json!({SET: {"updateTimestamp": NOW, "hash": "bbb", "sidecarSetName": SET,
            "sidecarList": ["test-sidecar"], "controllerRevision": "test-sidecarset-rev2"}})
    );
    // Written at injection only.
    assert_eq!(
        annotation_json(after, keys::SIDECARSET_HASH_WITHOUT_IMAGE),
        annotation_json(&before, keys::SIDECARSET_HASH_WITHOUT_IMAGE)
    );
    assert_eq!(
        annotation_json(after, keys::SIDECARSET_INPLACE_UPDATE_STATE),
        json!({SET: {"revision": "bbb", "updateTimestamp": NOW,
            "lastContainerStatuses": {"test-sidecar": {"imageID": OLD_IMAGE_ID}}}})
    );
    assert_eq!(upgrade.batches.len(), 1);
    assert_eq!(upgrade.batches[0][0].container, "test-sidecar");
    assert_eq!(
        upgrade.batches[0][0].previous_image.as_deref(),
        Some(OLD_IMAGE)
    );

    // The upgraded pod is updated but not consistent until the runtime switches.
    let facts = facts_of(&set, &shared(vec![after.clone()]))[0];
    assert!(facts.updated && !facts.consistent);
    let mut switched = after.clone();
    kubelet_catches_up(&mut switched);
    let facts = facts_of(&set, &shared(vec![switched]))[0];
    assert!(facts.updated && facts.consistent && facts.ready);
}

#[test]
fn existing_state_entry_keeps_revision_and_timestamp() {
    let set = sidecarset(json!({}));
    let mut before = pod(3, Stage::UpgradedAndReady);
    if let Some(spec) = before.spec.as_mut() {
        spec.containers[1].image = Some(OLD_IMAGE.into());
    }
    let other_set = json!({"revision": "x", "updateTimestamp": "2025-01-01T00:00:00Z", "lastContainerStatuses": {"o": {"imageID": "o-id"}}});
    let mut state = annotation_json(&before, keys::SIDECARSET_INPLACE_UPDATE_STATE);
    state[SET]["revision"] = json!("old-rev");
    state["other"] = other_set.clone();
    before
        .metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(
            keys::SIDECARSET_INPLACE_UPDATE_STATE.into(),
            state.to_string(),
        );
    let after = upgrade_pod(&before, &set, NOW).expect("upgrade").pod;
    let state = annotation_json(&after, keys::SIDECARSET_INPLACE_UPDATE_STATE);
    assert_eq!(state[SET]["revision"], "old-rev");
    assert_eq!(state[SET]["updateTimestamp"], "2026-01-01T00:00:00Z");
    assert_eq!(
        state[SET]["lastContainerStatuses"]["test-sidecar"]["imageID"],
        NEW_IMAGE_ID
    );
    assert_eq!(state["other"], other_set);
}

#[test]
fn hash_is_written_even_without_image_change() {
    let set = sidecarset(json!({}));
    let mut before = pod(3, Stage::Old);
    if let Some(spec) = before.spec.as_mut() {
        spec.containers[1].image = Some(NEW_IMAGE.into());
    }
    let upgrade = upgrade_pod(&before, &set, NOW).expect("upgrade");
    assert!(upgrade.batches.is_empty());
    assert_eq!(
        annotation_json(&upgrade.pod, keys::SIDECARSET_HASH)[SET]["hash"],
        "bbb"
    );
    assert_eq!(
        annotation_json(&upgrade.pod, keys::SIDECARSET_INPLACE_UPDATE_STATE)[SET]["lastContainerStatuses"],
        json!({})
    );
}

#[test]
fn patch_pod_metadata_is_applied() {
    let mut set = sidecarset(json!({}));
    set.spec.patch_pod_metadata = Some(vec![
        serde_json::from_value(json!({"annotations": {"x": "1"}, "patchPolicy": "Overwrite"}))
            .expect("patch"),
    ]);
    let after = upgrade_pod(&pod(0, Stage::Old), &set, NOW)
        .expect("upgrade")
        .pod;
    assert_eq!(
        after
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get("x"))
            .map(String::as_str),
        Some("1")
    );
}

fn with_barrier(mut pod: Pod, container: usize, priority: i64) -> Pod {
    if let Some(spec) = pod.spec.as_mut() {
        spec.containers[container].env.get_or_insert_with(Vec::new).push(serde_json::from_value(json!({
            "name": "KRUISE_CONTAINER_BARRIER",
            "valueFrom": {"configMapKeyRef": {"name": "pod-barrier", "key": format!("p_{priority}")}}})).expect("env"));
    }
    pod
}

fn two_sidecar_set() -> SidecarSet {
    let mut set = sidecarset(json!({}));
    set.spec.containers = Some(
        serde_json::from_value(json!([
            {"name": "test-sidecar", "image": NEW_IMAGE},
            {"name": "log-agent", "image": "log:v2"},
            {"name": "mesh", "image": "mesh:v2"},
        ]))
        .expect("sidecars"),
    );
    set
}

fn two_sidecar_pod() -> Pod {
    let mut pod = pod(0, Stage::Old);
    if let Some(spec) = pod.spec.as_mut() {
        for (name, image) in [("log-agent", "log:v1"), ("mesh", "mesh:v1")] {
            spec.containers.push(
                serde_json::from_value(json!({"name": name, "image": image})).expect("container"),
            );
        }
    }
    if let Some(statuses) = pod
        .status
        .as_mut()
        .and_then(|s| s.container_statuses.as_mut())
    {
        statuses.push(
            serde_json::from_value(status("log-agent", "log:v1", "log-v1-id")).expect("status"),
        );
        statuses
            .push(serde_json::from_value(status("mesh", "mesh:v1", "mesh-v1-id")).expect("status"));
    }
    pod
}

#[test]
fn sidecars_with_different_priorities_come_in_batches_highest_first() {
    let pod = with_barrier(
        with_barrier(with_barrier(two_sidecar_pod(), 1, 0), 2, -5),
        3,
        10,
    );
    let upgrade = upgrade_pod(&pod, &two_sidecar_set(), NOW).expect("upgrade");
    let batches: Vec<Vec<&str>> = upgrade
        .batches
        .iter()
        .map(|b| b.iter().map(|c| c.container.as_str()).collect())
        .collect();
    assert_eq!(
        batches,
        [vec!["mesh"], vec!["test-sidecar"], vec!["log-agent"]]
    );
    let first = upgrade.pod_for_first_batch();
    let images: Vec<&str> = first
        .spec
        .as_ref()
        .map(|s| {
            s.containers
                .iter()
                .filter_map(|c| c.image.as_deref())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(images, ["nginx:1.25", OLD_IMAGE, "log:v1", "mesh:v2"]);
    // Every changed container's old imageID is recorded, so later rounds see the pod as rolling.
    let state = annotation_json(&first, keys::SIDECARSET_INPLACE_UPDATE_STATE);
    assert_eq!(
        state[SET]["lastContainerStatuses"]
            .as_object()
            .map(|o| o.len()),
        Some(3)
    );
}

#[test]
fn sidecars_without_priority_join_the_first_batch() {
    let pod = with_barrier(two_sidecar_pod(), 2, -1);
    let upgrade = upgrade_pod(&pod, &two_sidecar_set(), NOW).expect("upgrade");
    let batches: Vec<Vec<&str>> = upgrade
        .batches
        .iter()
        .map(|b| b.iter().map(|c| c.container.as_str()).collect())
        .collect();
    assert_eq!(batches, [vec!["log-agent", "test-sidecar", "mesh"]]);
    // Equal priorities make one batch too.
    let pod = with_barrier(
        with_barrier(with_barrier(two_sidecar_pod(), 1, 3), 2, 3),
        3,
        3,
    );
    assert_eq!(
        upgrade_pod(&pod, &two_sidecar_set(), NOW)
            .expect("upgrade")
            .batches
            .len(),
        1
    );
}

#[test]
fn hot_upgrade_targets_the_idle_copy() {
    let mut set = sidecarset(json!({}));
    set.spec.containers = Some(vec![
        serde_json::from_value(json!({"name": "test-sidecar", "image": NEW_IMAGE,
        "upgradeStrategy": {"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": "empty:1"}}))
        .expect("sidecar"),
    ]);
    let mut before = pod(0, Stage::Old);
    if let Some(spec) = before.spec.as_mut() {
        spec.containers[1].name = "test-sidecar-1".into();
        let mut idle = spec.containers[1].clone();
        idle.name = "test-sidecar-2".into();
        idle.image = Some("empty:1".into());
        spec.containers.push(idle);
    }
    let annotations = before
        .metadata
        .annotations
        .get_or_insert_with(BTreeMap::new);
    annotations.insert(
        keys::SIDECARSET_WORKING_HOTUPGRADE_CONTAINER.into(),
        r#"{"test-sidecar":"test-sidecar-1"}"#.into(),
    );
    annotations.insert(
        "version.sidecarset.kruise.io/test-sidecar-1".into(),
        "1".into(),
    );
    let after = upgrade_pod(&before, &set, NOW).expect("upgrade").pod;
    let images: Vec<&str> = after
        .spec
        .as_ref()
        .map(|s| {
            s.containers
                .iter()
                .filter_map(|c| c.image.as_deref())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(images, ["nginx:1.25", OLD_IMAGE, NEW_IMAGE]);
    let a = after.metadata.annotations.clone().unwrap_or_default();
    assert_eq!(
        a.get(keys::SIDECARSET_WORKING_HOTUPGRADE_CONTAINER)
            .map(String::as_str),
        Some(r#"{"test-sidecar":"test-sidecar-2"}"#)
    );
    assert_eq!(
        a.get("version.sidecarset.kruise.io/test-sidecar-2")
            .map(String::as_str),
        Some("4242")
    );
    assert_eq!(
        a.get("versionalt.sidecarset.kruise.io/test-sidecar-2")
            .map(String::as_str),
        Some("1")
    );
    assert_eq!(
        a.get("versionalt.sidecarset.kruise.io/test-sidecar-1")
            .map(String::as_str),
        Some("4242")
    );
}

#[test]
fn hot_upgrade_rollout_resets_the_idle_copy_once_the_new_one_is_ready() {
    let mut set = sidecarset(json!({}));
    set.spec.containers = Some(vec![
        serde_json::from_value(json!({"name": "test-sidecar", "image": NEW_IMAGE,
        "upgradeStrategy": {"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": "empty:1"}}))
        .expect("sidecar"),
    ]);
    let mut hot = pod(0, Stage::Old);
    if let Some(spec) = hot.spec.as_mut() {
        spec.containers[1].name = "test-sidecar-1".into();
        let mut idle = spec.containers[1].clone();
        idle.name = "test-sidecar-2".into();
        idle.image = Some("empty:1".into());
        spec.containers.push(idle);
    }
    if let Some(statuses) = hot
        .status
        .as_mut()
        .and_then(|s| s.container_statuses.as_mut())
    {
        statuses[1].name = "test-sidecar-1".into();
        statuses.push(
            serde_json::from_value(status("test-sidecar-2", "empty:1", "empty-id"))
                .expect("status"),
        );
    }
    hot.metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(
            keys::SIDECARSET_WORKING_HOTUPGRADE_CONTAINER.into(),
            r#"{"test-sidecar":"test-sidecar-1"}"#.into(),
        );
    let mut pods = shared(vec![hot]);

    let plan = plan_round(&set, &pods);
    assert_eq!(plan.upgrade, [0]);
    let mut upgraded = upgrade_pod(&pods[0], &set, NOW).expect("upgrade").pod;
    kubelet_catches_up(&mut upgraded);
    pods[0] = Arc::new(upgraded);

    // The new copy works; the old one still holds the old image: reset it, nothing else this round.
    let plan = plan_round(&set, &pods);
    assert_eq!(plan.halted, Some(Halt::ResettingIdleCopies));
    assert_eq!(plan.reset_idle, [0]);
    assert!(plan.upgrade.is_empty());
    let mut reset = reset_idle_copies(&pods[0], &set, NOW);
    let images: Vec<&str> = reset
        .spec
        .as_ref()
        .map(|s| {
            s.containers
                .iter()
                .filter_map(|c| c.image.as_deref())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(images, ["nginx:1.25", "empty:1", NEW_IMAGE]);
    let a = reset.metadata.annotations.clone().unwrap_or_default();
    assert_eq!(
        a.get("version.sidecarset.kruise.io/test-sidecar-1")
            .map(String::as_str),
        Some("0")
    );
    assert_eq!(
        a.get("versionalt.sidecarset.kruise.io/test-sidecar-2")
            .map(String::as_str),
        Some("0")
    );
    assert_eq!(
        annotation_json(&reset, keys::SIDECARSET_INPLACE_UPDATE_STATE)[SET]["lastContainerStatuses"]
            ["test-sidecar-1"]["imageID"],
        OLD_IMAGE_ID
    );
    // Until the runtime switches the idle copy, the pod is neither ready nor consistent.
    let facts = facts_of(&set, &shared(vec![reset.clone()]))[0];
    assert!(!facts.available());
    kubelet_catches_up(&mut reset);
    pods[0] = Arc::new(reset);
    let plan = plan_round(&set, &pods);
    assert_eq!(plan.halted, Some(Halt::Complete));
    assert_eq!(plan.status.updated_ready_pods, Some(1));
}

#[test]
fn upgradable_condition_records_each_sidecarset() {
    let now = Time(NOW.parse().expect("time"));
    let mut pod = pod(0, Stage::Old);
    let condition = upgradable_condition(&pod, SET, false, &now).expect("new condition");
    assert_eq!(
        (condition.status.as_str(), condition.reason.as_deref()),
        ("False", Some(keys::REASON_UPDATE_IMMUTABLE_FIELD))
    );
    assert_eq!(
        condition.message.as_deref(),
        Some(r#"{"test-sidecarset":false}"#)
    );
    if let Some(conditions) = pod.status.as_mut().and_then(|s| s.conditions.as_mut()) {
        conditions.push(condition);
    }
    assert_eq!(
        upgradable_condition(&pod, SET, false, &now),
        None,
        "unchanged: no write"
    );
    let condition = upgradable_condition(&pod, "other", true, &now).expect("new condition");
    assert_eq!(
        condition.message.as_deref(),
        Some(r#"{"other":true,"test-sidecarset":false}"#)
    );
    assert_eq!(condition.status, "False");
    let condition = upgradable_condition(&pod, SET, true, &now).expect("new condition");
    assert_eq!(
        (condition.status.as_str(), condition.reason.as_deref()),
        ("True", Some(keys::REASON_ALL_SIDECARSETS_UPGRADABLE))
    );
}

// ---------------------------------------------------------------------------------------------
// Properties

fn arbitrary_pod(index: usize, traits: (bool, u8, bool, u8, u8)) -> Pod {
    let (scheduled, phase, ready, restarts, created) = traits;
    let mut p = pod(index, Stage::Old);
    if !scheduled && let Some(s) = p.spec.as_mut() {
        s.node_name = None;
    }
    if let Some(s) = p.status.as_mut() {
        s.phase = Some(["Pending", "Unknown", "Running", "Failed"][usize::from(phase % 4)].into());
        if let Some(cs) = s.container_statuses.as_mut() {
            cs[0].restart_count = i32::from(restarts % 3);
        }
    }
    if !ready {
        set_not_ready(&mut p);
    }
    p.metadata.creation_timestamp = Some(Time(
        created_at(usize::from(created % 4)).parse().expect("time"),
    ));
    p
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// The default order is a total order: antisymmetric, transitive, equal only for the same pod;
    /// so the upgrade order does not depend on the order pods came out of the cache.
    #[test]
    fn default_order_is_total_and_input_order_free(
        traits in proptest::collection::vec((any::<bool>(), any::<u8>(), any::<bool>(), any::<u8>(), any::<u8>()), 1..12),
        seed in any::<u64>(),
    ) {
        let pods: Vec<Pod> = traits.iter().enumerate().map(|(i, t)| arbitrary_pod(i, *t)).collect();
        for a in &pods {
            for b in &pods {
                prop_assert_eq!(default_order(a, b), default_order(b, a).reverse());
                prop_assert_eq!(default_order(a, b).is_eq(), name(a) == name(b));
                for c in &pods {
                    if default_order(a, b).is_lt() && default_order(b, c).is_lt() {
                        prop_assert!(default_order(a, c).is_lt());
                    }
                }
            }
        }
        let strategy = Default::default();
        let shuffled = {
            let mut p = pods.clone();
            fastrand::Rng::with_seed(seed).shuffle(&mut p);
            shared(p)
        };
        let pods = shared(pods);
        let first = names(&pods, &upgrade_order(&strategy, &pods, (0..pods.len()).collect()));
        let second = names(&shuffled, &upgrade_order(&strategy, &shuffled, (0..shuffled.len()).collect()));
        prop_assert_eq!(first, second);
    }

    /// A random rollout: pods recover at random; the unavailability budget is never exceeded,
    /// partition pods are never upgraded, and the rollout finishes once pods recover.
    #[test]
    fn rollout_respects_budget_and_partition_and_finishes(
        total in 1usize..40,
        max_unavailable in prop_oneof![(0i32..6).prop_map(|n| json!(n)), (1u32..60).prop_map(|p| json!(format!("{p}%")))],
        partition in prop_oneof![(0i32..45).prop_map(|n| json!(n)), (0u32..101).prop_map(|p| json!(format!("{p}%")))],
        not_ready in proptest::collection::vec(any::<bool>(), 40),
        recoveries in proptest::collection::vec(0usize..4, 200),
    ) {
        let set = sidecarset(json!({"maxUnavailable": max_unavailable, "partition": partition}));
        let budget = kruise_webhook::updatesort::budget::max_unavailable_count(set.spec.update_strategy.as_ref().and_then(|s| s.max_unavailable.as_ref()), total);
        let kept = kruise_webhook::updatesort::budget::partition_count(set.spec.update_strategy.as_ref().and_then(|s| s.partition.as_ref()), total);
        let mut initial = population(total, 0, 0);
        for (pod, down) in initial.iter_mut().zip(&not_ready) {
            if *down {
                set_not_ready(pod);
            }
        }
        let initially_not_ready = not_ready.iter().take(total).filter(|down| **down).count();
        let mut pods = shared(initial);
        let mut recoveries = recoveries.into_iter().chain(std::iter::repeat(total));
        let mut settled = false;
        for _ in 0..1000 {
            let facts = facts_of(&set, &pods);
            let before = facts.iter().filter(|f| f.updated && !f.available()).count();
            let plan = plan_round(&set, &pods);
            let ready_taken = plan.upgrade.iter().filter(|&&i| facts[i].ready).count();
            prop_assert!(before + ready_taken <= budget.max(before), "budget exceeded");
            let upgraded = round(&set, &mut pods);
            // Beyond the budget only by pods that were not ready anyway.
            let not_ready_taken = upgraded - ready_taken;
            prop_assert!(unavailable_updated(&set, &pods) <= budget.max(before) + not_ready_taken);
            if upgraded == 0 && before == 0 {
                settled = true;
                break;
            }
            let facts = facts_of(&set, &pods);
            let wave = recoveries.next().unwrap_or(total);
            let recovering: Vec<usize> = (0..pods.len()).filter(|&i| facts[i].updated && !facts[i].available()).take(wave).collect();
            for i in recovering {
                let mut pod = (*pods[i]).clone();
                kubelet_catches_up(&mut pod);
                pods[i] = Arc::new(pod);
            }
        }
        prop_assert!(settled, "rollout did not settle");
        let status = plan_round(&set, &pods).status;
        let expected = if budget == 0 { initially_not_ready.min(total - kept) } else { total - kept };
        prop_assert_eq!(status.updated_pods as usize, expected, "budget {} partition {}", budget, kept);
        prop_assert_eq!(status.updated_ready_pods.unwrap_or(0) as usize, expected);
    }
}
