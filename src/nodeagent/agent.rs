//! The node agent's I/O: a watch on this node's pods, the runtime over CRI, patches of the
//! `apps.kruise.io/runtime-containers-meta` annotation through `pods/status`, container stops.
//!
//! Every decision comes from [`super::decide`]; what the agent knows between reconciles is only
//! which (container, env hash) pairs it already stopped, so a container is stopped at most once
//! per target value. After a restart of the agent that memory is empty, and the runtime's answer
//! takes its place: a container that already stopped is not running and is left alone.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::events::{Event as KubeEvent, EventType, Recorder, Reporter};
use kube::runtime::watcher;
use kube::{Resource, ResourceExt};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::cri::{CriError, Runtime};
use super::decide::{self, Restart};
use super::health::AgentHealth;
use crate::api::keys;
use crate::inplace::completion::spec_containers;
use crate::inplace::env_hash::current_hash;
use crate::k8s::retry::is_conflict;

/// Event source of the agent, as OpenKruise's kruise-daemon names it.
pub const REPORTER: &str = "kruise-daemon-containermeta";
/// `env` run in a container to read its environment gets this long.
const ENV_EXEC_TIMEOUT: Duration = Duration::from_secs(3);
/// A container whose env could not be read yet is looked at again after this long.
const ENV_RETRY: Duration = Duration::from_secs(3);
/// A container is stopped only once its env has been out of date this long: the kubelet must have
/// seen the new metadata before it starts the container again, or the new container gets the old
/// value (seen on a real node when the stop followed the metadata change within milliseconds).
const RESTART_SETTLE: Duration = Duration::from_secs(1);
/// Retries of a failing pod back off from 3 s to 10 min.
const BACKOFF_MIN: Duration = Duration::from_secs(3);
const BACKOFF_MAX: Duration = Duration::from_secs(600);

#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error(transparent)]
    Runtime(#[from] CriError),
    #[error("patch {what} of pod {pod}: {source}")]
    Patch {
        what: &'static str,
        pod: String,
        source: kube::Error,
    },
}

pub struct Context {
    pub client: kube::Client,
    /// Reconciles and restarts are counted here.
    pub health: Arc<AgentHealth>,
    pub runtime: Runtime,
    pub recorder: Recorder,
    /// (container ID, env hash it was stopped for).
    stopped: Mutex<HashSet<(String, u64)>>,
    /// When each due restart was first seen, for [`RESTART_SETTLE`].
    due_since: Mutex<HashMap<(String, u64), Instant>>,
    /// Consecutive failures per pod, for the backoff.
    failures: Mutex<HashMap<String, u32>>,
}

impl Context {
    pub fn new(client: kube::Client, runtime: Runtime, health: Arc<AgentHealth>) -> Self {
        let recorder = Recorder::new(
            client.clone(),
            Reporter {
                controller: REPORTER.to_string(),
                instance: None,
            },
        );
        Self {
            client,
            health,
            runtime,
            recorder,
            stopped: Mutex::new(HashSet::new()),
            due_since: Mutex::new(HashMap::new()),
            failures: Mutex::new(HashMap::new()),
        }
    }
}

/// Runs until `shutdown`, reconciling every pod of `node`.
pub async fn run(context: Arc<Context>, node: &str, shutdown: CancellationToken) {
    let pods: Api<Pod> = Api::all(context.client.clone());
    let config = watcher::Config::default().fields(&format!("spec.nodeName={node}"));
    Controller::new(pods, config)
        .graceful_shutdown_on(shutdown.cancelled_owned())
        .run(counted_reconcile, error_policy, context)
        .for_each(|result| async move {
            if let Err(error) = result {
                tracing::debug!(%error, "node agent reconcile");
            }
        })
        .await;
}

fn pod_key(pod: &Pod) -> String {
    format!(
        "{}/{}",
        pod.metadata.namespace.as_deref().unwrap_or(""),
        pod.name_any()
    )
}

fn error_policy(pod: Arc<Pod>, error: &AgentError, context: Arc<Context>) -> Action {
    let key = pod_key(&pod);
    let mut failures = context.failures.lock().expect("failures lock");
    let count = failures.entry(key.clone()).or_insert(0);
    *count = count.saturating_add(1);
    let delay = BACKOFF_MIN
        .saturating_mul(1 << (*count - 1).min(8))
        .min(BACKOFF_MAX);
    tracing::warn!(pod = key, %error, retry_in = ?delay, "node agent sync failed");
    Action::requeue(delay)
}

/// [`reconcile`], counted and timed in the agent's metrics.
async fn counted_reconcile(pod: Arc<Pod>, context: Arc<Context>) -> Result<Action, AgentError> {
    let started = Instant::now();
    let health = context.health.clone();
    let outcome = reconcile(pod, context).await;
    health
        .controller
        .observe_reconcile(REPORTER, outcome.is_ok(), started.elapsed());
    outcome
}

async fn reconcile(pod: Arc<Pod>, context: Arc<Context>) -> Result<Action, AgentError> {
    let key = pod_key(&pod);
    if pod.metadata.deletion_timestamp.is_some() || !decide::is_of_interest(&pod) {
        return Ok(Action::await_change());
    }
    let Some(uid) = pod.metadata.uid.as_deref() else {
        return Ok(Action::await_change());
    };
    let runtime = context.runtime.pod_containers(uid).await?;
    let mut plan = decide::plan_meta(&pod, &runtime);
    let mut env_unread = false;
    for index in plan.env_hash_missing {
        let entry = &mut plan.meta.containers[index];
        let Some(container) = spec_containers(&pod).iter().find(|c| c.name == entry.name) else {
            continue;
        };
        match context
            .runtime
            .exec(&entry.container_id, &["env"], ENV_EXEC_TIMEOUT)
            .await
        {
            Ok(output) => {
                let hash = current_hash(container, &output);
                tracing::debug!(
                    pod = key,
                    container = entry.name,
                    id = entry.container_id,
                    hash,
                    "env hash read"
                );
                entry.hashes.extracted_env_from_metadata_hash = hash;
            }
            Err(error) => {
                tracing::info!(pod = key, container = entry.name, %error, "cannot read the container's env yet");
                env_unread = true;
            }
        }
    }

    let mut pod_now = (*pod).clone();
    if let Some(value) = decide::meta_to_write(&pod, &plan.meta) {
        let patch = json!({"metadata": {
            "resourceVersion": pod.metadata.resource_version,
            "annotations": {keys::RUNTIME_CONTAINERS_META: value},
        }});
        let api: Api<Pod> = Api::namespaced(
            context.client.clone(),
            pod.metadata.namespace.as_deref().unwrap_or(""),
        );
        match api
            .patch_status(
                &pod.name_any(),
                &PatchParams::default(),
                &Patch::Merge(&patch),
            )
            .await
        {
            Ok(written) => pod_now = written,
            // The pod changed since this view; its new version is already on the way.
            Err(error) if is_conflict(&error) => {
                return Ok(Action::requeue(Duration::from_secs(1)));
            }
            Err(source) => {
                return Err(AgentError::Patch {
                    what: "runtime-containers-meta",
                    pod: key,
                    source,
                });
            }
        }
        tracing::debug!(pod = key, "runtime-containers-meta written");
    }

    let mut settle: Option<Duration> = None;
    for restart in decide::restarts(&pod_now, &plan.meta) {
        let marker = (restart.container_id.clone(), restart.expected_hash);
        let first_seen = *context
            .due_since
            .lock()
            .expect("due lock")
            .entry(marker)
            .or_insert_with(Instant::now);
        let waited = first_seen.elapsed();
        if waited < RESTART_SETTLE {
            let rest = RESTART_SETTLE - waited;
            settle = Some(settle.map_or(rest, |s| s.min(rest)));
            continue;
        }
        stop_once(&context, &pod_now, &restart).await?;
    }
    context.failures.lock().expect("failures lock").remove(&key);
    Ok(match settle {
        Some(wait) => Action::requeue(wait),
        None if env_unread => Action::requeue(ENV_RETRY),
        None => Action::await_change(),
    })
}

/// Stops the container unless it was already stopped for this env value or is not running.
async fn stop_once(context: &Context, pod: &Pod, restart: &Restart) -> Result<(), AgentError> {
    let marker = (restart.container_id.clone(), restart.expected_hash);
    if context
        .stopped
        .lock()
        .expect("stopped lock")
        .contains(&marker)
    {
        return Ok(());
    }
    if !context.runtime.is_running(&restart.container_id).await? {
        context.due_since.lock().expect("due lock").remove(&marker);
        context.stopped.lock().expect("stopped lock").insert(marker);
        return Ok(());
    }
    let message = format!(
        "Stopping containerID {} by container meta restarter",
        restart.container_id
    );
    tracing::info!(
        pod = pod_key(pod),
        container = restart.container,
        "{message}"
    );
    let event = KubeEvent {
        type_: EventType::Normal,
        reason: "Killing".to_string(),
        note: Some(message),
        action: "Restart".to_string(),
        secondary: None,
    };
    if let Err(error) = context.recorder.publish(&event, &pod.object_ref(&())).await {
        tracing::warn!(%error, "cannot publish the Killing event");
    }
    let pre_stop_seconds = run_pre_stop(context, pod, restart).await;
    context
        .runtime
        .stop(
            &restart.container_id,
            decide::stop_timeout(pod, pre_stop_seconds),
        )
        .await?;
    context.health.record_restart();
    context.due_since.lock().expect("due lock").remove(&marker);
    context.stopped.lock().expect("stopped lock").insert(marker);
    Ok(())
}

/// Runs the container's `preStop` exec hook, as the kubelet would before stopping it; returns the
/// seconds it took. HTTP and sleep hooks are not run (the stop still gives the full grace).
async fn run_pre_stop(context: &Context, pod: &Pod, restart: &Restart) -> i64 {
    let command = spec_containers(pod)
        .iter()
        .find(|c| c.name == restart.container)
        .and_then(|c| {
            c.lifecycle
                .as_ref()?
                .pre_stop
                .as_ref()?
                .exec
                .as_ref()?
                .command
                .clone()
        });
    let Some(command) = command.filter(|c| !c.is_empty()) else {
        return 0;
    };
    let started = Instant::now();
    let grace = decide::stop_timeout(pod, 0) as u64;
    let args: Vec<&str> = command.iter().map(String::as_str).collect();
    if let Err(error) = context
        .runtime
        .exec(&restart.container_id, &args, Duration::from_secs(grace))
        .await
    {
        tracing::warn!(container = restart.container, %error, "preStop hook failed");
    }
    started.elapsed().as_secs() as i64
}
