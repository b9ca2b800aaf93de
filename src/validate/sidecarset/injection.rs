use super::*;
use crate::k8s::history::injection_revision_not_found;

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

/// Where the validator looks up the revision a SidecarSet injects (`injectionStrategy.revision`).
pub trait RevisionHistory {
    /// `Err` with the lookup's error, in OpenKruise's words, when the revision cannot be found.
    fn find(&self, set: &SidecarSet, revision: &SidecarSetInjectRevision) -> Result<(), String>;
}

/// No history at all (a directory of SidecarSets): every revision is missing.
pub struct NoHistory;

impl RevisionHistory for NoHistory {
    fn find(&self, set: &SidecarSet, revision: &SidecarSetInjectRevision) -> Result<(), String> {
        Err(injection_revision_not_found(revision, set.name()))
    }
}

/// Every revision found: for a judge that leaves revisions to be resolved later (the cluster
/// catalogue resolves them against the history it watches and reports those it cannot).
pub struct AnyHistory;

impl RevisionHistory for AnyHistory {
    fn find(&self, _: &SidecarSet, _: &SidecarSetInjectRevision) -> Result<(), String> {
        Ok(())
    }
}

/// C.3: the revision to inject must be named, restorable and paired with a known policy.
pub(super) fn validate_injection_revision(
    set: &SidecarSet,
    history: &dyn RevisionHistory,
) -> Vec<FieldError> {
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
        _ => {
            if let Err(cause) = history.find(set, revision) {
                errors.push(FieldError::invalid(
                    &path,
                    "null",
                    format!("Cannot find specific ControllerRevision, err: {cause}"),
                ));
            }
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
