use std::io::IsTerminal;
use std::process::ExitCode;

// glibc's malloc slows down when tokio workers free what another worker allocated, which every
// admission request does; jemalloc's per-thread caches do not.
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

use clap::Parser;
use kruise_webhook::app::Failure;
use kruise_webhook::cli::{Cli, Command, LogFormat};

fn main() -> ExitCode {
    // One crypto provider for the whole process, before any TLS object exists.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let cli = Cli::parse();
    if let Err(message) = init_tracing(cli.log_format, &cli.log) {
        return usage_error(&message);
    }
    raise_open_files_limit();
    let outcome = match cli.command {
        Command::Serve(args) => match tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
        {
            Ok(runtime) => match runtime.block_on(kruise_webhook::app::serve(*args)) {
                Err(Failure::Usage(message)) => return usage_error(&message),
                Err(Failure::Run(message)) => Err(message),
                Ok(()) => Ok(()),
            },
            Err(e) => Err(e.to_string()),
        },
        Command::Inject(args) => kruise_webhook::app::inject_offline(&args),
        Command::Explain(args) => kruise_webhook::app::explain(&args),
        // 0: the rollout completes; 2: it would not (the output says why); 1: bad input.
        Command::Plan(args) => match kruise_webhook::app::plan(&args) {
            Ok(true) => Ok(()),
            Ok(false) => return ExitCode::from(2),
            Err(message) => Err(message),
        },
        Command::Crds(args) => kruise_webhook::app::crds(&args),
        Command::Certs(args) => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())
            .and_then(|runtime| {
                runtime
                    .block_on(kruise_webhook::tls::rotation_job::run(
                        &args,
                        kruise_webhook::admission::SERVED_PATHS,
                    ))
                    .map_err(|e| e.to_string())
            }),
        Command::Controller(args) => tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())
            .and_then(|runtime| {
                runtime
                    .block_on(kruise_webhook::controller::command::controller(args))
                    .map_err(|e| e.to_string())
            }),
        Command::Migrate(args) => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())
            .and_then(|runtime| {
                runtime.block_on(kruise_webhook::migrate::command::run(
                    &args,
                    kruise_webhook::admission::SERVED_PATHS,
                ))
            }),
        Command::NodeAgent(args) => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| e.to_string())
            .and_then(|runtime| runtime.block_on(kruise_webhook::app::node_agent(args))),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("kruise-webhook: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Every command may hold many connections or watches: a soft limit of 1024 open files goes.
fn raise_open_files_limit() {
    match kruise_webhook::open_files::raise_soft_limit() {
        Ok(limit) => tracing::debug!(
            before = ?limit.before,
            after = ?limit.after,
            "soft limit on open files raised to the hard limit (None: unlimited)"
        ),
        Err(error) => tracing::warn!(%error, "cannot raise the soft limit on open files"),
    }
}

/// A flag or an input it names is wrong: the message and exit code 2, as clap does for the flags
/// it refuses itself.
fn usage_error(message: &str) -> ExitCode {
    eprintln!("kruise-webhook: {message}");
    ExitCode::from(2)
}

/// Logs to standard error; an invalid `--log` filter is refused (a filter quietly replaced by
/// another would hide the logs asked for).
fn init_tracing(format: LogFormat, filter: &str) -> Result<(), String> {
    let filter = tracing_subscriber::EnvFilter::builder()
        .parse(filter)
        .map_err(|e| format!("invalid --log filter {filter:?}: {e}"))?;
    // Colour codes only help a terminal; in files and `kubectl logs` they are noise.
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Plain => builder.init(),
        LogFormat::Json => builder.json().init(),
    }
    Ok(())
}
