//! `kruise-webhook plan`: what a change to a CloneSet, Advanced StatefulSet, Advanced DaemonSet or
//! SidecarSet will do before it is applied.
//! The object's current state and pods (given, or made by the same planner from the current
//! object) go into the simulated cluster ([`crate::workload::simulation`]); the kind's planner
//! runs round by round over it, unchanged, and the rounds that change pods are reported with the
//! end: finished, or blocked and why.
//!
//! - [`input`]: the objects read (files, standard input);
//! - [`cluster`]: the same objects read from a cluster (`--kubeconfig`);
//! - [`cloneset`], [`statefulset`], [`daemonset`], [`sidecarset`]: each kind's world and what
//!   blocks it; [`rounds`]: the round loop and the words they share;
//! - [`report`]: what is reported; [`render`]: its text.

pub mod cloneset;
pub mod cluster;
pub mod daemonset;
pub mod input;
pub mod render;
pub mod report;
pub mod rounds;
pub mod sidecarset;
pub mod statefulset;

use std::collections::BTreeMap;
use std::path::Path;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::Pod;

use crate::cli::{OutputFormat, PlanArgs, read_input};
use input::Planned;
use report::Report;

use crate::k8s::selector::Labels;

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

/// What a plan starts from, read from files or from a cluster: one path after reading.
struct Inputs {
    changed: Planned,
    current: Option<Planned>,
    pods: Vec<Pod>,
    revisions: Vec<ControllerRevision>,
    /// Namespace labels known beyond each pod's name label (a cluster's).
    namespaces: BTreeMap<String, Labels>,
    /// A DaemonSet's Nodes as a cluster holds them (from files: `--nodes` / `--node-count`).
    nodes: Option<Vec<k8s_openapi::api::core::v1::Node>>,
    notes: Vec<String>,
}

fn report(args: &PlanArgs) -> Result<Report, String> {
    if args.max_rounds == 0 {
        return Err("--max-rounds: must be at least 1".into());
    }
    let inputs = match &args.kubeconfig {
        Some(kubeconfig) => from_cluster(args, kubeconfig)?,
        None => from_files(args)?,
    };
    let mut report = match (inputs.changed, inputs.current) {
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
                inputs.pods,
                inputs.revisions,
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
                inputs.pods,
                inputs.namespaces,
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
                inputs.pods,
                inputs.revisions,
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
            let (nodes, given) = match inputs.nodes {
                Some(nodes) => {
                    let given = format!("the cluster's {} Nodes", nodes.len());
                    (daemonset::summaries(&nodes), given)
                }
                None => daemonset_nodes(args)?,
            };
            daemonset::plan(
                *changed,
                current,
                inputs.pods,
                inputs.revisions,
                nodes,
                given,
                &args.never_ready,
                args.max_rounds,
            )
        }
    }?;
    report.notes.splice(0..0, inputs.notes);
    Ok(report)
}

fn from_files(args: &PlanArgs) -> Result<Inputs, String> {
    let source = source_name(&args.target);
    let changed = input::object(&read_input(&args.target)?, &source)?.admitted();
    let current = match &args.current {
        Some(path) => Some(
            input::object_named(
                &read_input(path)?,
                &format!("--current {}", source_name(path)),
                changed.kind(),
                changed.name(),
            )?
            .admitted(),
        ),
        None => None,
    };
    let (pods, revisions) = match &args.pods {
        Some(path) => read_pods(path)?,
        None => (Vec::new(), Vec::new()),
    };
    Ok(Inputs {
        changed,
        current,
        pods,
        revisions,
        namespaces: BTreeMap::new(),
        nodes: None,
        notes: Vec::new(),
    })
}

/// The changed object from its file (or, when the target is no file, the live object itself),
/// and the live object, its pods and revisions from the cluster ([`cluster`]).
fn from_cluster(args: &PlanArgs, kubeconfig: &Path) -> Result<Inputs, String> {
    let is_file = args.target == Path::new("-") || args.target.exists();
    let (changed, target) = if is_file {
        let changed = input::object(&read_input(&args.target)?, &source_name(&args.target))?;
        let target = cluster::target_of(&changed)?;
        (Some(changed), target)
    } else {
        let text = args.target.to_string_lossy();
        let target = cluster::parse_target(&text)
            .map_err(|e| format!("{text}: no such file, nor a target: {e}"))?;
        (None, target)
    };
    let live =
        crate::source::watch::read_once(kubeconfig, |client| cluster::read(client, &target))?;
    let shown = target.shown();
    let current = input::stored(live.object, &format!("{shown} (the cluster's)"))?;
    let (pods, revisions) =
        cluster::belonging(&current, live.pods, live.revisions, &live.namespaces)
            .map_err(|e| format!("{shown}: {e}"))?;
    let mut notes = vec![format!(
        "read from the cluster: {shown}, {} pods, {} ControllerRevisions",
        pods.len(),
        revisions.len()
    )];
    // The changed object is admitted as the cluster admitted the live one: with the webhooks'
    // defaults where the live one has them, as written where the cluster stores it undefaulted.
    let cluster_defaults = current.clone().admitted() == current;
    let changed = match changed {
        Some(changed) if cluster_defaults => changed.admitted(),
        Some(changed) => {
            notes.push(format!(
                "the cluster stores {shown} without the defaults the webhooks give: the changed object is taken as written, as it would be stored"
            ));
            changed
        }
        None => {
            notes
                .push("no changed object: the live one, so the rest of a rollout under way".into());
            current.clone()
        }
    };
    Ok(Inputs {
        changed,
        current: Some(current),
        pods,
        revisions,
        namespaces: live.namespaces,
        nodes: live.nodes,
        notes,
    })
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
