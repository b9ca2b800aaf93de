//! The command line as a shell script sees it: exit codes, standard output closed early, and a
//! `serve` that checks its flags and inputs before it writes anything.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

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
