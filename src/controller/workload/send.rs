//! Sends a plan: its PVC writes and its actions in the order the kind's send policy says, each
//! answer reported in the kind's words ([`crate::workload::events::Wording`]) and folded into
//! what the round met ([`Executed`]).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use kube::ResourceExt;

use super::error::{ApiError, WorkloadError, error_text, status_code};
use super::round::{Answer, Round};
use super::seam::{Executed, PvcWrites, Seam};
use crate::workload::events::{Refusal, Refused, Request};
use crate::workload::{Action, Workload};

impl<S: Seam> Round<'_, S> {
    /// Sends the plan's PVC clean-up, then its actions as the kind's send policy orders them.
    pub async fn send(
        &self,
        actions: &[Action],
        pvcs: PvcWrites<'_>,
    ) -> Result<Executed, WorkloadError> {
        let policy = S::SEND;
        let mut executed = Executed::default();
        for hand_over in pvcs.hand_over {
            let request = Request::UpdatePvcOwners {
                pvc: &hand_over.claim,
                pod: &hand_over.pod,
                fix: None,
            };
            let answer = self.hand_pvc_over(hand_over).await?;
            self.report(request, answer, &mut executed).await?;
        }
        self.delete_pvcs(pvcs.clean_up, true, &mut executed).await?;
        let mut rest: Vec<&Action> = actions.iter().collect();
        if policy.creations_first {
            let creations: Vec<&Pod> = actions
                .iter()
                .filter_map(|a| match a {
                    Action::CreatePod { pod, .. } => Some(pod.as_ref()),
                    _ => None,
                })
                .collect();
            self.create_slow_start(&creations, pvcs.create, &mut executed)
                .await?;
            rest.retain(|a| !matches!(a, Action::CreatePod { .. }));
        }
        let mut next = 0;
        while next < rest.len() && !executed.stopped(policy) {
            let deletions = rest[next..]
                .iter()
                .take_while(|a| matches!(a, Action::DeletePod { .. }))
                .count();
            if policy.parallel_deletes && deletions > 1 {
                let names = rest[next..next + deletions].iter().filter_map(|a| match a {
                    Action::DeletePod { name } => Some(name.as_str()),
                    _ => None,
                });
                let answers = futures::future::join_all(
                    names.map(|name| async move { (name, self.delete_pod(name).await) }),
                )
                .await;
                for (name, answer) in answers {
                    self.deleted(name, answer, pvcs, &mut executed).await?;
                }
                next += deletions;
            } else {
                self.send_one(rest[next], pvcs, &mut executed).await?;
                next += 1;
            }
        }
        Ok(executed)
    }

    async fn send_one(
        &self,
        action: &Action,
        pvcs: PvcWrites<'_>,
        executed: &mut Executed,
    ) -> Result<(), WorkloadError> {
        match action {
            Action::CreatePod { pod, .. } => {
                let answer = self.create_pod(pod).await;
                let name = pod.name_any();
                self.report(Request::CreatePod { pod: &name }, answer, executed)
                    .await
            }
            Action::DeletePod { name } => {
                let answer = self.delete_pod(name).await;
                self.deleted(name, answer, pvcs, executed).await
            }
            Action::WritePod {
                before,
                writes,
                purpose,
            } => {
                let answer = self.write_pod(before, writes).await?;
                let name = before.name_any();
                let request = Request::WritePod {
                    pod: &name,
                    purpose,
                };
                self.report(request, answer, executed).await
            }
            Action::UpdatePod { before, after } => {
                let answer = self.update_pod(before, after).await?;
                let name = before.name_any();
                self.report(Request::UpdatePod { pod: &name }, answer, executed)
                    .await
            }
            Action::CreatePvc { pvc, pod, fix } => {
                let answer = self.create_pvc(pvc).await;
                let name = pvc.name_any();
                let request = Request::CreatePvc {
                    pvc: &name,
                    pod,
                    fix: Some(*fix),
                };
                self.report(request, answer, executed).await
            }
            Action::UpdatePvcOwners {
                before,
                owner_references,
                pod,
                fix,
            } => {
                let answer = self.replace_pvc_owners(before, owner_references).await;
                let name = before.name_any();
                let request = Request::UpdatePvcOwners {
                    pvc: &name,
                    pod,
                    fix: Some(*fix),
                };
                self.report(request, answer, executed).await
            }
            Action::Event(event) => {
                self.publish(event).await;
                Ok(())
            }
        }
    }

    /// Reports a pod's deletion; once it is accepted its PVCs go too (OpenKruise).
    async fn deleted(
        &self,
        name: &str,
        answer: Answer,
        pvcs: PvcWrites<'_>,
        executed: &mut Executed,
    ) -> Result<(), WorkloadError> {
        let accepted = matches!(answer, Answer::Done);
        self.report(Request::DeletePod { pod: name }, answer, executed)
            .await?;
        match pvcs.delete_with_pod.get(name) {
            Some(names) if accepted => self.delete_pvcs(names, false, executed).await,
            _ => Ok(()),
        }
    }

    /// Deletes PVCs; a refusal is reported and the rest still tried.
    async fn delete_pvcs(
        &self,
        names: &[String],
        clean_up: bool,
        executed: &mut Executed,
    ) -> Result<(), WorkloadError> {
        for name in names {
            let answer = self.delete_pvc(name).await;
            let request = Request::DeletePvc {
                pvc: name,
                clean_up,
            };
            self.report(request, answer, executed).await?;
        }
        Ok(())
    }

    /// Creates in batches of 1, 2, 4, …; a batch with a refusal stops the rest (a quota or
    /// webhook refusal would refuse them all). Each pod's missing PVCs are created first; a PVC
    /// that cannot be created holds its pod back.
    async fn create_slow_start(
        &self,
        pods: &[&Pod],
        pvcs: &BTreeMap<String, Vec<PersistentVolumeClaim>>,
        executed: &mut Executed,
    ) -> Result<(), WorkloadError> {
        let mut start = 0;
        let mut batch = 1;
        while start < pods.len() {
            let end = (start + batch).min(pods.len());
            let sent = futures::future::join_all(pods[start..end].iter().map(|pod| {
                let name = pod.name_any();
                let pod_pvcs = pvcs.get(&name).map_or(&[][..], Vec::as_slice);
                async move {
                    let mut answers = Vec::new();
                    for pvc in pod_pvcs {
                        let answer = self.create_pvc(pvc).await;
                        let refused = matches!(answer, Answer::Refused(_));
                        answers.push((pvc.name_any(), answer));
                        if refused {
                            return (name, answers, None);
                        }
                    }
                    let answer = self.create_pod(pod).await;
                    (name, answers, Some(answer))
                }
            }))
            .await;
            let mut refused = false;
            for (name, pvc_answers, answer) in sent {
                for (pvc, answer) in pvc_answers {
                    refused |= matches!(answer, Answer::Refused(_));
                    let request = Request::CreatePvc {
                        pvc: &pvc,
                        pod: &name,
                        fix: None,
                    };
                    self.report(request, answer, executed).await?;
                }
                if let Some(answer) = answer {
                    refused |= matches!(answer, Answer::Refused(_));
                    self.report(Request::CreatePod { pod: &name }, answer, executed)
                        .await?;
                }
            }
            if refused {
                break;
            }
            start = end;
            batch *= 2;
        }
        Ok(())
    }

    /// Publishes what the kind says of `answer` to `request`, and folds it into `executed`.
    async fn report(
        &self,
        request: Request<'_>,
        answer: Answer,
        executed: &mut Executed,
    ) -> Result<(), WorkloadError> {
        let wording = S::WORDING;
        let set = self.set.name();
        match answer {
            Answer::Done => {
                for note in wording.events(set, request, None) {
                    self.publish_note(&note).await;
                }
            }
            Answer::Moot => {}
            Answer::Conflict => executed.conflicted = true,
            Answer::Refused(error) => {
                let message = error_text(&error);
                let refusal = Refusal {
                    code: status_code(&error),
                    message: &message,
                };
                for note in wording.events(set, request, Some(refusal)) {
                    self.publish_note(&note).await;
                }
                match wording.refused(request, refusal) {
                    Refused::Failure(failure) => {
                        tracing::warn!(error = failure.error, "{request:?} refused");
                        executed.failure.get_or_insert(failure);
                    }
                    Refused::Reported => {}
                    Refused::Error => {
                        return Err(WorkloadError::Api(ApiError {
                            what: describe(request),
                            source: error,
                        }));
                    }
                }
            }
        }
        Ok(())
    }
}

/// What a request was about, for the round's error.
fn describe(request: Request<'_>) -> String {
    match request {
        Request::CreatePod { pod }
        | Request::DeletePod { pod }
        | Request::WritePod { pod, .. }
        | Request::UpdatePod { pod } => format!("pod {pod}"),
        Request::CreatePvc { pvc, .. }
        | Request::UpdatePvcOwners { pvc, .. }
        | Request::DeletePvc { pvc, .. } => format!("pvc {pvc}"),
    }
}
