//! Update (OpenKruise `cloneset_update.go`): move in-flight in-place updates forward, advance
//! lifecycle states, then choose which pods go to the target revision this round and how —
//! in place through [`crate::inplace`], or by marking them for deletion and re-creation.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;

use super::numbers::Diff;
use super::{Action, Context, ListedPod, PodWrite, Purpose};
use crate::api::cloneset::CloneSet;
use crate::api::cloneset::{IN_PLACE_IF_POSSIBLE, IN_PLACE_ONLY};
use crate::podmarks::PodView;
use crate::updatesort::{flat_key, order};
use crate::workload::Workload;
use crate::workload::inplace::{FOREIGN_UPDATE_REQUEUE, InPlaceStart, SpecCache, StepOutcome};
use crate::workload::lifecycle::LifecycleState;
use crate::workload::{pod, push_requeue};

/// Step 1 of every update round: moves updates in flight and lifecycle states on
/// ([`crate::workload::inplace::InPlace::refresh`]); `wrote`: then nothing else is done.
pub(super) fn refresh(ctx: &Context<'_>) -> StepOutcome {
    ctx.in_place().refresh(
        &ctx.active,
        &ctx.facts,
        ctx.update_revision,
        &ctx.whole_pods,
    )
}

/// Steps 2-5: choose pods and start their updates. `Err` is the FailedUpdate message.
pub(super) fn update(
    ctx: &Context<'_>,
    diff: &Diff,
    out: &mut Vec<Action>,
    requeue: &mut Option<Duration>,
) -> Result<(), String> {
    if ctx.cloneset.spec.update_strategy.paused == Some(true) || diff.update_num == 0 {
        return Ok(());
    }
    let target = if diff.update_num > 0 {
        ctx.update_revision
    } else {
        ctx.current_revision
    };
    let needed = positions_needed(ctx, diff, target);
    let candidates = candidates(ctx, diff.update_num > 0, needed);
    let chosen = limit(ctx, candidates, diff, target);
    let strategy = ctx.cloneset.update_type();
    let in_place_strategy = matches!(strategy, IN_PLACE_IF_POSSIBLE | IN_PLACE_ONLY);
    let in_place = ctx.in_place();
    let mut specs = SpecCache::default();
    for index in chosen {
        // Every write below is built from the whole pod.
        let Some(p) = ctx.whole(ctx.active[index]) else {
            continue;
        };
        // One in-place update at a time per pod: a SidecarSet's, in progress, finishes first.
        if !ctx.facts[index].engine_idle && in_place.foreign_update(p).is_some() {
            push_requeue(requeue, Some(FOREIGN_UPDATE_REQUEUE));
            continue;
        }
        if in_place_strategy {
            match in_place.start(p, target, &mut specs) {
                InPlaceStart::Start(action) | InPlaceStart::Hook(action) => {
                    push_requeue(requeue, in_place.grace());
                    out.push(action);
                    continue;
                }
                // Held in PreparingUpdate by the inPlaceUpdate hook.
                InPlaceStart::Held => continue,
                InPlaceStart::NotInPlace(reason) if strategy == IN_PLACE_ONLY => {
                    return Err(format!(
                        "find Pod {} update strategy is InPlaceOnly but can not update in-place: {reason}",
                        pod::name(p)
                    ));
                }
                InPlaceStart::NotInPlace(_) => {}
            }
        }
        if pod::label(p, pod::SPECIFIED_DELETE).is_some() {
            continue;
        }
        let mut after = Pod::clone(p);
        after
            .metadata
            .labels
            .get_or_insert_with(BTreeMap::new)
            .insert(pod::SPECIFIED_DELETE.into(), "true".into());
        out.push(Action::WritePod {
            before: p.clone(),
            writes: vec![PodWrite::spec(after)],
            purpose: Purpose::Recreate {
                revision: target.to_string(),
            },
        });
    }
    Ok(())
}

/// Indexes into `ctx.active` of the pods that may be updated, in update order; only the first
/// `needed` are sure to be returned (and are all [`limit`] looks at).
fn candidates(ctx: &Context<'_>, forward: bool, needed: usize) -> Vec<usize> {
    let mut chosen: Vec<usize> = ctx
        .facts
        .iter()
        .enumerate()
        .filter(|(_, p)| p.at_update_revision != forward)
        .filter(|(_, p)| p.lifecycle != LifecycleState::PreparingDelete)
        .filter(|(_, p)| p.lifecycle == LifecycleState::Updated || !p.has_grace)
        .map(|(i, _)| i)
        .collect();
    let strategy = &ctx.cloneset.spec.update_strategy;
    if strategy.priority_strategy.is_none() && strategy.scatter_strategy.is_none() {
        return first_in_default_order(ctx, chosen, needed);
    }
    chosen = order::priority_and_scatter(
        &ctx.active,
        chosen,
        strategy.priority_strategy.as_ref(),
        strategy.scatter_strategy.as_deref(),
    );
    chosen.sort_by_key(|i| ctx.facts[*i].lifecycle != LifecycleState::PreparingUpdate);
    chosen
}

/// The default update order (PreparingUpdate first, then [`OrderKey`](crate::updatesort::order::OrderKey), then position: what the
/// stable sorts of [`candidates`] give) of `chosen`, cut to its first `needed`. Selecting them
/// before sorting spares sorting the thousands of candidates a large CloneSet's budget leaves
/// for later rounds.
fn first_in_default_order(ctx: &Context<'_>, chosen: Vec<usize>, needed: usize) -> Vec<usize> {
    if needed == 0 {
        return Vec::new();
    }
    let mut keyed = flat_key::flat_keys(chosen.into_iter().map(|i| {
        let p: &ListedPod = ctx.active[i];
        (
            p,
            ctx.facts[i].lifecycle == LifecycleState::PreparingUpdate,
            i,
        )
    }));
    first_sorted(&mut keyed, needed);
    keyed.into_iter().map(|key| key.position).collect()
}

/// Leaves the `needed` smallest of `items` in `items`, sorted. With a total order (the position
/// makes every key unique) that is exactly the head of the fully sorted list.
fn first_sorted<T: Ord>(items: &mut Vec<T>, needed: usize) {
    if needed == 0 {
        items.clear();
        return;
    }
    if needed < items.len() {
        items.select_nth_unstable(needed - 1);
        items.truncate(needed);
    }
    items.sort_unstable();
}

/// How many candidates [`limit`] can take at most: `|updateNum|`, and no more than the
/// unavailability budget leaves after the pods already unavailable at the target.
fn positions_needed(ctx: &Context<'_>, diff: &Diff, target: &str) -> usize {
    let wanted = usize::try_from(diff.update_num.abs()).unwrap_or(0);
    let budget = diff.update_max_unavailable - target_unavailable(ctx, target);
    wanted.min(usize::try_from(budget).unwrap_or(0))
}

fn target_unavailable(ctx: &Context<'_>, target: &str) -> i64 {
    ctx.facts
        .iter()
        .zip(&ctx.active)
        .filter(|(facts, p)| !facts.available && at_target(p, target))
        .count() as i64
}

/// The first `|updateNum|` candidates, as far as `updateMaxUnavailable` allows.
fn limit(ctx: &Context<'_>, candidates: Vec<usize>, diff: &Diff, target: &str) -> Vec<usize> {
    let mut unavailable = ctx.facts.iter().filter(|p| !p.available).count() as i64;
    let target_unavailable = target_unavailable(ctx, target);
    let wanted = usize::try_from(diff.update_num.abs()).unwrap_or(0);
    let mut taken = Vec::new();
    for index in candidates.into_iter().take(wanted) {
        if target_unavailable + taken.len() as i64 >= diff.update_max_unavailable {
            break;
        }
        if ctx.facts[index].available {
            if unavailable >= diff.update_max_unavailable {
                break;
            }
            unavailable += 1;
        }
        taken.push(index);
    }
    taken
}

fn at_target(p: &impl PodView, target: &str) -> bool {
    CloneSet::REVISIONS.pod_at(p, target)
}

#[cfg(test)]
mod tests;
