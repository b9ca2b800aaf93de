//! The CloneSet shell's ControllerRevisions: read the history, make sure the update revision
//! exists (with OpenKruise's collision handling).

use super::*;

/// The CloneSet's revisions: selected by its selector, not controlled by anyone else, in
/// history order.
pub(super) async fn list_history(
    context: &Context,
    set: &CloneSet,
) -> Result<Vec<ControllerRevision>, CloneSetError> {
    let namespace = set.metadata.namespace.as_deref().unwrap_or("");
    let api: Api<ControllerRevision> = Api::namespaced(context.client.clone(), namespace);
    let selector = set
        .spec
        .selector
        .as_ref()
        .map(status::selector_string)
        .unwrap_or_default();
    let listed = api
        .list(&ListParams::default().labels(&selector))
        .await
        .map_err(api_error(format!(
            "controllerrevisions of {}",
            set_key(set)
        )))?;
    let uid = set.metadata.uid.as_deref();
    let mut history: Vec<ControllerRevision> = listed
        .items
        .into_iter()
        .filter(|r| {
            r.metadata
                .owner_references
                .iter()
                .flatten()
                .find(|o| o.controller == Some(true))
                .is_none_or(|o| Some(o.uid.as_str()) == uid)
        })
        .collect();
    revision::sort_history(&mut history);
    Ok(history)
}

/// Makes the update revision exist (§3.3): reuse, renumber or create, bumping the collision
/// count when another revision holds the name. Returns its name and the collision count.
/// After a collision only the name changes: the hash label keeps the first hash, as Kubernetes'
/// `CreateControllerRevision` retries with the same object renamed.
pub(super) async fn ensure_update_revision(
    context: &Context,
    set: &CloneSet,
    history: &mut Vec<ControllerRevision>,
) -> Result<(String, i32), CloneSetError> {
    let namespace = set.metadata.namespace.as_deref().unwrap_or("");
    let api: Api<ControllerRevision> = Api::namespaced(context.client.clone(), namespace);
    let mut collisions = set
        .status
        .as_ref()
        .and_then(|s| s.collision_count)
        .unwrap_or(0);
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
                    .map_err(api_error(format!("controllerrevision {name}")))?;
                history.retain(|r| r.metadata.name.as_deref() != Some(name.as_str()));
                history.push(updated);
                revision::sort_history(history);
                return Ok((name, collisions));
            }
            revision::UpdateRevision::Create(mut wanted) => {
                let name = wanted.metadata.name.clone().unwrap_or_default();
                let labels = wanted.metadata.labels.get_or_insert_with(Default::default);
                let hash = labels
                    .get(revision::HASH_LABEL)
                    .cloned()
                    .unwrap_or_default();
                labels.insert(
                    revision::HASH_LABEL.into(),
                    first_hash.get_or_insert(hash).clone(),
                );
                match api.create(&PostParams::default(), &wanted).await {
                    Ok(created) => {
                        history.push(created);
                        revision::sort_history(history);
                        return Ok((name, collisions));
                    }
                    Err(error) if status_code(&error) == Some(409) => {
                        let existing = api
                            .get(&name)
                            .await
                            .map_err(api_error(format!("controllerrevision {name}")))?;
                        if revision::stored_data(&existing) == revision::stored_data(&wanted) {
                            history.retain(|r| r.metadata.name.as_deref() != Some(name.as_str()));
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
    Err(CloneSetError::Collisions(set_key(set), collisions))
}
