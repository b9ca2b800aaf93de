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
    assert!(parse_duration("0").is_err());
    assert!(parse_duration_or_zero("99999999999999999999999h").is_err());
    assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
    assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
    assert!(parse_duration("-2s").is_err());
    assert!(parse_duration("-2").is_err());
}

#[test]
fn shutdown_delay_defaults_to_five_seconds_and_may_be_zero() {
    assert_eq!(
        serve_args(&[]).unwrap().shutdown_delay,
        Duration::from_secs(5)
    );
    for zero in ["0", "0s", "0ms"] {
        assert_eq!(
            serve_args(&["--shutdown-delay", zero])
                .unwrap()
                .shutdown_delay,
            Duration::ZERO
        );
    }
    assert_eq!(
        serve_args(&["--shutdown-delay", "1500ms"])
            .unwrap()
            .shutdown_delay,
        Duration::from_millis(1500)
    );
    let error = serve_args(&["--shutdown-delay=-1s"]).unwrap_err();
    assert!(error.contains("--shutdown-delay"), "{error}");
    assert!(serve_args(&["--shutdown-delay", "soon"]).is_err());
}

#[test]
fn max_connections_defaults_to_2048_and_must_be_positive() {
    assert_eq!(serve_args(&[]).unwrap().max_connections, 2048);
    assert_eq!(
        serve_args(&["--max-connections", "10"])
            .unwrap()
            .max_connections,
        10
    );
    assert!(serve_args(&["--max-connections", "0"]).is_err());
    assert!(serve_args(&["--max-connections", "-1"]).is_err());
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
    assert!(names.contains(&"kruise-webhook-service.kruise-system.svc".to_string()));
    assert!(names.contains(&"b.example".to_string()));
}

/// Without `--service-name`, the certificates of `serve` and of the `certs` job cover the
/// Service `deploy/` creates (and OpenKruise names), so that the apiserver reaches it.
#[test]
fn the_default_service_name_is_the_deployed_one() {
    let serve = serve_args(&[]).unwrap();
    assert_eq!(serve.service_name, "kruise-webhook-service");
    let Command::Certs(certs) = Cli::try_parse_from(["kruise-webhook", "certs"])
        .unwrap()
        .command
    else {
        panic!("certs expected")
    };
    assert_eq!(certs.service_name, "kruise-webhook-service");
    assert!(
        certs
            .certificate_dns_names()
            .contains(&"kruise-webhook-service.kruise-system.svc".to_string())
    );
}

#[test]
fn controller_limits_default_to_the_rate_the_docs_give_and_refuse_zero() {
    let limits = serve_args(&[]).unwrap().controller_limits;
    assert_eq!(
        (
            limits.kube_api_qps,
            limits.kube_api_burst,
            limits.concurrent_reconciles
        ),
        (500, 1000, 16)
    );
    let set = serve_args(&[
        "--kube-api-qps",
        "20",
        "--kube-api-burst",
        "30",
        "--concurrent-reconciles",
        "2",
    ])
    .unwrap()
    .controller_limits;
    assert_eq!(
        (
            set.kube_api_qps,
            set.kube_api_burst,
            set.concurrent_reconciles
        ),
        (20, 30, 2)
    );
    for zero in [
        "--kube-api-qps",
        "--kube-api-burst",
        "--concurrent-reconciles",
    ] {
        assert!(serve_args(&[zero, "0"]).is_err(), "{zero} 0 accepted");
    }
    let cli = Cli::try_parse_from(["kruise-webhook", "controller", "--kube-api-qps", "7"]).unwrap();
    let Command::Controller(args) = cli.command else {
        panic!("controller expected")
    };
    assert_eq!(args.limits.kube_api_qps, 7);
}

#[test]
fn the_node_agent_serves_its_probes_on_10221() {
    let cli = Cli::try_parse_from(["kruise-webhook", "node-agent", "--node-name", "n"]).unwrap();
    let Command::NodeAgent(args) = cli.command else {
        panic!("node-agent expected")
    };
    assert_eq!(args.admin_listen, "0.0.0.0:10221".parse().unwrap());
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
fn periods_accept_openkruise_format() {
    const DAY: u64 = 24 * 3600;
    assert_eq!(parse_period("90d"), Ok(Duration::from_secs(90 * DAY)));
    assert_eq!(parse_period("6m"), Ok(Duration::from_secs(180 * DAY)));
    assert_eq!(parse_period("1y"), Ok(Duration::from_secs(365 * DAY)));
    assert_eq!(parse_period("12h"), Ok(Duration::from_secs(12 * 3600)));
    assert_eq!(parse_period("30s"), Ok(Duration::from_secs(30)));
    assert_eq!(parse_period_or_zero("0s"), Ok(Duration::ZERO));
    for bad in ["0d", "90", "d", "", "-1d", "1.5y", "2w", "90dd", "é"] {
        assert!(parse_period(bad).is_err(), "{bad:?} accepted");
    }
}

#[test]
fn certs_defaults() {
    let cli = Cli::try_parse_from(["kruise-webhook", "certs", "--force-rotate-ca"]).unwrap();
    let Command::Certs(args) = cli.command else {
        panic!("certs expected")
    };
    assert_eq!(args.secret_name, "kruise-webhook-certs");
    assert_eq!(
        args.configurations.webhooks.mutating,
        vec!["kruise-mutating-webhook-configuration"]
    );
    assert_eq!(
        args.configurations.webhooks.validating,
        vec!["kruise-validating-webhook-configuration"]
    );
    assert!(args.force_rotate_ca && !args.force_renew);
    assert!(args.renew_before < args.cert_validity);
    assert!(args.ca_renew_before < args.ca_validity);
}

/// The `serve` flags (global ones included) but `--help` and `--version`.
fn serve_flags() -> Vec<clap::Arg> {
    use clap::CommandFactory;
    let cli = Cli::command();
    let serve = cli.find_subcommand("serve").expect("serve").clone();
    cli.get_arguments()
        .chain(serve.get_arguments())
        .filter(|arg| {
            arg.get_long()
                .is_some_and(|l| l != "help" && l != "version")
        })
        .cloned()
        .collect()
}

/// What docs/configuration.md says: every `serve` flag but `--kubeconfig` reads an environment variable.
#[test]
fn every_serve_flag_but_kubeconfig_reads_an_environment_variable() {
    let without: Vec<String> = serve_flags()
        .iter()
        .filter(|arg| arg.get_env().is_none())
        .filter_map(|arg| arg.get_long().map(str::to_string))
        .collect();
    assert_eq!(without, ["kubeconfig"]);
}

/// The configuration page's table (docs/configuration.md) names every `serve` flag.
#[test]
fn the_configuration_page_lists_every_serve_flag() {
    let page = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/configuration.md"
    ))
    .unwrap();
    let table = page.split("\n## ").next().unwrap();
    for arg in serve_flags() {
        let flag = format!("`--{}`", arg.get_long().unwrap());
        assert!(table.contains(&flag), "docs/configuration.md misses {flag}");
    }
}

#[test]
fn clap_definition_is_consistent() {
    use clap::CommandFactory;
    Cli::command().debug_assert();
}

#[test]
fn plan_reads_the_cluster_or_files_not_both() {
    let plan = |args: &[&str]| {
        Cli::try_parse_from(
            ["kruise-webhook", "plan", "changed.yaml"]
                .iter()
                .chain(args),
        )
        .map(|_| ())
        .map_err(|e| e.to_string())
    };
    assert_eq!(plan(&["--kubeconfig", "k"]), Ok(()));
    for flag in ["--current", "--pods", "--matched-pods"] {
        let error = plan(&["--kubeconfig", "k", flag, "1"]).unwrap_err();
        assert!(
            error.contains(flag) && error.contains("'--kubeconfig <KUBECONFIG>' cannot be used"),
            "{flag}: {error}"
        );
    }
}
