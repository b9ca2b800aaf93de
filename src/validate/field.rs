//! Kubernetes-style field errors (apimachinery's `field.Error` / `field.ErrorList`) and the generic
//! checks every workload validator shares: name and label syntax, object metadata, label selectors
//! and int-or-percent values.
//!
//! Messages are Kubernetes' own, word for word, because users and tests match on them. A rejected
//! value is rendered the way Go's `%q` / `%#v` would print it, so `spec.x: Invalid value: "abc": …`
//! reads exactly like the upstream webhook's answer.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::inject::sidecar::is_qualified_name;

// ---------------------------------------------------------------------------------------------
// Paths

/// A field path such as `spec.containers[0].env[1].name`, built one step at a time.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Path(String);

impl Path {
    /// A path starting at `root` (`Path::new("spec")`).
    pub fn new(root: &str) -> Path {
        Path(root.to_string())
    }

    /// `.name` (no dot on an empty path).
    pub fn child(&self, name: &str) -> Path {
        if self.0.is_empty() {
            return Path(name.to_string());
        }
        let mut rendered = String::with_capacity(self.0.len() + 1 + name.len());
        rendered.push_str(&self.0);
        rendered.push('.');
        rendered.push_str(name);
        Path(rendered)
    }

    /// `[index]`
    pub fn index(&self, index: usize) -> Path {
        Path(format!("{}[{index}]", self.0))
    }

    /// `[key]`, as Kubernetes writes map keys (unquoted).
    pub fn key(&self, key: &str) -> Path {
        Path(format!("{}[{key}]", self.0))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

// ---------------------------------------------------------------------------------------------
// Errors

/// What is wrong with a field (apimachinery's `field.ErrorType`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorKind {
    Required,
    Invalid,
    NotSupported { supported: Vec<String> },
    Duplicate,
    Forbidden,
    TooLong { max: usize },
    NotFound,
    TooMany,
    InternalError,
}

impl ErrorKind {
    /// The phrase Kubernetes prints for this kind.
    pub fn phrase(&self) -> &'static str {
        match self {
            ErrorKind::Required => "Required value",
            ErrorKind::Invalid => "Invalid value",
            ErrorKind::NotSupported { .. } => "Unsupported value",
            ErrorKind::Duplicate => "Duplicate value",
            ErrorKind::Forbidden => "Forbidden",
            ErrorKind::TooLong { .. } => "Too long",
            ErrorKind::NotFound => "Not found",
            ErrorKind::TooMany => "Too many",
            ErrorKind::InternalError => "Internal error",
        }
    }

    /// Kinds whose rejected value Kubernetes never prints.
    fn omits_value(&self) -> bool {
        matches!(
            self,
            ErrorKind::Required
                | ErrorKind::Forbidden
                | ErrorKind::TooLong { .. }
                | ErrorKind::InternalError
        )
    }
}

/// One problem with one field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    pub path: String,
    pub kind: ErrorKind,
    /// The rejected value as Go prints it (`"abc"`, `-1`, `v1.LabelSelector{…}`), if shown.
    pub value: Option<String>,
    pub detail: String,
}

impl FieldError {
    fn new(path: &Path, kind: ErrorKind, value: Option<String>, detail: String) -> FieldError {
        FieldError {
            path: path.to_string(),
            kind,
            value,
            detail,
        }
    }

    pub fn required(path: &Path, detail: impl Into<String>) -> FieldError {
        FieldError::new(path, ErrorKind::Required, None, detail.into())
    }

    pub fn invalid(path: &Path, value: impl GoValue, detail: impl Into<String>) -> FieldError {
        FieldError::new(
            path,
            ErrorKind::Invalid,
            Some(value.go_repr()),
            detail.into(),
        )
    }

    /// `supported` is listed in the detail in the given order (Kubernetes sorts most lists).
    pub fn not_supported<S: AsRef<str>>(
        path: &Path,
        value: impl GoValue,
        supported: &[S],
    ) -> FieldError {
        let supported: Vec<String> = supported.iter().map(|s| s.as_ref().to_string()).collect();
        let detail = if supported.is_empty() {
            String::new()
        } else {
            let quoted: Vec<String> = supported.iter().map(|s| go_quote(s)).collect();
            format!("supported values: {}", quoted.join(", "))
        };
        FieldError::new(
            path,
            ErrorKind::NotSupported { supported },
            Some(value.go_repr()),
            detail,
        )
    }

    pub fn duplicate(path: &Path, value: impl GoValue) -> FieldError {
        FieldError::new(
            path,
            ErrorKind::Duplicate,
            Some(value.go_repr()),
            String::new(),
        )
    }

    pub fn not_found(path: &Path, value: impl GoValue) -> FieldError {
        FieldError::new(
            path,
            ErrorKind::NotFound,
            Some(value.go_repr()),
            String::new(),
        )
    }

    pub fn forbidden(path: &Path, detail: impl Into<String>) -> FieldError {
        FieldError::new(path, ErrorKind::Forbidden, None, detail.into())
    }

    /// A value longer than `max` bytes (the value itself is never printed).
    pub fn too_long(path: &Path, max: usize) -> FieldError {
        let unit = if max == 1 { "byte" } else { "bytes" };
        FieldError::new(
            path,
            ErrorKind::TooLong { max },
            None,
            format!("may not be more than {max} {unit}"),
        )
    }

    /// A list with more than `max` items; `actual` is printed when known.
    pub fn too_many(path: &Path, actual: Option<usize>, max: usize) -> FieldError {
        let unit = if max == 1 { "item" } else { "items" };
        FieldError::new(
            path,
            ErrorKind::TooMany,
            actual.map(|n| n.to_string()),
            format!("must have at most {max} {unit}"),
        )
    }

    pub fn internal(path: &Path, error: impl fmt::Display) -> FieldError {
        FieldError::new(path, ErrorKind::InternalError, None, error.to_string())
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.kind.phrase())?;
        if !self.kind.omits_value()
            && let Some(value) = &self.value
        {
            write!(f, ": {value}")?;
        }
        if !self.detail.is_empty() {
            write!(f, ": {}", self.detail)?;
        }
        Ok(())
    }
}

impl std::error::Error for FieldError {}

/// Kubernetes' aggregate error message: one error as itself, several as `[e1, e2]`, repeated
/// messages once, nothing for an empty list.
pub fn aggregate(errors: &[FieldError]) -> String {
    let mut seen = BTreeSet::new();
    let mut messages = Vec::new();
    for error in errors {
        let message = error.to_string();
        if seen.insert(message.clone()) {
            messages.push(message);
        }
    }
    match messages.as_slice() {
        [] => String::new(),
        [only] => only.clone(),
        _ => format!("[{}]", messages.join(", ")),
    }
}

// ---------------------------------------------------------------------------------------------
// Go value rendering

/// A value rendered the way Kubernetes prints a rejected value (Go's `%q` for strings, `%v` for
/// numbers and booleans, `%#v` for structs).
pub trait GoValue {
    fn go_repr(&self) -> String;
}

/// A value already rendered in Go syntax (structs, maps, slices).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoRepr(pub String);

impl GoValue for GoRepr {
    fn go_repr(&self) -> String {
        self.0.clone()
    }
}

impl GoValue for str {
    fn go_repr(&self) -> String {
        go_quote(self)
    }
}

impl GoValue for String {
    fn go_repr(&self) -> String {
        go_quote(self)
    }
}

impl<T: GoValue + ?Sized> GoValue for &T {
    fn go_repr(&self) -> String {
        (**self).go_repr()
    }
}

macro_rules! go_value_by_display {
    ($($t:ty),*) => {
        $(impl GoValue for $t {
            fn go_repr(&self) -> String {
                self.to_string()
            }
        })*
    };
}
go_value_by_display!(i32, i64, u16, u32, u64, usize, bool);

/// Go's `strconv.Quote`: double quotes, with `"`, `\` and non-printable characters escaped.
pub fn go_quote(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if go_is_print(c) => out.push(c),
            c if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push('"');
    out
}

/// Approximates Go's `unicode.IsPrint`: graphic characters and the ASCII space.
fn go_is_print(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    let invisible_format = matches!(
        c,
        '\u{ad}' | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{2064}' | '\u{feff}'
    );
    !c.is_control() && !c.is_whitespace() && !invisible_format
}

/// `%#v` of a `map[string]string` (keys sorted, as Go prints maps).
pub fn go_string_map(map: Option<&BTreeMap<String, String>>) -> String {
    match map {
        None => "map[string]string(nil)".to_string(),
        Some(map) => {
            let entries: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}:{}", go_quote(k), go_quote(v)))
                .collect();
            format!("map[string]string{{{}}}", entries.join(", "))
        }
    }
}

/// `%#v` of a `[]string`.
pub fn go_string_slice(values: Option<&[String]>) -> String {
    match values {
        None => "[]string(nil)".to_string(),
        Some(values) => {
            let quoted: Vec<String> = values.iter().map(|v| go_quote(v)).collect();
            format!("[]string{{{}}}", quoted.join(", "))
        }
    }
}

/// `%#v` of a `metav1.LabelSelector`.
pub fn go_label_selector(selector: &LabelSelector) -> String {
    let expressions = match &selector.match_expressions {
        None => "[]v1.LabelSelectorRequirement(nil)".to_string(),
        Some(expressions) => {
            let items: Vec<String> = expressions
                .iter()
                .map(|e| {
                    format!(
                        "v1.LabelSelectorRequirement{{Key:{}, Operator:{}, Values:{}}}",
                        go_quote(&e.key),
                        go_quote(&e.operator),
                        go_string_slice(e.values.as_deref())
                    )
                })
                .collect();
            format!("[]v1.LabelSelectorRequirement{{{}}}", items.join(", "))
        }
    };
    format!(
        "v1.LabelSelector{{MatchLabels:{}, MatchExpressions:{}}}",
        go_string_map(selector.match_labels.as_ref()),
        expressions
    )
}

/// `%#v` of an `intstr.IntOrString`.
pub fn go_int_or_string(value: &IntOrString) -> String {
    match value {
        IntOrString::Int(n) => format!("intstr.IntOrString{{Type:0, IntVal:{n}, StrVal:\"\"}}"),
        IntOrString::String(s) => {
            format!(
                "intstr.IntOrString{{Type:1, IntVal:0, StrVal:{}}}",
                go_quote(s)
            )
        }
    }
}

// ---------------------------------------------------------------------------------------------
// String syntax (k8s.io/apimachinery/pkg/util/validation), each returning its messages

pub const EMPTY_ERROR: &str = "must be non-empty";
pub const DNS1123_LABEL_MAX_LENGTH: usize = 63;
pub const DNS1123_SUBDOMAIN_MAX_LENGTH: usize = 253;
pub const QUALIFIED_NAME_MAX_LENGTH: usize = 63;
pub const LABEL_VALUE_MAX_LENGTH: usize = 63;
/// Total size of all annotations of one object.
pub const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;
pub const NEGATIVE_ERROR: &str = "must be greater than or equal to 0";

const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_LABEL_ERR: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_SUBDOMAIN_ERR: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_NAME_ERR: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const LABEL_VALUE_ERR: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const ENV_VAR_NAME_FMT: &str = "[-._a-zA-Z][-._a-zA-Z0-9]*";
const ENV_VAR_NAME_ERR: &str = "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit";
const CONFIG_MAP_KEY_FMT: &str = "[-._a-zA-Z0-9]+";
const CONFIG_MAP_KEY_ERR: &str =
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.'";
const PERCENT_FMT: &str = "[0-9]+%";
const PERCENT_ERR: &str =
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

fn is_lower_alnum(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit()
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, whole string.
fn matches_dns1123_label(value: &str) -> bool {
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

fn matches_dns1123_subdomain(value: &str) -> bool {
    value.split('.').all(matches_dns1123_label)
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, whole string.
fn matches_qualified_name_part(value: &str) -> bool {
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
    if !matches_qualified_name_part(name) {
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
    if !value.is_empty() && !matches_qualified_name_part(value) {
        errors.push(regex_error(
            LABEL_VALUE_ERR,
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errors
}

/// Names that would change directory when used as a file name.
fn chdir_prefix_errors(value: &str) -> Vec<String> {
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

// ---------------------------------------------------------------------------------------------
// Field validators

fn invalid_for_each(path: &Path, value: &str, messages: Vec<String>) -> Vec<FieldError> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn requirement(key: &str, operator: &str, values: &[&str]) -> LabelSelectorRequirement {
        LabelSelectorRequirement {
            key: key.into(),
            operator: operator.into(),
            values: Some(values.iter().map(|v| v.to_string()).collect()),
        }
    }

    #[test]
    fn paths_render_like_kubernetes() {
        let path = Path::new("spec")
            .child("containers")
            .index(0)
            .child("env")
            .index(1)
            .child("name");
        assert_eq!(path.to_string(), "spec.containers[0].env[1].name");
        assert_eq!(
            Path::default().child("spec").key("foo").to_string(),
            "spec[foo]"
        );
        assert_eq!(
            Path::new("spec").index(2).child("transferEnv").as_str(),
            "spec[2].transferEnv"
        );
    }

    #[test]
    fn display_matches_kubernetes_for_every_kind() {
        let spec = Path::new("spec");
        let cases = [
            (
                FieldError::required(
                    &spec.child("selector"),
                    "no selector defined for SidecarSet",
                ),
                "spec.selector: Required value: no selector defined for SidecarSet",
            ),
            (
                FieldError::required(&spec.child("x"), ""),
                "spec.x: Required value",
            ),
            (
                FieldError::invalid(&spec.child("x"), "abc", "detail"),
                "spec.x: Invalid value: \"abc\": detail",
            ),
            (
                FieldError::invalid(&spec.child("n"), -1i64, NEGATIVE_ERROR),
                "spec.n: Invalid value: -1: must be greater than or equal to 0",
            ),
            (
                FieldError::not_supported(
                    &spec
                        .child("persistentVolumeClaimRetentionPolicy")
                        .child("whenDeleted"),
                    "Keep",
                    &["Retain", "Delete"],
                ),
                "spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: \"Keep\": supported values: \"Retain\", \"Delete\"",
            ),
            (
                FieldError::duplicate(&spec.child("containers").index(0).child("name"), "a"),
                "spec.containers[0].name: Duplicate value: \"a\"",
            ),
            (
                FieldError::forbidden(&spec.child("f"), "not allowed"),
                "spec.f: Forbidden: not allowed",
            ),
            (
                FieldError::too_long(&Path::new("metadata").child("name"), 63),
                "metadata.name: Too long: may not be more than 63 bytes",
            ),
            (
                FieldError::not_found(&spec.child("v"), "vol"),
                "spec.v: Not found: \"vol\"",
            ),
            (
                FieldError::too_many(&spec.child("l"), Some(5), 3),
                "spec.l: Too many: 5: must have at most 3 items",
            ),
            (
                FieldError::internal(&Path::new("x"), "boom"),
                "x: Internal error: boom",
            ),
        ];
        for (error, expected) in cases {
            assert_eq!(error.to_string(), expected);
        }
    }

    #[test]
    fn aggregate_formats_one_many_and_deduplicates() {
        let a = FieldError::required(&Path::new("a"), "x");
        let b = FieldError::required(&Path::new("b"), "y");
        assert_eq!(aggregate(&[]), "");
        assert_eq!(aggregate(std::slice::from_ref(&a)), "a: Required value: x");
        assert_eq!(
            aggregate(&[a.clone(), b.clone(), a.clone()]),
            "[a: Required value: x, b: Required value: y]"
        );
        assert_eq!(aggregate(&[a.clone(), a]), "a: Required value: x");
    }

    #[test]
    fn go_quote_escapes_like_strconv_quote() {
        assert_eq!(go_quote("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(go_quote("tab\there\n"), r#""tab\there\n""#);
        assert_eq!(go_quote("\u{1}"), r#""\x01""#);
        assert_eq!(go_quote("héllo"), "\"héllo\"");
        assert_eq!(go_quote("\u{a0}"), r#""\u00a0""#);
    }

    #[test]
    fn go_struct_renderings() {
        let selector = LabelSelector {
            match_labels: Some(map(&[("a", "b")])),
            match_expressions: Some(vec![requirement("k", "In", &["x", "y"])]),
        };
        assert_eq!(
            go_label_selector(&selector),
            "v1.LabelSelector{MatchLabels:map[string]string{\"a\":\"b\"}, MatchExpressions:[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement{Key:\"k\", Operator:\"In\", Values:[]string{\"x\", \"y\"}}}}"
        );
        assert_eq!(
            go_label_selector(&LabelSelector::default()),
            "v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}"
        );
        assert_eq!(
            go_int_or_string(&IntOrString::String("abc%".into())),
            "intstr.IntOrString{Type:1, IntVal:0, StrVal:\"abc%\"}"
        );
    }

    #[test]
    fn dns_labels_and_subdomains() {
        assert!(dns1123_label_errors("my-name").is_empty());
        assert!(dns1123_label_errors("123-abc").is_empty());
        assert_eq!(dns1123_label_errors("a.b"), vec!["must not contain dots"]);
        let upper = dns1123_label_errors("Bad_Name");
        assert_eq!(upper.len(), 1);
        assert!(
            upper[0].starts_with("a lowercase RFC 1123 label must consist of"),
            "{upper:?}"
        );
        assert!(upper[0].contains("(e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"));
        assert_eq!(
            dns1123_label_errors(&"a".repeat(64)),
            vec![max_len_error(63)]
        );
        assert!(dns1123_label_errors("").len() == 1);
        assert!(dns1123_label_errors("-a").len() == 1);
        assert!(dns1123_subdomain_errors("example.com").is_empty());
        assert_eq!(dns1123_subdomain_errors("example..com").len(), 1);
        assert_eq!(dns1123_subdomain_errors(&"a".repeat(254)).len(), 1);
    }

    #[test]
    fn qualified_names_report_each_part() {
        assert!(qualified_name_errors("example.com/MyName").is_empty());
        assert!(qualified_name_errors("my.name").is_empty());
        assert_eq!(
            qualified_name_errors("/a"),
            vec!["prefix part must be non-empty"]
        );
        let errors = qualified_name_errors("a/b/c");
        assert_eq!(errors.len(), 1);
        assert!(
            errors[0].starts_with("a qualified name must consist of"),
            "{errors:?}"
        );
        let errors = qualified_name_errors("Bad_/x");
        assert!(
            errors[0].starts_with("prefix part a lowercase RFC 1123 subdomain"),
            "{errors:?}"
        );
        assert_eq!(
            qualified_name_errors("a/"),
            vec![
                "name part must be non-empty".to_string(),
                format!(
                    "name part {}",
                    regex_error(
                        QUALIFIED_NAME_ERR,
                        QUALIFIED_NAME_FMT,
                        &["MyName", "my.name", "123-abc"]
                    )
                )
            ]
        );
        assert_eq!(
            qualified_name_errors(&"a".repeat(64)),
            vec![format!("name part {}", max_len_error(63))]
        );
    }

    #[test]
    fn label_values_env_names_keys_ports_percents() {
        assert!(label_value_errors("").is_empty());
        assert!(label_value_errors("app-group").is_empty());
        assert_eq!(label_value_errors("app-risk-").len(), 1);
        assert_eq!(label_value_errors(&"a".repeat(64)).len(), 1);

        assert!(env_var_name_errors("MY_ENV.NAME").is_empty());
        assert!(env_var_name_errors("-x").is_empty());
        assert_eq!(env_var_name_errors("1abc").len(), 1);
        assert_eq!(env_var_name_errors("a=b").len(), 1);
        assert_eq!(env_var_name_errors(".."), vec!["must not be '..'"]);
        assert_eq!(env_var_name_errors("..a"), vec!["must not start with '..'"]);
        assert_eq!(env_var_name_errors("").len(), 1);

        assert!(config_map_key_errors("key.name").is_empty());
        assert_eq!(config_map_key_errors("a/b").len(), 1);

        assert!(port_number_errors(80).is_empty());
        assert_eq!(
            port_number_errors(0),
            vec!["must be between 1 and 65535, inclusive"]
        );
        assert_eq!(port_number_errors(65536).len(), 1);
        assert!(port_name_errors("http").is_empty());
        assert_eq!(
            port_name_errors("123"),
            vec!["must contain at least one letter (a-z)"]
        );
        assert_eq!(
            port_name_errors("a--b"),
            vec!["must not contain consecutive hyphens"]
        );
        assert_eq!(port_name_errors("Http").len(), 1);

        assert!(percent_errors("150%").is_empty());
        assert_eq!(percent_errors("abc%").len(), 1);
        assert_eq!(percent_errors("%").len(), 1);
        assert_eq!(percent_errors("5").len(), 1);
    }

    #[test]
    fn int_or_percent() {
        let path = Path::new("spec").child("updateStrategy").child("partition");
        assert!(validate_positive_int_or_percent(&IntOrString::Int(0), &path).is_empty());
        assert!(
            validate_positive_int_or_percent(&IntOrString::String("150%".into()), &path).is_empty()
        );
        let errors = validate_positive_int_or_percent(&IntOrString::Int(-1), &path);
        assert_eq!(
            errors[0].to_string(),
            "spec.updateStrategy.partition: Invalid value: -1: must be greater than or equal to 0"
        );
        let errors = validate_positive_int_or_percent(&IntOrString::String("abc%".into()), &path);
        assert_eq!(errors.len(), 1);
        assert!(
            errors[0].to_string().contains(
                "a valid percent string must be a numeric string followed by an ending '%'"
            )
        );
    }

    #[test]
    fn object_meta_rules() {
        let path = Path::new("metadata");
        let dns = |v: &str| dns1123_subdomain_errors(v);
        let meta = ObjectMeta {
            name: Some("ok".into()),
            labels: Some(map(&[("app", "web")])),
            annotations: Some(map(&[("Example.com/Key", "v")])),
            ..Default::default()
        };
        assert!(validate_object_meta(&meta, false, dns, &path).is_empty());

        let meta = ObjectMeta::default();
        let errors = validate_object_meta(&meta, false, dns, &path);
        assert_eq!(
            aggregate(&errors),
            "metadata.name: Required value: name or generateName is required"
        );

        let meta = ObjectMeta {
            name: Some("ok".into()),
            namespace: Some("default".into()),
            labels: Some(map(&[("bad key", "bad value!")])),
            annotations: Some(map(&[("a/b/c", &"x".repeat(TOTAL_ANNOTATION_SIZE_LIMIT))])),
            finalizers: Some(vec!["good/finalizer".into(), "bad finalizer".into()]),
            ..Default::default()
        };
        let errors = validate_object_meta(&meta, false, dns, &path);
        let rendered: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(errors.len(), 6, "{rendered:#?}");
        assert!(rendered[0].starts_with("metadata.namespace: Forbidden: not allowed on this type"));
        assert!(
            rendered
                .iter()
                .any(|e| e.starts_with("metadata.labels: Invalid value: \"bad key\""))
        );
        assert!(
            rendered
                .iter()
                .any(|e| e.starts_with("metadata.labels: Invalid value: \"bad value!\""))
        );
        assert!(
            rendered
                .iter()
                .any(|e| e == "metadata.annotations: Too long: may not be more than 262144 bytes")
        );
        assert!(
            rendered
                .iter()
                .any(|e| e.starts_with("metadata.finalizers: Invalid value: \"bad finalizer\""))
        );

        let namespaced = ObjectMeta {
            name: Some("ok".into()),
            ..Default::default()
        };
        let errors = validate_object_meta(&namespaced, true, dns, &path);
        assert_eq!(aggregate(&errors), "metadata.namespace: Required value");
    }

    #[test]
    fn label_selector_validation() {
        let path = Path::new("spec").child("selector");
        let valid = LabelSelector {
            match_labels: Some(map(&[("a", "b")])),
            match_expressions: Some(vec![
                requirement("x", "In", &["1"]),
                requirement("y", "Exists", &[]),
            ]),
        };
        assert!(validate_label_selector(&valid, LabelSelectorOptions::default(), &path).is_empty());
        assert_eq!(label_selector_conversion_error(&valid), None);

        let invalid = LabelSelector {
            match_labels: Some(map(&[("a", "b")])),
            match_expressions: Some(vec![
                requirement("app-name", "NotIn", &["app-group", "app-risk-"]),
                requirement("x", "In", &[]),
                requirement("y", "Exists", &["v"]),
                requirement("z", "Near", &[]),
                requirement("bad key", "Exists", &[]),
            ]),
        };
        let errors = validate_label_selector(&invalid, LabelSelectorOptions::default(), &path);
        let rendered: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(errors.len(), 5, "{rendered:#?}");
        assert!(rendered[0].starts_with("spec.selector.matchExpressions[0].values[1]: Invalid value: \"app-risk-\": a valid label must be"));
        assert_eq!(
            rendered[1],
            "spec.selector.matchExpressions[1].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"
        );
        assert_eq!(
            rendered[2],
            "spec.selector.matchExpressions[2].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
        );
        assert_eq!(
            rendered[3],
            "spec.selector.matchExpressions[3].operator: Invalid value: \"Near\": not a valid selector operator"
        );
        assert!(
            rendered[4]
                .starts_with("spec.selector.matchExpressions[4].key: Invalid value: \"bad key\"")
        );

        let lenient = LabelSelectorOptions {
            allow_invalid_label_value: true,
        };
        assert_eq!(validate_label_selector(&invalid, lenient, &path).len(), 4);

        let conversion = label_selector_conversion_error(&invalid).unwrap_or_default();
        assert!(
            conversion.starts_with(
                "values[1][app-name]: Invalid value: \"app-risk-\": a valid label must be"
            ),
            "{conversion}"
        );
        let unknown = LabelSelector {
            match_expressions: Some(vec![requirement("z", "Near", &[])]),
            ..Default::default()
        };
        assert_eq!(
            label_selector_conversion_error(&unknown).as_deref(),
            Some("\"Near\" is not a valid label selector operator")
        );
        let empty_in = LabelSelector {
            match_expressions: Some(vec![requirement("x", "In", &[])]),
            ..Default::default()
        };
        assert_eq!(
            label_selector_conversion_error(&empty_in).as_deref(),
            Some(
                "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty"
            )
        );
    }
}
