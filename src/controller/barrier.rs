//! The launch-priority barrier controller: the I/O around [`crate::barrier`]. For each pod it
//! sends what the planner decides: the barrier ConfigMap created or given its missing keys (read
//! first, to know which), or the pod marked completed.

use std::sync::Arc;

use super::runtime::Term;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::Store;

pub use crate::barrier::{BarrierDecision, configmap_name, decide};
use crate::barrier::{ConfigMapWrite, FAILED_REQUEUE, completed_patch, configmap_write};

#[derive(Debug, thiserror::Error)]
pub enum BarrierError {
    #[error("barrier ConfigMap {namespace}/{name}: {source}")]
    ConfigMap {
        namespace: String,
        name: String,
        source: kube::Error,
    },
    #[error("pod {namespace}/{name}: {source}")]
    Pod {
        namespace: String,
        name: String,
        source: kube::Error,
    },
}

/// Sends what [`decide`] asked for. Returns whether anything was written.
pub async fn apply(client: &kube::Client, pod: &Pod) -> Result<bool, BarrierError> {
    let namespace = pod.metadata.namespace.clone().unwrap_or_default();
    let pod_name = pod.metadata.name.clone().unwrap_or_default();
    match decide(pod) {
        BarrierDecision::Ignore | BarrierDecision::Wait => Ok(false),
        BarrierDecision::Complete => {
            let pods: Api<Pod> = Api::namespaced(client.clone(), &namespace);
            pods.patch(
                &pod_name,
                &PatchParams::default(),
                &Patch::Merge(&completed_patch()),
            )
            .await
            .map_err(|source| BarrierError::Pod {
                namespace,
                name: pod_name,
                source,
            })?;
            Ok(true)
        }
        BarrierDecision::Release { configmap, keys } => {
            let api: Api<ConfigMap> = Api::namespaced(client.clone(), &namespace);
            let error = |source| BarrierError::ConfigMap {
                namespace: namespace.clone(),
                name: configmap.clone(),
                source,
            };
            let existing = api.get_opt(&configmap).await.map_err(error)?;
            match configmap_write(pod, &configmap, &keys, existing.as_ref()) {
                None => return Ok(false),
                Some(ConfigMapWrite::Create(created)) => {
                    api.create(&PostParams::default(), created.as_ref())
                        .await
                        .map_err(error)?;
                }
                Some(ConfigMapWrite::AddKeys(patch)) => {
                    api.patch(&configmap, &PatchParams::default(), &Patch::Merge(&patch))
                        .await
                        .map_err(error)?;
                }
            }
            Ok(true)
        }
    }
}

struct Context {
    client: kube::Client,
}

/// The component this controller's events carry (Kruise's controller of the same barrier).
pub const COMPONENT: &str = "container-launch-priority-controller";

/// Keeps the barriers of all pods moving until the term ends. `events` is a subscription to the
/// shared pod reflector behind `store`.
pub async fn run(
    events: impl futures::Stream<Item = Arc<Pod>> + Send + 'static,
    store: Store<Pod>,
    term: &Term,
) {
    let context = Arc::new(Context {
        client: term.client(),
    });
    let controller = Controller::for_shared_stream(events, store);
    term.run(COMPONENT, controller, reconcile, error_policy, context)
        .await;
}

async fn reconcile(pod: Arc<Pod>, context: Arc<Context>) -> Result<Action, BarrierError> {
    if apply(&context.client, &pod).await? {
        tracing::info!(
            pod = pod.metadata.name.as_deref().unwrap_or(""),
            namespace = pod.metadata.namespace.as_deref().unwrap_or(""),
            "barrier updated"
        );
    }
    Ok(Action::await_change())
}

fn error_policy(_pod: Arc<Pod>, error: &BarrierError, _context: Arc<Context>) -> Action {
    tracing::warn!(%error, "barrier reconcile failed");
    Action::requeue(FAILED_REQUEUE)
}

#[cfg(test)]
mod tests;
