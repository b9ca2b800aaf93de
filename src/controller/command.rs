//! `kruise-webhook controller`: the controllers alone, against the cluster of the current
//! kubeconfig (or `--kubeconfig`), until SIGINT/SIGTERM.

use tokio_util::sync::CancellationToken;

use super::leader::default_identity;
use super::{ControllerConfig, run};
use crate::cli::ControllerArgs;

#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// No usable cluster configuration (the message names the kubeconfig or the inference).
    #[error("{0}")]
    Client(String),
    #[error(transparent)]
    Controller(#[from] super::ControllerError),
}

pub async fn controller(args: ControllerArgs) -> Result<(), CommandError> {
    let kube_config = crate::source::watch::config(args.kubeconfig.as_deref())
        .await
        .map_err(CommandError::Client)?;
    let identity = args.identity.unwrap_or_else(default_identity);
    let mut controller_config = ControllerConfig::new(args.namespace, identity);
    controller_config.sidecarsets = !args.no_sidecarsets;
    controller_config.barriers = !args.no_barriers;
    controller_config.clonesets = !args.no_clonesets;
    controller_config.statefulsets = !args.no_statefulsets;
    controller_config.daemonsets = !args.no_daemonsets;
    controller_config.limits = (&args.limits).into();

    let shutdown = CancellationToken::new();
    let on_signal = shutdown.clone();
    tokio::spawn(async move {
        crate::signal::wait_for_signal().await;
        tracing::info!("shutting down");
        on_signal.cancel();
    });
    run(kube_config, controller_config, shutdown).await?;
    Ok(())
}
