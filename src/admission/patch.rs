//! RFC 6902 patch between two JSON documents, built so that the patch touches as little of the
//! original as possible.
//!
//! The admission response is applied by the apiserver to the object *as it sent it*, which can
//! carry fields our Rust types do not know. A patch computed from typed-before to typed-after only
//! touches what changed, so those fields survive — provided array edits are expressed as inserts
//! and removals rather than as index-by-index replacements. Arrays are therefore aligned with a
//! longest-common-subsequence match on element identity (the `name` field where elements have one,
//! as containers, env vars, volumes and mounts do; whole-value equality otherwise).

use std::collections::BTreeMap;

use json_patch::{AddOperation, PatchOperation, RemoveOperation, ReplaceOperation};
use jsonptr::{Pointer, PointerBuf};
use k8s_openapi::api::core::v1::{Container, LocalObjectReference, Pod, PodReadinessGate, Volume};
use serde::Serialize;
use serde_json::Value;

use crate::convert::Served;
use crate::inject::prepared::KnownJson;

/// Above this many element comparisons an array is diffed position by position instead (still a
/// correct patch, just a larger one).
const MAX_ALIGNMENT_CELLS: usize = 1 << 20;

/// A JSON Patch document written as its operations are decided: values go from their typed form
/// straight into the text, without a `serde_json::Value` copy of each one in between.
#[derive(Debug, Default)]
pub struct PatchWriter {
    json: Vec<u8>,
}

impl PatchWriter {
    pub fn new() -> Self {
        PatchWriter::default()
    }

    /// The patch as JSON text, `None` when it has no operation.
    pub fn finish(mut self) -> Option<Vec<u8>> {
        if self.json.is_empty() {
            return None;
        }
        self.json.push(b']');
        Some(self.json)
    }

    pub fn add<T: Serialize + ?Sized>(&mut self, path: &Pointer, value: &T) {
        self.write("add", path, Some(value));
    }

    pub fn replace<T: Serialize + ?Sized>(&mut self, path: &Pointer, value: &T) {
        self.write("replace", path, Some(value));
    }

    pub fn remove(&mut self, path: &Pointer) {
        self.write::<()>("remove", path, None);
    }

    /// [`add`](Self::add) for a value whose JSON text is `json`.
    pub fn add_json(&mut self, path: &Pointer, json: &str) {
        self.write_json("add", path, |out| {
            out.extend_from_slice(json.as_bytes());
            Ok(())
        });
    }

    /// Appends an operation built elsewhere, as serde writes it.
    pub fn push(&mut self, op: &PatchOperation) {
        self.write_with(|json| serde_json::to_writer(json, op));
    }

    fn write<T: Serialize + ?Sized>(&mut self, op: &str, path: &Pointer, value: Option<&T>) {
        match value {
            Some(value) => self.write_json(op, path, |json| serde_json::to_writer(json, value)),
            None => self.write_with(|json| {
                write_op_and_path(json, op, path)?;
                json.push(b'}');
                Ok(())
            }),
        }
    }

    /// Writes an operation with a value, the value's JSON written by `value`.
    fn write_json(
        &mut self,
        op: &str,
        path: &Pointer,
        value: impl FnOnce(&mut Vec<u8>) -> serde_json::Result<()>,
    ) {
        self.write_with(|json| {
            write_op_and_path(json, op, path)?;
            json.extend_from_slice(b",\"value\":");
            value(json)?;
            json.push(b'}');
            Ok(())
        });
    }

    /// Writes one operation; one that fails to serialize is left out whole, so the text stays a
    /// valid patch. (The typed pod parts always serialize: their maps have string keys.)
    fn write_with(&mut self, op: impl FnOnce(&mut Vec<u8>) -> serde_json::Result<()>) {
        let start = self.json.len();
        if start == 0 {
            // Room for a typical injection patch (one sidecar, its volume, the annotations) at
            // once, rather than growing through every power of two up to it.
            self.json.reserve(4096);
        }
        self.json.push(if start == 0 { b'[' } else { b',' });
        if op(&mut self.json).is_err() {
            self.json.truncate(start);
        }
    }
}

fn write_op_and_path(json: &mut Vec<u8>, op: &str, path: &Pointer) -> serde_json::Result<()> {
    json.extend_from_slice(b"{\"op\":\"");
    json.extend_from_slice(op.as_bytes());
    json.extend_from_slice(b"\",\"path\":");
    serde_json::to_writer(json, path.as_str())
}

/// Operations turning `before` into `after`.
pub fn diff(before: &Value, after: &Value) -> Vec<PatchOperation> {
    let mut ops = Vec::new();
    diff_at(&mut PointerBuf::root(), before, after, &mut ops);
    ops
}

/// The patch a defaulting webhook answers with: `apply_defaults` runs on the typed `object`,
/// and what it changed (typed before against typed after) is carried over onto `raw`, the object
/// as the apiserver sent it, so fields the types do not know are left alone and the patch always
/// applies to what the apiserver holds. `Err` only when re-encoding fails (a server fault).
pub fn defaulting_patch<T: serde::Serialize>(
    raw: &str,
    mut object: T,
    apply_defaults: impl FnOnce(&mut T),
) -> Result<Vec<PatchOperation>, String> {
    let re_encoding = |e: serde_json::Error| format!("re-encoding the object: {e}");
    let raw: Value = serde_json::from_str(raw).map_err(re_encoding)?;
    let before = serde_json::to_value(&object).map_err(re_encoding)?;
    apply_defaults(&mut object);
    let after = serde_json::to_value(&object).map_err(re_encoding)?;
    Ok(diff(&raw, &carry_over(&raw, &before, &after)))
}

/// [`defaulting_patch`] for an object sent in the served version `S`: the defaults of that
/// version alone (`served_defaults`), then those of the working type, and the result back in
/// `S`. The patch makes the object what it will be once stored, in the version sent: with the
/// defaults, and with what the conversion to the working type normalizes (a v1alpha1
/// SidecarSet's `spec.namespace` becomes its namespace selector) — storage would rewrite it so
/// anyway. Running it again on its output changes nothing: conversion round trips are stable on
/// what they produced.
pub fn served_defaulting_patch<S: Served + Clone>(
    raw: &str,
    object: S,
    served_defaults: impl FnOnce(&mut S),
    working_defaults: impl FnOnce(&mut S::Working),
) -> Result<Vec<PatchOperation>, String> {
    defaulting_patch(raw, object, |object| {
        served_defaults(object);
        let mut working = object.clone().into_working();
        working_defaults(&mut working);
        *object = S::from_working(working);
    })
}

/// The raw object with the changes between two typed renderings of it carried over: where
/// `before` and `after` agree the raw JSON is kept as it is (unknown fields, absent keys), where
/// they differ `after` wins. Diffing the raw object against this result gives a patch that
/// always applies to the raw object, even when the typed rendering adds keys the raw object does
/// not have (an empty `updateStrategy: {}` of a non-optional struct).
pub fn carry_over(raw: &Value, before: &Value, after: &Value) -> Value {
    if before == after {
        return raw.clone();
    }
    match (raw, before, after) {
        (Value::Object(raw_map), Value::Object(before_map), Value::Object(after_map)) => {
            let mut merged = raw_map.clone();
            for (key, after_value) in after_map {
                let before_value = before_map.get(key).unwrap_or(&Value::Null);
                if before_value == after_value {
                    continue;
                }
                let value = match raw_map.get(key) {
                    Some(raw_value) => carry_over(raw_value, before_value, after_value),
                    None => after_value.clone(),
                };
                merged.insert(key.clone(), value);
            }
            for key in before_map.keys() {
                if !after_map.contains_key(key) {
                    merged.remove(key);
                }
            }
            Value::Object(merged)
        }
        (Value::Array(raw_items), Value::Array(before_items), Value::Array(after_items))
            if raw_items.len() == before_items.len() && before_items.len() == after_items.len() =>
        {
            Value::Array(
                raw_items
                    .iter()
                    .zip(before_items.iter().zip(after_items))
                    .map(|(raw, (before, after))| carry_over(raw, before, after))
                    .collect(),
            )
        }
        _ => after.clone(),
    }
}

fn diff_at(path: &mut PointerBuf, before: &Value, after: &Value, ops: &mut Vec<PatchOperation>) {
    match (before, after) {
        (Value::Object(old), Value::Object(new)) => {
            for key in old.keys().filter(|k| !new.contains_key(*k)) {
                ops.push(PatchOperation::Remove(RemoveOperation {
                    path: child(path, key.as_str()),
                }));
            }
            for (key, new_value) in new {
                match old.get(key) {
                    None => ops.push(PatchOperation::Add(AddOperation {
                        path: child(path, key.as_str()),
                        value: new_value.clone(),
                    })),
                    Some(old_value) if old_value != new_value => {
                        path.push_back(key.as_str());
                        diff_at(path, old_value, new_value, ops);
                        path.pop_back();
                    }
                    Some(_) => {}
                }
            }
        }
        (Value::Array(old), Value::Array(new)) => diff_array(path, old, new, ops),
        _ if before != after => ops.push(PatchOperation::Replace(ReplaceOperation {
            path: path.clone(),
            value: after.clone(),
        })),
        _ => {}
    }
}

fn child<'t>(path: &PointerBuf, token: impl Into<jsonptr::Token<'t>>) -> PointerBuf {
    let mut child = path.clone();
    child.push_back(token);
    child
}

/// What identifies an array element across the two versions.
fn same_element(a: &Value, b: &Value) -> bool {
    match (element_name(a), element_name(b)) {
        (Some(a), Some(b)) => a == b,
        (None, None) => a == b,
        _ => false,
    }
}

fn element_name(value: &Value) -> Option<&str> {
    value.as_object()?.get("name")?.as_str()
}

/// One step of an array alignment.
enum Step {
    /// Old element `i` corresponds to new element `j`.
    Keep(usize, usize),
    Remove,
    Insert(usize),
}

fn diff_array(path: &mut PointerBuf, old: &[Value], new: &[Value], ops: &mut Vec<PatchOperation>) {
    let mut position = 0usize;
    let unnamed = |v: &Value| element_name(v).is_none();
    for step in align(old, new, &same_element, &unnamed) {
        match step {
            Step::Keep(i, j) => {
                if old[i] != new[j] {
                    path.push_back(position);
                    diff_at(path, &old[i], &new[j], ops);
                    path.pop_back();
                }
                position += 1;
            }
            Step::Remove => ops.push(PatchOperation::Remove(RemoveOperation {
                path: child(path, position),
            })),
            Step::Insert(j) => {
                ops.push(PatchOperation::Add(AddOperation {
                    path: child(path, position),
                    value: new[j].clone(),
                }));
                position += 1;
            }
        }
    }
}

/// Aligns two arrays: common prefix and suffix, then an LCS over the middle. Unmatched elements
/// without a name between two matches are paired positionally (so `["a","b"]` → `["a","c"]` is
/// one replace), named ones become removals and insertions.
fn align<T>(
    old: &[T],
    new: &[T],
    same_element: &dyn Fn(&T, &T) -> bool,
    unnamed: &dyn Fn(&T) -> bool,
) -> Vec<Step> {
    let prefix = old
        .iter()
        .zip(new)
        .take_while(|(a, b)| same_element(a, b))
        .count();
    let suffix = old[prefix..]
        .iter()
        .rev()
        .zip(new[prefix..].iter().rev())
        .take_while(|(a, b)| same_element(a, b))
        .count();
    let (old_mid, new_mid) = (prefix..old.len() - suffix, prefix..new.len() - suffix);

    let mut steps: Vec<Step> = (0..prefix).map(|i| Step::Keep(i, i)).collect();
    let matches = if old_mid.len().saturating_mul(new_mid.len()) <= MAX_ALIGNMENT_CELLS {
        lcs(&old[old_mid.clone()], &new[new_mid.clone()], same_element)
    } else {
        Vec::new()
    };
    let (mut i, mut j) = (old_mid.start, new_mid.start);
    let anchors = matches
        .into_iter()
        .map(|(a, b)| (a + old_mid.start, b + new_mid.start))
        .chain(std::iter::once((old_mid.end, new_mid.end)));
    for (anchor_old, anchor_new) in anchors {
        // The gap before this anchor: pair unnamed elements, then remove and insert the rest.
        while i < anchor_old && j < anchor_new && unnamed(&old[i]) && unnamed(&new[j]) {
            steps.push(Step::Keep(i, j));
            i += 1;
            j += 1;
        }
        steps.extend((i..anchor_old).map(|_| Step::Remove));
        steps.extend((j..anchor_new).map(Step::Insert));
        if anchor_old < old_mid.end {
            steps.push(Step::Keep(anchor_old, anchor_new));
        }
        i = anchor_old + 1;
        j = anchor_new + 1;
    }
    let suffix_start = (old.len() - suffix, new.len() - suffix);
    steps.extend((0..suffix).map(|k| Step::Keep(suffix_start.0 + k, suffix_start.1 + k)));
    steps
}

/// Longest common subsequence of matching elements, as index pairs in increasing order.
fn lcs<T>(old: &[T], new: &[T], same_element: &dyn Fn(&T, &T) -> bool) -> Vec<(usize, usize)> {
    let (n, m) = (old.len(), new.len());
    if n == 0 || m == 0 {
        return Vec::new();
    }
    // lengths[i][j] = LCS length of old[i..] and new[j..].
    let width = m + 1;
    let mut lengths = vec![0u32; (n + 1) * width];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lengths[i * width + j] = if same_element(&old[i], &new[j]) {
                lengths[(i + 1) * width + j + 1] + 1
            } else {
                lengths[(i + 1) * width + j].max(lengths[i * width + j + 1])
            };
        }
    }
    let mut pairs = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < n && j < m {
        if same_element(&old[i], &new[j]) {
            pairs.push((i, j));
            i += 1;
            j += 1;
        } else if lengths[(i + 1) * width + j] >= lengths[i * width + j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    pairs
}

/// The patch from `before` to `after` for a pod changed by injection and launch priority.
///
/// Those only touch `metadata.name`, `metadata.annotations` and four lists of the spec, so only
/// those are compared and serialized — the rest of the pod is checked equal with a typed
/// comparison instead of being turned into JSON twice. Anything else that differs falls back to
/// the full JSON diff, so the result is always the exact difference.
pub fn pod_patch(mut before: Pod, mut after: Pod) -> PatchWriter {
    let old = PodMutableParts::take(&mut before);
    let new = PodMutableParts::take(&mut after);
    // Equal rests also have the spec on both sides or on neither.
    if before != after {
        old.restore(&mut before);
        new.restore(&mut after);
        let mut patch = PatchWriter::new();
        if let (Ok(before), Ok(after)) =
            (serde_json::to_value(&before), serde_json::to_value(&after))
        {
            diff(&before, &after).iter().for_each(|op| patch.push(op));
        }
        return patch;
    }
    mutable_parts_patch(
        old.borrowed(None),
        new.borrowed(None),
        &KnownJson::default(),
    )
}

/// The patch from a pod's mutable parts as they were (`before`, see
/// [`PodMutableParts::copy_of`]) to the pod `after`, for a change known to touch nothing else —
/// what [`differs_only_in_mutable_parts`] checks. Saves copying and comparing the whole pod.
pub fn pod_parts_patch(before: &PodMutableParts, after: &Pod) -> PatchWriter {
    pod_parts_patch_with(before, after, &KnownJson::default())
}

/// [`pod_parts_patch`] copying the JSON text `known` holds for values of `after` instead of
/// serializing them: the same patch.
pub fn pod_parts_patch_with(
    before: &PodMutableParts,
    after: &Pod,
    known: &KnownJson<'_>,
) -> PatchWriter {
    let after = MutablePartsRef::of(after);
    mutable_parts_patch(before.borrowed(after.volumes), after, known)
}

/// Whether two pods are equal outside the parts injection and launch priority may change, and
/// `b`'s volumes are `a`'s with others appended (what [`PodMutableParts::copy_of`] relies on).
pub fn differs_only_in_mutable_parts(mut a: Pod, mut b: Pod) -> bool {
    let volumes = |pod: &Pod| pod.spec.as_ref().and_then(|s| s.volumes.clone());
    let appended = match (volumes(&a), volumes(&b)) {
        (None, _) => true,
        (Some(before), Some(after)) => after.starts_with(&before),
        (Some(_), None) => false,
    };
    PodMutableParts::take(&mut a);
    PodMutableParts::take(&mut b);
    appended && a == b
}

fn mutable_parts_patch(
    old: MutablePartsRef<'_>,
    new: MutablePartsRef<'_>,
    known: &KnownJson<'_>,
) -> PatchWriter {
    let mut ops = PatchWriter::new();
    let mut path = PointerBuf::root();
    path.push_back("metadata");
    diff_typed(&mut path, "name", old.name, new.name, &mut ops);
    diff_string_map(
        &mut path,
        "annotations",
        old.annotations,
        new.annotations,
        known,
        &mut ops,
    );
    path.pop_back();
    path.push_back("spec");
    diff_named_list(
        &mut path,
        "initContainers",
        old.init_containers,
        new.init_containers,
        container_name,
        &|_| None,
        &mut ops,
    );
    diff_named_list(
        &mut path,
        "containers",
        old.containers,
        new.containers,
        container_name,
        &|_| None,
        &mut ops,
    );
    diff_named_list(
        &mut path,
        "volumes",
        old.volumes,
        new.volumes,
        volume_name,
        &|volume| known.volume(volume),
        &mut ops,
    );
    diff_named_list(
        &mut path,
        "imagePullSecrets",
        old.image_pull_secrets,
        new.image_pull_secrets,
        secret_name,
        &|_| None,
        &mut ops,
    );
    diff_named_list(
        &mut path,
        "readinessGates",
        old.readiness_gates,
        new.readiness_gates,
        gate_condition,
        &|_| None,
        &mut ops,
    );
    ops
}

fn container_name(container: &Container) -> Option<&str> {
    Some(&container.name)
}

fn volume_name(volume: &Volume) -> Option<&str> {
    Some(&volume.name)
}

fn secret_name(secret: &LocalObjectReference) -> Option<&str> {
    Some(&secret.name)
}

fn gate_condition(gate: &PodReadinessGate) -> Option<&str> {
    Some(&gate.condition_type)
}

/// The parts of a pod the webhook may change, moved out so the rest can be compared cheaply.
pub struct PodMutableParts {
    name: Option<String>,
    annotations: Option<BTreeMap<String, String>>,
    /// `None` inside means the field is absent; the outer `Option` of `containers` is only there
    /// because the spec itself may be absent.
    containers: Option<Vec<Container>>,
    init_containers: Option<Vec<Container>>,
    volumes: KeptVolumes,
    image_pull_secrets: Option<Vec<LocalObjectReference>>,
    readiness_gates: Option<Vec<PodReadinessGate>>,
}

/// A pod's volumes as kept for the patch.
enum KeptVolumes {
    /// The list itself; `None` when the field is absent.
    List(Option<Vec<Volume>>),
    /// Only how many there were (`None`: the field is absent), for a change that appends volumes
    /// and leaves the existing ones alone: the list before is then the start of the list after.
    /// A `Volume` is a 3 KiB struct, so not copying them is worth it.
    Count(Option<usize>),
}

impl PodMutableParts {
    /// A copy of these parts of `pod`, leaving the pod as it is, for a change that at most
    /// appends volumes (injection): of those only the count is kept.
    pub fn copy_of(pod: &Pod) -> Self {
        let spec = pod.spec.as_ref();
        PodMutableParts {
            name: pod.metadata.name.clone(),
            annotations: pod.metadata.annotations.clone(),
            containers: spec.map(|s| s.containers.clone()),
            init_containers: spec.and_then(|s| s.init_containers.clone()),
            volumes: KeptVolumes::Count(spec.and_then(|s| s.volumes.as_ref().map(Vec::len))),
            image_pull_secrets: spec.and_then(|s| s.image_pull_secrets.clone()),
            readiness_gates: spec.and_then(|s| s.readiness_gates.clone()),
        }
    }

    fn take(pod: &mut Pod) -> Self {
        let spec = pod.spec.as_mut();
        let (containers, init_containers, volumes, image_pull_secrets, readiness_gates) = match spec
        {
            Some(spec) => (
                Some(std::mem::take(&mut spec.containers)),
                spec.init_containers.take(),
                spec.volumes.take(),
                spec.image_pull_secrets.take(),
                spec.readiness_gates.take(),
            ),
            None => (None, None, None, None, None),
        };
        PodMutableParts {
            name: pod.metadata.name.take(),
            annotations: pod.metadata.annotations.take(),
            containers,
            init_containers,
            volumes: KeptVolumes::List(volumes),
            image_pull_secrets,
            readiness_gates,
        }
    }

    /// Puts parts [`take`](Self::take)n from `pod` back.
    fn restore(self, pod: &mut Pod) {
        pod.metadata.name = self.name;
        pod.metadata.annotations = self.annotations;
        if let Some(spec) = pod.spec.as_mut() {
            spec.containers = self.containers.unwrap_or_default();
            spec.init_containers = self.init_containers;
            if let KeptVolumes::List(volumes) = self.volumes {
                spec.volumes = volumes;
            }
            spec.image_pull_secrets = self.image_pull_secrets;
            spec.readiness_gates = self.readiness_gates;
        }
    }

    /// These parts borrowed; kept volume counts are resolved against the volumes after the change.
    fn borrowed<'a>(&'a self, volumes_after: Option<&'a [Volume]>) -> MutablePartsRef<'a> {
        let volumes = match &self.volumes {
            KeptVolumes::List(volumes) => volumes.as_deref(),
            KeptVolumes::Count(count) => count
                .and_then(|count| volumes_after.map(|after| after.get(..count).unwrap_or(after))),
        };
        MutablePartsRef {
            name: self.name.as_ref(),
            annotations: self.annotations.as_ref(),
            containers: self.containers.as_deref(),
            init_containers: self.init_containers.as_deref(),
            volumes,
            image_pull_secrets: self.image_pull_secrets.as_deref(),
            readiness_gates: self.readiness_gates.as_deref(),
        }
    }
}

/// [`PodMutableParts`] borrowed, from a copy or straight from a pod.
struct MutablePartsRef<'a> {
    name: Option<&'a String>,
    annotations: Option<&'a BTreeMap<String, String>>,
    containers: Option<&'a [Container]>,
    init_containers: Option<&'a [Container]>,
    volumes: Option<&'a [Volume]>,
    image_pull_secrets: Option<&'a [LocalObjectReference]>,
    readiness_gates: Option<&'a [PodReadinessGate]>,
}

impl<'a> MutablePartsRef<'a> {
    fn of(pod: &'a Pod) -> Self {
        let spec = pod.spec.as_ref();
        MutablePartsRef {
            name: pod.metadata.name.as_ref(),
            annotations: pod.metadata.annotations.as_ref(),
            containers: spec.map(|s| s.containers.as_slice()),
            init_containers: spec.and_then(|s| s.init_containers.as_deref()),
            volumes: spec.and_then(|s| s.volumes.as_deref()),
            image_pull_secrets: spec.and_then(|s| s.image_pull_secrets.as_deref()),
            readiness_gates: spec.and_then(|s| s.readiness_gates.as_deref()),
        }
    }
}

fn diff_typed<T: Serialize + PartialEq + ?Sized>(
    path: &mut PointerBuf,
    key: &str,
    old: Option<&T>,
    new: Option<&T>,
    ops: &mut PatchWriter,
) {
    if old == new {
        return;
    }
    path.push_back(key);
    match (old, new) {
        (_, None) => ops.remove(path),
        (None, Some(value)) => ops.add(path, value),
        (Some(_), Some(value)) => ops.replace(path, value),
    }
    path.pop_back();
}

fn diff_string_map(
    path: &mut PointerBuf,
    key: &str,
    old: Option<&BTreeMap<String, String>>,
    new: Option<&BTreeMap<String, String>>,
    known: &KnownJson<'_>,
    ops: &mut PatchWriter,
) {
    match (old, new) {
        (Some(old), Some(new)) => {
            path.push_back(key);
            for name in old.keys().filter(|k| !new.contains_key(*k)) {
                path.push_back(name.as_str());
                ops.remove(path);
                path.pop_back();
            }
            for (name, value) in new {
                let previous = old.get(name);
                if previous == Some(value) {
                    continue;
                }
                path.push_back(name.as_str());
                let op = if previous.is_none() { "add" } else { "replace" };
                ops.write_json(op, path, |json| write_string(json, value, known));
                path.pop_back();
            }
            path.pop_back();
        }
        (None, Some(new)) => {
            path.push_back(key);
            ops.write_json("add", path, |json| write_string_map(json, new, known));
            path.pop_back();
        }
        (old, new) => diff_typed(path, key, old, new, ops),
    }
}

/// A string as JSON, its text copied from `known` where it is there.
fn write_string(json: &mut Vec<u8>, value: &str, known: &KnownJson<'_>) -> serde_json::Result<()> {
    match known.string(value) {
        Some(literal) => {
            json.extend_from_slice(literal.as_bytes());
            Ok(())
        }
        None => serde_json::to_writer(json, value),
    }
}

/// What serde_json writes for the map, values through [`write_string`].
fn write_string_map(
    json: &mut Vec<u8>,
    map: &BTreeMap<String, String>,
    known: &KnownJson<'_>,
) -> serde_json::Result<()> {
    json.push(b'{');
    for (index, (name, value)) in map.iter().enumerate() {
        if index > 0 {
            json.push(b',');
        }
        serde_json::to_writer(&mut *json, name)?;
        json.push(b':');
        write_string(json, value, known)?;
    }
    json.push(b'}');
    Ok(())
}

/// A list of named objects: aligned by name on the typed values; only inserted or changed
/// elements are serialized.
fn diff_named_list<'k, T: Serialize + PartialEq>(
    path: &mut PointerBuf,
    key: &str,
    old: Option<&[T]>,
    new: Option<&[T]>,
    name: fn(&T) -> Option<&str>,
    known_json: &dyn Fn(&T) -> Option<&'k str>,
    ops: &mut PatchWriter,
) {
    let (Some(old), Some(new)) = (old, new) else {
        diff_typed(path, key, old, new, ops);
        return;
    };
    if old == new {
        return;
    }
    path.push_back(key);
    let same = |a: &T, b: &T| match (name(a), name(b)) {
        (Some(a), Some(b)) => a == b,
        (None, None) => a == b,
        _ => false,
    };
    let unnamed = |v: &T| name(v).is_none();
    let mut position = 0usize;
    for step in align(old, new, &same, &unnamed) {
        match step {
            Step::Keep(i, j) => {
                // The volumes before an append-only change are the very elements after it.
                if !std::ptr::eq(&old[i], &new[j])
                    && old[i] != new[j]
                    && let (Ok(before), Ok(after)) =
                        (serde_json::to_value(&old[i]), serde_json::to_value(&new[j]))
                {
                    path.push_back(position);
                    let mut changes = Vec::new();
                    diff_at(path, &before, &after, &mut changes);
                    changes.iter().for_each(|op| ops.push(op));
                    path.pop_back();
                }
                position += 1;
            }
            Step::Remove => {
                path.push_back(position);
                ops.remove(path);
                path.pop_back();
            }
            Step::Insert(j) => {
                path.push_back(position);
                match known_json(&new[j]) {
                    Some(json) => ops.add_json(path, json),
                    None => ops.add(path, &new[j]),
                }
                path.pop_back();
                position += 1;
            }
        }
    }
    path.pop_back();
}

#[cfg(test)]
mod tests;
