//! Command line: every flag also reads an environment variable, so a Deployment can set either.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

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
    /// Write the CustomResourceDefinitions generated from the Rust types.
    Crds(CrdsArgs),
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
        default_value = "kruise-webhook",
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
}

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
        let (service, namespace) = (&self.service_name, &self.service_namespace);
        let mut names = vec![
            "localhost".to_string(),
            service.clone(),
            format!("{service}.{namespace}"),
            format!("{service}.{namespace}.svc"),
            format!("{service}.{namespace}.svc.cluster.local"),
        ];
        names.extend(self.tls_dns_names.iter().cloned());
        names.dedup();
        names
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

/// `500ms`, `2s`, `1m`, or a bare number of seconds.
fn parse_duration(value: &str) -> Result<Duration, String> {
    let value = value.trim();
    let (number, unit) = value
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .map_or((value, "s"), |at| value.split_at(at));
    let amount: f64 = number
        .parse()
        .map_err(|_| format!("invalid duration {value:?}: expected e.g. 500ms, 2s, 1m"))?;
    let seconds = match unit {
        "ms" => amount / 1000.0,
        "s" => amount,
        "m" => amount * 60.0,
        "h" => amount * 3600.0,
        _ => {
            return Err(format!(
                "invalid duration unit in {value:?}: use ms, s, m or h"
            ));
        }
    };
    if !(seconds.is_finite() && seconds > 0.0) {
        return Err(format!("duration {value:?} must be positive"));
    }
    Ok(Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("3"), Ok(Duration::from_secs(3)));
        assert_eq!(parse_duration("1m"), Ok(Duration::from_secs(60)));
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("fast").is_err());
        assert!(parse_duration("2d").is_err());
    }

    #[test]
    fn defaults_and_certificate_names() {
        let cli = Cli::try_parse_from([
            "kruise-webhook",
            "serve",
            "--tls-dns-name",
            "a.example,b.example",
        ])
        .unwrap();
        let Command::Serve(args) = cli.command else {
            panic!("serve expected")
        };
        assert_eq!(args.listen, "0.0.0.0:9443".parse().unwrap());
        assert_eq!(args.admin_listen, "0.0.0.0:9090".parse().unwrap());
        assert_eq!(args.cert_dir, PathBuf::from("certs"));
        let names = args.certificate_dns_names();
        assert!(names.contains(&"kruise-webhook.kruise-system.svc".to_string()));
        assert!(names.contains(&"b.example".to_string()));
    }

    fn serve_args(args: &[&str]) -> Result<ServeArgs, String> {
        let cli = Cli::try_parse_from(["kruise-webhook", "serve"].iter().chain(args))
            .map_err(|e| e.to_string())?;
        match cli.command {
            Command::Serve(args) => Ok(*args),
            _ => Err("not serve".to_string()),
        }
    }

    #[test]
    fn source_is_explicit_or_implied_by_the_flags() {
        let kind = |args: &[&str]| serve_args(args).and_then(|a| a.source_kind());
        assert_eq!(kind(&[]), Ok(SourceKind::Embedded));
        assert_eq!(kind(&["--sidecarsets", "d"]), Ok(SourceKind::Dir));
        assert_eq!(kind(&["--kubeconfig", "k"]), Ok(SourceKind::Cluster));
        assert_eq!(kind(&["--source", "cluster"]), Ok(SourceKind::Cluster));
        assert!(kind(&["--source", "dir"]).is_err());
        assert!(kind(&["--source", "cluster", "--sidecarsets", "d"]).is_err());
        assert!(kind(&["--source", "embedded", "--kubeconfig", "k"]).is_err());
        assert!(kind(&["--kubeconfig", "k", "--sidecarsets", "d"]).is_err());
    }

    #[test]
    fn clap_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
