//! Ordinals (OpenKruise `stateful_set_utils.go` `getParentNameAndOrdinal`,
//! `getStatefulSetReplicasRange`, `pkg/util/api/asts.go`): which ordinals a set keeps pods at, and
//! which slot each pod it owns falls into.
//!
//! A set with `replicas: R` keeps the first R ordinals from `start` that `reserveOrdinals` does
//! not reserve: with R 4 and ordinals 1 and 3 reserved, the range is `[0, 6)` and the pods are
//! `web-0, web-2, web-4, web-5`. A pod outside the range, or at a reserved ordinal, is
//! *condemned*: scaled in, highest ordinal first.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::api::statefulset::StatefulSet;
use crate::k8s::intstr::parse_range;

/// The most slots one round plans over. A range past it (a huge `replicas`, or a reserved range
/// of billions of ordinals below it) is refused with an error instead of allocating and walking
/// it.
pub const MAX_SLOTS: i64 = 1 << 20;

/// The parent set's name and the ordinal of a pod name, as Go's `(.*)-([0-9]+)$` and a 32-bit
/// `ParseInt` read it: `web-0` → `("web", 0)`, `web-01` → `("web", 1)`; `None` when the name
/// does not end in `-<digits>` or the digits do not fit 32 bits.
pub fn parent_and_ordinal(name: &str) -> Option<(&str, i64)> {
    let digits = name.len() - name.bytes().rev().take_while(u8::is_ascii_digit).count();
    if digits == name.len() || digits == 0 || name.as_bytes()[digits - 1] != b'-' {
        return None;
    }
    let ordinal: i32 = name[digits..].parse().ok()?;
    Some((&name[..digits - 1], i64::from(ordinal)))
}

/// The ordinal of a pod of `set_name`: `None` for a pod of another set or without an ordinal.
pub fn ordinal_of(set_name: &str, pod_name: &str) -> Option<i64> {
    parent_and_ordinal(pod_name)
        .filter(|(parent, _)| *parent == set_name)
        .map(|(_, ordinal)| ordinal)
}

/// Whether a name that reads as `<parent>-<ordinal>` is exactly `<parent>-<ordinal>`: its digits
/// have no leading zero.
pub fn is_canonical(name: &str) -> bool {
    let digits = &name[name.len() - name.bytes().rev().take_while(u8::is_ascii_digit).count()..];
    digits.len() == 1 || !digits.starts_with('0')
}

/// Whether `text` is `ordinal.to_string()`, checked without writing it.
pub fn is_ordinal_text(text: &str, ordinal: i64) -> bool {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(digits) => (true, digits),
        None => (false, text),
    };
    !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits.len() == 1 || !digits.starts_with('0'))
        && negative == (ordinal < 0)
        && digits.parse::<u64>() == Ok(ordinal.unsigned_abs())
}

/// `<set>-<ordinal>`.
pub fn pod_name(set_name: &str, ordinal: i64) -> String {
    format!("{set_name}-{ordinal}")
}

/// The ordinals `reserveOrdinals` reserves, as inclusive ranges sorted and merged.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reserved {
    ranges: Vec<(i64, i64)>,
}

impl Reserved {
    /// OpenKruise's `GetReserveOrdinalIntSet`: ints as they are, `"a-b"` strings as `a..=b`; one
    /// string that is not such a range voids the whole list (nothing is reserved).
    pub fn of(items: Option<&[IntOrString]>) -> Reserved {
        let mut ranges = Vec::new();
        for item in items.unwrap_or(&[]) {
            match item {
                IntOrString::Int(n) => ranges.push((i64::from(*n), i64::from(*n))),
                IntOrString::String(text) => match parse_range(text) {
                    Ok(range) => ranges.push(range),
                    Err(_) => return Reserved::default(),
                },
            }
        }
        ranges.sort_unstable();
        let mut merged: Vec<(i64, i64)> = Vec::with_capacity(ranges.len());
        for (start, end) in ranges {
            match merged.last_mut() {
                Some(last) if start <= last.1.saturating_add(1) => last.1 = last.1.max(end),
                _ => merged.push((start, end)),
            }
        }
        Reserved { ranges: merged }
    }

    pub fn contains(&self, ordinal: i64) -> bool {
        let after = self.ranges.partition_point(|(start, _)| *start <= ordinal);
        after > 0 && self.ranges[after - 1].1 >= ordinal
    }

    /// The end of the reserved run that holds `ordinal`, or `ordinal` when it is not reserved.
    fn run_end(&self, ordinal: i64) -> Option<i64> {
        let after = self.ranges.partition_point(|(start, _)| *start <= ordinal);
        (after > 0 && self.ranges[after - 1].1 >= ordinal).then(|| self.ranges[after - 1].1)
    }
}

/// `[start, end)`: the ordinals a set's replicas may take, with the reserved ones among them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicaRange {
    pub start: i64,
    pub end: i64,
    pub reserved: Reserved,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "spec.replicas {replicas} with its reserveOrdinals spans {slots} ordinals, more than the {MAX_SLOTS} this controller plans over"
)]
pub struct TooManySlots {
    pub replicas: i64,
    pub slots: i64,
}

impl ReplicaRange {
    /// The range of `set`: `start` is 0 (OpenKruise reads `spec.ordinals.start` only behind the
    /// `StatefulSetStartOrdinal` gate, off by default); `end` is one past the `replicas`-th
    /// unreserved ordinal from `start`.
    pub fn of(set: &StatefulSet) -> Result<ReplicaRange, TooManySlots> {
        let replicas = i64::from(set.spec.replicas.unwrap_or(1));
        Self::new(
            0,
            replicas,
            Reserved::of(set.spec.reserve_ordinals.as_deref()),
        )
    }

    pub fn new(start: i64, replicas: i64, reserved: Reserved) -> Result<Self, TooManySlots> {
        let mut end = start;
        let mut counted = 0;
        while counted < replicas {
            match reserved.run_end(end) {
                Some(run_end) => end = run_end.saturating_add(1),
                None => {
                    // Unreserved ordinals up to the next reserved run are counted at once.
                    let next_reserved = reserved
                        .ranges
                        .iter()
                        .map(|(s, _)| *s)
                        .find(|s| *s > end)
                        .unwrap_or(i64::MAX);
                    let take = (next_reserved - end).min(replicas - counted);
                    counted += take;
                    end += take;
                }
            }
            if end - start > MAX_SLOTS {
                return Err(TooManySlots {
                    replicas,
                    slots: end - start,
                });
            }
        }
        Ok(ReplicaRange {
            start,
            end,
            reserved,
        })
    }

    /// Number of slots, reserved ones included.
    pub fn len(&self) -> usize {
        usize::try_from(self.end - self.start).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// OpenKruise `podInOrdinalRange`: in `[start, end)` and not reserved. A pod outside is
    /// *scaled down* for the PVC retention policy.
    pub fn holds(&self, ordinal: i64) -> bool {
        ordinal >= self.start && ordinal < self.end && !self.reserved.contains(ordinal)
    }

    pub fn ordinal_at(&self, index: usize) -> i64 {
        self.start + index as i64
    }

    pub fn index_of(&self, ordinal: i64) -> Option<usize> {
        self.holds(ordinal).then(|| (ordinal - self.start) as usize)
    }
}

/// What one slot of the range holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// A reserved ordinal: no pod belongs here.
    Reserved,
    /// No pod yet: the round creates one.
    Missing,
    /// The pod at this position of the listed pods.
    Pod(usize),
}

impl Slot {
    pub fn pod(self) -> Option<usize> {
        match self {
            Slot::Pod(i) => Some(i),
            _ => None,
        }
    }

    /// A pod is there or is to be made (Go's non-nil slot).
    pub fn is_replica(self) -> bool {
        self != Slot::Reserved
    }
}

/// The listed pods of a set sorted into the range's slots and the condemned rest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slots {
    pub range: ReplicaRange,
    /// Indexed by `ordinal - start`.
    pub slots: Vec<Slot>,
    /// Positions of pods outside the range or at reserved ordinals, highest ordinal first.
    pub condemned: Vec<usize>,
    /// The ordinal of each listed pod (`None`: not one of the set's names; such pods are left
    /// alone, as OpenKruise does).
    pub ordinals: Vec<Option<i64>>,
}

impl Slots {
    /// Sorts `names` (the listed pods' names, by position) into `range`. Two pods reading as one
    /// ordinal (`web-1`, `web-01`): the one named `<set>-<ordinal>` holds the slot, the other is
    /// left alone.
    pub fn of<'a>(
        set_name: &str,
        range: ReplicaRange,
        names: impl IntoIterator<Item = &'a str>,
    ) -> Slots {
        let mut slots: Vec<Slot> = (0..range.len())
            .map(|i| {
                if range.reserved.contains(range.ordinal_at(i)) {
                    Slot::Reserved
                } else {
                    Slot::Missing
                }
            })
            .collect();
        let mut condemned: Vec<(i64, usize)> = Vec::new();
        let mut ordinals = Vec::new();
        let mut canonical = Vec::new();
        for (position, name) in names.into_iter().enumerate() {
            let ordinal = ordinal_of(set_name, name);
            ordinals.push(ordinal);
            canonical.push(ordinal.is_some() && is_canonical(name));
            let Some(ordinal) = ordinal else { continue };
            match range.index_of(ordinal) {
                Some(index) => match slots[index] {
                    Slot::Pod(other) if canonical[other] => {}
                    _ => slots[index] = Slot::Pod(position),
                },
                None => condemned.push((ordinal, position)),
            }
        }
        condemned.sort_by(|a, b| b.cmp(a));
        Slots {
            range,
            slots,
            condemned: condemned.into_iter().map(|(_, p)| p).collect(),
            ordinals,
        }
    }

    pub fn ordinal_at(&self, index: usize) -> i64 {
        self.range.ordinal_at(index)
    }
}

#[cfg(test)]
mod tests;
