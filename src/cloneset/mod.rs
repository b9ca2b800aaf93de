//! The CloneSet controller's pure core: given snapshots of a CloneSet, the pods it owns, its
//! ControllerRevisions and the time, the writes of one reconcile (OpenKruise
//! `pkg/controller/cloneset`). No I/O, no clock: the shell in `controller::cloneset` lists,
//! calls [`plan`] and sends what it returns.
//!
//! What it shares with the other workloads (revisions, claim, lifecycle, the in-place steps,
//! pod predicates, PVC naming, budgets, orders) is in [`crate::workload`]; here:
//!
//! - [`numbers`]: the scale/update arithmetic of one round;
//! - [`scale`]: creations (with instance ids) and deletions;
//! - [`update`]: choosing the pods to update and how;
//! - [`status`]: the status counters;
//! - [`progress`]: the `Progressing` condition (`progressDeadlineSeconds`);
//! - [`pvc`]: instance ids, PVC reuse and clean-up;
//! - [`events`]: how the CloneSet words the events of its requests.
//!
//! A round does one kind of change: Scale, and only if it changed nothing, Update. Repeated
//! rounds over an unchanged world converge and then write nothing.

pub mod events;
pub mod numbers;
pub mod progress;
pub mod pvc;
pub mod scale;
pub mod status;
pub mod update;

use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{Pod, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::api::cloneset::{CloneSet, CloneSetStatus, IN_PLACE_ONLY};
use crate::workload::inplace::InPlace;
use crate::workload::listed::WholePods;
use crate::workload::plan::update_and_current;
pub use crate::workload::{
    Action, Event, ListedPod, PlanError, PodAfter, PodWrite, Purpose, rfc3339,
};
use crate::workload::{Workload, facts, lifecycle, pod, push_requeue, revision};
use numbers::{Limits, Side};

/// What one reconcile sees.
pub struct Snapshot<'a> {
    pub cloneset: &'a CloneSet,
    /// Pods whose controller is this CloneSet, in any state.
    pub pods: &'a [ListedPod],
    /// The CloneSet's revisions sorted by [`revision::sort_history`]; holds the update revision.
    pub history: &'a [ControllerRevision],
    pub update_revision: &'a str,
    pub collision_count: i32,
    pub now: Timestamp,
}

/// The result of one round.
pub type Plan = crate::workload::Plan<CloneSetStatus, PlanExtra>;

/// What only a CloneSet round plans.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PlanExtra {
    /// `scaleStrategy.podsToDelete` without names of pods that are gone, when that changed.
    pub pods_to_delete: Option<Vec<String>>,
    /// The PVCs to create with new pods, delete with deleted ones, and clean up.
    pub claims: pvc::ClaimPlan,
}

/// Everything the steps share.
pub(crate) struct Context<'a> {
    pub cloneset: &'a CloneSet,
    pub all_pods: &'a [ListedPod],
    /// The CloneSet's PVCs (metadata), terminating ones included.
    pub claims: &'a [&'a ObjectMeta],
    pub active: Vec<&'a ListedPod>,
    /// What the counting steps read of `active[i]`, computed once.
    pub facts: Vec<facts::PodFacts>,
    pub history: &'a [ControllerRevision],
    pub current_revision: &'a str,
    pub update_revision: &'a str,
    pub current_template: PodTemplateSpec,
    pub update_template: PodTemplateSpec,
    pub limits: Limits,
    pub min_ready_seconds: i32,
    pub now: Timestamp,
    pub now_text: String,
    /// The pods the round asked for whole and was given as summaries only.
    pub whole_pods: WholePods,
}

impl Context<'_> {
    /// The whole pod behind `p` ([`WholePods::get`]).
    pub fn whole<'p>(&self, p: &'p ListedPod) -> Option<&'p Arc<Pod>> {
        self.whole_pods.get(p)
    }

    /// The in-place steps' view of the round.
    pub fn in_place(&self) -> InPlace<'_> {
        let grace_seconds = self
            .cloneset
            .spec
            .update_strategy
            .in_place_update_strategy
            .as_ref()
            .and_then(|s| s.grace_period_seconds)
            .unwrap_or(0);
        InPlace {
            history: self.history,
            scheme: CloneSet::REVISIONS,
            hooks: self.cloneset.lifecycle(),
            table: lifecycle::Table::CloneSet,
            grace_seconds,
            ignore_volume_claim_templates_hash_diff: self.cloneset.update_type() == IN_PLACE_ONLY,
            now: self.now,
            now_text: &self.now_text,
        }
    }
}

/// One reconcile of a CloneSet none of whose PVCs is listed. `rng` draws instance ids for new pods.
pub fn plan(snapshot: &Snapshot<'_>, rng: &mut fastrand::Rng) -> Result<Plan, PlanError> {
    plan_with_claims(snapshot, &[], rng)
}

/// One reconcile. `claims`: the metadata of the PVCs the CloneSet owns (listed by the instance-id
/// label and ownerReference), terminating ones included. `rng` draws instance ids for new pods.
pub fn plan_with_claims(
    snapshot: &Snapshot<'_>,
    claims: &[&ObjectMeta],
    rng: &mut fastrand::Rng,
) -> Result<Plan, PlanError> {
    let cloneset = snapshot.cloneset;
    let previous = cloneset.status.as_ref();
    let update_revision = snapshot.update_revision;
    let (_, current) = update_and_current(cloneset, snapshot.history, update_revision)?;
    let current_revision = current.metadata.name.as_deref().unwrap_or(update_revision);
    let min_ready_seconds = cloneset.spec.min_ready_seconds.unwrap_or(0);
    // One pass over the pods: each is read while it is in the processor's cache.
    let (active, facts): (Vec<&ListedPod>, Vec<facts::PodFacts>) = snapshot
        .pods
        .iter()
        .filter(|p| pod::is_active(*p))
        .map(|p| {
            let facts = facts::PodFacts::of(
                &p.summary,
                CloneSet::REVISIONS,
                update_revision,
                cloneset.pods_to_delete(),
                min_ready_seconds,
                snapshot.now,
            );
            (p, facts)
        })
        .unzip();
    let ctx = Context {
        cloneset,
        all_pods: snapshot.pods,
        claims,
        active,
        facts,
        history: snapshot.history,
        current_revision,
        update_revision,
        current_template: revision::template_of(current)?,
        // New pods at the update revision take the live template, as upstream.
        update_template: cloneset.spec.template.clone(),
        limits: Limits::of(&cloneset.spec),
        min_ready_seconds,
        now: snapshot.now,
        now_text: rfc3339(snapshot.now),
        whole_pods: WholePods::default(),
    };

    let diff = numbers::diff(&ctx.limits, &side(&ctx, true), &side(&ctx, false), false);
    let mut actions = Vec::new();
    let mut requeue = None;
    let mut failure = None;
    if cloneset.metadata.deletion_timestamp.is_none() {
        let scaled = scale::scale(&ctx, &diff, rng, &mut actions);
        let refreshed = !scaled && {
            let refresh = update::refresh(&ctx);
            actions.extend(refresh.actions);
            push_requeue(&mut requeue, refresh.requeue);
            refresh.wrote
        };
        if !scaled
            && !refreshed
            && let Err(message) = update::update(&ctx, &diff, &mut actions, &mut requeue)
        {
            failure = Some(("FailedUpdate", message));
        }
    }

    let claims = pvc::plan(cloneset, snapshot.pods, claims, &actions);

    let mut status = status::compute(&status::StatusInput {
        generation: cloneset.metadata.generation,
        replicas: ctx.limits.replicas,
        partition: ctx.limits.partition,
        active: &ctx.facts,
        current_revision,
        update_revision,
        collision_count: snapshot.collision_count,
        selector: cloneset.spec.selector.as_ref(),
        previous,
        failure: failure.as_ref().map(|(k, m)| (*k, m.as_str())),
        now: snapshot.now,
    });
    let previous_update_revision = previous.and_then(|s| s.update_revision.as_deref());
    push_requeue(
        &mut requeue,
        progress::apply(
            &mut status,
            &cloneset.spec,
            previous_update_revision,
            snapshot.now,
        ),
    );
    if failure.is_none()
        && status.available_replicas != status.ready_replicas
        && ctx.min_ready_seconds > 0
    {
        let wait = Duration::from_secs(ctx.min_ready_seconds.unsigned_abs().into());
        requeue = Some(requeue.map_or(wait, |r: Duration| r.min(wait)));
    }

    let listed = cloneset.pods_to_delete();
    let kept: Vec<String> = listed
        .iter()
        .filter(|name| ctx.active.iter().any(|p| pod::name(p) == name.as_str()))
        .cloned()
        .collect();
    let limit = usize::try_from(cloneset.revision_history_limit()).unwrap_or(0);
    // Within the limit nothing is truncated, whatever the pods are at: no need to look.
    let pod_labels: Vec<&str> = if snapshot.history.len() > limit {
        ctx.active
            .iter()
            .filter_map(|p| pod::label(p, crate::api::keys::CONTROLLER_REVISION_HASH))
            .collect()
    } else {
        Vec::new()
    };
    let live = [current_revision, update_revision];
    let revisions_to_delete = CloneSet::REVISIONS
        .history_to_truncate(snapshot.history, &live, &pod_labels, limit)
        .into_iter()
        .map(str::to_string)
        .collect();
    let needs_whole = ctx.whole_pods.needed();
    Ok(Plan {
        actions,
        write_status: status::changed(previous, &status),
        status,
        revisions_to_delete,
        error: failure.map(|(_, m)| m),
        requeue_after: requeue,
        needs_whole,
        extra: PlanExtra {
            pods_to_delete: (kept.len() != listed.len()).then_some(kept),
            claims,
        },
    })
}

fn side(ctx: &Context<'_>, new: bool) -> Side {
    let mut side = Side::default();
    for p in ctx.facts.iter().filter(|p| p.at_update_revision == new) {
        side.count += 1;
        if p.pre_deleting() {
            side.pre_deleting += 1;
            continue;
        }
        side.active += 1;
        if p.specified_delete {
            side.to_delete += 1;
        } else if !p.available {
            side.unavailable += 1;
        }
    }
    side
}

#[cfg(test)]
mod tests;
