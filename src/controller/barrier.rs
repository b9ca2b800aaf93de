//! The barrier ConfigMap behind container launch priority. The pod webhook gives every container
//! an env `KRUISE_CONTAINER_BARRIER` read from key `p_<priority>` of ConfigMap `<pod>-barrier`;
//! kubelet holds a container until its key exists. This controller creates the ConfigMap (owned by
//! the pod, so garbage collection removes it) and adds keys as higher-priority containers become
//! ready, then marks the pod `apps.kruise.io/container-launch-priority-completed: "true"`.
//!
//! Semantics follow OpenKruise's container-launch-priority controller: the next key to release is
//! the highest priority among containers that report a status and are not ready; once the pod's
//! `ContainersReady` is True the pod is done.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{Api, ObjectMeta, Patch, PatchParams, PostParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::Store;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::api::keys;
use crate::inject::launch_priority::barrier_priority;

/// What a pod needs from the barrier controller right now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BarrierDecision {
    /// Not a launch-priority pod, already completed, or terminating.
    Ignore,
    /// Nothing to release yet (no container reports a pending status).
    Wait,
    /// The ConfigMap `configmap` must exist and hold these keys (value `"true"`).
    Release {
        configmap: String,
        keys: BTreeSet<String>,
    },
    /// Every container is ready: mark the pod completed.
    Complete,
}

/// Decides what the barrier of `pod` needs. Keys are cumulative: every priority at or above the
/// highest pending one, so a restarted controller converges to the same ConfigMap.
pub fn decide(pod: &Pod) -> BarrierDecision {
    let Some(spec) = pod.spec.as_ref() else {
        return BarrierDecision::Ignore;
    };
    let barriers: Vec<(&str, i64)> = spec
        .containers
        .iter()
        .filter_map(|c| barrier_priority(c).map(|p| (c.name.as_str(), p)))
        .collect();
    if barriers.is_empty() || pod.metadata.deletion_timestamp.is_some() || completed(pod) {
        return BarrierDecision::Ignore;
    }
    let status = pod.status.as_ref();
    let containers_ready = status
        .and_then(|s| s.conditions.as_ref())
        .into_iter()
        .flatten()
        .any(|c| c.type_ == keys::CONDITION_CONTAINERS_READY && c.status == keys::CONDITION_TRUE);
    if containers_ready {
        return BarrierDecision::Complete;
    }
    // Containers without a status are not pending yet: kubelet has not looked at them.
    let pending: BTreeSet<&str> = status
        .and_then(|s| s.container_statuses.as_ref())
        .into_iter()
        .flatten()
        .filter(|s| !s.ready)
        .map(|s| s.name.as_str())
        .collect();
    let Some(next) = barriers
        .iter()
        .filter(|(name, _)| pending.contains(name))
        .map(|(_, p)| *p)
        .max()
    else {
        return BarrierDecision::Wait;
    };
    let keys = barriers
        .iter()
        .filter(|(_, p)| *p >= next)
        .map(|(_, p)| format!("{}{p}", keys::BARRIER_KEY_PREFIX))
        .collect();
    BarrierDecision::Release {
        configmap: configmap_name(pod),
        keys,
    }
}

fn completed(pod: &Pod) -> bool {
    pod.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(keys::CONTAINER_LAUNCH_PRIORITY_COMPLETED))
        .is_some_and(|v| v == "true")
}

/// The ConfigMap the containers read: the name in the barrier env (what kubelet resolves), else
/// `<pod>-barrier`.
pub fn configmap_name(pod: &Pod) -> String {
    pod.spec
        .iter()
        .flat_map(|s| s.containers.iter())
        .flat_map(|c| c.env.iter().flatten())
        .filter(|e| e.name == keys::ENV_CONTAINER_BARRIER)
        .find_map(|e| e.value_from.as_ref()?.config_map_key_ref.as_ref())
        .map(|r| r.name.clone())
        .unwrap_or_else(|| {
            format!(
                "{}{}",
                pod.metadata.name.as_deref().unwrap_or(""),
                keys::BARRIER_CONFIGMAP_SUFFIX
            )
        })
}

/// Keys of `wanted` that `existing` lacks (a key already present keeps its value).
pub fn missing_keys<'a>(
    existing: Option<&BTreeMap<String, String>>,
    wanted: &'a BTreeSet<String>,
) -> BTreeSet<&'a String> {
    wanted
        .iter()
        .filter(|k| existing.is_none_or(|data| !data.contains_key(*k)))
        .collect()
}

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
            let patch = json!({"metadata": {"annotations": {
                keys::CONTAINER_LAUNCH_PRIORITY_COMPLETED: "true"
            }}});
            pods.patch(&pod_name, &PatchParams::default(), &Patch::Merge(&patch))
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
            let Some(existing) = existing else {
                let created = ConfigMap {
                    metadata: ObjectMeta {
                        name: Some(configmap.clone()),
                        namespace: Some(namespace.clone()),
                        owner_references: Some(vec![owner_of(pod)]),
                        ..Default::default()
                    },
                    data: Some(keys.iter().map(|k| (k.clone(), "true".into())).collect()),
                    ..Default::default()
                };
                api.create(&PostParams::default(), &created)
                    .await
                    .map_err(error)?;
                return Ok(true);
            };
            let missing = missing_keys(existing.data.as_ref(), &keys);
            if missing.is_empty() {
                return Ok(false);
            }
            let data: BTreeMap<&String, &str> = missing.into_iter().map(|k| (k, "true")).collect();
            api.patch(
                &configmap,
                &PatchParams::default(),
                &Patch::Merge(&json!({ "data": data })),
            )
            .await
            .map_err(error)?;
            Ok(true)
        }
    }
}

fn owner_of(pod: &Pod) -> OwnerReference {
    OwnerReference {
        api_version: "v1".into(),
        kind: "Pod".into(),
        name: pod.metadata.name.clone().unwrap_or_default(),
        uid: pod.metadata.uid.clone().unwrap_or_default(),
        ..Default::default()
    }
}

struct Context {
    client: kube::Client,
}

/// Keeps the barriers of all pods moving until `shutdown` fires. `events` is a subscription to
/// the shared pod reflector behind `store`.
pub async fn run(
    client: kube::Client,
    events: impl futures::Stream<Item = Arc<Pod>> + Send + 'static,
    store: Store<Pod>,
    shutdown: CancellationToken,
) {
    let context = Arc::new(Context { client });
    Controller::for_shared_stream(events, store)
        .graceful_shutdown_on(shutdown.cancelled_owned())
        .run(reconcile, error_policy, context)
        .for_each(|result| async move {
            if let Err(error) = result {
                tracing::debug!(%error, "barrier reconcile");
            }
        })
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
    Action::requeue(Duration::from_secs(5))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inject::launch_priority::barrier_env;
    use k8s_openapi::api::core::v1::{
        Container, ContainerStatus, PodCondition, PodSpec, PodStatus,
    };
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    fn container(name: &str, priority: Option<i64>) -> Container {
        Container {
            name: name.into(),
            env: priority.map(|p| vec![barrier_env("web-barrier", p)]),
            ..Default::default()
        }
    }

    /// `containers`: (name, priority, status: None = no status yet, Some(ready)).
    fn pod(containers: &[(&str, Option<i64>, Option<bool>)]) -> Pod {
        Pod {
            metadata: ObjectMeta {
                name: Some("web".into()),
                namespace: Some("default".into()),
                ..Default::default()
            },
            spec: Some(PodSpec {
                containers: containers
                    .iter()
                    .map(|(n, p, _)| container(n, *p))
                    .collect(),
                ..Default::default()
            }),
            status: Some(PodStatus {
                container_statuses: Some(
                    containers
                        .iter()
                        .filter_map(|(n, _, s)| {
                            s.map(|ready| ContainerStatus {
                                name: (*n).into(),
                                ready,
                                ..Default::default()
                            })
                        })
                        .collect(),
                ),
                ..Default::default()
            }),
        }
    }

    fn release(keys: &[&str]) -> BarrierDecision {
        BarrierDecision::Release {
            configmap: "web-barrier".into(),
            keys: keys.iter().map(|k| (*k).to_string()).collect(),
        }
    }

    #[test]
    fn pod_without_barrier_envs_is_ignored() {
        let pod = pod(&[("a", None, Some(false)), ("b", None, Some(false))]);
        assert_eq!(decide(&pod), BarrierDecision::Ignore);
    }

    #[test]
    fn nothing_is_released_before_kubelet_reports_statuses() {
        let pod = pod(&[("a", Some(0), None), ("b", Some(-1), None)]);
        assert_eq!(decide(&pod), BarrierDecision::Wait);
    }

    #[test]
    fn highest_pending_priority_is_released_first() {
        let pod = pod(&[("a", Some(0), Some(false)), ("b", Some(-1), Some(false))]);
        assert_eq!(decide(&pod), release(&["p_0"]));
    }

    #[test]
    fn next_key_once_higher_priority_is_ready_and_earlier_keys_stay() {
        let pod = pod(&[
            ("a", Some(10), Some(true)),
            ("b", Some(0), Some(false)),
            ("c", Some(-2), Some(false)),
        ]);
        assert_eq!(decide(&pod), release(&["p_0", "p_10"]));
    }

    #[test]
    fn a_not_ready_higher_priority_container_blocks_lower_ones() {
        // c became ready earlier but a (higher) restarted: only a's level is wanted, c's key is
        // not withdrawn by the writer (it only adds).
        let pod = pod(&[
            ("a", Some(5), Some(false)),
            ("b", Some(1), Some(true)),
            ("c", Some(0), Some(true)),
        ]);
        assert_eq!(decide(&pod), release(&["p_5"]));
    }

    #[test]
    fn containers_sharing_a_priority_share_a_key() {
        let pod = pod(&[
            ("a", Some(1), Some(true)),
            ("b", Some(0), Some(false)),
            ("c", Some(0), Some(true)),
        ]);
        assert_eq!(decide(&pod), release(&["p_0", "p_1"]));
    }

    #[test]
    fn negative_priorities_release_in_descending_order() {
        let pod = pod(&[
            ("a", Some(0), Some(true)),
            ("b", Some(-1), Some(true)),
            ("c", Some(-2), Some(false)),
        ]);
        assert_eq!(decide(&pod), release(&["p_-1", "p_-2", "p_0"]));
    }

    #[test]
    fn containers_without_status_are_not_pending() {
        let pod = pod(&[("a", Some(3), None), ("b", Some(1), Some(false))]);
        assert_eq!(decide(&pod), release(&["p_1", "p_3"]));
    }

    #[test]
    fn all_ready_statuses_without_containers_ready_condition_wait() {
        let pod = pod(&[("a", Some(1), Some(true)), ("b", Some(0), Some(true))]);
        assert_eq!(decide(&pod), BarrierDecision::Wait);
    }

    #[test]
    fn containers_ready_completes() {
        let mut pod = pod(&[("a", Some(1), Some(true)), ("b", Some(0), Some(true))]);
        pod.status.as_mut().unwrap().conditions = Some(vec![PodCondition {
            type_: "ContainersReady".into(),
            status: "True".into(),
            ..Default::default()
        }]);
        assert_eq!(decide(&pod), BarrierDecision::Complete);
    }

    #[test]
    fn completed_and_terminating_pods_are_ignored() {
        let mut done = pod(&[("a", Some(1), Some(false)), ("b", Some(0), Some(false))]);
        done.metadata.annotations = Some(BTreeMap::from([(
            keys::CONTAINER_LAUNCH_PRIORITY_COMPLETED.to_string(),
            "true".to_string(),
        )]));
        assert_eq!(decide(&done), BarrierDecision::Ignore);
        let mut terminating = pod(&[("a", Some(1), Some(false)), ("b", Some(0), Some(false))]);
        terminating.metadata.deletion_timestamp = Some(Time(jiff::Timestamp::UNIX_EPOCH));
        assert_eq!(decide(&terminating), BarrierDecision::Ignore);
    }

    #[test]
    fn configmap_name_comes_from_the_env_else_the_pod_name() {
        let with_env = pod(&[("a", Some(1), None)]);
        assert_eq!(configmap_name(&with_env), "web-barrier");
        let mut other = pod(&[("a", None, None)]);
        other.metadata.name = Some("api".into());
        assert_eq!(configmap_name(&other), "api-barrier");
    }

    #[test]
    fn missing_keys_skips_present_ones() {
        let wanted: BTreeSet<String> = ["p_0", "p_1"].iter().map(|s| s.to_string()).collect();
        let existing = BTreeMap::from([("p_1".to_string(), "true".to_string())]);
        let missing: Vec<&String> = missing_keys(Some(&existing), &wanted).into_iter().collect();
        assert_eq!(missing, vec!["p_0"]);
        assert_eq!(missing_keys(None, &wanted).len(), 2);
    }
}

#[cfg(test)]
#[path = "barrier_shell_tests.rs"]
mod shell_tests;
