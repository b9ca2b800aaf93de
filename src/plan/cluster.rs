//! `plan --kubeconfig`: the object as it is now, its pods and its ControllerRevisions, read from
//! the apiserver once, then planned exactly as the same objects given as files. Reading is the
//! shell ([`read`]); which of the listed pods and revisions are the object's is pure
//! ([`belonging`]).
//!
//! The reads need, with the operator's own kubeconfig: `get` on the kind, `list` on pods (in the
//! object's namespace; cluster-wide and `list` on namespaces for a SidecarSet), `list` on
//! controllerrevisions in the object's namespace, and `list` on nodes for a DaemonSet.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{Namespace, Node, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kube::api::{Api, ListParams};
use kube::{Client, ResourceExt};
use serde_json::Value;

use super::input::Planned;
use crate::api::keys;
use crate::cli::{
    ADVANCED_DAEMONSET_TARGET, ADVANCED_STATEFULSET_TARGET, CLONESET_TARGET, Target, TargetKind,
};
use crate::k8s::owner::controller_of;
use crate::k8s::selector::Labels;

/// The kinds `plan --kubeconfig` reads, by the names a target may use. A kind planned here also
/// gets an arm in [`belonging`].
const KINDS: &[TargetKind] = &[
    CLONESET_TARGET,
    ADVANCED_STATEFULSET_TARGET,
    ADVANCED_DAEMONSET_TARGET,
    TargetKind {
        names: &["sidecarset", "sidecarsets"],
        group: keys::GROUP,
        version: "v1beta1",
        kind: "SidecarSet",
        plural: "sidecarsets",
        namespaced: false,
    },
];

/// Parses `<kind>/<namespace>/<name>`, or `sidecarset/<name>`.
pub fn parse_target(target: &str) -> Result<Target, String> {
    crate::cli::parse_target(target, KINDS)
}

/// The live object the changed one names: its kind, its namespace (`default` when it names none,
/// as `kubectl apply` without `-n`) and its name.
pub fn target_of(changed: &Planned) -> Result<Target, String> {
    let kind = KINDS
        .iter()
        .find(|k| k.kind == changed.kind())
        .ok_or_else(|| format!("{} is not read from a cluster", changed.kind()))?;
    let namespace = match (kind.namespaced, changed.metadata().namespace.as_deref()) {
        (false, _) => "",
        (true, Some(namespace)) if !namespace.is_empty() => namespace,
        (true, _) => "default",
    };
    Ok(kind.target(namespace, changed.name()))
}

/// What the cluster holds for a target, before [`belonging`] picks the object's own.
pub struct Live {
    /// The object, with its `apiVersion` and `kind`.
    pub object: Value,
    /// The pods of its namespace (every namespace's for a cluster-scoped kind).
    pub pods: Vec<Pod>,
    /// The ControllerRevisions of its namespace (none read for a cluster-scoped kind).
    pub revisions: Vec<ControllerRevision>,
    /// The labels of every Namespace (read for a cluster-scoped kind only).
    pub namespaces: BTreeMap<String, Labels>,
    /// The Nodes (read for a DaemonSet only).
    pub nodes: Option<Vec<Node>>,
}

/// Reads `target`, the pods and revisions that may be its own, and (cluster-scoped) the
/// Namespaces' labels.
pub async fn read(client: Client, target: &Target) -> Result<Live, String> {
    let object = crate::source::watch::get_target(client.clone(), target).await?;
    let all = ListParams::default();
    let mut live = Live {
        object,
        pods: Vec::new(),
        revisions: Vec::new(),
        namespaces: BTreeMap::new(),
        nodes: None,
    };
    if target.kind == ADVANCED_DAEMONSET_TARGET.kind {
        let nodes = Api::<Node>::all(client.clone())
            .list(&all)
            .await
            .map_err(|e| format!("listing Nodes: {e}"))?;
        live.nodes = Some(nodes.items);
    }
    if target.namespace.is_empty() {
        live.pods = Api::<Pod>::all(client.clone())
            .list(&all)
            .await
            .map_err(|e| format!("listing pods: {e}"))?
            .items;
        let namespaces = Api::<Namespace>::all(client)
            .list_metadata(&all)
            .await
            .map_err(|e| format!("listing Namespaces: {e}"))?;
        live.namespaces = namespaces
            .into_iter()
            .map(|ns| {
                let name = ns.name_any();
                let labels = ns.metadata.labels.unwrap_or_default();
                (
                    name.clone(),
                    crate::k8s::selector::namespace_labels(name, Some(labels)),
                )
            })
            .collect();
    } else {
        let namespace = target.namespace.as_str();
        live.pods = Api::<Pod>::namespaced(client.clone(), namespace)
            .list(&all)
            .await
            .map_err(|e| format!("listing pods in namespace {namespace}: {e}"))?
            .items;
        live.revisions = Api::<ControllerRevision>::namespaced(client, namespace)
            .list(&all)
            .await
            .map_err(|e| format!("listing ControllerRevisions in namespace {namespace}: {e}"))?
            .items;
    }
    Ok(live)
}

/// The object's own among the pods and revisions listed: a workload's pods its selector selects
/// and it controls, and the revisions it controls (as the controller lists them); a SidecarSet's
/// pods as its controller counts them (selected, in a selected namespace, injected by it).
pub fn belonging(
    object: &Planned,
    pods: Vec<Pod>,
    revisions: Vec<ControllerRevision>,
    namespaces: &BTreeMap<String, Labels>,
) -> Result<(Vec<Pod>, Vec<ControllerRevision>), String> {
    match object {
        Planned::CloneSet(set) => Ok((
            owned_pods(&set.metadata, set.spec.selector.as_ref(), pods)?,
            owned(&set.metadata, revisions),
        )),
        Planned::StatefulSet(set) => Ok((
            owned_pods(&set.metadata, set.spec.selector.as_ref(), pods)?,
            owned(&set.metadata, revisions),
        )),
        Planned::DaemonSet(set) => Ok((
            owned_pods(&set.metadata, set.spec.selector.as_ref(), pods)?,
            owned(&set.metadata, revisions),
        )),
        Planned::SidecarSet(set) => {
            let pods: Vec<Arc<Pod>> = pods.into_iter().map(Arc::new).collect();
            let matched = crate::rollout::matched_pods(set, &pods, |ns| namespaces.get(ns))
                .map_err(|e| e.to_string())?;
            Ok((
                matched.into_iter().map(Arc::unwrap_or_clone).collect(),
                Vec::new(),
            ))
        }
    }
}

/// The objects `owner` controls (by its uid).
fn owned<T: kube::Resource>(owner: &ObjectMeta, objects: Vec<T>) -> Vec<T> {
    let Some(uid) = owner.uid.as_deref() else {
        return Vec::new();
    };
    objects
        .into_iter()
        .filter(|o| controller_of(o.meta()).is_some_and(|r| r.uid == uid))
        .collect()
}

/// The pods `owner` controls that `selector` selects (no selector selects none).
fn owned_pods(
    owner: &ObjectMeta,
    selector: Option<&LabelSelector>,
    pods: Vec<Pod>,
) -> Result<Vec<Pod>, String> {
    let Some(selector) = selector else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for pod in owned(owner, pods) {
        let selected =
            crate::k8s::selector::matches(selector, pod.metadata.labels.as_ref(), "spec.selector")
                .map_err(|e| e.to_string())?;
        if selected {
            out.push(pod);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
