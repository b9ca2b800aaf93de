//! `syncNodes`: the pods to delete go through the preDelete hook first, both lists are cut to
//! burstReplicas, and what is left becomes creations (the pod for each node) and deletions.

use super::daemon_pod::{new_pod, pod_template};
use super::numbers;
use super::round::Round;
use crate::workload::lifecycle::{self, PREPARING_DELETE};
use crate::workload::{Action, Purpose, Workload};

/// Appends the round's creations and deletions to `out`; returns whether it appended any.
pub fn sync_nodes(
    round: &Round<'_>,
    delete: Vec<usize>,
    create_on: Vec<&str>,
    out: &mut Vec<Action>,
) -> bool {
    let before = out.len();
    let delete = pre_delete(round, delete, out);
    let burst = numbers::burst_replicas(round.set, round.previous_desired);
    if !create_on.is_empty() {
        let template = pod_template(round.set, round.hash);
        for node in create_on.into_iter().take(burst) {
            out.push(Action::CreatePod {
                pod: Box::new(new_pod(round.set, &template, node)),
                revision: round.hash.to_string(),
            });
        }
    }
    for pod in delete.into_iter().take(burst) {
        out.push(Action::DeletePod {
            name: round.name(pod).to_string(),
        });
    }
    out.len() > before
}

/// Upstream `syncWithPreparingDelete`: with a preDelete hook, a pod the hook holds is moved to
/// `PreparingDelete` (once) instead of deleted; the others are returned for deletion.
fn pre_delete(round: &Round<'_>, delete: Vec<usize>, out: &mut Vec<Action>) -> Vec<usize> {
    let Some(hook) = lifecycle::pre_delete(round.set.lifecycle()) else {
        return delete;
    };
    let mut free = Vec::new();
    for pod in delete {
        // The hook reads labels and finalizers, and a hooked pod is written whole.
        let Some(whole) = round.whole(pod) else {
            continue;
        };
        if !lifecycle::hooked(whole, hook) {
            free.push(pod);
        } else if !round.facts[pod].pre_deleting {
            out.push(lifecycle::lifecycle_write(
                whole,
                PREPARING_DELETE,
                &round.now_text,
                Purpose::ScaleLifecycle,
            ));
        }
    }
    free
}

#[cfg(test)]
mod tests;
