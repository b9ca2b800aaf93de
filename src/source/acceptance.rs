//! Which SidecarSets of a catalogue are served: each validated the way the validating webhook
//! would, against those accepted before it in name order, kept current one change at a time.
//!
//! The rule is [`super::accept_in_name_order`]'s: of two conflicting SidecarSets the one first by
//! name always wins, a second SidecarSet of an accepted name is a duplicate, and a canary's base
//! must be accepted before it. What changes is the cost. A SidecarSet is validated against the
//! accepted ones a [`ConflictIndex`] finds for it (and its base), not against all; and a change
//! re-judges only the SidecarSets whose verdict could follow from it — those after it in name
//! order that share a name with it, its canaries and its namesakes — in name order, so each sees
//! the final verdicts of those before it. A change that accepts or refuses one of those in turn
//! re-judges its own dependents the same way.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::hash::Hash;
use std::sync::Arc;

use super::Refused;
use super::conflict_index::ConflictIndex;
use crate::api::SidecarSet;
use crate::validate::field::aggregate;
use crate::validate::sidecarset::{AnyHistory, validate_sidecarset, validate_sidecarset_with};

/// The verdict on one SidecarSet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Accepted,
    Refused(String),
}

#[derive(Debug)]
struct Entry<O> {
    set: Arc<SidecarSet>,
    origin: O,
    /// `None` until judged.
    verdict: Option<Verdict>,
}

impl<O> Entry<O> {
    fn is_accepted(&self) -> bool {
        self.verdict == Some(Verdict::Accepted)
    }
}

/// The SidecarSets of a catalogue under keys `K` that sort as their names do (ties, for
/// SidecarSets of one name, in the order they were read), with where each came from (`O`, for
/// the duplicate message) and its verdict.
#[derive(Debug)]
pub struct Acceptance<K, O> {
    entries: BTreeMap<K, Entry<O>>,
    /// SidecarSet name → its entries.
    by_name: HashMap<String, BTreeSet<K>>,
    /// Base name → the canaries naming it.
    canaries: HashMap<String, BTreeSet<K>>,
    /// The accepted SidecarSets, which the ones after them are validated against.
    accepted: ConflictIndex<K>,
    /// Every SidecarSet, to find those a change may concern, whatever their verdict.
    all: ConflictIndex<K>,
    /// To be judged again, in key order.
    dirty: BTreeSet<K>,
    /// The revision a SidecarSet injects is resolved against a watched history afterwards (a
    /// cluster); without one (a directory) it is missing, as the validating webhook would say.
    revisions_resolved_later: bool,
}

impl<K, O> Default for Acceptance<K, O> {
    fn default() -> Self {
        Acceptance {
            entries: BTreeMap::new(),
            by_name: HashMap::new(),
            canaries: HashMap::new(),
            accepted: ConflictIndex::default(),
            all: ConflictIndex::default(),
            dirty: BTreeSet::new(),
            revisions_resolved_later: false,
        }
    }
}

impl<K, O> Acceptance<K, O> {
    /// An acceptance that leaves `injectionStrategy.revision` to the history, which resolves it
    /// and reports the sets whose revision cannot be found.
    pub fn resolving_revisions_later() -> Self {
        Acceptance {
            revisions_resolved_later: true,
            ..Acceptance::default()
        }
    }
}

impl<K: Ord + Clone + Hash, O: fmt::Display> Acceptance<K, O> {
    /// Adds `set` under `key`, or replaces what `key` held. Judged at the next [`Self::settle`].
    pub fn upsert(&mut self, key: K, set: Arc<SidecarSet>, origin: O) {
        self.forget(&key);
        self.by_name
            .entry(set.name().to_string())
            .or_default()
            .insert(key.clone());
        if let Some(base) = set.canary_base() {
            let canaries = self.canaries.entry(base.to_string()).or_default();
            canaries.insert(key.clone());
        }
        self.all.insert(key.clone(), &set);
        self.dirty.insert(key.clone());
        let entry = Entry {
            set,
            origin,
            verdict: None,
        };
        self.entries.insert(key, entry);
    }

    pub fn remove(&mut self, key: &K) {
        self.forget(key);
    }

    /// Holds `set` under `key` instead of the SidecarSet it held, keeping the verdict: for a
    /// newer reading that differs in nothing judged (a status write). `false` if `key` holds
    /// nothing.
    pub fn replace_reading(&mut self, key: &K, set: Arc<SidecarSet>) -> bool {
        match self.entries.get_mut(key) {
            Some(entry) => {
                entry.set = set;
                true
            }
            None => false,
        }
    }

    /// Takes the entry of `key` out of every index; if it was accepted, the SidecarSets it may
    /// have refused are judged again.
    fn forget(&mut self, key: &K) {
        let Some(entry) = self.entries.remove(key) else {
            return;
        };
        if entry.is_accepted() {
            self.accepted.remove(key);
            self.mark_dependents(key, &entry.set);
        }
        self.all.remove(key);
        remove_from(&mut self.by_name, entry.set.name(), key);
        if let Some(base) = entry.set.canary_base() {
            remove_from(&mut self.canaries, base, key);
        }
        self.dirty.remove(key);
    }

    /// Marks the SidecarSets after `key` whose verdict may depend on `set` (under `key`).
    fn mark_dependents(&mut self, key: &K, set: &SidecarSet) {
        let after = (std::ops::Bound::Excluded(key), std::ops::Bound::Unbounded);
        let sharing = self.all.candidates(set);
        let namesakes = self.by_name.get(set.name());
        let canaries = self.canaries.get(set.name());
        let dependents = sharing
            .range::<K, _>(after)
            .chain(
                namesakes
                    .into_iter()
                    .flat_map(|keys| keys.range::<K, _>(after)),
            )
            .chain(
                canaries
                    .into_iter()
                    .flat_map(|keys| keys.range::<K, _>(after)),
            );
        self.dirty.extend(dependents.cloned());
    }

    /// Judges every SidecarSet a change since the last call may concern. Returns the keys whose
    /// verdict is new or different.
    pub fn settle(&mut self) -> Vec<K> {
        let mut changed = Vec::new();
        while let Some(key) = self.dirty.pop_first() {
            let Some(entry) = self.entries.get(&key) else {
                continue;
            };
            let set = entry.set.clone();
            let verdict = self.judge(&key, &set);
            let entry = self.entries.get_mut(&key).expect("present above");
            let was_accepted = entry.is_accepted();
            if entry.verdict.as_ref() == Some(&verdict) {
                continue;
            }
            let accepted = verdict == Verdict::Accepted;
            entry.verdict = Some(verdict);
            changed.push(key.clone());
            if accepted != was_accepted {
                if accepted {
                    self.accepted.insert(key.clone(), &set);
                } else {
                    self.accepted.remove(&key);
                }
                self.mark_dependents(&key, &set);
            }
        }
        changed
    }

    /// The verdict on `set` under `key`, given the verdicts of the entries before it.
    fn judge(&self, key: &K, set: &SidecarSet) -> Verdict {
        let before = ..key;
        let accepted_before = |keys: Option<&BTreeSet<K>>| {
            keys.into_iter()
                .flat_map(|keys| keys.range::<K, _>(before))
                .find(|k| self.entries[*k].is_accepted())
                .cloned()
        };
        if let Some(first) = accepted_before(self.by_name.get(set.name())) {
            let origin = &self.entries[&first].origin;
            return Verdict::Refused(format!(
                "metadata.name: Duplicate value: {:?}: already defined in {origin}",
                set.name()
            ));
        }
        let mut others: BTreeSet<K> = self.accepted.candidates(set);
        others.retain(|k| k < key);
        if let Some(base) = set.canary_base()
            && let Some(base_key) = accepted_before(self.by_name.get(base))
        {
            others.insert(base_key);
        }
        let others: Vec<Arc<SidecarSet>> =
            others.iter().map(|k| self.entries[k].set.clone()).collect();
        let errors = if self.revisions_resolved_later {
            validate_sidecarset_with(set, None, &others, &AnyHistory)
        } else {
            validate_sidecarset(set, None, &others)
        };
        if errors.is_empty() {
            Verdict::Accepted
        } else {
            Verdict::Refused(aggregate(&errors))
        }
    }

    /// The accepted SidecarSets, in key order. Meaningful after [`Self::settle`].
    pub fn accepted(&self) -> impl Iterator<Item = &Arc<SidecarSet>> {
        self.entries
            .values()
            .filter(|entry| entry.is_accepted())
            .map(|entry| &entry.set)
    }

    pub fn verdict(&self, key: &K) -> Option<&Verdict> {
        self.entries.get(key)?.verdict.as_ref()
    }

    /// Accepted SidecarSets and refusals, each in key order.
    pub fn into_parts(mut self) -> (Vec<Arc<SidecarSet>>, Vec<Refused<O>>) {
        self.settle();
        let mut accepted = Vec::new();
        let mut refused = Vec::new();
        for entry in self.entries.into_values() {
            match entry.verdict {
                Some(Verdict::Refused(message)) => refused.push(Refused {
                    name: entry.set.name().to_string(),
                    origin: entry.origin,
                    message,
                }),
                _ => accepted.push(entry.set),
            }
        }
        (accepted, refused)
    }
}

fn remove_from<K: Ord>(map: &mut HashMap<String, BTreeSet<K>>, name: &str, key: &K) {
    if let Some(keys) = map.get_mut(name) {
        keys.remove(key);
        if keys.is_empty() {
            map.remove(name);
        }
    }
}

/// [`super::accept_in_name_order`]'s verdicts through the index: every candidate judged once.
pub fn accept_all<O: fmt::Display>(
    candidates: Vec<(Arc<SidecarSet>, O)>,
) -> (Vec<Arc<SidecarSet>>, Vec<Refused<O>>) {
    let mut acceptance = Acceptance::default();
    for (position, (set, origin)) in candidates.into_iter().enumerate() {
        let key = (set.name().to_string(), position);
        acceptance.upsert(key, set, origin);
    }
    acceptance.into_parts()
}

#[cfg(test)]
mod tests;
