//! What the image ships: the `dist` profile's binary, stripped by `scripts/strip-binary.sh`, with
//! its symbols and debug information kept apart for profiles (Dockerfile target `debug-symbols`).

use std::path::Path;
use std::process::Command;

fn repository() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `readelf` on `file` with `args`, its standard output.
fn readelf(args: &[&str], file: &Path) -> String {
    let output = Command::new("readelf")
        .args(args)
        .arg(file)
        .output()
        .expect("readelf (binutils) runs");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The names of the sections of `file`.
fn sections(file: &Path) -> Vec<String> {
    readelf(&["--section-headers", "--wide"], file)
        .lines()
        .filter_map(|line| {
            let (_, rest) = line.split_once(']')?;
            rest.split_whitespace().next().map(str::to_string)
        })
        .collect()
}

fn build_id(file: &Path) -> Option<String> {
    readelf(&["--notes"], file)
        .lines()
        .find_map(|line| line.trim().strip_prefix("Build ID: ").map(str::to_string))
}

/// Strips this build's binary as the Dockerfile strips the `dist` one: the result runs, has no
/// symbol table and no debug section, names its debug file; the debug file has the symbols and
/// the same build id.
#[test]
fn the_shipped_binary_is_stripped_and_its_symbols_kept_apart() {
    let work = tempfile::tempdir().expect("tempdir");
    let built = Path::new(env!("CARGO_BIN_EXE_kruise-webhook"));
    let shipped = work.path().join("kruise-webhook");
    let symbols = work.path().join("kruise-webhook.debug");
    let status = Command::new(repository().join("scripts/strip-binary.sh"))
        .arg(built)
        .arg(&shipped)
        .arg(&symbols)
        .status()
        .expect("scripts/strip-binary.sh runs");
    assert!(status.success(), "{status}");

    let stripped = sections(&shipped);
    assert!(stripped.iter().any(|s| s == ".text"), "{stripped:?}");
    let left: Vec<&String> = stripped
        .iter()
        .filter(|s| *s == ".symtab" || s.starts_with(".debug_info") || s.starts_with(".debug_line"))
        .collect();
    assert!(left.is_empty(), "still in the shipped binary: {left:?}");
    assert!(
        readelf(&["--string-dump=.gnu_debuglink"], &shipped).contains("kruise-webhook.debug"),
        "the shipped binary does not name its debug file"
    );
    assert!(sections(&symbols).iter().any(|s| s == ".symtab"));
    assert_eq!(build_id(&shipped), build_id(&symbols));
    let size = |file: &Path| std::fs::metadata(file).unwrap().len();
    assert!(size(&shipped) < size(built));

    let version = Command::new(&shipped).arg("--version").output().unwrap();
    assert!(version.status.success());
    assert!(String::from_utf8_lossy(&version.stdout).starts_with("kruise-webhook "));
}

/// The Dockerfile builds the `dist` profile, strips it with the same script, ships the stripped
/// binary in its final stage and offers the symbols as a stage of their own.
#[test]
fn the_dockerfile_ships_the_stripped_dist_binary() {
    let dockerfile = std::fs::read_to_string(repository().join("Dockerfile")).unwrap();
    assert!(dockerfile.contains("cargo build --profile dist --locked"));
    assert!(dockerfile.contains(
        "scripts/strip-binary.sh target/dist/kruise-webhook /kruise-webhook /kruise-webhook.debug"
    ));
    assert!(dockerfile.contains("FROM scratch AS debug-symbols"));
    let final_stage = dockerfile.rsplit("\nFROM ").next().unwrap();
    assert!(
        final_stage.contains("COPY --from=build /kruise-webhook /usr/local/bin/kruise-webhook"),
        "{final_stage}"
    );
    let cargo = std::fs::read_to_string(repository().join("Cargo.toml")).unwrap();
    assert!(cargo.contains("[profile.dist]"));
}
