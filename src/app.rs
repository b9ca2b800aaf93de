//! Process wiring: what `serve`, `node-agent` and `inject` do, from parsed arguments to running
//! tasks.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

mod runtimes;

use crate::admin::{Probes, Readiness, admin_router, probe_router};
use crate::admission::deletion::ClusterReads;
use crate::admission::{AdmissionState, router};
use crate::cli::{
    CrdsArgs, ExplainArgs, InjectArgs, NodeAgentArgs, PlanArgs, ServeArgs, SourceKind,
};
use crate::metrics::Metrics;
use crate::nodeagent::health::AgentHealth;
use crate::rollout::refusal::{RefusalReason, Refusals};
use crate::server::{ADMIN_MAX_CONNECTIONS, ServeOptions};
use crate::signal::wait_for_signal;
use crate::source::cluster::Snapshot;
use crate::source::dir::{self, LoadError};
use crate::source::{self, Catalogue, SharedCatalogue, watch};
use crate::tls::certgen::{CA_CERT_FILE, CERT_FILE, KEY_FILE, ensure_cert_dir};
use crate::tls::reloader::{ReloadableCert, server_config, spawn_reloader};
use crate::tls::rotation_job::CheckedConfigurations;

/// Lifetime of a certificate generated for local use.
const LOCAL_CERT_VALIDITY: Duration = Duration::from_secs(365 * 24 * 3600);

/// Why a command ended without success, and so its exit code.
#[derive(Debug, PartialEq, Eq)]
pub enum Failure {
    /// A flag, or an input a flag names, is wrong; found before anything was written (exit
    /// code 2, as for the flags the parser refuses).
    Usage(String),
    /// The command failed while running (exit code 1).
    Run(String),
}

impl From<String> for Failure {
    fn from(message: String) -> Self {
        Failure::Run(message)
    }
}

/// `kruise-webhook serve`, in the order it must happen: every flag and input checked before
/// anything is written, a certificate before the webhook port opens, the SidecarSet source (and,
/// with a cluster, the controllers) before requests are answered, then both ports until a
/// signal, then the ordered shutdown.
pub async fn serve(args: ServeArgs) -> Result<(), Failure> {
    let source = checked_source(&args).await?;
    let cluster = match &source {
        StartSource::Cluster(config, _) => Some(config.as_ref().clone()),
        StartSource::Embedded | StartSource::Dir { .. } => None,
    };
    let process = Process::new();
    let certificate = serving_certificate(&args, &process).await?;
    let (catalogue, controllers) = sidecarset_source(&args, source, &process);
    let servers = start_servers(&args, &process, certificate, catalogue, cluster).await?;
    wait_for_signal().await;
    Ok(shut_down(&args, &process, servers, controllers).await?)
}

/// The SidecarSet source of `serve`, read or connected before a certificate is written.
enum StartSource {
    Embedded,
    /// The directory and its files as read at start (the first catalogue is built from them).
    Dir {
        directory: PathBuf,
        files: Vec<(String, String)>,
    },
    /// The cluster configuration (the controllers build clients of their own from it) and the
    /// client of the SidecarSet watch.
    Cluster(Box<kube::Config>, kube::Client),
}

/// Checks the flags that name inputs, and reads those inputs: the source the flags ask for,
/// `--sidecarsets` (a readable directory whose every document loads: a typo is reported at
/// start, not skipped), `--kubeconfig` (a readable kubeconfig giving a client). A wrong one is a
/// usage error. A cluster configuration inferred from the environment that does not work is a
/// failure to run.
async fn checked_source(args: &ServeArgs) -> Result<StartSource, Failure> {
    match args.source_kind().map_err(Failure::Usage)? {
        SourceKind::Embedded => Ok(StartSource::Embedded),
        SourceKind::Dir => {
            let directory = args.sidecarsets.clone().unwrap_or_default();
            let files = dir::read_directory(&directory).map_err(|e| {
                Failure::Usage(format!("--sidecarsets {}: {e}", directory.display()))
            })?;
            let errors = dir::load(&files).errors;
            if !errors.is_empty() {
                let listed: Vec<String> = errors.iter().map(ToString::to_string).collect();
                return Err(Failure::Usage(format!(
                    "--sidecarsets {}: {} document(s) refused:\n  {}",
                    directory.display(),
                    errors.len(),
                    listed.join("\n  ")
                )));
            }
            Ok(StartSource::Dir { directory, files })
        }
        SourceKind::Cluster => match args.kubeconfig.as_deref() {
            Some(path) => cluster_source(Some(path))
                .await
                .map_err(|e| Failure::Usage(format!("--kubeconfig: {e}"))),
            None => Ok(cluster_source(None).await?),
        },
    }
}

async fn cluster_source(kubeconfig: Option<&Path>) -> Result<StartSource, String> {
    let config = watch::config(kubeconfig).await?;
    let client = kube::Client::try_from(config.clone())
        .map_err(|e| format!("building the Kubernetes client: {e}"))?;
    Ok(StartSource::Cluster(Box::new(config), client))
}

/// What every step of `serve` shares: the metrics and readiness the admin port reports, and the
/// two tokens that order the shutdown.
struct Process {
    metrics: Arc<Metrics>,
    readiness: Arc<Readiness>,
    /// Fires on SIGTERM: the webhook port starts its shutdown delay, the controllers stop.
    terminating: CancellationToken,
    /// Fires once the webhook port has drained: the admin port and the background tasks stop.
    shutdown: CancellationToken,
}

impl Process {
    fn new() -> Self {
        Process {
            metrics: Arc::new(Metrics::new()),
            readiness: Arc::new(Readiness::default()),
            terminating: CancellationToken::new(),
            shutdown: CancellationToken::new(),
        }
    }
}

/// The certificate of the webhook port, loaded once and then reloaded whenever its files change,
/// so a rotated Secret is served without a restart. With `--external-certs` the files are
/// managed elsewhere (and their `caBundle` is checked); otherwise they are generated here and
/// reused while valid.
async fn serving_certificate(
    args: &ServeArgs,
    process: &Process,
) -> Result<Arc<ReloadableCert>, String> {
    let files = certificate_files(args)?;
    let certificate = Arc::new(
        ReloadableCert::from_files(&files.cert, &files.key)
            .map_err(|e| format!("loading {}: {e}", files.cert.display()))?,
    );
    process
        .metrics
        .set_certificate_not_after(certificate.not_after());
    process.readiness.set_cert_loaded(true);
    tracing::info!(cert = %files.cert.display(), ca = %files.ca.display(), "serving certificate loaded");
    {
        let metrics = process.metrics.clone();
        spawn_reloader(
            certificate.clone(),
            files.cert.clone(),
            files.key.clone(),
            args.reload_interval,
            process.shutdown.clone(),
            move |outcome| metrics.record_certificate_reload(outcome),
        );
    }
    if args.external_certs {
        spawn_external_bundle_check(args, &certificate, &process.metrics, &process.shutdown).await;
    }
    Ok(certificate)
}

/// Where the certificate files are: as mounted with `--external-certs`, else in `--cert-dir`
/// after generating whatever is missing, expired or not covering the wanted names.
fn certificate_files(args: &ServeArgs) -> Result<CertPaths, String> {
    if args.external_certs {
        return Ok(CertPaths {
            cert: args.cert_dir.join(CERT_FILE),
            key: args.cert_dir.join(KEY_FILE),
            ca: args.cert_dir.join(CA_CERT_FILE),
        });
    }
    let mut ips: Vec<IpAddr> = vec![Ipv4Addr::LOCALHOST.into(), Ipv6Addr::LOCALHOST.into()];
    ips.extend(args.tls_ips.iter().copied());
    let files = ensure_cert_dir(
        &args.cert_dir,
        &args.certificate_dns_names(),
        &ips,
        LOCAL_CERT_VALIDITY,
    )
    .map_err(|e| format!("certificates in {}: {e}", args.cert_dir.display()))?;
    Ok(CertPaths {
        cert: files.cert,
        key: files.key,
        ca: files.ca,
    })
}

/// The SidecarSets the pod webhook injects: watched in the cluster, a directory that is polled,
/// or the embedded examples. A cluster source also starts the controllers (unless
/// `--no-controller`), with clients of their own on the same cluster configuration, on a runtime
/// of their own ([`Controllers`]); returned so shutdown can wait for them.
fn sidecarset_source(
    args: &ServeArgs,
    source: StartSource,
    process: &Process,
) -> (SharedCatalogue, Option<Controllers>) {
    match source {
        StartSource::Cluster(config, client) => {
            // The revision history, in the manager's namespace: resolved by the catalogue,
            // checked by the validating webhook, planned by the SidecarSet controller.
            let history = watch::HistoryWatch {
                namespace: args.service_namespace.clone(),
                revisions: source::history::shared(),
            };
            if args.no_controller {
                return (
                    cluster_catalogue(client, None, history, None, process),
                    None,
                );
            }
            // One list and watch of the SidecarSets for the catalogue and the controller.
            let mut controller_config = controller_config(args, process.metrics.clone());
            let (describe, stalled) = (
                controller_config.lease_health.clone(),
                controller_config.lease_health.clone(),
            );
            process.readiness.report_on(
                move || describe.describe(std::time::Instant::now()),
                move || stalled.stalled(std::time::Instant::now()),
            );
            let reporter = crate::controller::sidecarset_reporter(&client, &controller_config);
            let (refusals, refusals_seen) = tokio::sync::watch::channel(Default::default());
            let (feed, mut writer) = crate::controller::sidecarset::feed::feed(
                reporter,
                history.revisions.clone(),
                refusals_seen,
            );
            controller_config.sidecarset_feed = Some(feed);
            let tap: watch::SidecarSetTap = Box::new(move |event| writer.apply(event));
            let catalogue = cluster_catalogue(client, Some(tap), history, Some(refusals), process);
            // A child token: a failing controller stops itself, never the webhooks.
            let controllers = spawn_controllers(
                *config,
                controller_config,
                process.readiness.clone(),
                process.terminating.child_token(),
            );
            (catalogue, controllers)
        }
        StartSource::Dir { directory, files } => (
            directory_catalogue(directory, files, args.reload_interval, process),
            None,
        ),
        StartSource::Embedded => {
            let (catalogue, errors) = dir::load(&dir::embedded_files()).into_catalogue();
            report_load(&process.metrics, &catalogue, &errors);
            process.readiness.set_catalogue_loaded(true);
            (source::shared(catalogue), None)
        }
    }
}

/// The catalogue kept current by watching SidecarSets, Namespaces and the SidecarSet revision
/// history. Empty until the watches have listed; /readyz says so meanwhile. Each snapshot's
/// SidecarSets that cannot be served go to `refusals`, for the controller to report on them.
fn cluster_catalogue(
    client: kube::Client,
    tap: Option<watch::SidecarSetTap>,
    history: watch::HistoryWatch,
    refusals: Option<tokio::sync::watch::Sender<Arc<Refusals>>>,
    process: &Process,
) -> SharedCatalogue {
    let catalogue = source::shared(Catalogue::default());
    let metrics = process.metrics.clone();
    let readiness = process.readiness.clone();
    let namespace = history.namespace.clone();
    watch::spawn(
        client,
        catalogue.clone(),
        move |snapshot| {
            report_snapshot(&metrics, snapshot);
            if let Some(refusals) = &refusals {
                refusals.send_if_modified(|seen| {
                    let changed = **seen != snapshot.refusals;
                    if changed {
                        *seen = Arc::new(snapshot.refusals.clone());
                    }
                    changed
                });
            }
            if !readiness.is_ready() {
                tracing::info!(
                    sidecarsets = snapshot.catalogue.sidecarsets().len(),
                    namespaces = snapshot.catalogue.namespace_count(),
                    skipped = snapshot.refused,
                    "SidecarSet catalogue synced from the cluster"
                );
            }
            readiness.set_catalogue_loaded(true);
        },
        tap,
        Some(history),
        process.shutdown.clone(),
    );
    tracing::info!(
        revisions_namespace = namespace,
        "watching SidecarSets, Namespaces and SidecarSet revisions in the cluster"
    );
    catalogue
}

/// The catalogue of the `--sidecarsets` files read at start, then re-read whenever they change
/// (a file that fails to load keeps its last good version; the server keeps serving).
fn directory_catalogue(
    directory: PathBuf,
    files: Vec<(String, String)>,
    reload_interval: Duration,
    process: &Process,
) -> SharedCatalogue {
    let loaded = dir::load(&files);
    let state = dir::DirectoryState::first(files, &loaded);
    let (catalogue, errors) = loaded.into_catalogue();
    report_load(&process.metrics, &catalogue, &errors);
    let catalogue = source::shared(catalogue);
    process.readiness.set_catalogue_loaded(true);
    let metrics = process.metrics.clone();
    dir::spawn_watcher(
        directory,
        reload_interval,
        state,
        catalogue.clone(),
        move |reload| {
            metrics.set_sidecarset_files_stale(reload.stale.len());
            report_load(&metrics, &reload.catalogue, &reload.errors);
        },
        process.shutdown.clone(),
    );
    catalogue
}

/// The two running ports: the webhooks over HTTPS, and /livez /readyz /metrics over HTTP.
struct Servers {
    https: JoinHandle<std::io::Result<()>>,
    admin: JoinHandle<std::io::Result<()>>,
    /// Where `https` runs (see [`runtimes::admission`]); shut down once it has drained.
    admission: tokio::runtime::Runtime,
}

/// Binds both ports (a port in use stops the start) and serves them. The webhook port stops on
/// `terminating` after its shutdown delay; the admin port only on `shutdown`, so it keeps
/// answering "not ready" while the webhook port drains. With a cluster, the deletion-protection
/// webhooks get a client of their own, on the admission runtime.
async fn start_servers(
    args: &ServeArgs,
    process: &Process,
    certificate: Arc<ReloadableCert>,
    catalogue: SharedCatalogue,
    cluster: Option<kube::Config>,
) -> Result<Servers, String> {
    let https = std::net::TcpListener::bind(args.listen)
        .and_then(|listener| listener.set_nonblocking(true).map(|()| listener))
        .map_err(|e| format!("binding {}: {e}", args.listen))?;
    let admin = TcpListener::bind(args.admin_listen)
        .await
        .map_err(|e| format!("binding {}: {e}", args.admin_listen))?;
    tracing::info!(
        webhooks = %args.listen,
        admin = %args.admin_listen,
        "serving /mutate-pod and /mutate-apps-kruise-io-sidecarset over HTTPS; /livez /readyz /metrics over HTTP"
    );
    let options = ServeOptions {
        accept_for: args.shutdown_delay,
        ..ServeOptions::new(args.max_connections)
    };
    warn_if_open_files_below(options.max_connections + ADMIN_MAX_CONNECTIONS);
    let admission = runtimes::admission().map_err(|e| format!("admission runtime: {e}"))?;
    let deletion_reads = match cluster {
        Some(config) => {
            // Its connections are then served by the admission runtime, not the controllers'.
            let _admission = admission.enter();
            let client = kube::Client::try_from(config)
                .map_err(|e| format!("building the deletion protection's client: {e}"))?;
            Some(Arc::new(ClusterReads::new(client)))
        }
        None => None,
    };
    let state = AdmissionState {
        catalogue,
        metrics: process.metrics.clone(),
        sort_sidecars_by_name: args.sort_sidecars_by_name,
        deletion_reads,
    };
    let (tls, routes, terminating) = (
        server_config(certificate),
        router(state, args.baseline_route),
        process.terminating.clone(),
    );
    let https = admission.spawn(async move {
        // Registered with this runtime's reactor, so its connections are polled here.
        let listener = TcpListener::from_std(https)?;
        crate::server::serve_https(listener, tls, routes, terminating, options).await
    });
    let admin = tokio::spawn(crate::server::serve_http(
        admin,
        admin_router(process.metrics.clone(), process.readiness.clone()),
        process.shutdown.clone(),
    ));
    Ok(Servers {
        https,
        admin,
        admission,
    })
}

/// Warns when the open-files limit (already raised to the hard limit) cannot hold the connection
/// caps of both ports plus the process's own files and watches.
fn warn_if_open_files_below(connections: usize) {
    const OWN_FILES: u64 = 256;
    let needed = connections as u64 + OWN_FILES;
    if let Some(limit) = crate::open_files::soft_limit().filter(|&limit| limit < needed) {
        tracing::warn!(
            limit,
            needed,
            "the open-files limit is below the connection caps: a flood can exhaust it; lower --max-connections or raise the limit"
        );
    }
}

/// The ordered stop after a signal: not ready, the webhook port serves on for the shutdown delay
/// and drains, then the admin port and the background tasks stop, and the controllers finish
/// their writes and release the Lease.
async fn shut_down(
    args: &ServeArgs,
    process: &Process,
    servers: Servers,
    controllers: Option<Controllers>,
) -> Result<(), String> {
    tracing::info!(
        shutdown_delay = ?args.shutdown_delay,
        "shutting down: not ready; serving on for the shutdown delay, then draining connections"
    );
    process.readiness.set_draining();
    process.terminating.cancel();
    let https_outcome = server_outcome(servers.https.await);
    // Nothing runs there any more; dropping a runtime inside another one must not block.
    servers.admission.shutdown_background();
    // The admin port answers (not ready) until the webhook port is done.
    process.shutdown.cancel();
    let admin_outcome = server_outcome(servers.admin.await);
    // The controllers finish their current writes and release the Lease before the process
    // exits; returning from here would cut them off.
    if let Some(controllers) = controllers {
        if let Err(error) = controllers.task.await {
            tracing::error!(%error, "controller task failed");
        }
        controllers.runtime.shutdown_background();
    }
    https_outcome.and(admin_outcome)
}

fn server_outcome(
    joined: Result<std::io::Result<()>, tokio::task::JoinError>,
) -> Result<(), String> {
    match joined {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(format!("server: {e}")),
        Err(e) => Err(format!("server task: {e}")),
    }
}

struct CertPaths {
    cert: PathBuf,
    key: PathBuf,
    ca: PathBuf,
}

/// With a reachable cluster (the one of --kubeconfig, else the inferred one), checks (never
/// writes) the caBundle of the webhook configurations.
async fn spawn_external_bundle_check(
    args: &ServeArgs,
    certificate: &Arc<ReloadableCert>,
    metrics: &Arc<Metrics>,
    shutdown: &CancellationToken,
) {
    match watch::client(args.kubeconfig.as_deref()).await {
        Ok(client) => {
            crate::tls::rotation_job::spawn_bundle_check(
                client,
                CheckedConfigurations {
                    mutating: args.configurations.webhooks.mutating.clone(),
                    validating: args.configurations.webhooks.validating.clone(),
                    crds: args.configurations.crds.clone(),
                },
                certificate.clone(),
                metrics.clone(),
                args.ca_bundle_check_interval,
                shutdown.clone(),
            );
        }
        Err(error) => {
            tracing::info!(%error, "no cluster configuration; caBundle of the webhook configurations not checked");
        }
    }
}

/// The leader-elected controllers, beside the webhooks: every replica serves admission, the
/// Lease holder also drives rollouts and barriers. A controller failure is logged and fails
/// `/livez`: the webhooks keep serving until the kubelet restarts the process, which runs the
/// controllers again. `None` (and `/livez` failing) when they cannot start at all.
fn spawn_controllers(
    kube_config: kube::Config,
    config: crate::controller::ControllerConfig,
    readiness: Arc<Readiness>,
    shutdown: CancellationToken,
) -> Option<Controllers> {
    let stopped = |error: String| {
        tracing::error!(%error, "controllers stopped");
        readiness.set_controllers_stopped(error);
    };
    let runtime = match runtimes::controllers() {
        Ok(runtime) => runtime,
        Err(error) => {
            stopped(format!("controller runtime: {error}"));
            return None;
        }
    };
    // The election's thread starts from this one, at the process's priority, not the
    // controllers' lower one.
    let started = match crate::controller::start(kube_config, config) {
        Ok(started) => started,
        Err(error) => {
            stopped(error.to_string());
            return None;
        }
    };
    let task = runtime.spawn(async move {
        if let Err(error) = started.run(shutdown).await {
            tracing::error!(%error, "controllers stopped");
            readiness.set_controllers_stopped(error.to_string());
        }
    });
    Some(Controllers { task, runtime })
}

/// The controllers' task and the runtime it runs on.
struct Controllers {
    task: JoinHandle<()>,
    /// See [`runtimes::controllers`]; shut down once the task has ended.
    runtime: tokio::runtime::Runtime,
}

/// The controllers' configuration for `serve`: the Lease in the service namespace, the flags'
/// limits, the process's metrics.
fn controller_config(
    args: &ServeArgs,
    metrics: Arc<Metrics>,
) -> crate::controller::ControllerConfig {
    let identity = crate::controller::leader::default_identity();
    let mut config = crate::controller::ControllerConfig::new(&args.service_namespace, identity);
    config.metrics = metrics;
    config.limits = (&args.controller_limits).into();
    config
}

fn report_load(metrics: &Metrics, catalogue: &Catalogue, errors: &[LoadError]) {
    for error in errors {
        tracing::warn!(%error, "SidecarSet skipped");
    }
    metrics.set_sidecarsets_loaded(catalogue.sidecarsets().len());
    metrics.set_namespaces_known(catalogue.namespace_count());
    metrics.add_sidecarset_load_errors(errors.len());
    let names: Vec<&str> = catalogue.sidecarsets().iter().map(|s| s.name()).collect();
    tracing::info!(sidecarsets = ?names, skipped = errors.len(), "SidecarSet catalogue loaded");
}

fn report_snapshot(metrics: &Metrics, snapshot: &Snapshot) {
    for (name, message) in &snapshot.newly_refused {
        tracing::warn!(sidecarset = %name, reason = %message, "SidecarSet in the cluster skipped");
    }
    let catalogue = &snapshot.catalogue;
    metrics.set_sidecarsets_loaded(catalogue.sidecarsets().len());
    metrics.set_namespaces_known(catalogue.namespace_count());
    metrics.add_sidecarset_load_errors(snapshot.newly_refused.len());
    let reasons = RefusalReason::ALL.map(RefusalReason::metric_label);
    metrics.set_sidecarsets_not_served(&reasons, |label| {
        let refusals = snapshot.refusals.values();
        refusals
            .filter(|r| r.reason.metric_label() == label)
            .count()
    });
    tracing::debug!(
        sidecarsets = catalogue.sidecarsets().len(),
        namespaces = catalogue.namespace_count(),
        skipped = snapshot.refused,
        "SidecarSet catalogue updated from the cluster"
    );
}

/// `kruise-webhook node-agent`: the agent until SIGINT/SIGTERM, with its probes and metrics on
/// `--admin-listen` (a port in use stops the start).
pub async fn node_agent(args: NodeAgentArgs) -> Result<(), String> {
    let health = Arc::new(AgentHealth::new());
    let listener = TcpListener::bind(args.admin_listen)
        .await
        .map_err(|e| format!("binding {}: {e}", args.admin_listen))?;
    let shutdown = CancellationToken::new();
    let probes = Probes::new(
        Arc::new({
            let health = health.clone();
            move || health.encode()
        }),
        Arc::new({
            let health = health.clone();
            move || health.unmet_conditions()
        }),
    );
    let admin = tokio::spawn(crate::server::serve_http(
        listener,
        probe_router(probes),
        shutdown.clone(),
    ));
    let on_signal = shutdown.clone();
    tokio::spawn(async move {
        wait_for_signal().await;
        tracing::info!("shutting down");
        on_signal.cancel();
    });
    let outcome = crate::nodeagent::command::node_agent(&args, health, shutdown.clone()).await;
    shutdown.cancel();
    let served = server_outcome(admin.await);
    outcome.map_err(|e| e.to_string()).and(served)
}

/// `kruise-webhook inject`: the pod webhook on one file, offline; prints the patched pod.
pub fn inject_offline(args: &InjectArgs) -> Result<(), String> {
    let files = match &args.sidecarsets {
        Some(directory) => dir::read_directory(directory)
            .map_err(|e| format!("reading {}: {e}", directory.display()))?,
        None => dir::embedded_files(),
    };
    let (catalogue, errors) = dir::load(&files).into_catalogue();
    for error in &errors {
        eprintln!("skipped: {error}");
    }
    let input = crate::cli::read_input(&args.input)?;
    let (review, object) = review_for(&input)?;
    let (_, request) =
        crate::admission::review::decode_envelope(review.as_bytes()).map_err(|e| e.to_string())?;
    let now = jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    let suffix = crate::inject::launch_priority::random_name_suffix();
    let response = crate::admission::pod::mutate_pod(
        &request,
        &crate::admission::pod::PodMutation {
            catalogue: &catalogue,
            now: &now,
            name_suffix: &suffix,
            sort_sidecars_by_name: false,
            draw: &crate::inject::sidecar::random_draw,
        },
    );
    if !response.allowed {
        let message = response.status.map(|s| s.message).unwrap_or_default();
        return Err(format!("denied: {message}"));
    }
    let mut pod = object;
    if let Some(ops) = response.patch_operations() {
        json_patch::patch(&mut pod, &ops).map_err(|e| format!("applying the patch: {e}"))?;
    }
    let text = serde_json::to_string_pretty(&pod).map_err(|e| e.to_string())?;
    write_stdout(&format!("{text}\n"))?;
    Ok(())
}

/// `kruise-webhook explain`: prints the explanation ([`crate::explain`]).
pub fn explain(args: &ExplainArgs) -> Result<(), String> {
    let text = crate::explain::run(args)?;
    write_stdout(&text)?;
    Ok(())
}

/// `kruise-webhook plan`: prints the rollout's plan ([`crate::plan`]); whether it completes.
pub fn plan(args: &PlanArgs) -> Result<bool, String> {
    let outcome = crate::plan::run(args)?;
    write_stdout(&outcome.text)?;
    Ok(outcome.completes)
}

/// Writes `text` to standard output; `false` when the reader has closed it (`| head -1`): it has
/// what it wanted, and the command ends quietly instead of failing.
fn write_stdout(text: &str) -> Result<bool, String> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(false),
        Err(e) => Err(format!("writing to standard output: {e}")),
    }
}

/// An AdmissionReview for `input` (used as is when it already is one) and the raw pod in it.
fn review_for(input: &str) -> Result<(String, serde_json::Value), String> {
    let value: serde_json::Value =
        crate::yaml::from_str(input).map_err(|e| format!("input is neither JSON nor YAML: {e}"))?;
    if value.get("kind").and_then(|k| k.as_str()) == Some("AdmissionReview") {
        let object = value
            .pointer("/request/object")
            .cloned()
            .ok_or("the AdmissionReview has no request.object")?;
        return Ok((input.to_string(), object));
    }
    let namespace = value
        .pointer("/metadata/namespace")
        .and_then(|n| n.as_str())
        .unwrap_or("default");
    let review = crate::admission::review::pod_creation_review("offline", namespace, value.clone());
    Ok((review.to_string(), value))
}

/// `kruise-webhook crds`: writes (or prints) the generated CRDs.
pub fn crds(args: &CrdsArgs) -> Result<(), String> {
    match &args.output_dir {
        Some(dir) => {
            for name in crate::crds::write_all(dir)? {
                eprintln!("wrote {}", dir.join(name).display());
            }
        }
        None => {
            for crd in crate::crds::all() {
                let yaml = crate::crds::render(&crd).map_err(|e| e.to_string())?;
                if !write_stdout(&format!("---\n{yaml}"))? {
                    break;
                }
            }
        }
    }
    Ok(())
}
