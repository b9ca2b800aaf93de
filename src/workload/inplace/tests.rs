use std::collections::BTreeMap;
use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{
    Container, ContainerStatus, Pod, PodCondition, PodReadinessGate, PodSpec, PodStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use proptest::prelude::*;

use super::{PodWrite, RevisionScheme, Start, start_writes};
use crate::api::keys;
use crate::inject::launch_priority::barrier_env;
use crate::inplace::state::UpdateSpec;

fn at(second: i64) -> Timestamp {
    Timestamp::from_second(second).unwrap()
}

fn condition(type_: &str, status: &str) -> PodCondition {
    PodCondition {
        type_: type_.into(),
        status: status.into(),
        last_transition_time: Some(Time(at(100))),
        ..Default::default()
    }
}

/// A CloneSet pod: `sidecar` (launch priority 10 when `prioritised`) and `main`, running,
/// with or without the in-place gate, its condition in any state, maybe an earlier update's
/// annotations.
fn listed_pod(prioritised: bool, gate: bool, gate_status: Option<&str>, leftovers: bool) -> Pod {
    let containers = vec![
        Container {
            name: "sidecar".into(),
            image: Some("sidecar:v1".into()),
            env: prioritised.then(|| vec![barrier_env("web-barrier", 10)]),
            ..Default::default()
        },
        Container {
            name: "main".into(),
            image: Some("main:v1".into()),
            ..Default::default()
        },
    ];
    let mut conditions = vec![
        condition("ContainersReady", "True"),
        condition("Ready", "True"),
    ];
    if let Some(status) = gate_status {
        conditions.push(condition(keys::INPLACE_UPDATE_READY, status));
    }
    let mut annotations = BTreeMap::from([("team".to_string(), "a".to_string())]);
    if leftovers {
        annotations.insert(keys::INPLACE_UPDATE_GRACE.into(), "{}".into());
        annotations.insert(
            keys::INPLACE_UPDATE_STATE.into(),
            r#"{"revision":"web-1","updateTimestamp":null,"lastContainerStatuses":null}"#.into(),
        );
    }
    Pod {
        metadata: ObjectMeta {
            name: Some("web-abcde".into()),
            namespace: Some("default".into()),
            resource_version: Some("5".into()),
            labels: Some(BTreeMap::from([
                (
                    keys::CONTROLLER_REVISION_HASH.to_string(),
                    "web-1".to_string(),
                ),
                (
                    "lifecycle.apps.kruise.io/state".to_string(),
                    "Normal".to_string(),
                ),
            ])),
            annotations: Some(annotations),
            ..Default::default()
        },
        spec: Some(PodSpec {
            containers,
            node_name: Some("node-1".into()),
            readiness_gates: gate.then(|| {
                vec![PodReadinessGate {
                    condition_type: keys::INPLACE_UPDATE_READY.into(),
                }]
            }),
            ..Default::default()
        }),
        status: Some(PodStatus {
            phase: Some("Running".into()),
            conditions: Some(conditions),
            container_statuses: Some(
                ["sidecar", "main"]
                    .iter()
                    .map(|name| ContainerStatus {
                        name: name.to_string(),
                        image: format!("{name}:v1"),
                        image_id: format!("sha256:{name}1"),
                        ready: true,
                        ..Default::default()
                    })
                    .collect(),
            ),
            ..Default::default()
        }),
    }
}

fn update_spec(images: &[&str], grace_seconds: i32, metadata: bool) -> UpdateSpec {
    let mut spec = UpdateSpec::images(
        "web-2",
        images
            .iter()
            .map(|n| (n.to_string(), format!("{n}:v2")))
            .collect(),
    );
    spec.grace_seconds = grace_seconds;
    if metadata {
        spec.meta_data_patch = br#"{"metadata":{"labels":{"tier":"web"}}}"#.to_vec();
    }
    spec
}

/// The writes as built before the deferral: every pod built at once.
fn built_now(p: &Pod, start: &Start) -> Result<Vec<PodWrite>, String> {
    let (not_ready, after) = start.writes_now(p)?;
    let mut writes: Vec<PodWrite> = not_ready.into_iter().map(PodWrite::status).collect();
    writes.push(PodWrite::spec(after));
    Ok(writes)
}

proptest! {
    /// Deciding now and building later gives the writes building now gives, pod for pod (so the
    /// shell's patches are the same bytes), and the same refusals; the deferred pods are built
    /// only when read.
    #[test]
    fn deferred_starts_write_what_starts_built_at_once_write(
        prioritised in any::<bool>(),
        gate in any::<bool>(),
        gate_status in prop::sample::select(vec![None, Some("True"), Some("False")]),
        leftovers in any::<bool>(),
        images in prop::sample::select(vec![
            vec!["main"], vec!["sidecar", "main"], vec!["sidecar"], vec!["ghost", "main"],
        ]),
        grace_seconds in prop::sample::select(vec![0, 5]),
        metadata in any::<bool>(),
    ) {
        let p = Arc::new(listed_pod(prioritised, gate, gate_status, leftovers));
        let start = Arc::new(Start {
            spec: update_spec(&images, grace_seconds, metadata),
            target: "web-2".into(),
            scheme: RevisionScheme::CLONESET,
            now: at(1_000),
            now_text: "2026-01-01T00:00:00Z".into(),
        });
        let deferred = start_writes(&p, &start);
        if let Ok(writes) = &deferred {
            prop_assert!(metadata || writes.iter().all(|w| !w.pod.is_built()));
        }
        let now = built_now(&p, &start);
        prop_assert_eq!(&deferred, &now);
        for (later, at_once) in deferred.iter().flatten().zip(now.iter().flatten()) {
            prop_assert_eq!(
                serde_json::to_string(&*later.pod).unwrap(),
                serde_json::to_string(&*at_once.pod).unwrap()
            );
        }
    }
}
