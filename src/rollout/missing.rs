//! The SidecarSet controller's safety net, decided: which pods a SidecarSet selects that lack its
//! containers — never injected (created while the webhook was down or bypassed, or before the
//! set existed) or injected with another set of containers (the set changed its containers since)
//! — and what the set's `PodsMissingSidecars` condition and each pod's event say about them.
//! It only reports: no pod is ever rewritten for it.
//!
//! A pod's containers belong to a set by name, as OpenKruise marks them (the `sidecarList` of
//! its `kruise.io/sidecarset-hash` entry lists the set's sidecar names): a sidecar is the pod
//! container of its name, or its two copies `<name>-1` and `<name>-2` when it is hot-upgraded
//! (the idle copy running the empty image still counts); an init container is looked for among
//! the pod's init containers.

use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::runtime::events::EventType;

use super::plan::RolloutError;
use super::round::{PlannedEvent, Subject};
use crate::api::{SidecarContainer, SidecarSet, keys};
use crate::inject::sidecar::{InjectError, namespace_matches};
use crate::k8s::selector::{self, Labels, SelectorError};
use crate::podmarks::sidecarset::{hot_upgrade_copies, is_injected};
use crate::podmarks::{HashAnnotation, PodView};

/// The pod containers a SidecarSet's injection adds, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExpectedContainers {
    pub containers: Vec<String>,
    pub init_containers: Vec<String>,
}

impl ExpectedContainers {
    /// What injecting `set` adds: a hot-upgraded sidecar becomes two copies, among init
    /// containers only a native sidecar (`restartPolicy: Always`) does, as the injector builds
    /// them.
    pub fn of(set: &SidecarSet) -> Self {
        let names = |list: &[SidecarContainer], init: bool| {
            let mut names = Vec::new();
            for sidecar in list {
                let name = sidecar.name();
                if sidecar.is_hot_upgrade() && (!init || sidecar.is_native_sidecar()) {
                    let (first, second) = hot_upgrade_copies(name);
                    names.extend([first, second]);
                } else {
                    names.push(name.to_string());
                }
            }
            names.sort();
            names.dedup();
            names
        };
        Self {
            containers: names(set.containers(), false),
            init_containers: names(set.init_containers(), true),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.containers.is_empty() && self.init_containers.is_empty()
    }
}

/// Why a pod lacks a SidecarSet's containers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MissingReason {
    /// None of its containers, and no `kruise.io/sidecarset-hash` entry or injected-list name
    /// for it: the webhook never injected the set into the pod.
    NeverInjected { missing: Vec<String> },
    /// The pod carries some of its containers, or records the set as injected, but lacks others:
    /// injected with another set of containers than the set has now.
    OtherContainers {
        missing: Vec<String>,
        carried: Vec<String>,
    },
}

impl MissingReason {
    /// The containers the pod lacks.
    pub fn missing(&self) -> &[String] {
        match self {
            MissingReason::NeverInjected { missing }
            | MissingReason::OtherContainers { missing, .. } => missing,
        }
    }

    /// A short word for the condition's list of names.
    pub fn short(&self) -> &'static str {
        match self {
            MissingReason::NeverInjected { .. } => "never injected",
            MissingReason::OtherContainers { .. } => "other containers",
        }
    }

    /// The reason in a sentence.
    pub fn describe(&self) -> String {
        match self {
            MissingReason::NeverInjected { missing } => format!(
                "never injected: the pod has none of its containers ({}) and records no injection of it",
                missing.join(", ")
            ),
            MissingReason::OtherContainers { missing, carried } if carried.is_empty() => format!(
                "injected with other containers: the pod lacks {}",
                missing.join(", ")
            ),
            MissingReason::OtherContainers { missing, carried } => format!(
                "injected with other containers: the pod lacks {} and carries {}",
                missing.join(", "),
                carried.join(", ")
            ),
        }
    }
}

/// A pod that lacks a SidecarSet's containers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingPod {
    pub namespace: String,
    pub name: String,
    pub uid: String,
    pub reason: MissingReason,
}

impl MissingPod {
    /// `namespace/name`.
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
}

/// The safety net's verdict on one SidecarSet.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MissingSidecars {
    /// `injectionStrategy.paused`: new pods are meant to start without the set's containers, so
    /// none is counted.
    pub paused: bool,
    /// The pods that lack its containers, sorted by namespace and name.
    pub pods: Vec<MissingPod>,
}

impl MissingSidecars {
    pub fn count(&self) -> usize {
        self.pods.len()
    }

    /// `namespace/name` of each pod, sorted.
    pub fn names(&self) -> Vec<String> {
        self.pods.iter().map(MissingPod::key).collect()
    }
}

/// Does `set` pick `pod` for injection by its namespace and selector, as the webhook does? A nil
/// or empty selector injects nothing.
fn selects<'n, P: PodView>(
    set: &SidecarSet,
    pod: &P,
    namespace_labels: &impl Fn(&str) -> Option<&'n Labels>,
) -> Result<bool, RolloutError> {
    let selector_error = |source| RolloutError::Selector {
        sidecarset: set.name().to_string(),
        source,
    };
    let Some(pod_selector) = selector::non_empty(set.spec.selector.as_ref()) else {
        return Ok(false);
    };
    let in_namespace =
        namespace_matches(set, namespace_labels(pod.namespace())).map_err(|error| match error {
            InjectError::Selector { source, .. } => selector_error(source),
            other => selector_error(SelectorError {
                field: "spec.namespaceSelector".into(),
                message: other.to_string(),
            }),
        })?;
    if !in_namespace {
        return Ok(false);
    }
    selector::matches(pod_selector, pod.labels(), "spec.selector").map_err(selector_error)
}

/// The pods `set` selects (its namespace and pod selectors, active pods, as the rollout) that lack
/// its containers. `canaries` are the SidecarSets that name `set` as their canary base: a pod one
/// of them selects gets the canary instead, so it is theirs to check. `namespace_labels` answers
/// with the labels of a Namespace, `None` when unknown.
pub fn missing_sidecars<'n, P: PodView>(
    set: &SidecarSet,
    canaries: &[&SidecarSet],
    pods: &[Arc<P>],
    namespace_labels: impl Fn(&str) -> Option<&'n Labels>,
) -> Result<MissingSidecars, RolloutError> {
    if set.injection_paused() {
        return Ok(MissingSidecars {
            paused: true,
            pods: Vec::new(),
        });
    }
    let expected = ExpectedContainers::of(set);
    let mut found = MissingSidecars::default();
    if expected.is_empty() {
        return Ok(found);
    }
    let name = set.name();
    for pod in pods {
        let pod = pod.as_ref();
        if !pod.is_active() || !selects(set, pod, &namespace_labels)? {
            continue;
        }
        let mut overridden = false;
        for canary in canaries.iter().filter(|c| !c.injection_paused()) {
            overridden |= selects(canary, pod, &namespace_labels)?;
        }
        if overridden {
            continue;
        }
        let (mut missing, mut carried) = (Vec::new(), Vec::new());
        let has = |name: &String| pod.containers().any(|c| c.name == name);
        let has_init = |name: &String| pod.init_container_names().any(|c| c == name);
        for (names, present) in [
            (&expected.containers, &has as &dyn Fn(&String) -> bool),
            (&expected.init_containers, &has_init),
        ] {
            for container in names {
                if present(container) {
                    carried.push(container.clone());
                } else {
                    missing.push(container.clone());
                }
            }
        }
        if missing.is_empty() {
            continue;
        }
        let recorded = pod
            .recorded_hashes(HashAnnotation::Hash)
            .get(name)
            .is_some()
            || is_injected(pod, name);
        let reason = if carried.is_empty() && !recorded {
            MissingReason::NeverInjected { missing }
        } else {
            MissingReason::OtherContainers { missing, carried }
        };
        found.pods.push(MissingPod {
            namespace: pod.namespace().to_string(),
            name: pod.name().to_string(),
            uid: pod.uid().to_string(),
            reason,
        });
    }
    found
        .pods
        .sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    Ok(found)
}

/// How many pods the condition's message names.
pub const NAMED_IN_CONDITION: usize = 5;

/// The `PodsMissingSidecars` condition `verdict` calls for: its status, reason and message.
fn wanted_condition(verdict: &MissingSidecars) -> (&'static str, &'static str, String) {
    if verdict.paused {
        return (
            keys::CONDITION_FALSE,
            "InjectionPaused",
            "injection is paused: pods without its sidecars are not counted".into(),
        );
    }
    if verdict.pods.is_empty() {
        return (
            keys::CONDITION_FALSE,
            "AllPodsInjected",
            "every pod it selects carries its sidecars".into(),
        );
    }
    let named: Vec<String> = verdict
        .pods
        .iter()
        .take(NAMED_IN_CONDITION)
        .map(|pod| format!("{} ({})", pod.key(), pod.reason.short()))
        .collect();
    let count = verdict.count();
    let more = count - named.len();
    let pods = if count == 1 { "pod lacks" } else { "pods lack" };
    let mut message = format!("{count} {pods} its sidecars: {}", named.join(", "));
    if more > 0 {
        message.push_str(&format!(" and {more} more"));
    }
    message.push_str("; a pod gets them only when recreated through the webhook");
    (keys::CONDITION_TRUE, keys::SIDECARS_MISSING_REASON, message)
}

/// The conditions a set should carry given its `current` ones and the safety net's `verdict`;
/// `None` when they already say it. Other condition types are kept as they are; the transition
/// time moves only with the status.
pub fn pods_missing_condition(
    current: &[Condition],
    verdict: &MissingSidecars,
    generation: Option<i64>,
    now: &Time,
) -> Option<Vec<Condition>> {
    let (status, reason, message) = wanted_condition(verdict);
    let existing = current
        .iter()
        .find(|c| c.type_ == keys::SIDECARSET_PODS_MISSING_SIDECARS);
    if let Some(c) = existing
        && c.status == status
        && c.reason == reason
        && c.message == message
    {
        return None;
    }
    let condition = Condition {
        type_: keys::SIDECARSET_PODS_MISSING_SIDECARS.into(),
        status: status.into(),
        reason: reason.into(),
        message,
        observed_generation: generation,
        last_transition_time: existing
            .filter(|c| c.status == status)
            .map_or_else(|| now.clone(), |c| c.last_transition_time.clone()),
    };
    let others = current
        .iter()
        .filter(|c| c.type_ != keys::SIDECARSET_PODS_MISSING_SIDECARS)
        .cloned();
    Some(others.chain([condition]).collect())
}

/// The Warning event on a pod that lacks `sidecarset`'s containers.
pub fn missing_event(sidecarset: &str, pod: &MissingPod) -> PlannedEvent {
    PlannedEvent {
        about: Subject::Pod,
        type_: EventType::Warning,
        reason: keys::SIDECARS_MISSING_REASON,
        note: format!(
            "sidecarset {sidecarset} selects this pod, which lacks its sidecars: {}; it gets them only when recreated through the webhook",
            pod.reason.describe()
        ),
        action: "Inject",
    }
}

#[cfg(test)]
mod tests;
