//! The status counters (upstream `updateDaemonSetStatus`): per listed node, its oldest claimed
//! pod (terminating ones count) decides current, ready, available and updated.

use std::time::Duration;

use super::round::Round;
use crate::api::daemonset::DaemonSetStatus;

pub fn compute(round: &Round<'_>, update_observed_generation: bool) -> DaemonSetStatus {
    let mut counts = Counts::default();
    for node in &round.nodes {
        let mut pods = round.on_node(node.name()).to_vec();
        if !node.fit.should_run {
            counts.misscheduled += i32::from(!pods.is_empty());
            continue;
        }
        counts.desired += 1;
        if pods.is_empty() {
            continue;
        }
        counts.current += 1;
        round.sort_oldest_first(&mut pods);
        let facts = &round.facts[pods[0]];
        if facts.ready {
            counts.ready += 1;
            if facts.daemon_available(round.min_ready_seconds, round.now) {
                counts.available += 1;
            }
        }
        if facts.updated {
            counts.updated += 1;
        }
    }
    let previous = round.set.status.clone().unwrap_or_default();
    DaemonSetStatus {
        current_number_scheduled: counts.current,
        number_misscheduled: counts.misscheduled,
        desired_number_scheduled: counts.desired,
        number_ready: counts.ready,
        observed_generation: if update_observed_generation {
            round.set.metadata.generation
        } else {
            previous.observed_generation
        },
        updated_number_scheduled: counts.updated,
        number_available: Some(counts.available),
        number_unavailable: Some(counts.desired - counts.available),
        update_revision: round.hash.to_string(),
        collision_count: previous.collision_count,
        conditions: previous.conditions,
    }
}

#[derive(Default)]
struct Counts {
    desired: i32,
    current: i32,
    misscheduled: i32,
    ready: i32,
    available: i32,
    updated: i32,
}

/// Whether `status` differs from what the DaemonSet shows in a way upstream writes: a counter,
/// the hash, or an observed generation behind the object's.
pub fn changed(
    previous: Option<&DaemonSetStatus>,
    generation: Option<i64>,
    status: &DaemonSetStatus,
) -> bool {
    let Some(previous) = previous else {
        return true;
    };
    let counters = |s: &DaemonSetStatus| {
        (
            s.desired_number_scheduled,
            s.current_number_scheduled,
            s.number_misscheduled,
            s.number_ready,
            s.updated_number_scheduled,
            s.number_available.unwrap_or(0),
            s.number_unavailable.unwrap_or(0),
        )
    };
    counters(previous) != counters(status)
        || previous.observed_generation.unwrap_or(0) < generation.unwrap_or(0)
        || previous.update_revision != status.update_revision
}

/// Look again after `minReadySeconds` while some ready pod is not yet available.
pub fn requeue(round: &Round<'_>, status: &DaemonSetStatus) -> Option<Duration> {
    let wait = u64::try_from(round.min_ready_seconds)
        .ok()
        .filter(|s| *s > 0)?;
    (status.number_ready != status.number_available.unwrap_or(0)).then(|| Duration::from_secs(wait))
}

#[cfg(test)]
mod tests;
