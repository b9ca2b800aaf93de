//! A workload's ControllerRevisions: read the history, make sure the update revision exists
//! (with OpenKruise's collision handling).

use k8s_openapi::api::apps::v1::ControllerRevision;
use kube::Resource;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;

use super::error::{WorkloadError, api_error, status_code};
use super::round::Round;
use super::seam::Seam;
use crate::k8s::owner;
use crate::workload::{Workload, revision, status};

/// How many names a new revision may try before the round gives up.
const MAX_COLLISIONS: i32 = 20;

impl<S: Seam> Round<'_, S> {
    /// The workload's revisions: selected by its selector, not controlled by anyone else, in
    /// history order.
    pub async fn list_history(&self) -> Result<Vec<ControllerRevision>, WorkloadError> {
        let set = self.set;
        let api: Api<ControllerRevision> = self.api();
        let selector = set
            .selector()
            .map(status::selector_string)
            .unwrap_or_default();
        let listed = api
            .list(&ListParams::default().labels(&selector))
            .await
            .map_err(api_error::<WorkloadError>(format!(
                "controllerrevisions of {}",
                self.key
            )))?;
        let uid = set.meta().uid.as_deref();
        let mut history: Vec<ControllerRevision> = listed
            .items
            .into_iter()
            .filter(|r| {
                owner::controller_of(&r.metadata).is_none_or(|o| Some(o.uid.as_str()) == uid)
            })
            .collect();
        revision::sort_history(&mut history);
        Ok(history)
    }

    /// Makes the update revision exist ([`revision::update_revision`]): reuse, renumber or
    /// create, bumping the collision count when another revision holds the name. Returns its name and the
    /// collision count. After a collision only the name changes: the hash label keeps the first
    /// hash, as Kubernetes' `CreateControllerRevision` retries with the same object renamed.
    pub async fn ensure_update_revision(
        &self,
        history: &mut Vec<ControllerRevision>,
    ) -> Result<(String, i32), WorkloadError> {
        let set = self.set;
        let api: Api<ControllerRevision> = self.api();
        let hash_label = S::Set::REVISIONS.hash_label;
        let mut collisions = set.collision_count();
        let mut first_hash = None;
        for _ in 0..MAX_COLLISIONS {
            match revision::update_revision(set, history, collisions)? {
                revision::UpdateRevision::Latest { name } => return Ok((name, collisions)),
                revision::UpdateRevision::Renumber { name, revision } => {
                    let updated = api
                        .patch(
                            &name,
                            &PatchParams::default(),
                            &Patch::Merge(json!({ "revision": revision })),
                        )
                        .await
                        .map_err(api_error::<WorkloadError>(format!(
                            "controllerrevision {name}"
                        )))?;
                    history.retain(|r| r.metadata.name.as_deref() != Some(name.as_str()));
                    history.push(updated);
                    revision::sort_history(history);
                    return Ok((name, collisions));
                }
                revision::UpdateRevision::Create(mut wanted) => {
                    let name = wanted.metadata.name.clone().unwrap_or_default();
                    let labels = wanted.metadata.labels.get_or_insert_with(Default::default);
                    let hash = labels.get(hash_label).cloned().unwrap_or_default();
                    labels.insert(hash_label.into(), first_hash.get_or_insert(hash).clone());
                    match api.create(&PostParams::default(), &wanted).await {
                        Ok(created) => {
                            history.push(created);
                            revision::sort_history(history);
                            return Ok((name, collisions));
                        }
                        Err(error) if status_code(&error) == Some(409) => {
                            let existing =
                                api.get(&name).await.map_err(api_error::<WorkloadError>(
                                    format!("controllerrevision {name}"),
                                ))?;
                            if revision::stored_data(&existing) == revision::stored_data(&wanted) {
                                history
                                    .retain(|r| r.metadata.name.as_deref() != Some(name.as_str()));
                                history.push(existing);
                                revision::sort_history(history);
                                return Ok((name, collisions));
                            }
                            collisions += 1;
                        }
                        Err(error) => {
                            return Err(api_error(format!("controllerrevision {name}"))(error));
                        }
                    }
                }
            }
        }
        Err(WorkloadError::Collisions(self.what(), collisions))
    }
}
