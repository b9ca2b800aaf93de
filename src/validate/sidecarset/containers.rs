use super::*;

/// C.7–C.9: the Kruise-only fields of each sidecar, then Kubernetes' own pod validation of all
/// sidecars and volumes as if they formed one pod.
pub(super) fn validate_sidecar_containers(set: &SidecarSet, spec: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    // Upstream indexes the spec path itself (`spec[0].…`) for per-container fields.
    for (i, init) in set.init_containers().iter().enumerate() {
        if let Some(policy) = &init.resources_policy {
            let policy_path = spec.index(i).child("resourcesPolicy");
            if !init.is_native_sidecar() {
                errors.push(FieldError::forbidden(
                    &policy_path,
                    "resourcesPolicy is only supported for containers with RestartPolicy Always",
                ));
            }
            errors.extend(validate_resources_policy(
                &init.container,
                policy,
                &policy_path,
            ));
        }
    }
    for (i, sidecar) in set.containers().iter().enumerate() {
        let policy = sidecar.pod_inject_policy();
        if policy != keys::BEFORE_APP_CONTAINER && policy != keys::AFTER_APP_CONTAINER {
            errors.push(FieldError::invalid(
                &spec.child("container").child("podInjectPolicy"),
                policy,
                "unsupported pod inject policy",
            ));
        }
        let share = sidecar
            .share_volume_policy
            .as_ref()
            .and_then(|p| p.type_.as_deref())
            .unwrap_or("");
        if share != keys::SHARE_VOLUME_ENABLED && share != keys::SHARE_VOLUME_DISABLED {
            errors.push(FieldError::invalid(
                &spec.child("container").child("shareVolumePolicy"),
                GoRepr(format!(
                    "v1beta1.ShareVolumePolicy{{Type:{}}}",
                    go_quote(share)
                )),
                "unsupported share volume policy",
            ));
        }
        let transfer_path = spec.index(i).child("transferEnv").child("fieldRef");
        for entry in sidecar.transfer_env.iter().flatten() {
            let field_ref = entry
                .source_container_name_from
                .as_ref()
                .and_then(|from| from.field_ref.as_ref());
            if let Some(field_ref) = field_ref {
                errors.extend(validate_transfer_env_field_ref(field_ref, &transfer_path));
            }
        }
        if let Some(resources_policy) = &sidecar.resources_policy {
            errors.extend(validate_resources_policy(
                &sidecar.container,
                resources_policy,
                &spec.index(i).child("resourcesPolicy"),
            ));
        }
    }
    errors.extend(validate_as_pod(set));
    errors
}

/// `sourceContainerNameFrom.fieldRef` may only read a pod label or annotation.
pub(super) fn validate_transfer_env_field_ref(
    selector: &ObjectFieldSelector,
    path: &Path,
) -> Vec<FieldError> {
    let field_path = match v1_field_path(selector, path) {
        Ok(field_path) => field_path,
        Err(errors) => return errors,
    };
    let conversion_error = |cause: String| field_path_conversion_error(path, field_path, &cause);
    // OpenKruise's converter accepts only subscripted label/annotation paths; even a bare
    // `metadata.name` fails to convert.
    match split_subscripted_path(field_path) {
        Some(("metadata.annotations", key)) => qualified_name_errors(&key.to_lowercase())
            .into_iter()
            .map(|m| FieldError::invalid(path, key.as_str(), m))
            .collect(),
        Some(("metadata.labels", key)) => qualified_name_errors(&key)
            .into_iter()
            .map(|m| FieldError::invalid(path, key.as_str(), m))
            .collect(),
        Some((base, _)) => conversion_error(format!("field path not supported: {base}")),
        None => conversion_error(format!("field label not supported: {field_path}")),
    }
}

pub(super) fn go_resources_policy(policy: &ResourcesPolicy) -> GoRepr {
    GoRepr(format!(
        "v1beta1.ResourcesPolicy{{TargetContainersMode:{}, TargetContainersNameRegex:{}}}",
        go_quote(&policy.target_containers_mode),
        go_quote(policy.target_containers_name_regex.as_deref().unwrap_or(""))
    ))
}

/// C.8d (and C.7): a `resourcesPolicy` needs no `resources` beside it, a regex that compiles
/// and at least one expression; each expression must evaluate.
pub(super) fn validate_resources_policy(
    container: &Container,
    policy: &ResourcesPolicy,
    path: &Path,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let resources = container.resources.as_ref();
    let has_resources = resources.is_some_and(|r| {
        r.limits.as_ref().is_some_and(|l| !l.is_empty())
            || r.requests.as_ref().is_some_and(|q| !q.is_empty())
    });
    if has_resources {
        errors.push(FieldError::invalid(
            path,
            go_resources_policy(policy),
            "resourcesPolicy and resources cannot be configured together",
        ));
        return errors;
    }
    let regex_path = path.child("targetContainersNameRegex");
    match policy.target_containers_name_regex.as_deref().unwrap_or("") {
        "" => errors.push(FieldError::required(&regex_path, "invalid empty regex")),
        pattern => {
            if let Err(error) = regex::Regex::new(pattern) {
                errors.push(FieldError::invalid(
                    &regex_path,
                    pattern,
                    format!("invalid regex pattern: {}", regex_error_summary(&error)),
                ));
            }
        }
    }
    let expr_path = path.child("resourcesExpr");
    let expr = policy.resources_expr.as_ref();
    let limits = expr.and_then(|e| e.limits.as_ref());
    let requests = expr.and_then(|e| e.requests.as_ref());
    if limits.is_none() && requests.is_none() {
        errors.push(FieldError::invalid(
            &expr_path,
            GoRepr(
                "v1beta1.ResourcesExpr{Limits:(*v1beta1.ResourceExprLimits)(nil), Requests:(*v1beta1.ResourceExprRequests)(nil)}"
                    .into(),
            ),
            "at least one of limits or requests must be configured",
        ));
        return errors;
    }
    for (kind, pair) in [("limits", limits), ("requests", requests)] {
        let Some(pair) = pair else { continue };
        for (resource, expr) in [("cpu", &pair.cpu), ("memory", &pair.memory)] {
            let Some(expr) = expr.as_deref().filter(|e| !e.is_empty()) else {
                continue;
            };
            if let Err(error) = validate_resource_expression(expr, resource) {
                errors.push(FieldError::invalid(
                    &expr_path.child(kind).child(resource),
                    expr,
                    format!("invalid expression: {error}"),
                ));
            }
        }
    }
    errors
}

/// Upstream's check of one expression: it must evaluate with its resource's variable bound to
/// the number 1 (so `cpu*cpu` passes here and fails at injection, as upstream).
fn validate_resource_expression(
    expr: &str,
    resource: &str,
) -> Result<(), crate::k8s::quantity::calculator::CalculatorError> {
    use crate::k8s::quantity::calculator::{Value, evaluate};
    let variables = BTreeMap::from([(resource.to_string(), Value::Number(1.0))]);
    evaluate(expr, &variables).map(|_| ())
}

/// A one-line regex error in the style of Go's `error parsing regexp: …`.
pub(super) fn regex_error_summary(error: &regex::Error) -> String {
    let text = error.to_string();
    let reason = text
        .lines()
        .rev()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or("")
        .trim_start_matches("error: ");
    format!("error parsing regexp: {reason}")
}

/// C.9: OpenKruise validates the sidecars as a pod (`ValidatePodCreate`) holding all of them and
/// the SidecarSet's volumes; with no containers a placeholder stands in, as pods need one.
pub(super) fn validate_as_pod(set: &SidecarSet) -> Vec<FieldError> {
    let placeholder = Container {
        name: "test".into(),
        image: Some("busybox".into()),
        image_pull_policy: Some("IfNotPresent".into()),
        termination_message_policy: Some("File".into()),
        ..Default::default()
    };
    let init: Vec<&Container> = set.init_containers().iter().map(|c| &c.container).collect();
    let mut containers: Vec<&Container> = set.containers().iter().map(|c| &c.container).collect();
    if containers.is_empty() {
        containers.push(&placeholder);
    }
    validate_pod_containers_and_volumes(
        &init,
        &containers,
        set.volumes(),
        "Always",
        Some(DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS),
        &Path::new("spec"),
    )
}

/// C.10 with no whitelist ConfigMap (the `SidecarSetPatchPodMetadataDefaultsAllowed` behaviour):
/// each entry needs annotations with valid keys and a policy, and no key may appear twice.
pub(super) fn validate_patch_pod_metadata(set: &SidecarSet, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut keys_seen = BTreeSet::new();
    for patch in set.spec.patch_pod_metadata.iter().flatten() {
        let annotations = patch.annotations.as_ref().filter(|a| !a.is_empty());
        match annotations {
            None => errors.push(FieldError::required(
                path,
                "no annotations defined for SidecarSet",
            )),
            Some(annotations) => {
                // Upstream validates a throwaway ObjectMeta rooted at `patchPodMetadata`.
                let meta = ObjectMeta {
                    name: Some("fake-name".into()),
                    annotations: Some(annotations.clone()),
                    ..Default::default()
                };
                errors.extend(validate_object_meta(
                    &meta,
                    false,
                    sidecarset_name_errors,
                    &Path::new("patchPodMetadata"),
                ));
            }
        }
        if patch.patch_policy.as_deref().unwrap_or("").is_empty() {
            errors.push(FieldError::required(
                path,
                "no patchPolicy defined for patchPodMetadata",
            ));
        }
        for key in annotations.into_iter().flat_map(BTreeMap::keys) {
            if !keys_seen.insert(key.as_str()) {
                errors.push(FieldError::required(
                    path,
                    format!("patch annotation[{key}] already exist"),
                ));
            }
        }
    }
    errors
}

// ---------------------------------------------------------------------------------------------
// D. Container immutability on UPDATE

/// Containers may be removed but not added or renamed, and keep their upgrade type.
pub(super) fn validate_container_immutability(
    new: &SidecarSet,
    old: &SidecarSet,
) -> Vec<FieldError> {
    let path = Path::new("spec.containers");
    let old_upgrade_types: BTreeMap<&str, &str> = old
        .containers()
        .iter()
        .map(|c| (c.name(), c.upgrade_type()))
        .collect();
    let mut errors = Vec::new();
    for container in new.containers() {
        let name = container.name();
        match old_upgrade_types.get(name) {
            Some(&old_type) => {
                if !old_type.is_empty() && container.upgrade_type() != old_type {
                    errors.push(FieldError::invalid(
                        &path.child("upgradeStrategy").child("upgradeType"),
                        name,
                        format!("container {name} upgradeType is immutable"),
                    ));
                }
            }
            None => errors.push(FieldError::invalid(
                &path.child("name"),
                name,
                format!("container {name} is not found"),
            )),
        }
    }
    errors
}
