//! Kubernetes name and field-path syntax shared by injection and validation.

use std::sync::LazyLock;

use regex::Regex;

/// Splits `metadata.labels['key']` into `("metadata.labels", "key")`.
pub fn parse_subscripted_field_path(path: &str) -> Option<(&str, String)> {
    let open = path.find("['")?;
    let rest = path.get(open + 2..)?.strip_suffix("']")?;
    Some((&path[..open], rest.to_string()))
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
