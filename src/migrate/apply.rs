//! `kruise-webhook migrate --apply`: the plan's steps written, in order, each idempotent (each
//! reads what it changes again and writes only what still differs, guarded by the
//! resourceVersion it read).

use std::time::Duration;

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{ListParams, Patch, PatchParams, PostParams};
use kube::{Api, Client};

use super::crd;
use super::plan::{ConfigurationKind, MANAGER_DEPLOYMENT, MANAGER_NAMESPACE, Step};
use crate::k8s::retry::{Attempt, again_on_conflict, retry_on_conflict};
use crate::tls::rotation_job::remove_unserved_entries;

/// Attempts when another writer changed a CRD between our read and our write.
const ATTEMPTS: usize = 5;
/// How often the manager's pods are looked for while they go.
const POLL: Duration = Duration::from_millis(500);

/// Takes one step; returns what was done, as a line for the operator.
pub async fn step(
    client: &Client,
    step: &Step,
    ours: &[CustomResourceDefinition],
    served: &[&str],
    manager_timeout: Duration,
) -> Result<String, String> {
    match step {
        Step::ScaleManagerToZero { .. } => scale_manager_to_zero(client, manager_timeout).await,
        Step::RemoveEntries {
            kind,
            configuration,
            ..
        } => {
            let removed = match kind {
                ConfigurationKind::MutatingWebhookConfiguration => {
                    let api: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
                    remove_unserved_entries(client, &api, configuration, served).await
                }
                ConfigurationKind::ValidatingWebhookConfiguration => {
                    let api: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
                    remove_unserved_entries(client, &api, configuration, served).await
                }
            }
            .map_err(|e| e.to_string())?;
            Ok(match removed {
                None => format!("{kind:?} {configuration} is gone: nothing to remove"),
                Some(removed) if removed.is_empty() => {
                    format!("{kind:?} {configuration}: no entry left to remove")
                }
                Some(removed) => format!(
                    "{kind:?} {configuration}: removed {}",
                    removed
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            })
        }
        Step::ReplaceCrd { name } => replace_crd(client, name, ours).await,
    }
}

/// Scales the manager's Deployment to zero (never deletes it: switching back scales it up), then
/// waits until none of its pods is left: a pod still terminating may still reconcile, or rewrite
/// the webhook configurations from its template.
async fn scale_manager_to_zero(client: &Client, timeout: Duration) -> Result<String, String> {
    let what = format!("Deployment {MANAGER_NAMESPACE}/{MANAGER_DEPLOYMENT}");
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), MANAGER_NAMESPACE);
    let scaled = deployments
        .patch(
            MANAGER_DEPLOYMENT,
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"spec": {"replicas": 0}})),
        )
        .await
        .map_err(|e| format!("scaling {what} to 0: {e}"))?;
    let Some(selector) = pod_selector(&scaled) else {
        return Ok(format!("{what} scaled to 0"));
    };
    let pods: Api<Pod> = Api::namespaced(client.clone(), MANAGER_NAMESPACE);
    let params = ListParams::default().labels(&selector);
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let left = pods
            .list_metadata(&params)
            .await
            .map_err(|e| format!("listing the pods of {what}: {e}"))?;
        if left.items.is_empty() {
            return Ok(format!("{what} scaled to 0, its pods gone"));
        }
        if tokio::time::Instant::now() >= deadline {
            let names: Vec<String> = left
                .items
                .iter()
                .filter_map(|pod| pod.metadata.name.clone())
                .collect();
            return Err(format!(
                "{what} scaled to 0, but its pods {} are still there after {}s (they may still act); no further step taken: run again once they are gone (or raise --manager-timeout)",
                names.join(", "),
                timeout.as_secs()
            ));
        }
        tokio::time::sleep(POLL).await;
    }
}

/// The label selector of a Deployment's pods (`matchLabels` only; `None` without any).
fn pod_selector(deployment: &Deployment) -> Option<String> {
    let labels = deployment.spec.as_ref()?.selector.match_labels.as_ref()?;
    (!labels.is_empty()).then(|| {
        labels
            .iter()
            .map(|(key, value)| format!("{key}={value}"))
            .collect::<Vec<_>>()
            .join(",")
    })
}

/// Replaces one CRD in place with ours (never deletes it: that deletes every object of it). The
/// apiserver refuses the write if a stored version would lose its place in `spec.versions`; its
/// message is passed on.
async fn replace_crd(
    client: &Client,
    name: &str,
    ours: &[CustomResourceDefinition],
) -> Result<String, String> {
    let wanted = ours
        .iter()
        .find(|crd| crd.metadata.name.as_deref() == Some(name))
        .ok_or_else(|| format!("{name} is not one of this project's CRDs"))?;
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let what = format!("CustomResourceDefinition {name}");
    let (api, what) = (&api, &what);
    let done = retry_on_conflict(ATTEMPTS, (), |()| async move {
        let Some(found) = api
            .get_opt(name)
            .await
            .map_err(|e| format!("reading {what}: {e}"))?
        else {
            return Ok::<_, String>(Attempt::Done(format!(
                "{what} is gone: nothing to replace (the install creates it)"
            )));
        };
        if !crd::state(&found, wanted).spec_differs {
            return Ok(Attempt::Done(format!("{what} already as this project's")));
        }
        let replaced = api
            .replace(
                name,
                &PostParams::default(),
                &crd::replacement(&found, wanted),
            )
            .await;
        Ok(again_on_conflict(replaced)
            .map_err(|e| format!("replacing {what}: {e}"))?
            .map(|_| format!("{what} replaced in place")))
    })
    .await?;
    done.ok_or_else(|| format!("{what} kept changing under us; gave up after {ATTEMPTS} attempts"))
}
