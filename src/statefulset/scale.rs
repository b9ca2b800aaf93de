//! The scale phase of a round (OpenKruise `stateful_set_control.go` `updateStatefulSet`:
//! `processReplica` over the slots, the condemned pods' claims, `processCondemned`).
//!
//! *Monotonic* (`podManagementPolicy: OrderedReady`, the default): slots are visited in
//! ascending order and the round stops at the first that is missing (after creating it),
//! terminating or not available, so a pod is created only once every lower one is running and
//! ready, and a condemned pod is deleted, highest ordinal first, only once every slot is.
//! *Parallel*: every slot is visited, every missing pod created, every condemned pod deleted in
//! one round; `scaleStrategy.maxUnavailable` bounds how many unavailable pods the visit passes
//! before it breaks off (the rolling update still runs).
//!
//! What a visit does to a pod — create it with its claims, delete it (or hold it in
//! `PreparingDelete`), refresh an in-place update, fix its identity and claims — is the
//! planner's ([`Hands`]); this module decides which visits happen, in which order, and when the
//! round stops.

use std::time::Duration;

use super::ordinals::{Slot, Slots};
use super::pod::StatefulPodFacts;

/// What the phase does to pods. Positions are those of the listed pods; `index` is a slot.
pub trait Hands {
    type Error;
    /// Whether a stale claim (one still owned by a gone pod of that name) blocks creating the
    /// pod of slot `index`.
    fn creation_blocked(&mut self, index: usize) -> bool;
    /// Creates the pod of slot `index` with its missing claims.
    fn create(&mut self, index: usize) -> Result<(), Self::Error>;
    /// Deletes the pod, or moves it to `PreparingDelete` while its `preDelete` hook holds it;
    /// whether anything was written.
    fn delete(&mut self, position: usize) -> Result<bool, Self::Error>;
    /// A pending pod: creates its missing claims and sets their owners.
    fn create_missing_claims(&mut self, position: usize) -> Result<(), Self::Error>;
    /// Moves an in-place update and the lifecycle state of the pod on.
    fn refresh(&mut self, position: usize) -> Result<(), Self::Error>;
    /// Fixes the pod's identity labels, volumes and its claims' owners where they do not match.
    fn enforce_identity(&mut self, position: usize) -> Result<(), Self::Error>;
    /// Sets the owners of a condemned pod's claims per the retention policy.
    fn fix_condemned_claims(&mut self, position: usize) -> Result<(), Self::Error>;
    /// Look again after this long (a pod that becomes available then).
    fn wait(&mut self, after: Duration);
}

/// How the rest of the round goes after the scale phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// On to the rolling update.
    Continue,
    /// The round ends here (status still written).
    Stop,
}

/// What one slot visit decided.
enum Visit {
    Next,
    /// Monotonic: the round stops; Parallel: on to the next slot.
    Exit,
    /// The slot loop ends; the round goes on.
    Break,
}

/// The scale phase's budget of unavailable pods (`scaleStrategy.maxUnavailable`).
struct Budget(Option<i64>);

impl Budget {
    /// `decreaseAndCheckMaxUnavailable`: spends one; true once nothing is left.
    fn spend(&mut self) -> bool {
        match &mut self.0 {
            None => false,
            Some(left) => {
                *left -= 1;
                *left <= 0
            }
        }
    }
}

pub struct Scale<'a> {
    pub slots: &'a Slots,
    /// By listed position.
    pub facts: &'a [StatefulPodFacts],
    /// `podManagementPolicy` is not `Parallel`.
    pub monotonic: bool,
    /// `scaleStrategy.maxUnavailable` scaled (at least 1), if set.
    pub max_unavailable: Option<i64>,
}

impl Scale<'_> {
    /// Runs the phase.
    pub fn run<H: Hands>(&self, hands: &mut H) -> Result<Flow, H::Error> {
        let mut budget = Budget(self.max_unavailable);
        for index in 0..self.slots.slots.len() {
            match self.visit(index, &mut budget, hands)? {
                Visit::Next => {}
                Visit::Exit if self.monotonic => return Ok(Flow::Stop),
                Visit::Exit => {}
                Visit::Break => break,
            }
        }
        for &position in &self.slots.condemned {
            hands.fix_condemned_claims(position)?;
        }
        let first_unhealthy = self.first_unhealthy();
        for &position in &self.slots.condemned {
            if self.condemn(position, first_unhealthy, hands)? {
                return Ok(Flow::Stop);
            }
        }
        Ok(Flow::Continue)
    }

    /// `processReplica`.
    fn visit<H: Hands>(
        &self,
        index: usize,
        budget: &mut Budget,
        hands: &mut H,
    ) -> Result<Visit, H::Error> {
        let position = match self.slots.slots[index] {
            Slot::Reserved => return Ok(Visit::Next),
            Slot::Missing => {
                if hands.creation_blocked(index) {
                    return Ok(Visit::Exit);
                }
                hands.create(index)?;
                if self.monotonic {
                    return Ok(Visit::Exit);
                }
                return Ok(if budget.spend() {
                    Visit::Break
                } else {
                    Visit::Next
                });
            }
            Slot::Pod(position) => position,
        };
        let facts = &self.facts[position];
        if facts.finished() {
            // Failed or Succeeded: deleted, and made again once gone.
            if budget.spend() {
                return Ok(Visit::Break);
            }
            if !facts.terminating {
                hands.delete(position)?;
            }
            return Ok(Visit::Exit);
        }
        if facts.phase == super::pod::Phase::Pending {
            hands.create_missing_claims(position)?;
        }
        if facts.terminating {
            if self.monotonic {
                return Ok(Visit::Exit);
            }
            if budget.spend() {
                return Ok(Visit::Break);
            }
        }
        hands.refresh(position)?;
        if (self.monotonic || self.max_unavailable.is_some()) && !facts.availability.is_available()
        {
            if self.monotonic {
                if let Some(wait) = facts.availability.wait() {
                    hands.wait(wait);
                }
                return Ok(Visit::Exit);
            }
            if budget.spend() {
                if let Some(wait) = facts.availability.wait() {
                    hands.wait(wait);
                }
                return Ok(Visit::Break);
            }
        }
        hands.enforce_identity(position)?;
        Ok(Visit::Next)
    }

    /// The position of the unhealthy pod with the lowest ordinal, slots first (a missing slot is
    /// unhealthy and has no position: then no condemned pod is it).
    fn first_unhealthy(&self) -> Option<Option<usize>> {
        let mut first: Option<(i64, Option<usize>)> = None;
        let mut consider = |ordinal: i64, position: Option<usize>| {
            if first.is_none_or(|(lowest, _)| ordinal < lowest) {
                first = Some((ordinal, position));
            }
        };
        for (index, slot) in self.slots.slots.iter().enumerate() {
            match slot {
                Slot::Reserved => {}
                Slot::Missing => consider(self.slots.ordinal_at(index), None),
                Slot::Pod(p) if !self.facts[*p].healthy => {
                    consider(self.slots.ordinal_at(index), Some(*p))
                }
                Slot::Pod(_) => {}
            }
        }
        for &position in self.slots.condemned.iter().rev() {
            if !self.facts[position].healthy
                && let Some(ordinal) = self.slots.ordinals[position]
            {
                consider(ordinal, Some(position));
            }
        }
        first.map(|(_, position)| position)
    }

    /// `processCondemned`: whether the round stops.
    fn condemn<H: Hands>(
        &self,
        position: usize,
        first_unhealthy: Option<Option<usize>>,
        hands: &mut H,
    ) -> Result<bool, H::Error> {
        let facts = &self.facts[position];
        if facts.terminating {
            return Ok(self.monotonic);
        }
        let is_first_unhealthy = first_unhealthy == Some(Some(position));
        if self.monotonic && !is_first_unhealthy {
            if !facts.running_ready {
                return Ok(true);
            }
            if !facts.availability.is_available() {
                if let Some(wait) = facts.availability.wait() {
                    hands.wait(wait);
                }
                return Ok(true);
            }
        }
        let wrote = hands.delete(position)?;
        Ok(self.monotonic && wrote)
    }
}

#[cfg(test)]
mod tests;
