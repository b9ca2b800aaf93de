//! What the integration tests share with the unit tests: the SidecarSet test builder.

// The builder names the API types as `super::…`.
use kruise_webhook::api::*;

// Each test crate uses only part of the builder.
#[allow(dead_code)]
#[path = "../../src/api/sidecarset_builder.rs"]
mod sidecarset_builder;

#[allow(unused_imports)] // each test crate uses only part of this module
pub use sidecarset_builder::SidecarSetBuilder;

/// Runs the built `kruise-webhook <subcommand> <args>` from the repository's root with `stdin` on
/// standard input: its exit status, standard output and standard error.
#[allow(dead_code)] // each test crate uses only part of this module
pub fn run_with_stdin(
    subcommand: &str,
    args: &[&str],
    stdin: &str,
) -> (std::process::ExitStatus, String, String) {
    use std::io::Write as _;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_kruise-webhook"))
        .arg(subcommand)
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start kruise-webhook");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let output = child.wait_with_output().expect("wait");
    (
        output.status,
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}
