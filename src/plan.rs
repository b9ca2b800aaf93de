//! `kruise-webhook plan`: what a change to a CloneSet, Advanced StatefulSet, Advanced DaemonSet or
//! SidecarSet will do before it is applied.
//! The object's current state and pods (given, or made by the same planner from the current
//! object) go into the simulated cluster ([`crate::workload::simulation`]); the kind's planner
//! runs round by round over it, unchanged, and the rounds that change pods are reported with the
//! end: finished, or blocked and why.
//!
//! - [`input`]: the objects read (files, standard input);
//! - [`cloneset`], [`statefulset`], [`daemonset`], [`sidecarset`]: each kind's world and what
//!   blocks it; [`rounds`]: the round loop and the words they share;
//! - [`report`]: what is reported; [`render`]: its text.

pub mod cloneset;
pub mod daemonset;
pub mod input;
pub mod render;
pub mod report;
pub mod rounds;
pub mod sidecarset;
pub mod statefulset;

use std::path::Path;

use crate::cli::{OutputFormat, PlanArgs, read_input};
use input::Planned;
use report::Report;

/// The printed plan and whether the rollout completes.
pub struct Outcome {
    pub text: String,
    pub completes: bool,
}

/// Runs `plan` as the command line asks.
pub fn run(args: &PlanArgs) -> Result<Outcome, String> {
    let report = report(args)?;
    let text = match args.output {
        OutputFormat::Human => render::text(&report),
        OutputFormat::Json => {
            let mut text = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
            text.push('\n');
            text
        }
    };
    Ok(Outcome {
        text,
        completes: report.verdict.completes(),
    })
}

fn report(args: &PlanArgs) -> Result<Report, String> {
    if args.max_rounds == 0 {
        return Err("--max-rounds: must be at least 1".into());
    }
    let source = source_name(&args.target);
    let changed = input::object(&read_input(&args.target)?, &source)?;
    let current = match &args.current {
        Some(path) => Some(input::object_named(
            &read_input(path)?,
            &format!("--current {}", source_name(path)),
            changed.kind(),
            changed.name(),
        )?),
        None => None,
    };
    let (pods, revisions) = match &args.pods {
        Some(path) => read_pods(path)?,
        None => (Vec::new(), Vec::new()),
    };
    match (changed, current) {
        (Planned::CloneSet(changed), current) => {
            only_for_sidecarset(args, "a CloneSet's pods come from its replicas")?;
            only_for_daemonset(args, "CloneSet")?;
            let current = current.and_then(|c| match c {
                Planned::CloneSet(c) => Some(*c),
                _ => None,
            });
            cloneset::plan(
                *changed,
                current,
                pods,
                revisions,
                &args.never_ready,
                args.max_rounds,
            )
        }
        (Planned::SidecarSet(changed), current) => {
            only_for_daemonset(args, "SidecarSet")?;
            let current = current.and_then(|c| match c {
                Planned::SidecarSet(c) => Some(*c),
                _ => None,
            });
            sidecarset::plan(
                *changed,
                current,
                pods,
                args.matched_pods,
                &args.never_ready,
                args.max_rounds,
            )
        }
        (Planned::StatefulSet(changed), current) => {
            only_for_sidecarset(args, "a StatefulSet's pods come from its replicas")?;
            only_for_daemonset(args, "StatefulSet")?;
            let current = current.and_then(|c| match c {
                Planned::StatefulSet(c) => Some(*c),
                _ => None,
            });
            statefulset::plan(
                *changed,
                current,
                pods,
                revisions,
                &args.never_ready,
                args.max_rounds,
            )
        }
        (Planned::DaemonSet(changed), current) => {
            only_for_sidecarset(args, "a DaemonSet's pods come from its nodes")?;
            let current = current.and_then(|c| match c {
                Planned::DaemonSet(c) => Some(*c),
                _ => None,
            });
            let (nodes, given) = daemonset_nodes(args)?;
            daemonset::plan(
                *changed,
                current,
                pods,
                revisions,
                nodes,
                given,
                &args.never_ready,
                args.max_rounds,
            )
        }
    }
}

/// `--nodes` and `--node-count` belong to a DaemonSet: any other kind refuses them by name.
fn only_for_daemonset(args: &PlanArgs, kind: &str) -> Result<(), String> {
    let flag = match (&args.nodes, args.node_count) {
        (Some(_), _) => "--nodes",
        (None, Some(_)) => "--node-count",
        (None, None) => return Ok(()),
    };
    Err(format!(
        "{flag}: only for a DaemonSet; a {kind} does not place pods on nodes"
    ))
}

/// A DaemonSet's Nodes: those of `--nodes`, or `--node-count` plain ones; and where they came
/// from, in words.
fn daemonset_nodes(
    args: &PlanArgs,
) -> Result<(Vec<crate::daemonset::NodeSummary>, String), String> {
    match (&args.nodes, args.node_count) {
        (Some(_), Some(_)) => {
            Err("--node-count: not with --nodes, which gives the Nodes themselves".into())
        }
        (Some(path), None) => {
            let source = format!("--nodes {}", path.display());
            let nodes = input::nodes(read_documents(path, "--nodes")?, &source)?;
            if nodes.is_empty() {
                return Err(format!("{source}: holds no Nodes"));
            }
            let given = format!("{} Nodes from {}", nodes.len(), path.display());
            Ok((daemonset::summaries(&nodes), given))
        }
        (None, count) => {
            let count = count.unwrap_or(daemonset::DEFAULT_NODE_COUNT);
            if count == 0 {
                return Err("--node-count: must be at least 1".into());
            }
            let given = match args.node_count {
                Some(_) => format!("{count} plain Ready Nodes (node-0..node-{})", count - 1),
                None => format!(
                    "no --nodes: {count} plain Ready Nodes (node-0..node-{}, --node-count to change)",
                    count - 1
                ),
            };
            Ok((daemonset::plain_nodes(count), given))
        }
    }
}

/// `--matched-pods` belongs to a SidecarSet: any other kind refuses it, saying why.
fn only_for_sidecarset(args: &PlanArgs, why: &str) -> Result<(), String> {
    match args.matched_pods {
        Some(_) => Err(format!("--matched-pods: only for a SidecarSet; {why}")),
        None => Ok(()),
    }
}

fn source_name(path: &Path) -> String {
    if path == Path::new("-") {
        "standard input".into()
    } else {
        path.display().to_string()
    }
}

/// The pods and revisions of a file, or of every YAML/JSON file of a directory.
fn read_pods(
    path: &Path,
) -> Result<
    (
        Vec<k8s_openapi::api::core::v1::Pod>,
        Vec<k8s_openapi::api::apps::v1::ControllerRevision>,
    ),
    String,
> {
    let documents = read_documents(path, "--pods")?;
    input::pods_and_revisions(documents, &format!("--pods {}", path.display()))
}

/// The documents of a file, or of every YAML/JSON file of a directory, given with `flag`.
fn read_documents(path: &Path, flag: &str) -> Result<Vec<serde_json::Value>, String> {
    let files = if path.is_dir() {
        crate::source::dir::read_directory(path)
            .map_err(|e| format!("{flag} {}: {e}", path.display()))?
    } else {
        vec![(source_name(path), read_input(path)?)]
    };
    let mut documents = Vec::new();
    for (name, text) in &files {
        documents.extend(input::documents(text, name)?);
    }
    Ok(documents)
}
