use super::*;

pub(super) fn validate_volume_mounts(
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

pub(super) fn validate_volume_devices(
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
