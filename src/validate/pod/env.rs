use super::*;

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

pub(super) fn validate_key_selector(name: &str, key: &str, path: &Path) -> Vec<FieldError> {
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

pub(super) fn validate_env_from(sources: &[EnvFromSource], path: &Path) -> Vec<FieldError> {
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

/// A `fieldRef`'s `fieldPath`, once its `apiVersion` and `fieldPath` are set and the version is
/// `v1`; otherwise the one error the apiserver's conversion of the selector gives first.
pub fn v1_field_path<'s>(
    selector: &'s ObjectFieldSelector,
    path: &Path,
) -> Result<&'s str, Vec<FieldError>> {
    let api_version = selector.api_version.as_deref().unwrap_or("");
    if api_version.is_empty() {
        return Err(vec![FieldError::required(&path.child("apiVersion"), "")]);
    }
    let field_path = selector.field_path.as_str();
    if field_path.is_empty() {
        return Err(vec![FieldError::required(&path.child("fieldPath"), "")]);
    }
    if api_version != "v1" {
        return Err(field_path_conversion_error(
            path,
            field_path,
            &format!("unsupported pod version: {api_version}"),
        ));
    }
    Ok(field_path)
}

/// `fieldPath: Invalid value: …: error converting fieldPath: <cause>`.
pub fn field_path_conversion_error(path: &Path, field_path: &str, cause: &str) -> Vec<FieldError> {
    vec![FieldError::invalid(
        &path.child("fieldPath"),
        field_path,
        format!("error converting fieldPath: {cause}"),
    )]
}

/// `validateObjectFieldSelector` for downward-API references: `apiVersion` `v1`, a supported
/// plain path, or `metadata.labels['k']` / `metadata.annotations['k']` with a qualified key.
pub fn validate_object_field_selector(
    selector: &ObjectFieldSelector,
    supported: &[&str],
    path: &Path,
) -> Vec<FieldError> {
    let field_path = match v1_field_path(selector, path) {
        Ok(field_path) => field_path,
        Err(errors) => return errors,
    };
    let field_path_error =
        |message: String| field_path_conversion_error(path, field_path, &message);
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

pub(super) fn validate_resource_field_selector(
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
