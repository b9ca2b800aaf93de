use super::*;

// ---------------------------------------------------------------------------------------------
// Label selectors

/// Options of `ValidateLabelSelector`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LabelSelectorOptions {
    /// Accept `matchExpressions` values that are not valid label values (pod-template
    /// topology-spread and affinity selectors allow this for backward compatibility).
    pub allow_invalid_label_value: bool,
}

pub const SELECTOR_OPERATORS: [&str; 4] = ["In", "NotIn", "Exists", "DoesNotExist"];

/// `ValidateLabelSelector`: key syntax, value syntax, a known operator, values present for
/// `In`/`NotIn` and absent for `Exists`/`DoesNotExist`.
pub fn validate_label_selector(
    selector: &LabelSelector,
    options: LabelSelectorOptions,
    path: &Path,
) -> Vec<FieldError> {
    let mut errors = validate_labels(selector.match_labels.as_ref(), &path.child("matchLabels"));
    let expressions_path = path.child("matchExpressions");
    for (i, requirement) in selector.match_expressions.iter().flatten().enumerate() {
        let requirement_path = expressions_path.index(i);
        let values = requirement.values.as_deref().unwrap_or(&[]);
        let values_path = requirement_path.child("values");
        match requirement.operator.as_str() {
            "In" | "NotIn" => {
                if values.is_empty() {
                    errors.push(FieldError::required(
                        &values_path,
                        "must be specified when `operator` is 'In' or 'NotIn'",
                    ));
                }
            }
            "Exists" | "DoesNotExist" => {
                if !values.is_empty() {
                    errors.push(FieldError::forbidden(
                        &values_path,
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    ));
                }
            }
            other => errors.push(FieldError::invalid(
                &requirement_path.child("operator"),
                other,
                "not a valid selector operator",
            )),
        }
        errors.extend(validate_qualified_name(
            &requirement.key,
            &requirement_path.child("key"),
        ));
        if !options.allow_invalid_label_value {
            for (j, value) in values.iter().enumerate() {
                errors.extend(invalid_for_each(
                    &values_path.index(j),
                    value,
                    label_value_errors(value),
                ));
            }
        }
    }
    errors
}

/// The error `metav1.LabelSelectorAsSelector` returns for `selector`, if any: the first bad
/// requirement, as the aggregate of its problems (paths relative to the requirement).
pub fn label_selector_conversion_error(selector: &LabelSelector) -> Option<String> {
    let relative = Path::default();
    let requirement_error = |key: &str, operator: &str, values: &[String]| {
        let mut problems = Vec::new();
        let key_errors = qualified_name_errors(key);
        if !key_errors.is_empty() {
            problems.push(FieldError::invalid(
                &relative.child("key"),
                key,
                key_errors.join("; "),
            ));
        }
        let values_path = relative.child("values");
        let values_repr = GoRepr(if values.is_empty() {
            "[]string(nil)".to_string()
        } else {
            go_string_slice(Some(values))
        });
        match operator {
            "In" | "NotIn" if values.is_empty() => problems.push(FieldError::invalid(
                &values_path,
                values_repr,
                "for 'in', 'notin' operators, values set can't be empty",
            )),
            "=" if values.len() != 1 => problems.push(FieldError::invalid(
                &values_path,
                values_repr,
                "exact-match compatibility requires one single value",
            )),
            "Exists" | "DoesNotExist" if !values.is_empty() => problems.push(FieldError::invalid(
                &values_path,
                values_repr,
                "values set must be empty for exists and does not exist",
            )),
            _ => {}
        }
        for (i, value) in values.iter().enumerate() {
            let value_errors = label_value_errors(value);
            if !value_errors.is_empty() {
                problems.push(FieldError::invalid(
                    &values_path.index(i).key(key),
                    value.as_str(),
                    value_errors.join("; "),
                ));
            }
        }
        (!problems.is_empty()).then(|| aggregate(&problems))
    };
    for (key, value) in selector.match_labels.iter().flatten() {
        if let Some(error) = requirement_error(key, "=", std::slice::from_ref(value)) {
            return Some(error);
        }
    }
    for requirement in selector.match_expressions.iter().flatten() {
        if !SELECTOR_OPERATORS.contains(&requirement.operator.as_str()) {
            return Some(format!(
                "{} is not a valid label selector operator",
                go_quote(&requirement.operator)
            ));
        }
        let values = requirement.values.as_deref().unwrap_or(&[]);
        if let Some(error) = requirement_error(&requirement.key, &requirement.operator, values) {
            return Some(error);
        }
    }
    None
}
