//! Kubernetes name and field-path syntax shared by injection and validation.

use std::sync::LazyLock;

use regex::Regex;

/// Splits `metadata.labels['key']` into `("metadata.labels", "key")`.
pub fn parse_subscripted_field_path(path: &str) -> Option<(&str, String)> {
    let open = path.find("['")?;
    let rest = path.get(open + 2..)?.strip_suffix("']")?;
    Some((&path[..open], rest.to_string()))
}

/// Kubernetes' `IsValidLabelValue`: empty, or at most 63 alphanumerics, `-`, `_` or `.`,
/// starting and ending alphanumeric.
pub fn is_label_value(value: &str) -> bool {
    value.is_empty() || (value.len() <= LABEL_VALUE_MAX_LENGTH && is_name_part(value))
}

/// The most characters a label value (and the name part of a qualified name) may have.
pub const LABEL_VALUE_MAX_LENGTH: usize = 63;

/// A qualified name's part after the prefix, without its length limit: alphanumerics, `-`, `_`
/// or `.`, starting and ending alphanumeric.
pub fn is_name_part(value: &str) -> bool {
    let bytes = value.as_bytes();
    match (bytes.first(), bytes.last()) {
        (Some(first), Some(last)) => {
            first.is_ascii_alphanumeric()
                && last.is_ascii_alphanumeric()
                && bytes
                    .iter()
                    .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        }
        _ => false,
    }
}

/// Kubernetes' qualified name: an optional DNS-subdomain prefix and `/`, then a name of at most
/// 63 alphanumerics, `-`, `_` or `.`, starting and ending alphanumeric.
pub fn is_qualified_name(value: &str) -> bool {
    static NAME: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$").expect("static regex compiles")
    });
    static SUBDOMAIN: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
            .expect("static regex compiles")
    });
    let (prefix, name) = match value.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, value),
    };
    if let Some(prefix) = prefix
        && (prefix.is_empty() || prefix.len() > 253 || !SUBDOMAIN.is_match(prefix))
    {
        return false;
    }
    !name.is_empty() && name.len() <= 63 && NAME.is_match(name)
}
