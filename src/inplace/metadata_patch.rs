//! Template metadata changes travel as a Kubernetes strategic merge patch of `{"metadata": …}`,
//! the form OpenKruise stores (base64) in the grace annotation. This module makes that patch from
//! two `ObjectMeta`s and applies one to a pod.
//!
//! Only the `ObjectMeta` rules matter here: maps (labels, annotations) merge key by key with
//! `null` deleting; `finalizers` is a merge list of strings (`$deleteFromPrimitiveList`,
//! `$setElementOrder`); every other field is replaced whole. `ownerReferences` (a merge list keyed by
//! `uid` in Kubernetes) is replaced whole too: pod templates do not carry owner references.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::{Map, Value};

const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList/";
const SET_ELEMENT_ORDER: &str = "$setElementOrder/";
/// `ObjectMeta` fields that are maps of strings.
const MAP_FIELDS: [&str; 2] = ["labels", "annotations"];
/// `ObjectMeta` fields that are merge lists of strings.
const PRIMITIVE_MERGE_LISTS: [&str; 1] = ["finalizers"];

#[derive(Debug, thiserror::Error)]
pub enum MetadataPatchError {
    #[error("metadata patch is not a JSON object of the form {{\"metadata\":{{…}}}}")]
    NotAnObject,
    #[error("metadata patch: {0}")]
    Json(#[from] serde_json::Error),
}

/// The two-way strategic merge patch turning `old` into `new`, as `{"metadata":{…}}` JSON bytes
/// (`{}` when they are equal, as Kubernetes writes it).
pub fn create_metadata_patch(
    old: &ObjectMeta,
    new: &ObjectMeta,
) -> Result<Vec<u8>, MetadataPatchError> {
    let old = as_object(serde_json::to_value(old)?);
    let new = as_object(serde_json::to_value(new)?);
    let metadata = diff_meta(&old, &new);
    let mut patch = Map::new();
    if !metadata.is_empty() {
        patch.insert("metadata".to_string(), Value::Object(metadata));
    }
    Ok(serde_json::to_vec(&Value::Object(patch))?)
}

/// Applies a `{"metadata":{…}}` strategic merge patch to the pod's metadata.
pub fn apply_metadata_patch(pod: &mut Pod, patch: &[u8]) -> Result<(), MetadataPatchError> {
    let patch: Value = serde_json::from_slice(patch)?;
    let Value::Object(mut patch) = patch else {
        return Err(MetadataPatchError::NotAnObject);
    };
    let Some(metadata_patch) = patch.remove("metadata") else {
        return Ok(());
    };
    let Value::Object(metadata_patch) = metadata_patch else {
        return Err(MetadataPatchError::NotAnObject);
    };
    let mut metadata = as_object(serde_json::to_value(&pod.metadata)?);
    merge_meta(&mut metadata, metadata_patch);
    pod.metadata = serde_json::from_value(Value::Object(metadata))?;
    Ok(())
}

fn as_object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

fn diff_meta(old: &Map<String, Value>, new: &Map<String, Value>) -> Map<String, Value> {
    // Sorted, as Go's JSON encoder writes map keys.
    let mut patch = BTreeMap::new();
    for (key, new_value) in new {
        let Some(old_value) = old.get(key) else {
            patch.insert(key.clone(), new_value.clone());
            continue;
        };
        if old_value == new_value {
            continue;
        }
        match (old_value, new_value) {
            (Value::Object(o), Value::Object(n)) if MAP_FIELDS.contains(&key.as_str()) => {
                let inner = diff_string_map(o, n);
                if !inner.is_empty() {
                    patch.insert(key.clone(), Value::Object(inner));
                }
            }
            (Value::Array(o), Value::Array(n)) if PRIMITIVE_MERGE_LISTS.contains(&key.as_str()) => {
                let (added, deleted) = diff_primitive_lists(o, n);
                if !added.is_empty() {
                    patch.insert(key.clone(), Value::Array(added.clone()));
                }
                if !deleted.is_empty() {
                    patch.insert(
                        format!("{DELETE_FROM_PRIMITIVE_LIST}{key}"),
                        Value::Array(deleted.clone()),
                    );
                }
                if !added.is_empty() || !deleted.is_empty() {
                    patch.insert(format!("{SET_ELEMENT_ORDER}{key}"), new_value.clone());
                }
            }
            _ => {
                patch.insert(key.clone(), new_value.clone());
            }
        }
    }
    for key in old.keys() {
        if !new.contains_key(key) {
            patch.insert(key.clone(), Value::Null);
        }
    }
    patch.into_iter().collect()
}

fn diff_string_map(old: &Map<String, Value>, new: &Map<String, Value>) -> Map<String, Value> {
    let mut patch = BTreeMap::new();
    for (key, value) in new {
        if old.get(key) != Some(value) {
            patch.insert(key.clone(), value.clone());
        }
    }
    for key in old.keys() {
        if !new.contains_key(key) {
            patch.insert(key.clone(), Value::Null);
        }
    }
    patch.into_iter().collect()
}

/// Added and deleted values, each sorted and without repeats (Kubernetes sorts scalar lists
/// before comparing them).
fn diff_primitive_lists(old: &[Value], new: &[Value]) -> (Vec<Value>, Vec<Value>) {
    let sorted = |list: &[Value]| -> Vec<Value> {
        let mut out: Vec<Value> = list.to_vec();
        out.sort_by_key(|v| v.to_string());
        out.dedup();
        out
    };
    let old = sorted(old);
    let new = sorted(new);
    let added = new.iter().filter(|v| !old.contains(v)).cloned().collect();
    let deleted = old.iter().filter(|v| !new.contains(v)).cloned().collect();
    (added, deleted)
}

fn merge_meta(metadata: &mut Map<String, Value>, patch: Map<String, Value>) {
    let mut orders = Vec::new();
    // Deletions first, so a value deleted and re-added in one patch ends up present.
    for (key, value) in &patch {
        if let Some(field) = key.strip_prefix(DELETE_FROM_PRIMITIVE_LIST)
            && let (Some(Value::Array(list)), Value::Array(drop)) = (metadata.get_mut(field), value)
        {
            list.retain(|v| !drop.contains(v));
        }
    }
    for (key, value) in patch {
        if key.starts_with(DELETE_FROM_PRIMITIVE_LIST) {
            continue;
        }
        if let Some(field) = key.strip_prefix(SET_ELEMENT_ORDER) {
            orders.push((field.to_string(), value));
            continue;
        }
        if key.starts_with('$') {
            // Other directives do not occur in metadata patches made from pod templates.
            continue;
        }
        if value.is_null() {
            metadata.remove(&key);
            continue;
        }
        match (metadata.get_mut(&key), value) {
            (Some(Value::Object(current)), Value::Object(changes))
                if MAP_FIELDS.contains(&key.as_str()) =>
            {
                for (k, v) in changes {
                    if v.is_null() {
                        current.remove(&k);
                    } else {
                        current.insert(k, v);
                    }
                }
            }
            (Some(Value::Array(current)), Value::Array(additions))
                if PRIMITIVE_MERGE_LISTS.contains(&key.as_str()) =>
            {
                for v in additions {
                    if !current.contains(&v) {
                        current.push(v);
                    }
                }
            }
            (_, Value::Object(changes)) if MAP_FIELDS.contains(&key.as_str()) => {
                let kept: Map<String, Value> =
                    changes.into_iter().filter(|(_, v)| !v.is_null()).collect();
                metadata.insert(key, Value::Object(kept));
            }
            (_, value) => {
                metadata.insert(key, value);
            }
        }
    }
    for (field, order) in orders {
        if let (Some(Value::Array(list)), Value::Array(order)) = (metadata.get_mut(&field), order) {
            let mut ordered: Vec<Value> = order.into_iter().filter(|v| list.contains(v)).collect();
            let rest: Vec<Value> = list
                .iter()
                .filter(|v| !ordered.contains(v))
                .cloned()
                .collect();
            ordered.extend(rest);
            *list = ordered;
        }
    }
    // Kubernetes drops a map or list field emptied by a patch rather than keeping `{}`/`[]`.
    for field in MAP_FIELDS.iter().chain(PRIMITIVE_MERGE_LISTS.iter()) {
        let empty = match metadata.get(*field) {
            Some(Value::Object(m)) => m.is_empty(),
            Some(Value::Array(a)) => a.is_empty(),
            _ => false,
        };
        if empty {
            metadata.remove(*field);
        }
    }
}

#[cfg(test)]
mod tests;
