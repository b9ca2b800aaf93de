use super::*;

// ---------------------------------------------------------------------------------------------
// Field validators

pub(super) fn invalid_for_each(path: &Path, value: &str, messages: Vec<String>) -> Vec<FieldError> {
    messages
        .into_iter()
        .map(|message| FieldError::invalid(path, value, message))
        .collect()
}

/// `ValidateDNS1123Label`
pub fn validate_dns1123_label(value: &str, path: &Path) -> Vec<FieldError> {
    invalid_for_each(path, value, dns1123_label_errors(value))
}

/// `ValidateDNS1123Subdomain`
pub fn validate_dns1123_subdomain(value: &str, path: &Path) -> Vec<FieldError> {
    invalid_for_each(path, value, dns1123_subdomain_errors(value))
}

/// `ValidateQualifiedName`
pub fn validate_qualified_name(value: &str, path: &Path) -> Vec<FieldError> {
    invalid_for_each(path, value, qualified_name_errors(value))
}

/// `ValidateNonnegativeField`
pub fn validate_nonnegative(value: i64, path: &Path) -> Vec<FieldError> {
    if value < 0 {
        vec![FieldError::invalid(path, value, NEGATIVE_ERROR)]
    } else {
        Vec::new()
    }
}

/// `ValidatePositiveIntOrPercent`: an int ≥ 0 or a `N%` string (no upper bound).
pub fn validate_positive_int_or_percent(value: &IntOrString, path: &Path) -> Vec<FieldError> {
    match value {
        IntOrString::Int(n) => validate_nonnegative(i64::from(*n), path),
        IntOrString::String(s) => percent_errors(s)
            .into_iter()
            .map(|m| FieldError::invalid(path, GoRepr(go_int_or_string(value)), m))
            .collect(),
    }
}

/// Label keys must be qualified names and values valid label values (`ValidateLabels`).
pub fn validate_labels(labels: Option<&BTreeMap<String, String>>, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (key, value) in labels.into_iter().flatten() {
        errors.extend(validate_qualified_name(key, path));
        errors.extend(invalid_for_each(path, value, label_value_errors(value)));
    }
    errors
}

/// Annotation keys are qualified names in any case; all annotations together at most 256 KiB.
pub fn validate_annotations(
    annotations: Option<&BTreeMap<String, String>>,
    path: &Path,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut total_size = 0usize;
    for (key, value) in annotations.into_iter().flatten() {
        errors.extend(invalid_for_each(
            path,
            key,
            qualified_name_errors(&key.to_lowercase()),
        ));
        total_size = total_size.saturating_add(key.len() + value.len());
    }
    if total_size > TOTAL_ANNOTATION_SIZE_LIMIT {
        errors.push(FieldError::too_long(path, TOTAL_ANNOTATION_SIZE_LIMIT));
    }
    errors
}

/// `ValidateFinalizers`: each a qualified name.
pub fn validate_finalizers(finalizers: Option<&[String]>, path: &Path) -> Vec<FieldError> {
    finalizers
        .into_iter()
        .flatten()
        .flat_map(|f| validate_qualified_name(f, path))
        .collect()
}

/// `ValidateObjectMeta`: `name_errors` checks the name (e.g. DNS subdomain or a kind's own rule);
/// cluster-scoped kinds pass `requires_namespace = false` and must not carry a namespace.
pub fn validate_object_meta(
    meta: &ObjectMeta,
    requires_namespace: bool,
    name_errors: fn(&str) -> Vec<String>,
    path: &Path,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let generate_name = meta.generate_name.as_deref().unwrap_or("");
    if !generate_name.is_empty() {
        let generate_path = path.child("generateName");
        errors.extend(invalid_for_each(
            &generate_path,
            generate_name,
            name_errors(generate_name),
        ));
    }
    let name = meta.name.as_deref().unwrap_or("");
    let name_path = path.child("name");
    if name.is_empty() {
        errors.push(FieldError::required(
            &name_path,
            "name or generateName is required",
        ));
    } else {
        errors.extend(invalid_for_each(&name_path, name, name_errors(name)));
    }
    let namespace = meta.namespace.as_deref().unwrap_or("");
    let namespace_path = path.child("namespace");
    if requires_namespace {
        if namespace.is_empty() {
            errors.push(FieldError::required(&namespace_path, ""));
        } else {
            errors.extend(validate_dns1123_label(namespace, &namespace_path));
        }
    } else if !namespace.is_empty() {
        errors.push(FieldError::forbidden(
            &namespace_path,
            "not allowed on this type",
        ));
    }
    errors.extend(validate_nonnegative(
        meta.generation.unwrap_or(0),
        &path.child("generation"),
    ));
    errors.extend(validate_labels(meta.labels.as_ref(), &path.child("labels")));
    errors.extend(validate_annotations(
        meta.annotations.as_ref(),
        &path.child("annotations"),
    ));
    errors.extend(validate_finalizers(
        meta.finalizers.as_deref(),
        &path.child("finalizers"),
    ));
    errors
}
