//! Injection work that depends only on a SidecarSet, done once per SidecarSet instead of on every
//! request: the SidecarSet's entries of the hash annotations and the JSON of its volumes. It is
//! done the first time a pod the SidecarSet is injected into is admitted, not for every
//! SidecarSet of a snapshot: with 50,000 SidecarSets most have no pod being created at any one
//! time, and the work of all of them would cost about 75 MB. A request completes the entries with its admission time and hands the texts it
//! used to the patch ([`KnownJson`]), which copies them instead of serializing the values again.
//! The patched pod is the one the typed path produces, byte for byte (see the tests).

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use k8s_openapi::api::core::v1::Volume;

use super::revision::stamped_revision;
use crate::api::{SidecarSet, keys};
use crate::podmarks::sidecarset::{PreparedUpgradeSpec, UpgradeSpec};

/// The prepared work of a catalogue's SidecarSets, found by identity: only a SidecarSet of the
/// same snapshot (the very object) gets it.
#[derive(Debug, Default)]
pub struct PreparedSidecarSets {
    /// By the address of the SidecarSet, which the `Arc` beside keeps alive (so no other
    /// SidecarSet can have that address while the entry exists); the work once done.
    sets: HashMap<usize, (Arc<SidecarSet>, OnceLock<Arc<PreparedSidecarSet>>)>,
}

/// What one SidecarSet contributes to every pod it is injected into.
#[derive(Debug)]
pub struct PreparedSidecarSet {
    /// Its entries of `kruise.io/sidecarset-hash` and `-without-image`; `None` when the
    /// SidecarSet injects no container (it then has no entry).
    pub(super) hash: Option<PreparedUpgradeSpec>,
    pub(super) hash_without_image: Option<PreparedUpgradeSpec>,
    /// The JSON of each of its volumes, in `spec.volumes` order.
    volumes: Vec<String>,
}

fn address(set: &SidecarSet) -> usize {
    std::ptr::from_ref(set) as usize
}

impl PreparedSidecarSets {
    /// The work for `sets`, taken from `previous` for the SidecarSets it holds and had done.
    pub fn new(sets: &[Arc<SidecarSet>], previous: Option<&PreparedSidecarSets>) -> Self {
        let sets = sets
            .iter()
            .map(|set| {
                let reused = previous
                    .and_then(|p| p.sets.get(&address(set)))
                    .and_then(|(_, prepared)| prepared.get().cloned());
                let prepared = reused.map(OnceLock::from).unwrap_or_default();
                (address(set), (Arc::clone(set), prepared))
            })
            .collect();
        PreparedSidecarSets { sets }
    }

    /// The work for `set`, done now if not yet; `None` for a SidecarSet of another snapshot.
    pub fn get(&self, set: &SidecarSet) -> Option<&PreparedSidecarSet> {
        let (set, prepared) = self.sets.get(&address(set))?;
        Some(prepared.get_or_init(|| Arc::new(PreparedSidecarSet::new(set))))
    }

    /// How many SidecarSets' work is done.
    #[cfg(test)]
    fn done(&self) -> usize {
        self.sets
            .values()
            .filter(|(_, p)| p.get().is_some())
            .count()
    }
}

impl PreparedSidecarSet {
    fn new(set: &SidecarSet) -> Self {
        let injects = !set.containers().is_empty() || !set.init_containers().is_empty();
        let entry = |hash_key| {
            injects
                .then(|| PreparedUpgradeSpec::new(&upgrade_spec(set, hash_key, None)))
                .flatten()
        };
        PreparedSidecarSet {
            hash: entry(keys::SIDECARSET_HASH),
            hash_without_image: entry(keys::SIDECARSET_HASH_WITHOUT_IMAGE),
            volumes: set
                .volumes()
                .iter()
                .map(|volume| serde_json::to_string(volume).unwrap_or_default())
                .collect(),
        }
    }
}

/// The SidecarSet's entry of the hash annotation `hash_key`, stamped `now`.
pub(super) fn upgrade_spec(set: &SidecarSet, hash_key: &str, now: Option<&str>) -> UpgradeSpec {
    let controller_revision = if hash_key == keys::SIDECARSET_HASH {
        stamped_revision(set)
    } else {
        String::new()
    };
    UpgradeSpec {
        update_timestamp: now.map(str::to_string),
        hash: set.annotation(hash_key).unwrap_or("").to_string(),
        sidecar_set_name: set.name().to_string(),
        sidecar_list: Some(sidecar_names(set)),
        controller_revision,
    }
}

/// The names a SidecarSet's entry lists: its native init sidecars and its containers, sorted,
/// each once.
fn sidecar_names(set: &SidecarSet) -> Vec<String> {
    let mut names: Vec<String> = set
        .init_containers()
        .iter()
        .filter(|sidecar| sidecar.is_native_sidecar())
        .chain(set.containers())
        .map(|sidecar| sidecar.name().to_string())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// JSON text injection already holds for values it put into the pod: the patch writes these
/// texts instead of serializing the values again. Each text is the JSON of exactly the value it
/// is paired with, and the patch uses it only for a value equal to that one.
#[derive(Debug, Default)]
pub struct KnownJson<'a> {
    /// Annotation values and their JSON string literals.
    pub strings: Vec<(String, String)>,
    /// SidecarSet volumes and their JSON.
    pub volumes: Vec<(&'a Volume, &'a str)>,
}

impl<'a> KnownJson<'a> {
    /// The JSON string literal of `value`, if known.
    pub fn string(&self, value: &str) -> Option<&str> {
        let known = self.strings.iter().find(|(known, _)| known == value);
        known.map(|(_, literal)| literal.as_str())
    }

    /// The JSON of `volume`, if known.
    pub fn volume(&self, volume: &Volume) -> Option<&'a str> {
        let known = self.volumes.iter().find(|(known, _)| *known == volume);
        known.map(|(_, json)| *json)
    }

    /// Records the volumes of `set` (prepared as `prepared`).
    pub(super) fn add_volumes(&mut self, set: &'a SidecarSet, prepared: &'a PreparedSidecarSet) {
        let volumes = set.volumes().iter().zip(&prepared.volumes);
        self.volumes
            .extend(volumes.map(|(volume, json)| (volume, json.as_str())));
    }
}

#[cfg(test)]
mod tests;
