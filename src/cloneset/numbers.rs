//! The numbers one round works with (OpenKruise's `calculateDiffsWithExpectation`): how many pods
//! to create or delete, on which side of the update, and how many pods the update may take.
//!
//! "New" pods are at the update revision, "old" ones at any other. Surge pods are extra pods
//! created beyond `replicas` so that an update or a deletion never dips below availability.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::k8s::intstr::kruise_scaled_value;
use crate::updatesort::budget::{integer_percent, partition_count};

/// The CloneSet's knobs as pod counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Limits {
    pub replicas: i64,
    /// Pods kept at the current revision.
    pub partition: i64,
    pub max_surge: i64,
    pub max_unavailable: i64,
    /// `scaleStrategy.maxUnavailable`: creations stop while this many pods are unavailable.
    pub scale_max_unavailable: i64,
}

/// `updateStrategy.maxUnavailable` default.
const DEFAULT_MAX_UNAVAILABLE: &str = "20%";

impl Limits {
    /// Limits of a CloneSet spec. Unreadable values count as 0 (as upstream, where validation
    /// normally refuses them first).
    pub fn of(spec: &crate::api::cloneset::CloneSetSpec) -> Limits {
        let replicas = i64::from(spec.replicas.unwrap_or(1).max(0));
        let total = i32::try_from(replicas).unwrap_or(i32::MAX);
        let strategy = &spec.update_strategy;
        let partition = partition_count(
            strategy.partition.as_ref(),
            usize::try_from(replicas).unwrap_or(0),
        ) as i64;
        // maxSurge takes integer percentages only; a paused CloneSet adds no surge.
        let max_surge = if strategy.paused == Some(true) {
            0
        } else {
            integer_percent(strategy.max_surge.as_ref(), replicas, true)
        };
        let default_unavailable = IntOrString::String(DEFAULT_MAX_UNAVAILABLE.into());
        let max_unavailable = kruise_scaled_value(
            Some(
                strategy
                    .max_unavailable
                    .as_ref()
                    .unwrap_or(&default_unavailable),
            ),
            total,
            max_surge == 0,
        )
        .unwrap_or(0);
        let scale_max_unavailable = match spec.scale_strategy.max_unavailable.as_ref() {
            None => i64::from(i32::MAX),
            some => kruise_scaled_value(some, total, true).unwrap_or(0),
        };
        Limits {
            replicas,
            partition,
            max_surge,
            max_unavailable: max_unavailable.max(0),
            scale_max_unavailable: scale_max_unavailable.max(0),
        }
    }
}

/// Pod counts of one side (new or old).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Side {
    pub count: i64,
    /// In `PreparingDelete`.
    pub pre_deleting: i64,
    /// Not pre-deleting.
    pub active: i64,
    /// Active and marked for deletion.
    pub to_delete: i64,
    /// Active, not marked, and not available.
    pub unavailable: i64,
}

/// The round's decisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Diff {
    pub use_surge: i64,
    pub use_surge_old: i64,
    pub scale_up: i64,
    pub scale_up_old: i64,
    pub scale_up_limit: i64,
    pub scale_down: i64,
    pub scale_down_old: i64,
    pub delete_ready_limit: i64,
    /// > 0: pods to move to the update revision; < 0: back to the current one.
    pub update_num: i64,
    pub update_max_unavailable: i64,
}

/// `partition_rollback`: the update revision differs from the current one and pods may be moved
/// back when the partition grows (OpenKruise gate `CloneSetPartitionRollback`, off by default).
pub fn diff(limits: &Limits, new: &Side, old: &Side, partition_rollback: bool) -> Diff {
    let r = limits.replicas;
    let p = limits.partition;
    let s = limits.max_surge;
    let u = limits.max_unavailable;
    let pods = new.count + old.count;
    let mut old_diff = old.active - p;
    let mut new_diff = new.active - (r - p);
    let total_unavailable = new.pre_deleting + old.pre_deleting + new.unavailable + old.unavailable;
    if !partition_rollback {
        old_diff = old_diff.max(0);
        new_diff = new_diff.min(0);
    }
    let to_delete = new.to_delete + old.to_delete;

    let mut out = Diff::default();
    if s > 0 {
        let scale_surge = if to_delete > 0 {
            (total_unavailable + to_delete - u).max(0).min(to_delete)
        } else {
            0
        };
        let scale_surge_old = (scale_surge - new.to_delete).max(0);
        let (mut update_surge, mut update_surge_old) = (0, 0);
        if (old_diff > 0 && new_diff < 0) || (old_diff < 0 && new_diff > 0) {
            if old_diff.abs() <= new_diff.abs() {
                update_surge = old_diff.abs();
                update_surge_old = if old_diff < 0 { update_surge } else { 0 };
            } else {
                update_surge = new_diff.abs();
                update_surge_old = if new_diff > 0 { update_surge } else { 0 };
            }
        }
        (out.use_surge, out.use_surge_old) = if scale_surge >= update_surge {
            let surge = s.min(scale_surge);
            (surge, surge.min(scale_surge_old))
        } else {
            let surge = s.min(update_surge);
            (surge, surge.min(update_surge_old))
        };
    }

    let want_total = r + out.use_surge;
    let want_old = p + out.use_surge_old;
    out.scale_up = (want_total - pods).max(0);
    out.scale_up_old = (want_old - old.count).max(0);
    out.scale_up_limit = out
        .scale_up
        .min((limits.scale_max_unavailable - total_unavailable).max(0));
    out.scale_down = (pods - old.to_delete - new.to_delete - want_total).max(0);
    out.scale_down_old = (old.count - old.to_delete - want_old).max(0);
    if to_delete > 0 || out.scale_down > 0 {
        out.delete_ready_limit = (u + (pods - r) - total_unavailable).max(0);
    }
    out.update_num = if old_diff.abs() <= new_diff.abs() {
        old_diff
    } else {
        -new_diff
    };
    if out.update_num != 0 {
        out.update_max_unavailable = u + pods - r;
    }
    out
}

#[cfg(test)]
mod tests;
