//! One round of a workload: the requests it sends, as methods of [`Round`]. Each pod or PVC
//! request keeps the expectations and answers an [`Answer`]; what the answer is reported as is
//! the kind's ([`super::send`]).

use std::collections::HashMap;
use std::sync::Arc;

use futures::StreamExt;
use jiff::Timestamp;
use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{ObjectReference, PersistentVolumeClaim, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::runtime::events::{Event as KubeEvent, EventType};
use kube::{Resource, ResourceExt};
use serde_json::json;

use super::error::{WorkloadError, api_error, status_code};
use super::seam::{Seam, StatusWrite};
use super::{Context, Shell, pvc_key};
use crate::controller::pod_write;
use crate::inplace;
use crate::podmarks::PodView;
use crate::workload::events::{About, Note};
use crate::workload::pvc::HandOver;
use crate::workload::{Event, ListedPod, PodWrite, Workload};

/// How many pods are read from the apiserver at once.
const CONCURRENT_READS: usize = 16;

/// One round of the workload `set`.
pub struct Round<'a, S: Seam> {
    pub shell: &'a Shell<S>,
    pub context: &'a Context,
    pub set: &'a S::Set,
    /// `namespace/name`: the key of its expectations.
    pub key: String,
    pods: Api<Pod>,
    pvcs: Api<PersistentVolumeClaim>,
}

/// How the apiserver answered one pod or PVC request.
#[derive(Debug)]
pub enum Answer {
    Done,
    /// Nothing to report: gone already (a deletion), there already (a PVC created), or moved on
    /// meanwhile where the next round decides again (a PVC handed over).
    Moot,
    /// The object moved on since the round read it (409, or 404 on a write).
    Conflict,
    Refused(kube::Error),
}

impl<'a, S: Seam> Round<'a, S> {
    pub fn new(shell: &'a Shell<S>, set: &'a S::Set) -> Self {
        let namespace = Workload::namespace(set);
        let client = shell.context.client.clone();
        Round {
            shell,
            context: &shell.context,
            set,
            key: set.key(),
            pods: Api::namespaced(client.clone(), namespace),
            pvcs: Api::namespaced(client, namespace),
        }
    }

    /// `<kind> <namespace>/<name>`, lower case, for errors and logs.
    pub fn what(&self) -> String {
        format!("{} {}", S::Set::kind(&()).to_lowercase(), self.key)
    }

    /// The kind's API in the workload's namespace.
    pub fn api<T: Resource<Scope = NamespaceResourceScope, DynamicType = ()>>(&self) -> Api<T> {
        Api::namespaced(self.context.client.clone(), Workload::namespace(self.set))
    }

    /// Reads `names` from the apiserver into `pods`, whole. A pod gone, or one `keep` refuses,
    /// leaves the list.
    pub async fn read_whole(
        &self,
        names: &[String],
        pods: &mut Vec<ListedPod>,
        keep: impl Fn(&Pod) -> bool,
    ) -> Result<(), WorkloadError> {
        let reads = futures::stream::iter(names.iter().cloned())
            .map(|name| {
                let api = self.pods.clone();
                async move {
                    let read = api.get_opt(&name).await;
                    (name, read)
                }
            })
            .buffer_unordered(CONCURRENT_READS)
            .collect::<Vec<_>>()
            .await;
        let mut fresh: HashMap<String, Option<ListedPod>> = HashMap::with_capacity(reads.len());
        for (name, read) in reads {
            let read = read.map_err(api_error::<WorkloadError>(format!("pod {name}")))?;
            let pod = read.filter(|pod| keep(pod));
            fresh.insert(name, pod.map(|pod| ListedPod::whole(Arc::new(pod))));
        }
        pods.retain_mut(|p| match fresh.remove(p.name()) {
            None => true,
            Some(None) => false,
            Some(Some(read)) => {
                *p = read;
                true
            }
        });
        Ok(())
    }

    /// Creates `pod`, expected by name until the cache shows it.
    pub async fn create_pod(&self, pod: &Pod) -> Answer {
        let name = pod.name_any();
        self.context
            .lock_expectations()
            .expect_create(&self.key, &name);
        match self.pods.create(&PostParams::default(), pod).await {
            Ok(_) => Answer::Done,
            Err(error) => {
                self.context.lock_expectations().forget(&self.key, &name);
                Answer::Refused(error)
            }
        }
    }

    /// Deletes the pod `name`, expected until the cache shows it going.
    pub async fn delete_pod(&self, name: &str) -> Answer {
        self.delete_expected(&self.pods, name, name).await
    }

    /// Deletes the PVC `name`, expected until the cache shows it going.
    pub async fn delete_pvc(&self, name: &str) -> Answer {
        self.delete_expected(&self.pvcs, name, &pvc_key(name)).await
    }

    async fn delete_expected<K>(&self, api: &Api<K>, name: &str, expected: &str) -> Answer
    where
        K: Clone + serde::de::DeserializeOwned + std::fmt::Debug,
    {
        self.context
            .lock_expectations()
            .expect_delete(&self.key, expected);
        match api.delete(name, &DeleteParams::default()).await {
            Ok(_) => Answer::Done,
            Err(error) => {
                self.context.lock_expectations().forget(&self.key, expected);
                if status_code(&error) == Some(404) {
                    Answer::Moot
                } else {
                    Answer::Refused(error)
                }
            }
        }
    }

    /// Creates `pvc` (an AlreadyExists answer counts as created: the cache had not shown it,
    /// perhaps without the label it watches).
    pub async fn create_pvc(&self, pvc: &PersistentVolumeClaim) -> Answer {
        let expected = pvc_key(&pvc.name_any());
        self.context
            .lock_expectations()
            .expect_create(&self.key, &expected);
        match self.pvcs.create(&PostParams::default(), pvc).await {
            Ok(_) => Answer::Done,
            Err(error) => {
                self.context
                    .lock_expectations()
                    .forget(&self.key, &expected);
                if status_code(&error) == Some(409) {
                    Answer::Moot
                } else {
                    Answer::Refused(error)
                }
            }
        }
    }

    /// A PUT of `before` (the whole PVC as cached, its resourceVersion guarding the write) with
    /// `owners` as its ownerReferences.
    pub async fn replace_pvc_owners(
        &self,
        before: &PersistentVolumeClaim,
        owners: &[OwnerReference],
    ) -> Answer {
        let name = before.name_any();
        let mut after = before.clone();
        after.metadata.owner_references = Some(owners.to_vec());
        match self
            .pvcs
            .replace(&name, &PostParams::default(), &after)
            .await
        {
            Ok(written) => {
                self.expect_version(&pvc_key(&name), &written.metadata);
                Answer::Done
            }
            Err(error) => match status_code(&error) {
                Some(409) => Answer::Conflict,
                // Gone: the next round sees it gone.
                Some(404) => Answer::Moot,
                _ => Answer::Refused(error),
            },
        }
    }

    /// Hands a PVC (known by its metadata only) to its pod: its ownerReferences replaced with a
    /// JSON patch guarded by the version the decision was made on. A PVC that changed or went
    /// meanwhile is left to the next round.
    pub async fn hand_pvc_over(&self, hand_over: &HandOver) -> Result<Answer, WorkloadError> {
        let name = &hand_over.claim;
        let mut operations = Vec::new();
        if let Some(version) = &hand_over.resource_version {
            operations.push(
                json!({"op": "replace", "path": "/metadata/resourceVersion", "value": version}),
            );
        }
        operations.push(json!({
            "op": "replace",
            "path": "/metadata/ownerReferences",
            "value": hand_over.owner_references,
        }));
        let patch: json_patch::Patch = serde_json::from_value(serde_json::Value::Array(operations))
            .map_err(|e| WorkloadError::encoding(format!("pvc {name}"), e))?;
        let sent = self
            .pvcs
            .patch_metadata(name, &PatchParams::default(), &Patch::<()>::Json(patch))
            .await;
        Ok(match sent {
            Ok(answer) => {
                self.expect_version(&pvc_key(name), &answer.metadata);
                tracing::info!(pvc = %name, pod = %hand_over.pod, "PVC handed to its pod");
                Answer::Done
            }
            Err(error) if matches!(status_code(&error), Some(404 | 409)) => Answer::Moot,
            Err(error) => Answer::Refused(error),
        })
    }

    /// Sends one pod's writes in order, each guarded by the version the previous one returned.
    /// A conflict stops them (nothing more is sent for this pod).
    pub async fn write_pod(
        &self,
        before: &Arc<Pod>,
        writes: &[PodWrite],
    ) -> Result<Answer, WorkloadError> {
        let name = before.name_any();
        let mut base = Pod::clone(before);
        let mut gate_just_written = false;
        for write in writes {
            // A grace period counts from when the gate write that took the pod out of endpoints was
            // answered, not from when the round was planned (its writes of many pods take a while).
            let restamped = (gate_just_written && !write.status)
                .then(|| {
                    let mut pod = Pod::clone(&write.pod);
                    inplace::state::restamp_grace_start(&mut pod, Timestamp::now())
                        .is_ok_and(|changed| changed)
                        .then_some(pod)
                })
                .flatten();
            let after: &Pod = restamped.as_ref().unwrap_or(&write.pod);
            let Some(patch) = pod_write::guarded_patch(&base, after)
                .map_err(|e| WorkloadError::encoding(format!("pod {name}"), e))?
            else {
                continue;
            };
            let patch = Patch::<()>::Json(patch);
            let params = PatchParams::default();
            let sent = if write.status {
                self.pods.patch_status(&name, &params, &patch).await
            } else {
                self.pods.patch(&name, &params, &patch).await
            };
            match sent {
                Ok(answer) => {
                    self.expect_version(&name, &answer.metadata);
                    base = after.clone();
                    base.metadata.resource_version = answer.metadata.resource_version;
                    gate_just_written = write.status;
                }
                Err(error) if matches!(status_code(&error), Some(409 | 404)) => {
                    return Ok(Answer::Conflict);
                }
                Err(error) => return Ok(Answer::Refused(error)),
            }
        }
        Ok(Answer::Done)
    }

    /// A guarded patch of what changed from `before` to `after` (none when nothing did).
    pub async fn update_pod(&self, before: &Pod, after: &Pod) -> Result<Answer, WorkloadError> {
        let name = before.name_any();
        let Some(patch) = pod_write::guarded_patch(before, after)
            .map_err(|e| WorkloadError::encoding(format!("pod {name}"), e))?
        else {
            return Ok(Answer::Done);
        };
        let sent = self
            .pods
            .patch(&name, &PatchParams::default(), &Patch::<()>::Json(patch))
            .await;
        Ok(match sent {
            Ok(written) => {
                self.expect_version(&name, &written.metadata);
                Answer::Done
            }
            Err(error) if matches!(status_code(&error), Some(409 | 404)) => Answer::Conflict,
            Err(error) => Answer::Refused(error),
        })
    }

    /// Waits for the cache to show `name` (a pod, or a PVC behind [`pvc_key`]) at the version
    /// the apiserver answered a write of it with.
    fn expect_version(&self, name: &str, answer: &ObjectMeta) {
        self.context.lock_expectations().expect_version(
            &self.key,
            name,
            answer.resource_version.as_deref(),
        );
    }

    /// Writes the round's status as the kind does, and records the resourceVersion it returned
    /// ([`Round::wrote`]).
    pub async fn write_status(&self, write: StatusWrite<S::Set>) -> Result<(), WorkloadError> {
        let api = self.api::<S::Set>();
        let name = self.set.name();
        let written = match write {
            StatusWrite::Merge(status) => {
                let patch = Patch::Merge(json!({ "status": status }));
                api.patch_status(name, &PatchParams::default(), &patch)
                    .await
            }
            StatusWrite::Replace(set) => {
                api.replace_status(name, &PostParams::default(), &*set)
                    .await
            }
        };
        let written = written.map_err(api_error::<WorkloadError>(format!(
            "{} status",
            self.what()
        )))?;
        self.wrote(written.meta());
        Ok(())
    }

    /// A merge patch of the workload itself, recorded as its own write.
    pub async fn patch_own(&self, patch: serde_json::Value) -> Result<(), WorkloadError> {
        let written = self
            .api::<S::Set>()
            .patch(
                self.set.name(),
                &PatchParams::default(),
                &Patch::Merge(patch),
            )
            .await
            .map_err(api_error::<WorkloadError>(self.what()))?;
        self.wrote(written.meta());
        Ok(())
    }

    /// Records a write of the workload itself (the object the apiserver answered with): until
    /// the cache shows it, later rounds wait ([`Round::behind_own_write`]).
    pub fn wrote(&self, answer: &ObjectMeta) {
        self.context
            .lock_expectations()
            .expect_own_write(&self.key, answer.resource_version.as_deref());
    }

    /// Deletes the named ControllerRevisions (gone already is fine).
    pub async fn delete_revisions(&self, names: &[String]) -> Result<(), WorkloadError> {
        let revisions: Api<ControllerRevision> = self.api();
        for name in names {
            match revisions.delete(name, &DeleteParams::default()).await {
                Ok(_) => {}
                Err(error) if status_code(&error) == Some(404) => {}
                Err(error) => return Err(api_error(format!("controllerrevision {name}"))(error)),
            }
        }
        Ok(())
    }

    /// An event about the workload (a planner's, or the plan's error).
    pub async fn publish(&self, event: &Event) {
        self.send_event(None, event).await;
    }

    /// An event about the workload that concerns one of its pods or PVCs. The object goes in
    /// `related`: the recorder merges repeats of one (reason, related object) into a series, and
    /// without it every pod's `SuccessfulCreate` would be folded into the first one's.
    pub async fn publish_note(&self, note: &Note) {
        let (kind, name) = match &note.about {
            About::Pod(name) => ("Pod", name),
            About::Pvc(name) => ("PersistentVolumeClaim", name),
        };
        let related = ObjectReference {
            api_version: Some("v1".into()),
            kind: Some(kind.into()),
            namespace: self.set.meta().namespace.clone(),
            name: Some(name.clone()),
            ..ObjectReference::default()
        };
        self.send_event(Some(related), &note.event).await;
    }

    async fn send_event(&self, related: Option<ObjectReference>, event: &Event) {
        let event = KubeEvent {
            type_: if event.warning {
                EventType::Warning
            } else {
                EventType::Normal
            },
            reason: event.reason.into(),
            note: Some(event.message.clone()),
            action: "Reconcile".into(),
            secondary: related,
        };
        self.context
            .recorder
            .record(&self.set.object_ref(&()), &event)
            .await;
    }
}
