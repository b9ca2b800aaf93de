//! The SidecarSet's revision history, the I/O: what [`rollout::history::plan_history`] decides
//! (reuse, renumber or create the latest revision, label it, truncate), written to the
//! ControllerRevisions of the manager's namespace. Read from the watched history
//! ([`crate::source::history`]), so a reconcile lists nothing; a revision created moments ago and
//! not yet watched is found by its name (AlreadyExists with the same data).

use k8s_openapi::api::apps::v1::ControllerRevision;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;

use super::{Context, SidecarSetError, api_error};
use crate::api::{SidecarSet, keys};
use crate::k8s::history::stored_data;
use crate::podmarks::PodSummary;
use crate::rollout::history::{HeldRevision, Latest, candidate, plan_history};

/// How many names a new revision may try before the round gives up.
const MAX_COLLISIONS: i32 = 20;

/// The latest revision once registered, and the collision count that named it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registered {
    pub latest: String,
    pub collision_count: i32,
}

/// Registers `set`'s latest revision and truncates its history (OpenKruise's
/// `registerLatestRevision`); `matched` are the pods it matches, whose revisions stay.
pub async fn register(
    context: &Context,
    set: &SidecarSet,
    matched: &[std::sync::Arc<PodSummary>],
) -> Result<Registered, SidecarSetError> {
    let history: Vec<HeldRevision> =
        { crate::source::history::read(&context.revisions).history_of(set) };
    let refs: Vec<&HeldRevision> = history.iter().collect();
    let namespace = &context.revision_namespace;
    let plan = plan_history(set, &refs, matched, namespace);
    let api: Api<ControllerRevision> = Api::namespaced(context.client.clone(), namespace);
    let mut collision_count = set
        .status
        .as_ref()
        .and_then(|s| s.collision_count)
        .unwrap_or(0);
    let mut label = plan.label_custom_version.clone();
    let latest = match plan.latest {
        Latest::Reuse { name } => name,
        Latest::Renumber { name, number } => {
            let patch = Patch::Merge(json!({ "revision": number }));
            api.patch(&name, &PatchParams::default(), &patch)
                .await
                .map_err(api_error(format!("controllerrevision {namespace}/{name}")))?;
            name
        }
        Latest::Create(wanted) => {
            let (name, found) = create(&api, set, *wanted, &mut collision_count).await?;
            // Found already there without the set's custom version: it gets it, as OpenKruise
            // labels whatever revision it ends up with.
            let version = set.spec.custom_version.as_deref().filter(|v| !v.is_empty());
            if let Some(existing_label) = found
                && version.is_some()
                && existing_label.as_deref() != version
            {
                label = version.map(str::to_string);
            }
            name
        }
    };
    if let Some(version) = label {
        let patch = Patch::Merge(json!({
            "metadata": { "labels": { keys::SIDECARSET_CUSTOM_VERSION: version } }
        }));
        api.patch(&latest, &PatchParams::default(), &patch)
            .await
            .map_err(api_error(format!(
                "controllerrevision {namespace}/{latest}"
            )))?;
    }
    for name in &plan.delete {
        match api.delete(name, &DeleteParams::default()).await {
            Ok(_) => tracing::info!(
                sidecarset = set.name(),
                revision = name,
                "revision truncated"
            ),
            Err(kube::Error::Api(status)) if status.code == 404 => {}
            Err(error) => {
                return Err(api_error(format!("controllerrevision {namespace}/{name}"))(
                    error,
                ));
            }
        }
    }
    if let Some(over) = &plan.over_limit {
        // OpenKruise logs it and goes on: the revisions beyond the limit are in use.
        tracing::warn!(sidecarset = set.name(), "{over}");
    }
    Ok(Registered {
        latest,
        collision_count,
    })
}

/// Creates `wanted`; a name already held by other data bumps the collision count and tries the
/// next name (the hash label keeps the first hash, as Kubernetes' history renames the same
/// object), one held by the same data is that revision. Returns its name and, when it was
/// found there, its custom-version label.
async fn create(
    api: &Api<ControllerRevision>,
    set: &SidecarSet,
    mut wanted: ControllerRevision,
    collision_count: &mut i32,
) -> Result<(String, Option<Option<String>>), SidecarSetError> {
    let namespace = wanted.metadata.namespace.clone().unwrap_or_default();
    for _ in 0..MAX_COLLISIONS {
        let name = wanted.metadata.name.clone().unwrap_or_default();
        let what = || format!("controllerrevision {namespace}/{name}");
        match api.create(&PostParams::default(), &wanted).await {
            Ok(_) => {
                tracing::info!(sidecarset = set.name(), revision = name, "revision created");
                return Ok((name, None));
            }
            Err(kube::Error::Api(status)) if status.code == 409 => {
                let existing = api.get(&name).await.map_err(api_error(what()))?;
                if stored_data(&existing) == stored_data(&wanted) {
                    let labels = existing.metadata.labels.unwrap_or_default();
                    let label = labels.get(keys::SIDECARSET_CUSTOM_VERSION).cloned();
                    return Ok((name, Some(label)));
                }
                *collision_count += 1;
                let renamed = candidate(set, &namespace, wanted.revision, *collision_count);
                wanted.metadata.name = renamed.metadata.name;
            }
            Err(error) => return Err(api_error(what())(error)),
        }
    }
    Err(SidecarSetError::Collisions {
        sidecarset: set.name().to_string(),
        collisions: *collision_count,
    })
}
