//! One reconcile round of a SidecarSet rollout, as a pure decision: which pods the SidecarSet
//! matches, its status, and which pods to upgrade now (and which cannot be upgraded in place).

use std::collections::BTreeMap;
use std::sync::Arc;

use super::pod_state::{PodFacts, SidecarSetView, carries_sidecars, pod_facts};
use crate::api::{SidecarSet, SidecarSetStatus, SidecarSetUpdateStrategy, keys};
use crate::inject::sidecar::{InjectError, namespace_matches};
use crate::k8s::selector::{self, Labels, SelectorError};
use crate::podmarks::PodView;
use crate::podmarks::sidecarset::is_injected;
use crate::updatesort::budget::{max_unavailable_count, partition_count, take_within_budget};
use crate::updatesort::order::{OrderKey, priority_order};
use crate::updatesort::scatter::{expand_terms, scatter};

#[derive(Debug, thiserror::Error)]
pub enum RolloutError {
    #[error("sidecarset {sidecarset}: {source}")]
    Selector {
        sidecarset: String,
        source: SelectorError,
    },
}

/// The SidecarSet's pods (§2.4): active, in a selected namespace, selected by `spec.selector`,
/// listing the SidecarSet in `kruise.io/sidecarset-injected-list`, and still carrying its
/// sidecars. `namespace_labels` answers with the labels of a Namespace, `None` when unknown.
/// Returns shared handles; no pod is copied.
pub fn matched_pods<'n, P: PodView>(
    set: &SidecarSet,
    pods: &[Arc<P>],
    namespace_labels: impl Fn(&str) -> Option<&'n Labels>,
) -> Result<Vec<Arc<P>>, RolloutError> {
    let selector_error = |source| RolloutError::Selector {
        sidecarset: set.name().to_string(),
        source,
    };
    // A nil selector selects nothing; an empty one everything (Kubernetes' selector conversion).
    let Some(pod_selector) = set.spec.selector.as_ref() else {
        return Ok(Vec::new());
    };
    let view = SidecarSetView::new(set);
    let mut matched = Vec::new();
    for pod in pods {
        let namespace = pod.namespace();
        let in_namespace =
            namespace_matches(set, namespace_labels(namespace)).map_err(|error| match error {
                InjectError::Selector { source, .. } => selector_error(source),
                other => selector_error(SelectorError {
                    field: "spec.namespaceSelector".into(),
                    message: other.to_string(),
                }),
            })?;
        if !in_namespace
            || !pod.is_active()
            || !is_injected(pod.as_ref(), view.name)
            || !carries_sidecars(pod.as_ref(), &view)
        {
            continue;
        }
        if selector::matches(pod_selector, pod.labels(), "spec.selector").map_err(selector_error)? {
            matched.push(Arc::clone(pod));
        }
    }
    Ok(matched)
}

/// The facts of every matched pod, in the same order.
pub fn facts_of<P: PodView>(set: &SidecarSet, pods: &[Arc<P>]) -> Vec<PodFacts> {
    let view = SidecarSetView::new(set);
    pods.iter()
        .map(|pod| pod_facts(pod.as_ref(), &view))
        .collect()
}

/// The status the SidecarSet should report (§2.5), computed before this round's updates.
/// `latestRevision` and `collisionCount` belong to the revision history, `conditions` to what
/// the webhooks can serve: all three are carried over from `current`.
pub fn compute_status(
    set: &SidecarSet,
    facts: &[PodFacts],
    current: Option<&SidecarSetStatus>,
) -> SidecarSetStatus {
    let count = |keep: fn(&PodFacts) -> bool| {
        i32::try_from(facts.iter().filter(|f| keep(f)).count()).unwrap_or(i32::MAX)
    };
    let updated_ready = count(|f| f.updated && f.available());
    SidecarSetStatus {
        observed_generation: set.metadata.generation,
        matched_pods: count(|_| true),
        updated_pods: count(|f| f.updated),
        ready_pods: count(PodFacts::available),
        updated_ready_pods: (updated_ready != 0).then_some(updated_ready),
        latest_revision: current.and_then(|s| s.latest_revision.clone()),
        collision_count: Some(current.and_then(|s| s.collision_count).unwrap_or(0)),
        conditions: current.and_then(|s| s.conditions.clone()),
    }
}

/// Why a round upgrades nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Halt {
    /// `updateStrategy.type: NotUpdate`.
    NotUpdate,
    /// `updateStrategy.paused: true`.
    Paused,
    /// Every matched pod is updated.
    Complete,
    /// Idle hot-upgrade copies are being reset to the empty image (`reset_idle`): the next round
    /// goes on.
    ResettingIdleCopies,
}

/// What one round decides. Pods are named by their index in the matched-pod slice.
#[derive(Debug, Clone, PartialEq)]
pub struct RoundPlan {
    pub status: SidecarSetStatus,
    pub halted: Option<Halt>,
    /// Pods to upgrade now, in upgrade order.
    pub upgrade: Vec<usize>,
    /// Pods whose sidecars changed in more than their images: they need a recreate, and get the
    /// `SidecarSetUpgradable` condition set to False.
    pub not_upgradable: Vec<usize>,
    /// Pods whose idle hot-upgrade copies go back to the empty image (see
    /// [`super::upgrade::reset_idle_copies`]).
    pub reset_idle: Vec<usize>,
    /// What the round read off each matched pod, in the same order.
    pub facts: Vec<PodFacts>,
}

/// Plans one round over the SidecarSet's matched pods (as [`matched_pods`] returns them).
pub fn plan_round<P: PodView>(set: &SidecarSet, matched: &[Arc<P>]) -> RoundPlan {
    let facts = facts_of(set, matched);
    let mut plan = plan_with_facts(set, matched, &facts);
    plan.facts = facts;
    plan
}

fn plan_with_facts<P: PodView>(
    set: &SidecarSet,
    matched: &[Arc<P>],
    facts: &[PodFacts],
) -> RoundPlan {
    let status = compute_status(set, facts, set.status.as_ref());
    let default_strategy = SidecarSetUpdateStrategy::default();
    let strategy = set
        .spec
        .update_strategy
        .as_ref()
        .unwrap_or(&default_strategy);
    let reset_idle: Vec<usize> = (0..facts.len())
        .filter(|&i| facts[i].idle_copy_to_reset)
        .collect();
    let halted = if strategy.type_.as_deref() == Some(keys::NOT_UPDATE) {
        Some(Halt::NotUpdate)
    } else if strategy.paused == Some(true) {
        Some(Halt::Paused)
    } else if !reset_idle.is_empty() {
        Some(Halt::ResettingIdleCopies)
    } else if status.updated_pods >= status.matched_pods {
        Some(Halt::Complete)
    } else {
        None
    };
    let mut plan = RoundPlan {
        status,
        halted,
        upgrade: Vec::new(),
        not_upgradable: Vec::new(),
        reset_idle: Vec::new(),
        facts: Vec::new(),
    };
    if halted == Some(Halt::ResettingIdleCopies) {
        plan.reset_idle = reset_idle;
        return plan;
    }
    if halted.is_some() {
        return plan;
    }

    let (waiting, not_upgradable) = candidates(strategy, matched, facts);
    plan.not_upgradable = not_upgradable;

    let partition = partition_count(strategy.partition.as_ref(), matched.len());
    let Some(kept) = waiting.len().checked_sub(partition).filter(|&n| n > 0) else {
        return plan;
    };
    let unavailable = facts.iter().filter(|f| f.updated && !f.available()).count();
    let max_unavailable = max_unavailable_count(strategy.max_unavailable.as_ref(), matched.len());
    let is_ready = |i: usize| facts.get(i).is_some_and(|f| f.ready);
    let whole_order_read = strategy.priority_strategy.is_some()
        || strategy
            .scatter_strategy
            .as_ref()
            .is_some_and(|t| !t.is_empty());
    let waiting = if whole_order_read {
        let mut waiting = upgrade_order(strategy, matched, waiting);
        waiting.truncate(kept);
        waiting
    } else {
        // The budget stops at the first ready pod past it, so no pod beyond every pod not ready
        // plus the budget's ready ones can be taken: only those are sorted.
        let not_ready = waiting.iter().filter(|&&i| !is_ready(i)).count();
        let reachable = not_ready + max_unavailable.saturating_sub(unavailable);
        first_in_order(matched, waiting, kept.min(reachable))
    };
    plan.upgrade = take_within_budget(&waiting, is_ready, unavailable, max_unavailable);
    plan
}

/// Splits the pods not yet updated and selected by the canary selector into (waiting, not
/// upgradable); pods still finishing an earlier in-place update are in neither (§2.6).
fn candidates<P: PodView>(
    strategy: &SidecarSetUpdateStrategy,
    pods: &[Arc<P>],
    facts: &[PodFacts],
) -> (Vec<usize>, Vec<usize>) {
    let selected = |pod: &P| match &strategy.selector {
        None => true,
        // An invalid selector selects nothing.
        Some(canary) => {
            selector::matches(canary, pod.labels(), "spec.updateStrategy.selector").unwrap_or(false)
        }
    };
    let mut waiting = Vec::new();
    let mut not_upgradable = Vec::new();
    for (index, (pod, facts)) in pods.iter().zip(facts).enumerate() {
        if facts.updated || !selected(pod) {
            continue;
        }
        if !facts.upgradable {
            not_upgradable.push(index);
        } else if !facts.upgrade_in_progress {
            waiting.push(index);
        }
    }
    (waiting, not_upgradable)
}

/// The first `count` of `waiting` in the default order (§2.7): what [`upgrade_order`] gives
/// without a priority or scatter strategy, cut to `count`, without ordering the rest.
pub fn first_in_order<P: PodView>(
    pods: &[Arc<P>],
    waiting: Vec<usize>,
    count: usize,
) -> Vec<usize> {
    // The index breaks ties as the stable sort of `upgrade_order` does (`waiting` ascends).
    let mut keyed: Vec<(OrderKey<'_>, usize)> = waiting
        .into_iter()
        .filter(|&i| i < pods.len())
        .map(|i| (OrderKey::of(pods[i].as_ref()), i))
        .collect();
    if count == 0 {
        return Vec::new();
    }
    if count < keyed.len() {
        keyed.select_nth_unstable(count - 1);
        keyed.truncate(count);
    }
    keyed.sort_unstable();
    keyed.into_iter().map(|(_, i)| i).collect()
}

/// Orders waiting pods (§2.7): default order, then `priorityStrategy` (stable), then
/// `scatterStrategy`, whose percentages and `*` values look at every matched pod.
pub fn upgrade_order<P: PodView>(
    strategy: &SidecarSetUpdateStrategy,
    pods: &[Arc<P>],
    mut waiting: Vec<usize>,
) -> Vec<usize> {
    waiting.retain(|&i| i < pods.len());
    waiting.sort_by_cached_key(|&i| OrderKey::of(pods[i].as_ref()));
    if let Some(priority) = &strategy.priority_strategy {
        waiting.sort_by(|&a, &b| priority_order(priority, pods[a].labels(), pods[b].labels()));
    }
    let scatter_terms = strategy.scatter_strategy.as_deref().unwrap_or(&[]);
    if !scatter_terms.is_empty() {
        let labels: Vec<Option<&BTreeMap<String, String>>> =
            pods.iter().map(|p| p.labels()).collect();
        let terms = expand_terms(scatter_terms, &labels);
        waiting = scatter(&terms, &labels, waiting);
    }
    waiting
}

#[cfg(test)]
mod tests;
