//! The CloneSet shell's claim step (spec §2 step 6): what [`crate::workload::claim`] decided,
//! sent as resourceVersion-guarded ownerReference patches before the round is planned.

use super::*;
use crate::workload::claim::{self, Change};

/// What the round goes on with.
pub(super) enum Claimed {
    /// The pods the CloneSet controls, as written, sorted by name.
    Pods(Vec<ListedPod>),
    /// The round stops here and is retried as said.
    Stop(Requeue),
}

/// The CloneSets a pod event concerns: its controller; for a pod nobody controls, every CloneSet
/// one of its ownerReferences names (it may adopt the pod).
pub(super) fn clonesets_to_sync(pod: &Pod) -> Vec<ObjectRef<CloneSet>> {
    if let Some(owner) = owner_of(pod) {
        return vec![owner];
    }
    let Some(namespace) = pod.metadata.namespace.as_deref() else {
        return Vec::new();
    };
    if pod
        .metadata
        .owner_references
        .iter()
        .flatten()
        .any(|o| o.controller == Some(true))
    {
        return Vec::new();
    }
    pod.metadata
        .owner_references
        .iter()
        .flatten()
        .filter(|o| names_cloneset(o))
        .map(|o| ObjectRef::new(&o.name).within(namespace))
        .collect()
}

/// Adopts and releases what the claim says; returns the pods the round plans with. A write that
/// met a newer pod (409) stops the round: the next one decides again on what the cache shows.
/// A pod gone meanwhile (404) is simply not the CloneSet's. A pod to adopt or release that the
/// cache holds as a summary only is read whole first.
pub(super) async fn claim_pods(
    context: &Context,
    set: &CloneSet,
    key: &str,
    mut listed: Vec<ListedPod>,
) -> Result<Claimed, CloneSetError> {
    let mut claims = claim_or_stop(set, key, &listed);
    if let Ok(first) = &claims
        && !first.needs_whole.is_empty()
    {
        read_whole(context, set, &first.needs_whole, &mut listed, |_| true).await?;
        claims = claim_or_stop(set, key, &listed);
    }
    let claims = match claims {
        Ok(claims) if claims.needs_whole.is_empty() => claims,
        Ok(_) => return Ok(Claimed::Stop(Requeue::requeue(CONFLICT_REQUEUE))),
        Err(stop) => return Ok(Claimed::Stop(stop)),
    };
    let mut pods = claims.kept;
    if claims.changes.iter().any(|c| c.adopt) {
        can_adopt(context, set).await?;
    }
    let namespace = set.metadata.namespace.as_deref().unwrap_or("");
    let api: Api<Pod> = Api::namespaced(context.client.clone(), namespace);
    for change in &claims.changes {
        match write_owners(context, key, &api, change).await? {
            Written::Done(pod) if change.adopt => pods.push(ListedPod::whole(pod)),
            Written::Done(_) | Written::Gone => {}
            Written::Conflict => return Ok(Claimed::Stop(Requeue::requeue(CONFLICT_REQUEUE))),
        }
    }
    pods.sort_by(|a, b| a.name().cmp(b.name()));
    Ok(Claimed::Pods(pods))
}

/// The claim, or how to stop the round when the selector is unusable.
fn claim_or_stop(
    set: &CloneSet,
    key: &str,
    listed: &[ListedPod],
) -> Result<claim::Claims, Requeue> {
    claim::claim(set, listed).map_err(|error| {
        // Nothing to retry until the CloneSet changes (OpenKruise drops the key too).
        tracing::warn!(cloneset = key, %error, "invalid selector");
        Requeue::await_change()
    })
}

/// Adoption only for the CloneSet the cache showed, still there and not being deleted (a fresh
/// read, as the ref manager's `canAdopt`).
async fn can_adopt(context: &Context, set: &CloneSet) -> Result<(), CloneSetError> {
    let namespace = set.metadata.namespace.as_deref().unwrap_or("");
    let api: Api<CloneSet> = Api::namespaced(context.client.clone(), namespace);
    let key = set_key(set);
    let fresh = api
        .get(&set.name_any())
        .await
        .map_err(api_error(format!("cloneset {key}")))?;
    if fresh.metadata.uid != set.metadata.uid {
        return Err(CloneSetError::CannotAdopt(key, "it was replaced".into()));
    }
    if fresh.metadata.deletion_timestamp.is_some() {
        return Err(CloneSetError::CannotAdopt(
            key,
            "it is being deleted".into(),
        ));
    }
    Ok(())
}

enum Written {
    /// The pod as written, at the version the apiserver answered.
    Done(Arc<Pod>),
    Gone,
    Conflict,
}

async fn write_owners(
    context: &Context,
    key: &str,
    api: &Api<Pod>,
    change: &Change,
) -> Result<Written, CloneSetError> {
    let name = change.before.name_any();
    let Some(patch) = pod_write::guarded_patch(&change.before, &change.after).map_err(|e| {
        CloneSetError::Api {
            what: format!("pod {name}"),
            source: kube::Error::SerdeError(e),
        }
    })?
    else {
        return Ok(Written::Done(Arc::new(change.after.clone())));
    };
    match api
        .patch(&name, &PatchParams::default(), &Patch::<()>::Json(patch))
        .await
    {
        Ok(answer) => {
            context.lock_expectations().expect_version(
                key,
                &name,
                answer.metadata.resource_version.as_deref(),
            );
            let verb = if change.adopt { "adopted" } else { "released" };
            tracing::info!(cloneset = key, pod = %name, "pod {verb}");
            let mut written = change.after.clone();
            written.metadata.resource_version = answer.metadata.resource_version;
            Ok(Written::Done(Arc::new(written)))
        }
        Err(error) if status_code(&error) == Some(404) => Ok(Written::Gone),
        Err(error) if status_code(&error) == Some(409) => Ok(Written::Conflict),
        Err(error) => Err(api_error(format!("pod {name}"))(error)),
    }
}

#[cfg(test)]
#[path = "adoption_tests.rs"]
mod tests;
