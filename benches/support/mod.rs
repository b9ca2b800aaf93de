//! What the benches share.

use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{ContainerStatus, Pod, PodCondition, PodStatus};
use kruise_webhook::api::keys;
use kruise_webhook::controller::pod_cache;
use kruise_webhook::podmarks::PodSummary;
use kruise_webhook::workload::ListedPod;

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

/// Pods as the controller's pod cache keeps them: a summary of every pod, and the pruned pod
/// itself only where a controller reads it whole every round (`held`), with the process's RSS
/// read before, between and after. The caller frees nothing it wants measured until then: memory
/// freed in between would be reused by these copies and hide them.
#[allow(dead_code)] // the workload benches keep pods; the others include this module too
pub struct CachedPods {
    summaries: Vec<Arc<PodSummary>>,
    held: Vec<Option<Arc<Pod>>>,
    rss_before: u64,
    rss_summaries: u64,
    /// RSS once both are kept.
    pub rss_pods: u64,
}

#[allow(dead_code)]
impl CachedPods {
    pub fn of(pods: &[Pod]) -> Self {
        let rss_before = rss_kib();
        let summaries: Vec<Arc<PodSummary>> = pods
            .iter()
            .map(|pod| Arc::new(pod_cache::summary(pod)))
            .collect();
        let rss_summaries = rss_kib();
        let held = pods
            .iter()
            .zip(&summaries)
            .map(|(pod, summary)| {
                let mut pruned = pod.clone();
                pod_cache::prune(&mut pruned);
                pod_cache::held(&pruned, summary).then(|| Arc::new(pruned))
            })
            .collect();
        let rss_pods = rss_kib();
        CachedPods {
            summaries,
            held,
            rss_before,
            rss_summaries,
            rss_pods,
        }
    }

    /// What the cache costs, one line: the whole, the pods held whole, the summaries.
    pub fn report(&self) -> String {
        let mib = |kib: u64| kib as f64 / 1024.0;
        format!(
            "  {} pods in the cache: {:.1} MiB of process RSS ({:.1} MiB the {} pruned pods held whole, {:.1} MiB the summaries)",
            self.summaries.len(),
            mib(self.rss_pods.saturating_sub(self.rss_before)),
            mib(self.rss_pods.saturating_sub(self.rss_summaries)),
            self.held.iter().flatten().count(),
            mib(self.rss_summaries.saturating_sub(self.rss_before)),
        )
    }

    /// The pods as a round's snapshot lists them.
    pub fn listed(&self) -> Vec<ListedPod> {
        self.summaries
            .iter()
            .zip(&self.held)
            .map(|(summary, whole)| ListedPod {
                summary: summary.clone(),
                whole: whole.clone(),
            })
            .collect()
    }
}
