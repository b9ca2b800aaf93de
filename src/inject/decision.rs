//! Which SidecarSets a new pod gets, and why it does not get each of the others: the one
//! decision the pod webhook injects by and `kruise-webhook explain` prints.
//!
//! Each SidecarSet is judged by OpenKruise's filters in OpenKruise's order (injection paused,
//! namespace selector, pod selector, the revision a set that names one gives the pod), then the
//! bases of matched canaries are replaced by their canaries. Every filter answers with its reason
//! ([`Skip`]) instead of a bare `false`; a SidecarSet that cannot be judged refuses the pod
//! ([`Verdict::Refuses`]), as admission denies it with that error.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;

use super::revision::{self, HistoryRevision, InjectionRevisions, Pick, PickError, PickReason};
use crate::api::SidecarSet;
use crate::k8s::history::injection_revision_not_found;
use crate::k8s::selector::{self, Labels, SelectorError};

/// Everything injection needs besides the pod. Borrowed, so a request never copies the catalogue.
pub struct InjectionContext<'a> {
    /// SidecarSets in catalogue order (namespace-pinned first, then by name).
    pub sidecarsets: &'a [Arc<SidecarSet>],
    /// Labels of the pod's Namespace object, if the Namespace is known.
    pub namespace_labels: Option<&'a Labels>,
    /// Admission time as RFC 3339 UTC with second precision, written into the hash annotations.
    pub now: &'a str,
    /// OpenKruise's `EnableSortSidecarContainerByName` gate: sort injected containers by name.
    pub sort_sidecars_by_name: bool,
    /// What the SidecarSets that name a revision to inject resolved to; `None` without a
    /// history, where every such revision is missing.
    pub revisions: Option<&'a InjectionRevisions>,
    /// Uniform in [0, 1): the chance under `Partial` ([`super::revision::pick`]); seeded in tests.
    pub draw: &'a dyn Fn() -> f64,
}

/// The draw of production: the thread's random source.
pub fn random_draw() -> f64 {
    fastrand::f64()
}

/// Why a pod cannot be injected. Each message names the object and field at fault.
#[derive(Debug, thiserror::Error)]
pub enum InjectError {
    #[error("sidecarset {sidecarset}: {source}")]
    Selector {
        sidecarset: String,
        source: SelectorError,
    },
    #[error("pod({pod}) invalid annotations[{key}] value {value}, unmarshal failed: {message}")]
    InvalidHashAnnotation {
        pod: String,
        key: &'static str,
        value: String,
        message: String,
    },
    #[error(
        "sidecarset {sidecarset}: spec.patchPodMetadata: cannot merge annotation {key}: {message}"
    )]
    PatchPodMetadata {
        sidecarset: String,
        key: String,
        message: String,
    },
    #[error("sidecarset {sidecarset}: {field}: {message}")]
    ResourcesPolicy {
        sidecarset: String,
        /// `spec.containers[i].resourcesPolicy` or `spec.initContainers[i].resourcesPolicy`.
        field: String,
        message: String,
    },
    /// The revision `injectionStrategy.revision` names cannot be injected: OpenKruise's
    /// lookup error, as its webhook answers.
    #[error("{0}")]
    Revision(String),
    #[error("sidecarset {sidecarset}: spec.updateStrategy.partition: {message}")]
    Partition { sidecarset: String, message: String },
}

/// Is the pod still running or about to run? Finished and terminating pods are left alone.
pub fn is_active(pod: &Pod) -> bool {
    crate::podmarks::PodView::is_active(pod)
}

/// Namespace used for matching: the pod's, or `default` when the request left it empty.
pub fn pod_namespace(pod: &Pod) -> &str {
    match pod.metadata.namespace.as_deref() {
        Some(ns) if !ns.is_empty() => ns,
        _ => "default",
    }
}

/// Why a SidecarSet injects nothing into a pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Skip {
    /// The pod has finished or is terminating: nothing is injected into it.
    PodNotActive,
    /// `spec.injectionStrategy.paused` is true.
    InjectionPaused,
    /// `spec.namespaceSelector` is set and the pod's Namespace is not known.
    NamespaceUnknown,
    /// `spec.namespaceSelector` does not select the pod's Namespace.
    NamespaceNotSelected,
    /// `spec.selector` is absent: the SidecarSet selects no pod.
    NoPodSelector,
    /// `spec.selector` is empty: OpenKruise takes it to select no pod.
    EmptyPodSelector,
    /// `spec.selector` does not select the pod's labels.
    PodNotSelected,
    /// A canary of this SidecarSet also matches the pod and is injected instead.
    CanaryBaseReplaced { canary: String },
}

impl Skip {
    /// A stable name of the reason, for scripts.
    pub fn code(&self) -> &'static str {
        match self {
            Skip::PodNotActive => "PodNotActive",
            Skip::InjectionPaused => "InjectionPaused",
            Skip::NamespaceUnknown => "NamespaceUnknown",
            Skip::NamespaceNotSelected => "NamespaceNotSelected",
            Skip::NoPodSelector => "NoPodSelector",
            Skip::EmptyPodSelector => "EmptyPodSelector",
            Skip::PodNotSelected => "PodNotSelected",
            Skip::CanaryBaseReplaced { .. } => "CanaryBaseReplaced",
        }
    }
}

impl fmt::Display for Skip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Skip::PodNotActive => {
                f.write_str("the pod has finished or is terminating: nothing is injected")
            }
            Skip::InjectionPaused => f.write_str("spec.injectionStrategy.paused is true"),
            Skip::NamespaceUnknown => {
                f.write_str("spec.namespaceSelector is set and the pod's Namespace is not known")
            }
            Skip::NamespaceNotSelected => {
                f.write_str("spec.namespaceSelector does not select the pod's Namespace")
            }
            Skip::NoPodSelector => f.write_str("spec.selector is absent: it selects no pod"),
            Skip::EmptyPodSelector => f.write_str("spec.selector is empty: it selects no pod"),
            Skip::PodNotSelected => f.write_str("spec.selector does not select the pod's labels"),
            Skip::CanaryBaseReplaced { canary } => write!(
                f,
                "its canary SidecarSet {canary:?} also matches the pod and is injected instead"
            ),
        }
    }
}

/// The revision a SidecarSet that names one (`injectionStrategy.revision`) gives a pod.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RevisionChoice {
    pub pick: Pick,
    pub why: PickReason,
}

/// What one SidecarSet does to a pod.
#[derive(Debug)]
pub enum Verdict<'a> {
    /// It is injected; `set` as the pod gets it: the SidecarSet itself, or the one the revision
    /// it names restores (`revision` says which, for a SidecarSet that names one).
    Injects {
        set: &'a SidecarSet,
        revision: Option<RevisionChoice>,
    },
    /// It is not injected.
    Skipped(Skip),
    /// It cannot be judged for this pod: the pod is refused with this error.
    Refuses(InjectError),
}

impl Verdict<'_> {
    pub fn injects(&self) -> bool {
        matches!(self, Verdict::Injects { .. })
    }
}

/// Every SidecarSet judged for one pod, in catalogue order.
#[derive(Debug)]
pub struct Decision<'a> {
    pub verdicts: Vec<(&'a Arc<SidecarSet>, Verdict<'a>)>,
}

impl<'a> Decision<'a> {
    /// What admission injects: the SidecarSets as the pod gets them, in catalogue order; or the
    /// first refusal in catalogue order, which denies the pod.
    pub fn into_injected(self) -> Result<Vec<&'a SidecarSet>, InjectError> {
        let mut injected = Vec::with_capacity(self.verdicts.len());
        for (_, verdict) in self.verdicts {
            match verdict {
                Verdict::Injects { set, .. } => injected.push(set),
                Verdict::Skipped(_) => {}
                Verdict::Refuses(error) => return Err(error),
            }
        }
        Ok(injected)
    }

    /// The first refusal, in catalogue order.
    pub fn refusal(&self) -> Option<&InjectError> {
        self.verdicts.iter().find_map(|(_, verdict)| match verdict {
            Verdict::Refuses(error) => Some(error),
            _ => None,
        })
    }
}

/// Judges every SidecarSet of `ctx` for `pod`.
pub fn decide<'a>(pod: &Pod, ctx: &InjectionContext<'a>) -> Decision<'a> {
    if !is_active(pod) {
        let skipped = |set| (set, Verdict::Skipped(Skip::PodNotActive));
        return Decision {
            verdicts: ctx.sidecarsets.iter().map(skipped).collect(),
        };
    }
    let mut verdicts: Vec<_> = ctx
        .sidecarsets
        .iter()
        .map(|set| {
            let verdict = judge(set, pod, ctx).unwrap_or_else(Verdict::Refuses);
            (set, verdict)
        })
        .collect();
    replace_canary_bases(&mut verdicts);
    Decision { verdicts }
}

/// The SidecarSets that apply to `pod`, in catalogue order, canary bases removed; or the first
/// refusal.
pub fn matching_sidecarsets<'a>(
    pod: &Pod,
    ctx: &InjectionContext<'a>,
) -> Result<Vec<&'a SidecarSet>, InjectError> {
    decide(pod, ctx).into_injected()
}

/// One SidecarSet's filters, in OpenKruise's order.
fn judge<'a>(
    set: &'a Arc<SidecarSet>,
    pod: &Pod,
    ctx: &InjectionContext<'a>,
) -> Result<Verdict<'a>, InjectError> {
    if set.injection_paused() {
        return Ok(Verdict::Skipped(Skip::InjectionPaused));
    }
    if let Some(skip) = namespace_skip(set, ctx.namespace_labels)? {
        return Ok(Verdict::Skipped(skip));
    }
    let Some(pod_selector) = &set.spec.selector else {
        return Ok(Verdict::Skipped(Skip::NoPodSelector));
    };
    if selector::is_empty(pod_selector) {
        return Ok(Verdict::Skipped(Skip::EmptyPodSelector));
    }
    let selected = selector::matches(pod_selector, pod.metadata.labels.as_ref(), "spec.selector")
        .map_err(|source| selector_error(set, source))?;
    if !selected {
        return Ok(Verdict::Skipped(Skip::PodNotSelected));
    }
    let (set, revision) = suitable_revision(set, pod, ctx)?;
    Ok(Verdict::Injects { set, revision })
}

/// A matched canary replaces its base: the base, if it matched too, is skipped.
fn replace_canary_bases(verdicts: &mut [(&Arc<SidecarSet>, Verdict<'_>)]) {
    let mut canaries: HashMap<&str, &str> = HashMap::new();
    for (_, verdict) in verdicts.iter() {
        if let Verdict::Injects { set, .. } = verdict
            && let Some(base) = set.canary_base()
        {
            canaries.entry(base).or_insert(set.name());
        }
    }
    if canaries.is_empty() {
        return;
    }
    let replaced: Vec<(usize, String)> = verdicts
        .iter()
        .enumerate()
        .filter_map(|(position, (_, verdict))| match verdict {
            Verdict::Injects { set, .. } => canaries
                .get(set.name())
                .map(|canary| (position, canary.to_string())),
            _ => None,
        })
        .collect();
    for (position, canary) in replaced {
        verdicts[position].1 = Verdict::Skipped(Skip::CanaryBaseReplaced { canary });
    }
}

/// Why `set`'s `namespaceSelector` leaves the pod's Namespace out, if it does. The selector needs
/// the Namespace's labels to be known; they carry the name label `kubernetes.io/metadata.name`
/// even where a pre-1.21 apiserver left it out ([`crate::k8s::selector::namespace_labels`]), so
/// a set pinned to one namespace (v1alpha1's `spec.namespace`, converted) matches it there too.
pub fn namespace_skip(
    set: &SidecarSet,
    namespace_labels: Option<&Labels>,
) -> Result<Option<Skip>, InjectError> {
    let Some(namespace_selector) = &set.spec.namespace_selector else {
        return Ok(None);
    };
    let Some(labels) = namespace_labels else {
        return Ok(Some(Skip::NamespaceUnknown));
    };
    let selected = selector::matches(namespace_selector, Some(labels), "spec.namespaceSelector")
        .map_err(|source| selector_error(set, source))?;
    Ok((!selected).then_some(Skip::NamespaceNotSelected))
}

/// Whether `set`'s `namespaceSelector` selects a Namespace with `namespace_labels` (`None`:
/// unknown); see [`namespace_skip`].
pub fn namespace_matches(
    set: &SidecarSet,
    namespace_labels: Option<&Labels>,
) -> Result<bool, InjectError> {
    namespace_skip(set, namespace_labels).map(|skip| skip.is_none())
}

fn selector_error(set: &SidecarSet, source: SelectorError) -> InjectError {
    InjectError::Selector {
        sidecarset: set.name().to_string(),
        source,
    }
}

/// The set a new pod gets of `set`: itself, or the revision its `injectionStrategy.revision`
/// names (OpenKruise's `getSuitableRevisionSidecarSet` at CREATE), with the choice. A revision
/// that cannot be found refuses the pod, whichever the pod would have got.
fn suitable_revision<'a>(
    set: &'a Arc<SidecarSet>,
    pod: &Pod,
    ctx: &InjectionContext<'a>,
) -> Result<(&'a SidecarSet, Option<RevisionChoice>), InjectError> {
    let Some(requested) = revision::requested(set) else {
        return Ok((set, None));
    };
    let restored = match ctx.revisions.and_then(|r| r.get(set.name())) {
        Some(HistoryRevision::Restored(restored)) => restored,
        Some(HistoryRevision::Unresolved(message) | HistoryRevision::Pending(message)) => {
            return Err(InjectError::Revision(message.clone()));
        }
        None => {
            let message = injection_revision_not_found(requested, set.name());
            return Err(InjectError::Revision(message));
        }
    };
    let picked = revision::pick(set, requested, pod.metadata.labels.as_ref(), ctx.draw);
    match picked {
        Ok((pick, why)) => {
            let chosen: &SidecarSet = match pick {
                Pick::History => restored,
                Pick::Latest => set,
            };
            Ok((chosen, Some(RevisionChoice { pick, why })))
        }
        Err(PickError::Selector(source)) => Err(selector_error(set, source)),
        Err(PickError::Partition(message)) => Err(InjectError::Partition {
            sidecarset: set.name().to_string(),
            message,
        }),
    }
}

#[cfg(test)]
mod tests;
