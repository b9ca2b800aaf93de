//! The codec of what a SidecarSet writes on a pod: the hash annotations
//! (`kruise.io/sidecarset-hash[-without-image]`, [`UpgradeSpec`]), the injected list, the
//! hot-upgrade working copies, and one SidecarSet's entry of
//! `kruise.io/sidecarset-inplace-update-state` ([`SidecarState`]), as text in and text out. It
//! knows no [`super::PodView`]: the view reads pods through it, and the predicates over a view are
//! in [`super::sidecarset`].

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use serde::de::DeserializeSeed;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::api::keys;

/// One entry of the `kruise.io/sidecarset-hash[-without-image]` annotations. Field order is the
/// wire order OpenKruise writes.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
pub struct UpgradeSpec {
    #[serde(rename = "updateTimestamp", default)]
    pub update_timestamp: Option<String>,
    #[serde(default)]
    pub hash: String,
    #[serde(rename = "sidecarSetName", default)]
    pub sidecar_set_name: String,
    #[serde(rename = "sidecarList", default)]
    pub sidecar_list: Option<Vec<String>>,
    #[serde(
        rename = "controllerRevision",
        default,
        skip_serializing_if = "String::is_empty"
    )]
    pub controller_revision: String,
}

/// Parses a hash annotation in the current object format or the legacy `{"<set>":"<hash>"}` one.
pub fn parse_upgrade_specs(value: &str) -> Result<BTreeMap<String, UpgradeSpec>, String> {
    match serde_json::from_str::<BTreeMap<String, UpgradeSpec>>(value) {
        Ok(specs) => Ok(specs),
        Err(object_error) => match serde_json::from_str::<BTreeMap<String, String>>(value) {
            Ok(legacy) => Ok(legacy
                .into_iter()
                .map(|(name, hash)| {
                    let spec = UpgradeSpec {
                        hash,
                        sidecar_set_name: name.clone(),
                        ..Default::default()
                    };
                    (name, spec)
                })
                .collect()),
            Err(_) => Err(object_error.to_string()),
        },
    }
}

/// The copy of a hot-upgrade sidecar that is not the working one.
pub fn idle_copy(sidecar: &str, working: &BTreeMap<String, String>) -> String {
    let (first, second) = hot_upgrade_copies(sidecar);
    if working.get(sidecar) == Some(&first) {
        second
    } else {
        first
    }
}

/// The two pod containers a hot-upgrade sidecar becomes.
pub fn hot_upgrade_copies(name: &str) -> (String, String) {
    (format!("{name}-1"), format!("{name}-2"))
}

/// One SidecarSet's hash in a `kruise.io/sidecarset-hash[-without-image]` value, read in place:
/// the same answer as looking the SidecarSet up in
/// [`parse_upgrade_specs`], without building the
/// map (this runs for every matched pod, twice, every round).
pub fn recorded_upgrade_hash<'v>(value: &'v str, sidecarset: &str) -> Option<Cow<'v, str>> {
    /// [`UpgradeSpec`] with the same fields and types, so that exactly
    /// the same values are accepted; only `hash` is kept.
    #[derive(Deserialize)]
    struct BorrowedSpec<'a> {
        #[serde(rename = "updateTimestamp", default)]
        _update_timestamp: Option<AnyString>,
        #[serde(default, borrow)]
        hash: Cow<'a, str>,
        #[serde(rename = "sidecarSetName", default)]
        _sidecar_set_name: AnyString,
        #[serde(rename = "sidecarList", default)]
        _sidecar_list: Option<Vec<AnyString>>,
        #[serde(rename = "controllerRevision", default)]
        _controller_revision: AnyString,
    }
    let mut reader = serde_json::Deserializer::from_str(value);
    if let Ok(spec) = EntryOf::<BorrowedSpec<'v>>::named(sidecarset).deserialize(&mut reader)
        && reader.end().is_ok()
    {
        return spec.map(|spec| spec.hash);
    }
    // The legacy `{"<set>":"<hash>"}` format.
    let mut reader = serde_json::Deserializer::from_str(value);
    let legacy = EntryOf::<Key<'v>>::named(sidecarset)
        .deserialize(&mut reader)
        .ok()?;
    reader.end().ok()?;
    legacy.map(|hash| hash.0)
}

/// A JSON string borrowed from the input unless it carries escapes.
#[derive(Deserialize, PartialEq, Eq, PartialOrd, Ord)]
struct Key<'a>(#[serde(borrow)] Cow<'a, str>);

/// Any JSON string, checked and dropped: accepts what a Rust `String` accepts (`null` is
/// refused), keeps nothing.
#[derive(Default)]
struct AnyString;

impl<'de> Deserialize<'de> for AnyString {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = AnyString;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<AnyString, E> {
                Ok(AnyString)
            }
        }
        deserializer.deserialize_str(Visitor)
    }
}

/// Reads a JSON object whose values must all be `V`, keeping only the value under one name (the
/// last one when the name repeats, as a map would).
struct EntryOf<'n, V> {
    name: &'n str,
    value: std::marker::PhantomData<V>,
}

impl<'n, V> EntryOf<'n, V> {
    fn named(name: &'n str) -> Self {
        Self {
            name,
            value: std::marker::PhantomData,
        }
    }
}

impl<'de, V: Deserialize<'de>> DeserializeSeed<'de> for EntryOf<'_, V> {
    type Value = Option<V>;

    fn deserialize<D: serde::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Option<V>, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de, V: Deserialize<'de>> serde::de::Visitor<'de> for EntryOf<'_, V> {
    type Value = Option<V>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Option<V>, A::Error> {
        let mut found = None;
        while let Some(key) = map.next_key::<Key<'de>>()? {
            let value = map.next_value::<V>()?;
            if key.0 == self.name {
                found = Some(value);
            }
        }
        Ok(found)
    }
}

// ---------------------------------------------------------------------------------------------
// Writing: what injection puts on a pod.

/// `kruise.io/sidecarset-injected-list`: the names already listed (`existing`) and `added`,
/// sorted, deduplicated, comma-separated.
pub fn injected_list<'a>(
    existing: Option<&'a str>,
    added: impl IntoIterator<Item = &'a str>,
) -> String {
    let mut names: BTreeSet<&str> = existing
        .map(|list| list.split(',').collect())
        .unwrap_or_default();
    names.extend(added);
    names.into_iter().collect::<Vec<_>>().join(",")
}

/// A `kruise.io/sidecarset-hash[-without-image]` value: the entries as compact JSON, by name.
pub fn hash_annotation(specs: &BTreeMap<String, UpgradeSpec>) -> String {
    compact_json(specs)
}

/// `kruise.io/sidecarset-working-hotupgrade-container`: sidecar name → working copy.
pub fn working_containers_annotation(working: &BTreeMap<String, String>) -> String {
    compact_json(working)
}

/// The two version annotations of one hot-upgrade copy (see [`hot_upgrade_copies`]): the
/// working copy is version 1, the idle one version 0, and each alternative the other.
pub fn hot_upgrade_version_annotations(copy: &str, working: bool) -> [(String, String); 2] {
    let (version, alternative) = if working { ("1", "0") } else { ("0", "1") };
    [
        (
            format!("{}{copy}", keys::SIDECARSET_VERSION_PREFIX),
            version.to_string(),
        ),
        (
            format!("{}{copy}", keys::SIDECARSET_VERSION_ALT_PREFIX),
            alternative.to_string(),
        ),
    ]
}

/// Compact JSON of an annotation map. Maps with string keys and plain values cannot fail to
/// serialize, so there is no error to report.
fn compact_json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// One SidecarSet's entry of a hash annotation, written once for a catalogue snapshot: every
/// field but the admission time depends on the SidecarSet only. [`prepared_hash_annotation`]
/// completes the entries of a request.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedUpgradeSpec {
    name: String,
    /// `"<name>":{"updateTimestamp":`
    head: String,
    /// What follows the timestamp: `,"hash":…}`.
    tail: String,
    /// `head` and `tail` as they read inside a JSON string (the annotation value in a patch).
    escaped_head: String,
    escaped_tail: String,
}

impl PreparedUpgradeSpec {
    /// The entry `spec` (its timestamp is left out), or `None` if it cannot be written.
    pub fn new(spec: &UpgradeSpec) -> Option<Self> {
        let untimed = UpgradeSpec {
            update_timestamp: None,
            ..spec.clone()
        };
        let json = serde_json::to_string(&untimed).ok()?;
        // The field order is fixed: the timestamp comes first.
        let tail = json.strip_prefix("{\"updateTimestamp\":null")?.to_string();
        let key = serde_json::to_string(&spec.sidecar_set_name).ok()?;
        let head = format!("{key}:{{\"updateTimestamp\":");
        Some(PreparedUpgradeSpec {
            name: spec.sidecar_set_name.clone(),
            escaped_head: escaped(&head)?,
            escaped_tail: escaped(&tail)?,
            head,
            tail,
        })
    }

    /// The SidecarSet name: the entry's key.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// An annotation value with its JSON string literal, as the patch carries it.
#[derive(Debug, Clone, PartialEq)]
pub struct WrittenAnnotation {
    pub value: String,
    pub literal: String,
}

/// The hash annotation holding exactly `entries`, stamped `now`: the text [`hash_annotation`]
/// gives for those entries typed, provided they are sorted by name and the names are unique
/// (`None` otherwise), and its JSON string literal.
pub fn prepared_hash_annotation(
    entries: &[&PreparedUpgradeSpec],
    now: &str,
) -> Option<WrittenAnnotation> {
    if !entries.windows(2).all(|pair| pair[0].name < pair[1].name) {
        return None;
    }
    let timestamp = serde_json::to_string(now).ok()?;
    let escaped_timestamp = escaped(&timestamp)?;
    let length: usize = entries
        .iter()
        .map(|e| e.head.len() + e.tail.len() + timestamp.len() + 1)
        .sum();
    let mut value = String::with_capacity(length + 2);
    let mut literal = String::with_capacity(2 * length + 4);
    value.push('{');
    literal.push_str("\"{");
    for (index, entry) in entries.iter().enumerate() {
        if index > 0 {
            value.push(',');
            literal.push(',');
        }
        value.push_str(&entry.head);
        value.push_str(&timestamp);
        value.push_str(&entry.tail);
        literal.push_str(&entry.escaped_head);
        literal.push_str(&escaped_timestamp);
        literal.push_str(&entry.escaped_tail);
    }
    value.push('}');
    literal.push_str("}\"");
    Some(WrittenAnnotation { value, literal })
}

/// `text` escaped as the inside of a JSON string, as serde_json writes it. Escaping goes
/// character by character, so the escaped pieces of a text concatenate to the escaped text.
fn escaped(text: &str) -> Option<String> {
    let literal = serde_json::to_string(text).ok()?;
    Some(literal[1..literal.len() - 1].to_string())
}

/// The pod's `kruise.io/sidecarset-inplace-update-state`, as far as one SidecarSet is concerned.
#[derive(Debug, Clone, PartialEq)]
pub enum SidecarState {
    /// No annotation: the sidecars were only injected, never updated in place.
    Absent,
    /// Not JSON of the expected shape: nothing can be trusted.
    Unreadable,
    /// (container name, imageID) recorded before this SidecarSet's last in-place update, one
    /// entry per container. A few entries, searched in order: a map would cost more memory in
    /// every cached pod summary than it saves.
    Recorded(Vec<(String, String)>),
}

impl SidecarState {
    /// One SidecarSet's entry of a `kruise.io/sidecarset-inplace-update-state` value (`None`:
    /// no annotation).
    pub fn read(value: Option<&str>, sidecarset: &str) -> Self {
        let Some(value) = value else {
            return Self::Absent;
        };
        // Only this SidecarSet's entry is decoded; the others need only be valid JSON.
        let mut reader = serde_json::Deserializer::from_str(value);
        let Ok(entry) = EntryOf::<&RawValue>::named(sidecarset).deserialize(&mut reader) else {
            return Self::Unreadable;
        };
        if reader.end().is_err() {
            return Self::Unreadable;
        }
        match entry.map(|raw| serde_json::from_str::<Value>(raw.get())) {
            None => Self::from_entry(None),
            Some(Ok(state)) => Self::from_entry(Some(&state)),
            Some(Err(_)) => Self::Unreadable,
        }
    }

    /// The state recorded in the SidecarSet's entry of the annotation (`None`: no entry).
    pub fn from_entry(state: Option<&Value>) -> Self {
        let mut recorded = Vec::new();
        if let Some(state) = state {
            if !state.is_object() && !state.is_null() {
                return Self::Unreadable;
            }
            let statuses = state
                .get("lastContainerStatuses")
                .and_then(Value::as_object);
            for (name, status) in statuses.into_iter().flatten() {
                let image_id = status.get("imageID").and_then(Value::as_str).unwrap_or("");
                // Names are unique: they are the keys of one JSON object.
                recorded.push((name.clone(), image_id.to_string()));
            }
        }
        Self::Recorded(recorded)
    }
}

/// `repo@sha256:…` (optionally with a tag before the `@`).
pub fn is_digest_reference(image: &str) -> bool {
    split_digest(image).is_some()
}

fn split_digest(image: &str) -> Option<(String, &str)> {
    let (name, digest) = image.rsplit_once('@')?;
    let (algorithm, hex) = digest.split_once(':')?;
    if algorithm.is_empty() || hex.is_empty() || name.is_empty() {
        return None;
    }
    Some((normalized_repository(name), digest))
}

/// An image reference as the CRI reports it: `nginx:1` is `docker.io/library/nginx:1`, a missing
/// tag is `:latest`, and a digest reference is its repository and digest (a tag beside the digest
/// says nothing the digest does not).
pub fn canonical_reference(image: &str) -> String {
    if let Some((repository, digest)) = split_digest(image) {
        return format!("{repository}@{digest}");
    }
    let last_slash = image.rfind('/').map_or(0, |i| i + 1);
    let tag = image[last_slash..]
        .split_once(':')
        .map_or("latest", |(_, tag)| tag);
    format!("{}:{tag}", normalized_repository(image))
}

/// Docker's name normalisation: `nginx` is `docker.io/library/nginx`, tags are dropped.
fn normalized_repository(name: &str) -> String {
    let last_slash = name.rfind('/').map_or(0, |i| i + 1);
    let without_tag = match name[last_slash..].find(':') {
        Some(colon) => &name[..last_slash + colon],
        None => name,
    };
    let (first, rest) = match without_tag.split_once('/') {
        Some((first, rest)) => (first, Some(rest)),
        None => (without_tag, None),
    };
    let first_is_registry =
        rest.is_some() && (first.contains('.') || first.contains(':') || first == "localhost");
    match (first_is_registry, rest) {
        (true, _) => without_tag.to_string(),
        (false, Some(_)) => format!("docker.io/{without_tag}"),
        (false, None) => format!("docker.io/library/{without_tag}"),
    }
}

/// Upstream's `IsContainerImageEqual` for a digest spec image against a status imageID (which
/// may carry a `docker-pullable://` style scheme).
pub(super) fn digest_images_equal(spec_image: &str, image_id: &str) -> bool {
    let image_id = image_id
        .split_once("://")
        .map_or(image_id, |(_, rest)| rest);
    match (split_digest(spec_image), split_digest(image_id)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// A string inside a pod summary's text (`start`, `len` in bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub start: u32,
    pub len: u32,
}

impl Span {
    pub fn of(self, text: &str) -> &str {
        let start = self.start as usize;
        text.get(start..start + self.len as usize).unwrap_or("")
    }
}

/// A parsed hash annotation of a pod summary: (SidecarSet, hash) spans into its text, sorted by
/// SidecarSet.
#[derive(Debug, Clone, Copy)]
pub struct HashEntries<'a> {
    pub text: &'a str,
    pub entries: &'a [(Span, Span)],
}

impl<'a> HashEntries<'a> {
    /// The hash recorded for `sidecarset`.
    pub fn get(&self, sidecarset: &str) -> Option<&'a str> {
        let text = self.text;
        self.entries
            .binary_search_by(|(set, _)| set.of(text).cmp(sidecarset))
            .ok()
            .map(|i| self.entries[i].1.of(text))
    }
}
