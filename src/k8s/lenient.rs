//! Objects decoded one by one as a list or watch answer is read, without failing the answer.
//!
//! The apiserver stores what a CRD schema lets through, which is more than a Rust type accepts
//! (an `int32` field holding `99999999999`). Decoding a list answer straight into `Vec<K>` fails
//! the whole list on one such object; decoding it into untyped objects first holds every object
//! of the answer as a JSON tree (at 50,000 SidecarSets, 375 MB before the first one is handed on,
//! against 200 MB typed). [`Lenient<K>`] decodes each object of the answer into `K` as it is read,
//! and keeps, for one that `K` refuses, its metadata and where and why.
//!
//! As each object is read it also loses what no consumer in this process reads and what makes up
//! most of a stored object's size: `metadata.managedFields` and the
//! `kubectl.kubernetes.io/last-applied-configuration` annotation.

use kube::Resource;
use kube::api::ObjectMeta;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use crate::api::keys;

/// An object of kind `K` as read from the apiserver: decoded, or refused by `K`. Both boxed: a
/// list answer is a sequence of these, whose buffer then holds a pointer for each object rather
/// than the object (a `SidecarSet` is 984 bytes before anything it points to), and frees each
/// object's memory as it is handed on.
#[derive(Clone, Debug)]
pub enum Lenient<K> {
    Decoded(Box<K>),
    Refused(Box<Refusal>),
}

/// An object its Rust type refused: its metadata, and where and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Refusal {
    pub metadata: ObjectMeta,
    /// Where in the object the decode failed (`spec.revisionHistoryLimit`; `.` for the root).
    pub path: String,
    /// What the decoder said of the value at `path`.
    pub message: String,
}

impl Refusal {
    /// `path: message`, or the message alone when the object as a whole was refused.
    pub fn describe(&self) -> String {
        if self.path == "." {
            self.message.clone()
        } else {
            format!("{}: {}", self.path, self.message)
        }
    }
}

impl<K: Resource + DeserializeOwned> Lenient<K> {
    /// Decodes one object's JSON. `Err` only when not even its metadata can be read: the
    /// answer it belongs to is then malformed as a whole.
    pub fn from_json(json: &str) -> Result<Self, serde_json::Error> {
        if let Ok(mut object) = serde_json::from_str::<K>(json) {
            drop_unread(object.meta_mut());
            return Ok(Lenient::Decoded(Box::new(object)));
        }
        // Refused: decoded again through a JSON tree, which names the field that refused (the
        // direct decode's message carries a line and column instead).
        let value: serde_json::Value = serde_json::from_str(json)?;
        let (path, message) = match serde_path_to_error::deserialize::<_, K>(&value) {
            Err(error) => (error.path().to_string(), error.inner().to_string()),
            Ok(_) => (".".to_string(), "not a valid object".to_string()),
        };
        #[derive(Deserialize)]
        struct MetadataOnly {
            #[serde(default)]
            metadata: ObjectMeta,
        }
        let mut metadata = MetadataOnly::deserialize(value)?.metadata;
        drop_unread(&mut metadata);
        Ok(Lenient::Refused(Box::new(Refusal {
            metadata,
            path,
            message,
        })))
    }

    /// The decoded object, or the refusal.
    pub fn into_result(self) -> Result<K, Box<Refusal>> {
        match self {
            Lenient::Decoded(object) => Ok(*object),
            Lenient::Refused(refusal) => Err(refusal),
        }
    }
}

/// Drops what no consumer in this process reads (see the module documentation).
fn drop_unread(metadata: &mut ObjectMeta) {
    metadata.managed_fields = None;
    if let Some(annotations) = &mut metadata.annotations {
        annotations.remove(keys::LAST_APPLIED_CONFIGURATION);
        if annotations.is_empty() {
            metadata.annotations = None;
        }
    }
}

impl<'de, K: Resource + DeserializeOwned> Deserialize<'de> for Lenient<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // The object's text alone, then decoded on its own: a refusal stays this object's.
        let raw = Box::<RawValue>::deserialize(deserializer)?;
        Lenient::from_json(raw.get()).map_err(serde::de::Error::custom)
    }
}

impl<K: Resource> Resource for Lenient<K> {
    super::kind_of!(K);

    fn meta(&self) -> &ObjectMeta {
        match self {
            Lenient::Decoded(object) => object.meta(),
            Lenient::Refused(refusal) => &refusal.metadata,
        }
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        match self {
            Lenient::Decoded(object) => object.meta_mut(),
            Lenient::Refused(refusal) => &mut refusal.metadata,
        }
    }
}

#[cfg(test)]
mod tests;
