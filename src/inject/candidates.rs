//! Which SidecarSets of a catalogue can match a pod, found without looking at all of them.
//!
//! Each SidecarSet is filed under one requirement every pod it matches must meet: a label (or
//! label key) its namespace selector requires (a pinned namespace is its name label), or a label
//! (or key) its pod selector requires — a `matchLabels` entry, the values of an `In`, an `Exists`. Of these, the
//! one shared by the fewest SidecarSets is used (OpenKruise files by namespace only; a catalogue
//! of many SidecarSets in one namespace needs the labels). A pod then looks up its namespace,
//! its namespace's labels and its own labels, and [`super::sidecar::matching_sidecarsets`]
//! judges only what it finds, in catalogue order: the same SidecarSets, the same first error.
//!
//! Not filed, because they match no pod: paused SidecarSets and those without a pod selector.
//! Looked at for every pod, because they could fail the pod: SidecarSets whose selectors hold an
//! operator matching cannot evaluate (validation refuses them; a catalogue built by hand may hold
//! them), and those that require nothing a pod or namespace carries (only `NotIn`,
//! `DoesNotExist`).

use std::collections::HashMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use crate::api::SidecarSet;
use crate::k8s::selector::{self, Labels};

/// A requirement a pod (or its namespace) must meet for a SidecarSet to match it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Anchor<'a> {
    NamespaceLabel(&'a str, &'a str),
    NamespaceKey(&'a str),
    PodLabel(&'a str, &'a str),
    PodKey(&'a str),
}

/// Labels by key, then value, to positions.
type ByLabel = HashMap<String, HashMap<String, Vec<u32>>>;

/// A catalogue's SidecarSets (by position in catalogue order) under what a pod must carry.
#[derive(Debug, Default)]
pub struct MatchIndex {
    namespace_labels: ByLabel,
    namespace_keys: HashMap<String, Vec<u32>>,
    pod_labels: ByLabel,
    pod_keys: HashMap<String, Vec<u32>>,
    /// Looked at for every pod.
    always: Vec<u32>,
}

/// What filing one SidecarSet needs: the requirements it offers, each a list of anchors of
/// which a matching pod meets at least one.
enum Filing<'a> {
    Never,
    Always,
    AnyOf(Vec<Vec<Anchor<'a>>>),
}

/// How `set` is filed; the cases follow the order of the checks in matching.
fn filing(set: &SidecarSet) -> Filing<'_> {
    if set.injection_paused() {
        return Filing::Never;
    }
    let namespace_selector = set.spec.namespace_selector.as_ref();
    if !evaluable(namespace_selector) {
        return Filing::Always;
    }
    let Some(pod_selector) = set
        .spec
        .selector
        .as_ref()
        .filter(|s| !selector::is_empty(s))
    else {
        return Filing::Never;
    };
    if !evaluable(Some(pod_selector)) {
        return Filing::Always;
    }
    let mut requirements = Vec::new();
    if let Some(namespace_selector) = namespace_selector {
        requirements.extend(required(
            namespace_selector,
            Anchor::NamespaceLabel,
            Anchor::NamespaceKey,
        ));
    }
    requirements.extend(required(pod_selector, Anchor::PodLabel, Anchor::PodKey));
    if requirements.iter().any(Vec::is_empty) {
        // An `In` without values: matches nothing.
        return Filing::Never;
    }
    if requirements.is_empty() {
        return Filing::Always;
    }
    Filing::AnyOf(requirements)
}

/// Whether matching can evaluate every operator of `selector`.
fn evaluable(selector: Option<&LabelSelector>) -> bool {
    selector.is_none_or(|selector| {
        selector
            .match_expressions
            .iter()
            .flatten()
            .all(|requirement| {
                matches!(
                    requirement.operator.as_str(),
                    "In" | "NotIn" | "Exists" | "DoesNotExist"
                )
            })
    })
}

/// The requirements a selector places on the labels it is matched against.
fn required<'a>(
    selector: &'a LabelSelector,
    label: fn(&'a str, &'a str) -> Anchor<'a>,
    key: fn(&'a str) -> Anchor<'a>,
) -> Vec<Vec<Anchor<'a>>> {
    let mut requirements = Vec::new();
    for (k, v) in selector.match_labels.iter().flatten() {
        requirements.push(vec![label(k, v)]);
    }
    for requirement in selector.match_expressions.iter().flatten() {
        let k = requirement.key.as_str();
        match requirement.operator.as_str() {
            "In" => requirements.push(
                requirement
                    .values
                    .iter()
                    .flatten()
                    .map(|v| label(k, v))
                    .collect(),
            ),
            "Exists" => requirements.push(vec![key(k)]),
            _ => {}
        }
    }
    requirements
}

impl MatchIndex {
    /// Files `sets`, given in catalogue order.
    pub fn new(sets: &[Arc<SidecarSet>]) -> Self {
        let filings: Vec<Filing<'_>> = sets.iter().map(|set| filing(set)).collect();
        // How many SidecarSets offer each anchor: a SidecarSet is filed under its rarest
        // requirement.
        let mut offered: HashMap<&Anchor<'_>, usize> = HashMap::new();
        for filing in &filings {
            if let Filing::AnyOf(requirements) = filing {
                for anchor in requirements.iter().flatten() {
                    *offered.entry(anchor).or_default() += 1;
                }
            }
        }
        let mut index = MatchIndex::default();
        for (position, filing) in filings.iter().enumerate() {
            let position = u32::try_from(position).expect("fewer than 4 billion SidecarSets");
            match filing {
                Filing::Never => {}
                Filing::Always => index.always.push(position),
                Filing::AnyOf(requirements) => {
                    let cost = |anchors: &&Vec<Anchor<'_>>| {
                        anchors.iter().map(|a| offered[a]).sum::<usize>()
                    };
                    let rarest = requirements.iter().min_by_key(cost).expect("not empty");
                    for anchor in rarest {
                        index.file(anchor, position);
                    }
                }
            }
        }
        index
    }

    fn file(&mut self, anchor: &Anchor<'_>, position: u32) {
        let by_label = |map: &mut ByLabel, k: &str, v: &str| {
            let values = map.entry(k.to_string()).or_default();
            push_once(values.entry(v.to_string()).or_default(), position);
        };
        match *anchor {
            Anchor::NamespaceLabel(k, v) => by_label(&mut self.namespace_labels, k, v),
            Anchor::NamespaceKey(k) => push_once(
                self.namespace_keys.entry(k.to_string()).or_default(),
                position,
            ),
            Anchor::PodLabel(k, v) => by_label(&mut self.pod_labels, k, v),
            Anchor::PodKey(k) => {
                push_once(self.pod_keys.entry(k.to_string()).or_default(), position)
            }
        }
    }

    /// The SidecarSets of `sets` (those the index was built from) that could match `pod`, whose
    /// namespace carries `namespace_labels` (if known), in catalogue order.
    pub fn candidate_sets(
        &self,
        sets: &[Arc<SidecarSet>],
        pod: &Pod,
        namespace_labels: Option<&Labels>,
    ) -> Vec<Arc<SidecarSet>> {
        let labels = pod.metadata.labels.as_ref();
        let positions = self.candidates(namespace_labels, labels);
        let set = |position: u32| sets.get(position as usize).cloned();
        positions.into_iter().filter_map(set).collect()
    }

    /// Positions of every SidecarSet that could match a pod with `labels` whose namespace carries `namespace_labels` (if known); ascending, each once.
    pub fn candidates(
        &self,
        namespace_labels: Option<&Labels>,
        labels: Option<&Labels>,
    ) -> Vec<u32> {
        let mut lists: Vec<&[u32]> = vec![&self.always];
        for (k, v) in namespace_labels.into_iter().flatten() {
            lists.extend(label_list(&self.namespace_labels, k, v));
            lists.extend(self.namespace_keys.get(k).map(Vec::as_slice));
        }
        for (k, v) in labels.into_iter().flatten() {
            lists.extend(label_list(&self.pod_labels, k, v));
            lists.extend(self.pod_keys.get(k).map(Vec::as_slice));
        }
        let mut positions: Vec<u32> = lists.concat();
        positions.sort_unstable();
        positions.dedup();
        positions
    }
}

fn label_list<'a>(by_label: &'a ByLabel, key: &str, value: &str) -> Option<&'a [u32]> {
    let values = by_label.get(key)?;
    values.get(value).map(Vec::as_slice)
}

/// Positions are filed in ascending order; a SidecarSet offering one anchor twice (an `In`
/// repeating a value) is filed once.
fn push_once(positions: &mut Vec<u32>, position: u32) {
    if positions.last() != Some(&position) {
        positions.push(position);
    }
}
