//! The partition / maxUnavailable / maxSurge arithmetic of the workloads, with the rounding
//! each kind's Go controller uses:
//!
//! - CloneSet: OpenKruise's scaler, fractional percentages allowed
//!   ([`crate::k8s::intstr::kruise_scaled_value`]), partition as [`partition_count`];
//! - Advanced StatefulSet: the deprecated apimachinery parser (`"5"` is 5 %), rounded down, at
//!   least 1 ([`floor_at_least_one`]);
//! - Advanced DaemonSet: `GetScaledValueFromIntOrPercent`, integer percentages only, rounded up
//!   ([`integer_percent`]).

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::k8s::intstr::{legacy_scaled_value, scaled_value};
pub use crate::rollout::budget::partition_count;

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
mod tests {
    use super::*;

    fn text(s: &str) -> IntOrString {
        IntOrString::String(s.into())
    }

    #[test]
    fn daemonset_percentages_round_up_and_take_integers_only() {
        assert_eq!(integer_percent(Some(&text("30%")), 4, true), 2);
        assert_eq!(integer_percent(Some(&text("30%")), 4, false), 1);
        assert_eq!(integer_percent(Some(&IntOrString::Int(3)), 4, true), 3);
        assert_eq!(integer_percent(Some(&text("12.5%")), 8, true), 0);
        assert_eq!(integer_percent(Some(&text("5")), 8, true), 0);
        assert_eq!(integer_percent(None, 8, true), 0);
    }

    #[test]
    fn statefulset_percentages_round_down_to_at_least_one() {
        let one = IntOrString::Int(1);
        assert_eq!(floor_at_least_one(None, &one, 10), Ok(1));
        assert_eq!(floor_at_least_one(Some(&text("25%")), &one, 10), Ok(2));
        assert_eq!(floor_at_least_one(Some(&text("5%")), &one, 10), Ok(1));
        // The deprecated parser reads a bare number as a percentage.
        assert_eq!(floor_at_least_one(Some(&text("50")), &one, 10), Ok(5));
        assert_eq!(
            floor_at_least_one(Some(&IntOrString::Int(0)), &one, 10),
            Ok(1)
        );
        assert!(floor_at_least_one(Some(&text("x%")), &one, 10).is_err());
    }
}
