//! The explanation of one pod: the injection decision admission takes ([`decide`]), what each
//! injected SidecarSet adds and from which revision, the launch-priority result and the webhooks
//! the pod's namespace passes through. Pure: everything it reads is handed in.

use std::collections::BTreeSet;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Container, Pod};
use serde::Serialize;

use super::input::Subject;
use super::webhooks::{Hook, Passage, passages};
use crate::api::{SidecarSet, SidecarSetInjectRevision, keys};
use crate::inject::decision::{InjectionContext, RevisionChoice, Verdict, decide};
use crate::inject::launch_priority::{apply_launch_priority, container_priorities, is_ordered};
use crate::inject::revision::{Pick, PickReason, requested, stamped_revision};
use crate::inject::sidecar::{inject_chosen, pod_namespace};
use crate::k8s::selector::Labels;
use crate::source::Catalogue;

/// Everything besides the pod that the explanation reads.
pub struct Sources<'a> {
    pub catalogue: &'a Catalogue,
    /// SidecarSets the catalogue refused to serve, and why (they inject into no pod).
    pub refused: &'a [(String, String)],
    /// The project's webhooks.
    pub hooks: &'a [Hook],
    /// The pod's Namespace's labels as the apiserver matches webhooks against them (`None`: the
    /// webhooks are not judged).
    pub webhook_namespace_labels: Option<&'a Labels>,
    /// Admission time, written into the hash annotations.
    pub now: &'a str,
    /// Completes a `generateName`d pod's name for its barrier ConfigMap, as admission does.
    pub name_suffix: &'a str,
    pub sort_sidecars_by_name: bool,
    /// Uniform in [0, 1): the draw a `Partial` revision is injected with.
    pub draw: &'a dyn Fn() -> f64,
    /// Said beside the answer: files skipped, configurations not found.
    pub notes: Vec<String>,
}

/// The explanation, as `-o json` prints it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// What was explained: `Pod shop/web-1`, `CloneSet default/cart (its pod template)`.
    pub subject: String,
    pub namespace: String,
    /// The Namespace's labels as SidecarSets' namespaceSelector sees them; `None`: unknown.
    pub namespace_labels: Option<Labels>,
    pub admission: Admission,
    /// Every SidecarSet, in the order admission judges them, then those refused.
    pub sidecarsets: Vec<SidecarSetReport>,
    pub launch_priority: LaunchPriority,
    /// The project's webhooks for namespaced objects; empty when not judged.
    pub webhooks: Vec<Passage>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// What the pod webhook answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Admission {
    /// Whether the apiserver sends the pod to the pod webhook at all (its namespaceSelector);
    /// `None`: the webhooks were not judged. When `false`, the rest says what the webhook would
    /// answer if it were called.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub webhook_called: Option<bool>,
    pub allowed: bool,
    /// Allowed with a patch.
    pub changes_pod: bool,
    /// The message a denied pod gets.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub denied: Option<String>,
}

/// What one SidecarSet does to the pod.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetReport {
    pub name: String,
    pub injects: bool,
    /// The pod's `kruise.io/sidecarset-injected-list` names it already (an existing pod, or a
    /// reinvocation): injecting again changes nothing it already has.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub already_injected: bool,
    /// Why not, as a stable code: a [`crate::inject::decision::Skip`] code, `RefusesPod` or
    /// `RefusedByCatalogue`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revision: Option<RevisionReport>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub init_containers: Vec<Added>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub containers: Vec<Added>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub volumes: Vec<String>,
}

/// The revision an injected SidecarSet comes from.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RevisionReport {
    /// The ControllerRevision the pod's `kruise.io/sidecarset-hash` entry records; empty while
    /// the controller has registered none.
    pub controller_revision: String,
    /// The SidecarSet's `kruise.io/sidecarset-hash`.
    pub hash: String,
    /// For a SidecarSet that names a revision (`injectionStrategy.revision`): which one, which
    /// the pod gets (`history` or `latest`) and why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requested: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pick: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// A container a SidecarSet adds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Added {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// The pod had a container of this name, which the sidecar replaces.
    pub replaces: bool,
}

/// Container launch priority on the injected pod.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LaunchPriority {
    /// Containers are started in priority order behind a barrier.
    pub ordered: bool,
    pub reason: String,
    /// The barrier ConfigMap, when ordered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub barrier: Option<String>,
    pub containers: Vec<ContainerPriority>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerPriority {
    pub name: String,
    pub priority: i64,
    /// The key of the barrier ConfigMap the container waits for (`KRUISE_CONTAINER_BARRIER`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub barrier_key: Option<String>,
}

/// Explains `subject` against `sources`.
pub fn explain(subject: &Subject, sources: &Sources<'_>) -> Report {
    let mut pod = subject.pod.clone();
    let namespace = pod_namespace(&pod).to_string();
    pod.metadata.namespace = Some(namespace.clone());
    let catalogue = sources.catalogue;
    let namespace_labels = catalogue.namespace_labels(&namespace);
    // Every SidecarSet of the catalogue, not only the candidates admission looks at: each gets
    // its reason. Admission's index never leaves out one that would match (candidates.rs).
    let context = InjectionContext {
        sidecarsets: catalogue.sidecarsets(),
        namespace_labels: namespace_labels.as_deref(),
        now: sources.now,
        sort_sidecars_by_name: sources.sort_sidecars_by_name,
        revisions: catalogue.injection_revisions(),
        draw: sources.draw,
    };
    let decision = decide(&pod, &context);
    let chosen: Vec<&SidecarSet> = decision
        .verdicts
        .iter()
        .filter_map(|(_, verdict)| match verdict {
            Verdict::Injects { set, .. } => Some(*set),
            _ => None,
        })
        .collect();

    let mut injected = pod.clone();
    let injection = match decision.refusal() {
        Some(error) => Err(error.to_string()),
        None => inject_chosen(
            &mut injected,
            &chosen,
            sources.now,
            sources.sort_sidecars_by_name,
            None,
        )
        .map(|injection| injection.changed)
        .map_err(|e| e.to_string()),
    };
    let mut prioritized = injected.clone();
    let prioritizing = apply_launch_priority(&mut prioritized, sources.name_suffix);
    let admission = match (&injection, &prioritizing) {
        (Err(message), _) => Admission {
            webhook_called: None,
            allowed: false,
            changes_pod: false,
            denied: Some(message.clone()),
        },
        (Ok(_), Err(error)) => Admission {
            webhook_called: None,
            allowed: false,
            changes_pod: false,
            denied: Some(error.to_string()),
        },
        (Ok(injected), Ok(prioritized)) => Admission {
            webhook_called: None,
            allowed: true,
            changes_pod: *injected || *prioritized,
            denied: None,
        },
    };

    let mut claimed_volumes = BTreeSet::new();
    let mut sidecarsets: Vec<SidecarSetReport> = decision
        .verdicts
        .iter()
        .map(|(set, verdict)| set_report(set, verdict, &pod, sources, &mut claimed_volumes))
        .collect();
    // A SidecarSet served but refused for its missing revision is judged above already.
    sidecarsets.extend(
        sources
            .refused
            .iter()
            .filter(|(name, _)| catalogue.get(name).is_none())
            .map(|(name, message)| SidecarSetReport {
                reason: Some("RefusedByCatalogue".into()),
                message: Some(format!(
                    "the SidecarSet is not served, so it injects into no pod: {message}"
                )),
                ..not_injected(name)
            }),
    );

    let launch_priority = match injection {
        Ok(_) => launch_priority(&injected, &prioritized, prioritizing.is_ok()),
        Err(_) => LaunchPriority {
            ordered: false,
            reason: "the pod is refused before launch priority is applied".into(),
            barrier: None,
            containers: Vec::new(),
        },
    };
    let webhooks = sources
        .webhook_namespace_labels
        .map(|labels| passages(sources.hooks, labels))
        .unwrap_or_default();
    let mut admission = admission;
    let mut notes = sources.notes.clone();
    if sources.webhook_namespace_labels.is_some() {
        let pod_webhook = webhooks
            .iter()
            .filter(|passage| passage.path.as_deref() == Some(keys::PATH_MUTATE_POD))
            .collect::<Vec<_>>();
        admission.webhook_called = Some(pod_webhook.iter().any(|passage| passage.passes));
        if pod_webhook.is_empty() {
            notes.push(format!(
                "no webhook of the project's configurations sends pods to {}",
                keys::PATH_MUTATE_POD
            ));
        }
    }
    Report {
        subject: subject.origin.clone(),
        namespace,
        namespace_labels: namespace_labels.map(|labels| labels.into_owned()),
        admission,
        sidecarsets,
        launch_priority,
        webhooks,
        notes,
    }
}

fn not_injected(name: &str) -> SidecarSetReport {
    SidecarSetReport {
        name: name.to_string(),
        injects: false,
        already_injected: false,
        reason: None,
        message: None,
        revision: None,
        init_containers: Vec::new(),
        containers: Vec::new(),
        volumes: Vec::new(),
    }
}

/// One SidecarSet's line of the report; an injected one's additions are what injecting it alone
/// adds to the pod, its volumes those no SidecarSet before it added.
fn set_report(
    set: &Arc<SidecarSet>,
    verdict: &Verdict<'_>,
    pod: &Pod,
    sources: &Sources<'_>,
    claimed_volumes: &mut BTreeSet<String>,
) -> SidecarSetReport {
    let (chosen, choice) = match verdict {
        Verdict::Skipped(skip) => {
            return SidecarSetReport {
                reason: Some(skip.code().into()),
                message: Some(skip.to_string()),
                ..not_injected(set.name())
            };
        }
        Verdict::Refuses(error) => {
            return SidecarSetReport {
                reason: Some("RefusesPod".into()),
                message: Some(format!("the pod is refused: {error}")),
                ..not_injected(set.name())
            };
        }
        Verdict::Injects { set, revision } => (*set, *revision),
    };
    let mut alone = pod.clone();
    // Errors of the SidecarSet's own injection are the admission answer's; here only what it adds.
    let _ = inject_chosen(
        &mut alone,
        &[chosen],
        sources.now,
        sources.sort_sidecars_by_name,
        None,
    );
    let before = pod.spec.as_ref();
    let after = alone.spec.as_ref();
    let added = |list: fn(&k8s_openapi::api::core::v1::PodSpec) -> &[Container]| {
        let old = before.map(list).unwrap_or_default();
        after
            .map(list)
            .unwrap_or_default()
            .iter()
            .filter(|container| !old.contains(container))
            .map(|container| Added {
                name: container.name.clone(),
                image: container.image.clone(),
                replaces: old.iter().any(|c| c.name == container.name),
            })
            .collect::<Vec<_>>()
    };
    let containers = added(|spec| &spec.containers);
    let init_containers = added(|spec| spec.init_containers.as_deref().unwrap_or_default());
    let had: BTreeSet<&str> = before
        .and_then(|spec| spec.volumes.as_deref())
        .unwrap_or_default()
        .iter()
        .map(|v| v.name.as_str())
        .collect();
    let volumes = after
        .and_then(|spec| spec.volumes.as_deref())
        .unwrap_or_default()
        .iter()
        .map(|v| v.name.clone())
        .filter(|name| !had.contains(name.as_str()) && claimed_volumes.insert(name.clone()))
        .collect();
    let listed = crate::podmarks::sidecarset::annotation(pod, keys::SIDECARSET_INJECTED_LIST);
    SidecarSetReport {
        name: set.name().to_string(),
        injects: true,
        already_injected: listed.is_some_and(|list| list.split(',').any(|n| n == set.name())),
        reason: None,
        message: None,
        revision: Some(revision_report(set, chosen, choice)),
        init_containers,
        containers,
        volumes,
    }
}

fn revision_report(
    set: &SidecarSet,
    chosen: &SidecarSet,
    choice: Option<RevisionChoice>,
) -> RevisionReport {
    let named = requested(set).map(requested_text);
    let (pick, why) = match choice {
        None => (None, None),
        Some(RevisionChoice { pick, why }) => {
            let picked = match pick {
                Pick::History => "history",
                Pick::Latest => "latest",
            };
            (Some(picked.to_string()), Some(pick_text(why, pick)))
        }
    };
    RevisionReport {
        controller_revision: stamped_revision(chosen),
        hash: chosen
            .annotation(keys::SIDECARSET_HASH)
            .unwrap_or("")
            .to_string(),
        requested: named,
        pick,
        why,
    }
}

fn requested_text(revision: &SidecarSetInjectRevision) -> String {
    let policy = revision.policy.as_deref().unwrap_or("Always");
    match (&revision.revision_name, &revision.custom_version) {
        (Some(name), _) => format!("revisionName {name} (policy {policy})"),
        (None, Some(version)) => format!("customVersion {version} (policy {policy})"),
        (None, None) => format!("policy {policy}"),
    }
}

fn pick_text(why: PickReason, pick: Pick) -> String {
    match why {
        PickReason::UpdatePaused => {
            "spec.updateStrategy.paused: new pods keep the named revision".into()
        }
        PickReason::PolicyAlways => "every new pod gets the named revision".into(),
        PickReason::OutsideUpdateSelector => {
            "policy Partial and spec.updateStrategy.selector does not select the pod: the named revision"
                .into()
        }
        PickReason::NoPercentagePartition => {
            "policy Partial without a percentage spec.updateStrategy.partition: the latest".into()
        }
        PickReason::Drawn { probability } => {
            let drawn = match pick {
                Pick::History => "the named revision",
                Pick::Latest => "the latest",
            };
            format!(
                "policy Partial: each new pod gets the named revision with a chance of {}% (spec.updateStrategy.partition), drawn per pod; this time {drawn}",
                probability * 100.0
            )
        }
    }
}

/// Launch priority on the injected pod: each container's priority and, when they differ, the
/// barrier key it waits for.
fn launch_priority(injected: &Pod, prioritized: &Pod, applied: bool) -> LaunchPriority {
    let containers = |pod: &Pod| -> Vec<Container> {
        pod.spec
            .as_ref()
            .map(|spec| spec.containers.clone())
            .unwrap_or_default()
    };
    let priorities = match container_priorities(injected) {
        Ok(priorities) => priorities,
        Err(error) => {
            return LaunchPriority {
                ordered: false,
                reason: format!("the pod is refused: {error}"),
                barrier: None,
                containers: Vec::new(),
            };
        }
    };
    let ordered_annotation = is_ordered(injected);
    let all_equal = priorities.windows(2).all(|pair| pair[0] == pair[1]);
    let ordered = applied && priorities.len() > 1 && !all_equal;
    let barrier_key = |container: &Container| {
        let env = container.env.as_deref()?.last()?;
        if env.name != keys::ENV_CONTAINER_BARRIER {
            return None;
        }
        let key = env.value_from.as_ref()?.config_map_key_ref.as_ref()?;
        Some((key.name.clone(), key.key.clone()))
    };
    let prioritized_containers = containers(prioritized);
    let barrier = ordered
        .then(|| prioritized_containers.first().and_then(barrier_key))
        .flatten()
        .map(|(name, _)| name);
    let reason = if priorities.len() <= 1 {
        "one container: nothing to order".to_string()
    } else if all_equal {
        format!(
            "every container has priority {}: nothing to order",
            priorities.first().copied().unwrap_or(0)
        )
    } else if ordered_annotation {
        format!(
            "{}: {}: containers start in the order they are listed",
            keys::CONTAINER_LAUNCH_PRIORITY,
            keys::CONTAINER_LAUNCH_PRIORITY_ORDERED
        )
    } else {
        format!(
            "containers start by their {} (highest first), each behind its barrier key",
            keys::ENV_CONTAINER_PRIORITY
        )
    };
    LaunchPriority {
        ordered,
        reason,
        barrier,
        containers: prioritized_containers
            .iter()
            .zip(priorities)
            .map(|(container, priority)| ContainerPriority {
                name: container.name.clone(),
                priority,
                barrier_key: ordered
                    .then(|| barrier_key(container).map(|(_, key)| key))
                    .flatten(),
            })
            .collect(),
    }
}
