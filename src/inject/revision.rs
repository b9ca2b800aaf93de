//! SidecarSet revisions as OpenKruise stores and reads them: the data of a ControllerRevision, its
//! name, the SidecarSet a revision restores, and which of the two (the current set or the
//! revision `injectionStrategy.revision` names) a new pod gets.
//!
//! The data is OpenKruise's byte for byte (`sidecarcontrol.getPatch`): the set encoded as Go
//! encodes it, reduced to `{"spec":{"$patch":"replace","containers","imagePullSecrets",
//! "initContainers","patchPodMetadata","volumes"}}`, an absent or empty list written `null`, and
//! marshalled again from Go maps, so keys are sorted at every level. Hashed and named as every
//! Kubernetes history is ([`crate::k8s::history`]), a set's revision here has the name OpenKruise
//! gives it, and revisions OpenKruise wrote are found and reused.

use std::collections::HashMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Volume;
use serde_json::{Map, Value};

use super::hash::{sidecarset_hash, sidecarset_hash_without_image};
use crate::api::{SidecarSet, SidecarSetInjectRevision, SidecarSetSpec, keys};
use crate::k8s::selector::{self, Labels, SelectorError};
use crate::k8s::{gojson, history, quantity};

/// The bytes OpenKruise stores as the data of `set`'s revision (and hashes into its name).
pub fn revision_data(set: &SidecarSet) -> String {
    let spec = &set.spec;
    let go = |json: String| serde_json::from_str::<Value>(&json).unwrap_or(Value::Null);
    let mut recorded = Map::new();
    recorded.insert("$patch".into(), Value::String("replace".into()));
    let containers = |list: &Option<Vec<_>>| {
        go_list(list.as_deref(), |c| go(gojson::encode_sidecar_container(c)))
    };
    recorded.insert("containers".into(), containers(&spec.containers));
    recorded.insert("initContainers".into(), containers(&spec.init_containers));
    recorded.insert(
        "imagePullSecrets".into(),
        go_list(spec.image_pull_secrets.as_deref(), |secret| {
            without_empty(serde_json::to_value(secret).unwrap_or(Value::Null))
        }),
    );
    recorded.insert(
        "patchPodMetadata".into(),
        go_list(spec.patch_pod_metadata.as_deref(), |patch| {
            without_empty(serde_json::to_value(patch).unwrap_or(Value::Null))
        }),
    );
    recorded.insert(
        "volumes".into(),
        go_list(spec.volumes.as_deref(), go_volume),
    );
    let mut data = Map::new();
    data.insert("spec".into(), Value::Object(recorded));
    gojson::encode_value(&Value::Object(data))
}

/// A Go slice under `omitempty`, read back through a map: `null` when nil or empty.
fn go_list<T>(list: Option<&[T]>, item: impl Fn(&T) -> Value) -> Value {
    match list {
        Some(items) if !items.is_empty() => Value::Array(items.iter().map(item).collect()),
        _ => Value::Null,
    }
}

/// An object of `omitempty` fields: the empty ones left out, as Go does.
fn without_empty(value: Value) -> Value {
    let Value::Object(map) = value else {
        return value;
    };
    let empty = |v: &Value| match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    };
    Value::Object(map.into_iter().filter(|(_, v)| !empty(v)).collect())
}

/// A volume as Go encodes it, for the sources a SidecarSet uses: what serde writes, quantities in
/// Go's canonical form, and the Go zero values written where serde leaves a field out (a
/// `resourceFieldRef` without `divisor` has `"0"`; a projected volume without sources `null`).
/// Other Go-only zero values of rarer sources are not reproduced: such a revision is hashed
/// differently from OpenKruise's and recorded as a new one.
fn go_volume(volume: &Volume) -> Value {
    let mut value = serde_json::to_value(volume).unwrap_or(Value::Null);
    if let Some(limit) = value.pointer_mut("/emptyDir/sizeLimit") {
        canonical_quantity(limit);
    }
    for items in ["/downwardAPI/items"] {
        if let Some(Value::Array(items)) = value.pointer_mut(items) {
            items.iter_mut().for_each(go_downward_item);
        }
    }
    if let Some(Value::Object(projected)) = value.get_mut("projected") {
        let sources = projected.entry("sources").or_insert(Value::Null);
        for source in sources.as_array_mut().into_iter().flatten() {
            if let Some(Value::Array(items)) = source.pointer_mut("/downwardAPI/items") {
                items.iter_mut().for_each(go_downward_item);
            }
        }
    }
    value
}

fn go_downward_item(item: &mut Value) {
    if let Some(Value::Object(selector)) = item.get_mut("resourceFieldRef") {
        let divisor = selector
            .entry("divisor")
            .or_insert_with(|| Value::String("0".into()));
        canonical_quantity(divisor);
    }
}

fn canonical_quantity(value: &mut Value) {
    if let Value::String(text) = value
        && let Ok(canonical) = quantity::canonicalize(text)
    {
        *text = canonical;
    }
}

/// The name of `set`'s revision under `collision_count`: `<set>-<hash of its data>`.
pub fn revision_name(set: &SidecarSet, collision_count: i32) -> String {
    let hash = history::revision_hash(&revision_data(set), collision_count);
    history::revision_name(set.name(), &hash)
}

/// The revision a pod injected now records in its `kruise.io/sidecarset-hash` entry: the
/// status's `latestRevision` (empty before the controller registered any, as OpenKruise
/// writes it) while it is current; after a change of the set the controller has not seen yet
/// (`observedGeneration` behind), the revision it is about to register, whose name follows from
/// the set alone, not the stale one the pod does not run.
pub fn stamped_revision(set: &SidecarSet) -> String {
    let Some(status) = set.status.as_ref() else {
        return String::new();
    };
    let latest = status.latest_revision.as_deref().unwrap_or("");
    if latest.is_empty() || status.observed_generation >= set.metadata.generation {
        return latest.to_string();
    }
    revision_name(set, status.collision_count.unwrap_or(0))
}

/// A ControllerRevision of a SidecarSet, as much as restoring it needs.
#[derive(Debug, Clone, PartialEq)]
pub struct RevisionContent {
    pub name: String,
    /// The revision's data, as JSON text.
    pub data: String,
    /// Its `kruise.io/sidecarset-hash` and `-without-image` annotations, if set.
    pub hash: Option<String>,
    pub hash_without_image: Option<String>,
}

/// The SidecarSet `revision` restores: the revision's data applied to `set` as OpenKruise's
/// strategic merge applies it (`$patch: replace` makes the recorded fields the whole spec; data
/// without the directive replaces only the fields it names), the metadata kept, the hash
/// annotations the revision's (computed from the restored spec where it has none), and a status
/// whose `latestRevision` is the revision, observed at the set's generation.
pub fn restore(set: &SidecarSet, revision: &RevisionContent) -> Result<SidecarSet, String> {
    let data: Value = serde_json::from_str(&revision.data)
        .map_err(|e| format!("ControllerRevision {}: data: {e}", revision.name))?;
    let Some(Value::Object(recorded)) = data.get("spec") else {
        return Err(format!(
            "ControllerRevision {}: data has no spec object",
            revision.name
        ));
    };
    let replace = recorded.get("$patch").and_then(Value::as_str) == Some("replace");
    let mut spec = if replace {
        Map::new()
    } else {
        match serde_json::to_value(&set.spec) {
            Ok(Value::Object(spec)) => spec,
            _ => Map::new(),
        }
    };
    for (key, value) in recorded.iter().filter(|(key, _)| *key != "$patch") {
        if value.is_null() {
            spec.remove(key);
        } else {
            spec.insert(key.clone(), value.clone());
        }
    }
    let spec: SidecarSetSpec = serde_json::from_value(Value::Object(spec))
        .map_err(|e| format!("ControllerRevision {}: {e}", revision.name))?;
    let mut restored = SidecarSet {
        metadata: set.metadata.clone(),
        spec,
        status: set.status.clone(),
    };
    let hash = non_empty(&revision.hash).unwrap_or_else(|| sidecarset_hash(&restored.spec));
    let without_image = non_empty(&revision.hash_without_image)
        .unwrap_or_else(|| sidecarset_hash_without_image(&restored.spec));
    let annotations = restored.metadata.annotations.get_or_insert_default();
    annotations.insert(keys::SIDECARSET_HASH.into(), hash);
    annotations.insert(keys::SIDECARSET_HASH_WITHOUT_IMAGE.into(), without_image);
    let status = restored.status.get_or_insert_default();
    status.latest_revision = Some(revision.name.clone());
    status.observed_generation = restored.metadata.generation;
    Ok(restored)
}

fn non_empty(value: &Option<String>) -> Option<String> {
    value.clone().filter(|v| !v.is_empty())
}

/// What a SidecarSet that injects a historical revision resolved to, as the catalogue holds it.
#[derive(Debug, Clone)]
pub enum HistoryRevision {
    /// The SidecarSet the revision restores.
    Restored(Arc<SidecarSet>),
    /// The revision cannot be found or restored: the pods the set matches are refused with this.
    Unresolved(String),
    /// The revision is held but its content is still being read: the pods the set matches are
    /// refused with this until it arrives (moments).
    Pending(String),
}

/// The resolved history of the catalogue's SidecarSets that name a revision, by set name.
pub type InjectionRevisions = HashMap<String, HistoryRevision>;

/// The revision `set` asks new pods to get, if it names one.
pub fn requested(set: &SidecarSet) -> Option<&SidecarSetInjectRevision> {
    let revision = set.spec.injection_strategy.as_ref()?.revision.as_ref()?;
    (revision.revision_name.is_some() || revision.custom_version.is_some()).then_some(revision)
}

/// Which SidecarSet a new pod gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    /// The set as it is now.
    Latest,
    /// The revision `injectionStrategy.revision` names.
    History,
}

/// Why a pod cannot be given a revision.
#[derive(Debug, thiserror::Error)]
pub enum PickError {
    #[error(transparent)]
    Selector(#[from] SelectorError),
    /// OpenKruise's words for a partition that is not `<number>%`.
    #[error("{0}")]
    Partition(String),
}

/// OpenKruise's choice at pod creation for a set that names a revision: `updateStrategy.paused`
/// keeps new pods on the revision; policy `Partial` gives it to pods `updateStrategy.selector`
/// does not select, and to the others with the probability `updateStrategy.partition` states as a
/// percentage (`draw()` is uniform in [0, 1); an integer partition gives the latest); any other
/// policy (`Always`) gives every pod the revision.
pub fn pick(
    set: &SidecarSet,
    revision: &SidecarSetInjectRevision,
    pod_labels: Option<&Labels>,
    draw: &dyn Fn() -> f64,
) -> Result<Pick, PickError> {
    let strategy = set.spec.update_strategy.as_ref();
    if strategy.and_then(|s| s.paused).unwrap_or(false) {
        return Ok(Pick::History);
    }
    if revision.policy.as_deref() != Some(keys::INJECT_REVISION_PARTIAL) {
        return Ok(Pick::History);
    }
    if let Some(update_selector) = strategy.and_then(|s| s.selector.as_ref())
        && !selector::matches(update_selector, pod_labels, "spec.updateStrategy.selector")?
    {
        return Ok(Pick::History);
    }
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
    match strategy.and_then(|s| s.partition.as_ref()) {
        None | Some(IntOrString::Int(_)) => Ok(Pick::Latest),
        Some(IntOrString::String(text)) => {
            let probability = percentage(text).map_err(PickError::Partition)?;
            Ok(if draw() <= probability {
                Pick::History
            } else {
                Pick::Latest
            })
        }
    }
}

/// OpenKruise's `ParsePercentageAsFloat64`: `"30%"` is 0.3.
fn percentage(text: &str) -> Result<f64, String> {
    let Some(number) = text.strip_suffix('%') else {
        return Err("invalid type: string is not a percentage".into());
    };
    number
        .parse::<f64>()
        .map(|p| p / 100.0)
        .map_err(|_| format!("strconv.ParseFloat: parsing {number:?}: invalid syntax"))
}

#[cfg(test)]
mod tests;
