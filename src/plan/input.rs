//! What `plan` reads: the changed object, its current state, its pods and revisions, as YAML or
//! JSON documents (files, standard input, or the apiserver's answers). Pure.

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::Value;

use crate::api::SidecarSet;
use crate::api::cloneset::CloneSet;
use crate::api::daemonset::{self, DaemonSet};
use crate::api::statefulset::StatefulSet;
use crate::defaults::sidecarset::default_and_hash;
use crate::defaults::workload::{
    default_cloneset, default_daemonset, default_daemonset_v1alpha1, default_statefulset,
};

/// An object whose rollout `plan` simulates.
#[derive(Debug, Clone, PartialEq)]
pub enum Planned {
    CloneSet(Box<CloneSet>),
    SidecarSet(Box<SidecarSet>),
    StatefulSet(Box<StatefulSet>),
    DaemonSet(Box<DaemonSet>),
}

impl Planned {
    pub fn kind(&self) -> &'static str {
        match self {
            Planned::CloneSet(_) => "CloneSet",
            Planned::SidecarSet(_) => "SidecarSet",
            Planned::StatefulSet(_) => "StatefulSet",
            Planned::DaemonSet(_) => "DaemonSet",
        }
    }

    pub fn metadata(&self) -> &ObjectMeta {
        match self {
            Planned::CloneSet(set) => &set.metadata,
            Planned::SidecarSet(set) => &set.metadata,
            Planned::StatefulSet(set) => &set.metadata,
            Planned::DaemonSet(set) => &set.metadata,
        }
    }

    pub fn name(&self) -> &str {
        self.metadata().name.as_deref().unwrap_or("")
    }

    /// The object with the defaults the project's webhooks give it when it is written.
    pub fn admitted(mut self) -> Planned {
        match &mut self {
            Planned::CloneSet(set) => default_cloneset(set),
            Planned::SidecarSet(set) => default_and_hash(set),
            Planned::StatefulSet(set) => default_statefulset(set),
            Planned::DaemonSet(set) => default_daemonset(set),
        }
        self
    }
}

const EXPECTED: &str = "expected a CloneSet, an Advanced StatefulSet, an Advanced DaemonSet or a SidecarSet (apps.kruise.io/v1alpha1 or v1beta1)";

/// Every non-empty document of `text`, a `List`'s items each on its own.
pub fn documents(text: &str, source: &str) -> Result<Vec<Value>, String> {
    let documents: Vec<Value> = crate::yaml::from_multiple(text)
        .map_err(|e| format!("{source}: neither JSON nor YAML: {e}"))?;
    let mut out = Vec::new();
    for document in documents.into_iter().filter(|d| !d.is_null()) {
        match document.get("items").and_then(Value::as_array) {
            Some(items) if kind_of(&document).ends_with("List") => out.extend(items.clone()),
            _ => out.push(document),
        }
    }
    Ok(out)
}

fn kind_of(object: &Value) -> &str {
    object.get("kind").and_then(Value::as_str).unwrap_or("")
}

/// The one object of `text`, as written ([`Planned::admitted`] gives it the webhooks' defaults).
pub fn object(text: &str, source: &str) -> Result<Planned, String> {
    let mut documents = documents(text, source)?;
    if documents.len() != 1 {
        return Err(format!(
            "{source}: holds {} objects, not one: {EXPECTED}",
            documents.len()
        ));
    }
    stored(documents.remove(0), source)
}

/// The object of `text` of `kind` named `name`, as written: `text` may hold others too (a file of
/// several workloads).
pub fn object_named(text: &str, source: &str, kind: &str, name: &str) -> Result<Planned, String> {
    let same = |d: &Value| {
        kind_of(d) == kind && d.pointer("/metadata/name").and_then(Value::as_str) == Some(name)
    };
    let mut documents = documents(text, source)?;
    match documents.iter().position(same) {
        Some(index) => stored(documents.swap_remove(index), source),
        None => Err(format!("{source}: holds no {kind} named {name:?}")),
    }
}

/// The object `value` holds, with the defaults the apiserver's webhooks give it.
pub fn planned(value: Value, source: &str) -> Result<Planned, String> {
    Ok(stored(value, source)?.admitted())
}

/// The object `value` holds, as written or as the apiserver stored it (admitted already: taken as
/// the controller reads it, since a default filled in here and not in the cluster would change a
/// CloneSet's revision hash).
pub fn stored(value: Value, source: &str) -> Result<Planned, String> {
    let text = |key: &str| value.get(key).and_then(Value::as_str).unwrap_or("");
    let (api_version, kind) = (text("apiVersion").to_string(), text("kind").to_string());
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    let invalid = |e: crate::convert::ConvertError| format!("{source}: {kind}: {e}");
    match (group, kind.as_str()) {
        ("apps.kruise.io", "CloneSet") => {
            let value =
                crate::convert::convert_owned(value, "apps.kruise.io/v1alpha1").map_err(invalid)?;
            let set: CloneSet = crate::convert::decode(&value).map_err(invalid)?;
            named(&set.metadata, source)?;
            Ok(Planned::CloneSet(Box::new(set)))
        }
        ("apps.kruise.io", "SidecarSet") => {
            let value =
                crate::convert::convert_owned(value, "apps.kruise.io/v1beta1").map_err(invalid)?;
            let set: SidecarSet = crate::convert::decode(&value).map_err(invalid)?;
            named(&set.metadata, source)?;
            Ok(Planned::SidecarSet(Box::new(set)))
        }
        ("apps.kruise.io", "StatefulSet") => {
            let value =
                crate::convert::convert_owned(value, "apps.kruise.io/v1beta1").map_err(invalid)?;
            let set: StatefulSet = crate::convert::decode(&value).map_err(invalid)?;
            named(&set.metadata, source)?;
            Ok(Planned::StatefulSet(Box::new(set)))
        }
        ("apps.kruise.io", "DaemonSet") => {
            let value = if api_version == "apps.kruise.io/v1alpha1" {
                // The v1alpha1 webhook's own default (a `Surging` update) comes before conversion.
                let mut alpha: daemonset::v1alpha1::DaemonSet =
                    crate::convert::decode(&value).map_err(invalid)?;
                default_daemonset_v1alpha1(&mut alpha);
                serde_json::to_value(alpha).map_err(|e| format!("{source}: {kind}: {e}"))?
            } else {
                value
            };
            let value =
                crate::convert::convert_owned(value, "apps.kruise.io/v1beta1").map_err(invalid)?;
            let set: DaemonSet = crate::convert::decode(&value).map_err(invalid)?;
            named(&set.metadata, source)?;
            Ok(Planned::DaemonSet(Box::new(set)))
        }
        _ => Err(format!(
            "{source}: apiVersion {api_version:?} kind {kind:?}: {EXPECTED}"
        )),
    }
}

fn named(metadata: &ObjectMeta, source: &str) -> Result<(), String> {
    match metadata.name.as_deref() {
        Some(name) if !name.is_empty() => Ok(()),
        _ => Err(format!("{source}: metadata.name: Required value")),
    }
}

/// The pods and ControllerRevisions among `documents`; anything else is refused by name.
pub fn pods_and_revisions(
    documents: Vec<Value>,
    source: &str,
) -> Result<(Vec<Pod>, Vec<ControllerRevision>), String> {
    let mut pods = Vec::new();
    let mut revisions = Vec::new();
    for (index, document) in documents.into_iter().enumerate() {
        let at = format!("{source} (object {})", index + 1);
        match kind_of(&document) {
            "Pod" => pods.push(decode(document, &at)?),
            "ControllerRevision" => revisions.push(decode(document, &at)?),
            other => {
                return Err(format!(
                    "{at}: kind {other:?}: expected Pods and ControllerRevisions"
                ));
            }
        }
    }
    Ok((pods, revisions))
}

/// The Nodes among `documents`; anything else is refused by name.
pub fn nodes(
    documents: Vec<Value>,
    source: &str,
) -> Result<Vec<k8s_openapi::api::core::v1::Node>, String> {
    let mut nodes = Vec::new();
    for (index, document) in documents.into_iter().enumerate() {
        let at = format!("{source} (object {})", index + 1);
        match kind_of(&document) {
            "Node" => nodes.push(decode(document, &at)?),
            other => return Err(format!("{at}: kind {other:?}: expected Nodes")),
        }
    }
    Ok(nodes)
}

fn decode<T: serde::de::DeserializeOwned>(value: Value, at: &str) -> Result<T, String> {
    crate::source::dir::decode(value).map_err(|e| format!("{at}: {e}"))
}
