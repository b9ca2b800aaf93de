//! `kruise-webhook node-agent`: connects to the apiserver and the node's container runtime, then
//! runs the agent until SIGINT/SIGTERM.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::agent::{self, Context};
use super::cri::Runtime;
use crate::cli::NodeAgentArgs;

#[derive(Debug, thiserror::Error)]
pub enum NodeAgentError {
    /// No usable cluster configuration (the message names the kubeconfig or the inference).
    #[error("{0}")]
    Client(String),
    #[error("--node-name (or NODE_NAME) is empty")]
    NoNodeName,
}

pub async fn node_agent(args: NodeAgentArgs) -> Result<(), NodeAgentError> {
    if args.node_name.is_empty() {
        return Err(NodeAgentError::NoNodeName);
    }
    let client = crate::source::watch::client(args.kubeconfig.as_deref())
        .await
        .map_err(NodeAgentError::Client)?;
    let shutdown = CancellationToken::new();
    let on_signal = shutdown.clone();
    tokio::spawn(async move {
        crate::signal::wait_for_signal().await;
        tracing::info!("shutting down");
        on_signal.cancel();
    });

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
    tracing::info!(
        node = args.node_name,
        runtime = runtime.name,
        socket = %args.cri_socket.display(),
        "node agent started"
    );
    let context = Arc::new(Context::new(client, runtime));
    agent::run(context, &args.node_name, shutdown).await;
    Ok(())
}
