//! The node agent's CRI client against a fake container runtime served by tonic on a unix socket:
//! the calls the agent makes, what it reads from the answers, and a clear error when the runtime
//! refuses.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::core::v1::{Container, EnvVar, EnvVarSource, ObjectFieldSelector};
use kruise_webhook::inplace::env_hash::current_hash;
use kruise_webhook::nodeagent::cri::proto::runtime_service_server::{
    RuntimeService, RuntimeServiceServer,
};
use kruise_webhook::nodeagent::cri::{CriError, Runtime, proto};
use tokio::net::UnixListener;
use tokio_stream::wrappers::UnixListenerStream;
use tonic::{Request, Response, Status};

#[derive(Default)]
struct FakeRuntime {
    containers: Vec<proto::Container>,
    env: HashMap<String, String>,
    stops: Mutex<Vec<(String, i64)>>,
    execs: Mutex<Vec<(String, Vec<String>)>>,
}

#[tonic::async_trait]
impl RuntimeService for FakeRuntime {
    async fn version(
        &self,
        _: Request<proto::VersionRequest>,
    ) -> Result<Response<proto::VersionResponse>, Status> {
        Ok(Response::new(proto::VersionResponse {
            runtime_name: "containerd".into(),
            runtime_api_version: "v1".into(),
            ..Default::default()
        }))
    }

    async fn list_containers(
        &self,
        request: Request<proto::ListContainersRequest>,
    ) -> Result<Response<proto::ListContainersResponse>, Status> {
        let filter = request.into_inner().filter.unwrap_or_default();
        let containers = self
            .containers
            .iter()
            .filter(|c| filter.id.is_empty() || c.id == filter.id)
            .filter(|c| {
                filter
                    .label_selector
                    .iter()
                    .all(|(k, v)| c.labels.get(k) == Some(v))
            })
            .cloned()
            .collect();
        Ok(Response::new(proto::ListContainersResponse { containers }))
    }

    async fn exec_sync(
        &self,
        request: Request<proto::ExecSyncRequest>,
    ) -> Result<Response<proto::ExecSyncResponse>, Status> {
        let request = request.into_inner();
        self.execs
            .lock()
            .unwrap()
            .push((request.container_id.clone(), request.cmd.clone()));
        let Some(env) = self.env.get(&request.container_id) else {
            return Err(Status::not_found(format!(
                "container {} not found",
                request.container_id
            )));
        };
        Ok(Response::new(proto::ExecSyncResponse {
            stdout: env.clone().into_bytes(),
            stderr: Vec::new(),
            exit_code: 0,
        }))
    }

    async fn stop_container(
        &self,
        request: Request<proto::StopContainerRequest>,
    ) -> Result<Response<proto::StopContainerResponse>, Status> {
        let request = request.into_inner();
        self.stops
            .lock()
            .unwrap()
            .push((request.container_id, request.timeout));
        Ok(Response::new(proto::StopContainerResponse {}))
    }
}

fn container(id: &str, name: &str, attempt: u32, created: i64, running: bool) -> proto::Container {
    proto::Container {
        id: id.into(),
        pod_sandbox_id: "sandbox".into(),
        metadata: Some(proto::ContainerMetadata {
            name: name.into(),
            attempt,
        }),
        state: if running {
            proto::ContainerState::ContainerRunning
        } else {
            proto::ContainerState::ContainerExited
        } as i32,
        created_at: created,
        labels: HashMap::from([
            ("io.kubernetes.pod.uid".into(), "pod-uid".into()),
            ("io.kubernetes.container.name".into(), name.into()),
        ]),
        annotations: HashMap::from([
            ("io.kubernetes.container.hash".into(), "c3d4e5f6".into()),
            (
                "io.kubernetes.container.restartCount".into(),
                attempt.to_string(),
            ),
        ]),
        ..Default::default()
    }
}

async fn serve(fake: Arc<FakeRuntime>) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("cri.sock");
    let listener = UnixListener::bind(&socket).unwrap();
    tokio::spawn(async move {
        tonic::transport::Server::builder()
            .add_service(RuntimeServiceServer::from_arc(fake))
            .serve_with_incoming(UnixListenerStream::new(listener))
            .await
            .unwrap();
    });
    (dir, socket)
}

fn sidecar_spec() -> Container {
    Container {
        name: "sidecar".into(),
        env: Some(vec![EnvVar {
            name: "APP_CONFIG".into(),
            value_from: Some(EnvVarSource {
                field_ref: Some(ObjectFieldSelector {
                    field_path: "metadata.annotations['app-config']".into(),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        }]),
        ..Default::default()
    }
}

#[tokio::test]
async fn reads_the_newest_container_of_each_name_and_its_env() {
    let fake = Arc::new(FakeRuntime {
        containers: vec![
            container("s1", "sidecar", 0, 100, false),
            container("s2", "sidecar", 1, 200, true),
            container("m1", "main", 0, 150, true),
            // Another pod's container is not listed.
            proto::Container {
                labels: HashMap::from([("io.kubernetes.pod.uid".into(), "other".into())]),
                ..container("x1", "sidecar", 0, 300, true)
            },
        ],
        env: HashMap::from([(
            "s2".to_string(),
            "PATH=/bin\nAPP_CONFIG=config v2\n".to_string(),
        )]),
        ..Default::default()
    });
    let (_dir, socket) = serve(fake.clone()).await;
    let runtime = Runtime::connect(&socket).await.unwrap();
    assert_eq!(runtime.name, "containerd");

    let found = runtime.pod_containers("pod-uid").await.unwrap();
    let summary: Vec<_> = found
        .iter()
        .map(|c| {
            (
                c.name.as_str(),
                c.container_id.as_str(),
                c.running,
                c.restart_count,
                c.plain_hash,
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            ("main", "containerd://m1", true, 0, 0xc3d4e5f6),
            ("sidecar", "containerd://s2", true, 1, 0xc3d4e5f6),
        ]
    );

    let env = runtime
        .exec("containerd://s2", &["env"], Duration::from_secs(3))
        .await
        .unwrap();
    assert_eq!(current_hash(&sidecar_spec(), &env), 2_451_607_708);
    assert_eq!(
        fake.execs.lock().unwrap().as_slice(),
        &[("s2".to_string(), vec!["env".to_string()])]
    );

    assert!(runtime.is_running("containerd://s2").await.unwrap());
    assert!(!runtime.is_running("containerd://s1").await.unwrap());
    assert!(!runtime.is_running("containerd://gone").await.unwrap());

    runtime.stop("containerd://s2", 7).await.unwrap();
    assert_eq!(
        fake.stops.lock().unwrap().as_slice(),
        &[("s2".to_string(), 7)]
    );
}

#[tokio::test]
async fn a_refusal_names_the_call_and_an_absent_runtime_the_socket() {
    let (_dir, socket) = serve(Arc::new(FakeRuntime::default())).await;
    let runtime = Runtime::connect(&socket).await.unwrap();
    let error = runtime
        .exec("containerd://missing", &["env"], Duration::from_secs(3))
        .await
        .unwrap_err();
    assert!(matches!(
        error,
        CriError::Call {
            call: "ExecSync",
            ..
        }
    ));
    assert!(
        error.to_string().contains("container missing not found"),
        "{error}"
    );
    // Calls the fake does not implement are reported, not fatal.
    let missing = tempfile::tempdir().unwrap();
    let error = match Runtime::connect(&missing.path().join("none.sock")).await {
        Ok(_) => panic!("connected to a socket that does not exist"),
        Err(error) => error,
    };
    assert!(error.to_string().contains("none.sock"), "{error}");
}
