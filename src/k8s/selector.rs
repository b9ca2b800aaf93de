//! Kubernetes label-selector matching (`metav1.LabelSelector` semantics).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};

/// A selector that cannot be evaluated, e.g. an unknown operator.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct SelectorError {
    pub field: String,
    pub message: String,
}

pub type Labels = BTreeMap<String, String>;

/// A Namespace's labels as `namespaceSelector` sees them: with the `kubernetes.io/metadata.name`
/// label Kubernetes ≥ 1.21 sets on every Namespace, added when an older apiserver left it out, so
/// a SidecarSet pinned to a namespace (v1alpha1's `spec.namespace`, stored as a selector on that
/// label) matches there too.
pub fn namespace_labels(name: String, labels: Option<Labels>) -> Labels {
    let mut labels = labels.unwrap_or_default();
    add_name_label(&name, &mut labels);
    labels
}

/// Gives `labels` the name label of namespace `name`, as a ≥ 1.21 apiserver keeps it: always
/// there, always the name.
pub fn add_name_label(name: &str, labels: &mut Labels) {
    let key = crate::api::keys::NAMESPACE_NAME_LABEL;
    if labels.get(key).map(String::as_str) != Some(name) {
        labels.insert(key.to_string(), name.to_string());
    }
}

/// True when neither `matchLabels` nor `matchExpressions` has an entry.
pub fn is_empty(selector: &LabelSelector) -> bool {
    selector.match_labels.as_ref().is_none_or(|m| m.is_empty())
        && selector
            .match_expressions
            .as_ref()
            .is_none_or(|e| e.is_empty())
}

/// `selector` when it is set and has an entry: the one a SidecarSet's `spec.selector` injects by
/// (nil or empty, it injects nothing).
pub fn non_empty(selector: Option<&LabelSelector>) -> Option<&LabelSelector> {
    selector.filter(|s| !is_empty(s))
}

/// Does `selector` select `labels`? An empty selector selects everything (callers that want
/// "empty matches nothing" check [`is_empty`] first). `field` names the selector in errors.
pub fn matches(
    selector: &LabelSelector,
    labels: Option<&Labels>,
    field: &str,
) -> Result<bool, SelectorError> {
    let get = |key: &str| labels.and_then(|l| l.get(key)).map(String::as_str);
    if let Some(match_labels) = &selector.match_labels {
        for (key, value) in match_labels {
            if get(key) != Some(value.as_str()) {
                return Ok(false);
            }
        }
    }
    for (index, requirement) in selector.match_expressions.iter().flatten().enumerate() {
        if !requirement_matches(requirement, get(&requirement.key)).map_err(|message| {
            SelectorError {
                field: format!("{field}.matchExpressions[{index}].operator"),
                message,
            }
        })? {
            return Ok(false);
        }
    }
    Ok(true)
}

fn requirement_matches(
    requirement: &LabelSelectorRequirement,
    value: Option<&str>,
) -> Result<bool, String> {
    let values = requirement.values.as_deref().unwrap_or(&[]);
    let contains = |v: &str| values.iter().any(|candidate| candidate == v);
    match requirement.operator.as_str() {
        "In" => Ok(value.is_some_and(contains)),
        "NotIn" => Ok(!value.is_some_and(contains)),
        "Exists" => Ok(value.is_some()),
        "DoesNotExist" => Ok(value.is_none()),
        other => Err(format!(
            "Unsupported value: {other:?}: supported values: \"In\", \"NotIn\", \"Exists\", \"DoesNotExist\""
        )),
    }
}

#[cfg(test)]
mod tests;
