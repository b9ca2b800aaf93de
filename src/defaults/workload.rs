//! Defaults of the Kruise workloads (CloneSet, Advanced StatefulSet, Advanced DaemonSet), as
//! OpenKruise's mutating webhooks apply them (spec §3.1–§3.3), including Kubernetes' own defaults
//! of the pod template.
//!
//! They are needed twice: the `/mutate-apps-kruise-io-<kind>` webhooks store them, and the
//! validating webhooks check the defaulted form, so that a manifest OpenKruise accepts is accepted
//! here even where the mutating webhook is not registered (Kubernetes' pod rules require
//! `restartPolicy`, `dnsPolicy`, `imagePullPolicy`, … which only defaulting fills).
//!
//! Every function is idempotent: defaulting a defaulted object changes nothing.

use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::pod::{default_container, default_probe, default_volume, set_if_empty};
use crate::api::cloneset::{self, CloneSet, IN_PLACE_IF_POSSIBLE, IN_PLACE_ONLY, RECREATE};
use crate::api::daemonset::{self, DaemonSet, RollingUpdateDaemonSet};
use crate::api::statefulset::{
    self, ORDERED_READY, RETAIN, RollingUpdateStatefulSetStrategy,
    StatefulSetPersistentVolumeClaimRetentionPolicy, v1alpha1,
};

const DEFAULT_REPLICAS: i32 = 1;
const DEFAULT_REVISION_HISTORY_LIMIT: i32 = 10;
const DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS: i64 = 30;
const DEFAULT_SCHEDULER_NAME: &str = "default-scheduler";
const CLONESET_DEFAULT_MAX_UNAVAILABLE: &str = "20%";
const DAEMONSET_DEFAULT_BURST_REPLICAS: i32 = 250;

/// Kubernetes' defaults of a pod template (`SetDefaults_PodSpec`, containers, volumes, probes).
pub fn default_pod_template(template: &mut PodTemplateSpec) {
    let spec = template.spec.get_or_insert_with(Default::default);
    default_pod_spec(spec);
}

fn default_pod_spec(spec: &mut PodSpec) {
    set_if_empty(&mut spec.dns_policy, "ClusterFirst");
    set_if_empty(&mut spec.restart_policy, "Always");
    set_if_empty(&mut spec.scheduler_name, DEFAULT_SCHEDULER_NAME);
    spec.termination_grace_period_seconds
        .get_or_insert(DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS);
    spec.security_context.get_or_insert_with(Default::default);
    let host_network = spec.host_network.unwrap_or(false);
    let containers = spec
        .containers
        .iter_mut()
        .chain(spec.init_containers.iter_mut().flatten());
    for container in containers {
        default_template_container(container, host_network);
    }
    for volume in spec.volumes.iter_mut().flatten() {
        default_volume(volume);
    }
}

fn default_template_container(container: &mut Container, host_network: bool) {
    default_container(container);
    // Sidecar defaulting leaves startup probes alone (an OpenKruise quirk the SidecarSet hash
    // depends on); pod templates get Kubernetes' full defaults.
    if let Some(probe) = container.startup_probe.as_mut() {
        default_probe(probe);
    }
    if host_network {
        for port in container.ports.iter_mut().flatten() {
            if port.host_port.unwrap_or(0) == 0 {
                port.host_port = Some(port.container_port);
            }
        }
    }
}

/// `SetDefaultsCloneSet`: replicas 1, revisionHistoryLimit 10, update type `ReCreate`
/// (`inPlaceUpdateStrategy: {}` for in-place types), partition 0, maxUnavailable `20%`,
/// maxSurge 0, and the pod template.
pub fn default_cloneset(set: &mut CloneSet) {
    let spec = &mut set.spec;
    spec.replicas.get_or_insert(DEFAULT_REPLICAS);
    spec.revision_history_limit
        .get_or_insert(DEFAULT_REVISION_HISTORY_LIMIT);
    let strategy = &mut spec.update_strategy;
    set_if_empty(&mut strategy.type_, RECREATE);
    if matches!(
        strategy.type_.as_deref(),
        Some(IN_PLACE_IF_POSSIBLE | IN_PLACE_ONLY)
    ) {
        strategy
            .in_place_update_strategy
            .get_or_insert_with(Default::default);
    }
    strategy.partition.get_or_insert(IntOrString::Int(0));
    strategy
        .max_unavailable
        .get_or_insert_with(|| IntOrString::String(CLONESET_DEFAULT_MAX_UNAVAILABLE.into()));
    strategy.max_surge.get_or_insert(IntOrString::Int(0));
    default_pod_template(&mut spec.template);
}

/// `SetDefaultsStatefulSet` (v1beta1): podManagementPolicy `OrderedReady`, update type
/// `RollingUpdate` with partition 0, maxUnavailable 1, podUpdatePolicy `ReCreate` and
/// minReadySeconds 0, retention policy `Retain`/`Retain` (OpenKruise's `StatefulSetAutoDeletePVC`
/// feature, on by default), replicas 1, revisionHistoryLimit 10, and the pod template.
pub fn default_statefulset(set: &mut statefulset::StatefulSet) {
    let spec = &mut set.spec;
    set_if_empty(&mut spec.pod_management_policy, ORDERED_READY);
    let strategy = &mut spec.update_strategy;
    set_if_empty(&mut strategy.type_, statefulset::ROLLING_UPDATE);
    if strategy.type_.as_deref() == Some(statefulset::ROLLING_UPDATE) {
        default_statefulset_rolling_update(
            strategy.rolling_update.get_or_insert_with(Default::default),
        );
    }
    let retention = spec
        .persistent_volume_claim_retention_policy
        .get_or_insert_with(StatefulSetPersistentVolumeClaimRetentionPolicy::default);
    set_if_empty(&mut retention.when_deleted, RETAIN);
    set_if_empty(&mut retention.when_scaled, RETAIN);
    spec.replicas.get_or_insert(DEFAULT_REPLICAS);
    spec.revision_history_limit
        .get_or_insert(DEFAULT_REVISION_HISTORY_LIMIT);
    default_pod_template(&mut spec.template);
}

fn default_statefulset_rolling_update(rolling: &mut RollingUpdateStatefulSetStrategy) {
    rolling.partition.get_or_insert(0);
    rolling.max_unavailable.get_or_insert(IntOrString::Int(1));
    set_if_empty(&mut rolling.pod_update_policy, RECREATE);
    rolling.min_ready_seconds.get_or_insert(0);
}

/// [`default_statefulset`] for the `v1alpha1` shape (no retention policy there).
pub fn default_statefulset_v1alpha1(set: &mut v1alpha1::StatefulSet) {
    let spec = &mut set.spec;
    set_if_empty(&mut spec.pod_management_policy, ORDERED_READY);
    let strategy = &mut spec.update_strategy;
    set_if_empty(&mut strategy.type_, statefulset::ROLLING_UPDATE);
    if strategy.type_.as_deref() == Some(statefulset::ROLLING_UPDATE) {
        let rolling = strategy.rolling_update.get_or_insert_with(Default::default);
        rolling.partition.get_or_insert(0);
        rolling.max_unavailable.get_or_insert(IntOrString::Int(1));
        set_if_empty(&mut rolling.pod_update_policy, RECREATE);
        rolling.min_ready_seconds.get_or_insert(0);
    }
    spec.replicas.get_or_insert(DEFAULT_REPLICAS);
    spec.revision_history_limit
        .get_or_insert(DEFAULT_REVISION_HISTORY_LIMIT);
    default_pod_template(&mut spec.template);
}

/// `SetDefaultsDaemonSet`: burstReplicas 250, update type `RollingUpdate` with
/// `rollingUpdateType` `Standard` (the deprecated `Surging` becomes `Standard` with maxSurge 1
/// and maxUnavailable 0 where unset; with neither set, maxUnavailable 1 and maxSurge 0),
/// revisionHistoryLimit 10, and the pod template.
pub fn default_daemonset(set: &mut DaemonSet) {
    let spec = &mut set.spec;
    spec.burst_replicas
        .get_or_insert(IntOrString::Int(DAEMONSET_DEFAULT_BURST_REPLICAS));
    let strategy = &mut spec.update_strategy;
    set_if_empty(&mut strategy.type_, statefulset::ROLLING_UPDATE);
    if strategy.type_.as_deref() == Some(statefulset::ROLLING_UPDATE) {
        default_daemonset_rolling_update(
            strategy.rolling_update.get_or_insert_with(Default::default),
        );
    }
    spec.revision_history_limit
        .get_or_insert(DEFAULT_REVISION_HISTORY_LIMIT);
    default_pod_template(&mut spec.template);
}

fn default_daemonset_rolling_update(rolling: &mut RollingUpdateDaemonSet) {
    surge_for_surging(rolling);
    set_if_empty(&mut rolling.rolling_update_type, daemonset::STANDARD);
    if rolling.max_unavailable.is_none() && rolling.max_surge.is_none() {
        rolling.max_unavailable = Some(IntOrString::Int(1));
        rolling.max_surge = Some(IntOrString::Int(0));
    }
}

/// What OpenKruise's v1beta1 CloneSet webhook (`SetDefaultsCloneSetV1beta1`) spells in v1beta1
/// terms: `type: RollingUpdate` with `podUpdatePolicy: ReCreate` where unset. The rest, in the
/// v1alpha1 terms this project works in, is [`default_cloneset`]'s.
pub fn default_cloneset_v1beta1(set: &mut cloneset::v1beta1::CloneSet) {
    let strategy = &mut set.spec.update_strategy;
    set_if_empty(&mut strategy.type_, cloneset::v1beta1::ROLLING_UPDATE);
    if strategy.type_.as_deref() == Some(cloneset::v1beta1::ROLLING_UPDATE) {
        let rolling = strategy.rolling_update.get_or_insert_with(Default::default);
        set_if_empty(&mut rolling.pod_update_policy, RECREATE);
    }
}

/// What OpenKruise's v1alpha1 DaemonSet webhook alone does before conversion turns the
/// deprecated `Surging` into `Standard`: it becomes a surge. The rest is [`default_daemonset`]'s.
pub fn default_daemonset_v1alpha1(set: &mut daemonset::v1alpha1::DaemonSet) {
    let strategy = &mut set.spec.update_strategy;
    let rolling_update = matches!(
        strategy.type_.as_deref(),
        None | Some("") | Some(statefulset::ROLLING_UPDATE)
    );
    if let Some(rolling) = strategy.rolling_update.as_mut().filter(|_| rolling_update) {
        surge_for_surging(rolling);
    }
}

/// `Surging` is `Standard` with maxSurge 1 and maxUnavailable 0 where unset.
fn surge_for_surging(rolling: &mut RollingUpdateDaemonSet) {
    if rolling.rolling_update_type.as_deref() == Some(daemonset::SURGING) {
        rolling.rolling_update_type = Some(daemonset::STANDARD.to_string());
        rolling.max_surge.get_or_insert(IntOrString::Int(1));
        rolling.max_unavailable.get_or_insert(IntOrString::Int(0));
    }
}

#[cfg(test)]
mod tests;
