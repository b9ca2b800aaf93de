//! The command line as a shell script sees it: exit codes, standard output closed early, and a
//! `serve` that checks its flags and inputs before it writes anything.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

mod support;

fn kruise_webhook() -> Command {
    Command::new(env!("CARGO_BIN_EXE_kruise-webhook"))
}

/// The exit status, or `None` after `limit` (the process is then killed).
fn exit_within(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return Some(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn stderr_of(child: &mut Child) -> String {
    let mut text = String::new();
    if let Some(mut stderr) = child.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut stderr, &mut text);
    }
    text
}

/// `kruise-webhook crds | head -1`, `inject … | head -1`, `--help | head -1`: the reader closes
/// standard output early, and the command ends quietly (exit 0, nothing on standard error)
/// instead of panicking on the broken pipe.
#[test]
fn printing_commands_end_quietly_when_the_reader_goes() {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pod-web-log-agent.json");
    let commands: [&[&str]; 3] = [
        &["crds"],
        &["inject", fixture.to_str().unwrap()],
        &["--help"],
    ];
    for args in commands {
        let mut child = kruise_webhook()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start kruise-webhook");
        let stdout = child.stdout.take().unwrap();
        if args == ["crds"] {
            // Read one line, as `head -1` does; the rest (far more than a pipe holds) is still
            // being written when the reader goes.
            let mut first = String::new();
            BufReader::new(stdout).read_line(&mut first).unwrap();
            assert_eq!(first, "---\n");
        } else {
            // Closed before the command writes anything.
            drop(stdout);
        }
        let status = exit_within(&mut child, Duration::from_secs(30)).expect("exits");
        let stderr = stderr_of(&mut child);
        assert!(status.success(), "{args:?}: {status}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_eq!(stderr, "", "{args:?}");
    }
}

/// `serve` with a wrong flag or input exits 2 with a message naming it, before it has written
/// anything: no certificate directory appears.
#[test]
fn serve_checks_flags_and_inputs_before_writing_anything() {
    let work = tempfile::tempdir().expect("tempdir");
    let broken = work.path().join("broken");
    std::fs::create_dir(&broken).unwrap();
    std::fs::write(
        broken.join("sidecar.yaml"),
        "kind: SidecarSet\nspec: [unclosed\n",
    )
    .unwrap();
    let missing = work.path().join("missing");
    let cases: [(&[&str], &str); 5] = [
        (
            &["--sidecarsets", missing.to_str().unwrap()],
            "--sidecarsets",
        ),
        (&["--sidecarsets", broken.to_str().unwrap()], "sidecar.yaml"),
        (&["--kubeconfig", missing.to_str().unwrap()], "--kubeconfig"),
        (&["--log", "kruise_webhook=loudest"], "--log"),
        (&["--source", "dir"], "--sidecarsets"),
    ];
    for (flags, named) in cases {
        let certs = work.path().join("certs");
        let mut child = kruise_webhook()
            .args([
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--admin-listen",
                "127.0.0.1:0",
            ])
            .arg("--cert-dir")
            .arg(&certs)
            .args(["--shutdown-delay", "0"])
            .args(flags)
            .env_remove("KUBECONFIG")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start kruise-webhook");
        let status = exit_within(&mut child, Duration::from_secs(20));
        let stderr = stderr_of(&mut child);
        assert_eq!(
            status.and_then(|s| s.code()),
            Some(2),
            "{flags:?}: {status:?}: {stderr}"
        );
        assert!(stderr.contains(named), "{flags:?}: {stderr}");
        assert!(
            !certs.exists(),
            "{flags:?}: certificates written before the check"
        );
    }
}

/// Runs `kruise-webhook explain` with `args`, `stdin` on standard input; its exit status,
/// standard output and standard error.
fn explain(args: &[&str], stdin: &str) -> (ExitStatus, String, String) {
    support::run_with_stdin("explain", args, stdin)
}

const SHOP_POD: &str = "apiVersion: v1
kind: Pod
metadata:
  name: web-1
  namespace: shop
  labels: {app: web, mesh: enabled}
spec:
  containers:
    - name: app
      image: nginx:1.25
";

/// `explain` on the embedded examples: each SidecarSet's verdict, what it adds, the launch
/// order and the webhooks, as text and as JSON.
#[test]
fn explain_tells_what_the_pod_webhook_does() {
    let (status, out, err) = explain(&["-"], SHOP_POD);
    assert!(status.success(), "{status}: {err}");
    for line in [
        "Pod shop/web-1",
        "Admission: allowed, the pod is changed",
        "  proxy: injects",
        "      + container proxy (envoyproxy/envoy:v1.29.1)",
        "      + volume proxy-config",
        "  log-agent: injects",
        "  proxy: priority 100, waits for key p_100",
        "  passes mpod.kb.io (/mutate-pod: CREATE pods): namespaceSelector selects the namespace",
    ] {
        assert!(out.contains(line), "{line:?} missing from:\n{out}");
    }

    let pod = SHOP_POD.replace("mesh: enabled", "mesh: off");
    let (status, out, err) = explain(&["-", "-o", "json"], &pod);
    assert!(status.success(), "{status}: {err}");
    let report: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(report["sidecarsets"][0]["name"], "proxy");
    assert_eq!(report["sidecarsets"][0]["reason"], "PodNotSelected");
    assert_eq!(report["sidecarsets"][1]["injects"], true);
}

/// A workload's pod template, SidecarSets from a directory or one file.
#[test]
fn explain_reads_workloads_and_sidecarset_files() {
    let workload = "apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: web, namespace: shop}
spec:
  template:
    metadata:
      labels: {app: web}
    spec:
      containers: [{name: app, image: nginx}]
";
    let (status, out, err) = explain(&["-", "--sidecarsets", "deploy/examples"], workload);
    assert!(status.success(), "{status}: {err}");
    assert!(
        out.starts_with("CloneSet shop/web (its pod template)\n"),
        "{out}"
    );
    assert!(out.contains("  log-agent: injects"), "{out}");
    let (status, out, err) = explain(
        &["-", "--sidecarsets", "deploy/examples/proxy.yaml"],
        workload,
    );
    assert!(status.success(), "{status}: {err}");
    assert!(!out.contains("log-agent"), "{out}");
    assert!(
        out.contains("  proxy: does not inject: spec.selector does not select the pod's labels (PodNotSelected)"),
        "{out}"
    );
}

/// Bad input: a message naming what is wrong, a failing exit status, never a panic.
#[test]
fn explain_names_bad_input() {
    let cases: [(&[&str], &str, &str); 5] = [
        (
            &["-"],
            "kind: Service\napiVersion: v1\n",
            "kind: Unsupported value: \"Service\"",
        ),
        (
            &["-"],
            "apiVersion: v1\nkind: Pod\nspec: {containers: 1}\n",
            "spec.containers: invalid type",
        ),
        (
            &["/nonexistent/pod.yaml"],
            "",
            "reading /nonexistent/pod.yaml",
        ),
        (
            &["-", "--sidecarsets", "/nonexistent"],
            SHOP_POD,
            "reading /nonexistent",
        ),
        (
            &["pod/web-1", "--kubeconfig", "/dev/null"],
            "",
            "expected <kind>/<namespace>/<name>",
        ),
    ];
    for (args, stdin, expected) in cases {
        let (status, _, err) = explain(args, stdin);
        assert!(!status.success(), "{args:?}");
        assert!(err.contains(expected), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}
