//! `explain --kubeconfig`: the pod (or workload) read from the apiserver, and what `serve` would
//! decide it by, read once: the SidecarSets and Namespaces through the catalogue's own cluster
//! state ([`ClusterState`], as the watches feed it), the SidecarSet revisions in the manager's
//! namespace, and the project's webhook configurations.

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, ListParams};
use kube::runtime::watcher::Event;
use kube::{Client, ResourceExt};

use super::input::{self, Subject};
use super::webhooks::{Hook, hooks};
use crate::api::{SidecarSet, keys};
use crate::cli::{
    ADVANCED_DAEMONSET_TARGET, ADVANCED_STATEFULSET_TARGET, CLONESET_TARGET, Target, TargetKind,
};
use crate::k8s::lenient::Lenient;
use crate::k8s::selector::Labels;
use crate::source::Catalogue;
use crate::source::cluster::{ClusterState, as_admitted};
use crate::source::history::{self, WatchedRevision};

/// What the explanation of an object of a cluster reads.
pub struct ClusterView {
    pub subject: Subject,
    pub catalogue: std::sync::Arc<Catalogue>,
    /// SidecarSets the webhooks cannot serve, and why.
    pub refused: Vec<(String, String)>,
    /// The labels of the subject's Namespace as stored (the apiserver matches webhooks against
    /// these; a 1.20 apiserver sets no name label); `None`: no such Namespace.
    pub namespace_labels: Option<Labels>,
    pub hooks: Vec<Hook>,
    pub notes: Vec<String>,
}

/// The kinds `explain --kubeconfig` reads, by the names a target may use.
const KINDS: &[TargetKind] = &[
    TargetKind {
        names: &["pod", "pods", "po"],
        group: "",
        version: "v1",
        kind: "Pod",
        plural: "pods",
        namespaced: true,
    },
    TargetKind {
        names: &["deployment", "deployments", "deploy"],
        group: "apps",
        version: "v1",
        kind: "Deployment",
        plural: "deployments",
        namespaced: true,
    },
    TargetKind {
        names: &["replicaset", "replicasets", "rs"],
        group: "apps",
        version: "v1",
        kind: "ReplicaSet",
        plural: "replicasets",
        namespaced: true,
    },
    TargetKind {
        names: &["statefulset", "statefulsets", "sts"],
        group: "apps",
        version: "v1",
        kind: "StatefulSet",
        plural: "statefulsets",
        namespaced: true,
    },
    TargetKind {
        names: &["daemonset", "daemonsets", "ds"],
        group: "apps",
        version: "v1",
        kind: "DaemonSet",
        plural: "daemonsets",
        namespaced: true,
    },
    TargetKind {
        names: &["job", "jobs"],
        group: "batch",
        version: "v1",
        kind: "Job",
        plural: "jobs",
        namespaced: true,
    },
    CLONESET_TARGET,
    ADVANCED_STATEFULSET_TARGET,
    ADVANCED_DAEMONSET_TARGET,
];

/// Parses `<kind>/<namespace>/<name>`.
pub fn parse_target(target: &str) -> Result<Target, String> {
    crate::cli::parse_target(target, KINDS)
}

/// Reads `target` and everything its explanation needs from the cluster.
pub async fn read(
    client: Client,
    target: &Target,
    manager_namespace: &str,
    mutating: &[String],
    validating: &[String],
) -> Result<ClusterView, String> {
    let shown = target.shown();
    let value = crate::source::watch::get_target(client.clone(), target).await?;
    let subject = input::from_value(value).map_err(|e| format!("{shown}: {e}"))?;

    let mut notes = vec![format!(
        "{shown} was read from the cluster: this is what the webhooks would do were it created now"
    )];
    let sidecarsets = Api::<Lenient<SidecarSet>>::all(client.clone())
        .list(&ListParams::default())
        .await
        .map_err(|e| format!("listing SidecarSets: {e}"))?;
    let namespaces = Api::<Namespace>::all(client.clone())
        .list_metadata(&ListParams::default())
        .await
        .map_err(|e| format!("listing Namespaces: {e}"))?;
    let revisions = Api::<Lenient<WatchedRevision>>::namespaced(client.clone(), manager_namespace)
        .list(&ListParams::default().labels(keys::SIDECARSET_NAME_LABEL))
        .await;

    let mut state = match &revisions {
        Ok(_) => ClusterState::with_history(history::shared()),
        Err(error) => {
            notes.push(format!(
                "the SidecarSet revisions in namespace {manager_namespace} cannot be read ({error}): a SidecarSet naming a revision is shown as missing it"
            ));
            ClusterState::default()
        }
    };
    state.sidecarset_event(Event::Init);
    for set in sidecarsets {
        state.sidecarset_event(Event::InitApply(as_admitted(set)));
    }
    state.sidecarset_event(Event::InitDone);
    let namespace_labels = namespaces
        .items
        .iter()
        .find(|ns| ns.name_any() == target.namespace)
        .map(|ns| ns.metadata.labels.clone().unwrap_or_default());
    if namespace_labels.is_none() {
        notes.push(format!("Namespace {} does not exist", target.namespace));
    }
    state.namespace_event(Event::Init);
    for namespace in namespaces {
        state.namespace_event(Event::InitApply(namespace));
    }
    state.namespace_event(Event::InitDone);
    if let Ok(revisions) = revisions {
        state.revision_event(Event::Init);
        for revision in revisions {
            state.revision_event(Event::InitApply(revision));
        }
        state.revision_event(Event::InitDone);
        let api = Api::<ControllerRevision>::namespaced(client.clone(), manager_namespace);
        for name in state.missing_content() {
            match api.get_opt(&name).await {
                Ok(Some(revision)) => {
                    state.revision_content(WatchedRevision::from_object(&revision));
                }
                Ok(None) => {}
                Err(error) => notes.push(format!("reading ControllerRevision {name}: {error}")),
            }
        }
    }
    let snapshot = state
        .snapshot()
        .ok_or("the SidecarSets, Namespaces and revisions read do not make a catalogue")?;
    let refused = snapshot
        .refusals
        .into_iter()
        .map(|(name, refusal)| (name, refusal.message))
        .collect();

    let mut mutating_found = Vec::new();
    for name in mutating {
        let api = Api::<MutatingWebhookConfiguration>::all(client.clone());
        match api.get_opt(name).await {
            Ok(Some(configuration)) => mutating_found.push(configuration),
            Ok(None) => notes.push(format!("MutatingWebhookConfiguration {name} not found")),
            Err(error) => notes.push(format!(
                "reading MutatingWebhookConfiguration {name}: {error}"
            )),
        }
    }
    let mut validating_found = Vec::new();
    for name in validating {
        let api = Api::<ValidatingWebhookConfiguration>::all(client.clone());
        match api.get_opt(name).await {
            Ok(Some(configuration)) => validating_found.push(configuration),
            Ok(None) => notes.push(format!("ValidatingWebhookConfiguration {name} not found")),
            Err(error) => notes.push(format!(
                "reading ValidatingWebhookConfiguration {name}: {error}"
            )),
        }
    }
    Ok(ClusterView {
        subject,
        catalogue: snapshot.catalogue,
        refused,
        namespace_labels,
        hooks: hooks(&mutating_found, &validating_found),
        notes,
    })
}
