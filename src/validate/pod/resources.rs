use super::*;

// ---------------------------------------------------------------------------------------------
// Resources

/// Value of a quantity as a float, for sign and ordering checks; `None` if it does not parse.
pub(super) fn quantity_value(input: &str) -> Option<f64> {
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

pub(super) fn is_huge_pages(name: &str) -> bool {
    name.starts_with("hugepages-")
}

/// Native resources have no domain or the `kubernetes.io` one.
pub(super) fn is_native_resource(name: &str) -> bool {
    !name.contains('/') || name.contains("kubernetes.io/")
}

pub(super) fn is_extended_resource(name: &str) -> bool {
    !is_native_resource(name)
        && !name.starts_with("requests.")
        && qualified_name_errors(&format!("requests.{name}")).is_empty()
}

pub(super) fn overcommit_allowed(name: &str) -> bool {
    is_native_resource(name) && !is_huge_pages(name)
}

pub(super) fn validate_container_resource_name(name: &str, path: &Path) -> Vec<FieldError> {
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

pub(super) fn validate_quantity(
    name: &str,
    raw: &str,
    path: &Path,
) -> (Vec<FieldError>, Option<f64>) {
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
            super::super::field::NEGATIVE_ERROR,
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

pub(super) fn validate_resize_policy(
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
