//! `manage` (upstream `podsShouldBeOnNode` over every node): which nodes need a daemon pod and
//! which pods must go — failed ones (with backoff), ones waiting in `PreparingDelete`, surplus
//! ones, and all of them on nodes that stop qualifying.

use std::time::Duration;

use super::backoff::{self, FailedPodBackoff};
use super::numbers;
use super::round::{NodeFit, Round};
use crate::workload::Event;

/// What `manage` wants done; the deletions still go through the preDelete hook.
#[derive(Debug, Default, PartialEq)]
pub struct Manage<'a> {
    /// Nodes to create a pod on, in creation order.
    pub create_on: Vec<&'a str>,
    /// Indexes into the round's pods.
    pub delete: Vec<usize>,
    pub events: Vec<Event>,
    /// Failed-pod backoff keys to advance.
    pub backoff: Vec<String>,
    pub requeue: Option<Duration>,
}

impl Manage<'_> {
    fn wait(&mut self, delay: Duration) {
        let delay = delay.max(Duration::from_secs(1));
        self.requeue = Some(self.requeue.map_or(delay, |r| r.min(delay)));
    }
}

pub fn manage<'a>(round: &Round<'a>, backoff: &FailedPodBackoff) -> Manage<'a> {
    let mut out = Manage::default();
    let surge = numbers::allows_surge(round.set);
    let mut desired = 0;
    let mut with_new_pod = 0;
    for node in &round.nodes {
        on_node(round, node, surge, backoff, &mut out);
        if node.fit.should_run {
            desired += 1;
        }
        if matches!(
            updated_pods(round, round.on_node(node.name())),
            Some((Some(_), _))
        ) {
            with_new_pod += 1;
        }
    }
    // Pods meant for nodes that are gone and never scheduled: nothing else deletes them.
    for (node, pods) in &round.by_node {
        if round
            .nodes
            .binary_search_by(|n| n.name().cmp(node))
            .is_err()
        {
            out.delete.extend(
                pods.iter()
                    .filter(|p| !round.facts[**p].scheduled && !round.facts[**p].deleting),
            );
        }
    }
    if let Some(Ok(partition)) = numbers::partition(round.set, round.previous_desired)
        && round.set.update_type() == "RollingUpdate"
        && partition != 0
        && numbers::creates_progressively(round.set)
    {
        // Nodes are in name order already.
        let partition = partition.clamp(0, desired);
        let most = usize::try_from((desired - with_new_pod - partition).max(0)).unwrap_or(0);
        out.create_on.truncate(most);
    }
    out
}

/// Upstream `podsShouldBeOnNode`.
fn on_node<'a>(
    round: &Round<'a>,
    node: &NodeFit<'a>,
    surge: bool,
    backoff: &FailedPodBackoff,
    out: &mut Manage<'a>,
) {
    let pods = round.on_node(node.name());
    let fit = node.fit;
    if fit.should_run && pods.is_empty() {
        out.create_on.push(node.node.name());
        return;
    }
    if !fit.should_continue_running {
        out.delete
            .extend(pods.iter().filter(|p| !round.facts[**p].deleting));
        return;
    }
    let mut running = Vec::new();
    for &pod in pods {
        let facts = &round.facts[pod];
        if facts.deleting {
            continue;
        }
        if facts.failed {
            fail(round, node.name(), pod, backoff, out);
        } else if facts.pre_deleting {
            out.delete.push(pod);
        } else {
            running.push(pod);
        }
    }
    if !surge {
        // One pod per node: the oldest stays.
        if running.len() > 1 {
            round.sort_oldest_first(&mut running);
            out.delete.extend(&running[1..]);
        }
        return;
    }
    if running.len() <= 1 {
        if running.is_empty() && fit.should_run {
            out.create_on.push(node.node.name());
        }
        return;
    }
    // Surging: one new pod and one old pod may both stay, the rest go. Upstream keeps the oldest
    // of each; here the oldest available one, else the oldest ready one, where there is one, so
    // that updates landing back to back never delete a node's available pod for one that is not.
    round.sort_oldest_first(&mut running);
    running.sort_by_key(|p| {
        let facts = &round.facts[*p];
        (
            !facts.available(round.min_ready_seconds, round.now),
            !facts.ready,
        )
    });
    let (mut oldest_new, mut oldest_old) = (None, None);
    for pod in running {
        let slot = if round.facts[pod].updated {
            &mut oldest_new
        } else {
            &mut oldest_old
        };
        if slot.is_none() {
            *slot = Some(pod);
        } else {
            out.delete.push(pod);
        }
    }
    if let (Some(new), Some(old)) = (oldest_new, oldest_old) {
        let (new_facts, old_facts) = (&round.facts[new], &round.facts[old]);
        // An old pod that is not ready holds nothing up; else the new one must be available.
        if !old_facts.ready || new_facts.available(round.min_ready_seconds, round.now) {
            out.delete.push(old);
        } else if new_facts.ready && round.min_ready_seconds > 0 {
            out.wait(new_facts.available_in(round.min_ready_seconds, round.now));
        }
    }
}

/// A failed pod is deleted, at most once per backoff step of its node.
fn fail<'a>(
    round: &Round<'a>,
    node: &str,
    pod: usize,
    backoff: &FailedPodBackoff,
    out: &mut Manage<'a>,
) {
    let status = round.set.status.as_ref();
    let key = backoff::key(
        round.set.metadata.uid.as_deref().unwrap_or(""),
        status.and_then(|s| s.observed_generation).unwrap_or(0),
        node,
    );
    // A key advanced earlier this round (a second failed pod on the node) is backing off too.
    let remaining = if out.backoff.contains(&key) {
        Some(backoff::INITIAL)
    } else {
        backoff.remaining(&key, round.now)
    };
    if let Some(remaining) = remaining {
        out.wait(remaining);
        return;
    }
    let namespace = round.set.metadata.namespace.as_deref().unwrap_or("");
    out.events.push(Event::warning(
        "FailedDaemonPod",
        format!(
            "Found failed daemon pod {namespace}/{} on node {node}, will try to kill it",
            round.name(pod)
        ),
    ));
    out.backoff.push(key);
    out.delete.push(pod);
}

/// Upstream `findUpdatedPodsOnNode` over the node's live pods: the new pod and the old one, or
/// `None` when there are several of one kind (the manage loop prunes them first).
pub fn updated_pods(round: &Round<'_>, pods: &[usize]) -> Option<(Option<usize>, Option<usize>)> {
    let (mut new, mut old) = (None, None);
    for &pod in pods.iter().filter(|p| !round.facts[**p].deleting) {
        let slot = if round.facts[pod].updated {
            &mut new
        } else {
            &mut old
        };
        if slot.replace(pod).is_some() {
            return None;
        }
    }
    Some((new, old))
}

#[cfg(test)]
mod tests;
