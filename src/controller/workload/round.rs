//! One round of a workload: the requests it sends, as methods of [`Round`].

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use futures::StreamExt;
use jiff::Timestamp;
use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{ObjectReference, PersistentVolumeClaim, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::runtime::events::{Event as KubeEvent, EventType};
use kube::{Resource, ResourceExt};
use serde_json::json;

use super::error::{WorkloadError, api_error, error_text, status_code};
use super::{Context, pvc_key};
use crate::controller::pod_write;
use crate::inplace;
use crate::podmarks::PodView;
use crate::workload::{Action, Event, ListedPod, PodWrite, Purpose, Workload};

/// How many pods are read from the apiserver at once.
const CONCURRENT_READS: usize = 16;

/// One round of the workload `set`.
pub struct Round<'a, K> {
    pub context: &'a Context,
    pub set: &'a K,
    /// `namespace/name`: the key of its expectations.
    pub key: String,
    pods: Api<Pod>,
    pvcs: Api<PersistentVolumeClaim>,
}

/// The PVC side of the pod actions: created before each new pod, deleted once a pod's deletion
/// is accepted.
#[derive(Debug, Clone, Copy)]
pub struct PvcWrites<'p> {
    /// New pod name → the PVCs to create before it (those that do not exist yet).
    pub create: &'p BTreeMap<String, Vec<PersistentVolumeClaim>>,
    /// Pod name → the PVCs to delete once that pod's deletion is accepted.
    pub delete_with_pod: &'p BTreeMap<String, Vec<String>>,
}

/// What sending the plan's pod actions met.
#[derive(Debug, Default)]
pub struct Executed {
    /// Some write met a newer pod (409).
    pub conflicted: bool,
    /// The error of the first scale write (pod or PVC create or delete, scale lifecycle write)
    /// that failed.
    pub failed_scale: Option<String>,
}

impl<'a, K> Round<'a, K>
where
    K: Workload + Resource<Scope = NamespaceResourceScope>,
{
    pub fn new(context: &'a Context, set: &'a K) -> Self {
        let namespace = set.namespace();
        Round {
            context,
            set,
            key: set.key(),
            pods: Api::namespaced(context.client.clone(), namespace),
            pvcs: Api::namespaced(context.client.clone(), namespace),
        }
    }

    /// `<kind> <namespace>/<name>`, lower case, for errors and logs.
    pub fn what(&self) -> String {
        format!("{} {}", K::kind(&()).to_lowercase(), self.key)
    }

    /// The kind's API in the workload's namespace.
    pub fn api<T: Resource<Scope = NamespaceResourceScope, DynamicType = ()>>(&self) -> Api<T> {
        Api::namespaced(self.context.client.clone(), self.set.namespace())
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

    /// Sends a plan's pod actions: creations first (slow start, each pod's PVCs before it), then
    /// deletions (a pod's PVCs once its deletion is accepted), writes and events in order.
    pub async fn send(
        &self,
        actions: &[Action],
        pvcs: PvcWrites<'_>,
    ) -> Result<Executed, WorkloadError> {
        let creates: Vec<&Pod> = actions
            .iter()
            .filter_map(|a| match a {
                Action::CreatePod { pod, .. } => Some(pod.as_ref()),
                _ => None,
            })
            .collect();
        let mut failed_scale = self.create_pods(&creates, pvcs.create).await;
        let mut conflicted = false;
        for action in actions {
            match action {
                Action::CreatePod { .. } => {}
                Action::DeletePod { name } => {
                    // OpenKruise: the PVCs of the pod go once the pod's deletion is accepted.
                    let failure = match self.delete_pod(name).await {
                        Ok(true) => match pvcs.delete_with_pod.get(name) {
                            Some(names) => self.delete_pvcs(names, "failed to delete pvc").await,
                            None => None,
                        },
                        Ok(false) => None,
                        Err(error) => Some(error),
                    };
                    failed_scale = failed_scale.or(failure);
                }
                Action::WritePod {
                    before,
                    writes,
                    purpose,
                } => match self.write_pod(before, writes, purpose).await {
                    Ok(conflict) => conflicted |= conflict,
                    // OpenKruise: a lifecycle write of Scale that fails is an error of Scale.
                    Err(WorkloadError::Api(error)) if *purpose == Purpose::ScaleLifecycle => {
                        failed_scale = failed_scale.or(Some(error_text(&error.source)));
                    }
                    Err(error) => return Err(error),
                },
                Action::Event(event) => self.publish(event).await,
                // The StatefulSet's own actions: its shell sends them.
                Action::UpdatePod { .. }
                | Action::CreatePvc { .. }
                | Action::UpdatePvcOwners { .. } => {}
            }
        }
        Ok(Executed {
            conflicted,
            failed_scale,
        })
    }

    /// Creates in batches of 1, 2, 4, …; a batch with a failure stops the rest (a quota or
    /// webhook refusal would refuse them all). Each pod's missing PVCs are created first; a PVC
    /// that cannot be created holds its pod back. Returns the error of the batch that failed
    /// (one of them: OpenKruise keeps the first it reads).
    pub async fn create_pods(
        &self,
        pods: &[&Pod],
        pvcs: &BTreeMap<String, Vec<PersistentVolumeClaim>>,
    ) -> Option<String> {
        let mut start = 0;
        let mut batch = 1;
        while start < pods.len() {
            let end = (start + batch).min(pods.len());
            let results = futures::future::join_all(pods[start..end].iter().map(|pod| {
                let name = pod.name_any();
                self.context
                    .lock_expectations()
                    .expect_create(&self.key, &name);
                let pod_pvcs = pvcs.get(&name).map_or(&[][..], Vec::as_slice);
                async move {
                    if let Err(error) = self.create_pvcs(pod_pvcs).await {
                        return (name, Err(error));
                    }
                    (
                        name,
                        Ok(self.pods.create(&PostParams::default(), pod).await),
                    )
                }
            }))
            .await;
            let mut failed = None;
            for (name, result) in results {
                match result {
                    Err(error) => {
                        // A PVC was refused (and reported): the pod was not sent.
                        failed.get_or_insert(error);
                        self.context.lock_expectations().forget(&self.key, &name);
                    }
                    Ok(Ok(_)) => {
                        self.publish_about(
                            self.related("Pod", &name),
                            EventType::Normal,
                            "SuccessfulCreate",
                            format!("succeed to create pod {name}"),
                        )
                        .await;
                    }
                    Ok(Err(error)) => {
                        failed.get_or_insert_with(|| error_text(&error));
                        self.context.lock_expectations().forget(&self.key, &name);
                        self.publish_about(
                            self.related("Pod", &name),
                            EventType::Warning,
                            "FailedCreate",
                            format!("failed to create pod: {error}, pod: {name}"),
                        )
                        .await;
                    }
                }
            }
            if failed.is_some() {
                return failed;
            }
            start = end;
            batch *= 2;
        }
        None
    }

    /// `Ok(true)` when the apiserver accepted the deletion, `Ok(false)` when the pod was gone;
    /// the error of a refusal.
    pub async fn delete_pod(&self, name: &str) -> Result<bool, String> {
        self.context
            .lock_expectations()
            .expect_delete(&self.key, name);
        match self.pods.delete(name, &DeleteParams::default()).await {
            Ok(_) => {
                self.publish_about(
                    self.related("Pod", name),
                    EventType::Normal,
                    "SuccessfulDelete",
                    format!("succeed to delete pod {name}"),
                )
                .await;
                Ok(true)
            }
            Err(error) => {
                self.context.lock_expectations().forget(&self.key, name);
                if status_code(&error) == Some(404) {
                    return Ok(false);
                }
                self.publish_about(
                    self.related("Pod", name),
                    EventType::Warning,
                    "FailedDelete",
                    format!("failed to delete pod {name}: {error}"),
                )
                .await;
                Err(error_text(&error))
            }
        }
    }

    /// Sends one pod's writes in order, each guarded by the version the previous one returned.
    /// Returns `true` on a conflict (nothing more is sent for this pod).
    pub async fn write_pod(
        &self,
        before: &Arc<Pod>,
        writes: &[PodWrite],
        purpose: &Purpose,
    ) -> Result<bool, WorkloadError> {
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
            let sent = if write.status {
                self.pods
                    .patch_status(&name, &PatchParams::default(), &patch)
                    .await
            } else {
                self.pods
                    .patch(&name, &PatchParams::default(), &patch)
                    .await
            };
            match sent {
                Ok(answer) => {
                    self.context.lock_expectations().expect_version(
                        &self.key,
                        &name,
                        answer.metadata.resource_version.as_deref(),
                    );
                    base = after.clone();
                    base.metadata.resource_version = answer.metadata.resource_version;
                    gate_just_written = write.status;
                }
                Err(error) if matches!(status_code(&error), Some(409 | 404)) => return Ok(true),
                Err(error) => {
                    if let Some((reason, note)) = failed_write_event(purpose, &name, &error) {
                        self.publish_about(
                            self.related("Pod", &name),
                            EventType::Warning,
                            reason,
                            note,
                        )
                        .await;
                    }
                    return Err(api_error(format!("pod {name}"))(error));
                }
            }
        }
        if let Some((reason, note)) = written_event(purpose, &name) {
            self.publish_about(self.related("Pod", &name), EventType::Normal, reason, note)
                .await;
        }
        Ok(false)
    }

    /// Creates PVCs one by one (AlreadyExists counts as created). The error of one refused
    /// stops the rest.
    pub async fn create_pvcs(&self, pvcs: &[PersistentVolumeClaim]) -> Result<(), String> {
        for pvc in pvcs {
            let name = pvc.name_any();
            let expected = pvc_key(&name);
            self.context
                .lock_expectations()
                .expect_create(&self.key, &expected);
            if let Err(error) = self.pvcs.create(&PostParams::default(), pvc).await {
                // Nothing new will show up (on 409 the PVC was there already, perhaps without
                // the label the PVC cache watches).
                self.context
                    .lock_expectations()
                    .forget(&self.key, &expected);
                if status_code(&error) != Some(409) {
                    self.publish_about(
                        self.related("PersistentVolumeClaim", &name),
                        EventType::Warning,
                        "FailedCreate",
                        format!("failed to create pvc: {error}, pvc: {name}"),
                    )
                    .await;
                    return Err(error_text(&error));
                }
            }
        }
        Ok(())
    }

    /// Deletes PVCs (gone already is fine); failures are reported (`failure` opens the event's
    /// note), the rest still tried. Returns the first failure's error.
    pub async fn delete_pvcs(&self, names: &[String], failure: &str) -> Option<String> {
        let mut first_failure = None;
        for name in names {
            let expected = pvc_key(name);
            self.context
                .lock_expectations()
                .expect_delete(&self.key, &expected);
            if let Err(error) = self.pvcs.delete(name, &DeleteParams::default()).await {
                self.context
                    .lock_expectations()
                    .forget(&self.key, &expected);
                if status_code(&error) != Some(404) {
                    self.publish_about(
                        self.related("PersistentVolumeClaim", name),
                        EventType::Warning,
                        "FailedDelete",
                        format!("{failure} {name}: {error}"),
                    )
                    .await;
                    first_failure.get_or_insert_with(|| error_text(&error));
                }
            }
        }
        first_failure
    }

    /// Writes `status` through the status subresource (a merge patch), and records the
    /// resourceVersion it returned ([`Round::wrote`]).
    pub async fn write_status<S: serde::Serialize>(&self, status: &S) -> Result<(), WorkloadError>
    where
        K: Clone + serde::de::DeserializeOwned + std::fmt::Debug,
    {
        let written = self
            .api::<K>()
            .patch_status(
                self.set.name(),
                &PatchParams::default(),
                &Patch::Merge(json!({ "status": status })),
            )
            .await
            .map_err(api_error::<WorkloadError>(format!(
                "{} status",
                self.what()
            )))?;
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

    /// A planner's event about the workload.
    pub async fn publish(&self, event: &Event) {
        let kind = if event.warning {
            EventType::Warning
        } else {
            EventType::Normal
        };
        self.send_event(None, kind, event.reason, event.message.clone())
            .await;
    }

    /// An event about the workload with its own reason and note.
    pub async fn publish_note(&self, type_: EventType, reason: &str, note: String) {
        self.send_event(None, type_, reason, note).await;
    }

    /// An event about the workload that concerns one of its objects (a pod, a PVC). The object
    /// goes in `related`: the recorder merges repeats of one (reason, related object) into a
    /// series, and without it every pod's `SuccessfulCreate` would be folded into the first
    /// one's.
    pub async fn publish_about(
        &self,
        related: ObjectReference,
        type_: EventType,
        reason: &str,
        note: String,
    ) {
        self.send_event(Some(related), type_, reason, note).await;
    }

    /// A reference to the workload's pod or PVC `name`, for an event's `related`.
    pub fn related(&self, kind: &str, name: &str) -> ObjectReference {
        ObjectReference {
            api_version: Some("v1".into()),
            kind: Some(kind.into()),
            namespace: self.set.meta().namespace.clone(),
            name: Some(name.into()),
            ..ObjectReference::default()
        }
    }

    async fn send_event(
        &self,
        related: Option<ObjectReference>,
        type_: EventType,
        reason: &str,
        note: String,
    ) {
        let event = KubeEvent {
            type_,
            reason: reason.into(),
            note: Some(note),
            action: "Reconcile".into(),
            secondary: related,
        };
        crate::controller::events::record(
            &self.context.recorder,
            &self.set.object_ref(&()),
            &event,
        )
        .await;
    }
}

/// The event of a pod write of `purpose` that was sent (OpenKruise's reasons).
fn written_event(purpose: &Purpose, name: &str) -> Option<(&'static str, String)> {
    match purpose {
        Purpose::InPlace { revision } => Some((
            "SuccessfulUpdatePodInPlace",
            format!("successfully update pod {name} in-place(revision {revision})"),
        )),
        Purpose::Recreate { revision } => Some((
            "SuccessfulUpdatePodReCreate",
            format!(
                "successfully patch pod {name} specified-delete for update(revision {revision})"
            ),
        )),
        Purpose::Refresh | Purpose::Lifecycle | Purpose::ScaleLifecycle => None,
    }
}

/// The event of a pod write of `purpose` that the apiserver refused.
fn failed_write_event(
    purpose: &Purpose,
    name: &str,
    error: &kube::Error,
) -> Option<(&'static str, String)> {
    match purpose {
        Purpose::InPlace { revision } => Some((
            "FailedUpdatePodInPlace",
            format!("failed to update pod {name} in-place(revision {revision}): {error}"),
        )),
        Purpose::Recreate { revision } => Some((
            "FailedUpdatePodReCreate",
            format!(
                "failed to patch pod specified-delete {name} for update(revision {revision}): {error}"
            ),
        )),
        Purpose::Refresh | Purpose::Lifecycle | Purpose::ScaleLifecycle => None,
    }
}
