//! `kruise-webhook controller`: the controllers alone, against the cluster of the current
//! kubeconfig (or `--kubeconfig`), until SIGINT/SIGTERM.

use kube::config::{KubeConfigOptions, Kubeconfig};
use tokio_util::sync::CancellationToken;

use super::leader::default_identity;
use super::{ControllerConfig, run};
use crate::cli::ControllerArgs;

#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    #[error("kubeconfig {path}: {source}")]
    Kubeconfig {
        path: String,
        source: kube::config::KubeconfigError,
    },
    #[error("cannot find cluster credentials: {0}")]
    Infer(#[from] kube::config::InferConfigError),
    #[error("kubernetes client: {0}")]
    Client(#[from] kube::Error),
    #[error(transparent)]
    Controller(#[from] super::ControllerError),
}

pub async fn controller(args: ControllerArgs) -> Result<(), CommandError> {
    let config = match &args.kubeconfig {
        Some(path) => {
            let error = |source| CommandError::Kubeconfig {
                path: path.display().to_string(),
                source,
            };
            let kubeconfig = Kubeconfig::read_from(path).map_err(error)?;
            kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
                .await
                .map_err(error)?
        }
        None => kube::Config::infer().await?,
    };
    let client = kube::Client::try_from(config)?;
    let identity = args.identity.unwrap_or_else(default_identity);
    let mut controller_config = ControllerConfig::new(args.namespace, identity);
    controller_config.sidecarsets = !args.no_sidecarsets;
    controller_config.barriers = !args.no_barriers;

    let shutdown = CancellationToken::new();
    let on_signal = shutdown.clone();
    tokio::spawn(async move {
        wait_for_signal().await;
        tracing::info!("shutting down");
        on_signal.cancel();
    });
    run(client, controller_config, shutdown).await?;
    Ok(())
}

async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
