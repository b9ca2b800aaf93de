//! The in-place steps every workload round takes (OpenKruise `pkg/util/inplaceupdate` with its
//! revision adapter): the refresh of updates in flight and of lifecycle states, and the start of
//! an in-place update of one pod, over the engine in [`crate::inplace`].

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::Pod;

use super::engine::ENGINE;
use super::facts::PodFacts;
use super::lifecycle::{self, LifecycleState, PREPARING_UPDATE, UPDATING};
use super::listed::{ListedPod, WholePods};
use super::pod;
use super::readiness;
use super::revision::{RevisionScheme, short_hash};
use super::{Action, Event, PodAfter, PodWrite, Purpose, push_requeue};
use crate::api::cloneset::Lifecycle;
use crate::api::keys;
use crate::inplace::{
    self, CalculateOptions, EnvFromMetadata, Revision, Step, batch, conditions, env_hash, state,
};

/// What the in-place steps of one round read of the workload and its history.
pub struct InPlace<'a> {
    /// The workload's revisions (the update revision among them).
    pub history: &'a [ControllerRevision],
    pub scheme: RevisionScheme,
    /// `spec.lifecycle`.
    pub hooks: Option<&'a Lifecycle>,
    /// Whose lifecycle transitions.
    pub table: lifecycle::Table,
    /// `inPlaceUpdateStrategy.gracePeriodSeconds` (0: none).
    pub grace_seconds: i32,
    /// `InPlaceOnly`: a changed `volumeClaimTemplates` hash does not force a re-creation.
    pub ignore_volume_claim_templates_hash_diff: bool,
    pub now: Timestamp,
    pub now_text: &'a str,
}

/// What a step decided: actions to send, when to look again, and whether it wrote any pod.
#[derive(Debug, Default)]
pub struct StepOutcome {
    pub actions: Vec<Action>,
    pub requeue: Option<Duration>,
    pub wrote: bool,
}

/// How soon to look again at a pod another owner is upgrading in place.
pub const FOREIGN_UPDATE_REQUEUE: Duration = Duration::from_secs(5);

impl InPlace<'_> {
    /// The grace period as a wait.
    pub fn grace(&self) -> Option<Duration> {
        (self.grace_seconds > 0)
            .then(|| Duration::from_secs(self.grace_seconds.unsigned_abs().into()))
    }

    /// The revision of an in-place update in progress on `p` that is not one of this workload's.
    pub fn foreign_update(&self, p: &Pod) -> Option<String> {
        inplace::in_flight_revision(p).filter(|revision| {
            !self
                .history
                .iter()
                .any(|r| self.scheme.pod_value(r) == revision.as_str())
        })
    }

    /// The refresh step of every update round over the active pods and their facts: moves
    /// updates in flight forward and lifecycle states on. `outcome.wrote`: some pod was written
    /// (then the round updates nothing else).
    pub fn refresh(
        &self,
        active: &[&ListedPod],
        facts: &[PodFacts],
        update_revision: &str,
        whole: &WholePods,
    ) -> StepOutcome {
        let mut out = StepOutcome::default();
        for (listed, facts) in active.iter().zip(facts) {
            // Most pods of a large workload have nothing in flight and nothing to move on.
            if facts.engine_idle && !lifecycle_may_move(facts) {
                continue;
            }
            let Some(p) = whole.get(listed) else {
                continue;
            };
            // Another owner's update (a SidecarSet's batches) is driven by that owner.
            let step = if facts.engine_idle || self.foreign_update(p).is_some() {
                Ok(Step::Idle)
            } else {
                inplace::next_step(p, None, &ENGINE, self.now)
            };
            match step {
                Ok(step) => {
                    push_requeue(&mut out.requeue, step.requeue_after());
                    if let Some(write) = engine_write(step) {
                        out.actions.push(Action::WritePod {
                            before: p.clone(),
                            writes: vec![write],
                            purpose: Purpose::Refresh,
                        });
                        out.wrote = true;
                        continue;
                    }
                }
                // An unreadable state annotation is reported and the pod treated as carrying none.
                Err(error) => out.actions.push(Action::Event(Event::warning(
                    "InvalidInPlaceUpdateState",
                    format!("pod {}: {error}", pod::name(p)),
                ))),
            }
            let at_update_revision = self.scheme.pod_at(&**p, update_revision);
            if let Some(after) = self.transition(p, at_update_revision) {
                out.actions.push(Action::WritePod {
                    before: p.clone(),
                    writes: vec![PodWrite::spec(after)],
                    purpose: Purpose::Lifecycle,
                });
                out.wrote = true;
            }
        }
        out
    }

    /// The pod with its lifecycle state moved on ([`lifecycle::next_state`]) and, where the
    /// scheme writes one, a missing `pod-template-hash` added; `None` when nothing changes.
    pub fn transition(&self, p: &Pod, at_update_revision: bool) -> Option<Pod> {
        let next = lifecycle::next_state(p, self.hooks, self.table, at_update_revision, || {
            inplace::pod_update_completed(p, ENGINE.hasher).is_ok()
        });
        let add_hash = self.scheme.template_hash && pod::missing_template_hash(p);
        // Most pods of a large workload need nothing: no copy of them is made.
        if next.is_none() && !add_hash {
            return None;
        }
        let mut after = p.clone();
        if let Some(state) = next {
            lifecycle::set_lifecycle(&mut after, state, self.now_text);
        }
        if add_hash && let Some(revision) = pod::label(p, keys::CONTROLLER_REVISION_HASH) {
            let hash = short_hash(revision).to_string();
            after
                .metadata
                .labels
                .get_or_insert_with(BTreeMap::new)
                .insert(pod::POD_TEMPLATE_HASH.into(), hash);
        }
        (after != *p).then_some(after)
    }

    /// The start of an in-place update of `p` to `target` (as the pods name it), or the hook's
    /// say first, or why it cannot be done in place.
    pub fn start(&self, p: &Arc<Pod>, target: &str, specs: &mut SpecCache) -> InPlaceStart {
        let state = LifecycleState::of(lifecycle::state(&**p));
        if !state.allows_in_place_update() {
            return InPlaceStart::NotInPlace(format!(
                "not allowed to in-place update pod {} in state {}",
                pod::name(p),
                lifecycle::state(&**p)
            ));
        }
        let old = self
            .history
            .iter()
            .find(|r| self.scheme.pod_at(&**p, self.scheme.pod_value(r)));
        let new = self
            .history
            .iter()
            .find(|r| self.scheme.pod_value(r) == target);
        // Only a node agent restarts a container whose env reads changed metadata; without one
        // the new value reaches the env through a new pod.
        let env_from_metadata = if env_hash::node_agent_reports(p) {
            EnvFromMetadata::InPlace
        } else {
            EnvFromMetadata::Recreate
        };
        let spec = match specs.get(self, old, new, env_from_metadata, target) {
            Ok(spec) => spec,
            Err(reason) => return InPlaceStart::NotInPlace(reason),
        };
        // In place is possible: the inPlaceUpdate hook gets its say first.
        if let Some(hook) = lifecycle::in_place_update(self.hooks) {
            match state {
                LifecycleState::Unset
                | LifecycleState::PreparingNormal
                | LifecycleState::Normal
                    if lifecycle::hooked(p, hook) =>
                {
                    return InPlaceStart::Hook(lifecycle::lifecycle_write(
                        p,
                        PREPARING_UPDATE,
                        self.now_text,
                        Purpose::Lifecycle,
                    ));
                }
                LifecycleState::Updated => {
                    let mut after = Pod::clone(p);
                    lifecycle::set_lifecycle(&mut after, PREPARING_UPDATE, self.now_text);
                    lifecycle::add_markers(&mut after, hook);
                    return InPlaceStart::Hook(Action::WritePod {
                        before: p.clone(),
                        writes: vec![PodWrite::spec(after)],
                        purpose: Purpose::Lifecycle,
                    });
                }
                LifecycleState::PreparingUpdate if lifecycle::hooked(p, hook) => {
                    return InPlaceStart::Held;
                }
                _ => {}
            }
        }
        // markPodNotReady: out of endpoints first, in `PreparingUpdate` (the round's readiness
        // pass writes the condition); the update starts once the pod shows it.
        if matches!(
            state,
            LifecycleState::Unset
                | LifecycleState::PreparingNormal
                | LifecycleState::Normal
                | LifecycleState::PreparingUpdate
        ) && readiness::must_drain_before_update(p, self.hooks)
        {
            return InPlaceStart::Hook(lifecycle::lifecycle_write(
                p,
                PREPARING_UPDATE,
                self.now_text,
                Purpose::Lifecycle,
            ));
        }
        match start_writes(p, spec) {
            Ok(writes) => InPlaceStart::Start(Action::WritePod {
                before: p.clone(),
                writes,
                purpose: Purpose::InPlace {
                    revision: target.to_string(),
                },
            }),
            Err(reason) => InPlaceStart::NotInPlace(reason),
        }
    }
}

/// What [`InPlace::start`] decided for one pod.
#[derive(Debug)]
pub enum InPlaceStart {
    /// The writes that start the update.
    Start(Action),
    /// The inPlaceUpdate hook first: the pod moves into `PreparingUpdate` (from `Updated`, with
    /// the hook's markers put back).
    Hook(Action),
    /// The inPlaceUpdate hook holds the pod in `PreparingUpdate`.
    Held,
    /// It cannot be updated in place (its state, or what changed): why.
    NotInPlace(String),
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

/// Whether [`InPlace::transition`] may write: only these lifecycle states move on by
/// themselves, and only a missing `pod-template-hash` is added to the others. A pod for which it
/// is true is one [`super::listed::read_whole_every_round`] keeps whole.
fn lifecycle_may_move(facts: &PodFacts) -> bool {
    facts.missing_template_hash || facts.lifecycle.moves_on_by_itself()
}

/// The writes that start `start` on `p`, or why it cannot be done in place. What could refuse
/// the start is decided now; building the two pods (copies of `p` with the gate, labels, images
/// and state annotation changed) is deferred to when they are read. A metadata patch can fail on
/// the pod's own metadata: such starts are built at once.
pub fn start_writes(p: &Arc<Pod>, start: &Arc<Start>) -> Result<Vec<PodWrite>, String> {
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
pub struct Start {
    pub spec: state::UpdateSpec,
    /// The target as the pods name it.
    pub target: String,
    pub scheme: RevisionScheme,
    pub now: Timestamp,
    pub now_text: String,
}

impl Start {
    /// The status write (when the gate must turn False first) and the spec write that start the
    /// update of `p`, built now; `Err`: why it cannot be done in place.
    pub fn writes_now(&self, p: &Pod) -> Result<(Option<Pod>, Pod), String> {
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
        if self.scheme.template_hash {
            after
                .metadata
                .labels
                .get_or_insert_with(BTreeMap::new)
                .insert(
                    pod::POD_TEMPLATE_HASH.into(),
                    short_hash(&self.target).into(),
                );
        }
        lifecycle::set_lifecycle(&mut after, UPDATING, &self.now_text);
        Ok(after)
    }
}

/// The in-place calculations of one round, by (old revision, target revision, env handling): it
/// depends on nothing else of the pod, and thousands of pods may start the same update.
#[derive(Default)]
pub struct SpecCache {
    entries: Vec<(SpecKey, Result<Arc<Start>, String>)>,
}

/// Revisions by their position in the history.
type SpecKey = (Option<usize>, Option<usize>, EnvFromMetadata);

impl SpecCache {
    fn get(
        &mut self,
        ctx: &InPlace<'_>,
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
                let scheme = ctx.scheme;
                let (old, new) = (
                    old.and_then(|r| as_revision(scheme, r)),
                    new.and_then(|r| as_revision(scheme, r)),
                );
                let options = CalculateOptions {
                    grace_seconds: ctx.grace().map_or(0, |d| d.as_secs() as i32),
                    env_from_metadata,
                    recreate_on_volume_claim_templates_change: false,
                    ignore_volume_claim_templates_hash_diff: ctx
                        .ignore_volume_claim_templates_hash_diff,
                };
                let start = inplace::calculate_spec(old.as_ref(), new.as_ref(), &options)
                    .map(|spec| {
                        Arc::new(Start {
                            spec,
                            target: target.to_string(),
                            scheme: ctx.scheme,
                            now: ctx.now,
                            now_text: ctx.now_text.to_string(),
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

/// A revision as the engine reads it, named as the pods name it.
fn as_revision(scheme: RevisionScheme, r: &ControllerRevision) -> Option<Revision<'_>> {
    r.data.as_ref().map(|data| Revision {
        name: scheme.pod_value(r),
        data: &data.0,
        volume_claim_templates_hash: None,
    })
}

#[cfg(test)]
mod tests;
