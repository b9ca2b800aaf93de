use super::*;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{PodCondition, Volume, VolumeMount};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry;
use proptest::prelude::*;

use crate::controller::barrier;
use crate::controller::sidecarset;
use crate::inject::launch_priority::apply_launch_priority;
use crate::inject::sidecar::{InjectionContext, inject_sidecars};
use crate::podmarks::{EngineOwner, PodSummary};
use crate::rollout;
use crate::source::Catalogue;
use crate::source::dir::{self, EMBEDDED_EXAMPLES};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

fn catalogue() -> Catalogue {
    let files: Vec<(String, String)> = EMBEDDED_EXAMPLES
        .iter()
        .map(|(name, content)| (name.to_string(), content.to_string()))
        .collect();
    dir::load(&files).into_catalogue().0
}

/// A fixture pod as the apiserver would hold it after admission: sidecars injected, launch
/// priority applied, plus the bulk real pods carry.
fn admitted(fixture: &str, catalogue: &Catalogue) -> Pod {
    let path = format!("{}/tests/fixtures/{fixture}", env!("CARGO_MANIFEST_DIR"));
    let review: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let mut pod: Pod = serde_json::from_value(review["request"]["object"].clone()).unwrap();
    let namespace = review["request"]["namespace"].as_str().unwrap().to_string();
    pod.metadata.namespace = Some(namespace.clone());
    let labels = catalogue.namespace_labels(&namespace);
    let context = InjectionContext {
        sidecarsets: catalogue.sidecarsets(),
        namespace_labels: labels.as_deref(),
        now: "2026-11-22T10:00:00Z",
        sort_sidecars_by_name: false,
        revisions: None,
        draw: &crate::inject::sidecar::random_draw,
    };
    inject_sidecars(&mut pod, &context).unwrap();
    apply_launch_priority(&mut pod, "x").unwrap();
    pod.metadata.managed_fields = Some(vec![ManagedFieldsEntry {
        manager: Some("kubectl".into()),
        ..Default::default()
    }]);
    pod.metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert(keys::LAST_APPLIED_CONFIGURATION.into(), "{}".into());
    let spec = pod.spec.as_mut().unwrap();
    spec.volumes.get_or_insert_with(Vec::new).push(Volume {
        name: "data".into(),
        ..Default::default()
    });
    for container in &mut spec.containers {
        container.env.get_or_insert_with(Vec::new).push(EnvVar {
            name: "UNRELATED".into(),
            value: Some("1".into()),
            ..Default::default()
        });
        container
            .volume_mounts
            .get_or_insert_with(Vec::new)
            .push(VolumeMount {
                name: "data".into(),
                mount_path: "/data".into(),
                ..Default::default()
            });
    }
    pod
}

/// Gives `pod` a status: `ready[i]` for container i (absent: no status yet), the pod phase,
/// and the Ready/ContainersReady conditions.
fn with_status(mut pod: Pod, ready: &[Option<bool>], phase: &str, stale_image: bool) -> Pod {
    let containers = pod.spec.as_ref().unwrap().containers.clone();
    let statuses: Vec<ContainerStatus> = containers
        .iter()
        .zip(ready)
        .filter_map(|(c, ready)| {
            let ready = (*ready)?;
            let image = c.image.clone().unwrap_or_default();
            Some(ContainerStatus {
                name: c.name.clone(),
                image: if stale_image {
                    format!("{image}-old")
                } else {
                    image
                },
                image_id: format!("docker-pullable://{}@sha256:0", c.name),
                container_id: Some(format!("containerd://{}", c.name)),
                ready,
                ..Default::default()
            })
        })
        .collect();
    let all_ready = statuses.len() == containers.len() && statuses.iter().all(|s| s.ready);
    let condition = |type_: &str, ok: bool| PodCondition {
        type_: type_.into(),
        status: if ok { "True" } else { "False" }.into(),
        ..Default::default()
    };
    pod.status = Some(PodStatus {
        phase: Some(phase.into()),
        host_ip: Some("10.0.0.1".into()),
        conditions: Some(vec![
            condition("ContainersReady", all_ready),
            condition("Ready", all_ready),
        ]),
        container_statuses: Some(statuses),
        ..Default::default()
    });
    pod
}

fn pruned(pod: &Pod) -> Pod {
    let mut pruned = pod.clone();
    prune(&mut pruned);
    pruned
}

/// Every decision the controllers take on a cached pod, side by side for the full pod and
/// what the cache keeps of it: the pruned pod for the single-pod controllers, the summary for
/// the planner.
fn assert_same_decisions(full: &Pod, catalogue: &Catalogue) {
    let small = pruned(full);
    assert_eq!(barrier::decide(full), barrier::decide(&small));
    let step = |pod: &Pod| {
        crate::inplace::next_step(
            pod,
            None,
            &crate::inplace::SIDECARSET_ENGINE,
            jiff::Timestamp::UNIX_EPOCH,
        )
        .map(|s| std::mem::discriminant(&s))
        .ok()
    };
    assert_eq!(step(full), step(&small));
    let sets = catalogue.sidecarsets();
    let shared: Vec<_> = sets
        .iter()
        .map(|set| Arc::new(set.clone().into()))
        .collect();
    assert_eq!(
        sidecarset::sidecarsets_for_pod(full, &shared),
        sidecarset::sidecarsets_for_pod(&small, &shared)
    );
    let now = Time(jiff::Timestamp::UNIX_EPOCH);
    for set in sets {
        for upgradable in [true, false] {
            assert_eq!(
                rollout::upgradable_condition(full, set.name(), upgradable, &now),
                rollout::upgradable_condition(&small, set.name(), upgradable, &now)
            );
        }
    }
    // The cache decides on the pruned pod, with the summary of the full one.
    assert_eq!(held(full, &summary(full)), held(&small, &summary(full)));
    let engine = &crate::inplace::SIDECARSET_ENGINE;
    let at_rest = crate::inplace::at_rest(full, engine);
    assert_eq!(at_rest, crate::inplace::at_rest(&small, engine));
    assert_eq!(
        summary(full).engine_at_rest(EngineOwner::SidecarSet),
        at_rest
    );
    let cloneset_engine = &crate::workload::engine::ENGINE;
    assert_eq!(
        summary(full).engine_at_rest(EngineOwner::Workload),
        crate::inplace::at_rest(full, cloneset_engine)
    );
    assert_eq!(
        crate::inplace::at_rest(full, cloneset_engine),
        crate::inplace::at_rest(&small, cloneset_engine)
    );
    assert_eq!(
        crate::inplace::pod_update_completed(full, cloneset_engine.hasher),
        crate::inplace::pod_update_completed(&small, cloneset_engine.hasher)
    );
    assert_eq!(
        crate::inplace::update_in_flight(full, engine),
        crate::podmarks::EngineProgress::of(full).is_some() && !at_rest
    );
    let full = [Arc::new(full.clone())];
    let summary = [Arc::new(PodSummary::of(&full[0]))];
    for set in sets {
        for upgradable in [true, false] {
            assert_eq!(
                rollout::upgradable_condition(full[0].as_ref(), set.name(), upgradable, &now),
                rollout::upgradable_condition(summary[0].as_ref(), set.name(), upgradable, &now)
            );
        }
    }
    for set in sets {
        let matched_full = rollout::matched_pods(set, &full, |_| None).unwrap();
        let matched_summary = rollout::matched_pods(set, &summary, |_| None).unwrap();
        assert_eq!(matched_full.len(), matched_summary.len(), "{}", set.name());
        assert_eq!(
            rollout::facts_of(set, &full),
            rollout::facts_of(set, &summary),
            "{}",
            set.name()
        );
        assert_eq!(
            rollout::plan_round(set, &matched_full),
            rollout::plan_round(set, &matched_summary),
            "{}",
            set.name()
        );
    }
}

#[test]
fn pruning_drops_the_bulk() {
    let catalogue = catalogue();
    let full = with_status(
        admitted("pod-web-log-agent.json", &catalogue),
        &[Some(true); 8],
        "Running",
        false,
    );
    let small = pruned(&full);
    assert!(small.metadata.managed_fields.is_none());
    let annotations = small.metadata.annotations.as_ref().unwrap();
    assert!(!annotations.contains_key(keys::LAST_APPLIED_CONFIGURATION));
    assert!(annotations.contains_key(keys::SIDECARSET_INJECTED_LIST));
    assert!(!annotations.contains_key(keys::SIDECARSET_HASH));
    let spec = small.spec.as_ref().unwrap();
    assert!(spec.volumes.is_none());
    assert!(
        spec.containers
            .iter()
            .all(|c| c.volume_mounts.is_none() && c.env.iter().flatten().all(read_by_controllers))
    );
    assert!(small.status.as_ref().unwrap().host_ip.is_none());
    let size = |pod: &Pod| serde_json::to_vec(pod).unwrap().len();
    assert!(
        size(&small) * 2 < size(&full),
        "{} vs {}",
        size(&small),
        size(&full)
    );
}

#[test]
fn pruning_keeps_the_launch_priority_env() {
    let catalogue = catalogue();
    let full = admitted("pod-ordered-launch.json", &catalogue);
    let small = pruned(&full);
    let env_names = |pod: &Pod| -> Vec<String> {
        pod.spec
            .as_ref()
            .unwrap()
            .containers
            .iter()
            .flat_map(|c| c.env.iter().flatten())
            .filter(|e| read_by_controllers(e))
            .map(|e| format!("{}={:?}", e.name, e.value_from))
            .collect()
    };
    assert!(!env_names(&full).is_empty());
    assert_eq!(env_names(&full), env_names(&small));
    assert_eq!(
        barrier::configmap_name(&full),
        barrier::configmap_name(&small)
    );
}

/// The in-place engine compares the env hash of the pod's metadata with the node agent's
/// record: the cached pod must give the same hash as the full one.
#[test]
fn pruning_keeps_what_the_env_hash_reads() {
    use crate::inplace::env_hash::expected_hash;
    use k8s_openapi::api::core::v1::{EnvVarSource, ObjectFieldSelector};
    let mut full = admitted("pod-ordered-launch.json", &catalogue());
    full.metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert("app-config".into(), "config v2".into());
    let reads = |name: &str, path: &str| EnvVar {
        name: name.into(),
        value_from: Some(EnvVarSource {
            field_ref: Some(ObjectFieldSelector {
                field_path: path.into(),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    };
    let container = &mut full.spec.as_mut().unwrap().containers[0];
    container.env.get_or_insert_with(Vec::new).extend([
        reads("APP_CONFIG", "metadata.annotations['app-config']"),
        reads("POD_NAME", "metadata.name"),
    ]);
    let small = pruned(&full);
    let full_container = &full.spec.as_ref().unwrap().containers[0];
    let small_container = &small.spec.as_ref().unwrap().containers[0];
    assert_ne!(expected_hash(&full, full_container), 86_995_377);
    assert_eq!(
        expected_hash(&full, full_container),
        expected_hash(&small, small_container)
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn controllers_decide_the_same_on_what_the_cache_keeps(
        fixture in prop::sample::select(vec![
            "pod-web-log-agent.json",
            "pod-ordered-launch.json",
            "pod-shop-proxy-priority.json",
        ]),
        ready in prop::collection::vec(prop::option::of(any::<bool>()), 8),
        phase in prop::sample::select(vec!["Pending", "Running", "Unknown", "Succeeded"]),
        stale_image in any::<bool>(),
        marked in prop::option::of(any::<bool>()),
    ) {
        let catalogue = catalogue();
        let mut pod = with_status(admitted(fixture, &catalogue), &ready, phase, stale_image);
        if let Some(upgradable) = marked {
            // A condition a previous round wrote, for some SidecarSet.
            let status = if upgradable { "True" } else { "False" };
            pod.status.as_mut().unwrap().conditions.as_mut().unwrap().push(PodCondition {
                type_: keys::SIDECARSET_UPGRADABLE_CONDITION.into(),
                status: status.into(),
                reason: Some(keys::REASON_UPDATE_IMMUTABLE_FIELD.into()),
                message: Some(format!("{{\"log-agent\":{upgradable}}}")),
                ..Default::default()
            });
        }
        assert_same_decisions(&pod, &catalogue);
    }
}

/// [`held`] as the cache asks it, with the pod's summary.
fn held_now(pod: &Pod) -> bool {
    held(pod, &summary(pod))
}

fn owned_by(kind: &str, api_version: &str, controller: bool) -> Pod {
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": "p", "namespace": "ns", "ownerReferences": [{
            "apiVersion": api_version, "kind": kind, "name": "x", "uid": "u",
            "controller": controller}]},
        "spec": {"containers": [{"name": "app", "image": "app:v1"}]}
    }))
    .unwrap()
}

#[test]
fn the_cache_holds_whole_only_the_pods_a_controller_reads_whole() {
    let catalogue = catalogue();
    let all_ready = [Some(true); 8];
    // A sidecar-injected pod without a barrier: the summary is enough.
    let plain = with_status(
        admitted("pod-web-log-agent.json", &catalogue),
        &all_ready,
        "Running",
        false,
    );
    assert!(!held_now(&plain));
    // A CloneSet's pod that every round reads whole: one with a lifecycle state to move on (or
    // an update in flight, below); one at rest is left to its summary, whoever owns it.
    let cloneset_pod = |controller: bool, lifecycle: Option<&str>| {
        let mut pod = owned_by("CloneSet", "apps.kruise.io/v1alpha1", controller);
        if let Some(state) = lifecycle {
            pod.metadata.labels = Some(
                [(
                    crate::workload::lifecycle::LIFECYCLE_STATE.into(),
                    state.into(),
                )]
                .into(),
            );
        }
        pod
    };
    assert!(held_now(&cloneset_pod(
        true,
        Some(crate::workload::lifecycle::PREPARING_NORMAL)
    )));
    assert!(held_now(&cloneset_pod(
        false,
        Some(crate::workload::lifecycle::UPDATED)
    )));
    assert!(!held_now(&cloneset_pod(
        true,
        Some(crate::workload::lifecycle::NORMAL)
    )));
    assert!(!held_now(&cloneset_pod(true, None)));
    assert!(!held_now(&owned_by("ReplicaSet", "apps/v1", true)));
    let mut foreign = owned_by("CloneSet", "example.com/v1", true);
    foreign.metadata.labels = Some(
        [(
            crate::workload::lifecycle::LIFECYCLE_STATE.into(),
            crate::workload::lifecycle::UPDATING.into(),
        )]
        .into(),
    );
    assert!(!held_now(&foreign));
    // A launch barrier still to open; once it opened, never again.
    let ordered = admitted("pod-ordered-launch.json", &catalogue);
    let starting = with_status(ordered, &[Some(false); 8], "Pending", false);
    assert_ne!(barrier::decide(&starting), BarrierDecision::Ignore);
    assert!(held_now(&starting));
    let mut opened = starting.clone();
    opened
        .metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert(
            keys::CONTAINER_LAUNCH_PRIORITY_COMPLETED.into(),
            "true".into(),
        );
    assert_eq!(barrier::decide(&opened), BarrierDecision::Ignore);
    assert!(!held_now(&opened));
    // An in-place update in progress: a batch still to come.
    let with_state = |state: &str| {
        let mut pod = plain.clone();
        pod.metadata
            .annotations
            .get_or_insert_with(Default::default)
            .insert(keys::INPLACE_UPDATE_STATE.into(), state.into());
        pod
    };
    let updating = with_state(
        r#"{"revision":"r2","updateTimestamp":"2026-11-22T10:00:00Z","nextContainerImages":{"app":"app:v2"}}"#,
    );
    assert!(held_now(&updating));
    assert!(!summary(&updating).engine_at_rest(EngineOwner::SidecarSet));
    // Done: the state stays on the pod, which is no longer held.
    let finished = with_state(r#"{"revision":"r2","updateTimestamp":"2026-11-22T10:00:00Z"}"#);
    assert!(!held_now(&finished));
    assert!(summary(&finished).engine_at_rest(EngineOwner::SidecarSet));
    // An unreadable state is none for the engine: not held, and not at rest either (the engine
    // reports it on every round it reads it).
    let unreadable = with_state("{");
    assert!(!held_now(&unreadable));
    assert!(!summary(&unreadable).engine_at_rest(EngineOwner::SidecarSet));
}

/// What a subscriber maps and observes a relisted pod by survives in its stand-in: identity,
/// version, owners and labels. (The CloneSet's expectations compare the uid with the cache's.)
#[test]
fn a_stand_in_keeps_what_subscribers_read() {
    let mut pod = owned_by("CloneSet", "apps.kruise.io/v1alpha1", true);
    pod.metadata.uid = Some("pod-uid".into());
    pod.metadata.resource_version = Some("42".into());
    pod.metadata.labels = Some([("app".to_string(), "web".to_string())].into());
    let stand_in = stand_in(&summary(&pod));
    assert_eq!(stand_in.metadata.namespace, pod.metadata.namespace);
    assert_eq!(stand_in.metadata.name, pod.metadata.name);
    assert_eq!(stand_in.metadata.uid, pod.metadata.uid);
    assert_eq!(
        stand_in.metadata.resource_version,
        pod.metadata.resource_version
    );
    assert_eq!(stand_in.metadata.labels, pod.metadata.labels);
    let owners = |pod: &Pod| {
        let mut owners = pod.metadata.owner_references.clone().unwrap_or_default();
        owners
            .iter_mut()
            .for_each(|o| o.block_owner_deletion = None);
        owners
    };
    assert_eq!(owners(&stand_in), owners(&pod));
}

/// A CloneSet pod updated in place to a new tag of the same digest, as a real kubelet left it:
/// restarted since the patch, the runtime reporting the image by another of its names and the
/// imageID unchanged. Only the running container's start time tells the update is done, and the
/// pruned pod keeps it (it once did not, and such an update hung).
#[test]
fn pruning_keeps_what_in_place_completion_reads() {
    let pod: Pod = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "same-2nq45", "namespace": "ns",
            "labels": {"controller-revision-hash": "same-5f59d689bc"},
            "annotations": {
                "apps.kruise.io/inplace-update-state": r#"{"revision":"same-5f59d689bc","updateTimestamp":"2026-11-29T02:19:53.451293612Z","lastContainerStatuses":{"main":{"imageID":"localhost/kube-node/app@sha256:9309"}},"updateImages":true,"containerBatchesRecord":[{"timestamp":"2026-11-29T02:19:53Z","containers":["main"]}]}"#,
                "kruise-webhook.io/inplace-update-restart-record": r#"{"revision":"same-5f59d689bc","patchedAt":"2026-11-29T02:19:53.451293612Z","containers":{"main":{"containerID":"containerd://6e2e","restartCount":0}}}"#
            },
            "ownerReferences": [{"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
                "name": "same", "uid": "u", "controller": true}]},
        "spec": {"containers": [{"name": "main", "image": "localhost/kube-node/app:v1-again"}],
            "readinessGates": [{"conditionType": "InPlaceUpdateReady"}]},
        "status": {"phase": "Running",
            "conditions": [{"type": "InPlaceUpdateReady", "status": "False"},
                {"type": "Ready", "status": "False"}, {"type": "ContainersReady", "status": "True"}],
            "containerStatuses": [{"name": "main", "image": "docker.io/library/kube-node-app:v1",
                "imageID": "localhost/kube-node/app@sha256:9309", "containerID": "containerd://6c88",
                "restartCount": 1, "ready": true, "started": true,
                "lastState": {"terminated": {"exitCode": 0, "startedAt": "2026-11-29T02:19:48Z",
                    "finishedAt": "2026-11-29T02:19:53Z"}},
                "state": {"running": {"startedAt": "2026-11-29T02:19:56Z"}}}]}
    }))
    .unwrap();
    let engine = &crate::workload::engine::ENGINE;
    assert_eq!(
        crate::inplace::pod_update_completed(&pod, engine.hasher),
        Ok(())
    );
    assert_eq!(
        crate::inplace::pod_update_completed(&pruned(&pod), engine.hasher),
        Ok(())
    );
    assert_same_decisions(&pod, &catalogue());
}
