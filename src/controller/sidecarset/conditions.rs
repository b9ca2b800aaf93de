//! A SidecarSet's `status.conditions`, written by two writers of one list each minding one type:
//! the refusal reporter (`InjectionFailure`) and the safety net (`PodsMissingSidecars`). A merge
//! patch replaces the whole list, so each write is guarded by the resourceVersion of the version it
//! was decided on, and a conflict is decided again on a fresh read: neither writer undoes the
//! other's condition, whichever order their writes land in. (A change of the status alone starts
//! no reconcile, so a write lost here would stay lost.)

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::Resource;
use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams};
use serde_json::json;

use crate::api::SidecarSet;
use crate::k8s::retry::{Attempt, retry_on_conflict};

/// Conflicts decided again before the write is left to a later round.
pub const ATTEMPTS: usize = 5;

/// What a decision about a set's conditions reads.
#[derive(Debug, Clone, Default)]
pub struct ConditionsRead {
    pub conditions: Vec<Condition>,
    pub generation: Option<i64>,
    /// `None`: unknown, the write is not guarded (a set the types refuse, not in the store).
    pub resource_version: Option<String>,
}

impl ConditionsRead {
    pub fn of(set: &SidecarSet) -> Self {
        ConditionsRead {
            conditions: set
                .status
                .as_ref()
                .and_then(|s| s.conditions.clone())
                .unwrap_or_default(),
            generation: set.metadata.generation,
            resource_version: set.metadata.resource_version.clone(),
        }
    }

    /// The stored set, read as JSON (it may be one the types refuse); `None` once it is gone.
    async fn fresh(client: &kube::Client, name: &str) -> Result<Option<Self>, kube::Error> {
        let resource = ApiResource::erase::<SidecarSet>(&());
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
        let Some(object) = api.get_opt(name).await? else {
            return Ok(None);
        };
        let conditions = object.data["status"]["conditions"].clone();
        Ok(Some(ConditionsRead {
            // Conditions the types cannot read are replaced by what the writer decides.
            conditions: serde_json::from_value(conditions).unwrap_or_default(),
            generation: object.metadata.generation,
            resource_version: object.metadata.resource_version,
        }))
    }
}

/// What a write of conditions did.
#[derive(Debug)]
pub enum Written<T> {
    /// The conditions `decide` chose are stored; the set's resourceVersion after the write.
    Stored {
        decision: T,
        resource_version: Option<String>,
    },
    /// Nothing to write (the set already says it, or it is gone).
    Nothing,
    /// Still conflicting after the attempts: left to a later round.
    Conflicting,
}

/// Writes set `name`'s conditions as `decide` wants them given the ones read (the whole list and
/// what goes with it, `None`: nothing to change), starting from `first`.
pub async fn write_conditions<T>(
    client: &kube::Client,
    name: &str,
    first: ConditionsRead,
    decide: impl Fn(&ConditionsRead) -> Option<(Vec<Condition>, T)>,
) -> Result<Written<T>, kube::Error> {
    let api: Api<DynamicObject> =
        Api::all_with(client.clone(), &ApiResource::erase::<SidecarSet>(&()));
    let decide = &decide;
    let api = &api;
    let written = retry_on_conflict(ATTEMPTS, Some(first), |read| async move {
        let Some(read) = read else {
            return Ok(Attempt::Done(Written::Nothing));
        };
        let Some((conditions, decision)) = decide(&read) else {
            return Ok(Attempt::Done(Written::Nothing));
        };
        let conditions = if conditions.is_empty() {
            serde_json::Value::Null
        } else {
            serde_json::to_value(&conditions).unwrap_or_default()
        };
        let mut patch = json!({ "status": { "conditions": conditions } });
        if let Some(version) = &read.resource_version {
            patch["metadata"] = json!({ "resourceVersion": version });
        }
        let sent = api
            .patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await;
        match sent {
            Ok(answer) => Ok(Attempt::Done(Written::Stored {
                decision,
                resource_version: answer.meta().resource_version.clone(),
            })),
            Err(kube::Error::Api(status)) if status.code == 409 => {
                Ok(Attempt::Again(ConditionsRead::fresh(client, name).await?))
            }
            // Deleted meanwhile: nothing to report on.
            Err(kube::Error::Api(status)) if status.code == 404 => {
                Ok(Attempt::Done(Written::Nothing))
            }
            Err(error) => Err(error),
        }
    })
    .await?;
    Ok(written.unwrap_or(Written::Conflicting))
}
