//! The cached claims a round reads, looked up once per round: each claim name
//! `<template>-<set>-<ordinal>` is built once (into one reused buffer) and looked up once, for
//! every ordinal of the replica range and of every listed pod; the round's steps then read them
//! by template and ordinal, without building a name or searching the cache again.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Arc;

use k8s_openapi::api::core::v1::PersistentVolumeClaim;

use super::Claims;
use super::ordinals::Slots;
use crate::workload::pvc::claim_name;

type Claim = Option<Arc<PersistentVolumeClaim>>;

pub(super) struct RoundClaims {
    templates: usize,
    /// By slot index, then template (a reserved slot without a listed pod is not looked up).
    in_range: Vec<Claim>,
    /// The ordinals of listed pods outside the range, then by template.
    outside: BTreeMap<i64, Vec<Claim>>,
}

impl RoundClaims {
    /// Looks up the claims of `templates` (names, in the round's order) for the slots and the
    /// listed pods' ordinals of `slots`.
    pub(super) fn of(
        claims: &dyn Claims,
        set_name: &str,
        templates: &[&str],
        slots: &Slots,
    ) -> RoundClaims {
        let width = templates.len();
        // Every slot but the reserved ones, and the slot of every listed pod (a condemned pod
        // at a reserved ordinal has claims too).
        let mut wanted: Vec<bool> = slots.slots.iter().map(|s| s.is_replica()).collect();
        let mut outside: BTreeMap<i64, Vec<Claim>> = BTreeMap::new();
        for &ordinal in slots.ordinals.iter().flatten() {
            match in_range_index(slots, ordinal) {
                Some(index) => wanted[index] = true,
                None => {
                    outside.insert(ordinal, vec![None; width]);
                }
            }
        }
        let mut in_range = vec![None; slots.slots.len() * width];
        let mut name = String::new();
        for (t, template) in templates.iter().enumerate() {
            name.clear();
            // The name of the empty suffix is the prefix every ordinal's name shares.
            name.push_str(&claim_name(template, set_name, ""));
            let prefix = name.len();
            let mut look_up = |ordinal: i64| {
                name.truncate(prefix);
                let _ = write!(name, "{ordinal}");
                claims.get(&name)
            };
            for (index, _) in wanted.iter().enumerate().filter(|(_, w)| **w) {
                in_range[index * width + t] = look_up(slots.ordinal_at(index));
            }
            for (ordinal, found) in &mut outside {
                found[t] = look_up(*ordinal);
            }
        }
        RoundClaims {
            templates: width,
            in_range,
            outside,
        }
    }

    /// The cached claim of template `template` (its position) and `ordinal`. An ordinal the
    /// round did not look up (neither in the range nor a listed pod's) has none.
    pub(super) fn get(
        &self,
        slots: &Slots,
        template: usize,
        ordinal: i64,
    ) -> Option<&Arc<PersistentVolumeClaim>> {
        let found = match in_range_index(slots, ordinal) {
            Some(index) => self.in_range.get(index * self.templates + template),
            None => self.outside.get(&ordinal).and_then(|f| f.get(template)),
        };
        found.and_then(Option::as_ref)
    }
}

/// The slot index of `ordinal` when the range spans it (reserved or not).
fn in_range_index(slots: &Slots, ordinal: i64) -> Option<usize> {
    let index = usize::try_from(ordinal.checked_sub(slots.range.start)?).ok()?;
    (index < slots.slots.len()).then_some(index)
}
