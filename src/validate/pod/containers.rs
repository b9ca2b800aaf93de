use super::*;

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

pub(super) fn validate_container_ports(ports: &[ContainerPort], path: &Path) -> Vec<FieldError> {
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
pub(super) fn host_port_conflicts(containers: &[&Container], path: &Path) -> Vec<FieldError> {
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
