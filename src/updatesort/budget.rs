//! How many pods a round may update, with the rounding each kind's Go controller uses:
//! `partition` pods are left alone, and updates stop before more than `maxUnavailable` pods are
//! unavailable.
//!
//! - SidecarSet and CloneSet: OpenKruise's scaler, fractional percentages allowed
//!   ([`crate::k8s::intstr::kruise_scaled_value`]), partition as [`partition_count`]; the
//!   SidecarSet's `maxUnavailable` as [`max_unavailable_count`];
//! - Advanced StatefulSet: the deprecated apimachinery parser (`"5"` is 5 %), rounded down, at
//!   least 1 ([`floor_at_least_one`]);
//! - Advanced DaemonSet: `GetScaledValueFromIntOrPercent`, integer percentages only, rounded up
//!   ([`integer_percent`]).

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::k8s::intstr::{kruise_scaled_value, legacy_scaled_value, scaled_value};

/// The number of waiting pods `partition` keeps on the old sidecars (HEAD semantics): an int as
/// is; a percentage of `matched` rounded up, except that a percentage below 100% never keeps every
/// pod of a set larger than one; clamped to `[0, matched]`. An unreadable value counts as 0.
pub fn partition_count(partition: Option<&IntOrString>, matched: usize) -> usize {
    let total = i32::try_from(matched).unwrap_or(i32::MAX);
    let mut kept = kruise_scaled_value(partition, total, true).unwrap_or(0);
    let is_partial_percent = matches!(partition, Some(IntOrString::String(text)) if text != "100%");
    if total > 1 && is_partial_percent && kept == i64::from(total) {
        kept -= 1;
    }
    usize::try_from(kept.clamp(0, i64::from(total))).unwrap_or(0)
}

/// `maxUnavailable` (default 1) as a pod count: an int as is; `N%` of `matched` rounded up.
/// A string that is not an integer percentage (`"5"`, `"2.5%"`) counts as 0, as upstream.
pub fn max_unavailable_count(max_unavailable: Option<&IntOrString>, matched: usize) -> usize {
    let total = i64::try_from(matched).unwrap_or(i64::MAX);
    let count = match max_unavailable {
        None => 1,
        Some(IntOrString::Int(n)) => i64::from(*n),
        Some(IntOrString::String(text)) => match text
            .strip_suffix('%')
            .and_then(|digits| digits.parse::<i64>().ok())
        {
            Some(percent) => (percent as f64 * total as f64 / 100.0).ceil() as i64,
            None => 0,
        },
    };
    usize::try_from(count).unwrap_or(0)
}

/// Picks from `candidates` (already ordered, partition already applied): a candidate that is not
/// ready costs nothing and is always taken; a ready one is taken while fewer than `max_unavailable`
/// pods are unavailable, and the first ready one that does not fit ends the walk.
pub fn take_within_budget(
    candidates: &[usize],
    is_ready: impl Fn(usize) -> bool,
    mut unavailable: usize,
    max_unavailable: usize,
) -> Vec<usize> {
    let mut taken = Vec::new();
    for &candidate in candidates {
        if !is_ready(candidate) {
            taken.push(candidate);
            continue;
        }
        if unavailable >= max_unavailable {
            break;
        }
        taken.push(candidate);
        unavailable += 1;
    }
    taken
}

/// Kubernetes' `GetScaledValueFromIntOrPercent` ([`scaled_value`]): `N%` with an integer N
/// only; unset, unreadable or negative values count 0.
pub fn integer_percent(value: Option<&IntOrString>, total: i64, round_up: bool) -> i64 {
    let total = i32::try_from(total).unwrap_or(if total < 0 { i32::MIN } else { i32::MAX });
    value
        .and_then(|value| scaled_value(Some(value), total, round_up).ok())
        .map_or(0, |n| n.max(0))
}

/// The Advanced StatefulSet's `maxUnavailable` (update and scale): `value` (unset: `default`)
/// read by the deprecated parser, a percentage of `total` rounded down, and at least 1. An
/// unreadable value is an error in Go too (the round fails with it).
pub fn floor_at_least_one(
    value: Option<&IntOrString>,
    default: &IntOrString,
    total: i32,
) -> Result<i64, String> {
    Ok(legacy_scaled_value(value.unwrap_or(default), total, false)?.max(1))
}

#[cfg(test)]
mod tests;
