//! `kruise-webhook node-agent`: connects to the apiserver and the node's container runtime, then
//! runs the agent until told to stop (the process, [`crate::app::node_agent`], serves its probes
//! and stops it on SIGINT/SIGTERM).

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::agent::{self, Context};
use super::cri::Runtime;
use super::health::AgentHealth;
use crate::cli::NodeAgentArgs;

#[derive(Debug, thiserror::Error)]
pub enum NodeAgentError {
    /// No usable cluster configuration (the message names the kubeconfig or the inference).
    #[error("{0}")]
    Client(String),
    #[error("--node-name (or NODE_NAME) is empty")]
    NoNodeName,
}

/// Runs the agent until `shutdown`, telling `health` what it does.
pub async fn node_agent(
    args: &NodeAgentArgs,
    health: Arc<AgentHealth>,
    shutdown: CancellationToken,
) -> Result<(), NodeAgentError> {
    if args.node_name.is_empty() {
        return Err(NodeAgentError::NoNodeName);
    }
    let client = crate::source::watch::client(args.kubeconfig.as_deref())
        .await
        .map_err(NodeAgentError::Client)?;
    // The runtime may start after the agent (or restart under it): wait for it, never give up.
    let mut delay = Duration::from_secs(1);
    let runtime = loop {
        match Runtime::connect(&args.cri_socket).await {
            Ok(runtime) => break runtime,
            Err(error) => {
                tracing::warn!(%error, retry_in = ?delay, "container runtime not reachable");
                tokio::select! {
                    _ = tokio::time::sleep(delay) => {}
                    _ = shutdown.cancelled() => return Ok(()),
                }
                delay = (delay * 2).min(Duration::from_secs(30));
            }
        }
    };
    health.set_runtime_connected(true);
    tracing::info!(
        node = args.node_name,
        runtime = runtime.name,
        socket = %args.cri_socket.display(),
        "node agent started"
    );
    let context = Arc::new(Context::new(client, runtime, health));
    agent::run(context, &args.node_name, shutdown).await;
    Ok(())
}
