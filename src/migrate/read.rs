//! What `kruise-webhook migrate` reads: the cluster as the switch meets it, turned into the
//! planner's [`Snapshot`]. Every read that fails (no permission, no answer) becomes an
//! [`Unreadable`] entry naming what and why, never an early exit: the report says everything it
//! could read, and the plan refuses `--apply` on an incomplete picture.
//!
//! Objects of kinds this project does not run are counted only where their CRD exists (any
//! `*.kruise.io` CRD but this project's four), read in the version the CRD stores.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{ApiResource, DynamicObject, GroupVersionKind, ListParams};
use kube::{Api, Client};

use super::crd;
use super::plan::{
    MANAGER_DEPLOYMENT, MANAGER_NAMESPACE, Manager, Snapshot, Unreadable, UnrunKind,
    UnservedSidecarSet,
};
use crate::tls::rotation_job::Configuration;

/// OpenKruise's two webhook configurations, whose names `deploy/webhooks.yaml` takes over.
pub const MUTATING_CONFIGURATION: &str = "kruise-mutating-webhook-configuration";
pub const VALIDATING_CONFIGURATION: &str = "kruise-validating-webhook-configuration";
const SIDECARSETS_CRD: &str = "sidecarsets.apps.kruise.io";

/// Reads the cluster; `ours` are this project's CRDs ([`crate::crds::all`]).
pub async fn snapshot(client: &Client, ours: &[CustomResourceDefinition]) -> Snapshot {
    let mut snapshot = Snapshot::default();
    let mut failures = Vec::new();

    let deployments: Api<Deployment> = Api::namespaced(client.clone(), MANAGER_NAMESPACE);
    match deployments.get_opt(MANAGER_DEPLOYMENT).await {
        Ok(found) => {
            snapshot.manager = found
                .as_ref()
                .map_or(Manager::Absent, |d| Manager::Replicas(manager_replicas(d)));
        }
        Err(error) => failures.push(unreadable(
            format!("Deployment {MANAGER_NAMESPACE}/{MANAGER_DEPLOYMENT}"),
            error,
        )),
    }
    snapshot
        .mutating
        .extend(configuration(client, MUTATING_CONFIGURATION, &mut failures).await);
    snapshot
        .validating
        .extend(configuration(client, VALIDATING_CONFIGURATION, &mut failures).await);

    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    match crds.list(&ListParams::default()).await {
        Ok(list) => {
            let cluster = list.items;
            let (states, missing) = crd_states(&cluster, ours);
            snapshot.crds = states;
            snapshot.missing_crds = missing;
            for (kind, resource) in unrun_resources(&cluster, ours) {
                let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
                match api.list_metadata(&ListParams::default()).await {
                    Ok(list) => snapshot.unrun.push(UnrunKind {
                        kind,
                        objects: list
                            .items
                            .iter()
                            .map(|o| qualified_name(&o.metadata))
                            .collect(),
                    }),
                    Err(error) => {
                        failures.push(unreadable(format!("{} objects", resource.plural), error))
                    }
                }
            }
            if let Some(resource) = cluster
                .iter()
                .find(|c| c.metadata.name.as_deref() == Some(SIDECARSETS_CRD))
                .and_then(storage_resource)
            {
                let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
                match api.list(&ListParams::default()).await {
                    Ok(list) => snapshot.unserved_sidecarsets = unserved_sidecarsets(&list.items),
                    Err(error) => failures.push(unreadable("SidecarSets".to_string(), error)),
                }
            }
        }
        Err(error) => failures.push(unreadable("CustomResourceDefinitions".to_string(), error)),
    }
    snapshot.unreadable = failures;
    snapshot
}

/// One webhook configuration by name: `None` when absent, or unread (then said in `failures`).
async fn configuration<K: Configuration>(
    client: &Client,
    name: &str,
    failures: &mut Vec<Unreadable>,
) -> Option<K> {
    let api: Api<K> = Api::all(client.clone());
    api.get_opt(name).await.unwrap_or_else(|error| {
        failures.push(unreadable(format!("{} {name}", K::kind(&())), error));
        None
    })
}

fn unreadable(what: String, error: kube::Error) -> Unreadable {
    let reason = match &error {
        kube::Error::Api(response) => format!(
            "{} {}: {}",
            response.code, response.reason, response.message
        ),
        other => other.to_string(),
    };
    Unreadable { what, reason }
}

/// The replicas the manager's Deployment asks for (1 when unset, the apiserver's default).
pub fn manager_replicas(deployment: &Deployment) -> i32 {
    deployment
        .spec
        .as_ref()
        .and_then(|spec| spec.replicas)
        .unwrap_or(1)
}

/// Each of `ours` found in `cluster`, compared; the names of those not found.
pub fn crd_states(
    cluster: &[CustomResourceDefinition],
    ours: &[CustomResourceDefinition],
) -> (Vec<super::plan::CrdState>, Vec<String>) {
    let mut states = Vec::new();
    let mut missing = Vec::new();
    for wanted in ours {
        let name = wanted.metadata.name.as_deref().unwrap_or_default();
        match cluster
            .iter()
            .find(|c| c.metadata.name.as_deref() == Some(name))
        {
            Some(found) => states.push(crd::state(found, wanted)),
            None => missing.push(name.to_string()),
        }
    }
    (states, missing)
}

/// The kinds of OpenKruise's groups (`*.kruise.io`) in `cluster` that are not `ours`, each with
/// the resource to list them by, in CRD name order.
pub fn unrun_resources(
    cluster: &[CustomResourceDefinition],
    ours: &[CustomResourceDefinition],
) -> Vec<(String, ApiResource)> {
    let mut found: Vec<&CustomResourceDefinition> = cluster
        .iter()
        .filter(|c| c.spec.group == "kruise.io" || c.spec.group.ends_with(".kruise.io"))
        .filter(|c| !ours.iter().any(|o| o.metadata.name == c.metadata.name))
        .collect();
    found.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    found
        .into_iter()
        .filter_map(|c| Some((c.spec.names.kind.clone(), storage_resource(c)?)))
        .collect()
}

/// The resource of a CRD in the version it stores (objects stored there need no conversion to
/// be read); `None` when it has no stored version.
fn storage_resource(crd: &CustomResourceDefinition) -> Option<ApiResource> {
    let version = crd.spec.versions.iter().find(|v| v.storage)?;
    let gvk = GroupVersionKind::gvk(&crd.spec.group, &version.name, &crd.spec.names.kind);
    Some(ApiResource::from_gvk_with_plural(
        &gvk,
        &crd.spec.names.plural,
    ))
}

fn qualified_name(metadata: &kube::api::ObjectMeta) -> String {
    let name = metadata.name.as_deref().unwrap_or_default();
    match metadata.namespace.as_deref() {
        Some(namespace) => format!("{namespace}/{name}"),
        None => name.to_string(),
    }
}

/// The SidecarSets this server's webhooks would not serve, each with why: read, defaulted,
/// hashed and validated together as the `serve --sidecarsets` directory source does (so a
/// conflict between two sets is found too).
pub fn unserved_sidecarsets(sets: &[DynamicObject]) -> Vec<UnservedSidecarSet> {
    let files: Vec<(String, String)> = sets
        .iter()
        .map(|set| {
            let name = set.metadata.name.clone().unwrap_or_default();
            let text = serde_json::to_string(set).unwrap_or_default();
            (format!("{name}.json"), text)
        })
        .collect();
    let loaded = crate::source::dir::load(&files);
    loaded
        .errors
        .into_iter()
        .map(|error| UnservedSidecarSet {
            sidecarset: error.file.trim_end_matches(".json").to_string(),
            reason: error.message,
        })
        .collect()
}

#[cfg(test)]
mod tests;
