//! Scale (OpenKruise `cloneset_scale.go`): create missing pods, delete marked and surplus ones,
//! in that order, never more than one kind of change per round.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::{Pod, PodReadinessGate};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::numbers::Diff;
use super::pvc::{self, INSTANCE_ID};
use super::{Action, Context, Event, ListedPod, Purpose};
use crate::api::cloneset::CloneSet;
use crate::api::keys;
use crate::workload::lifecycle::{
    self, LIFECYCLE_STATE, LIFECYCLE_TIMESTAMP, PREPARING_DELETE, PREPARING_NORMAL,
};
use crate::workload::revision::short_hash;
use crate::workload::sort::sort_for_deletion;
use crate::workload::{Workload, pod};

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
            out.push(lifecycle::lifecycle_write(
                candidate,
                PREPARING_NORMAL,
                &ctx.now_text,
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
    if let Some(hook) = lifecycle::pre_delete(ctx.cloneset.lifecycle()) {
        let before = ctx.whole(p)?;
        if lifecycle::hooked(before, hook) {
            if pod::is_pre_deleting(p) {
                return None;
            }
            return Some(lifecycle::lifecycle_write(
                before,
                PREPARING_DELETE,
                &ctx.now_text,
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
        .partition(|p| CloneSet::REVISIONS.pod_at(*p, ctx.update_revision));
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
    labels.insert(INSTANCE_ID.into(), id.into());
    labels.insert(LIFECYCLE_STATE.into(), PREPARING_NORMAL.into());
    let mut annotations = meta.annotations.unwrap_or_default();
    annotations.insert(LIFECYCLE_TIMESTAMP.into(), ctx.now_text.clone());
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
    crate::workload::pvc::mount(ctx.cloneset, &mut spec, id);
    Pod {
        metadata: ObjectMeta {
            name: Some(format!("{set_name}-{id}")),
            generate_name: Some(format!("{set_name}-")),
            namespace: ctx.cloneset.metadata.namespace.clone(),
            labels: Some(labels),
            annotations: Some(annotations),
            finalizers: meta.finalizers,
            owner_references: Some(vec![ctx.cloneset.owner_reference()]),
            ..Default::default()
        },
        spec: Some(spec),
        status: None,
    }
}
