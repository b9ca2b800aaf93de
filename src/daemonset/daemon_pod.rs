//! The pod an Advanced DaemonSet creates for a node (upstream `CreatePodTemplate` and
//! `ReplaceDaemonSetPodNodeNameNodeAffinity`, Kruise's in-place readiness gate), and the node a
//! pod is meant for (`GetTargetNodeName`).

use k8s_openapi::api::core::v1::{
    Affinity, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, Pod,
    PodReadinessGate, PodTemplateSpec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

use super::affinity::NODE_NAME_FIELD;
use super::tolerations::add_default_tolerations;
use crate::api::daemonset::{DaemonSet, IN_PLACE_IF_POSSIBLE};
use crate::api::keys;
use crate::workload::Action;

/// DaemonSet annotation of the pre-hash era: the template generation, kept on pods as a label.
pub const TEMPLATE_GENERATION_ANNOTATION: &str = "deprecated.daemonset.template.generation";
pub const TEMPLATE_GENERATION_LABEL: &str = "pod-template-generation";

/// Pod names are DNS subdomains: a prefix must leave room for the generated suffix.
const MAX_NAME_LEN: usize = 253;

/// The controller ownerReference of every pod and revision of `set`.
pub fn owner_reference(set: &DaemonSet) -> OwnerReference {
    OwnerReference {
        api_version: <DaemonSet as kube::Resource>::api_version(&()).into_owned(),
        kind: "DaemonSet".into(),
        name: set.metadata.name.clone().unwrap_or_default(),
        uid: set.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// `deprecated.daemonset.template.generation`, when the DaemonSet has it as a number.
pub fn template_generation(set: &DaemonSet) -> Option<i64> {
    set.metadata
        .annotations
        .as_ref()?
        .get(TEMPLATE_GENERATION_ANNOTATION)?
        .parse()
        .ok()
}

/// Upstream `IsPodUpdated`: the pod carries `hash`, or the template generation of the
/// DaemonSet's annotation.
pub fn is_updated(
    labels: Option<&crate::k8s::selector::Labels>,
    hash: &str,
    generation: Option<i64>,
) -> bool {
    let label = |key: &str| labels.and_then(|l| l.get(key)).map(String::as_str);
    let hash_matches = !hash.is_empty() && label(keys::CONTROLLER_REVISION_HASH) == Some(hash);
    let generation_matches = generation
        .is_some_and(|g| label(TEMPLATE_GENERATION_LABEL) == Some(g.to_string().as_str()));
    hash_matches || generation_matches
}

/// The template every pod of this round is created from: the DaemonSet's, with the default
/// tolerations, the revision label `hash` (and the template generation label when the DaemonSet
/// has one), and the `InPlaceUpdateReady` gate appended for `InPlaceIfPossible` rolling updates.
pub fn pod_template(set: &DaemonSet, hash: &str) -> PodTemplateSpec {
    let mut template = set.spec.template.clone();
    let spec = template.spec.get_or_insert_with(Default::default);
    add_default_tolerations(spec);
    let labels = template
        .metadata
        .get_or_insert_with(Default::default)
        .labels
        .get_or_insert_with(Default::default);
    if let Some(generation) = template_generation(set) {
        labels.insert(TEMPLATE_GENERATION_LABEL.into(), generation.to_string());
    }
    if !hash.is_empty() {
        labels.insert(keys::CONTROLLER_REVISION_HASH.into(), hash.into());
    }
    let in_place = set.update_type() == "RollingUpdate"
        && set.spec.update_strategy.rolling_update.is_some()
        && set.rolling_update_type() == IN_PLACE_IF_POSSIBLE;
    if in_place {
        // Appended even when the template lists it, as upstream does.
        let spec = template.spec.get_or_insert_with(Default::default);
        spec.readiness_gates
            .get_or_insert_with(Vec::new)
            .push(PodReadinessGate {
                condition_type: keys::INPLACE_UPDATE_READY.into(),
            });
    }
    template
}

/// The pod to create on `node` from [`pod_template`]: the scheduler places it through a
/// required node affinity naming only that node (the template's other required terms are
/// replaced; `nodeSelector` and preferred terms stay), named `<set>-<random>` by the apiserver.
pub fn new_pod(set: &DaemonSet, template: &PodTemplateSpec, node: &str) -> Pod {
    let meta = template.metadata.clone().unwrap_or_default();
    let mut spec = template.spec.clone().unwrap_or_default();
    spec.affinity = Some(node_name_affinity(spec.affinity.take(), node));
    Pod {
        metadata: ObjectMeta {
            generate_name: Some(generate_name(set.metadata.name.as_deref().unwrap_or(""))),
            namespace: set.metadata.namespace.clone(),
            labels: meta.labels,
            annotations: meta.annotations,
            finalizers: meta.finalizers,
            owner_references: Some(vec![owner_reference(set)]),
            ..Default::default()
        },
        spec: Some(spec),
        status: None,
    }
}

/// `<set>-`, or the bare name when the dash would make it too long to be a name prefix.
fn generate_name(set: &str) -> String {
    if set.len() < MAX_NAME_LEN {
        format!("{set}-")
    } else {
        set.to_string()
    }
}

/// Upstream `ReplaceDaemonSetPodNodeNameNodeAffinity`.
fn node_name_affinity(affinity: Option<Affinity>, node: &str) -> Affinity {
    let required = NodeSelector {
        node_selector_terms: vec![NodeSelectorTerm {
            match_fields: Some(vec![NodeSelectorRequirement {
                key: NODE_NAME_FIELD.into(),
                operator: "In".into(),
                values: Some(vec![node.to_string()]),
            }]),
            match_expressions: None,
        }],
    };
    let mut affinity = affinity.unwrap_or_default();
    let node_affinity = affinity
        .node_affinity
        .get_or_insert_with(NodeAffinity::default);
    node_affinity.required_during_scheduling_ignored_during_execution = Some(required);
    affinity
}

/// Upstream `GetTargetNodeName`: `spec.nodeName`, else the single value of the first
/// `metadata.name In` field requirement of the required node affinity. `None`: neither (such a
/// pod is on no node and ignored), or that requirement has several values.
pub fn target_node(pod: &Pod) -> Option<&str> {
    let spec = pod.spec.as_ref()?;
    if let Some(name) = spec.node_name.as_deref().filter(|n| !n.is_empty()) {
        return Some(name);
    }
    let terms = &spec
        .affinity
        .as_ref()?
        .node_affinity
        .as_ref()?
        .required_during_scheduling_ignored_during_execution
        .as_ref()?
        .node_selector_terms;
    let requirement = terms
        .iter()
        .flat_map(|term| term.match_fields.iter().flatten())
        .find(|r| r.key == NODE_NAME_FIELD && r.operator == "In")?;
    match requirement.values.as_deref() {
        Some([value]) => Some(value),
        _ => None,
    }
}

/// The characters Kubernetes' `generateName` suffixes are made of.
pub const NAME_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// Gives each pod to create a name as `generateName` would (`<set>-<5 characters>`): the shell's
/// expectations wait for the created pods by name, and `plan` reports them by name.
pub fn name_creations(actions: &mut [Action], rng: &mut fastrand::Rng) {
    for action in actions {
        if let Action::CreatePod { pod, .. } = action
            && pod.metadata.name.is_none()
        {
            let prefix = pod.metadata.generate_name.clone().unwrap_or_default();
            let suffix: String = (0..5)
                .map(|_| char::from(NAME_ALPHABET[rng.usize(..NAME_ALPHABET.len())]))
                .collect();
            pod.metadata.name = Some(format!("{prefix}{suffix}"));
        }
    }
}

#[cfg(test)]
mod tests;
