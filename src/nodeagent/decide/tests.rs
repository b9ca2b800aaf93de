use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Container, ContainerStatus, EnvVar, EnvVarSource, ObjectFieldSelector, Pod, PodCondition,
    PodSpec, PodStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

use super::*;
use crate::inplace::env_hash::node_agent_reports;

const V1_HASH: u64 = 417_093_530;
const V2_HASH: u64 = 2_451_607_708;
const NO_ENV_HASH: u64 = 86_995_377;

fn sidecar() -> Container {
    Container {
        name: "sidecar".into(),
        env: Some(vec![EnvVar {
            name: "APP_CONFIG".into(),
            value_from: Some(EnvVarSource {
                field_ref: Some(ObjectFieldSelector {
                    field_path: "metadata.annotations['app-config']".into(),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        }]),
        ..Default::default()
    }
}

fn status(name: &str, id: &str) -> ContainerStatus {
    ContainerStatus {
        name: name.into(),
        container_id: Some(id.into()),
        ..Default::default()
    }
}

/// The W1 pod: a CloneSet's, `sidecar` reads `app-config`, `main` reads nothing.
fn w1_pod(app_config: &str, updating: bool) -> Pod {
    let mut pod = Pod::default();
    pod.metadata.name = Some("sample-abcde".into());
    pod.metadata.annotations = Some(BTreeMap::from([(
        "app-config".to_string(),
        app_config.to_string(),
    )]));
    pod.metadata.owner_references = Some(vec![OwnerReference {
        api_version: "apps.kruise.io/v1alpha1".into(),
        kind: "CloneSet".into(),
        name: "sample".into(),
        uid: "u".into(),
        controller: Some(true),
        ..Default::default()
    }]);
    pod.spec = Some(PodSpec {
        containers: vec![
            sidecar(),
            Container {
                name: "main".into(),
                ..Default::default()
            },
        ],
        ..Default::default()
    });
    pod.status = Some(PodStatus {
        // The kubelet lists statuses by name.
        container_statuses: Some(vec![
            status("main", "containerd://m1"),
            status("sidecar", "containerd://s1"),
        ]),
        conditions: Some(vec![PodCondition {
            type_: "InPlaceUpdateReady".into(),
            status: if updating { "False" } else { "True" }.into(),
            ..Default::default()
        }]),
        ..Default::default()
    });
    pod
}

fn runtime(name: &str, id: &str, running: bool) -> RuntimeContainer {
    RuntimeContainer {
        name: name.into(),
        container_id: id.into(),
        running,
        restart_count: 0,
        plain_hash: 0xabc,
    }
}

fn with_meta(mut pod: Pod, meta: &RuntimeContainersMeta) -> Pod {
    pod.metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(
            keys::RUNTIME_CONTAINERS_META.into(),
            serde_json::to_string(meta).unwrap(),
        );
    pod
}

fn hashed(mut plan: MetaPlan, hashes: &[u64]) -> RuntimeContainersMeta {
    for (index, hash) in plan.env_hash_missing.iter().zip(hashes) {
        plan.meta.containers[*index]
            .hashes
            .extracted_env_from_metadata_hash = *hash;
    }
    plan.meta
}

#[test]
fn only_kruise_pods_are_of_interest() {
    let pod = w1_pod("config v1", false);
    assert!(is_of_interest(&pod));
    let mut foreign = pod.clone();
    foreign.metadata.owner_references.as_mut().unwrap()[0].api_version = "apps/v1".into();
    assert!(!is_of_interest(&foreign));
    foreign
        .metadata
        .annotations
        .as_mut()
        .unwrap()
        .insert(keys::SIDECARSET_HASH.into(), "{}".into());
    assert!(is_of_interest(&foreign));
}

#[test]
fn a_new_pod_gets_a_record_in_status_order_with_env_hashes_to_read() {
    let pod = w1_pod("config v1", false);
    let plan = plan_meta(
        &pod,
        &[
            runtime("main", "containerd://m1", true),
            runtime("sidecar", "containerd://s1", true),
        ],
    );
    assert_eq!(plan.env_hash_missing, vec![0, 1]);
    let meta = hashed(plan, &[NO_ENV_HASH, V1_HASH]);
    assert_eq!(
        serde_json::to_string(&meta).unwrap(),
        r#"{"containers":[{"name":"main","containerID":"containerd://m1","restartCount":0,"hashes":{"plainHash":2748,"extractedEnvFromMetadataHash":86995377}},{"name":"sidecar","containerID":"containerd://s1","restartCount":0,"hashes":{"plainHash":2748,"extractedEnvFromMetadataHash":417093530}}]}"#
    );
    let pod = with_meta(pod, &meta);
    assert!(node_agent_reports(&pod));
    // Written once: the same record again is no write.
    assert_eq!(meta_to_write(&pod, &meta), None);
    // A container not running yet gets an entry without an env hash, and none is asked for.
    let plan = plan_meta(
        &w1_pod("config v1", false),
        &[
            runtime("main", "containerd://m1", false),
            runtime("sidecar", "containerd://s1", true),
        ],
    );
    assert_eq!(plan.env_hash_missing, vec![1]);
}

#[test]
fn recorded_entries_are_kept_for_the_same_container_only() {
    let first = hashed(
        plan_meta(
            &w1_pod("config v1", false),
            &[
                runtime("main", "containerd://m1", true),
                runtime("sidecar", "containerd://s1", true),
            ],
        ),
        &[NO_ENV_HASH, V1_HASH],
    );
    let mut pod = with_meta(w1_pod("config v2", true), &first);
    // The sidecar restarted: its entry is new, main's is kept as recorded.
    pod.status
        .as_mut()
        .unwrap()
        .container_statuses
        .as_mut()
        .unwrap()[1] = status("sidecar", "containerd://s2");
    let mut restarted = runtime("sidecar", "containerd://s2", true);
    restarted.restart_count = 1;
    let plan = plan_meta(&pod, &[runtime("main", "containerd://m1", true), restarted]);
    assert_eq!(plan.env_hash_missing, vec![1]);
    assert_eq!(plan.meta.containers[0], first.containers[0]);
    assert_eq!(plan.meta.containers[1].restart_count, 1);
    assert!(
        !node_agent_reports(&pod),
        "the record is stale until rewritten"
    );
}

#[test]
fn restarts_only_containers_whose_env_moved_while_updating() {
    let meta = hashed(
        plan_meta(
            &w1_pod("config v1", false),
            &[
                runtime("main", "containerd://m1", true),
                runtime("sidecar", "containerd://s1", true),
            ],
        ),
        &[NO_ENV_HASH, V1_HASH],
    );
    // The batch patched the annotation and the gate is False: only the sidecar is stopped.
    let updating = with_meta(w1_pod("config v2", true), &meta);
    assert_eq!(
        restarts(&updating, &meta),
        vec![Restart {
            container: "sidecar".into(),
            container_id: "containerd://s1".into(),
            recorded_hash: V1_HASH,
            expected_hash: V2_HASH,
        }]
    );
    // Outside an in-place update a metadata change restarts nothing (OpenKruise's rule).
    let idle = with_meta(w1_pod("config v2", false), &meta);
    assert!(restarts(&idle, &meta).is_empty());
    // Nothing moved: nothing to do.
    let settled = with_meta(w1_pod("config v1", true), &meta);
    assert!(restarts(&settled, &meta).is_empty());
    // An env hash not read yet (0) never triggers a stop.
    let mut unread = meta.clone();
    unread.containers[1].hashes.extracted_env_from_metadata_hash = 0;
    assert!(restarts(&with_meta(w1_pod("config v2", true), &unread), &unread).is_empty());
}

#[test]
fn an_unreadable_record_is_rebuilt() {
    let mut pod = w1_pod("config v1", false);
    pod.metadata
        .annotations
        .as_mut()
        .unwrap()
        .insert(keys::RUNTIME_CONTAINERS_META.into(), "{not json".into());
    let plan = plan_meta(&pod, &[runtime("sidecar", "containerd://s1", true)]);
    assert_eq!(plan.meta.containers.len(), 1);
    assert!(meta_to_write(&pod, &plan.meta).is_some());
    assert!(!node_agent_reports(&pod));
}

#[test]
fn stop_timeout_follows_the_pods_grace() {
    let mut pod = w1_pod("x", true);
    assert_eq!(stop_timeout(&pod, 0), 30);
    pod.spec.as_mut().unwrap().termination_grace_period_seconds = Some(10);
    assert_eq!(stop_timeout(&pod, 3), 7);
    assert_eq!(stop_timeout(&pod, 9), 2);
    pod.metadata.deletion_grace_period_seconds = Some(5);
    assert_eq!(stop_timeout(&pod, 0), 5);
}
