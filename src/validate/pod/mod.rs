//! Kubernetes' core/v1 pod validation for the parts workload validators embed: volumes,
//! containers and init containers, as `ValidatePodCreate` checks them
//! (k8s.io/kubernetes/pkg/apis/core/validation).
//!
//! Covered: volume names, sources (exactly one, and the required fields of the common ones),
//! container names, images, ports, env / envFrom, volume mounts and devices, pull and termination
//! message policies, resources, resize policies, probes, lifecycle hooks, init-container restart
//! policy and host-port conflicts. Not covered: `securityContext`, the per-driver rules of
//! cloud/legacy volume plugins (they are only counted as a volume source), and feature-gated
//! fields (image volumes, stop signals).

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{
    Container, ContainerPort, EnvFromSource, EnvVar, HTTPGetAction, KeyToPath, Lifecycle,
    LifecycleHandler, ObjectFieldSelector, Probe, ResourceFieldSelector, ResourceRequirements,
    Volume, VolumeDevice, VolumeMount, VolumeProjection,
};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::field::{
    FieldError, GoRepr, Path, config_map_key_errors, dns1123_subdomain_errors, env_var_name_errors,
    port_name_errors, port_number_errors, qualified_name_errors, validate_dns1123_label,
    validate_nonnegative, validate_qualified_name,
};
use crate::k8s::names::parse_subscripted_field_path;
use crate::k8s::quantity::Quantity;

mod containers;
mod env;
mod mounts;
mod probes;
mod resources;
mod volumes;
pub use containers::*;
pub use env::*;
use mounts::*;
pub use probes::*;
pub use resources::*;
pub use volumes::*;

const FILE_MODE_ERROR: &str = "must be a number between 0 and 0777 (octal), both inclusive";
const MORE_THAN_ONE_VOLUME_TYPE: &str = "may not specify more than 1 volume type";
const MORE_THAN_ONE_HANDLER: &str = "may not specify more than 1 handler type";

/// Field paths an env var may read through `fieldRef`.
const ENV_FIELD_PATHS: [&str; 9] = [
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.serviceAccountName",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
];
/// Field paths a downwardAPI volume file may read through `fieldRef`.
const VOLUME_FIELD_PATHS: [&str; 5] = [
    "metadata.annotations",
    "metadata.labels",
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
];
const RESOURCE_FIELD_PATHS: [&str; 6] = [
    "limits.cpu",
    "limits.ephemeral-storage",
    "limits.memory",
    "requests.cpu",
    "requests.ephemeral-storage",
    "requests.memory",
];

/// Volumes that passed validation, by name: mounts and devices may only reference these.
#[derive(Debug, Default)]
pub struct VolumeIndex<'a> {
    by_name: BTreeMap<&'a str, &'a Volume>,
}

impl<'a> VolumeIndex<'a> {
    pub fn get(&self, name: &str) -> Option<&'a Volume> {
        self.by_name.get(name).copied()
    }
}

/// What container checks need to know about the pod around them.
#[derive(Debug, Clone, Copy)]
pub struct PodContext<'v, 'a> {
    pub volumes: &'v VolumeIndex<'a>,
    /// The pod's `restartPolicy` (`Always`, `OnFailure`, `Never`).
    pub restart_policy: &'v str,
    /// The pod's `terminationGracePeriodSeconds`, bounding `sleep` lifecycle actions.
    pub termination_grace_period_seconds: Option<i64>,
}

/// Validates the containers, init containers and volumes of a pod being created, with the
/// pod-level rules around them (at least one container, unique names, host-port conflicts,
/// no whitespace around images). `spec` is the path of the pod spec (`spec`,
/// `spec.template.spec`).
pub fn validate_pod_containers_and_volumes(
    init_containers: &[&Container],
    containers: &[&Container],
    volumes: &[Volume],
    restart_policy: &str,
    termination_grace_period_seconds: Option<i64>,
    spec: &Path,
) -> Vec<FieldError> {
    let (index, mut errors) = validate_volumes(volumes, &spec.child("volumes"));
    let context = PodContext {
        volumes: &index,
        restart_policy,
        termination_grace_period_seconds,
    };
    errors.extend(validate_containers(
        containers,
        context,
        &spec.child("containers"),
    ));
    errors.extend(validate_init_containers(
        init_containers,
        containers,
        context,
        &spec.child("initContainers"),
    ));
    errors.extend(validate_images_without_whitespace(
        init_containers,
        &spec.child("initContainers"),
    ));
    errors.extend(validate_images_without_whitespace(
        containers,
        &spec.child("containers"),
    ));
    errors
}

#[cfg(test)]
mod tests;
