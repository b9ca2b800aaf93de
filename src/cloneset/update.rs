//! Update (OpenKruise `cloneset_update.go`): move in-flight in-place updates forward, advance
//! lifecycle states, then choose which pods go to the target revision this round and how —
//! in place through [`crate::inplace`], or by marking them for deletion and re-creation.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::Pod;

use super::facts::{Lifecycle, PodFacts};
use super::hooks;
use super::listed::missing_template_hash;
use super::numbers::Diff;
use super::pod::{self, NORMAL, PREPARING_NORMAL, PREPARING_UPDATE, UPDATED, UPDATING};
use super::revision::{label_names_revision, short_hash};
use super::scale::{lifecycle_write, set_lifecycle};
use super::{Action, Context, Event, ListedPod, PodAfter, PodWrite, Purpose};
use crate::api::cloneset::{IN_PLACE_IF_POSSIBLE, IN_PLACE_ONLY};
use crate::api::keys;
use crate::inplace::{
    self, CalculateOptions, EngineOptions, EnvFromMetadata, Revision, Step, batch, conditions,
    env_hash, state,
};
use crate::podmarks::PodView;
use crate::rollout::order::{OrderKey, priority_order};
use crate::rollout::scatter::scatter;

mod order;

/// A CloneSet owns its pods' revision label. Image batches complete on imageID changes; env
/// changes read from metadata complete when the node agent's record shows the restarted
/// container with the env hash the pod's metadata gives.
pub const ENGINE: EngineOptions<'static> = EngineOptions {
    revision_label: Some(keys::CONTROLLER_REVISION_HASH),
    hasher: &env_hash::MetadataEnvHasher,
};

/// [`inplace::at_rest`] with the CloneSet's engine options: whether the in-place engine has
/// nothing to do on `p` and no update of any owner is in flight there. It reads the pod only,
/// not the time.
///
/// The update state stays on a pod after its update, so after one in-place rollout every pod
/// carries one; reading it (two JSON documents) is most of a round's work on such a CloneSet.
pub fn engine_at_rest(p: &Pod) -> bool {
    inplace::at_rest(p, &ENGINE)
}

/// Step 1 of every update round: returns whether any pod was written (then nothing else is).
pub(super) fn refresh(
    ctx: &Context<'_>,
    out: &mut Vec<Action>,
    requeue: &mut Option<Duration>,
) -> bool {
    let mut wrote = false;
    for (listed, facts) in ctx.active.iter().zip(&ctx.facts) {
        // Most pods of a large CloneSet have nothing in flight and nothing to move on.
        if facts.engine_idle && !lifecycle_may_move(facts) {
            continue;
        }
        let Some(p) = ctx.whole(listed) else {
            continue;
        };
        // Another owner's update (a SidecarSet's batches) is driven by that owner.
        let step = if facts.engine_idle || foreign_update(ctx, p).is_some() {
            Ok(Step::Idle)
        } else {
            inplace::next_step(p, None, &ENGINE, ctx.now)
        };
        match step {
            Ok(step) => {
                push_requeue(requeue, step.requeue_after());
                if let Some(write) = engine_write(step) {
                    out.push(Action::WritePod {
                        before: p.clone(),
                        writes: vec![write],
                        purpose: Purpose::Refresh,
                    });
                    wrote = true;
                    continue;
                }
            }
            // An unreadable state annotation is reported and the pod treated as carrying none.
            Err(error) => out.push(Action::Event(Event::warning(
                "InvalidInPlaceUpdateState",
                format!("pod {}: {error}", pod::name(p)),
            ))),
        }
        if let Some(after) = lifecycle_transition(ctx, p) {
            out.push(Action::WritePod {
                before: p.clone(),
                writes: vec![PodWrite::spec(after)],
                purpose: Purpose::Lifecycle,
            });
            wrote = true;
        }
    }
    wrote
}

/// How soon to look again at a pod another owner is upgrading in place.
const FOREIGN_UPDATE_REQUEUE: Duration = Duration::from_secs(5);

/// The revision of an in-place update in progress on `p` that is not one of this CloneSet's.
fn foreign_update(ctx: &Context<'_>, p: &Pod) -> Option<String> {
    inplace::in_flight_revision(p).filter(|revision| {
        !ctx.history
            .iter()
            .any(|r| r.metadata.name.as_deref() == Some(revision.as_str()))
    })
}

fn push_requeue(requeue: &mut Option<Duration>, next: Option<Duration>) {
    if let Some(next) = next.filter(|d| !d.is_zero()) {
        *requeue = Some(requeue.map_or(next, |r| r.min(next)));
    }
}

fn engine_write(step: Step) -> Option<PodWrite> {
    let status = matches!(step.write()?, inplace::Write::Status(_));
    let pod = step.into_pod()?;
    Some(if status {
        PodWrite::status(pod)
    } else {
        PodWrite::spec(pod)
    })
}

/// Whether [`lifecycle_transition`] may write: only these lifecycle states move on by
/// themselves, and only a missing `pod-template-hash` is added to the others. A pod for which it
/// is true is one [`super::listed::read_whole_every_round`] keeps whole.
fn lifecycle_may_move(facts: &PodFacts) -> bool {
    facts.missing_template_hash || facts.lifecycle.moves_on_by_itself()
}

/// The lifecycle label the pod should move to now, plus a missing `pod-template-hash`.
fn lifecycle_transition(ctx: &Context<'_>, p: &Pod) -> Option<Pod> {
    let update_hook = hooks::in_place_update(ctx.cloneset);
    // After an update a pod waits in Updated until the inPlaceUpdate hook's markers are back.
    let after_update = || match update_hook {
        Some(hook) if !hooks::all_hooked(p, hook) => UPDATED,
        _ => NORMAL,
    };
    let next = match pod::lifecycle(p) {
        PREPARING_NORMAL => match hooks::pre_normal(ctx.cloneset) {
            Some(hook) => hooks::all_hooked(p, hook).then_some(NORMAL),
            None => pod::scheduled(p).then_some(NORMAL),
        },
        PREPARING_UPDATE if pod::at_revision(p, ctx.update_revision) => Some(after_update()),
        UPDATING if inplace::pod_update_completed(p, ENGINE.hasher).is_ok() => Some(after_update()),
        UPDATED => (after_update() == NORMAL).then_some(NORMAL),
        _ => None,
    };
    // Most pods of a large CloneSet need nothing: no copy of them is made.
    if next.is_none() && !missing_template_hash(p) {
        return None;
    }
    let mut after = p.clone();
    if let Some(state) = next {
        set_lifecycle(&mut after, state, &ctx.now_text);
    }
    if pod::label(p, pod::POD_TEMPLATE_HASH).is_none()
        && let Some(revision) = pod::label(p, keys::CONTROLLER_REVISION_HASH)
    {
        let hash = short_hash(revision).to_string();
        after
            .metadata
            .labels
            .get_or_insert_with(BTreeMap::new)
            .insert(pod::POD_TEMPLATE_HASH.into(), hash);
    }
    (after != *p).then_some(after)
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
    let in_place = matches!(strategy, IN_PLACE_IF_POSSIBLE | IN_PLACE_ONLY);
    let mut specs = SpecCache::default();
    for index in chosen {
        // Every write below is built from the whole pod.
        let Some(p) = ctx.whole(ctx.active[index]) else {
            continue;
        };
        // One in-place update at a time per pod: a SidecarSet's, in progress, finishes first.
        if !ctx.facts[index].engine_idle && foreign_update(ctx, p).is_some() {
            push_requeue(requeue, Some(FOREIGN_UPDATE_REQUEUE));
            continue;
        }
        if in_place {
            match in_place_update(ctx, p, target, &mut specs) {
                Ok(Some(action)) => {
                    push_requeue(requeue, grace(ctx));
                    out.push(action);
                    continue;
                }
                // Held in PreparingUpdate by the inPlaceUpdate hook.
                Ok(None) => continue,
                Err(reason) if strategy == IN_PLACE_ONLY => {
                    return Err(format!(
                        "find Pod {} update strategy is InPlaceOnly but can not update in-place: {reason}",
                        pod::name(p)
                    ));
                }
                Err(_) => {}
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

fn grace(ctx: &Context<'_>) -> Option<Duration> {
    let seconds = ctx
        .cloneset
        .spec
        .update_strategy
        .in_place_update_strategy
        .as_ref()
        .and_then(|s| s.grace_period_seconds)
        .unwrap_or(0);
    (seconds > 0).then(|| Duration::from_secs(seconds.unsigned_abs().into()))
}

/// Indexes into `ctx.active` of the pods that may be updated, in update order; only the first
/// `needed` are sure to be returned (and are all [`limit`] looks at).
fn candidates(ctx: &Context<'_>, forward: bool, needed: usize) -> Vec<usize> {
    let mut chosen: Vec<usize> = ctx
        .facts
        .iter()
        .enumerate()
        .filter(|(_, p)| p.at_update_revision != forward)
        .filter(|(_, p)| p.lifecycle != Lifecycle::PreparingDelete)
        .filter(|(_, p)| p.lifecycle == Lifecycle::Updated || !p.has_grace)
        .map(|(i, _)| i)
        .collect();
    let strategy = &ctx.cloneset.spec.update_strategy;
    if strategy.priority_strategy.is_none() && strategy.scatter_strategy.is_none() {
        return first_in_default_order(ctx, chosen, needed);
    }
    let keys: Vec<OrderKey<'_>> = ctx.active.iter().map(|p| OrderKey::of(*p)).collect();
    chosen.sort_by(|a, b| keys[*a].cmp(&keys[*b]));
    if let Some(priority) = strategy.priority_strategy.as_ref() {
        chosen.sort_by(|a, b| {
            priority_order(priority, ctx.active[*a].labels(), ctx.active[*b].labels())
        });
    }
    if let Some(terms) = strategy.scatter_strategy.as_deref() {
        let labels: Vec<_> = ctx.active.iter().map(|p| p.labels()).collect();
        chosen = scatter(terms, &labels, chosen);
    }
    chosen.sort_by_key(|i| ctx.facts[*i].lifecycle != Lifecycle::PreparingUpdate);
    chosen
}

/// The default update order (PreparingUpdate first, then [`OrderKey`], then position: what the
/// stable sorts of [`candidates`] give) of `chosen`, cut to its first `needed`. Selecting them
/// before sorting spares sorting the thousands of candidates a large CloneSet's budget leaves
/// for later rounds.
fn first_in_default_order(ctx: &Context<'_>, chosen: Vec<usize>, needed: usize) -> Vec<usize> {
    if needed == 0 {
        return Vec::new();
    }
    let mut keyed = order::flat_keys(chosen.into_iter().map(|i| {
        let p: &ListedPod = ctx.active[i];
        (p, ctx.facts[i].lifecycle == Lifecycle::PreparingUpdate, i)
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
    pod::label(p, keys::CONTROLLER_REVISION_HASH).is_some_and(|l| label_names_revision(l, target))
}

/// The writes that start an in-place update of `p` to `target` (or move it into
/// `PreparingUpdate` for the inPlaceUpdate hook; `None` while the hook holds it there), or why it
/// cannot be done in place.
fn in_place_update(
    ctx: &Context<'_>,
    p: &Arc<Pod>,
    target: &str,
    specs: &mut SpecCache,
) -> Result<Option<Action>, String> {
    match pod::lifecycle(p) {
        "" | PREPARING_NORMAL | NORMAL | UPDATED | PREPARING_UPDATE | UPDATING => {}
        other => {
            return Err(format!(
                "not allowed to in-place update pod {} in state {other}",
                pod::name(p)
            ));
        }
    }
    let old = ctx.history.iter().find(|r| {
        r.metadata
            .name
            .as_deref()
            .is_some_and(|n| pod::at_revision(p, n))
    });
    let new = ctx
        .history
        .iter()
        .find(|r| r.metadata.name.as_deref() == Some(target));
    // Only a node agent restarts a container whose env reads changed metadata; without one
    // the new value reaches the env through a new pod.
    let env_from_metadata = if env_hash::node_agent_reports(p) {
        EnvFromMetadata::InPlace
    } else {
        EnvFromMetadata::Recreate
    };
    let spec = specs.get(ctx, old, new, env_from_metadata, target)?;
    // In place is possible: the inPlaceUpdate hook gets its say first (§8.5).
    if let Some(hook) = hooks::in_place_update(ctx.cloneset) {
        match pod::lifecycle(p) {
            "" | PREPARING_NORMAL | NORMAL if hooks::hooked(p, hook) => {
                return Ok(Some(lifecycle_write(
                    ctx,
                    p,
                    PREPARING_UPDATE,
                    Purpose::Lifecycle,
                )));
            }
            UPDATED => {
                let mut after = Pod::clone(p);
                set_lifecycle(&mut after, PREPARING_UPDATE, &ctx.now_text);
                hooks::add_markers(&mut after, hook);
                return Ok(Some(Action::WritePod {
                    before: p.clone(),
                    writes: vec![PodWrite::spec(after)],
                    purpose: Purpose::Lifecycle,
                }));
            }
            PREPARING_UPDATE if hooks::hooked(p, hook) => return Ok(None),
            _ => {}
        }
    }
    let writes = start_writes(p, spec)?;
    Ok(Some(Action::WritePod {
        before: p.clone(),
        writes,
        purpose: Purpose::InPlace {
            revision: target.to_string(),
        },
    }))
}

/// The writes that start `start` on `p`, or why it cannot be done in place. What could refuse
/// the start is decided now; building the two pods (copies of `p` with the gate, labels, images
/// and state annotation changed) is deferred to when they are read. A metadata patch can fail on
/// the pod's own metadata: such starts are built at once.
fn start_writes(p: &Arc<Pod>, start: &Arc<Start>) -> Result<Vec<PodWrite>, String> {
    if !start.spec.meta_data_patch.is_empty() {
        let (not_ready, after) = start.writes_now(p)?;
        let mut writes: Vec<PodWrite> = not_ready.into_iter().map(PodWrite::status).collect();
        writes.push(PodWrite::spec(after));
        return Ok(writes);
    }
    batch::check_containers(p, &start.spec).map_err(|error| error.to_string())?;
    let mut writes = Vec::with_capacity(2);
    let now = start.now;
    if conditions::marks_not_ready(p, now) {
        writes.push(PodWrite {
            status: true,
            pod: PodAfter::deferred(
                p.clone(),
                Arc::new(move |listed: &Pod| not_ready_or_same(listed, now)),
            ),
        });
    }
    let start = start.clone();
    writes.push(PodWrite {
        status: false,
        pod: PodAfter::deferred(
            p.clone(),
            Arc::new(move |listed: &Pod| {
                // The containers were checked above and the state annotation's types always
                // serialize, so the start cannot fail here; if it did, nothing would change.
                start
                    .spec_write(not_ready_or_same(listed, start.now))
                    .unwrap_or_else(|_| listed.clone())
            }),
        ),
    });
    Ok(writes)
}

fn not_ready_or_same(listed: &Pod, now: Timestamp) -> Pod {
    conditions::mark_not_ready(listed, now).unwrap_or_else(|| listed.clone())
}

/// An in-place start of one round to one target: what all the pods starting it share.
pub(super) struct Start {
    spec: state::UpdateSpec,
    target: String,
    now: Timestamp,
    now_text: String,
}

impl Start {
    /// The status write (when the gate must turn False first) and the spec write that start the
    /// update of `p`, built now; `Err`: why it cannot be done in place.
    fn writes_now(&self, p: &Pod) -> Result<(Option<Pod>, Pod), String> {
        let (not_ready, base) = match conditions::mark_not_ready(p, self.now) {
            Some(not_ready) => (Some(not_ready.clone()), not_ready),
            None => (None, p.clone()),
        };
        Ok((not_ready, self.spec_write(base)?))
    }

    /// The pod of the spec write, from the pod of the status write (or the listed pod).
    fn spec_write(&self, base: Pod) -> Result<Pod, String> {
        let step = inplace::start_update_owned(base, &self.spec, &ENGINE, self.now)
            .map_err(|e| e.to_string())?;
        let mut after = match step {
            Step::StartGrace { pod, .. } | Step::PatchBatch { pod, .. } => pod,
            Step::NeedsRecreate { reason } => return Err(reason),
            other => return Err(format!("unexpected in-place step {other:?}")),
        };
        after
            .metadata
            .labels
            .get_or_insert_with(BTreeMap::new)
            .insert(
                pod::POD_TEMPLATE_HASH.into(),
                short_hash(&self.target).into(),
            );
        set_lifecycle(&mut after, UPDATING, &self.now_text);
        Ok(after)
    }
}

/// The in-place calculations of one round, by (old revision, target revision, env handling): it
/// depends on nothing else of the pod, and thousands of pods may start the same update.
#[derive(Default)]
struct SpecCache {
    entries: Vec<(SpecKey, Result<Arc<Start>, String>)>,
}

/// Revisions by their position in the history.
type SpecKey = (Option<usize>, Option<usize>, EnvFromMetadata);

impl SpecCache {
    fn get(
        &mut self,
        ctx: &Context<'_>,
        old: Option<&ControllerRevision>,
        new: Option<&ControllerRevision>,
        env_from_metadata: EnvFromMetadata,
        target: &str,
    ) -> Result<&Arc<Start>, String> {
        let position = |r: Option<&ControllerRevision>| {
            r.and_then(|r| ctx.history.iter().position(|h| std::ptr::eq(h, r)))
        };
        let key = (position(old), position(new), env_from_metadata);
        let index = match self.entries.iter().position(|(k, _)| *k == key) {
            Some(index) => index,
            None => {
                let (old, new) = (old.and_then(as_revision), new.and_then(as_revision));
                let options = CalculateOptions {
                    grace_seconds: grace(ctx).map_or(0, |d| d.as_secs() as i32),
                    env_from_metadata,
                    recreate_on_volume_claim_templates_change: false,
                    ignore_volume_claim_templates_hash_diff: ctx.cloneset.update_type()
                        == IN_PLACE_ONLY,
                };
                let start = inplace::calculate_spec(old.as_ref(), new.as_ref(), &options)
                    .map(|spec| {
                        Arc::new(Start {
                            spec,
                            target: target.to_string(),
                            now: ctx.now,
                            now_text: ctx.now_text.clone(),
                        })
                    })
                    .map_err(|e| e.to_string());
                self.entries.push((key, start));
                self.entries.len() - 1
            }
        };
        self.entries[index].1.as_ref().map_err(Clone::clone)
    }
}

fn as_revision(r: &ControllerRevision) -> Option<Revision<'_>> {
    r.data.as_ref().map(|data| Revision {
        name: r.metadata.name.as_deref().unwrap_or(""),
        data: &data.0,
        volume_claim_templates_hash: None,
    })
}

#[cfg(test)]
mod tests;
