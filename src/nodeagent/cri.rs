//! The container runtime, over CRI v1 on its unix socket: only the four calls the agent makes.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use hyper_util::rt::TokioIo;
use tokio::net::UnixStream;
use tonic::transport::{Channel, Endpoint, Uri};
use tower::service_fn;

use super::decide::RuntimeContainer;

/// Generated from `proto/cri-api/v1/api.proto` by `build.rs`.
#[allow(clippy::all, clippy::pedantic, missing_docs)]
pub mod proto {
    tonic::include_proto!("runtime.v1");
}

use proto::runtime_service_client::RuntimeServiceClient;

/// Container labels and annotations the kubelet sets on every container it creates.
pub const LABEL_POD_UID: &str = "io.kubernetes.pod.uid";
pub const LABEL_CONTAINER_NAME: &str = "io.kubernetes.container.name";
pub const ANNOTATION_CONTAINER_HASH: &str = "io.kubernetes.container.hash";
pub const ANNOTATION_RESTART_COUNT: &str = "io.kubernetes.container.restartCount";

/// How long one CRI call may take before it counts as failed.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, thiserror::Error)]
pub enum CriError {
    #[error("cannot reach the container runtime at {path}: {source}")]
    Connect {
        path: PathBuf,
        source: tonic::transport::Error,
    },
    #[error("CRI {call}: {status}")]
    Call {
        call: &'static str,
        status: Box<tonic::Status>,
    },
    #[error("CRI {call} timed out")]
    Timeout { call: &'static str },
}

/// A connected runtime client. Cloning shares the connection.
#[derive(Clone)]
pub struct Runtime {
    client: RuntimeServiceClient<Channel>,
    /// `containerd`, from the runtime's Version answer: the scheme of container IDs.
    pub name: String,
}

impl Runtime {
    /// Connects to the runtime's socket and asks its name. The connection is re-established by
    /// the channel when the runtime restarts.
    pub async fn connect(socket: &Path) -> Result<Self, CriError> {
        let path = socket.to_path_buf();
        let for_connector = path.clone();
        // The URI is required by the API and ignored by the connector.
        let channel =
            Endpoint::try_from("http://cri.sock")
                .expect("static URI")
                .connect_timeout(CALL_TIMEOUT)
                .connect_with_connector(service_fn(move |_: Uri| {
                    let path = for_connector.clone();
                    async move {
                        Ok::<_, std::io::Error>(TokioIo::new(UnixStream::connect(path).await?))
                    }
                }))
                .await
                .map_err(|source| CriError::Connect { path, source })?;
        let mut client = RuntimeServiceClient::new(channel);
        let version = timed(
            "Version",
            client.version(proto::VersionRequest {
                version: "v1".to_string(),
            }),
        )
        .await?;
        Ok(Self {
            client,
            name: version.runtime_name,
        })
    }

    /// The newest container of each name in the pod, as the kubelet sees them.
    pub async fn pod_containers(&self, pod_uid: &str) -> Result<Vec<RuntimeContainer>, CriError> {
        let filter = proto::ContainerFilter {
            label_selector: HashMap::from([(LABEL_POD_UID.to_string(), pod_uid.to_string())]),
            ..Default::default()
        };
        let listed = timed(
            "ListContainers",
            self.client
                .clone()
                .list_containers(proto::ListContainersRequest {
                    filter: Some(filter),
                }),
        )
        .await?;
        Ok(newest_by_name(&self.name, listed.containers))
    }

    /// Runs `cmd` in the container and returns its standard output.
    pub async fn exec(
        &self,
        container_id: &str,
        cmd: &[&str],
        timeout: Duration,
    ) -> Result<String, CriError> {
        let answer = timed(
            "ExecSync",
            self.client.clone().exec_sync(proto::ExecSyncRequest {
                container_id: bare_id(container_id).to_string(),
                cmd: cmd.iter().map(|s| s.to_string()).collect(),
                timeout: timeout.as_secs() as i64,
            }),
        )
        .await?;
        if answer.exit_code != 0 {
            return Err(CriError::Call {
                call: "ExecSync",
                status: Box::new(tonic::Status::unknown(format!(
                    "{cmd:?} exited with {}",
                    answer.exit_code
                ))),
            });
        }
        Ok(String::from_utf8_lossy(&answer.stdout).into_owned())
    }

    /// Whether the container is known to the runtime and running.
    pub async fn is_running(&self, container_id: &str) -> Result<bool, CriError> {
        let filter = proto::ContainerFilter {
            id: bare_id(container_id).to_string(),
            ..Default::default()
        };
        let listed = timed(
            "ListContainers",
            self.client
                .clone()
                .list_containers(proto::ListContainersRequest {
                    filter: Some(filter),
                }),
        )
        .await?;
        Ok(listed
            .containers
            .iter()
            .any(|c| c.state == proto::ContainerState::ContainerRunning as i32))
    }

    /// Stops the container, giving it `timeout_seconds` after SIGTERM.
    pub async fn stop(&self, container_id: &str, timeout_seconds: i64) -> Result<(), CriError> {
        let mut client = self.client.clone();
        let call = client.stop_container(proto::StopContainerRequest {
            container_id: bare_id(container_id).to_string(),
            timeout: timeout_seconds,
        });
        // The runtime waits up to the grace period itself.
        let deadline = CALL_TIMEOUT + Duration::from_secs(timeout_seconds.max(0) as u64);
        match tokio::time::timeout(deadline, call).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(status)) => Err(CriError::Call {
                call: "StopContainer",
                status: Box::new(status),
            }),
            Err(_) => Err(CriError::Timeout {
                call: "StopContainer",
            }),
        }
    }
}

async fn timed<T>(
    call: &'static str,
    future: impl Future<Output = Result<tonic::Response<T>, tonic::Status>>,
) -> Result<T, CriError> {
    match tokio::time::timeout(CALL_TIMEOUT, future).await {
        Ok(Ok(answer)) => Ok(answer.into_inner()),
        Ok(Err(status)) => Err(CriError::Call {
            call,
            status: Box::new(status),
        }),
        Err(_) => Err(CriError::Timeout { call }),
    }
}

/// `containerd://abc` → `abc`.
pub fn bare_id(container_id: &str) -> &str {
    container_id
        .split_once("://")
        .map_or(container_id, |(_, id)| id)
}

/// The newest container (latest creation) of each container name, in the form of pod statuses.
pub fn newest_by_name(runtime: &str, containers: Vec<proto::Container>) -> Vec<RuntimeContainer> {
    let mut newest: HashMap<String, proto::Container> = HashMap::new();
    for container in containers {
        let Some(name) = container
            .labels
            .get(LABEL_CONTAINER_NAME)
            .cloned()
            .or_else(|| container.metadata.as_ref().map(|m| m.name.clone()))
        else {
            continue;
        };
        match newest.get(&name) {
            Some(seen) if seen.created_at >= container.created_at => {}
            _ => {
                newest.insert(name, container);
            }
        }
    }
    let mut found: Vec<RuntimeContainer> = newest
        .into_iter()
        .map(|(name, c)| RuntimeContainer {
            name,
            container_id: format!("{runtime}://{}", c.id),
            running: c.state == proto::ContainerState::ContainerRunning as i32,
            restart_count: c
                .annotations
                .get(ANNOTATION_RESTART_COUNT)
                .and_then(|v| v.parse().ok())
                .unwrap_or(0),
            plain_hash: c
                .annotations
                .get(ANNOTATION_CONTAINER_HASH)
                .and_then(|v| u64::from_str_radix(v, 16).ok())
                .unwrap_or(0),
        })
        .collect();
    found.sort_by(|a, b| a.name.cmp(&b.name));
    found
}
