//! The claim step of a workload round: what [`crate::workload::claim`] decided, sent as
//! resourceVersion-guarded ownerReference patches before the round is planned.

use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::reflector::ObjectRef;
use kube::{Resource, ResourceExt};

use super::error::{WorkloadError, api_error, status_code};
use super::outcome::Outcome;
use super::round::Round;
use super::seam::Seam;
use super::{adopts, controlling, names_kind};
use crate::controller::pod_write;
use crate::k8s::owner;
use crate::podmarks::PodView;
use crate::workload::claim::{self, Change};
use crate::workload::{ListedPod, Workload};

/// What the round goes on with.
pub enum Claimed {
    /// The pods the workload controls, as written, sorted by name.
    Pods(Vec<ListedPod>),
    /// The round stops here.
    Stop(Outcome),
}

/// The workloads of kind `K` a pod event concerns: its controller; for a pod nobody controls,
/// every workload of the kind one of its ownerReferences names (it may adopt the pod).
pub fn workloads_to_sync<K: Resource<DynamicType = ()>>(pod: &Pod) -> Vec<ObjectRef<K>> {
    if let Some(owner) = controlling::<K>(&pod.metadata) {
        return vec![owner];
    }
    let Some(namespace) = pod.metadata.namespace.as_deref() else {
        return Vec::new();
    };
    if owner::controller_of(&pod.metadata).is_some() {
        return Vec::new();
    }
    pod.metadata
        .owner_references
        .iter()
        .flatten()
        .filter(|o| names_kind::<K>(o))
        .map(|o| ObjectRef::new(&o.name).within(namespace))
        .collect()
}

/// The workloads among `sets` that may adopt `pod` (upstream's `getDaemonSetsForPod`): those of
/// its namespace that [`adopts`] it.
pub fn orphan_adopters<K: Workload>(pod: &Pod, sets: &[Arc<K>]) -> Vec<ObjectRef<K>> {
    let namespace = pod.metadata.namespace.as_deref().unwrap_or("");
    sets.iter()
        .filter(|set| set.namespace() == namespace && adopts(&***set, pod))
        .map(|set| ObjectRef::new(set.name()).within(namespace))
        .collect()
}

impl<S: Seam> Round<'_, S> {
    /// Adopts and releases what the claim says; returns the pods the round plans with. A write that
    /// met a newer pod (409) stops the round: the next one decides again on what the cache shows.
    /// A pod gone meanwhile (404) is simply not the workload's. A pod to adopt or release that the
    /// cache holds as a summary only is read whole first.
    pub async fn claim_pods(&self, mut listed: Vec<ListedPod>) -> Result<Claimed, WorkloadError> {
        let mut claims = self.claim_or_stop(&listed);
        if let Ok(first) = &claims
            && !first.needs_whole.is_empty()
        {
            self.read_whole(&first.needs_whole, &mut listed, |_| true)
                .await?;
            claims = self.claim_or_stop(&listed);
        }
        let claims = match claims {
            Ok(claims) if claims.needs_whole.is_empty() => claims,
            Ok(_) => return Ok(Claimed::Stop(Outcome::Conflict)),
            Err(stop) => return Ok(Claimed::Stop(stop)),
        };
        let mut pods = claims.kept;
        if claims.changes.iter().any(|c| c.adopt) {
            self.can_adopt().await?;
        }
        let api: Api<Pod> = self.api();
        for change in &claims.changes {
            match self.write_owners(&api, change).await? {
                Written::Done(pod) if change.adopt => pods.push(ListedPod::whole(pod)),
                Written::Done(_) | Written::Gone => {}
                Written::Conflict => return Ok(Claimed::Stop(Outcome::Conflict)),
            }
        }
        pods.sort_by(|a, b| a.name().cmp(b.name()));
        Ok(Claimed::Pods(pods))
    }

    /// The claim, or how to stop the round when the selector is unusable.
    fn claim_or_stop(&self, listed: &[ListedPod]) -> Result<claim::Claims, Outcome> {
        claim::claim(self.set, listed).map_err(|error| {
            // Nothing to retry until the workload changes (OpenKruise drops the key too).
            tracing::warn!(workload = %self.what(), %error, "invalid selector");
            Outcome::InvalidSpec
        })
    }

    /// Adoption only for the workload the cache showed, still there and not being deleted (a fresh
    /// read, as the ref manager's `canAdopt`).
    async fn can_adopt(&self) -> Result<(), WorkloadError> {
        let fresh = self
            .api::<S::Set>()
            .get(self.set.name())
            .await
            .map_err(api_error::<WorkloadError>(self.what()))?;
        if fresh.meta().uid != self.set.meta().uid {
            return Err(WorkloadError::CannotAdopt(
                self.what(),
                "it was replaced".into(),
            ));
        }
        if fresh.meta().deletion_timestamp.is_some() {
            return Err(WorkloadError::CannotAdopt(
                self.what(),
                "it is being deleted".into(),
            ));
        }
        Ok(())
    }

    async fn write_owners(
        &self,
        api: &Api<Pod>,
        change: &Change,
    ) -> Result<Written, WorkloadError> {
        let name = change.before.name_any();
        let Some(patch) = pod_write::guarded_patch(&change.before, &change.after)
            .map_err(|e| WorkloadError::encoding(format!("pod {name}"), e))?
        else {
            return Ok(Written::Done(Arc::new(change.after.clone())));
        };
        match api
            .patch(&name, &PatchParams::default(), &Patch::<()>::Json(patch))
            .await
        {
            Ok(answer) => {
                self.context.lock_expectations().expect_version(
                    &self.key,
                    &name,
                    answer.metadata.resource_version.as_deref(),
                );
                let verb = if change.adopt { "adopted" } else { "released" };
                tracing::info!(workload = %self.what(), pod = %name, "pod {verb}");
                let mut written = change.after.clone();
                written.metadata.resource_version = answer.metadata.resource_version;
                Ok(Written::Done(Arc::new(written)))
            }
            Err(error) if status_code(&error) == Some(404) => Ok(Written::Gone),
            Err(error) if status_code(&error) == Some(409) => Ok(Written::Conflict),
            Err(error) => Err(api_error(format!("pod {name}"))(error)),
        }
    }
}

enum Written {
    /// The pod as written, at the version the apiserver answered.
    Done(Arc<Pod>),
    Gone,
    Conflict,
}
