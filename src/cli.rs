//! Command line. Every `serve` flag but `--kubeconfig` also reads an environment variable, so a
//! Deployment can set either; the other commands' flags mostly do too (`--help` names them).

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// The webhook Service's name, as `deploy/service.yaml` and OpenKruise name it: the serving
/// certificate covers it by default.
pub const DEFAULT_SERVICE_NAME: &str = "kruise-webhook-service";

#[derive(Parser, Debug)]
#[command(
    name = "kruise-webhook",
    version,
    about = "OpenKruise-compatible SidecarSet injection and container launch priority webhooks"
)]
pub struct Cli {
    /// Log output format.
    #[arg(long, value_enum, default_value_t = LogFormat::Plain, env = "KRUISE_WEBHOOK_LOG_FORMAT", global = true)]
    pub log_format: LogFormat,
    /// Log filter (tracing EnvFilter syntax).
    #[arg(
        long,
        default_value = "info",
        env = "KRUISE_WEBHOOK_LOG",
        global = true
    )]
    pub log: String,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFormat {
    Plain,
    Json,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Serve the admission webhooks over HTTPS, with a plain-HTTP admin port.
    Serve(Box<ServeArgs>),
    /// Run one AdmissionReview file through the pod webhook offline and print the patched pod.
    Inject(InjectArgs),
    /// Explain what the pod webhook does to a pod (or a workload's pod template): for each
    /// SidecarSet whether it injects and why not, what it adds and from which revision, the
    /// container launch order, and which of the project's webhooks the namespace passes through.
    Explain(ExplainArgs),
    /// Plan a workload's or SidecarSet's rollout before applying it: the same planners run round
    /// by round over a simulated cluster; prints which pods each round updates, recreates,
    /// creates or deletes, what blocks, and whether it finishes (exit 0: it completes, 2: it
    /// would not, 1: bad input).
    Plan(PlanArgs),
    /// Write the CustomResourceDefinitions generated from the Rust types.
    Crds(CrdsArgs),
    /// Create or renew the CA and serving certificate in their Secret and publish the CA bundle in
    /// the webhook configurations (one run; used as install Job and daily CronJob).
    Certs(Box<CertsArgs>),
    /// Run the leader-elected controllers (SidecarSet rollout, launch-priority barriers) alone.
    Controller(ControllerArgs),
    /// Run the per-node agent: records the env values each container was started with and
    /// restarts a container in place when an in-place update changes a label or annotation its
    /// env reads (OpenKruise's kruise-daemon container-meta agent).
    NodeAgent(NodeAgentArgs),
    /// Report what switching a cluster from OpenKruise's kruise-manager would meet, and with
    /// --apply take the safe steps (manager scaled to zero, unserved webhook entries removed, CRDs
    /// replaced in place).
    Migrate(MigrateArgs),
}

#[derive(Args, Debug)]
pub struct MigrateArgs {
    /// Kubeconfig file (default: $KUBECONFIG or ~/.kube/config, else the in-cluster config).
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
    /// Take the steps, in order (without it the command only reads).
    #[arg(long)]
    pub apply: bool,
    /// Report format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = ReportFormat::Text)]
    pub output: ReportFormat,
    /// How long --apply waits for the pods of OpenKruise's manager to be gone once it is scaled
    /// to zero (a pod still terminating may still act).
    #[arg(long, default_value = "120s", value_parser = parse_period)]
    pub manager_timeout: Duration,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportFormat {
    Text,
    Json,
}

#[derive(Args, Debug)]
pub struct NodeAgentArgs {
    /// Kubeconfig file (default: $KUBECONFIG or ~/.kube/config, else the in-cluster config).
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
    /// The node whose pods this agent looks after (a DaemonSet passes `spec.nodeName`).
    #[arg(long, env = "NODE_NAME")]
    pub node_name: String,
    /// The container runtime's CRI socket.
    #[arg(
        long,
        env = "KRUISE_NODE_AGENT_CRI_SOCKET",
        default_value = "/run/containerd/containerd.sock"
    )]
    pub cri_socket: PathBuf,
    /// Plain-HTTP address of the agent's /livez, /readyz and /metrics.
    #[arg(
        long,
        default_value = "0.0.0.0:10221",
        env = "KRUISE_NODE_AGENT_ADMIN_LISTEN"
    )]
    pub admin_listen: SocketAddr,
}

#[derive(Args, Debug)]
pub struct ControllerArgs {
    /// Kubeconfig file (default: $KUBECONFIG or ~/.kube/config, else the in-cluster config).
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
    /// Namespace of the leader-election Lease.
    #[arg(long, default_value = "kruise-system", env = "POD_NAMESPACE")]
    pub namespace: String,
    /// Leader-election identity (default: pod name or hostname plus a random suffix).
    #[arg(long, env = "KRUISE_CONTROLLER_IDENTITY")]
    pub identity: Option<String>,
    /// Do not run the SidecarSet rollout controller.
    #[arg(long)]
    pub no_sidecarsets: bool,
    /// Do not run the container launch-priority barrier controller.
    #[arg(long)]
    pub no_barriers: bool,
    /// Do not run the CloneSet controller.
    #[arg(long)]
    pub no_clonesets: bool,
    /// Do not run the Advanced StatefulSet controller.
    #[arg(long)]
    pub no_statefulsets: bool,
    /// Do not run the Advanced DaemonSet controller.
    #[arg(long)]
    pub no_daemonsets: bool,
    #[command(flatten)]
    pub limits: ControllerLimitArgs,
}

/// Requests per second all controllers of a process may send together, sustained.
pub const DEFAULT_KUBE_API_QPS: u32 = 500;
/// Requests they may send at once above that rate.
pub const DEFAULT_KUBE_API_BURST: u32 = 1000;
/// Reconciles each controller runs at once.
pub const DEFAULT_CONCURRENT_RECONCILES: u16 = 16;

/// What the controllers may ask of the apiserver (`serve` and `controller`).
#[derive(Args, Debug, Clone, Copy)]
pub struct ControllerLimitArgs {
    /// Requests per second that all controllers of this process together may send to the
    /// apiserver, sustained (client-go's QPS; one token bucket for every controller).
    #[arg(long, default_value_t = DEFAULT_KUBE_API_QPS, value_parser = clap::value_parser!(u32).range(1..), env = "KRUISE_WEBHOOK_KUBE_API_QPS")]
    pub kube_api_qps: u32,
    /// Requests the controllers may send at once above that rate (client-go's burst).
    #[arg(long, default_value_t = DEFAULT_KUBE_API_BURST, value_parser = clap::value_parser!(u32).range(1..), env = "KRUISE_WEBHOOK_KUBE_API_BURST")]
    pub kube_api_burst: u32,
    /// Reconciles each controller (SidecarSet, CloneSet, barriers) runs at once.
    #[arg(long, default_value_t = DEFAULT_CONCURRENT_RECONCILES, value_parser = clap::value_parser!(u16).range(1..), env = "KRUISE_WEBHOOK_CONCURRENT_RECONCILES")]
    pub concurrent_reconciles: u16,
}

/// The project's Mutating/ValidatingWebhookConfigurations and CRDs, by name: `certs` writes their
/// caBundle (a CRD's only when it converts through a webhook) and removes the configurations'
/// entries this server does not serve, `serve --external-certs` checks the caBundle.
#[derive(Args, Debug, Clone)]
pub struct WebhookConfigurationNames {
    #[command(flatten)]
    pub webhooks: WebhookConfigurations,
    /// CRDs whose conversion webhook, when they have one, is this server.
    #[arg(
        long = "conversion-crd",
        default_value = DEFAULT_CONVERSION_CRDS,
        env = "KRUISE_WEBHOOK_CONVERSION_CRDS",
        value_delimiter = ','
    )]
    pub crds: Vec<String>,
}

/// The project's Mutating/ValidatingWebhookConfigurations, by name.
#[derive(Args, Debug, Clone)]
pub struct WebhookConfigurations {
    /// MutatingWebhookConfigurations of this project.
    #[arg(
        long = "mutating-webhook-configuration",
        default_value = "kruise-mutating-webhook-configuration",
        env = "KRUISE_WEBHOOK_MUTATING_CONFIGURATIONS",
        value_delimiter = ','
    )]
    pub mutating: Vec<String>,
    /// ValidatingWebhookConfigurations of this project.
    #[arg(
        long = "validating-webhook-configuration",
        default_value = "kruise-validating-webhook-configuration",
        env = "KRUISE_WEBHOOK_VALIDATING_CONFIGURATIONS",
        value_delimiter = ','
    )]
    pub validating: Vec<String>,
}

/// The CRDs of this project (`deploy/crds/`), whose conversion webhook is `/convert`.
pub const DEFAULT_CONVERSION_CRDS: &str = "clonesets.apps.kruise.io,daemonsets.apps.kruise.io,sidecarsets.apps.kruise.io,statefulsets.apps.kruise.io";

#[derive(Args, Debug)]
pub struct CertsArgs {
    /// Namespace of the certificate Secret.
    #[arg(long, default_value = "kruise-system", env = "POD_NAMESPACE")]
    pub namespace: String,
    /// Name of the certificate Secret.
    #[arg(
        long,
        default_value = "kruise-webhook-certs",
        env = "KRUISE_WEBHOOK_SECRET_NAME"
    )]
    pub secret_name: String,
    /// Service name: the certificate covers <service>, <service>.<namespace>,
    /// <service>.<namespace>.svc and <service>.<namespace>.svc.cluster.local.
    #[arg(
        long,
        default_value = DEFAULT_SERVICE_NAME,
        env = "KRUISE_WEBHOOK_SERVICE_NAME"
    )]
    pub service_name: String,
    /// Extra DNS names for the serving certificate (localhost and 127.0.0.1 are always included).
    #[arg(
        long = "tls-dns-name",
        env = "KRUISE_WEBHOOK_TLS_DNS_NAMES",
        value_delimiter = ','
    )]
    pub tls_dns_names: Vec<String>,
    /// Extra IP addresses for the serving certificate.
    #[arg(long = "tls-ip", env = "KRUISE_WEBHOOK_TLS_IPS", value_delimiter = ',')]
    pub tls_ips: Vec<IpAddr>,
    /// The webhook configurations whose caBundle this job owns.
    #[command(flatten)]
    pub configurations: WebhookConfigurationNames,
    /// Lifetime of a new serving certificate (`90d`, `6m` = 180 days, `1y` = 365 days, `12h`, `30s`).
    #[arg(long, default_value = "1y", value_parser = parse_period, env = "KRUISE_WEBHOOK_CERT_VALIDITY")]
    pub cert_validity: Duration,
    /// Renew the serving certificate when less than this is left.
    #[arg(long, default_value = "90d", value_parser = parse_period, env = "CERTS_RENEW_BEFORE")]
    pub renew_before: Duration,
    /// Lifetime of a new CA.
    #[arg(long, default_value = "10y", value_parser = parse_period, env = "KRUISE_WEBHOOK_CA_VALIDITY")]
    pub ca_validity: Duration,
    /// Replace the CA when less than this (or less than the certificate validity) is left.
    #[arg(long, default_value = "2y", value_parser = parse_period, env = "KRUISE_WEBHOOK_CA_RENEW_BEFORE")]
    pub ca_renew_before: Duration,
    /// How long a replaced CA stays in the caBundle after its successor was created (time for
    /// every server to pick up the new certificate). `0s` drops it on the next run.
    #[arg(long, default_value = "1h", value_parser = parse_period_or_zero, env = "KRUISE_WEBHOOK_CA_OVERLAP")]
    pub ca_overlap: Duration,
    /// Issue a new serving certificate even if the current one is good.
    #[arg(long)]
    pub force_renew: bool,
    /// Replace the CA (and the serving certificate) even if it is good; the old CA stays in the
    /// caBundle for the overlap.
    #[arg(long)]
    pub force_rotate_ca: bool,
}

impl CertsArgs {
    /// The DNS names the serving certificate must cover.
    pub fn certificate_dns_names(&self) -> Vec<String> {
        service_dns_names(&self.service_name, &self.namespace, &self.tls_dns_names)
    }
}

fn service_dns_names(service: &str, namespace: &str, extra: &[String]) -> Vec<String> {
    let mut names = vec![
        "localhost".to_string(),
        service.to_owned(),
        format!("{service}.{namespace}"),
        format!("{service}.{namespace}.svc"),
        format!("{service}.{namespace}.svc.cluster.local"),
    ];
    names.extend(extra.iter().cloned());
    names.dedup();
    names
}

/// OpenKruise's `CERTS_RENEW_BEFORE` format — an integer and `d` (days), `m` (30-day months) or
/// `y` (365-day years) — plus `h` and `s` for short test lifetimes. Must be positive.
fn parse_period(value: &str) -> Result<Duration, String> {
    match parse_period_or_zero(value)? {
        Duration::ZERO => Err(format!("period {value:?} must be positive")),
        period => Ok(period),
    }
}

fn parse_period_or_zero(value: &str) -> Result<Duration, String> {
    let value = value.trim();
    let split = value.len().saturating_sub(1);
    let at = if value.is_char_boundary(split) {
        split
    } else {
        0
    };
    let (number, unit) = value.split_at(at);
    let amount: u64 = number
        .parse()
        .map_err(|_| format!("invalid period {value:?}: expected e.g. 90d, 6m, 1y, 12h"))?;
    let unit_seconds: u64 = match unit {
        "s" => 1,
        "h" => 3600,
        "d" => 24 * 3600,
        "m" => 30 * 24 * 3600,
        "y" => 365 * 24 * 3600,
        _ => {
            return Err(format!(
                "invalid period unit in {value:?}: use d (days), m (30-day months), y (365-day years), h or s"
            ));
        }
    };
    amount
        .checked_mul(unit_seconds)
        .map(Duration::from_secs)
        .ok_or_else(|| format!("period {value:?} is too long"))
}

#[derive(Args, Debug)]
pub struct CrdsArgs {
    /// Directory to write `<plural>.apps.kruise.io.yaml` files into; without it, print them.
    #[arg(long)]
    pub output_dir: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// HTTPS address of the admission webhooks.
    #[arg(long, default_value = "0.0.0.0:9443", env = "KRUISE_WEBHOOK_LISTEN")]
    pub listen: SocketAddr,
    /// Plain-HTTP address of /livez, /readyz and /metrics.
    #[arg(
        long,
        default_value = "0.0.0.0:9090",
        env = "KRUISE_WEBHOOK_ADMIN_LISTEN"
    )]
    pub admin_listen: SocketAddr,
    /// Directory of tls.crt/tls.key (and ca.crt). Generated there when missing or no longer valid.
    #[arg(long, default_value = "certs", env = "KRUISE_WEBHOOK_CERT_DIR")]
    pub cert_dir: PathBuf,
    /// Extra DNS names for the serving certificate (localhost and 127.0.0.1 are always included).
    #[arg(
        long = "tls-dns-name",
        env = "KRUISE_WEBHOOK_TLS_DNS_NAMES",
        value_delimiter = ','
    )]
    pub tls_dns_names: Vec<String>,
    /// Extra IP addresses for the serving certificate.
    #[arg(long = "tls-ip", env = "KRUISE_WEBHOOK_TLS_IPS", value_delimiter = ',')]
    pub tls_ips: Vec<IpAddr>,
    /// Service name: adds <service>, <service>.<namespace>, <service>.<namespace>.svc and
    /// <service>.<namespace>.svc.cluster.local to the certificate.
    #[arg(
        long,
        default_value = DEFAULT_SERVICE_NAME,
        env = "KRUISE_WEBHOOK_SERVICE_NAME"
    )]
    pub service_name: String,
    /// Namespace of the service.
    #[arg(long, default_value = "kruise-system", env = "POD_NAMESPACE")]
    pub service_namespace: String,
    /// Where SidecarSets and Namespaces come from. Default: `cluster` when --kubeconfig is given,
    /// `dir` when --sidecarsets is given, `embedded` otherwise. `cluster` without --kubeconfig
    /// uses KUBECONFIG, ~/.kube/config, then the in-cluster service account.
    #[arg(long, value_enum, env = "KRUISE_WEBHOOK_SOURCE")]
    pub source: Option<SourceKind>,
    /// Directory of SidecarSet (and Namespace) YAML/JSON files, re-read when it changes.
    #[arg(
        long,
        env = "KRUISE_WEBHOOK_SIDECARSETS",
        conflicts_with = "kubeconfig"
    )]
    pub sidecarsets: Option<PathBuf>,
    /// Certificates are managed outside this process (the `certs` job's Secret, or cert-manager):
    /// serve tls.crt/tls.key from --cert-dir as mounted, never generate or write anything. With a
    /// reachable cluster, the caBundle of the webhook configurations is checked against the served
    /// certificate (log and metric on mismatch, never written).
    #[arg(long, env = "KRUISE_WEBHOOK_EXTERNAL_CERTS")]
    pub external_certs: bool,
    /// The webhook configurations whose caBundle is checked in --external-certs mode.
    #[command(flatten)]
    pub configurations: WebhookConfigurationNames,
    /// How often the caBundle is checked in --external-certs mode.
    #[arg(long, default_value = "1m", value_parser = parse_duration, env = "KRUISE_WEBHOOK_CA_BUNDLE_CHECK_INTERVAL")]
    pub ca_bundle_check_interval: Duration,
    /// Kubeconfig of the cluster to watch SidecarSets and Namespaces in (implies --source
    /// cluster). Deliberately not read from KUBECONFIG: a developer shell's KUBECONFIG must not
    /// turn the laptop command into cluster mode; --source cluster reads it.
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
    /// How often the SidecarSet directory and the certificate files are checked for changes.
    #[arg(long, default_value = "2s", value_parser = parse_duration, env = "KRUISE_WEBHOOK_RELOAD_INTERVAL")]
    pub reload_interval: Duration,
    /// OpenKruise's EnableSortSidecarContainerByName gate: order injected containers by name.
    #[arg(long, env = "KRUISE_WEBHOOK_SORT_SIDECARS_BY_NAME")]
    pub sort_sidecars_by_name: bool,
    /// Also serve POST /baseline-allow, which only decodes a review and allows it (benchmarks).
    #[arg(long, env = "KRUISE_WEBHOOK_BASELINE_ROUTE")]
    pub baseline_route: bool,
    /// In cluster mode, do not run the controllers (SidecarSet rollout, launch-priority barriers).
    /// By default every replica competes for the Lease and the holder runs them.
    #[arg(long, env = "KRUISE_WEBHOOK_NO_CONTROLLER")]
    pub no_controller: bool,
    #[command(flatten)]
    pub controller_limits: ControllerLimitArgs,
    /// After SIGTERM, /readyz fails at once but the webhook port keeps accepting and serving for
    /// this long, while endpoints stop routing to the pod; then connections are drained. `0` for
    /// tests and laptops.
    #[arg(long, default_value = "5s", value_parser = parse_duration_or_zero, env = "KRUISE_WEBHOOK_SHUTDOWN_DELAY")]
    pub shutdown_delay: Duration,
    /// Connections the webhook port serves at once. At the cap it stops accepting: new
    /// connections wait in the listen queue until one closes; none being served is cut.
    #[arg(long, default_value_t = DEFAULT_MAX_CONNECTIONS, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..), env = "KRUISE_WEBHOOK_MAX_CONNECTIONS")]
    pub max_connections: usize,
}

/// Default of `serve --max-connections`: what 128 MiB of memory holds with room to spare (each
/// TLS connection costs tens of KiB; docs/install.md).
pub const DEFAULT_MAX_CONNECTIONS: usize = 2048;

/// Where `serve` gets SidecarSets and Namespaces.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceKind {
    /// The example SidecarSets compiled into the binary.
    Embedded,
    /// The --sidecarsets directory, re-read when it changes.
    Dir,
    /// The apiserver: SidecarSets and Namespaces are watched.
    Cluster,
}

impl ServeArgs {
    /// The source asked for, explicitly or implied by --kubeconfig / --sidecarsets.
    pub fn source_kind(&self) -> Result<SourceKind, String> {
        let implied = if self.kubeconfig.is_some() {
            SourceKind::Cluster
        } else if self.sidecarsets.is_some() {
            SourceKind::Dir
        } else {
            SourceKind::Embedded
        };
        let kind = self.source.unwrap_or(implied);
        match kind {
            SourceKind::Dir if self.sidecarsets.is_none() => {
                Err("--source dir needs --sidecarsets <directory>".to_string())
            }
            SourceKind::Embedded | SourceKind::Cluster if self.sidecarsets.is_some() => Err(
                format!("--sidecarsets is only read with --source dir, not with {kind:?}"),
            ),
            SourceKind::Embedded | SourceKind::Dir if self.kubeconfig.is_some() => Err(format!(
                "--kubeconfig is only read with --source cluster, not with {kind:?}"
            )),
            _ => Ok(kind),
        }
    }

    /// The DNS names the serving certificate must cover.
    pub fn certificate_dns_names(&self) -> Vec<String> {
        service_dns_names(
            &self.service_name,
            &self.service_namespace,
            &self.tls_dns_names,
        )
    }
}

#[derive(Args, Debug)]
pub struct InjectArgs {
    /// Directory of SidecarSet files (default: the embedded examples).
    #[arg(long)]
    pub sidecarsets: Option<PathBuf>,
    /// An AdmissionReview JSON file, or a bare Pod (JSON or YAML); `-` reads standard input.
    pub input: PathBuf,
}

#[derive(Args, Debug)]
pub struct ExplainArgs {
    /// A Pod, an AdmissionReview of one, or a workload whose pod template is explained
    /// (Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, CronJob; CloneSet, Advanced
    /// StatefulSet and DaemonSet), as a YAML or JSON file, `-` for standard input. With
    /// --kubeconfig: `<kind>/<namespace>/<name>` read from the cluster (pod, deployment,
    /// replicaset, statefulset, daemonset, job, cloneset, advancedstatefulset, advanceddaemonset).
    pub target: String,
    /// SidecarSet (and Namespace) files: a directory or one file (default: the embedded
    /// examples, as `serve` uses them).
    #[arg(long, conflicts_with = "kubeconfig")]
    pub sidecarsets: Option<PathBuf>,
    /// Read the target, the SidecarSets, their revisions, the Namespaces and the webhook
    /// configurations from this cluster.
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
    /// With --kubeconfig: the namespace of the SidecarSet revisions (the manager's).
    #[arg(long, default_value = "kruise-system", env = "POD_NAMESPACE")]
    pub namespace: String,
    /// With --kubeconfig: the project's webhook configurations, whose namespaceSelector is
    /// matched.
    #[command(flatten)]
    pub configurations: WebhookConfigurations,
    /// OpenKruise's EnableSortSidecarContainerByName gate, as `serve` runs with it.
    #[arg(long, env = "KRUISE_WEBHOOK_SORT_SIDECARS_BY_NAME")]
    pub sort_sidecars_by_name: bool,
    /// Output: text for people, or JSON for scripts.
    #[arg(short = 'o', long, value_enum, default_value_t = OutputFormat::Human)]
    pub output: OutputFormat,
}

#[derive(Args, Debug)]
pub struct PlanArgs {
    /// The changed CloneSet, Advanced StatefulSet, Advanced DaemonSet or SidecarSet (YAML or
    /// JSON), `-` for standard input. With --kubeconfig, also `<kind>/<namespace>/<name>`
    /// (`sidecarset/<name>`): the live object itself, the rest of a rollout under way.
    pub target: PathBuf,
    /// The object as it is now; without it a workload starts with no pods.
    #[arg(long, conflicts_with = "kubeconfig")]
    pub current: Option<PathBuf>,
    /// The object's pods (and a workload's ControllerRevisions): a file or a directory of
    /// YAML/JSON files. Without them the current object's pods are made, all Ready at its
    /// revision.
    #[arg(long, conflicts_with = "kubeconfig")]
    pub pods: Option<PathBuf>,
    /// A SidecarSet without --pods: how many pods the current SidecarSet has injected (default:
    /// its status.matchedPods).
    #[arg(long, conflicts_with = "kubeconfig")]
    pub matched_pods: Option<usize>,
    /// A DaemonSet: the Nodes its pods may run on, a file or a directory of YAML/JSON files
    /// (with --kubeconfig, the cluster's Nodes).
    #[arg(long, conflicts_with = "kubeconfig")]
    pub nodes: Option<PathBuf>,
    /// A DaemonSet without --nodes: how many plain Ready, schedulable Nodes there are (named
    /// node-0, node-1, …; default 3).
    #[arg(long, conflicts_with = "kubeconfig")]
    pub node_count: Option<usize>,
    /// Read the object as it is now, its pods and its ControllerRevisions from this cluster
    /// (the object the changed one names: its kind, namespace and name).
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
    /// A pod the simulated kubelet never makes ready (repeatable): what if it does not come up.
    #[arg(long = "never-ready", value_name = "POD")]
    pub never_ready: Vec<String>,
    /// Reconciles to simulate before calling the rollout stuck.
    #[arg(long, default_value_t = 500)]
    pub max_rounds: usize,
    /// Output: text for people, or JSON for scripts.
    #[arg(short = 'o', long, value_enum, default_value_t = OutputFormat::Human)]
    pub output: OutputFormat,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    #[value(alias = "text")]
    Human,
    Json,
}

/// A kind a command-line target may name (`explain`, `plan` with --kubeconfig).
#[derive(Debug, PartialEq, Eq)]
pub struct TargetKind {
    /// The names a target may use, the first one shown in messages.
    pub names: &'static [&'static str],
    pub group: &'static str,
    pub version: &'static str,
    pub kind: &'static str,
    pub plural: &'static str,
    /// Namespaced: `<kind>/<namespace>/<name>`; cluster-scoped: `<kind>/<name>`.
    pub namespaced: bool,
}

impl TargetKind {
    /// The object of this kind in `namespace` (empty: cluster-scoped) named `name`.
    pub fn target(&self, namespace: &str, name: &str) -> Target {
        Target {
            group: self.group,
            version: self.version,
            kind: self.kind,
            plural: self.plural,
            namespace: namespace.to_string(),
            name: name.to_string(),
        }
    }
}

/// A CloneSet, as `explain` and `plan` name it.
pub const CLONESET_TARGET: TargetKind = TargetKind {
    names: &["cloneset", "clonesets", "clone"],
    group: crate::api::keys::GROUP,
    version: "v1alpha1",
    kind: "CloneSet",
    plural: "clonesets",
    namespaced: true,
};

/// An Advanced StatefulSet, as `explain` and `plan` name it.
pub const ADVANCED_STATEFULSET_TARGET: TargetKind = TargetKind {
    names: &["advancedstatefulset", "asts"],
    group: crate::api::keys::GROUP,
    version: "v1beta1",
    kind: "StatefulSet",
    plural: "statefulsets",
    namespaced: true,
};

/// An Advanced DaemonSet, as `explain` and `plan` name it.
pub const ADVANCED_DAEMONSET_TARGET: TargetKind = TargetKind {
    names: &["advanceddaemonset", "ads"],
    group: crate::api::keys::GROUP,
    version: "v1beta1",
    kind: "DaemonSet",
    plural: "daemonsets",
    namespaced: true,
};

/// The object a target names: its kind's API resource, namespace and name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub group: &'static str,
    pub version: &'static str,
    pub kind: &'static str,
    pub plural: &'static str,
    /// Empty for a cluster-scoped kind.
    pub namespace: String,
    pub name: String,
}

impl Target {
    /// `CloneSet default/cart`, `SidecarSet proxy`: the object as messages name it.
    pub fn shown(&self) -> String {
        if self.namespace.is_empty() {
            format!("{} {}", self.kind, self.name)
        } else {
            format!("{} {}/{}", self.kind, self.namespace, self.name)
        }
    }
}

/// Parses `<kind>/<namespace>/<name>` (`<kind>/<name>` for a cluster-scoped kind) against `kinds`.
pub fn parse_target(target: &str, kinds: &[TargetKind]) -> Result<Target, String> {
    let expected = || {
        let shown = |namespaced: bool| {
            kinds
                .iter()
                .filter(|k| k.namespaced == namespaced)
                .map(|k| k.names[0])
                .collect::<Vec<_>>()
                .join(", ")
        };
        let (namespaced, cluster) = (shown(true), shown(false));
        let mut text = format!(
            "target {target:?}: expected <kind>/<namespace>/<name> with --kubeconfig (kinds: {namespaced})"
        );
        if !cluster.is_empty() {
            text.push_str(&format!(", or <kind>/<name> (kinds: {cluster})"));
        }
        text
    };
    let parts: Vec<&str> = target.split('/').collect();
    if !(2..=3).contains(&parts.len()) {
        return Err(expected());
    }
    let lower = parts[0].to_ascii_lowercase();
    let Some(kind) = kinds.iter().find(|k| k.names.contains(&lower.as_str())) else {
        return Err(format!(
            "target {target:?}: unknown kind {:?} (kinds: {})",
            parts[0],
            kinds
                .iter()
                .map(|k| k.names[0])
                .collect::<Vec<_>>()
                .join(", ")
        ));
    };
    let (namespace, name) = match (kind.namespaced, &parts[1..]) {
        (true, [namespace, name]) => (*namespace, *name),
        (false, [name]) => ("", *name),
        _ => return Err(expected()),
    };
    if name.is_empty() || (kind.namespaced && namespace.is_empty()) {
        return Err(format!(
            "target {target:?}: the namespace and the name must not be empty"
        ));
    }
    Ok(kind.target(namespace, name))
}

/// The text of an input named on the command line: a file, or `-` for standard input.
pub fn read_input(path: &std::path::Path) -> Result<String, String> {
    if path == std::path::Path::new("-") {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
            .map_err(|e| format!("reading standard input: {e}"))?;
        Ok(text)
    } else {
        std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))
    }
}

/// `500ms`, `2s`, `1m`, or a bare number of seconds; must be positive.
fn parse_duration(value: &str) -> Result<Duration, String> {
    match parse_duration_or_zero(value)? {
        Duration::ZERO => Err(format!("duration {:?} must be positive", value.trim())),
        duration => Ok(duration),
    }
}

/// Like [`parse_duration`], and `0` (with or without a unit) is allowed. Units are jiff's
/// (`ms`, `s`, `m`, `h`, and combinations such as `1m30s`); days and longer are refused, since a
/// day is not a fixed length.
fn parse_duration_or_zero(value: &str) -> Result<Duration, String> {
    let value = value.trim();
    // A bare number counts as seconds, as it did before units were given.
    if let Ok(seconds) = value.parse::<f64>() {
        return Duration::try_from_secs_f64(seconds)
            .map_err(|_| format!("invalid duration {value:?}: negative or too long"));
    }
    let duration: jiff::SignedDuration = value
        .parse()
        .map_err(|e| format!("invalid duration {value:?} (expected e.g. 500ms, 2s, 1m): {e}"))?;
    Duration::try_from(duration).map_err(|_| format!("invalid duration {value:?}: negative"))
}

#[cfg(test)]
mod tests;
