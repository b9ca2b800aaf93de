use super::*;

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
pub(super) fn volume_sources(volume: &Volume) -> [(&'static str, bool); 30] {
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

pub(super) fn validate_volume_source(volume: &Volume, path: &Path) -> Vec<FieldError> {
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
pub(super) fn validate_one_source(volume: &Volume, source: &str, path: &Path) -> Vec<FieldError> {
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

pub(super) fn validate_file_mode(mode: Option<i32>, path: &Path) -> Vec<FieldError> {
    match mode {
        Some(mode) if !(0..=0o777).contains(&mode) => {
            vec![FieldError::invalid(path, mode, FILE_MODE_ERROR)]
        }
        _ => Vec::new(),
    }
}

pub(super) fn validate_key_to_paths(items: Option<&[KeyToPath]>, path: &Path) -> Vec<FieldError> {
    items
        .into_iter()
        .flatten()
        .enumerate()
        .flat_map(|(i, item)| validate_key_to_path(item, &path.index(i)))
        .collect()
}

pub(super) fn validate_key_to_path(item: &KeyToPath, path: &Path) -> Vec<FieldError> {
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

pub(super) fn validate_projection_sources(
    sources: &[VolumeProjection],
    path: &Path,
) -> Vec<FieldError> {
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

pub(super) fn validate_downward_api_file(
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

pub(super) fn has_backstep(target: &str) -> bool {
    target
        .replace('\\', "/")
        .split('/')
        .any(|part| part == "..")
}

pub(super) fn validate_path_no_backsteps(target: &str, path: &Path) -> Vec<FieldError> {
    if has_backstep(target) {
        vec![FieldError::invalid(path, target, "must not contain '..'")]
    } else {
        Vec::new()
    }
}

pub(super) fn validate_local_descending_path(target: &str, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if target.starts_with('/') {
        errors.push(FieldError::invalid(path, target, "must be a relative path"));
    }
    errors.extend(validate_path_no_backsteps(target, path));
    errors
}

pub(super) fn validate_local_non_reserved_path(target: &str, path: &Path) -> Vec<FieldError> {
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
