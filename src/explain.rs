//! `kruise-webhook explain`: why a pod gets (or does not get) each SidecarSet, what it gets, in
//! which launch order, and which of the project's webhooks its namespace passes through.
//!
//! The answer is admission's own decision ([`crate::inject::decision`]), asked for every
//! SidecarSet instead of the candidates admission looks at, and printed with its reasons. The
//! SidecarSets come from files (the embedded examples by default), loaded as `serve` loads them,
//! or from a cluster ([`cluster`]), read as `serve` watches them.

pub mod cluster;
pub mod input;
pub mod render;
pub mod report;
pub mod webhooks;

use std::path::Path;

use crate::cli::{ExplainArgs, OutputFormat, read_input};
use crate::inject::launch_priority::random_name_suffix;
use crate::inject::sidecar::{pod_namespace, random_draw};
use crate::source::Catalogue;
use crate::source::dir::{self, LoadError};
use report::{Report, Sources};

/// The explanation `args` ask for, as text to print.
pub fn run(args: &ExplainArgs) -> Result<String, String> {
    let report = match &args.kubeconfig {
        Some(kubeconfig) => from_cluster(args, kubeconfig)?,
        None => offline(args)?,
    };
    Ok(match args.output {
        OutputFormat::Human => render::human(&report),
        OutputFormat::Json => {
            let json = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
            format!("{json}\n")
        }
    })
}

fn now() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// From files: the target, the SidecarSets (the embedded examples by default) and
/// `deploy/webhooks.yaml`.
fn offline(args: &ExplainArgs) -> Result<Report, String> {
    let files = match &args.sidecarsets {
        Some(path) if path.is_dir() => {
            dir::read_directory(path).map_err(|e| format!("reading {}: {e}", path.display()))?
        }
        Some(path) => vec![(path.display().to_string(), read_input(path)?)],
        None => dir::embedded_files(),
    };
    let (catalogue, refused, mut notes) = catalogue_of_files(&files);
    let subject = input::from_text(&read_input(Path::new(&args.target))?)?;
    let hooks = webhooks::deployed()?;
    let namespace = pod_namespace(&subject.pod);
    let labels = catalogue
        .namespace_labels(namespace)
        .map(|labels| labels.into_owned());
    notes.push(
        "offline: a Namespace the files do not declare is taken to carry only its name label; the webhooks are those of deploy/webhooks.yaml".into(),
    );
    let (now, suffix) = (now(), random_name_suffix());
    let sources = Sources {
        catalogue: &catalogue,
        refused: &refused,
        hooks: &hooks,
        webhook_namespace_labels: labels.as_ref(),
        now: &now,
        name_suffix: &suffix,
        sort_sidecars_by_name: args.sort_sidecars_by_name,
        draw: &random_draw,
        notes,
    };
    Ok(report::explain(&subject, &sources))
}

/// From a cluster: everything read there ([`cluster::read`]).
fn from_cluster(args: &ExplainArgs, kubeconfig: &Path) -> Result<Report, String> {
    let target = cluster::parse_target(&args.target)?;
    let view = crate::source::watch::read_once(kubeconfig, |client| {
        cluster::read(
            client,
            &target,
            &args.namespace,
            &args.configurations.mutating,
            &args.configurations.validating,
        )
    })?;
    let (now, suffix) = (now(), random_name_suffix());
    let sources = Sources {
        catalogue: &view.catalogue,
        refused: &view.refused,
        hooks: &view.hooks,
        webhook_namespace_labels: view.namespace_labels.as_ref(),
        now: &now,
        name_suffix: &suffix,
        sort_sidecars_by_name: args.sort_sidecars_by_name,
        draw: &random_draw,
        notes: view.notes,
    };
    Ok(report::explain(&view.subject, &sources))
}

/// SidecarSets from files: the catalogue `serve` would build of them, the SidecarSets it refuses
/// (name, why), and notes on what else could not be read.
pub fn catalogue_of_files(
    files: &[(String, String)],
) -> (Catalogue, Vec<(String, String)>, Vec<String>) {
    let (catalogue, errors) = dir::load(files).into_catalogue();
    let mut refused = Vec::new();
    let mut notes = Vec::new();
    for error in errors {
        match refused_name(&error) {
            Some(name) => refused.push((name.to_string(), error.to_string())),
            None => notes.push(format!("skipped: {error}")),
        }
    }
    (catalogue, refused, notes)
}

/// The SidecarSet a load error is about, if it got as far as its name.
fn refused_name(error: &LoadError) -> Option<&str> {
    let object = error.object.as_ref()?;
    (object.kind == "SidecarSet").then_some(object.name.as_str())
}

#[cfg(test)]
mod tests;
