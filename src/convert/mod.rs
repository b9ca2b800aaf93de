//! Conversion between the two served versions of each `apps.kruise.io` kind, as OpenKruise's
//! `*_conversion.go` does it: a pure function per kind and direction over typed objects
//! ([`sidecarset`], …), and [`convert`], which applies them to an object as the apiserver sends
//! it (the `/convert` webhook and the admission webhooks use it).
//!
//! Fields the types do not know survive a conversion, what it does not change keeps its exact
//! JSON ([`unknown`]), and the object's metadata is the apiserver's own except for labels and
//! annotations (which conversions may move fields to and from). The lossy cases are listed in
//! `docs/conversion.md`.

pub mod cloneset;
pub mod daemonset;
pub mod sidecarset;
pub mod statefulset;
mod unknown;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::api::{self, keys};

/// A served version of a kind, and its conversion to and from the type the project works in
/// (the storage version, except for CloneSet: see the table in `docs/conversion.md`). The working
/// type is served too, and converts to itself.
pub trait Served: Serialize + DeserializeOwned {
    /// The type the project reads and decides on.
    type Working;
    fn into_working(self) -> Self::Working;
    fn from_working(working: Self::Working) -> Self;
}

/// The working type of every kind is one of its served versions.
macro_rules! served_as_itself {
    ($($working:ty),*) => {$(
        impl Served for $working {
            type Working = $working;
            fn into_working(self) -> Self {
                self
            }
            fn from_working(working: Self) -> Self {
                working
            }
        }
    )*};
}
served_as_itself!(
    api::SidecarSet,
    api::daemonset::DaemonSet,
    api::statefulset::StatefulSet,
    api::cloneset::CloneSet
);

/// `object` converted to `desired` (an apiVersion of its group). An object already in that
/// version comes back unchanged.
pub fn convert(object: &Value, desired: &str) -> Result<Value, ConvertError> {
    convert_owned(object.clone(), desired)
}

/// [`convert`] of an object the caller gives up: what the conversion does not touch is moved,
/// not copied.
pub fn convert_owned(object: Value, desired: &str) -> Result<Value, ConvertError> {
    let text = |key: &str| object.get(key).and_then(Value::as_str).unwrap_or("");
    let (api_version, kind) = (text("apiVersion"), text("kind"));
    if api_version == desired {
        return Ok(object);
    }
    let unsupported = || ConvertError::Unsupported {
        kind: kind.to_string(),
        from: api_version.to_string(),
        to: desired.to_string(),
    };
    let from = version_of(api_version).ok_or_else(unsupported)?;
    let to = version_of(desired).ok_or_else(unsupported)?;
    // The parts both versions of a kind hold alike, which no conversion reads.
    const SIDECARS: &[&str] = &["containers", "initContainers", "volumes"];
    const PODS: &[&str] = &["template", "volumeClaimTemplates"];
    match (kind, from, to) {
        ("SidecarSet", ALPHA, BETA) => typed(object, SIDECARS, sidecarset::to_v1beta1),
        ("SidecarSet", BETA, ALPHA) => typed(object, SIDECARS, sidecarset::to_v1alpha1),
        ("DaemonSet", ALPHA, BETA) => typed(object, PODS, daemonset::to_v1beta1),
        ("DaemonSet", BETA, ALPHA) => typed(object, PODS, daemonset::to_v1alpha1),
        ("StatefulSet", ALPHA, BETA) => typed(object, PODS, statefulset::to_v1beta1),
        ("StatefulSet", BETA, ALPHA) => typed(object, PODS, statefulset::to_v1alpha1),
        ("CloneSet", ALPHA, BETA) => typed(object, PODS, cloneset::to_v1beta1),
        ("CloneSet", BETA, ALPHA) => typed(object, PODS, cloneset::to_v1alpha1),
        _ => Err(unsupported()),
    }
}

const ALPHA: &str = "v1alpha1";
const BETA: &str = "v1beta1";

/// The version of an `apps.kruise.io` apiVersion this project serves.
fn version_of(api_version: &str) -> Option<&'static str> {
    let (group, version) = api_version.split_once('/')?;
    if group != keys::GROUP {
        return None;
    }
    [ALPHA, BETA].into_iter().find(|v| *v == version)
}

/// Decodes `raw` as `A`, converts it with `f`, and gives the result back as JSON that is `raw`'s
/// own wherever the conversion changed nothing (unknown fields included), with `raw`'s metadata
/// but for labels and annotations. The spec fields `shared` (a pod template, sidecar containers:
/// most of an object, the same in both versions) are taken out first and put back as they were,
/// so they are neither decoded nor re-encoded nor compared.
fn typed<A: DeserializeOwned + Serialize, B: Serialize>(
    mut raw: Value,
    shared: &[&str],
    f: fn(A) -> B,
) -> Result<Value, ConvertError> {
    let spec = raw.get_mut("spec").and_then(Value::as_object_mut);
    let kept: Vec<(String, Value)> = match spec {
        Some(spec) => shared
            .iter()
            .filter_map(|key| spec.remove_entry(*key))
            .collect(),
        None => Vec::new(),
    };
    let metadata = unknown::take_metadata(&mut raw);
    let object: A = decode(&raw)?;
    let known = encode(&object)?;
    let mut converted = encode(&f(object))?;
    unknown::restore(&raw, &known, &mut converted);
    if let Some(spec) = converted.get_mut("spec").and_then(Value::as_object_mut) {
        spec.extend(kept);
    }
    unknown::put_metadata(metadata, &mut converted);
    Ok(converted)
}

/// Decodes `raw`, naming the field that does not fit.
pub fn decode<T: DeserializeOwned>(raw: &Value) -> Result<T, ConvertError> {
    if let Ok(object) = T::deserialize(raw) {
        return Ok(object);
    }
    serde_path_to_error::deserialize(raw).map_err(|e| ConvertError::Invalid {
        field: e.path().to_string(),
        message: e.inner().to_string(),
    })
}

fn encode<T: Serialize>(object: &T) -> Result<Value, ConvertError> {
    serde_json::to_value(object).map_err(|e| ConvertError::Encoding(e.to_string()))
}

/// Why an object could not be converted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConvertError {
    #[error(
        "cannot convert {kind} from {from:?} to {to:?}: not a kind and version pair this server converts"
    )]
    Unsupported {
        kind: String,
        from: String,
        to: String,
    },
    #[error("{field}: Invalid value: {message}")]
    Invalid { field: String, message: String },
    #[error("re-encoding the converted object: {0}")]
    Encoding(String),
}

#[cfg(test)]
mod tests;
