//! One round (OpenKruise `updateStatefulSet`): the scale phase, then the rolling update, over
//! the snapshot; every write they decide on goes into the plan in the order Go would send it.

use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Pod, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::events::{self, Verb};
use super::identity::{self, identity_matches, storage_matches, with_identity};
use super::ordinals::{ReplicaRange, Slot, Slots, pod_name};
use super::pod::StatefulPodFacts;
use super::retention::{self, Owner, Policy};
use super::round_claims::RoundClaims;
use super::scale::{self, Flow, Scale};
use super::status::{self, Counts, FAILED_CREATE_POD, FAILED_UPDATE_POD, StatusInput};
use super::update::{self, Rolling, Taken, Updated};
use super::{Action, ListedPod, Plan, PlanError, Purpose, PvcFix, Snapshot};
use crate::api::cloneset::{IN_PLACE_IF_POSSIBLE, IN_PLACE_ONLY};
use crate::api::keys;
use crate::api::statefulset::{ON_DELETE, PARALLEL, ROLLING_UPDATE, StatefulSet};
use crate::podmarks::{EngineOwner, PodView};
use crate::updatesort::budget::floor_at_least_one;
use crate::updatesort::order::priority_order;
use crate::workload::engine::ENGINE;
use crate::workload::inplace::{FOREIGN_UPDATE_REQUEUE, InPlace, InPlaceStart, SpecCache};
use crate::workload::lifecycle::{self, LifecycleState, PREPARING_DELETE, Table};
use crate::workload::listed::WholePods;
use crate::workload::plan::update_and_current;
use crate::workload::pod::label;
use crate::workload::pvc::{claims_for, templates};
use crate::workload::{Workload, facts, revision};

pub(super) fn plan(snapshot: &Snapshot<'_>) -> Result<Plan, PlanError> {
    let set = snapshot.set;
    let (update, current) = update_and_current(set, snapshot.history, snapshot.update_revision)?;
    let name_of = |r: &k8s_openapi::api::apps::v1::ControllerRevision| {
        r.metadata.name.clone().unwrap_or_default()
    };
    let (current_name, update_name) = (name_of(current), name_of(update));
    let min_ready_seconds = set.min_ready_seconds();
    let set_name = set.name();
    let slots = Slots::of(
        set_name,
        ReplicaRange::of(set)?,
        snapshot.pods.iter().map(|p| p.name()),
    );
    let facts: Vec<StatefulPodFacts> = snapshot
        .pods
        .iter()
        .map(|p| {
            StatefulPodFacts::of(
                p,
                &current_name,
                &update_name,
                min_ready_seconds,
                snapshot.now,
            )
        })
        .collect();
    let mut new_at_current = vec![None; slots.slots.len()];
    for (index, at_current) in identity::new_pod_revisions(set, &slots, |p| facts[p]) {
        new_at_current[index] = Some(at_current);
    }
    let templates: Vec<&str> = set
        .volume_claim_templates()
        .iter()
        .filter_map(|t| t.metadata.name.as_deref())
        .collect();
    let claims = RoundClaims::of(snapshot.claims, set_name, &templates, &slots);
    let mut round = Round {
        snapshot,
        set,
        set_name,
        policy: Policy::of(set),
        current: (current_name, revision::template_of(current)?),
        update: (update_name, revision::template_of(update)?),
        templates,
        claims,
        now_text: crate::workload::rfc3339(snapshot.now),
        refreshed: vec![false; snapshot.pods.len()],
        written: vec![false; snapshot.pods.len()],
        claims_done: BTreeSet::new(),
        slots,
        facts,
        new_at_current,
        actions: Vec::new(),
        requeue: None,
        whole: WholePods::default(),
        specs: SpecCache::default(),
        min_ready_seconds,
        refresh_wrote: false,
        lifecycle_wrote: false,
        condition: None,
    };
    if set.metadata.deletion_timestamp.is_some() {
        // Status only, counted over every pod of the set.
        let all: Vec<usize> = (0..snapshot.pods.len()).collect();
        return Ok(round.finish(&all, &all, Taken::default(), None));
    }
    let outcome = round.run();
    let counted: Vec<usize> = round
        .slots
        .slots
        .iter()
        .filter_map(|s| s.pod())
        .chain(round.slots.condemned.iter().copied())
        .collect();
    let claimed: Vec<usize> = round.slots.slots.iter().filter_map(|s| s.pod()).collect();
    Ok(match outcome {
        Ok(taken) => round.finish(&counted, &claimed, taken, None),
        Err(RoundError(message)) => {
            round.finish(&counted, &claimed, Taken::default(), Some(message))
        }
    })
}

/// The round's error: its message (the condition, if any, is already recorded).
struct RoundError(String);

struct Round<'a> {
    snapshot: &'a Snapshot<'a>,
    set: &'a StatefulSet,
    set_name: &'a str,
    policy: Policy,
    /// The revisions' names and templates.
    current: (String, PodTemplateSpec),
    update: (String, PodTemplateSpec),
    /// The names of `volumeClaimTemplates`, in order.
    templates: Vec<&'a str>,
    /// The cached claims of the round's ordinals, by template position and ordinal.
    claims: RoundClaims,
    now_text: String,
    slots: Slots,
    /// By listed position.
    facts: Vec<StatefulPodFacts>,
    /// By slot: whether the pod a missing slot gets is made at the current revision.
    new_at_current: Vec<Option<bool>>,
    actions: Vec<Action>,
    requeue: Option<Duration>,
    /// The pods read whole, and those asked for and not had.
    whole: WholePods,
    /// The in-place calculations of the round.
    specs: SpecCache,
    min_ready_seconds: i32,
    /// By listed position: refreshed this round (each pod once), and written by the refresh.
    refreshed: Vec<bool>,
    written: Vec<bool>,
    /// Claims created or rewritten this round (the cache does not show it yet), by template
    /// name and ordinal (which name one claim: `<template>-<set>-<ordinal>`).
    claims_done: BTreeSet<(&'a str, i64)>,
    /// A slot pod's refresh in the scale phase wrote something.
    refresh_wrote: bool,
    /// A lifecycle state was moved on this round.
    lifecycle_wrote: bool,
    /// The condition a failure of the round sets: (type, message).
    condition: Option<(&'static str, String)>,
}

/// What a deletion did.
enum Deleted {
    Deleted,
    /// The `preDelete` hook holds the pod: moved to `PreparingDelete` (`true`) or already there.
    Held(bool),
}

impl Round<'_> {
    fn pod(&self, position: usize) -> &ListedPod {
        &self.snapshot.pods[position]
    }

    /// The whole pod at `position`; `None`, and the pod noted as needed, when the round was
    /// given its summary only.
    fn whole(&self, position: usize) -> Option<Arc<Pod>> {
        self.whole.get(&self.snapshot.pods[position]).cloned()
    }

    /// The in-place steps as this set takes them.
    fn in_place(&self) -> InPlace<'_> {
        let rolling = self.set.spec.update_strategy.rolling_update.as_ref();
        InPlace {
            history: self.snapshot.history,
            scheme: StatefulSet::REVISIONS,
            hooks: self.set.lifecycle(),
            table: Table::StatefulSet,
            grace_seconds: rolling
                .and_then(|r| r.in_place_update_strategy.as_ref())
                .and_then(|s| s.grace_period_seconds)
                .unwrap_or(0),
            ignore_volume_claim_templates_hash_diff: false,
            now: self.snapshot.now,
            now_text: &self.now_text,
        }
    }

    fn push_requeue(&mut self, after: Duration) {
        if !after.is_zero() {
            self.requeue = Some(self.requeue.map_or(after, |r| r.min(after)));
        }
    }

    fn replicas(&self) -> i32 {
        self.set.spec.replicas.unwrap_or(1)
    }

    /// The scale phase, then the rolling update: the counters the update takes, or the round's
    /// error.
    fn run(&mut self) -> Result<Taken, RoundError> {
        let max_unavailable = match self
            .set
            .spec
            .scale_strategy
            .as_ref()
            .and_then(|s| s.max_unavailable.as_ref())
        {
            Some(value) => {
                Some(floor_at_least_one(Some(value), value, self.replicas()).map_err(RoundError)?)
            }
            None => None,
        };
        let slots = self.slots.clone();
        let facts = self.facts.clone();
        let flow = Scale {
            slots: &slots,
            facts: &facts,
            monotonic: self.set.pod_management_policy() != PARALLEL,
            max_unavailable,
        }
        .run(self)?;
        if flow == Flow::Stop || self.set.update_type() == ON_DELETE {
            return Ok(Taken::default());
        }
        self.rolling_update(&slots, &facts)
    }

    fn rolling_update(
        &mut self,
        slots: &Slots,
        facts: &[StatefulPodFacts],
    ) -> Result<Taken, RoundError> {
        for position in 0..self.snapshot.pods.len() {
            if !self.refreshed[position] {
                self.refresh_pod(position);
            }
        }
        if self.lifecycle_wrote || self.refresh_wrote {
            return Ok(Taken::default());
        }
        let strategy = self.set.spec.update_strategy.rolling_update.as_ref();
        if strategy.is_some_and(|s| s.paused == Some(true)) {
            return Ok(Taken::default());
        }
        let max_unavailable = match strategy {
            Some(s) => floor_at_least_one(
                s.max_unavailable.as_ref(),
                &IntOrString::Int(1),
                self.replicas(),
            )
            .map_err(RoundError)?,
            None => 1,
        };
        let complete: Vec<bool> = (0..self.snapshot.pods.len())
            .map(|p| self.update_complete(p))
            .collect();
        let complete = |p: usize| complete[p];
        let new_at_current = self.new_at_current.clone();
        let new_pod_updated = |index: usize| new_at_current[index] == Some(false);
        Rolling {
            slots,
            facts,
            update_complete: &complete,
            new_pod_updated: &new_pod_updated,
            replicas: i64::from(self.replicas()),
            partition: i64::from(strategy.and_then(|s| s.partition).unwrap_or(0)),
            max_unavailable,
            unordered: strategy.is_some_and(|s| s.unordered_update.is_some()),
        }
        .run(self)
    }

    /// OpenKruise `CheckPodUpdateCompleted`: no in-place update in flight, or its containers all
    /// restarted with what they were updated to.
    fn update_complete(&self, position: usize) -> bool {
        let listed = self.pod(position);
        if listed.summary.engine_at_rest(EngineOwner::Workload) {
            return true;
        }
        self.whole
            .get(listed)
            .is_none_or(|p| crate::inplace::pod_update_completed(p, ENGINE.hasher).is_ok())
    }

    /// `refreshPodState`: moves an in-place update in flight and the lifecycle state on.
    /// Whether it wrote anything.
    fn refresh_pod(&mut self, position: usize) -> bool {
        self.refreshed[position] = true;
        let listed = &self.snapshot.pods[position];
        let lifecycle = self.facts[position].lifecycle;
        // Most pods of a large set have nothing in flight and nothing to move on.
        if listed.summary.engine_at_rest(EngineOwner::Workload) && !lifecycle.moves_on_by_itself() {
            return false;
        }
        let facts = facts::PodFacts::of(
            &listed.summary,
            StatefulSet::REVISIONS,
            &self.update.0,
            &[],
            self.min_ready_seconds,
            self.snapshot.now,
        );
        let outcome = self
            .in_place()
            .refresh(&[listed], &[facts], &self.update.0, &self.whole);
        if let Some(after) = outcome.requeue {
            self.push_requeue(after);
        }
        for action in outcome.actions {
            if let crate::workload::Action::WritePod {
                purpose: Purpose::Lifecycle,
                ..
            } = &action
            {
                self.lifecycle_wrote = true;
            }
            self.actions.push(action);
        }
        self.written[position] = outcome.wrote;
        outcome.wrote
    }

    /// `deletePod`: the `preDelete` hook holds a pod it marks (`PreparingDelete`); any other pod
    /// is deleted.
    fn delete_pod(&mut self, position: usize) -> Deleted {
        if let Some(hook) = lifecycle::pre_delete(self.set.lifecycle()) {
            let Some(p) = self.whole(position) else {
                return Deleted::Held(false);
            };
            if lifecycle::hooked(&p, hook) {
                if self.facts[position].lifecycle == LifecycleState::PreparingDelete {
                    return Deleted::Held(false);
                }
                let write = lifecycle::lifecycle_write(
                    &p,
                    PREPARING_DELETE,
                    &self.now_text,
                    Purpose::ScaleLifecycle,
                );
                self.actions.push(write);
                return Deleted::Held(true);
            }
        }
        self.actions.push(Action::DeletePod {
            name: self.pod(position).name().to_string(),
        });
        Deleted::Deleted
    }

    /// The claims of `ordinal` that do not exist yet (planned for creation) and the errors of
    /// those being deleted.
    fn create_claims(&mut self, ordinal: i64, pod: &str, fix: PvcFix) -> Vec<String> {
        let mut errors = Vec::new();
        let set = self.set;
        let named = templates(set).map(|(name, _)| name);
        for (template, claim) in named.zip(claims_for(set, &ordinal.to_string(), &[], None)) {
            if self.claims_done.contains(&(template, ordinal)) {
                continue;
            }
            let cached = self
                .templates
                .iter()
                .position(|t| *t == template)
                .and_then(|t| self.claims.get(&self.slots, t, ordinal));
            match cached {
                None => {
                    self.claims_done.insert((template, ordinal));
                    self.actions.push(Action::CreatePvc {
                        pvc: Box::new(claim),
                        pod: pod.to_string(),
                        fix,
                    });
                }
                Some(cached) if cached.metadata.deletion_timestamp.is_some() => {
                    let name = claim.metadata.name.as_deref().unwrap_or_default();
                    errors.push(format!("pvc {name} is to be deleted"));
                }
                Some(_) => {}
            }
        }
        errors
    }

    /// `UpdatePodClaimForRetentionPolicy`: rewrites the owners of the cached claims of the pod
    /// that do not match the policy.
    fn fix_claims(&mut self, ordinal: i64, pod: Owner<'_>, fix: PvcFix) {
        let scaled_down = !self.slots.range.holds(ordinal);
        let set = Owner {
            name: self.set_name,
            uid: self.set.metadata.uid.as_deref().unwrap_or(""),
        };
        for (position, &template) in self.templates.iter().enumerate() {
            if self.claims_done.contains(&(template, ordinal)) {
                continue;
            }
            let Some(claim) = self.claims.get(&self.slots, position, ordinal) else {
                continue;
            };
            let refs = claim.metadata.owner_references.as_deref().unwrap_or(&[]);
            if let Some(owner_references) =
                retention::wanted_refs(self.policy, refs, set, pod, scaled_down)
            {
                self.claims_done.insert((template, ordinal));
                self.actions.push(Action::UpdatePvcOwners {
                    before: claim.clone(),
                    owner_references,
                    pod: pod.name.to_string(),
                    fix,
                });
            }
        }
    }

    /// `ClaimsMatchRetentionPolicy` for a pod in the range.
    fn claims_match(&self, ordinal: i64, pod_uid: &str) -> bool {
        let set_uid = self.set.metadata.uid.as_deref().unwrap_or("");
        let scaled_down = !self.slots.range.holds(ordinal);
        self.templates
            .iter()
            .enumerate()
            .all(|(position, &template)| {
                // A claim created or rewritten this round is as the policy wants it.
                self.claims_done.contains(&(template, ordinal))
                    || self
                        .claims
                        .get(&self.slots, position, ordinal)
                        .is_none_or(|claim| {
                            let refs = claim.metadata.owner_references.as_deref().unwrap_or(&[]);
                            retention::matches(self.policy, refs, set_uid, pod_uid, scaled_down)
                        })
            })
    }

    /// Records the condition of a failed pod write and the matching event; the round's error.
    fn fail(&mut self, verb: Verb, pod: &str, error: String) -> RoundError {
        self.actions.push(Action::Event(events::pod(
            verb,
            self.set_name,
            pod,
            Some(&error),
        )));
        let (kind, what) = match verb {
            Verb::Create => (FAILED_CREATE_POD, "create"),
            _ => (FAILED_UPDATE_POD, "update"),
        };
        self.condition = Some((
            kind,
            format!("StatefulPodControl failed to {what} Pod error: {error}"),
        ));
        RoundError(error)
    }

    /// The status, truncation and requeue of the round; `counted`: the listed pods the counters
    /// are taken over, `with_claims`: those whose claims `volumeClaims` counts.
    fn finish(
        self,
        counted: &[usize],
        with_claims: &[usize],
        taken: Taken,
        error: Option<String>,
    ) -> Plan {
        let set = self.set;
        let mut counts = Counts::of(counted.iter().map(|p| &self.facts[*p]));
        counts.current -= taken.current;
        counts.updated -= taken.updated;
        let vcts = set.volume_claim_templates();
        let mut ordinals: Vec<i64> = with_claims
            .iter()
            .filter_map(|p| self.slots.ordinals[*p])
            .collect();
        if set.metadata.deletion_timestamp.is_none() {
            // Go counts the claims of the pods a round makes, too (a retained claim of one).
            ordinals.extend(
                self.slots
                    .slots
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| **s == Slot::Missing)
                    .map(|(i, _)| self.slots.ordinal_at(i)),
            );
        }
        let (round_claims, slots) = (&self.claims, &self.slots);
        let claims = ordinals.iter().flat_map(|&ordinal| {
            (0..self.templates.len())
                .filter_map(move |t| round_claims.get(slots, t, ordinal).map(|c| (t, c.as_ref())))
        });
        let volume_claims = status::volume_claims(vcts, claims);
        let mut status = status::compute(StatusInput {
            generation: set.metadata.generation,
            counts,
            current_revision: &self.current.0,
            update_revision: &self.update.0,
            collision_count: self.snapshot.collision_count,
            selector: set.spec.selector.as_ref(),
            volume_claims,
            rolling_update: set.update_type() == ROLLING_UPDATE,
        });
        if let Some((kind, message)) = &self.condition {
            status::record_failure(&mut status, kind, message, self.snapshot.now);
        }
        let live = [self.current.0.as_str(), self.update.0.as_str()];
        let revisions_to_delete =
            super::truncate(set, self.snapshot.history, live, self.snapshot.pods);
        let needs_whole = self.whole.needed();
        Plan {
            write_status: status::changed(set.status.as_ref(), &status),
            status,
            actions: self.actions,
            revisions_to_delete,
            error,
            requeue_after: self.requeue,
            needs_whole,
            extra: (),
        }
    }
}

impl scale::Hands for Round<'_> {
    type Error = RoundError;

    fn creation_blocked(&mut self, index: usize) -> bool {
        let ordinal = self.slots.ordinal_at(index);
        let pod = pod_name(self.set_name, ordinal);
        let claims = (0..self.templates.len())
            .filter_map(|t| self.claims.get(&self.slots, t, ordinal))
            .map(|c| c.metadata.owner_references.as_deref().unwrap_or(&[]));
        retention::blocks_creation(self.set, &pod, claims)
    }

    fn create(&mut self, index: usize) -> Result<(), RoundError> {
        let ordinal = self.slots.ordinal_at(index);
        let name = pod_name(self.set_name, ordinal);
        let errors = self.create_claims(ordinal, &name, PvcFix::NewPod);
        if !errors.is_empty() {
            return Err(self.fail(Verb::Create, &name, aggregate(errors)));
        }
        let (revision, template) = if self.new_at_current[index] == Some(true) {
            &self.current
        } else {
            &self.update
        };
        let pod = identity::new_pod(self.set, template, revision, ordinal, &self.now_text);
        self.actions.push(Action::CreatePod {
            pod: Box::new(pod),
            revision: revision.clone(),
        });
        // The claims' owners, as far as the cache knows them (the new pod has no uid yet).
        let owner = Owner {
            name: &name,
            uid: "",
        };
        self.fix_claims(ordinal, owner, PvcFix::NewPod);
        Ok(())
    }

    fn delete(&mut self, position: usize) -> Result<bool, RoundError> {
        Ok(match self.delete_pod(position) {
            Deleted::Deleted => true,
            Deleted::Held(wrote) => wrote,
        })
    }

    fn create_missing_claims(&mut self, position: usize) -> Result<(), RoundError> {
        let Some(ordinal) = self.slots.ordinals[position] else {
            return Ok(());
        };
        let listed = &self.snapshot.pods[position];
        let errors = self.create_claims(ordinal, listed.name(), PvcFix::Pending);
        if !errors.is_empty() {
            return Err(RoundError(aggregate(errors)));
        }
        let owner = Owner {
            name: listed.name(),
            uid: listed.uid(),
        };
        self.fix_claims(ordinal, owner, PvcFix::Pending);
        Ok(())
    }

    fn refresh(&mut self, position: usize) -> Result<(), RoundError> {
        if self.refresh_pod(position) {
            self.refresh_wrote = true;
        }
        Ok(())
    }

    fn enforce_identity(&mut self, position: usize) -> Result<(), RoundError> {
        let Some(ordinal) = self.slots.ordinals[position] else {
            return Ok(());
        };
        // Borrowed from the snapshot, not from the round the steps below change.
        let listed = &self.snapshot.pods[position];
        let (name, uid) = (listed.name(), listed.uid());
        let identity_ok = identity_matches(
            self.set,
            ordinal,
            name,
            listed.namespace(),
            label(listed, keys::STATEFULSET_POD_NAME),
        );
        let claims_ok = self.claims_match(ordinal, uid);
        let storage_ok = storage_matches(self.set, ordinal, listed.claim_volumes());
        // A pod the refresh wrote this round is fixed in the next (its cached version is gone).
        if (identity_ok && storage_ok && claims_ok) || self.written[position] {
            return Ok(());
        }
        let Some(p) = self.whole(position) else {
            return Ok(());
        };
        let after = with_identity(self.set, &p, ordinal, identity_ok, storage_ok);
        if !storage_ok {
            let errors = self.create_claims(ordinal, name, PvcFix::Identity);
            if !errors.is_empty() {
                return Err(self.fail(Verb::Update, name, aggregate(errors)));
            }
        }
        if !claims_ok {
            let owner = Owner { name, uid };
            self.fix_claims(ordinal, owner, PvcFix::Identity);
        }
        self.actions.push(Action::UpdatePod {
            before: p,
            after: Box::new(after),
        });
        Ok(())
    }

    fn fix_condemned_claims(&mut self, position: usize) -> Result<(), RoundError> {
        let Some(ordinal) = self.slots.ordinals[position] else {
            return Ok(());
        };
        let listed = &self.snapshot.pods[position];
        let owner = Owner {
            name: listed.name(),
            uid: listed.uid(),
        };
        self.fix_claims(ordinal, owner, PvcFix::Condemned);
        Ok(())
    }

    fn wait(&mut self, after: Duration) {
        self.push_requeue(after);
    }
}

impl update::Hands for Round<'_> {
    type Error = RoundError;

    fn delete(&mut self, position: usize) -> Result<bool, RoundError> {
        Ok(matches!(self.delete_pod(position), Deleted::Deleted))
    }

    /// `inPlaceUpdatePod`, then, where the update cannot be done in place, `deletePod`.
    fn update(&mut self, position: usize) -> Result<Updated, RoundError> {
        let policy = self.set.pod_update_policy();
        if matches!(policy, IN_PLACE_IF_POSSIBLE | IN_PLACE_ONLY) {
            let Some(p) = self.whole(position) else {
                // Planned again with the pod whole.
                return Ok(Updated::PreDeleting);
            };
            let mut specs = std::mem::take(&mut self.specs);
            let in_place = self.in_place();
            // One in-place update at a time per pod: a SidecarSet's, in progress, finishes first.
            let foreign = !self.snapshot.pods[position]
                .summary
                .engine_at_rest(EngineOwner::Workload)
                && in_place.foreign_update(&p).is_some();
            let grace = in_place.grace();
            let start = (!foreign).then(|| in_place.start(&p, &self.update.0, &mut specs));
            self.specs = specs;
            let Some(start) = start else {
                self.push_requeue(FOREIGN_UPDATE_REQUEUE);
                return Ok(Updated::PreDeleting);
            };
            match start {
                InPlaceStart::Start(action) => {
                    self.actions.push(action);
                    if let Some(grace) = grace {
                        self.push_requeue(grace);
                    }
                    return Ok(Updated::InPlace);
                }
                InPlaceStart::Hook(action) => {
                    self.actions.push(action);
                    return Ok(Updated::InPlace);
                }
                InPlaceStart::Held => return Ok(Updated::InPlace),
                InPlaceStart::NotInPlace(_) if policy == IN_PLACE_ONLY => {
                    return Err(RoundError(format!(
                        "find strategy is InPlaceOnly but Pod {} can not update in-place",
                        self.pod(position).name()
                    )));
                }
                InPlaceStart::NotInPlace(_) => {}
            }
        }
        Ok(match self.delete_pod(position) {
            Deleted::Deleted => Updated::Deleted,
            Deleted::Held(_) => Updated::PreDeleting,
        })
    }

    fn wait(&mut self, after: Duration) {
        self.push_requeue(after);
    }

    fn priority(&self, a: Option<usize>, b: Option<usize>) -> Ordering {
        let Some(strategy) = self
            .set
            .spec
            .update_strategy
            .rolling_update
            .as_ref()
            .and_then(|r| r.unordered_update.as_ref())
            .and_then(|u| u.priority_strategy.as_ref())
        else {
            return Ordering::Equal;
        };
        // A pod not made yet has its template's labels.
        let template_labels = self
            .current
            .1
            .metadata
            .as_ref()
            .and_then(|m| m.labels.as_ref());
        let labels = |p: Option<usize>| match p {
            Some(p) => self.pod(p).labels(),
            None => template_labels,
        };
        priority_order(strategy, labels(a), labels(b))
    }
}

/// Go's `utilerrors.NewAggregate(...).Error()`: one error as it is, several in brackets.
fn aggregate(errors: Vec<String>) -> String {
    match errors.len() {
        1 => errors.into_iter().next().unwrap_or_default(),
        _ => format!("[{}]", errors.join(", ")),
    }
}
