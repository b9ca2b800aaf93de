//! Which SidecarSets one SidecarSet can conflict with, found without looking at all of them.
//!
//! The conflict rule (spec §5 E) only ever names another SidecarSet that shares a name with this
//! one — an init container, a container, a volume, or an annotation key of a non-`Retain`
//! `patchPodMetadata` entry — and whose pod selector (and namespace selector, when both have
//! one) overlaps. So the index files each SidecarSet under each such name, and within a name
//! under one label its pod selector pins and one its namespace selector pins: a selector that
//! requires another value of a pinned key is disjoint from it by the overlap test. A lookup
//! returns every SidecarSet the rule could name (and usually a few it would not); the rule itself
//! then runs on those alone, so its verdicts are the pairwise ones (see the property tests).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use crate::api::{SidecarSet, keys};
use crate::validate::sidecarset::{ANY_VALUE, namespace_selector, pinned_values};

/// A name two SidecarSets must not both use differently on one pod.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum SharedName {
    InitContainer(String),
    Container(String),
    Volume(String),
    Annotation(String),
}

/// The names `set` could conflict over, each once.
fn shared_names(set: &SidecarSet) -> BTreeSet<SharedName> {
    let mut names = BTreeSet::new();
    for container in set.init_containers() {
        names.insert(SharedName::InitContainer(container.name().to_string()));
    }
    for container in set.containers() {
        names.insert(SharedName::Container(container.name().to_string()));
    }
    for volume in set.volumes() {
        names.insert(SharedName::Volume(volume.name.clone()));
    }
    for patch in set.spec.patch_pod_metadata.iter().flatten() {
        if patch.patch_policy.as_deref() == Some(keys::PATCH_POLICY_RETAIN) {
            continue;
        }
        for key in patch.annotations.iter().flat_map(BTreeMap::keys) {
            names.insert(SharedName::Annotation(key.clone()));
        }
    }
    names
}

/// The key a selector pins to exactly one value (first by key), the value being no wildcard.
fn primary_pin(selector: &LabelSelector) -> Option<(String, String)> {
    pinned_values(selector)
        .into_iter()
        .find_map(|(key, values)| match values.as_slice() {
            [value] if *value != ANY_VALUE => Some((key.to_string(), value.to_string())),
            _ => None,
        })
}

/// The values of `key` a selector leaves possible for a SidecarSet that pins `key` to one value:
/// a pin outside them makes the two selectors disjoint (see `is_disjoint`, whose rules this
/// reads requirement by requirement).
#[derive(Debug)]
enum Allowed<'s> {
    Any,
    Only(BTreeSet<&'s str>),
    Except(BTreeSet<&'s str>),
}

impl<'s> Allowed<'s> {
    fn of(selector: &'s LabelSelector, key: &str) -> Self {
        let mut allowed = Allowed::Any;
        if let Some(value) = selector.match_labels.as_ref().and_then(|m| m.get(key)) {
            allowed = allowed.only(BTreeSet::from([value.as_str()]));
        }
        for requirement in selector.match_expressions.iter().flatten() {
            if requirement.key != key {
                continue;
            }
            let values: BTreeSet<&str> = requirement
                .values
                .iter()
                .flatten()
                .map(String::as_str)
                .collect();
            allowed = match requirement.operator.as_str() {
                "In" => allowed.only(values),
                "NotIn" => allowed.except(values),
                "DoesNotExist" => allowed.only(BTreeSet::new()),
                _ => allowed,
            };
        }
        allowed
    }

    fn only(self, values: BTreeSet<&'s str>) -> Self {
        match self {
            Allowed::Any => Allowed::Only(values),
            Allowed::Only(before) => Allowed::Only(&before & &values),
            Allowed::Except(excluded) => Allowed::Only(&values - &excluded),
        }
    }

    fn except(self, values: BTreeSet<&'s str>) -> Self {
        match self {
            Allowed::Any => Allowed::Except(values),
            Allowed::Only(before) => Allowed::Only(&before - &values),
            Allowed::Except(excluded) => Allowed::Except(&excluded | &values),
        }
    }

    fn admits(&self, value: &str) -> bool {
        match self {
            Allowed::Any => true,
            Allowed::Only(values) => values.contains(value),
            Allowed::Except(values) => !values.contains(value),
        }
    }
}

/// The SidecarSets of one shared name, by the label one of their selectors pins.
#[derive(Debug)]
struct ByPin<Id> {
    /// key → value → SidecarSets whose primary pin it is.
    pinned: HashMap<String, HashMap<String, BTreeSet<Id>>>,
    /// SidecarSets whose selector pins nothing (or that have no such selector).
    unpinned: BTreeSet<Id>,
}

impl<Id> Default for ByPin<Id> {
    fn default() -> Self {
        ByPin {
            pinned: HashMap::new(),
            unpinned: BTreeSet::new(),
        }
    }
}

impl<Id: Ord + Clone> ByPin<Id> {
    fn insert(&mut self, id: Id, pin: Option<&(String, String)>) {
        match pin {
            Some((key, value)) => {
                let values = self.pinned.entry(key.clone()).or_default();
                values.entry(value.clone()).or_default().insert(id);
            }
            None => {
                self.unpinned.insert(id);
            }
        }
    }

    fn remove(&mut self, id: &Id, pin: Option<&(String, String)>) {
        match pin {
            Some((key, value)) => {
                let Some(values) = self.pinned.get_mut(key) else {
                    return;
                };
                if let Some(ids) = values.get_mut(value) {
                    ids.remove(id);
                    if ids.is_empty() {
                        values.remove(value);
                    }
                }
                if values.is_empty() {
                    self.pinned.remove(key);
                }
            }
            None => {
                self.unpinned.remove(id);
            }
        }
    }

    /// The groups of SidecarSets `selector` (`None`: no selector, which overlaps everything)
    /// may overlap, and how many they hold.
    fn candidates<'a>(
        &'a self,
        selector: Option<&LabelSelector>,
    ) -> (usize, Vec<&'a BTreeSet<Id>>) {
        let mut groups = vec![&self.unpinned];
        for (key, values) in &self.pinned {
            let allowed = selector.map_or(Allowed::Any, |s| Allowed::of(s, key));
            match &allowed {
                Allowed::Only(admitted) => {
                    groups.extend(admitted.iter().filter_map(|value| values.get(*value)));
                }
                _ => groups.extend(
                    values
                        .iter()
                        .filter(|(value, _)| allowed.admits(value))
                        .map(|(_, ids)| ids),
                ),
            }
        }
        (groups.iter().map(|ids| ids.len()).sum(), groups)
    }
}

/// The SidecarSets filed under one shared name, by their pod and by their namespace selector.
#[derive(Debug)]
struct Bucket<Id> {
    pods: ByPin<Id>,
    namespaces: ByPin<Id>,
    len: usize,
}

impl<Id> Default for Bucket<Id> {
    fn default() -> Self {
        Bucket {
            pods: ByPin::default(),
            namespaces: ByPin::default(),
            len: 0,
        }
    }
}

/// What the index keeps of a SidecarSet to find it again and remove it.
#[derive(Debug, Clone)]
struct Filed {
    names: BTreeSet<SharedName>,
    pod_pin: Option<(String, String)>,
    namespace_pin: Option<(String, String)>,
}

impl Filed {
    fn of(set: &SidecarSet) -> Self {
        Filed {
            names: shared_names(set),
            pod_pin: set.spec.selector.as_ref().and_then(primary_pin),
            namespace_pin: namespace_selector(set).and_then(|s| primary_pin(&s)),
        }
    }
}

/// SidecarSets by what a conflict between two of them needs; `Id` is the caller's handle.
#[derive(Debug)]
pub struct ConflictIndex<Id> {
    buckets: HashMap<SharedName, Bucket<Id>>,
    filed: HashMap<Id, Filed>,
}

impl<Id> Default for ConflictIndex<Id> {
    fn default() -> Self {
        ConflictIndex {
            buckets: HashMap::new(),
            filed: HashMap::new(),
        }
    }
}

impl<Id: Ord + Clone + std::hash::Hash> ConflictIndex<Id> {
    /// Files `set` as `id`, replacing what was filed as `id` before.
    pub fn insert(&mut self, id: Id, set: &SidecarSet) {
        self.remove(&id);
        let filed = Filed::of(set);
        for name in &filed.names {
            let bucket = self.buckets.entry(name.clone()).or_default();
            bucket.pods.insert(id.clone(), filed.pod_pin.as_ref());
            bucket
                .namespaces
                .insert(id.clone(), filed.namespace_pin.as_ref());
            bucket.len += 1;
        }
        self.filed.insert(id, filed);
    }

    pub fn remove(&mut self, id: &Id) {
        let Some(filed) = self.filed.remove(id) else {
            return;
        };
        for name in &filed.names {
            let Some(bucket) = self.buckets.get_mut(name) else {
                continue;
            };
            bucket.pods.remove(id, filed.pod_pin.as_ref());
            bucket.namespaces.remove(id, filed.namespace_pin.as_ref());
            bucket.len -= 1;
            if bucket.len == 0 {
                self.buckets.remove(name);
            }
        }
    }

    /// Every filed SidecarSet the conflict rule could name for `set`, and others; in `Id` order.
    pub fn candidates(&self, set: &SidecarSet) -> BTreeSet<Id> {
        let pod_selector = set.spec.selector.as_ref();
        let own_namespaces = namespace_selector(set);
        let mut found = BTreeSet::new();
        for name in shared_names(set) {
            let Some(bucket) = self.buckets.get(&name) else {
                continue;
            };
            // No pod selector overlaps every pod selector (as the rule reads an absent one as
            // empty); no namespace selector overlaps every namespace.
            let by_pods = bucket
                .pods
                .candidates(Some(pod_selector.unwrap_or(&EMPTY_SELECTOR)));
            let by_namespaces = match &own_namespaces {
                Some(selector) => bucket.namespaces.candidates(Some(selector)),
                None => (bucket.len, Vec::new()),
            };
            let (_, groups) = if by_namespaces.0 < by_pods.0 {
                by_namespaces
            } else {
                by_pods
            };
            for ids in groups {
                found.extend(ids.iter().cloned());
            }
        }
        found
    }
}

static EMPTY_SELECTOR: LabelSelector = LabelSelector {
    match_expressions: None,
    match_labels: None,
};

#[cfg(test)]
mod tests;
