//! The skeleton of a workload round, one for every kind: observe → plan → send → settle, and the
//! one error policy.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::FutureExt;
use jiff::Timestamp;
use k8s_openapi::api::core::v1::Pod;
use kube::Resource;
use kube::runtime::controller::Action as Requeue;
use tracing::Instrument;

use super::adoption::Claimed;
use super::error::WorkloadError;
use super::outcome::{Outcome, requeue};
use super::round::Round;
use super::seam::{Executed, Observed, Plan, Seam};
use super::{PvcCache, Shell, listed_pods, seen};
use crate::podmarks::PodView;
use crate::workload::{ListedPod, Workload, pod, readiness};

/// How many times a round is planned again with the pods it asked to read whole.
const MAX_PLANS: usize = 3;
/// After a round that ended in an error.
const ERROR_REQUEUE: Duration = Duration::from_secs(5);

/// One round of the workload `set`: observe → plan → send → settle, in a span naming its kind,
/// namespace and name.
pub async fn reconcile<S: Seam>(
    set: Arc<S::Set>,
    shell: Arc<Shell<S>>,
) -> Result<Requeue, WorkloadError> {
    let span = tracing::info_span!(
        "reconcile",
        kind = %S::Set::kind(&()),
        namespace = set.namespace(),
        name = set.name(),
    );
    async {
        let round = Round::new(&shell, &set);
        let (mut pods, observed) = match round.observe().await? {
            Ok(observed) => observed,
            Err(outcome) => return Ok(requeue(outcome)),
        };
        let planned = round
            .plan_whole(&mut pods, |pods| {
                let mut plan = shell.seam.plan(&set, &observed, pods)?;
                // markPodNotReady: every gated pod's condition follows its lifecycle state.
                readiness::follow_lifecycle(&mut plan, pods, S::hooks(&set), observed.now);
                Ok(plan)
            })
            .await?;
        let plan = match planned {
            Ok(plan) => plan,
            Err(outcome) => return Ok(requeue(outcome)),
        };
        let executed = round.send(&plan.actions, S::pvc_writes(&plan)).await?;
        Ok(requeue(round.settle(plan, executed, observed.now).await?))
    }
    .instrument(span)
    .await
}

/// A round that ended in an error: logged and counted by kind and reason, retried after
/// [`ERROR_REQUEUE`].
pub fn error_policy<S: Seam>(
    set: Arc<S::Set>,
    error: &WorkloadError,
    shell: Arc<Shell<S>>,
) -> Requeue {
    tracing::warn!(
        kind = %S::Set::kind(&()),
        namespace = set.namespace(),
        name = set.name(),
        %error,
        "reconcile failed"
    );
    shell
        .context
        .metrics
        .controllers
        .reconcile_failed(S::COMPONENT, &error.metric_label());
    Requeue::requeue(ERROR_REQUEUE)
}

impl<S: Seam> Round<'_, S> {
    /// Observes the world for a round: the caches are ready, earlier writes have been seen,
    /// the pods are claimed, the history is read and the update revision exists. `Err(outcome)`
    /// ends the round there.
    pub async fn observe(
        &self,
    ) -> Result<Result<(Vec<ListedPod>, Observed), Outcome>, WorkloadError> {
        let (context, seam) = (self.context, &self.shell.seam);
        if context.pods.wait_until_ready().now_or_never().is_none()
            || !seam.pvcs().ready()
            || !seam.ready()
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
                seen(context, seam.pvcs(), namespace, name)
            });
        if let Some(left) = waiting {
            return Ok(Err(Outcome::Waiting(left)));
        }
        let mut listed = listed_pods(context, self.set, S::LISTING);
        listed.retain(|p| S::is_member(self.set, p.name()));
        let mut pods = match self.claim_pods(listed).await? {
            Claimed::Pods(pods) => pods,
            Claimed::Stop(outcome) => return Ok(Err(outcome)),
        };
        let mut history = self.list_history().await?;
        let (update_revision, collision_count) = self.ensure_update_revision(&mut history).await?;
        let first = S::read_first(&pods);
        if !first.is_empty() {
            self.read_whole(&first, &mut pods, |_| true).await?;
        }
        let observed = Observed {
            history,
            update_revision,
            collision_count,
            now: Timestamp::now(),
        };
        Ok(Ok((pods, observed)))
    }

    /// `Some(Waiting)` when the workload as this round observes it is older than the shell's own
    /// last write of it ([`Round::wrote`]): a status computed from it would undo that write, so the
    /// round waits for the cache (the write's own watch event starts the next one).
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
    pub async fn plan_whole(
        &self,
        pods: &mut Vec<ListedPod>,
        mut plan: impl FnMut(&[ListedPod]) -> Result<Plan<S>, WorkloadError>,
    ) -> Result<Result<Plan<S>, Outcome>, WorkloadError> {
        let mut plans = 0;
        loop {
            let planned = plan(pods)?;
            plans += 1;
            if planned.needs_whole.is_empty() {
                return Ok(Ok(planned));
            }
            if plans == MAX_PLANS {
                // The pods keep changing under the round: the next one starts afresh.
                tracing::debug!("pods changed while read; planning again later");
                return Ok(Err(Outcome::Conflict));
            }
            // Only pods the workload still controls, as the claim kept them.
            let uid = self.set.meta().uid.as_deref();
            let controlled = |pod: &Pod| !pod::is_active(pod) || pod.controller_uid() == uid;
            self.read_whole(&planned.needs_whole, pods, controlled)
                .await?;
        }
    }

    /// The writes after the pods: the status (when it changed, or the kind wants a failure's
    /// condition written), the kind's own write of itself, history truncation, the plan's error;
    /// then how the round ended.
    pub async fn settle(
        &self,
        mut plan: Plan<S>,
        executed: Executed,
        now: Timestamp,
    ) -> Result<Outcome, WorkloadError> {
        let set = self.set;
        let force = self.shell.seam.after_send(set, &mut plan, &executed, now);
        if plan.write_status || force {
            match self.write_status(S::status_write(set, &plan.status)).await {
                Ok(()) => {}
                // Written from an object that moved on: the next round computes it again.
                Err(WorkloadError::Api(error)) if error.status_code() == Some(409) => {
                    return Ok(Outcome::Conflict);
                }
                Err(error) => return Err(error),
            }
        }
        if let Some(patch) = S::own_patch(&plan) {
            self.patch_own(patch).await?;
        }
        self.delete_revisions(&plan.revisions_to_delete).await?;
        if let Some(message) = &plan.error {
            if let Some(reason) = S::PLAN_ERROR_REASON {
                self.publish(&crate::workload::Event::warning(reason, message.clone()))
                    .await;
            }
            return Ok(Outcome::Failed);
        }
        if executed.failure.is_some() && S::SEND.stop_at_first_failure {
            return Ok(Outcome::Failed);
        }
        if executed.conflicted {
            return Ok(Outcome::Conflict);
        }
        Ok(Outcome::Done {
            requeue_after: plan.requeue_after,
            unfinished: !plan.actions.is_empty() || S::unfinished(set, &plan.status),
        })
    }
}
