//! The CloneSet shell's PVC writes: what [`crate::cloneset::pvc`] planned, sent under the same
//! expectations as the pods.

use super::*;

/// The PVCs (metadata) whose ownerReferences name this CloneSet (by uid), from the cache,
/// terminating ones included.
pub(super) fn owned_claims(shell: &Shell, set: &CloneSet) -> Vec<Arc<ClaimMeta>> {
    let namespace = set.metadata.namespace.as_deref();
    let uid = set.metadata.uid.as_deref();
    let mut claims: Vec<Arc<ClaimMeta>> = shell
        .claims
        .state()
        .into_iter()
        .filter(|c| c.metadata.namespace.as_deref() == namespace)
        .filter(|c| {
            c.metadata
                .owner_references
                .iter()
                .flatten()
                .any(|o| Some(o.uid.as_str()) == uid)
        })
        .collect();
    claims.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    claims
}

/// Creates PVCs one by one (AlreadyExists counts as created). The error of one refused stops
/// the rest.
pub(super) async fn create_claims(
    context: &Context,
    set: &CloneSet,
    key: &str,
    api: &Api<PersistentVolumeClaim>,
    claims: &[PersistentVolumeClaim],
) -> Result<(), String> {
    for claim in claims {
        let name = claim.name_any();
        let expected = claim_key(&name);
        context.lock_expectations().expect_create(key, &expected);
        match api.create(&PostParams::default(), claim).await {
            Ok(_) => {}
            Err(error) => {
                // Nothing new will show up (on 409 the PVC was there already, perhaps without
                // the label this cache watches).
                context.lock_expectations().forget(key, &expected);
                if status_code(&error) != Some(409) {
                    publish_about(
                        context,
                        set,
                        related(set, "PersistentVolumeClaim", &name),
                        EventType::Warning,
                        "FailedCreate",
                        format!("failed to create pvc: {error}, pvc: {name}"),
                    )
                    .await;
                    return Err(error_text(&error));
                }
            }
        }
    }
    Ok(())
}

/// Deletes PVCs (gone already is fine); failures are reported, the rest still tried. Returns
/// the first failure's error.
pub(super) async fn delete_claims(
    context: &Context,
    set: &CloneSet,
    key: &str,
    api: &Api<PersistentVolumeClaim>,
    names: &[String],
    failure: &str,
) -> Option<String> {
    let mut first_failure = None;
    for name in names {
        let expected = claim_key(name);
        context.lock_expectations().expect_delete(key, &expected);
        if let Err(error) = api.delete(name, &DeleteParams::default()).await {
            context.lock_expectations().forget(key, &expected);
            if status_code(&error) != Some(404) {
                publish_about(
                    context,
                    set,
                    related(set, "PersistentVolumeClaim", name),
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

/// `disablePVCReuse` (before any pod action, as OpenKruise): PVCs of no pod are deleted, those of
/// an inactive pod handed to it so that garbage collection removes them with it.
pub(super) async fn clean_up_claims(
    context: &Context,
    set: &CloneSet,
    key: &str,
    claims: &ClaimPlan,
) -> Result<(), CloneSetError> {
    if claims.delete.is_empty() && claims.hand_over.is_empty() {
        return Ok(());
    }
    let namespace = set.metadata.namespace.as_deref().unwrap_or("");
    let api: Api<PersistentVolumeClaim> = Api::namespaced(context.client.clone(), namespace);
    for hand_over in &claims.hand_over {
        hand_claim_over(context, set, key, &api, hand_over).await?;
    }
    delete_claims(
        context,
        set,
        key,
        &api,
        &claims.delete,
        "failed to clean up PVC",
    )
    .await;
    Ok(())
}

/// Replaces the PVC's ownerReferences, guarded by the version the decision was made on (a PVC
/// that changed or went meanwhile is left to the next round).
async fn hand_claim_over(
    context: &Context,
    set: &CloneSet,
    key: &str,
    api: &Api<PersistentVolumeClaim>,
    hand_over: &HandOver,
) -> Result<(), CloneSetError> {
    let name = &hand_over.claim;
    let mut operations = Vec::new();
    if let Some(version) = &hand_over.resource_version {
        operations
            .push(json!({"op": "replace", "path": "/metadata/resourceVersion", "value": version}));
    }
    operations.push(json!({
        "op": "replace",
        "path": "/metadata/ownerReferences",
        "value": hand_over.owner_references,
    }));
    let patch: json_patch::Patch = serde_json::from_value(serde_json::Value::Array(operations))
        .map_err(|e| CloneSetError::Api {
            what: format!("pvc {name}"),
            source: kube::Error::SerdeError(e),
        })?;
    match api
        .patch_metadata(name, &PatchParams::default(), &Patch::<()>::Json(patch))
        .await
    {
        Ok(answer) => {
            context.lock_expectations().expect_version(
                key,
                &claim_key(name),
                answer.metadata.resource_version.as_deref(),
            );
            tracing::info!(cloneset = key, pvc = %name, pod = %hand_over.pod, "PVC handed to its pod");
            Ok(())
        }
        Err(error) if matches!(status_code(&error), Some(404 | 409)) => Ok(()),
        Err(error) => {
            publish_about(
                context,
                set,
                related(set, "PersistentVolumeClaim", name),
                EventType::Warning,
                "FailedUpdate",
                format!("failed to update PVC {name}: {error}"),
            )
            .await;
            Err(api_error(format!("pvc {name}"))(error))
        }
    }
}
