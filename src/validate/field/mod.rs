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

use crate::k8s::names::is_qualified_name;

mod go_repr;
mod selectors;
mod syntax;
mod validators;
pub use go_repr::*;
pub use selectors::*;
pub use syntax::*;
pub use validators::*;

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

#[cfg(test)]
mod tests;
