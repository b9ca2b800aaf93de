//! The rolling update (upstream `rollingUpdate`): which old pods go this round, or, surging,
//! which nodes get their new pod next to the old one, within maxUnavailable / maxSurge.
//!
//! The nodes considered are those that should run a pod or have one, cut by the partition and
//! `rollingUpdate.selector` in upstream's order (names descending, nodes already updated or
//! updating first). Two rules differ from OpenKruise so that the budget holds:
//! - an old pod that is not available is replaced at once and counts against maxUnavailable, as
//!   in Kubernetes' own DaemonSet controller (Kruise replaces it for free, so updates landing
//!   within minReadySeconds of each other take another maxUnavailable nodes down each time);
//! - a node the partition or selector holds back counts against maxUnavailable when its pod is
//!   not available (Kruise does not look at it, and spends the whole budget beside it).

use super::manage::updated_pods;
use super::numbers;
use super::round::Round;
use crate::k8s::selector;

/// What the rolling update wants done this round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rollout<'a> {
    /// No surge: these old pods go (in place where possible, else deleted and re-created by
    /// `manage`), indexes into the round's pods.
    Replace(Vec<usize>),
    /// Surging: new pods on these nodes, and these old pods go (their new pod is available).
    Surge {
        create_on: Vec<&'a str>,
        delete: Vec<usize>,
    },
}

/// The budgets of this round: upstream `updatedDesiredNodeCounts`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    pub max_unavailable: i64,
    pub max_surge: i64,
}

pub fn budget(round: &Round<'_>) -> Result<Budget, String> {
    let desired = round.nodes.iter().filter(|n| n.fit.should_run).count();
    let desired = i32::try_from(desired).unwrap_or(i32::MAX);
    let mut max_unavailable = numbers::max_unavailable(round.set, desired).map_err(|e| {
        format!("couldn't get unavailable numbers: invalid value for MaxUnavailable: {e}")
    })?;
    let max_surge = numbers::max_surge(round.set, desired).map_err(|e| {
        format!("couldn't get unavailable numbers: invalid value for MaxSurge: {e}")
    })?;
    // A configuration allowing neither is read as one unavailable node, as upstream does.
    if desired > 0 && max_unavailable == 0 && max_surge == 0 {
        max_unavailable = 1;
    }
    Ok(Budget {
        max_unavailable,
        max_surge,
    })
}

/// The rollout's nodes (listed, and either should run a pod or have one) in update order,
/// split at the partition/selector cut: `(taken, held back)`.
pub fn nodes_to_update<'a>(round: &Round<'a>) -> Result<(Vec<&'a str>, Vec<&'a str>), String> {
    let fail = |e: String| format!("failed to filterDaemonPodsToUpdate: {e}");
    let partition = match numbers::partition(round.set, round.previous_desired) {
        Some(Ok(partition)) => partition,
        Some(Err(e)) => return Err(fail(format!("failed to get partition value: {e}"))),
        None => 0,
    };
    let chooser = round
        .set
        .spec
        .update_strategy
        .rolling_update
        .as_ref()
        .and_then(|r| r.selector.as_ref());
    let all: Vec<_> = round
        .nodes
        .iter()
        .filter(|n| n.fit.should_run || !round.on_node(n.name()).is_empty())
        .map(|n| n.node)
        .collect();
    let (mut updated, mut updating, mut chosen, mut held) = (vec![], vec![], vec![], vec![]);
    for node in all.iter().rev() {
        let name = node.name();
        match updated_pods(round, round.on_node(name)) {
            None | Some((Some(_), _)) => updated.push(name),
            Some((None, old)) if old.is_none_or(|p| round.facts[p].pre_deleting) => {
                updating.push(name)
            }
            Some((None, _)) => {
                let wanted = match chooser {
                    Some(chooser) => {
                        selector::matches(chooser, Some(&node.labels), "rollingUpdate.selector")
                            .map_err(|e| fail(e.to_string()))?
                    }
                    None => true,
                };
                if wanted {
                    chosen.push(name);
                } else {
                    held.push(name);
                }
            }
        }
    }
    let mut order = updated;
    order.append(&mut updating);
    order.append(&mut chosen);
    let most = usize::try_from((all.len() as i64 - partition).max(0)).unwrap_or(0);
    if order.len() > most {
        held.extend(order.drain(most..));
    }
    Ok((order, held))
}

pub fn rolling_update<'a>(round: &Round<'a>) -> Result<Rollout<'a>, String> {
    let budget = budget(round)?;
    let (nodes, held) = nodes_to_update(round)?;
    if budget.max_surge == 0 {
        Ok(Rollout::Replace(replace(round, budget, &nodes, &held)))
    } else {
        Ok(surge(round, budget, &nodes))
    }
}

/// How a node stands when nothing surges.
enum Standing {
    /// Counted against maxUnavailable this many times; nothing to choose here.
    Counted(i64),
    /// A live old pod and no new one: the pod to replace.
    Old { pod: usize, available: bool },
}

fn standing(round: &Round<'_>, node: &str) -> Standing {
    let available = |p: usize| round.facts[p].available(round.min_ready_seconds, round.now);
    let pre_deleting = |p: usize| round.facts[p].pre_deleting;
    let live = |p: Option<usize>| p.filter(|p| !pre_deleting(*p));
    let Some((new, old)) = updated_pods(round, round.on_node(node)) else {
        // Several pods of one kind: `manage` prunes them first.
        return Standing::Counted(1);
    };
    match (live(old), live(new), new) {
        // Neither, or both: `manage` creates or deletes first.
        (None, None, _) | (Some(_), Some(_), _) => Standing::Counted(1),
        (Some(old), None, None) => Standing::Old {
            pod: old,
            available: available(old),
        },
        // A new pod beside an absent or pre-deleting old one, or a pre-deleting new one.
        (_, _, new) => Standing::Counted(new.map_or(0, |new| {
            i64::from(!available(new)) + i64::from(pre_deleting(new))
        })),
    }
}

/// No surge: keep the nodes without an available pod at or below maxUnavailable. Old pods that
/// are not available are replaced whatever the budget (they count against it all the same).
fn replace(round: &Round<'_>, budget: Budget, nodes: &[&str], held: &[&str]) -> Vec<usize> {
    let mut unavailable = 0_i64;
    let mut replacements = Vec::new();
    let mut candidates = Vec::new();
    let each = nodes.iter().map(|n| (*n, true));
    for (node, taken) in each.chain(held.iter().map(|n| (*n, false))) {
        match standing(round, node) {
            Standing::Counted(n) => unavailable += n,
            Standing::Old { pod, available } if !available => {
                unavailable += 1;
                if taken {
                    replacements.push(pod);
                }
            }
            Standing::Old { pod, .. } if taken => candidates.push(pod),
            Standing::Old { .. } => {}
        }
    }
    let room = usize::try_from((budget.max_unavailable - unavailable).max(0)).unwrap_or(0);
    candidates.truncate(room);
    replacements.extend(candidates);
    replacements
}

/// Surge: a new pod next to each old one, at most maxSurge in flight.
fn surge<'a>(round: &Round<'a>, budget: Budget, nodes: &[&'a str]) -> Rollout<'a> {
    let available = |p: usize| round.facts[p].available(round.min_ready_seconds, round.now);
    let mut surging = 0_i64;
    let mut allowed = Vec::new();
    let mut candidates = Vec::new();
    let mut delete = Vec::new();
    for node in nodes {
        let Some((new, old)) = updated_pods(round, round.on_node(node)) else {
            surging += 1;
            continue;
        };
        let Some(old) = old.filter(|p| !round.facts[*p].pre_deleting) else {
            continue;
        };
        match new {
            None if !available(old) => allowed.push(*node),
            None => candidates.push(*node),
            Some(new) if !available(new) || round.facts[new].pre_deleting => surging += 1,
            Some(_) => delete.push(old),
        }
    }
    let room = usize::try_from((budget.max_surge - surging).max(0)).unwrap_or(0);
    candidates.truncate(room);
    allowed.extend(candidates);
    Rollout::Surge {
        create_on: allowed,
        delete,
    }
}

#[cfg(test)]
mod tests;
