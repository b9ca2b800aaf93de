//! The skeleton of a workload round: observe → plan → send → settle, and the one rule that says
//! when to look again.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::FutureExt;
use jiff::Timestamp;
use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::Pod;
use kube::Resource;
use kube::runtime::controller::Action as Requeue;

use super::adoption::Claimed;
use super::error::WorkloadError;
use super::round::Round;
use super::{PvcMeta, Shell, owned_pods, owned_pvcs, seen};
use crate::podmarks::PodView;
use crate::workload::{ListedPod, Workload, pod};

/// How many times a round is planned again with the pods it asked to read whole.
const MAX_PLANS: usize = 3;
/// When nothing happens, look again after this long while a rollout is unfinished.
pub const IN_FLIGHT_REQUEUE: Duration = Duration::from_secs(15);
/// After a conflicting write: the cache is about to deliver the newer object.
pub const CONFLICT_REQUEUE: Duration = Duration::from_secs(1);
/// Before the caches have listed everything.
const NOT_SYNCED_REQUEUE: Duration = Duration::from_secs(1);
/// After a failed update (reported as an event and a condition).
const FAILED_REQUEUE: Duration = Duration::from_secs(10);

/// What a round observed before planning.
pub struct Observed {
    /// The pods the workload controls (claimed), and its finished or terminating ones, by name.
    pub pods: Vec<ListedPod>,
    /// The PVCs (metadata) that name the workload among their owners, by name.
    pub pvcs: Vec<Arc<PvcMeta>>,
    /// Its revisions in history order, the update revision among them.
    pub history: Vec<ControllerRevision>,
    pub update_revision: String,
    pub collision_count: i32,
    pub now: Timestamp,
}

/// How a round ended, for [`requeue`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A cache has not listed everything yet.
    CachesNotReady,
    /// Earlier writes are not in the cache yet; they are due within this long (their events
    /// trigger a round; this is the fallback).
    Waiting(Duration),
    /// A write met a newer object, or the pods kept changing while read.
    Conflict,
    /// The spec cannot be acted on (an unusable selector): nothing to retry until it changes.
    InvalidSpec,
    /// The planned update failed (reported as an event and a condition).
    Failed,
    /// The round ran: its planner's wish to look again, and whether the rollout is unfinished.
    Done {
        requeue_after: Option<Duration>,
        unfinished: bool,
    },
}

/// When to look again after a round.
pub fn requeue(outcome: Outcome) -> Requeue {
    match outcome {
        Outcome::CachesNotReady => Requeue::requeue(NOT_SYNCED_REQUEUE),
        Outcome::Waiting(left) => Requeue::requeue(left.min(IN_FLIGHT_REQUEUE)),
        Outcome::Conflict => Requeue::requeue(CONFLICT_REQUEUE),
        Outcome::InvalidSpec => Requeue::await_change(),
        Outcome::Failed => Requeue::requeue(FAILED_REQUEUE),
        Outcome::Done {
            requeue_after: Some(after),
            ..
        } => Requeue::requeue(after.min(IN_FLIGHT_REQUEUE)),
        Outcome::Done {
            requeue_after: None,
            unfinished: true,
        } => Requeue::requeue(IN_FLIGHT_REQUEUE),
        Outcome::Done {
            requeue_after: None,
            unfinished: false,
        } => Requeue::await_change(),
    }
}

impl<K> Round<'_, K>
where
    K: Workload
        + Resource<Scope = NamespaceResourceScope>
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug,
{
    /// Observes the world for a round: the caches are ready, earlier writes have been seen,
    /// the pods are claimed, the history is read and the update revision exists. `Err(outcome)`
    /// ends the round there.
    pub async fn observe(&self, shell: &Shell) -> Result<Result<Observed, Outcome>, WorkloadError> {
        let context = self.context;
        if context.pods.wait_until_ready().now_or_never().is_none()
            || shell.pvcs.wait_until_ready().now_or_never().is_none()
        {
            return Ok(Err(Outcome::CachesNotReady));
        }
        if let Some(outcome) = self.behind_own_write() {
            return Ok(Err(outcome));
        }
        let namespace = self.set.namespace();
        let waiting = context
            .lock_expectations()
            .unsatisfied(&self.key, Instant::now(), |name| {
                seen(shell, namespace, name)
            });
        if let Some(left) = waiting {
            return Ok(Err(Outcome::Waiting(left)));
        }
        let pods = match self.claim_pods(owned_pods(context, self.set)).await? {
            Claimed::Pods(pods) => pods,
            Claimed::Stop(outcome) => return Ok(Err(outcome)),
        };
        let pvcs = owned_pvcs(shell, self.set);
        let mut history = self.list_history().await?;
        let (update_revision, collision_count) = self.ensure_update_revision(&mut history).await?;
        Ok(Ok(Observed {
            pods,
            pvcs,
            history,
            update_revision,
            collision_count,
            now: Timestamp::now(),
        }))
    }

    /// `Some(Waiting)` when the workload as this round observes it is older than the shell's own
    /// last write of it ([`Round::wrote`]): a status computed from it would undo that write, so the
    /// round waits for the cache (the write's own watch event starts the next one). Every kind's
    /// round asks this before it computes a status.
    pub fn behind_own_write(&self) -> Option<Outcome> {
        let observed = self.set.meta().resource_version.as_deref();
        self.context
            .lock_expectations()
            .behind_own_write(&self.key, observed, Instant::now())
            .map(Outcome::Waiting)
    }

    /// Plans with `plan` over `pods`; while the plan names pods it was given as summaries only
    /// (`needs_whole`), reads them from the apiserver and plans again (at most three plans).
    /// Pods the workload no longer controls leave the list. `Err(Conflict)`: the pods kept
    /// changing under the round.
    pub async fn plan_whole<P>(
        &self,
        pods: &mut Vec<ListedPod>,
        mut plan: impl FnMut(&[ListedPod]) -> Result<P, WorkloadError>,
        needs_whole: impl Fn(&P) -> &[String],
    ) -> Result<Result<P, Outcome>, WorkloadError> {
        let mut plans = 0;
        loop {
            let planned = plan(pods)?;
            plans += 1;
            if needs_whole(&planned).is_empty() {
                return Ok(Ok(planned));
            }
            if plans == MAX_PLANS {
                // The pods keep changing under the round: the next one starts afresh.
                tracing::debug!(
                    workload = %self.what(),
                    "pods changed while read; planning again later"
                );
                return Ok(Err(Outcome::Conflict));
            }
            // Only pods the workload still controls, as the claim kept them.
            let uid = self.set.meta().uid.as_deref();
            let controlled = |pod: &Pod| !pod::is_active(pod) || pod.controller_uid() == uid;
            self.read_whole(needs_whole(&planned), pods, controlled)
                .await?;
        }
    }
}
