//! The CloneSet's own PVC writes with `disablePVCReuse`: what [`crate::cloneset::pvc`] planned
//! for PVCs no active pod uses, sent under the same expectations as the pods.

use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::events::EventType;
use serde_json::json;

use super::{CloneSetError, Round};
use crate::api::cloneset::CloneSet;
use crate::cloneset::pvc::{ClaimPlan, HandOver};
use crate::controller::workload::{api_error, pvc_key, status_code};

/// `disablePVCReuse` (before any pod action, as OpenKruise): PVCs of no pod are deleted, those of
/// an inactive pod handed to it so that garbage collection removes them with it.
pub(super) async fn clean_up_claims(
    round: &Round<'_, CloneSet>,
    claims: &ClaimPlan,
) -> Result<(), CloneSetError> {
    if claims.delete.is_empty() && claims.hand_over.is_empty() {
        return Ok(());
    }
    let api: Api<PersistentVolumeClaim> = round.api();
    for hand_over in &claims.hand_over {
        hand_claim_over(round, &api, hand_over).await?;
    }
    round
        .delete_pvcs(&claims.delete, "failed to clean up PVC")
        .await;
    Ok(())
}

/// Replaces the PVC's ownerReferences, guarded by the version the decision was made on (a PVC
/// that changed or went meanwhile is left to the next round).
async fn hand_claim_over(
    round: &Round<'_, CloneSet>,
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
        .map_err(|e| CloneSetError::encoding(format!("pvc {name}"), e))?;
    match api
        .patch_metadata(name, &PatchParams::default(), &Patch::<()>::Json(patch))
        .await
    {
        Ok(answer) => {
            round.context.lock_expectations().expect_version(
                &round.key,
                &pvc_key(name),
                answer.metadata.resource_version.as_deref(),
            );
            tracing::info!(cloneset = %round.key, pvc = %name, pod = %hand_over.pod, "PVC handed to its pod");
            Ok(())
        }
        Err(error) if matches!(status_code(&error), Some(404 | 409)) => Ok(()),
        Err(error) => {
            round
                .publish_about(
                    round.related("PersistentVolumeClaim", name),
                    EventType::Warning,
                    "FailedUpdate",
                    format!("failed to update PVC {name}: {error}"),
                )
                .await;
            Err(api_error(format!("pvc {name}"))(error))
        }
    }
}
