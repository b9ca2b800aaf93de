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
use crate::inject::quantity::Quantity;
use crate::inject::sidecar::parse_subscripted_field_path;

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

// ---------------------------------------------------------------------------------------------
// Volumes

/// `ValidateVolumes`: each volume needs a DNS-1123 label name, a unique name and exactly one
/// valid source. Only volumes without errors enter the returned index.
pub fn validate_volumes<'a>(
    volumes: &'a [Volume],
    path: &Path,
) -> (VolumeIndex<'a>, Vec<FieldError>) {
    let mut index = VolumeIndex::default();
    let mut seen = BTreeSet::new();
    let mut errors = Vec::new();
    for (i, volume) in volumes.iter().enumerate() {
        let volume_path = path.index(i);
        let name_path = volume_path.child("name");
        let mut volume_errors = validate_volume_source(volume, &volume_path);
        if volume.name.is_empty() {
            volume_errors.push(FieldError::required(&name_path, ""));
        } else {
            volume_errors.extend(validate_dns1123_label(&volume.name, &name_path));
        }
        if seen.contains(volume.name.as_str()) {
            volume_errors.push(FieldError::duplicate(&name_path, volume.name.as_str()));
        }
        if volume_errors.is_empty() {
            seen.insert(volume.name.as_str());
            index.by_name.insert(volume.name.as_str(), volume);
        } else {
            errors.extend(volume_errors);
        }
    }
    (index, errors)
}

/// Source names in the order Kubernetes checks them, with whether each is set.
fn volume_sources(volume: &Volume) -> [(&'static str, bool); 30] {
    [
        ("emptyDir", volume.empty_dir.is_some()),
        ("hostPath", volume.host_path.is_some()),
        ("gitRepo", volume.git_repo.is_some()),
        ("gcePersistentDisk", volume.gce_persistent_disk.is_some()),
        (
            "awsElasticBlockStore",
            volume.aws_elastic_block_store.is_some(),
        ),
        ("secret", volume.secret.is_some()),
        ("nfs", volume.nfs.is_some()),
        ("iscsi", volume.iscsi.is_some()),
        ("glusterfs", volume.glusterfs.is_some()),
        ("flocker", volume.flocker.is_some()),
        (
            "persistentVolumeClaim",
            volume.persistent_volume_claim.is_some(),
        ),
        ("rbd", volume.rbd.is_some()),
        ("cinder", volume.cinder.is_some()),
        ("cephfs", volume.cephfs.is_some()),
        ("quobyte", volume.quobyte.is_some()),
        ("downwardAPI", volume.downward_api.is_some()),
        ("fc", volume.fc.is_some()),
        ("flexVolume", volume.flex_volume.is_some()),
        ("configMap", volume.config_map.is_some()),
        ("azureFile", volume.azure_file.is_some()),
        ("vsphereVolume", volume.vsphere_volume.is_some()),
        (
            "photonPersistentDisk",
            volume.photon_persistent_disk.is_some(),
        ),
        ("portworxVolume", volume.portworx_volume.is_some()),
        ("azureDisk", volume.azure_disk.is_some()),
        ("storageos", volume.storageos.is_some()),
        ("projected", volume.projected.is_some()),
        ("scaleIO", volume.scale_io.is_some()),
        ("csi", volume.csi.is_some()),
        ("ephemeral", volume.ephemeral.is_some()),
        ("image", volume.image.is_some()),
    ]
}

fn validate_volume_source(volume: &Volume, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut first: Option<&'static str> = None;
    for (name, set) in volume_sources(volume) {
        if !set {
            continue;
        }
        if first.is_some() {
            errors.push(FieldError::forbidden(
                &path.child(name),
                MORE_THAN_ONE_VOLUME_TYPE,
            ));
        } else {
            first = Some(name);
            errors.extend(validate_one_source(volume, name, &path.child(name)));
        }
    }
    if first.is_none() {
        errors.push(FieldError::required(path, "must specify a volume type"));
    }
    errors
}

/// The per-source rules of the sources sidecars commonly use.
fn validate_one_source(volume: &Volume, source: &str, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    match source {
        "emptyDir" => {
            let size = volume
                .empty_dir
                .as_ref()
                .and_then(|e| e.size_limit.as_ref());
            if let Some(size) = size
                && quantity_value(&size.0).is_some_and(|v| v < 0.0)
            {
                errors.push(FieldError::forbidden(
                    &path.child("sizeLimit"),
                    "SizeLimit field must be a valid resource quantity",
                ));
            }
        }
        "hostPath" => {
            if let Some(host_path) = &volume.host_path {
                if host_path.path.is_empty() {
                    errors.push(FieldError::required(&path.child("path"), ""));
                    return errors;
                }
                errors.extend(validate_path_no_backsteps(
                    &host_path.path,
                    &path.child("path"),
                ));
                const TYPES: [&str; 8] = [
                    "",
                    "BlockDevice",
                    "CharDevice",
                    "Directory",
                    "DirectoryOrCreate",
                    "File",
                    "FileOrCreate",
                    "Socket",
                ];
                let kind = host_path.type_.as_deref().unwrap_or("");
                if !TYPES.contains(&kind) {
                    errors.push(FieldError::not_supported(&path.child("type"), kind, &TYPES));
                }
            }
        }
        "gitRepo" => {
            if let Some(git) = &volume.git_repo {
                if git.repository.is_empty() {
                    errors.push(FieldError::required(&path.child("repository"), ""));
                }
                let directory = git.directory.as_deref().unwrap_or("");
                errors.extend(validate_local_descending_path(
                    directory,
                    &path.child("directory"),
                ));
            }
        }
        "secret" => {
            if let Some(secret) = &volume.secret {
                if secret.secret_name.as_deref().unwrap_or("").is_empty() {
                    errors.push(FieldError::required(&path.child("secretName"), ""));
                }
                errors.extend(validate_file_mode(
                    secret.default_mode,
                    &path.child("defaultMode"),
                ));
                errors.extend(validate_key_to_paths(
                    secret.items.as_deref(),
                    &path.child("items"),
                ));
            }
        }
        "configMap" => {
            if let Some(config_map) = &volume.config_map {
                if config_map.name.is_empty() {
                    errors.push(FieldError::required(&path.child("name"), ""));
                }
                errors.extend(validate_file_mode(
                    config_map.default_mode,
                    &path.child("defaultMode"),
                ));
                errors.extend(validate_key_to_paths(
                    config_map.items.as_deref(),
                    &path.child("items"),
                ));
            }
        }
        "nfs" => {
            if let Some(nfs) = &volume.nfs {
                if nfs.server.is_empty() {
                    errors.push(FieldError::required(&path.child("server"), ""));
                }
                if nfs.path.is_empty() {
                    errors.push(FieldError::required(&path.child("path"), ""));
                }
                if !nfs.path.starts_with('/') {
                    errors.push(FieldError::invalid(
                        &path.child("path"),
                        nfs.path.as_str(),
                        "must be an absolute path",
                    ));
                }
            }
        }
        "persistentVolumeClaim"
            if volume
                .persistent_volume_claim
                .as_ref()
                .is_some_and(|pvc| pvc.claim_name.is_empty()) =>
        {
            errors.push(FieldError::required(&path.child("claimName"), ""));
        }
        "downwardAPI" => {
            if let Some(downward) = &volume.downward_api {
                errors.extend(validate_file_mode(
                    downward.default_mode,
                    &path.child("defaultMode"),
                ));
                let items_path = path.child("items");
                for (i, file) in downward.items.iter().flatten().enumerate() {
                    errors.extend(validate_downward_api_file(file, &items_path.index(i)));
                }
            }
        }
        "projected" => {
            if let Some(projected) = &volume.projected {
                errors.extend(validate_file_mode(
                    projected.default_mode,
                    &path.child("defaultMode"),
                ));
                errors.extend(validate_projection_sources(
                    projected.sources.as_deref().unwrap_or(&[]),
                    path,
                ));
            }
        }
        "csi" if volume.csi.as_ref().is_some_and(|csi| csi.driver.is_empty()) => {
            errors.push(FieldError::required(&path.child("driver"), ""));
        }
        "ephemeral"
            if volume
                .ephemeral
                .as_ref()
                .is_some_and(|e| e.volume_claim_template.is_none()) =>
        {
            errors.push(FieldError::required(&path.child("volumeClaimTemplate"), ""));
        }
        _ => {}
    }
    errors
}

fn validate_file_mode(mode: Option<i32>, path: &Path) -> Vec<FieldError> {
    match mode {
        Some(mode) if !(0..=0o777).contains(&mode) => {
            vec![FieldError::invalid(path, mode, FILE_MODE_ERROR)]
        }
        _ => Vec::new(),
    }
}

fn validate_key_to_paths(items: Option<&[KeyToPath]>, path: &Path) -> Vec<FieldError> {
    items
        .into_iter()
        .flatten()
        .enumerate()
        .flat_map(|(i, item)| validate_key_to_path(item, &path.index(i)))
        .collect()
}

fn validate_key_to_path(item: &KeyToPath, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if item.key.is_empty() {
        errors.push(FieldError::required(&path.child("key"), ""));
    }
    if item.path.is_empty() {
        errors.push(FieldError::required(&path.child("path"), ""));
    }
    errors.extend(validate_local_non_reserved_path(
        &item.path,
        &path.child("path"),
    ));
    errors.extend(validate_file_mode(item.mode, &path.child("mode")));
    errors
}

fn validate_projection_sources(sources: &[VolumeProjection], path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut all_paths = BTreeSet::new();
    let mut note_path = |file: &str, value: &str, errors: &mut Vec<FieldError>| {
        if !file.is_empty() && !all_paths.insert(file.to_string()) {
            errors.push(FieldError::invalid(
                path,
                value,
                "conflicting duplicate paths",
            ));
        }
    };
    for (i, source) in sources.iter().enumerate() {
        let source_path = path.child("sources").index(i);
        let mut count = 0;
        if let Some(secret) = &source.secret {
            count += 1;
            let secret_path = source_path.child("secret");
            if secret.name.is_empty() {
                errors.push(FieldError::required(&secret_path.child("name"), ""));
            }
            for (j, item) in secret.items.iter().flatten().enumerate() {
                errors.extend(validate_key_to_path(
                    item,
                    &secret_path.child("items").index(j),
                ));
                note_path(&item.path, &secret.name, &mut errors);
            }
        }
        if let Some(config_map) = &source.config_map {
            count += 1;
            let config_map_path = source_path.child("configMap");
            if config_map.name.is_empty() {
                errors.push(FieldError::required(&config_map_path.child("name"), ""));
            }
            for (j, item) in config_map.items.iter().flatten().enumerate() {
                errors.extend(validate_key_to_path(
                    item,
                    &config_map_path.child("items").index(j),
                ));
                note_path(&item.path, &config_map.name, &mut errors);
            }
        }
        if let Some(downward) = &source.downward_api {
            count += 1;
            let downward_path = source_path.child("downwardAPI");
            for file in downward.items.iter().flatten() {
                errors.extend(validate_downward_api_file(file, &downward_path));
                note_path(&file.path, &file.path, &mut errors);
            }
        }
        if let Some(token) = &source.service_account_token {
            count += 1;
            let token_path = source_path.child("serviceAccountToken");
            // Kubernetes' internal type holds 0 when the field is absent.
            let expiration = token.expiration_seconds.unwrap_or(0);
            if expiration < 10 * 60 {
                errors.push(FieldError::invalid(
                    &token_path.child("expirationSeconds"),
                    expiration,
                    "may not specify a duration less than 10 minutes",
                ));
            }
            if expiration > 1 << 32 {
                errors.push(FieldError::invalid(
                    &token_path.child("expirationSeconds"),
                    expiration,
                    "may not specify a duration larger than 2^32 seconds",
                ));
            }
            if token.path.is_empty() {
                errors.push(FieldError::required(&path.child("path"), ""));
            }
        }
        if let Some(bundle) = &source.cluster_trust_bundle {
            count += 1;
            if bundle.path.is_empty() {
                errors.push(FieldError::required(
                    &source_path.child("clusterTrustBundlePEM").child("path"),
                    "",
                ));
            }
        }
        if count > 1 {
            errors.push(FieldError::forbidden(
                &source_path,
                "may not specify more than 1 volume type per source",
            ));
        }
    }
    errors
}

fn validate_downward_api_file(
    file: &k8s_openapi::api::core::v1::DownwardAPIVolumeFile,
    path: &Path,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if file.path.is_empty() {
        errors.push(FieldError::required(&path.child("path"), ""));
    }
    errors.extend(validate_local_non_reserved_path(
        &file.path,
        &path.child("path"),
    ));
    match (&file.field_ref, &file.resource_field_ref) {
        (Some(field_ref), resource) => {
            errors.extend(validate_object_field_selector(
                field_ref,
                &VOLUME_FIELD_PATHS,
                &path.child("fieldRef"),
            ));
            if resource.is_some() {
                errors.push(FieldError::invalid(
                    path,
                    "resource",
                    "fieldRef and resourceFieldRef can not be specified simultaneously",
                ));
            }
        }
        (None, Some(resource)) => {
            errors.extend(validate_resource_field_selector(
                resource,
                true,
                &path.child("resourceFieldRef"),
            ));
        }
        (None, None) => errors.push(FieldError::required(
            path,
            "one of fieldRef and resourceFieldRef is required",
        )),
    }
    errors.extend(validate_file_mode(file.mode, &path.child("mode")));
    errors
}

fn has_backstep(target: &str) -> bool {
    target
        .replace('\\', "/")
        .split('/')
        .any(|part| part == "..")
}

fn validate_path_no_backsteps(target: &str, path: &Path) -> Vec<FieldError> {
    if has_backstep(target) {
        vec![FieldError::invalid(path, target, "must not contain '..'")]
    } else {
        Vec::new()
    }
}

fn validate_local_descending_path(target: &str, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if target.starts_with('/') {
        errors.push(FieldError::invalid(path, target, "must be a relative path"));
    }
    errors.extend(validate_path_no_backsteps(target, path));
    errors
}

fn validate_local_non_reserved_path(target: &str, path: &Path) -> Vec<FieldError> {
    let mut errors = validate_local_descending_path(target, path);
    if target.len() >= 2 && target.starts_with("..") {
        errors.push(FieldError::invalid(
            path,
            target,
            "must not start with '..'",
        ));
    }
    errors
}

// ---------------------------------------------------------------------------------------------
// Containers

/// `validateContainers`: the regular containers of a pod (at least one; names unique among them).
pub fn validate_containers(
    containers: &[&Container],
    context: PodContext<'_, '_>,
    path: &Path,
) -> Vec<FieldError> {
    if containers.is_empty() {
        return vec![FieldError::required(path, "")];
    }
    let mut errors = Vec::new();
    let mut names = BTreeSet::new();
    for (i, container) in containers.iter().enumerate() {
        let container_path = path.index(i);
        errors.extend(validate_container_common(
            container,
            context,
            &container_path,
        ));
        if !names.insert(container.name.as_str()) {
            errors.push(FieldError::duplicate(
                &container_path.child("name"),
                container.name.as_str(),
            ));
        }
        errors.extend(validate_hooks_and_probes(
            container,
            context,
            &container_path,
        ));
        if container.restart_policy.is_some() {
            errors.push(FieldError::forbidden(
                &container_path.child("restartPolicy"),
                "may not be set for non-init containers",
            ));
        }
    }
    errors.extend(host_port_conflicts(containers, path));
    errors
}

/// `validateInitContainers`: names unique across init and regular containers; only restartable
/// init containers (`restartPolicy: Always`, native sidecars) may have probes and lifecycle hooks.
pub fn validate_init_containers(
    init_containers: &[&Container],
    regular: &[&Container],
    context: PodContext<'_, '_>,
    path: &Path,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut names: BTreeSet<&str> = regular.iter().map(|c| c.name.as_str()).collect();
    for (i, container) in init_containers.iter().enumerate() {
        let container_path = path.index(i);
        errors.extend(validate_container_common(
            container,
            context,
            &container_path,
        ));
        let mut restartable = false;
        if let Some(policy) = &container.restart_policy {
            if policy == "Always" {
                restartable = true;
            } else {
                errors.push(FieldError::not_supported(
                    &container_path.child("restartPolicy"),
                    policy.as_str(),
                    &["Always"],
                ));
            }
        }
        if names.contains(container.name.as_str()) {
            errors.push(FieldError::duplicate(
                &container_path.child("name"),
                container.name.as_str(),
            ));
        } else if !container.name.is_empty() {
            names.insert(container.name.as_str());
        }
        // Init containers run one at a time, so each is checked on its own (index 0, as upstream).
        errors.extend(host_port_conflicts(&[*container], path));
        if restartable {
            errors.extend(validate_hooks_and_probes(
                container,
                context,
                &container_path,
            ));
        } else {
            const DETAIL: &str = "may not be set for init containers without restartPolicy=Always";
            for (field, set) in [
                ("lifecycle", container.lifecycle.is_some()),
                ("livenessProbe", container.liveness_probe.is_some()),
                ("readinessProbe", container.readiness_probe.is_some()),
                ("startupProbe", container.startup_probe.is_some()),
            ] {
                if set {
                    errors.push(FieldError::forbidden(&container_path.child(field), DETAIL));
                }
            }
        }
        if container
            .resize_policy
            .as_ref()
            .is_some_and(|p| !p.is_empty())
        {
            errors.push(FieldError::invalid(
                &container_path.child("resizePolicy"),
                GoRepr(format!("{:?}", container.resize_policy)),
                "must not be set for init containers",
            ));
        }
    }
    errors
}

/// Pods (not templates) also refuse images with surrounding whitespace.
pub fn validate_images_without_whitespace(
    containers: &[&Container],
    path: &Path,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (i, container) in containers.iter().enumerate() {
        let image = container.image.as_deref().unwrap_or("");
        if image.len() != image.trim().len() {
            errors.push(FieldError::invalid(
                &path.index(i).child("image"),
                image,
                "must not have leading or trailing whitespace",
            ));
        }
    }
    errors
}

/// The rules shared by every kind of container.
pub fn validate_container_common(
    container: &Container,
    context: PodContext<'_, '_>,
    path: &Path,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let name_path = path.child("name");
    if container.name.is_empty() {
        errors.push(FieldError::required(&name_path, ""));
    } else {
        errors.extend(validate_dns1123_label(&container.name, &name_path));
    }
    if container.image.as_deref().unwrap_or("").is_empty() {
        errors.push(FieldError::required(&path.child("image"), ""));
    }
    let message_policy_path = path.child("terminationMessagePolicy");
    match container
        .termination_message_policy
        .as_deref()
        .unwrap_or("")
    {
        "File" | "FallbackToLogsOnError" => {}
        "" => errors.push(FieldError::required(
            &message_policy_path,
            "must be 'File' or 'FallbackToLogsOnError'",
        )),
        other => errors.push(FieldError::not_supported(
            &message_policy_path,
            other,
            &["File", "FallbackToLogsOnError"],
        )),
    }
    let mounts = container.volume_mounts.as_deref().unwrap_or(&[]);
    let devices = container.volume_devices.as_deref().unwrap_or(&[]);
    errors.extend(validate_container_ports(
        container.ports.as_deref().unwrap_or(&[]),
        &path.child("ports"),
    ));
    errors.extend(validate_env(
        container.env.as_deref().unwrap_or(&[]),
        &path.child("env"),
    ));
    errors.extend(validate_env_from(
        container.env_from.as_deref().unwrap_or(&[]),
        &path.child("envFrom"),
    ));
    errors.extend(validate_volume_mounts(
        mounts,
        devices,
        container,
        context.volumes,
        &path.child("volumeMounts"),
    ));
    errors.extend(validate_volume_devices(
        devices,
        mounts,
        context.volumes,
        &path.child("volumeDevices"),
    ));
    let pull_path = path.child("imagePullPolicy");
    match container.image_pull_policy.as_deref().unwrap_or("") {
        "Always" | "IfNotPresent" | "Never" => {}
        "" => errors.push(FieldError::required(&pull_path, "")),
        other => errors.push(FieldError::not_supported(
            &pull_path,
            other,
            &["Always", "IfNotPresent", "Never"],
        )),
    }
    if let Some(resources) = &container.resources {
        errors.extend(validate_resource_requirements(
            resources,
            &path.child("resources"),
        ));
    }
    errors.extend(validate_resize_policy(
        container,
        context.restart_policy,
        &path.child("resizePolicy"),
    ));
    errors
}

fn validate_container_ports(ports: &[ContainerPort], path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut names = BTreeSet::new();
    for (i, port) in ports.iter().enumerate() {
        let port_path = path.index(i);
        if let Some(name) = port.name.as_deref().filter(|n| !n.is_empty()) {
            let name_errors = port_name_errors(name);
            if !name_errors.is_empty() {
                for message in name_errors {
                    errors.push(FieldError::invalid(&port_path.child("name"), name, message));
                }
            } else if !names.insert(name) {
                errors.push(FieldError::duplicate(&port_path.child("name"), name));
            }
        }
        if port.container_port == 0 {
            errors.push(FieldError::required(&port_path.child("containerPort"), ""));
        } else {
            for message in port_number_errors(i64::from(port.container_port)) {
                errors.push(FieldError::invalid(
                    &port_path.child("containerPort"),
                    port.container_port,
                    message,
                ));
            }
        }
        if let Some(host_port) = port.host_port.filter(|p| *p != 0) {
            for message in port_number_errors(i64::from(host_port)) {
                errors.push(FieldError::invalid(
                    &port_path.child("hostPort"),
                    host_port,
                    message,
                ));
            }
        }
        match port.protocol.as_deref().unwrap_or("") {
            "" => errors.push(FieldError::required(&port_path.child("protocol"), "")),
            "SCTP" | "TCP" | "UDP" => {}
            other => errors.push(FieldError::not_supported(
                &port_path.child("protocol"),
                other,
                &["SCTP", "TCP", "UDP"],
            )),
        }
    }
    errors
}

/// Duplicate `hostIP/protocol/hostPort` triples among `containers`.
fn host_port_conflicts(containers: &[&Container], path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, container) in containers.iter().enumerate() {
        for (j, port) in container.ports.iter().flatten().enumerate() {
            let Some(host_port) = port.host_port.filter(|p| *p != 0) else {
                continue;
            };
            let key = format!(
                "{}/{}/{}",
                port.host_ip.as_deref().unwrap_or(""),
                port.protocol.as_deref().unwrap_or(""),
                host_port
            );
            if seen.contains(&key) {
                let host_port_path = path.index(i).child("ports").index(j).child("hostPort");
                errors.push(FieldError::duplicate(&host_port_path, key.as_str()));
            } else {
                seen.insert(key);
            }
        }
    }
    errors
}

/// `ValidateEnv`: names, and at most one of `value` / `valueFrom` with exactly one source.
pub fn validate_env(vars: &[EnvVar], path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (i, var) in vars.iter().enumerate() {
        let var_path = path.index(i);
        let name_path = var_path.child("name");
        if var.name.is_empty() {
            errors.push(FieldError::required(&name_path, ""));
        } else {
            for message in env_var_name_errors(&var.name) {
                errors.push(FieldError::invalid(&name_path, var.name.as_str(), message));
            }
        }
        if let Some(source) = &var.value_from {
            let from_path = var_path.child("valueFrom");
            let mut count = 0;
            if let Some(field_ref) = &source.field_ref {
                count += 1;
                errors.extend(validate_object_field_selector(
                    field_ref,
                    &ENV_FIELD_PATHS,
                    &from_path.child("fieldRef"),
                ));
            }
            if let Some(resource) = &source.resource_field_ref {
                count += 1;
                errors.extend(validate_resource_field_selector(
                    resource,
                    false,
                    &from_path.child("resourceFieldRef"),
                ));
            }
            if let Some(selector) = &source.config_map_key_ref {
                count += 1;
                errors.extend(validate_key_selector(
                    &selector.name,
                    &selector.key,
                    &from_path.child("configMapKeyRef"),
                ));
            }
            if let Some(selector) = &source.secret_key_ref {
                count += 1;
                errors.extend(validate_key_selector(
                    &selector.name,
                    &selector.key,
                    &from_path.child("secretKeyRef"),
                ));
            }
            if count == 0 {
                errors.push(FieldError::invalid(
                    &from_path,
                    "",
                    "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`",
                ));
            } else if !var.value.as_deref().unwrap_or("").is_empty() {
                errors.push(FieldError::invalid(
                    &from_path,
                    "",
                    "may not be specified when `value` is not empty",
                ));
            } else if count > 1 {
                errors.push(FieldError::invalid(
                    &from_path,
                    "",
                    "may not have more than one field specified at a time",
                ));
            }
        }
    }
    errors
}

fn validate_key_selector(name: &str, key: &str, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for message in dns1123_subdomain_errors(name) {
        errors.push(FieldError::invalid(&path.child("name"), name, message));
    }
    if key.is_empty() {
        errors.push(FieldError::required(&path.child("key"), ""));
    } else {
        for message in config_map_key_errors(key) {
            errors.push(FieldError::invalid(&path.child("key"), key, message));
        }
    }
    errors
}

fn validate_env_from(sources: &[EnvFromSource], path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (i, source) in sources.iter().enumerate() {
        let source_path = path.index(i);
        if let Some(prefix) = source.prefix.as_deref().filter(|p| !p.is_empty()) {
            for message in env_var_name_errors(prefix) {
                errors.push(FieldError::invalid(
                    &source_path.child("prefix"),
                    prefix,
                    message,
                ));
            }
        }
        let mut count = 0;
        for (field, name) in [
            (
                "configMapRef",
                source.config_map_ref.as_ref().map(|r| r.name.as_str()),
            ),
            (
                "secretRef",
                source.secret_ref.as_ref().map(|r| r.name.as_str()),
            ),
        ] {
            let Some(name) = name else { continue };
            count += 1;
            let name_path = source_path.child(field).child("name");
            if name.is_empty() {
                errors.push(FieldError::required(&name_path, ""));
            } else {
                // Kubernetes validates these names as prefixes, which tolerates a trailing '-'.
                let candidate = match name.strip_suffix('-') {
                    Some(stem) if !stem.is_empty() => format!("{stem}a"),
                    _ => name.to_string(),
                };
                for message in dns1123_subdomain_errors(&candidate) {
                    errors.push(FieldError::invalid(&name_path, name, message));
                }
            }
        }
        if count == 0 {
            errors.push(FieldError::invalid(
                path,
                "",
                "must specify one of: `configMapRef` or `secretRef`",
            ));
        } else if count > 1 {
            errors.push(FieldError::invalid(
                path,
                "",
                "may not have more than one field specified at a time",
            ));
        }
    }
    errors
}

/// `validateObjectFieldSelector` for downward-API references: `apiVersion` `v1`, a supported
/// plain path, or `metadata.labels['k']` / `metadata.annotations['k']` with a qualified key.
pub fn validate_object_field_selector(
    selector: &ObjectFieldSelector,
    supported: &[&str],
    path: &Path,
) -> Vec<FieldError> {
    let api_version = selector.api_version.as_deref().unwrap_or("");
    if api_version.is_empty() {
        return vec![FieldError::required(&path.child("apiVersion"), "")];
    }
    let field_path = selector.field_path.as_str();
    if field_path.is_empty() {
        return vec![FieldError::required(&path.child("fieldPath"), "")];
    }
    let field_path_error = |message: String| {
        vec![FieldError::invalid(
            &path.child("fieldPath"),
            field_path,
            format!("error converting fieldPath: {message}"),
        )]
    };
    if api_version != "v1" {
        return field_path_error(format!("unsupported pod version: {api_version}"));
    }
    if let Some((base, key)) = split_subscripted_path(field_path) {
        return match base {
            "metadata.annotations" => validate_qualified_name(&key.to_lowercase(), path),
            "metadata.labels" => validate_qualified_name(&key, path),
            _ => field_path_error(format!(
                "field label does not support subscript: {field_path}"
            )),
        };
    }
    const CONVERTIBLE: [&str; 15] = [
        "metadata.annotations",
        "metadata.labels",
        "metadata.name",
        "metadata.namespace",
        "metadata.uid",
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.serviceAccountName",
        "spec.schedulerName",
        "status.phase",
        "status.hostIP",
        "status.hostIPs",
        "status.podIP",
        "status.podIPs",
        "spec.host",
    ];
    if !CONVERTIBLE.contains(&field_path) {
        return field_path_error(format!("field label not supported: {field_path}"));
    }
    let internal = if field_path == "spec.host" {
        "spec.nodeName"
    } else {
        field_path
    };
    if supported.contains(&internal) {
        Vec::new()
    } else {
        let mut sorted = supported.to_vec();
        sorted.sort_unstable();
        vec![FieldError::not_supported(
            &path.child("fieldPath"),
            internal,
            &sorted,
        )]
    }
}

/// Kubernetes' `SplitMaybeSubscriptedPath`: `metadata.labels['k']` → (`metadata.labels`, `k`);
/// an empty base is not a subscripted path.
pub fn split_subscripted_path(field_path: &str) -> Option<(&str, String)> {
    parse_subscripted_field_path(field_path).filter(|(base, _)| !base.is_empty())
}

fn validate_resource_field_selector(
    selector: &ResourceFieldSelector,
    in_volume: bool,
    path: &Path,
) -> Vec<FieldError> {
    if in_volume && selector.container_name.as_deref().unwrap_or("").is_empty() {
        return vec![FieldError::required(&path.child("containerName"), "")];
    }
    let resource = selector.resource.as_str();
    if resource.is_empty() {
        return vec![FieldError::required(&path.child("resource"), "")];
    }
    let huge_pages =
        resource.starts_with("limits.hugepages-") || resource.starts_with("requests.hugepages-");
    if RESOURCE_FIELD_PATHS.contains(&resource) || huge_pages {
        Vec::new()
    } else {
        vec![FieldError::not_supported(
            &path.child("resource"),
            resource,
            &RESOURCE_FIELD_PATHS,
        )]
    }
}

fn validate_volume_mounts(
    mounts: &[VolumeMount],
    devices: &[VolumeDevice],
    container: &Container,
    volumes: &VolumeIndex<'_>,
    path: &Path,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut mount_paths = BTreeSet::new();
    let privileged = container
        .security_context
        .as_ref()
        .and_then(|s| s.privileged)
        .unwrap_or(false);
    for (i, mount) in mounts.iter().enumerate() {
        let mount_path = path.index(i);
        let name_path = mount_path.child("name");
        if mount.name.is_empty() {
            errors.push(FieldError::required(&name_path, ""));
        }
        if volumes.get(&mount.name).is_none() {
            errors.push(FieldError::not_found(&name_path, mount.name.as_str()));
        }
        let path_path = mount_path.child("mountPath");
        if mount.mount_path.is_empty() {
            errors.push(FieldError::required(&path_path, ""));
        }
        if !mount_paths.insert(mount.mount_path.as_str()) {
            errors.push(FieldError::invalid(
                &path_path,
                mount.mount_path.as_str(),
                "must be unique",
            ));
        }
        if devices.iter().any(|d| d.name == mount.name) {
            errors.push(FieldError::invalid(
                &name_path,
                mount.name.as_str(),
                "must not already exist in volumeDevices",
            ));
        }
        if devices.iter().any(|d| d.device_path == mount.mount_path) {
            errors.push(FieldError::invalid(
                &path_path,
                mount.mount_path.as_str(),
                "must not already exist as a path in volumeDevices",
            ));
        }
        let sub_path = mount.sub_path.as_deref().unwrap_or("");
        if !sub_path.is_empty() {
            errors.extend(validate_local_descending_path(
                sub_path,
                &path.child("subPath"),
            ));
        }
        let sub_path_expr = mount.sub_path_expr.as_deref().unwrap_or("");
        if !sub_path_expr.is_empty() {
            if !sub_path.is_empty() {
                errors.push(FieldError::invalid(
                    &mount_path.child("subPathExpr"),
                    sub_path_expr,
                    "subPathExpr and subPath are mutually exclusive",
                ));
            }
            errors.extend(validate_local_descending_path(
                sub_path_expr,
                &path.child("subPathExpr"),
            ));
        }
        if let Some(propagation) = mount.mount_propagation.as_deref() {
            let propagation_path = path.child("mountPropagation");
            const MODES: [&str; 3] = ["Bidirectional", "HostToContainer", "None"];
            if !MODES.contains(&propagation) {
                errors.push(FieldError::not_supported(
                    &propagation_path,
                    propagation,
                    &MODES,
                ));
            }
            if propagation == "Bidirectional" && !privileged {
                errors.push(FieldError::forbidden(
                    &propagation_path,
                    "Bidirectional mount propagation is available only to privileged containers",
                ));
            }
        }
        if let Some(recursive) = mount.recursive_read_only.as_deref() {
            let recursive_path = mount_path.child("recursiveReadOnly");
            match recursive {
                "Disabled" => {}
                "IfPossible" | "Enabled" => {
                    if !mount.read_only.unwrap_or(false) {
                        errors.push(FieldError::forbidden(
                            &recursive_path,
                            "may only be specified when readOnly is true",
                        ));
                    }
                    if mount
                        .mount_propagation
                        .as_deref()
                        .is_some_and(|p| p != "None")
                    {
                        errors.push(FieldError::forbidden(
                            &recursive_path,
                            "may only be specified when mountPropagation is None or not specified",
                        ));
                    }
                }
                other => errors.push(FieldError::not_supported(
                    &recursive_path,
                    other,
                    &["Disabled", "Enabled", "IfPossible"],
                )),
            }
        }
    }
    errors
}

fn validate_volume_devices(
    devices: &[VolumeDevice],
    mounts: &[VolumeMount],
    volumes: &VolumeIndex<'_>,
    path: &Path,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut device_paths = BTreeSet::new();
    let mut device_names = BTreeSet::new();
    for (i, device) in devices.iter().enumerate() {
        let device_path = path.index(i);
        let name_path = device_path.child("name");
        let path_path = device_path.child("devicePath");
        let name = device.name.as_str();
        let volume = volumes.get(name);
        if name.is_empty() {
            errors.push(FieldError::required(&name_path, ""));
        }
        if device_names.contains(name) {
            errors.push(FieldError::invalid(&name_path, name, "must be unique"));
        }
        match volume {
            Some(volume)
                if volume.persistent_volume_claim.is_none() && volume.ephemeral.is_none() =>
            {
                errors.push(FieldError::invalid(
                    &name_path,
                    name,
                    "can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode",
                ));
            }
            Some(_) => {}
            None => errors.push(FieldError::not_found(&name_path, name)),
        }
        let target = device.device_path.as_str();
        if target.is_empty() {
            errors.push(FieldError::required(&path_path, ""));
        }
        if device_paths.contains(target) {
            errors.push(FieldError::invalid(&path_path, target, "must be unique"));
        }
        if !target.is_empty() && has_backstep(target) {
            errors.push(FieldError::invalid(
                &path_path,
                target,
                "can not contain backsteps ('..')",
            ));
        } else {
            device_paths.insert(target);
        }
        if mounts.iter().any(|m| m.name == name) {
            errors.push(FieldError::invalid(
                &name_path,
                name,
                "must not already exist in volumeMounts",
            ));
        }
        if mounts.iter().any(|m| m.mount_path == target) {
            errors.push(FieldError::invalid(
                &path_path,
                target,
                "must not already exist as a path in volumeMounts",
            ));
        }
        if !name.is_empty() {
            device_names.insert(name);
        }
    }
    errors
}

// ---------------------------------------------------------------------------------------------
// Resources

/// Value of a quantity as a float, for sign and ordering checks; `None` if it does not parse.
fn quantity_value(input: &str) -> Option<f64> {
    Quantity::parse(input).ok()?;
    let split = input
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '+' | '-' | '.')))
        .unwrap_or(input.len());
    let (number, suffix) = input.split_at(split);
    let number: f64 = number.parse().ok()?;
    let factor = match suffix {
        "" => 1.0,
        "n" => 1e-9,
        "u" => 1e-6,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        "Ki" => 1024f64,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        exponent => 10f64.powi(exponent.get(1..)?.parse().ok()?),
    };
    Some(number * factor)
}

fn is_huge_pages(name: &str) -> bool {
    name.starts_with("hugepages-")
}

/// Native resources have no domain or the `kubernetes.io` one.
fn is_native_resource(name: &str) -> bool {
    !name.contains('/') || name.contains("kubernetes.io/")
}

fn is_extended_resource(name: &str) -> bool {
    !is_native_resource(name)
        && !name.starts_with("requests.")
        && qualified_name_errors(&format!("requests.{name}")).is_empty()
}

fn overcommit_allowed(name: &str) -> bool {
    is_native_resource(name) && !is_huge_pages(name)
}

fn validate_container_resource_name(name: &str, path: &Path) -> Vec<FieldError> {
    let mut errors: Vec<FieldError> = qualified_name_errors(name)
        .into_iter()
        .map(|m| FieldError::invalid(path, name, m))
        .collect();
    if !errors.is_empty() {
        return errors;
    }
    const STANDARD: [&str; 16] = [
        "cpu",
        "memory",
        "ephemeral-storage",
        "requests.cpu",
        "requests.memory",
        "requests.ephemeral-storage",
        "requests.storage",
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
        "pods",
        "services",
        "replicationcontrollers",
        "resourcequotas",
        "secrets",
        "configmaps",
    ];
    if !name.contains('/') {
        if !STANDARD.contains(&name) && !is_huge_pages(name) && name != "persistentvolumeclaims" {
            errors.push(FieldError::invalid(
                path,
                name,
                "must be a standard resource type or fully qualified",
            ));
        }
        if !matches!(name, "cpu" | "memory" | "ephemeral-storage") && !is_huge_pages(name) {
            errors.push(FieldError::invalid(
                path,
                name,
                "must be a standard resource for containers",
            ));
        }
    } else if !is_native_resource(name) && !is_extended_resource(name) {
        errors.push(FieldError::invalid(
            path,
            name,
            "doesn't follow extended resource name standard",
        ));
    }
    errors
}

fn validate_quantity(name: &str, raw: &str, path: &Path) -> (Vec<FieldError>, Option<f64>) {
    let quantity = match Quantity::parse(raw) {
        Ok(quantity) => quantity,
        Err(error) => {
            return (
                vec![FieldError::invalid(path, raw, error.reason.to_string())],
                None,
            );
        }
    };
    let canonical = quantity.canonical();
    let value = quantity_value(raw);
    let mut errors = Vec::new();
    if value.is_some_and(|v| v < 0.0) {
        errors.push(FieldError::invalid(
            path,
            canonical.as_str(),
            super::field::NEGATIVE_ERROR,
        ));
    }
    let integer_resource = is_extended_resource(name);
    if integer_resource && value.is_some_and(|v| v.fract() != 0.0) {
        errors.push(FieldError::invalid(
            path,
            canonical.as_str(),
            "must be an integer",
        ));
    }
    (errors, value)
}

/// `ValidateResourceRequirements` for a container: names, non-negative quantities, requests not
/// above limits (equal for resources that cannot be overcommitted), no resource claims (the pods
/// these validators build declare none).
pub fn validate_resource_requirements(
    resources: &ResourceRequirements,
    path: &Path,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let limits_path = path.child("limits");
    let requests_path = path.child("requests");
    let empty = BTreeMap::new();
    let limits = resources.limits.as_ref().unwrap_or(&empty);
    let requests = resources.requests.as_ref().unwrap_or(&empty);
    let mut limit_values = BTreeMap::new();
    let mut cpu_or_memory = false;
    let mut huge_pages = false;
    for (name, quantity) in limits {
        let quantity_path = limits_path.key(name);
        errors.extend(validate_container_resource_name(name, &quantity_path));
        let (quantity_errors, value) = validate_quantity(name, &quantity.0, &quantity_path);
        errors.extend(quantity_errors);
        if let Some(value) = value {
            limit_values.insert(name.as_str(), value);
        }
        huge_pages |= is_huge_pages(name);
        cpu_or_memory |= matches!(name.as_str(), "cpu" | "memory");
    }
    for (name, quantity) in requests {
        let quantity_path = requests_path.key(name);
        errors.extend(validate_container_resource_name(name, &quantity_path));
        let (quantity_errors, value) = validate_quantity(name, &quantity.0, &quantity_path);
        errors.extend(quantity_errors);
        huge_pages |= is_huge_pages(name);
        cpu_or_memory |= matches!(name.as_str(), "cpu" | "memory");
        let request = quantity.0.as_str();
        match (limits.get(name), value, limit_values.get(name.as_str())) {
            (Some(limit), Some(value), Some(&limit_value)) => {
                if value != limit_value && !overcommit_allowed(name) {
                    errors.push(FieldError::invalid(
                        &requests_path,
                        request,
                        format!("must be equal to {name} limit of {}", limit.0),
                    ));
                } else if value > limit_value {
                    errors.push(FieldError::invalid(
                        &requests_path,
                        request,
                        format!("must be less than or equal to {name} limit of {}", limit.0),
                    ));
                }
            }
            (None, _, _) if !overcommit_allowed(name) => errors.push(FieldError::required(
                &limits_path,
                "Limit must be set for non overcommitable resources",
            )),
            _ => {}
        }
    }
    if huge_pages && !cpu_or_memory {
        errors.push(FieldError::forbidden(
            path,
            "HugePages require cpu or memory",
        ));
    }
    for (i, claim) in resources.claims.iter().flatten().enumerate() {
        let claim_path = path.child("claims").index(i);
        if claim.name.is_empty() {
            errors.push(FieldError::required(&claim_path, ""));
        } else {
            let mut error = FieldError::not_found(&claim_path, claim.name.as_str());
            error.detail =
                "must be one of the names in pod.spec.resourceClaims which is empty".into();
            errors.push(error);
        }
    }
    errors
}

fn validate_resize_policy(
    container: &Container,
    pod_restart_policy: &str,
    path: &Path,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, policy) in container.resize_policy.iter().flatten().enumerate() {
        if !seen.insert(policy.resource_name.as_str()) {
            errors.push(FieldError::duplicate(
                &path.index(i),
                policy.resource_name.as_str(),
            ));
        }
        match policy.resource_name.as_str() {
            "cpu" | "memory" => {}
            "" => errors.push(FieldError::required(path, "")),
            other => errors.push(FieldError::not_supported(path, other, &["cpu", "memory"])),
        }
        match policy.restart_policy.as_str() {
            "NotRequired" | "RestartContainer" => {}
            "" => errors.push(FieldError::required(path, "")),
            other => errors.push(FieldError::not_supported(
                path,
                other,
                &["NotRequired", "RestartContainer"],
            )),
        }
        if pod_restart_policy == "Never" && policy.restart_policy != "NotRequired" {
            errors.push(FieldError::invalid(
                path,
                policy.restart_policy.as_str(),
                "must be 'NotRequired' when `restartPolicy` is 'Never'",
            ));
        }
    }
    errors
}

// ---------------------------------------------------------------------------------------------
// Probes and lifecycle hooks

fn validate_hooks_and_probes(
    container: &Container,
    context: PodContext<'_, '_>,
    path: &Path,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if let Some(lifecycle) = &container.lifecycle {
        errors.extend(validate_lifecycle(
            lifecycle,
            context.termination_grace_period_seconds,
            &path.child("lifecycle"),
        ));
    }
    for (field, probe, needs_single_success) in [
        ("livenessProbe", &container.liveness_probe, true),
        ("readinessProbe", &container.readiness_probe, false),
        ("startupProbe", &container.startup_probe, true),
    ] {
        let Some(probe) = probe else { continue };
        let probe_path = path.child(field);
        errors.extend(validate_probe(probe, &probe_path));
        let success = probe.success_threshold.unwrap_or(0);
        if needs_single_success && success != 1 {
            errors.push(FieldError::invalid(
                &probe_path.child("successThreshold"),
                success,
                "must be 1",
            ));
        }
        if !needs_single_success && let Some(grace) = probe.termination_grace_period_seconds {
            errors.push(FieldError::invalid(
                &probe_path.child("terminationGracePeriodSeconds"),
                grace,
                "must not be set for readinessProbes",
            ));
        }
    }
    errors
}

fn validate_probe(probe: &Probe, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut handlers = 0;
    let mut handler = |name: &str, set: bool, check: &dyn Fn(&Path) -> Vec<FieldError>| {
        if !set {
            return Vec::new();
        }
        if handlers > 0 {
            return vec![FieldError::forbidden(
                &path.child(name),
                MORE_THAN_ONE_HANDLER,
            )];
        }
        handlers += 1;
        check(&path.child(name))
    };
    errors.extend(handler("exec", probe.exec.is_some(), &|p| {
        validate_exec(probe.exec.as_ref().and_then(|e| e.command.as_deref()), p)
    }));
    errors.extend(handler("httpGet", probe.http_get.is_some(), &|p| {
        probe
            .http_get
            .as_ref()
            .map(|h| validate_http_get(h, p))
            .unwrap_or_default()
    }));
    errors.extend(handler("tcpSocket", probe.tcp_socket.is_some(), &|p| {
        probe
            .tcp_socket
            .as_ref()
            .map(|t| validate_port_number_or_name(&t.port, &p.child("port")))
            .unwrap_or_default()
    }));
    errors.extend(handler("grpc", probe.grpc.is_some(), &|p| {
        let port = probe.grpc.as_ref().map(|g| g.port).unwrap_or(0);
        port_number_errors(i64::from(port))
            .into_iter()
            .map(|m| FieldError::invalid(&p.child("port"), port, m))
            .collect()
    }));
    if handlers == 0 {
        errors.push(FieldError::required(path, "must specify a handler type"));
    }
    for (field, value) in [
        ("initialDelaySeconds", probe.initial_delay_seconds),
        ("timeoutSeconds", probe.timeout_seconds),
        ("periodSeconds", probe.period_seconds),
        ("successThreshold", probe.success_threshold),
        ("failureThreshold", probe.failure_threshold),
    ] {
        errors.extend(validate_nonnegative(
            i64::from(value.unwrap_or(0)),
            &path.child(field),
        ));
    }
    if let Some(grace) = probe.termination_grace_period_seconds.filter(|g| *g <= 0) {
        errors.push(FieldError::invalid(
            &path.child("terminationGracePeriodSeconds"),
            grace,
            "must be greater than 0",
        ));
    }
    errors
}

fn validate_lifecycle(
    lifecycle: &Lifecycle,
    grace_period: Option<i64>,
    path: &Path,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (field, handler) in [
        ("postStart", &lifecycle.post_start),
        ("preStop", &lifecycle.pre_stop),
    ] {
        if let Some(handler) = handler {
            errors.extend(validate_lifecycle_handler(
                handler,
                grace_period,
                &path.child(field),
            ));
        }
    }
    errors
}

fn validate_lifecycle_handler(
    handler: &LifecycleHandler,
    grace_period: Option<i64>,
    path: &Path,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut handlers = 0;
    let mut add = |name: &str, checked: Option<Vec<FieldError>>, errors: &mut Vec<FieldError>| {
        let Some(checked) = checked else { return };
        if handlers > 0 {
            errors.push(FieldError::forbidden(
                &path.child(name),
                MORE_THAN_ONE_HANDLER,
            ));
        } else {
            handlers += 1;
            errors.extend(checked);
        }
    };
    let exec = handler
        .exec
        .as_ref()
        .map(|e| validate_exec(e.command.as_deref(), &path.child("exec")));
    add("exec", exec, &mut errors);
    let http = handler
        .http_get
        .as_ref()
        .map(|h| validate_http_get(h, &path.child("httpGet")));
    add("httpGet", http, &mut errors);
    let tcp = handler
        .tcp_socket
        .as_ref()
        .map(|t| validate_port_number_or_name(&t.port, &path.child("tcpSocket").child("port")));
    add("tcpSocket", tcp, &mut errors);
    let sleep = handler.sleep.as_ref().map(|s| {
        let limit = grace_period.unwrap_or(30);
        if s.seconds < 0 || s.seconds > limit {
            vec![FieldError::invalid(
                &path.child("sleep"),
                s.seconds,
                format!(
                    "must be non-negative and less than terminationGracePeriodSeconds ({limit})"
                ),
            )]
        } else {
            Vec::new()
        }
    });
    add("sleep", sleep, &mut errors);
    if handlers == 0 {
        errors.push(FieldError::required(path, "must specify a handler type"));
    }
    errors
}

fn validate_exec(command: Option<&[String]>, path: &Path) -> Vec<FieldError> {
    if command.is_none_or(|c| c.is_empty()) {
        vec![FieldError::required(&path.child("command"), "")]
    } else {
        Vec::new()
    }
}

fn validate_http_get(action: &HTTPGetAction, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if action.path.as_deref().unwrap_or("").is_empty() {
        errors.push(FieldError::required(&path.child("path"), ""));
    }
    errors.extend(validate_port_number_or_name(
        &action.port,
        &path.child("port"),
    ));
    let scheme = action.scheme.as_deref().unwrap_or("");
    if !matches!(scheme, "HTTP" | "HTTPS") {
        errors.push(FieldError::not_supported(
            &path.child("scheme"),
            scheme,
            &["HTTP", "HTTPS"],
        ));
    }
    for header in action.http_headers.iter().flatten() {
        let valid = !header.name.is_empty()
            && header
                .name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-');
        if !valid {
            errors.push(FieldError::invalid(
                &path.child("httpHeaders"),
                header.name.as_str(),
                "a valid HTTP header must consist of alphanumeric characters or '-' (e.g. 'X-Header-Name', regex used for validation is '[-A-Za-z0-9]+')",
            ));
        }
    }
    errors
}

/// `ValidatePortNumOrName`
pub fn validate_port_number_or_name(port: &IntOrString, path: &Path) -> Vec<FieldError> {
    match port {
        IntOrString::Int(n) => port_number_errors(i64::from(*n))
            .into_iter()
            .map(|m| FieldError::invalid(path, *n, m))
            .collect(),
        IntOrString::String(name) => port_name_errors(name)
            .into_iter()
            .map(|m| FieldError::invalid(path, name.as_str(), m))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{
        ConfigMapKeySelector, EmptyDirVolumeSource, EnvVarSource, ExecAction, GRPCAction,
        HostPathVolumeSource, PersistentVolumeClaimVolumeSource, ProjectedVolumeSource,
        SecurityContext, ServiceAccountTokenProjection, SleepAction,
    };
    use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;

    use crate::validate::field::aggregate;

    fn container(name: &str) -> Container {
        Container {
            name: name.into(),
            image: Some("image".into()),
            image_pull_policy: Some("IfNotPresent".into()),
            termination_message_policy: Some("File".into()),
            ..Default::default()
        }
    }

    fn empty_dir(name: &str) -> Volume {
        Volume {
            name: name.into(),
            empty_dir: Some(EmptyDirVolumeSource::default()),
            ..Default::default()
        }
    }

    fn pvc(name: &str) -> Volume {
        Volume {
            name: name.into(),
            persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                claim_name: "claim".into(),
                read_only: None,
            }),
            ..Default::default()
        }
    }

    fn mount(name: &str, path: &str) -> VolumeMount {
        VolumeMount {
            name: name.into(),
            mount_path: path.into(),
            ..Default::default()
        }
    }

    fn validate(init: &[Container], containers: &[Container], volumes: &[Volume]) -> Vec<String> {
        let init: Vec<&Container> = init.iter().collect();
        let containers: Vec<&Container> = containers.iter().collect();
        validate_pod_containers_and_volumes(
            &init,
            &containers,
            volumes,
            "Always",
            Some(30),
            &Path::new("spec"),
        )
        .iter()
        .map(ToString::to_string)
        .collect()
    }

    #[test]
    fn a_valid_pod_passes() {
        let mut app = container("app");
        app.volume_mounts = Some(vec![mount("data", "/data")]);
        app.ports = Some(vec![ContainerPort {
            container_port: 8080,
            name: Some("http".into()),
            protocol: Some("TCP".into()),
            ..Default::default()
        }]);
        assert_eq!(
            validate(&[container("init")], &[app], &[empty_dir("data")]),
            Vec::<String>::new()
        );
    }

    #[test]
    fn container_names_images_and_policies() {
        let mut bad = container("Bad_Name");
        bad.image = None;
        bad.image_pull_policy = None;
        bad.termination_message_policy = Some("Sometimes".into());
        let errors = validate(&[], &[bad, container("a"), container("a")], &[]);
        assert_eq!(errors.len(), 5, "{errors:#?}");
        assert!(errors[0].starts_with(
            "spec.containers[0].name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 label"
        ));
        assert_eq!(errors[1], "spec.containers[0].image: Required value");
        assert!(errors[2].starts_with(
            "spec.containers[0].terminationMessagePolicy: Unsupported value: \"Sometimes\""
        ));
        assert_eq!(
            errors[3],
            "spec.containers[0].imagePullPolicy: Required value"
        );
        assert_eq!(errors[4], "spec.containers[2].name: Duplicate value: \"a\"");

        assert_eq!(
            validate(&[], &[], &[]),
            vec!["spec.containers: Required value"]
        );
        let errors = validate(&[container("a")], &[container("a")], &[]);
        assert_eq!(
            errors,
            vec!["spec.initContainers[0].name: Duplicate value: \"a\""]
        );

        let mut spaced = container("a");
        spaced.image = Some(" img".into());
        let errors = validate(&[], &[spaced], &[]);
        assert_eq!(
            errors,
            vec![
                "spec.containers[0].image: Invalid value: \" img\": must not have leading or trailing whitespace"
            ]
        );
    }

    #[test]
    fn ports_and_host_port_conflicts() {
        let port = |container_port, host_port, protocol: &str| ContainerPort {
            container_port,
            host_port,
            protocol: Some(protocol.into()),
            ..Default::default()
        };
        let mut a = container("a");
        a.ports = Some(vec![
            port(0, None, "TCP"),
            port(70000, Some(80), "TCP"),
            port(81, Some(80), "ICMP"),
        ]);
        let mut b = container("b");
        b.ports = Some(vec![port(80, Some(80), "TCP")]);
        let errors = validate(&[], &[a, b], &[]);
        assert_eq!(errors.len(), 4, "{errors:#?}");
        assert_eq!(
            errors[0],
            "spec.containers[0].ports[0].containerPort: Required value"
        );
        assert_eq!(
            errors[1],
            "spec.containers[0].ports[1].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive"
        );
        assert_eq!(
            errors[2],
            "spec.containers[0].ports[2].protocol: Unsupported value: \"ICMP\": supported values: \"SCTP\", \"TCP\", \"UDP\""
        );
        assert_eq!(
            errors[3],
            "spec.containers[1].ports[0].hostPort: Duplicate value: \"/TCP/80\""
        );
    }

    #[test]
    fn env_rules() {
        let mut a = container("a");
        a.env = Some(vec![
            EnvVar {
                name: "GOOD".into(),
                value: Some("v".into()),
                value_from: None,
            },
            EnvVar {
                name: "1BAD".into(),
                value: None,
                value_from: None,
            },
            EnvVar {
                name: "BOTH".into(),
                value: Some("v".into()),
                value_from: Some(EnvVarSource {
                    field_ref: Some(ObjectFieldSelector {
                        api_version: Some("v1".into()),
                        field_path: "metadata.name".into(),
                    }),
                    ..Default::default()
                }),
            },
            EnvVar {
                name: "NONE".into(),
                value: None,
                value_from: Some(EnvVarSource::default()),
            },
            EnvVar {
                name: "LABEL".into(),
                value: None,
                value_from: Some(EnvVarSource {
                    field_ref: Some(ObjectFieldSelector {
                        api_version: Some("v1".into()),
                        field_path: "metadata.labels['app']".into(),
                    }),
                    ..Default::default()
                }),
            },
            EnvVar {
                name: "CM".into(),
                value: None,
                value_from: Some(EnvVarSource {
                    config_map_key_ref: Some(ConfigMapKeySelector {
                        key: "".into(),
                        name: "cm".into(),
                        optional: None,
                    }),
                    ..Default::default()
                }),
            },
            EnvVar {
                name: "WHAT".into(),
                value: None,
                value_from: Some(EnvVarSource {
                    field_ref: Some(ObjectFieldSelector {
                        api_version: Some("v1".into()),
                        field_path: "spec.schedulerName".into(),
                    }),
                    ..Default::default()
                }),
            },
        ]);
        let errors = validate(&[], &[a], &[]);
        assert_eq!(errors.len(), 5, "{errors:#?}");
        assert!(errors[0].starts_with("spec.containers[0].env[1].name: Invalid value: \"1BAD\": a valid environment variable name"));
        assert_eq!(
            errors[1],
            "spec.containers[0].env[2].valueFrom: Invalid value: \"\": may not be specified when `value` is not empty"
        );
        assert!(errors[2].starts_with(
            "spec.containers[0].env[3].valueFrom: Invalid value: \"\": must specify one of"
        ));
        assert_eq!(
            errors[3],
            "spec.containers[0].env[5].valueFrom.configMapKeyRef.key: Required value"
        );
        assert!(errors[4].starts_with("spec.containers[0].env[6].valueFrom.fieldRef.fieldPath: Unsupported value: \"spec.schedulerName\": supported values: \"metadata.name\""));
    }

    #[test]
    fn env_from_sources() {
        use k8s_openapi::api::core::v1::{ConfigMapEnvSource, SecretEnvSource};
        let config_map = |name: &str| EnvFromSource {
            config_map_ref: Some(ConfigMapEnvSource {
                name: name.into(),
                optional: None,
            }),
            ..Default::default()
        };
        let mut a = container("a");
        a.env_from = Some(vec![
            config_map("trailing-dash-"),
            EnvFromSource {
                prefix: Some("1X_".into()),
                ..config_map("ok")
            },
            config_map("Bad"),
            EnvFromSource::default(),
            EnvFromSource {
                secret_ref: Some(SecretEnvSource {
                    name: "s".into(),
                    optional: None,
                }),
                ..config_map("c")
            },
        ]);
        let errors = validate(&[], &[a], &[]);
        assert_eq!(errors.len(), 4, "{errors:#?}");
        assert!(
            errors[0].starts_with("spec.containers[0].envFrom[1].prefix: Invalid value: \"1X_\"")
        );
        assert!(errors[1].starts_with(
            "spec.containers[0].envFrom[2].configMapRef.name: Invalid value: \"Bad\""
        ));
        assert_eq!(
            errors[2],
            "spec.containers[0].envFrom: Invalid value: \"\": must specify one of: `configMapRef` or `secretRef`"
        );
        assert_eq!(
            errors[3],
            "spec.containers[0].envFrom: Invalid value: \"\": may not have more than one field specified at a time"
        );
    }

    #[test]
    fn mounts_and_devices() {
        let mut a = container("a");
        a.volume_mounts = Some(vec![
            mount("missing", "/x"),
            mount("log", "/x"),
            mount("log", "/dev/disk"),
        ]);
        a.volume_devices = Some(vec![
            VolumeDevice {
                name: "disk0".into(),
                device_path: "/dev/disk".into(),
            },
            VolumeDevice {
                name: "log".into(),
                device_path: "/dev/log".into(),
            },
        ]);
        let errors = validate(&[], &[a], &[pvc("disk0"), empty_dir("log")]);
        let joined = errors.join("\n");
        assert!(
            joined.contains("spec.containers[0].volumeMounts[0].name: Not found: \"missing\""),
            "{joined}"
        );
        assert!(joined.contains(
            "spec.containers[0].volumeMounts[1].mountPath: Invalid value: \"/x\": must be unique"
        ));
        assert!(joined.contains("spec.containers[0].volumeMounts[2].mountPath: Invalid value: \"/dev/disk\": must not already exist as a path in volumeDevices"));
        assert!(joined.contains("spec.containers[0].volumeDevices[0].devicePath: Invalid value: \"/dev/disk\": must not already exist as a path in volumeMounts"));
        assert!(joined.contains("spec.containers[0].volumeDevices[1].name: Invalid value: \"log\": can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode"));
        assert!(joined.contains("spec.containers[0].volumeDevices[1].name: Invalid value: \"log\": must not already exist in volumeMounts"));
        assert!(joined.contains("spec.containers[0].volumeMounts[1].name: Invalid value: \"log\": must not already exist in volumeDevices"));

        let mut b = container("b");
        b.volume_mounts = Some(vec![VolumeMount {
            mount_propagation: Some("Bidirectional".into()),
            sub_path: Some("../up".into()),
            ..mount("log", "")
        }]);
        let errors = validate(&[], &[b.clone()], &[empty_dir("log")]);
        assert_eq!(errors.len(), 3, "{errors:#?}");
        b.security_context = Some(SecurityContext {
            privileged: Some(true),
            ..Default::default()
        });
        assert_eq!(validate(&[], &[b], &[empty_dir("log")]).len(), 2);
    }

    #[test]
    fn volumes_need_one_valid_source_and_unique_names() {
        let no_source = Volume {
            name: "test-volume".into(),
            ..Default::default()
        };
        let two_sources = Volume {
            host_path: Some(HostPathVolumeSource {
                path: "/a".into(),
                type_: None,
            }),
            ..empty_dir("two")
        };
        let token = Volume {
            name: "istio-token".into(),
            projected: Some(ProjectedVolumeSource {
                default_mode: Some(420),
                sources: Some(vec![VolumeProjection {
                    service_account_token: Some(ServiceAccountTokenProjection {
                        audience: Some("istio-ca".into()),
                        expiration_seconds: Some(43200),
                        path: "istio-token".into(),
                    }),
                    ..Default::default()
                }]),
            }),
            ..Default::default()
        };
        let short_token = Volume {
            name: "short".into(),
            projected: Some(ProjectedVolumeSource {
                default_mode: Some(0o1000),
                sources: Some(vec![VolumeProjection {
                    service_account_token: Some(ServiceAccountTokenProjection {
                        audience: None,
                        expiration_seconds: None,
                        path: "t".into(),
                    }),
                    ..Default::default()
                }]),
            }),
            ..Default::default()
        };
        let volumes = [
            no_source,
            two_sources,
            token,
            empty_dir("dup"),
            empty_dir("dup"),
            short_token,
            empty_dir("Bad"),
        ];
        let (index, errors) = validate_volumes(&volumes, &Path::new("spec").child("volumes"));
        let rendered: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(rendered.len(), 6, "{rendered:#?}");
        assert_eq!(
            rendered[0],
            "spec.volumes[0]: Required value: must specify a volume type"
        );
        assert_eq!(
            rendered[1],
            "spec.volumes[1].hostPath: Forbidden: may not specify more than 1 volume type"
        );
        assert_eq!(
            rendered[2],
            "spec.volumes[4].name: Duplicate value: \"dup\""
        );
        assert_eq!(
            rendered[3],
            "spec.volumes[5].projected.defaultMode: Invalid value: 512: must be a number between 0 and 0777 (octal), both inclusive"
        );
        assert_eq!(
            rendered[4],
            "spec.volumes[5].projected.sources[0].serviceAccountToken.expirationSeconds: Invalid value: 0: may not specify a duration less than 10 minutes"
        );
        assert!(rendered[5].starts_with("spec.volumes[6].name: Invalid value: \"Bad\""));
        assert!(index.get("istio-token").is_some());
        assert!(index.get("dup").is_some());
        assert!(index.get("test-volume").is_none());
    }

    #[test]
    fn resources() {
        let quantities = |pairs: &[(&str, &str)]| {
            Some(
                pairs
                    .iter()
                    .map(|(k, v)| (k.to_string(), K8sQuantity(v.to_string())))
                    .collect(),
            )
        };
        let mut a = container("a");
        a.resources = Some(ResourceRequirements {
            limits: quantities(&[("cpu", "100m"), ("memory", "1Gi"), ("example.com/gpu", "1")]),
            requests: quantities(&[
                ("cpu", "200m"),
                ("memory", "-1"),
                ("example.com/gpu", "2"),
                ("foo", "1"),
            ]),
            claims: None,
        });
        let errors = validate(&[], &[a], &[]);
        let joined = errors.join("\n");
        assert!(joined.contains("spec.containers[0].resources.requests: Invalid value: \"200m\": must be less than or equal to cpu limit of 100m"), "{joined}");
        assert!(joined.contains("spec.containers[0].resources.requests[memory]: Invalid value: \"-1\": must be greater than or equal to 0"));
        assert!(joined.contains("must be equal to example.com/gpu limit of 1"));
        assert!(joined.contains("spec.containers[0].resources.requests[foo]: Invalid value: \"foo\": must be a standard resource for containers"));

        let mut ok = container("ok");
        ok.resources = Some(ResourceRequirements {
            limits: quantities(&[("cpu", "1"), ("memory", "1Gi")]),
            requests: quantities(&[("cpu", "500m"), ("memory", "1024Mi")]),
            claims: None,
        });
        assert_eq!(validate(&[], &[ok], &[]), Vec::<String>::new());
        assert_eq!(quantity_value("1Gi"), Some(1024f64.powi(3)));
        assert_eq!(quantity_value("1e3"), Some(1000.0));
        assert_eq!(quantity_value("bogus"), None);
    }

    #[test]
    fn probes_hooks_and_init_container_rules() {
        let probe = |success| Probe {
            exec: Some(ExecAction {
                command: Some(vec!["true".into()]),
            }),
            grpc: Some(GRPCAction {
                port: 0,
                service: None,
            }),
            success_threshold: Some(success),
            ..Default::default()
        };
        let mut a = container("a");
        a.liveness_probe = Some(probe(2));
        a.readiness_probe = Some(Probe {
            termination_grace_period_seconds: Some(5),
            ..probe(3)
        });
        a.lifecycle = Some(Lifecycle {
            pre_stop: Some(LifecycleHandler {
                sleep: Some(SleepAction { seconds: 31 }),
                ..Default::default()
            }),
            post_start: Some(LifecycleHandler::default()),
            stop_signal: None,
        });
        let errors = validate(&[], &[a], &[]);
        let joined = errors.join("\n");
        assert_eq!(errors.len(), 6, "{joined}");
        assert!(joined.contains("spec.containers[0].livenessProbe.grpc: Forbidden: may not specify more than 1 handler type"));
        assert!(joined.contains(
            "spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1"
        ));
        assert!(joined.contains("spec.containers[0].readinessProbe.terminationGracePeriodSeconds: Invalid value: 5: must not be set for readinessProbes"));
        assert!(joined.contains(
            "spec.containers[0].lifecycle.postStart: Required value: must specify a handler type"
        ));
        assert!(joined.contains("spec.containers[0].lifecycle.preStop.sleep: Invalid value: 31: must be non-negative and less than terminationGracePeriodSeconds (30)"));

        let mut plain_init = container("init");
        plain_init.liveness_probe = Some(probe(1));
        plain_init.restart_policy = Some("OnFailure".into());
        let mut native = container("native");
        native.restart_policy = Some("Always".into());
        native.liveness_probe = Some(Probe {
            grpc: None,
            ..probe(1)
        });
        let mut regular = container("app");
        regular.restart_policy = Some("Always".into());
        let errors = validate(&[plain_init, native], &[regular], &[]);
        assert_eq!(
            errors,
            vec![
                "spec.containers[0].restartPolicy: Forbidden: may not be set for non-init containers",
                "spec.initContainers[0].restartPolicy: Unsupported value: \"OnFailure\": supported values: \"Always\"",
                "spec.initContainers[0].livenessProbe: Forbidden: may not be set for init containers without restartPolicy=Always",
            ]
        );
    }

    #[test]
    fn object_field_selectors() {
        let selector = |api: Option<&str>, path: &str| ObjectFieldSelector {
            api_version: api.map(Into::into),
            field_path: path.into(),
        };
        let path = Path::new("f");
        let check = |s: ObjectFieldSelector| {
            aggregate(&validate_object_field_selector(&s, &ENV_FIELD_PATHS, &path))
        };
        assert_eq!(
            check(selector(None, "metadata.name")),
            "f.apiVersion: Required value"
        );
        assert_eq!(
            check(selector(Some("v1"), "")),
            "f.fieldPath: Required value"
        );
        assert_eq!(
            check(selector(Some("v2"), "metadata.name")),
            "f.fieldPath: Invalid value: \"metadata.name\": error converting fieldPath: unsupported pod version: v2"
        );
        assert_eq!(
            check(selector(Some("v1"), "spec.containers['x']")),
            "f.fieldPath: Invalid value: \"spec.containers['x']\": error converting fieldPath: field label does not support subscript: spec.containers['x']"
        );
        assert!(
            check(selector(
                Some("v1"),
                "metadata.annotations['Example.com/KEY']"
            ))
            .is_empty()
        );
        assert!(
            check(selector(Some("v1"), "metadata.labels['bad key']"))
                .starts_with("f: Invalid value: \"bad key\"")
        );
        // `spec.host` is the legacy spelling of `spec.nodeName`.
        assert!(check(selector(Some("v1"), "spec.host")).is_empty());
        assert!(
            check(selector(Some("v1"), "metadata.labels"))
                .starts_with("f.fieldPath: Unsupported value: \"metadata.labels\"")
        );
        assert_eq!(split_subscripted_path("['x']"), None);
    }
}
