use super::*;
pub use crate::k8s::names::LABEL_VALUE_MAX_LENGTH;
use crate::k8s::names::is_name_part;

// ---------------------------------------------------------------------------------------------
// String syntax (k8s.io/apimachinery/pkg/util/validation), each returning its messages

pub const EMPTY_ERROR: &str = "must be non-empty";
pub const DNS1123_LABEL_MAX_LENGTH: usize = 63;
pub const DNS1123_SUBDOMAIN_MAX_LENGTH: usize = 253;
pub const QUALIFIED_NAME_MAX_LENGTH: usize = 63;
/// Total size of all annotations of one object.
pub const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;
pub const NEGATIVE_ERROR: &str = "must be greater than or equal to 0";

pub(super) const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
pub(super) const DNS1123_LABEL_ERR: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
pub(super) const DNS1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
pub(super) const DNS1123_SUBDOMAIN_ERR: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
pub(super) const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
pub(super) const QUALIFIED_NAME_ERR: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
pub(super) const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
pub(super) const LABEL_VALUE_ERR: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
pub(super) const ENV_VAR_NAME_FMT: &str = "[-._a-zA-Z][-._a-zA-Z0-9]*";
pub(super) const ENV_VAR_NAME_ERR: &str = "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit";
pub(super) const CONFIG_MAP_KEY_FMT: &str = "[-._a-zA-Z0-9]+";
pub(super) const CONFIG_MAP_KEY_ERR: &str =
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.'";
pub(super) const PERCENT_FMT: &str = "[0-9]+%";
pub(super) const PERCENT_ERR: &str =
    "a valid percent string must be a numeric string followed by an ending '%'";

/// `must be no more than N characters`
pub fn max_len_error(length: usize) -> String {
    format!("must be no more than {length} characters")
}

/// Kubernetes' `RegexError`, including its double space between examples.
pub fn regex_error(message: &str, format: &str, examples: &[&str]) -> String {
    if examples.is_empty() {
        return format!("{message} (regex used for validation is '{format}')");
    }
    let mut out = format!("{message} (e.g. ");
    for (i, example) in examples.iter().enumerate() {
        if i > 0 {
            out.push_str(" or ");
        }
        out.push('\'');
        out.push_str(example);
        out.push_str("', ");
    }
    out.push_str(&format!("regex used for validation is '{format}')"));
    out
}

pub fn inclusive_range_error(low: i64, high: i64) -> String {
    format!("must be between {low} and {high}, inclusive")
}

pub(super) fn is_lower_alnum(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit()
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, whole string.
pub(super) fn matches_dns1123_label(value: &str) -> bool {
    let bytes = value.as_bytes();
    match (bytes.first(), bytes.last()) {
        (Some(&first), Some(&last)) => {
            is_lower_alnum(first)
                && is_lower_alnum(last)
                && bytes.iter().all(|&b| is_lower_alnum(b) || b == b'-')
        }
        _ => false,
    }
}

pub(super) fn matches_dns1123_subdomain(value: &str) -> bool {
    value.split('.').all(matches_dns1123_label)
}

/// `IsDNS1123Label`
pub fn dns1123_label_errors(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > DNS1123_LABEL_MAX_LENGTH {
        errors.push(max_len_error(DNS1123_LABEL_MAX_LENGTH));
    }
    if !matches_dns1123_label(value) {
        if matches_dns1123_subdomain(value) {
            // A valid subdomain that is not a label: the length was checked, so it is the dots.
            errors.push("must not contain dots".to_string());
        } else {
            errors.push(regex_error(
                DNS1123_LABEL_ERR,
                DNS1123_LABEL_FMT,
                &["my-name", "123-abc"],
            ));
        }
    }
    errors
}

/// `IsDNS1123Subdomain`
pub fn dns1123_subdomain_errors(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX_LENGTH {
        errors.push(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH));
    }
    if !matches_dns1123_subdomain(value) {
        errors.push(regex_error(
            DNS1123_SUBDOMAIN_ERR,
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errors
}

/// `IsQualifiedName`: `[prefix/]name`, the prefix a DNS subdomain.
pub fn qualified_name_errors(value: &str) -> Vec<String> {
    if is_qualified_name(value) {
        return Vec::new();
    }
    let name_regex_error = || {
        regex_error(
            QUALIFIED_NAME_ERR,
            QUALIFIED_NAME_FMT,
            &["MyName", "my.name", "123-abc"],
        )
    };
    let mut errors = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errors.push(format!("prefix part {EMPTY_ERROR}"));
            } else {
                errors.extend(
                    dns1123_subdomain_errors(prefix)
                        .into_iter()
                        .map(|m| format!("prefix part {m}")),
                );
            }
            *name
        }
        _ => {
            return vec![format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                name_regex_error()
            )];
        }
    };
    if name.is_empty() {
        errors.push(format!("name part {EMPTY_ERROR}"));
    } else if name.len() > QUALIFIED_NAME_MAX_LENGTH {
        errors.push(format!(
            "name part {}",
            max_len_error(QUALIFIED_NAME_MAX_LENGTH)
        ));
    }
    if !is_name_part(name) {
        errors.push(format!("name part {}", name_regex_error()));
    }
    errors
}

/// `IsValidLabelValue`: empty, or a qualified-name part of at most 63 characters.
pub fn label_value_errors(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > LABEL_VALUE_MAX_LENGTH {
        errors.push(max_len_error(LABEL_VALUE_MAX_LENGTH));
    }
    if !value.is_empty() && !is_name_part(value) {
        errors.push(regex_error(
            LABEL_VALUE_ERR,
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errors
}

/// Names that would change directory when used as a file name.
pub(super) fn chdir_prefix_errors(value: &str) -> Vec<String> {
    match value {
        "." => vec!["must not be '.'".to_string()],
        ".." => vec!["must not be '..'".to_string()],
        v if v.starts_with("..") => vec!["must not start with '..'".to_string()],
        _ => Vec::new(),
    }
}

/// `IsEnvVarName`: `[-._a-zA-Z][-._a-zA-Z0-9]*`, and not `.`/`..`-like.
pub fn env_var_name_errors(value: &str) -> Vec<String> {
    let bytes = value.as_bytes();
    let valid = bytes
        .first()
        .is_some_and(|&b| b.is_ascii_alphabetic() || matches!(b, b'-' | b'.' | b'_'))
        && bytes
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'));
    let mut errors = Vec::new();
    if !valid {
        errors.push(regex_error(
            ENV_VAR_NAME_ERR,
            ENV_VAR_NAME_FMT,
            &["my.env-name", "MY_ENV.NAME", "MyEnvName1"],
        ));
    }
    errors.extend(chdir_prefix_errors(value));
    errors
}

/// `IsConfigMapKey` (also used for Secret keys).
pub fn config_map_key_errors(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX_LENGTH {
        errors.push(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH));
    }
    let valid = !value.is_empty()
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'));
    if !valid {
        errors.push(regex_error(
            CONFIG_MAP_KEY_ERR,
            CONFIG_MAP_KEY_FMT,
            &["key.name", "KEY_NAME", "key-name"],
        ));
    }
    errors.extend(chdir_prefix_errors(value));
    errors
}

/// `IsValidPortNum`: 1..=65535.
pub fn port_number_errors(port: i64) -> Vec<String> {
    if (1..=65535).contains(&port) {
        Vec::new()
    } else {
        vec![inclusive_range_error(1, 65535)]
    }
}

/// `IsValidPortName` (an IANA service name).
pub fn port_name_errors(port: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if port.len() > 15 {
        errors.push(max_len_error(15));
    }
    let charset_ok = !port.is_empty()
        && port
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if !charset_ok {
        errors.push(
            "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".to_string(),
        );
    } else if !port.bytes().any(|b| b.is_ascii_lowercase()) {
        errors.push("must contain at least one letter (a-z)".to_string());
    }
    if port.contains("--") {
        errors.push("must not contain consecutive hyphens".to_string());
    }
    if port.starts_with('-') || port.ends_with('-') {
        errors.push("must not begin or end with a hyphen".to_string());
    }
    errors
}

/// `IsValidPercent`: `[0-9]+%`.
pub fn percent_errors(value: &str) -> Vec<String> {
    let valid = value
        .strip_suffix('%')
        .is_some_and(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()));
    if valid {
        Vec::new()
    } else {
        vec![regex_error(PERCENT_ERR, PERCENT_FMT, &["1%", "93%"])]
    }
}
