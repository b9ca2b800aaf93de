//! Scale (OpenKruise `cloneset_scale.go`): create missing pods, delete marked and surplus ones,
//! in that order, never more than one kind of change per round.

use std::cmp::{Ordering, Reverse};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Pod, PodReadinessGate};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::hooks;
use super::numbers::Diff;
use super::pod::{self, PREPARING_DELETE, PREPARING_NORMAL};
use super::pvc;
use super::revision::{owner_reference, short_hash};
use super::{Action, Context, Event, ListedPod, PodWrite, Purpose};
use crate::api::keys;
use crate::podmarks::PodView;

/// Returns whether the round changed anything (then the update step is skipped).
pub(super) fn scale(
    ctx: &Context<'_>,
    diff: &Diff,
    rng: &mut fastrand::Rng,
    out: &mut Vec<Action>,
) -> bool {
    let active = &ctx.active;
    let replicas = ctx.limits.replicas;
    let pods_to_delete = ctx.cloneset.pods_to_delete();
    // The round's records answer these for every active pod (`facts`).
    let specified: Vec<&ListedPod> = active
        .iter()
        .zip(&ctx.facts)
        .filter(|(_, facts)| facts.specified_delete)
        .map(|(p, _)| *p)
        .collect();
    let pre_deleting: Vec<&ListedPod> = active
        .iter()
        .zip(&ctx.facts)
        .filter(|(_, facts)| facts.pre_deleting())
        .map(|(p, _)| *p)
        .collect();
    let planned: BTreeSet<&str> = specified
        .iter()
        .chain(&pre_deleting)
        .map(pod::name)
        .collect();
    let num_to_delete = planned.len() as i64;

    // 1. Missing replicas: take back pods waiting in PreparingDelete that nobody asked to delete.
    let mut missing = replicas - active.len() as i64 + num_to_delete;
    let mut reverted = false;
    for candidate in pre_deleting
        .iter()
        .filter(|p| !pod::is_specified_delete(p, pods_to_delete))
    {
        if missing <= 0 {
            break;
        }
        if let Some(candidate) = ctx.whole(candidate) {
            out.push(lifecycle_write(
                ctx,
                candidate,
                PREPARING_NORMAL,
                Purpose::ScaleLifecycle,
            ));
        }
        missing -= 1;
        reverted = true;
    }
    if reverted {
        return true;
    }

    // 2-3. Creations.
    if diff.scale_up > diff.scale_up_limit {
        out.push(Action::Event(Event::warning(
            "ScaleUpLimited",
            format!(
                "scaleUp is limited because of scaleStrategy.maxUnavailable, limit: {}",
                diff.scale_up_limit
            ),
        )));
    }
    if diff.scale_up > 0 {
        let mut ids = pvc::InstanceIds::new(ctx.cloneset, ctx.all_pods, ctx.claims);
        let creations = diff.scale_up_limit;
        let at_current = if creations <= diff.scale_up_old {
            creations
        } else {
            diff.scale_up_old
        };
        for index in 0..creations {
            let (revision, template) = if index < at_current {
                (ctx.current_revision, &ctx.current_template)
            } else {
                (ctx.update_revision, &ctx.update_template)
            };
            let id = ids.next(rng);
            out.push(Action::CreatePod {
                pod: Box::new(new_pod(ctx, revision, template, &id)),
                revision: revision.to_string(),
            });
        }
        // Deletions wait for another round; with no creation allowed the update step still runs.
        return creations > 0;
    }

    // 4. Pods waiting in PreparingDelete: deleted once their preDelete hook lets them go.
    let mut changed = false;
    for p in &pre_deleting {
        if let Some(action) = delete(ctx, p) {
            out.push(action);
            changed = true;
        }
    }
    if changed {
        return true;
    }

    // 5. Pods marked for deletion: unavailable ones always, ready ones within the budget.
    let mut ready_limit = diff.delete_ready_limit;
    for p in specified.iter().filter(|p| !pod::is_pre_deleting(p)) {
        if pod::is_available(p, 0, ctx.now) {
            if ready_limit <= 0 {
                continue;
            }
            ready_limit -= 1;
        }
        if let Some(action) = delete(ctx, p) {
            out.push(action);
            changed = true;
        }
    }

    // 6. Surplus pods.
    if diff.scale_down > 0 && num_to_delete == 0 {
        for p in choose_scale_in(ctx, diff) {
            if pod::is_available(p, 0, ctx.now) {
                if ready_limit <= 0 {
                    continue;
                }
                ready_limit -= 1;
            }
            if let Some(action) = delete(ctx, p) {
                out.push(action);
                changed = true;
            }
        }
    }
    changed
}

/// Deleting a pod (§7.4): a pod a `preDelete` hook holds is moved to `PreparingDelete` instead
/// (and left there, no change, while the hook still holds it); any other pod is deleted. With a
/// hook, the pod is read whole (its finalizers).
fn delete(ctx: &Context<'_>, p: &ListedPod) -> Option<Action> {
    if let Some(hook) = hooks::pre_delete(ctx.cloneset) {
        let before = ctx.whole(p)?;
        if hooks::hooked(before, hook) {
            if pod::is_pre_deleting(p) {
                return None;
            }
            return Some(lifecycle_write(
                ctx,
                before,
                PREPARING_DELETE,
                Purpose::ScaleLifecycle,
            ));
        }
    }
    Some(Action::DeletePod {
        name: pod::name(p).to_string(),
    })
}

/// The pods to remove on scale-in: old-revision ones first as far as `scale_down_old` says.
fn choose_scale_in<'a>(ctx: &Context<'a>, diff: &Diff) -> Vec<&'a ListedPod> {
    let (new, old): (Vec<&ListedPod>, Vec<&ListedPod>) = ctx
        .active
        .iter()
        .copied()
        .partition(|p| pod::at_revision(*p, ctx.update_revision));
    let wanted = usize::try_from(diff.scale_down).unwrap_or(0);
    let from_old = usize::try_from(diff.scale_down_old.min(diff.scale_down)).unwrap_or(0);
    let mut chosen = take_first(ctx, old, from_old);
    chosen.extend(take_first(ctx, new, wanted - chosen.len()));
    chosen
}

fn take_first<'a>(
    ctx: &Context<'_>,
    mut group: Vec<&'a ListedPod>,
    n: usize,
) -> Vec<&'a ListedPod> {
    if n < group.len() {
        sort_for_deletion(&mut group, ctx.min_ready_seconds, ctx.now);
    }
    group.truncate(n);
    group
}

/// OpenKruise's scale-in order, most deletable first. The same-node rank is used as the spread
/// ranker (the topology-spread ranker is not implemented).
pub fn sort_for_deletion<P: PodView>(
    pods: &mut [&P],
    min_ready_seconds: i32,
    now: jiff::Timestamp,
) {
    let base = |a: &P, b: &P| compare(a, b, min_ready_seconds, now, None);
    let mut by_node: BTreeMap<&str, Vec<&P>> = BTreeMap::new();
    for &p in pods.iter().filter(pod::scheduled) {
        by_node.entry(pod::node(p)).or_default().push(p);
    }
    let mut rank: BTreeMap<&str, i64> = BTreeMap::new();
    for group in by_node.values_mut().filter(|g| g.len() >= 2) {
        group.sort_by(|a, b| base(a, b));
        let k = group.len() as i64;
        for (i, &p) in group.iter().take(group.len() - 1).enumerate() {
            rank.insert(pod::name(p), k - i as i64);
        }
    }
    pods.sort_by(|a, b| compare(a, b, min_ready_seconds, now, Some(&rank)));
}

fn compare<P: PodView>(
    a: &P,
    b: &P,
    min_ready_seconds: i32,
    now: jiff::Timestamp,
    rank: Option<&BTreeMap<&str, i64>>,
) -> Ordering {
    let key = |p: &P| {
        (
            pod::scheduled(p),
            pod::phase_rank(p),
            pod::is_available(p, min_ready_seconds, now),
            pod::has_ready_condition(p),
            pod::deletion_cost(p),
            Reverse(rank.and_then(|r| r.get(pod::name(p))).copied().unwrap_or(0)),
        )
    };
    key(a)
        .cmp(&key(b))
        .then_with(|| {
            if pod::has_ready_condition(a) && pod::has_ready_condition(b) {
                // More recently ready first, unknown time first of all.
                Reverse(pod::ready_time(a)).cmp(&Reverse(pod::ready_time(b)))
            } else {
                Ordering::Equal
            }
        })
        .then_with(|| pod::max_restarts(b).cmp(&pod::max_restarts(a)))
        .then_with(|| Reverse(pod::created(a)).cmp(&Reverse(pod::created(b))))
        .then_with(|| pod::name(a).cmp(pod::name(b)))
}

/// A pod of `revision`, named `<cloneset>-<id>`, mounting the PVCs of `id`.
pub(crate) fn new_pod(
    ctx: &Context<'_>,
    revision: &str,
    template: &k8s_openapi::api::core::v1::PodTemplateSpec,
    id: &str,
) -> Pod {
    let set_name = ctx.cloneset.metadata.name.as_deref().unwrap_or("");
    let meta = template.metadata.clone().unwrap_or_default();
    let mut labels = meta.labels.unwrap_or_default();
    labels.insert(keys::CONTROLLER_REVISION_HASH.into(), revision.into());
    labels.insert(pod::POD_TEMPLATE_HASH.into(), short_hash(revision).into());
    labels.insert(pod::INSTANCE_ID.into(), id.into());
    labels.insert(pod::LIFECYCLE_STATE.into(), PREPARING_NORMAL.into());
    let mut annotations = meta.annotations.unwrap_or_default();
    annotations.insert(pod::LIFECYCLE_TIMESTAMP.into(), ctx.now_text.clone());
    let mut spec = template.spec.clone().unwrap_or_default();
    let gates = spec.readiness_gates.get_or_insert_with(Vec::new);
    if !gates
        .iter()
        .any(|g| g.condition_type == keys::INPLACE_UPDATE_READY)
    {
        gates.push(PodReadinessGate {
            condition_type: keys::INPLACE_UPDATE_READY.into(),
        });
    }
    pvc::mount(ctx.cloneset, &mut spec, id);
    Pod {
        metadata: ObjectMeta {
            name: Some(format!("{set_name}-{id}")),
            generate_name: Some(format!("{set_name}-")),
            namespace: ctx.cloneset.metadata.namespace.clone(),
            labels: Some(labels),
            annotations: Some(annotations),
            finalizers: meta.finalizers,
            owner_references: Some(vec![owner_reference(ctx.cloneset)]),
            ..Default::default()
        },
        spec: Some(spec),
        status: None,
    }
}

/// A write of the lifecycle label and its timestamp.
pub(super) fn lifecycle_write(
    ctx: &Context<'_>,
    before: &Arc<Pod>,
    state: &str,
    purpose: Purpose,
) -> Action {
    let mut after = Pod::clone(before);
    set_lifecycle(&mut after, state, &ctx.now_text);
    Action::WritePod {
        before: before.clone(),
        writes: vec![PodWrite::spec(after)],
        purpose,
    }
}

pub fn set_lifecycle(pod: &mut Pod, state: &str, now: &str) {
    pod.metadata
        .labels
        .get_or_insert_with(BTreeMap::new)
        .insert(pod::LIFECYCLE_STATE.into(), state.into());
    pod.metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(pod::LIFECYCLE_TIMESTAMP.into(), now.into());
}
