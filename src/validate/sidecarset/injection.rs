use super::*;

/// The namespace selector OpenKruise sees (v1alpha1's `spec.namespace` arrives converted into it).
pub fn namespace_selector(set: &SidecarSet) -> Option<Cow<'_, LabelSelector>> {
    set.spec.namespace_selector.as_ref().map(Cow::Borrowed)
}

/// Label-selector syntax, non-empty, and convertible (a bad value is reported twice: once by the
/// syntax check and once, at `<path>.selector`, by the conversion).
pub(super) fn validate_selector(selector: &LabelSelector, path: &Path) -> Vec<FieldError> {
    let mut errors = validate_label_selector(selector, LabelSelectorOptions::default(), path);
    let rendered = || GoRepr(go_label_selector(selector));
    if is_empty(selector) {
        errors.push(FieldError::invalid(
            path,
            rendered(),
            "empty selector is not valid for sidecarset.",
        ));
    }
    // Upstream reports the failed conversion without its reason.
    if label_selector_conversion_error(selector).is_some() {
        errors.push(FieldError::invalid(&path.child("selector"), rendered(), ""));
    }
    errors
}

pub(super) fn go_optional_string(value: Option<&String>) -> String {
    match value {
        None => "(*string)(nil)".to_string(),
        Some(value) => format!("(*string)({})", go_quote(value)),
    }
}

pub(super) fn go_revision(revision: &SidecarSetInjectRevision) -> GoRepr {
    GoRepr(format!(
        "v1beta1.SidecarSetInjectRevision{{CustomVersion:{}, RevisionName:{}, Policy:{}}}",
        go_optional_string(revision.custom_version.as_ref()),
        go_optional_string(revision.revision_name.as_ref()),
        go_quote(revision.policy.as_deref().unwrap_or(""))
    ))
}

/// C.3: the revision to inject must be named, restorable and paired with a known policy.
pub(super) fn validate_injection_revision(set: &SidecarSet) -> Vec<FieldError> {
    let Some(revision) = set
        .spec
        .injection_strategy
        .as_ref()
        .and_then(|s| s.revision.as_ref())
    else {
        return Vec::new();
    };
    // Upstream reports these at `revision`, without the `spec.injectionStrategy` prefix.
    let path = Path::new("revision");
    let mut errors = Vec::new();
    match (&revision.revision_name, &revision.custom_version) {
        (None, None) => errors.push(FieldError::invalid(
            &path,
            go_revision(revision),
            "revisionName and customVersion cannot be empty simultaneously",
        )),
        (revision_name, _) => {
            // No ControllerRevision is stored by this server: answer as OpenKruise does when the
            // named revision (GET) or the custom version (LIST by labels) is absent.
            let cause = match revision_name {
                Some(name) if name.is_empty() => "resource name may not be empty".to_string(),
                Some(name) => format!("controllerrevisions.apps {} not found", go_quote(name)),
                None => format!("ControllerRevision.apps {} not found", go_quote(set.name())),
            };
            errors.push(FieldError::invalid(
                &path,
                "null",
                format!("Cannot find specific ControllerRevision, err: {cause}"),
            ));
        }
    }
    let policy = revision.policy.as_deref().unwrap_or("");
    if !matches!(policy, "" | "Always" | "Partial") {
        errors.push(FieldError::invalid(
            &path.child("policy"),
            go_revision(revision),
            format!("Invalid policy {policy}, supported: [Always, Partial]"),
        ));
    }
    errors
}
