//! The rolling update of a round (OpenKruise `stateful_set_control.go`
//! `rollingUpdateStatefulsetPods`, `handleSpecifiedDeletedPods`; `stateful_update_utils.go`
//! `sortPodsToUpdate`), HEAD semantics.
//!
//! The budget is `rollingUpdate.maxUnavailable` over *all* slots: a pod counts as unavailable
//! while it is unhealthy, its in-place update is not complete, or it has not been ready for
//! `minReadySeconds` — pods below the partition and pods not created yet included. Pods labelled
//! `apps.kruise.io/specified-delete` are deleted first (partition or not) as the budget allows.
//! Then the pods to update are taken highest index first down to the partition (with
//! `unorderedUpdate`: updated ones first, then the waiting ones by `priorityStrategy`), at most
//! `replicas − partition` of them. An unavailable pod is updated for free; an available one only
//! while the budget has room, and the first that finds none ends the phase.
//!
//! How a pod is updated — in place through the engine (or held by the `inPlaceUpdate` hook), or
//! deleted to be made again — is the planner's ([`Hands`]).

use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::time::Duration;

use super::ordinals::{Slot, Slots};
use super::pod::StatefulPodFacts;

/// What one update of a pod did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Updated {
    /// In place, or moved into `PreparingUpdate` / held there by the `inPlaceUpdate` hook.
    InPlace,
    /// Deleted (to be made again at the update revision).
    Deleted,
    /// Moved into `PreparingDelete` (or held there) by the `preDelete` hook instead.
    PreDeleting,
}

pub trait Hands {
    type Error;
    /// Deletes the pod (or holds it in `PreparingDelete`): `true` when it was really deleted.
    fn delete(&mut self, position: usize) -> Result<bool, Self::Error>;
    /// Updates the pod to the update revision.
    fn update(&mut self, position: usize) -> Result<Updated, Self::Error>;
    fn wait(&mut self, after: Duration);
    /// `unorderedUpdate.priorityStrategy` between two slots' pods (`None`: the pod made this
    /// round, with its template's labels): `Less` goes first.
    fn priority(&self, a: Option<usize>, b: Option<usize>) -> Ordering;
}

/// How much the round's counters drop for the pods it took away from a revision.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Taken {
    pub current: i32,
    pub updated: i32,
}

pub struct Rolling<'a> {
    pub slots: &'a Slots,
    /// By listed position.
    pub facts: &'a [StatefulPodFacts],
    /// Whether each listed pod's in-place update (if any) is complete.
    pub update_complete: &'a dyn Fn(usize) -> bool,
    /// Whether the pod a missing slot gets this round is made at the update revision (by slot
    /// index).
    pub new_pod_updated: &'a dyn Fn(usize) -> bool,
    /// `spec.replicas`.
    pub replicas: i64,
    /// `rollingUpdate.partition` (0 without).
    pub partition: i64,
    /// Scaled, at least 1.
    pub max_unavailable: i64,
    /// `rollingUpdate.unorderedUpdate` is set.
    pub unordered: bool,
}

impl Rolling<'_> {
    pub fn run<H: Hands>(&self, hands: &mut H) -> Result<Taken, H::Error> {
        let mut taken = Taken::default();
        let mut unavailable = self.unavailable(hands);
        let max = usize::try_from(self.max_unavailable).unwrap_or(usize::MAX);
        let specified = self.delete_specified(&mut unavailable, max, &mut taken, hands)?;
        for index in self.order(hands) {
            let Slot::Pod(position) = self.slots.slots[index] else {
                // A pod made this round is already at the revision it should have.
                continue;
            };
            let facts = &self.facts[position];
            if facts.at_update {
                continue;
            }
            if unavailable.len() >= max && !unavailable.contains(&index) {
                break;
            }
            if specified.contains(&index) || facts.terminating {
                continue;
            }
            let done = hands.update(position)?;
            unavailable.insert(index);
            if matches!(done, Updated::InPlace | Updated::Deleted) && facts.at_current {
                taken.current += 1;
            }
        }
        Ok(taken)
    }

    /// Slots whose pods count against the budget, with the waits of those that only need time.
    fn unavailable<H: Hands>(&self, hands: &mut H) -> BTreeSet<usize> {
        let mut out = BTreeSet::new();
        let mut shortest: Option<Duration> = None;
        for (index, slot) in self.slots.slots.iter().enumerate() {
            let position = match slot {
                Slot::Reserved => continue,
                Slot::Missing => {
                    out.insert(index);
                    continue;
                }
                Slot::Pod(position) => *position,
            };
            let facts = &self.facts[position];
            if !facts.healthy || !(self.update_complete)(position) {
                out.insert(index);
            } else if !facts.availability.is_available() {
                out.insert(index);
                if let Some(wait) = facts.availability.wait()
                    && shortest.is_none_or(|s| wait <= s)
                {
                    shortest = Some(wait);
                    hands.wait(wait);
                }
            }
        }
        out
    }

    /// `handleSpecifiedDeletedPods`: highest first, within the budget (an unavailable pod always).
    fn delete_specified<H: Hands>(
        &self,
        unavailable: &mut BTreeSet<usize>,
        max: usize,
        taken: &mut Taken,
        hands: &mut H,
    ) -> Result<BTreeSet<usize>, H::Error> {
        let mut specified = BTreeSet::new();
        for (index, slot) in self.slots.slots.iter().enumerate().rev() {
            let Slot::Pod(position) = *slot else { continue };
            let facts = &self.facts[position];
            if !facts.specified_delete {
                continue;
            }
            if unavailable.len() >= max && !unavailable.contains(&index) {
                continue;
            }
            specified.insert(index);
            if hands.delete(position)? {
                if facts.at_current {
                    taken.current += 1;
                } else if facts.at_update {
                    taken.updated += 1;
                }
            }
            unavailable.insert(index);
        }
        Ok(specified)
    }

    /// `sortPodsToUpdate`: slot indexes in update order, at most `replicas − partition`.
    fn order<H: Hands>(&self, hands: &H) -> Vec<usize> {
        let max_update = usize::try_from(self.replicas - self.partition).unwrap_or(0);
        if max_update == 0 {
            return Vec::new();
        }
        let replicas = self
            .slots
            .slots
            .iter()
            .enumerate()
            .rev()
            .filter(|(_, s)| s.is_replica());
        if !self.unordered {
            let floor = usize::try_from(self.partition).unwrap_or(0);
            return replicas
                .take_while(|(index, _)| *index >= floor)
                .map(|(index, _)| index)
                .take(max_update)
                .collect();
        }
        let (mut updated, mut waiting) = (Vec::new(), Vec::new());
        for (index, slot) in replicas {
            let done = match slot.pod() {
                Some(p) => self.facts[p].terminating || self.facts[p].names_update,
                None => (self.new_pod_updated)(index),
            };
            if done {
                updated.push(index);
            } else {
                waiting.push(index);
            }
        }
        waiting
            .sort_by(|a, b| hands.priority(self.slots.slots[*a].pod(), self.slots.slots[*b].pod()));
        updated.extend(waiting);
        updated.truncate(max_update);
        updated
    }
}

#[cfg(test)]
mod tests;
