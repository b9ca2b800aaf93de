//! What the benches share.

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{ContainerStatus, Pod, PodCondition, PodStatus};
use kruise_webhook::api::keys;

/// Resident set size of this process, from /proc (0 where there is none).
pub fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kib| kib.parse().ok())
        })
        .unwrap_or(0)
}

/// Scheduled, running, ready, the in-place gate True, image IDs per container.
#[allow(dead_code)] // the workload benches make running pods; the others include this module too
pub fn running(mut pod: Pod, i: usize, now: Timestamp) -> Pod {
    pod.metadata.resource_version = Some(i.to_string());
    // Scheduled pods have left PreparingNormal.
    pod.metadata
        .labels
        .get_or_insert_with(Default::default)
        .insert("lifecycle.apps.kruise.io/state".into(), "Normal".into());
    pod.metadata.uid = Some(format!("00000000-0000-4000-8000-{i:012}"));
    let spec = pod.spec.get_or_insert_with(Default::default);
    spec.node_name = Some(format!("node-{}", i % 100));
    let statuses = spec
        .containers
        .iter()
        .map(|c| ContainerStatus {
            name: c.name.clone(),
            image: c.image.clone().unwrap_or_default(),
            image_id: format!("sha256:{i:064}"),
            container_id: Some(format!("containerd://{}-{i}", c.name)),
            ready: true,
            started: Some(true),
            ..Default::default()
        })
        .collect();
    let condition = |type_: &str| PodCondition {
        type_: type_.into(),
        status: "True".into(),
        last_transition_time: Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(now)),
        ..Default::default()
    };
    pod.status = Some(PodStatus {
        phase: Some("Running".into()),
        conditions: Some(vec![
            condition("PodScheduled"),
            condition("ContainersReady"),
            condition("Ready"),
            condition(keys::INPLACE_UPDATE_READY),
        ]),
        container_statuses: Some(statuses),
        ..Default::default()
    });
    pod
}
