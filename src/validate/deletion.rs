//! OpenKruise's deletion protection (`policy.kruise.io/delete-protection: Always | Cascading`,
//! the `ResourcesDeletionProtection` feature), as pure decisions: Kruise's own workloads
//! ([`deletion_protection`], called by their validators) and the Kubernetes objects OpenKruise
//! guards on DELETE — Namespaces, CustomResourceDefinitions, Deployments, ReplicaSets, apps/v1
//! StatefulSets, Services and Ingresses ([`verdict`]).
//!
//! `Always` refuses every deletion. `Cascading` refuses a workload's while it has replicas, a
//! Namespace's while it holds active pods or bound claims, a CRD's while objects of it remain (the
//! last two need what the cluster holds: [`Verdict::Count`], then [`namespace_refusal`] or
//! [`custom_resources_refusal`] on what was counted); Services and Ingresses know `Always` only.
//! An object already being deleted passes. Messages and their order are OpenKruise's.

use std::collections::BTreeMap;

/// Label asking the webhook to refuse deleting the object.
pub const DELETION_PROTECTION_LABEL: &str = "policy.kruise.io/delete-protection";
pub const DELETION_PROTECTION_ALWAYS: &str = "Always";
pub const DELETION_PROTECTION_CASCADING: &str = "Cascading";

const FORBIDDEN_BY: &str = "forbidden by ResourcesProtectionDeletion for";

/// Why deleting a workload is refused (HTTP 403), if it is: label
/// `policy.kruise.io/delete-protection` is `Always`, or `Cascading` while replicas remain.
/// Objects already being deleted pass.
pub fn deletion_protection(
    labels: Option<&BTreeMap<String, String>>,
    replicas: Option<i32>,
    deleting: bool,
) -> Option<String> {
    match protection(labels, deleting)? {
        Protection::Always(value) => Some(always(value)),
        Protection::Cascading(value) => with_replicas(value, replicas),
    }
}

fn with_replicas(value: &str, replicas: Option<i32>) -> Option<String> {
    match replicas {
        Some(replicas) if replicas > 0 => Some(format!(
            "{FORBIDDEN_BY} {DELETION_PROTECTION_LABEL}={value} and replicas {replicas}>0"
        )),
        _ => None,
    }
}

/// The protection an object's label asks for: `None` for no label, another value, or an object
/// already being deleted.
enum Protection<'a> {
    Always(&'a str),
    Cascading(&'a str),
}

fn protection(labels: Option<&BTreeMap<String, String>>, deleting: bool) -> Option<Protection<'_>> {
    if deleting {
        return None;
    }
    let value = labels.and_then(|l| l.get(DELETION_PROTECTION_LABEL))?;
    match value.as_str() {
        DELETION_PROTECTION_ALWAYS => Some(Protection::Always(value)),
        DELETION_PROTECTION_CASCADING => Some(Protection::Cascading(value)),
        _ => None,
    }
}

fn always(value: &str) -> String {
    format!("{FORBIDDEN_BY} {DELETION_PROTECTION_LABEL}={value}")
}

/// What a protected Kubernetes object is, with what its `Cascading` rule looks at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Guarded {
    /// Deployment, ReplicaSet, apps/v1 StatefulSet: `Cascading` while `spec.replicas` > 0.
    Workload { replicas: Option<i32> },
    /// Service, Ingress: `Always` only.
    AlwaysOnly,
    /// `Cascading` while the namespace holds active pods or bound claims.
    Namespace { name: String },
    /// `Cascading` while objects of the CRD's stored version remain.
    CustomResourceDefinition(CustomResources),
}

/// The objects of a CRD, as a list of them is addressed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomResources {
    pub group: String,
    /// The stored version (the first version marked `storage`).
    pub version: String,
    /// `spec.names.plural`.
    pub plural: String,
    /// `spec.names.kind`.
    pub kind: String,
}

impl std::fmt::Display for CustomResources {
    /// OpenKruise's words for the list it makes: `<group>/<version>, Kind=<kind>List`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}, Kind={}List", self.group, self.version, self.kind)
    }
}

/// The decision on a DELETE, or what it needs counted first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Allow,
    /// Refused (HTTP 403), with OpenKruise's message.
    Refuse(String),
    /// `Cascading` on a Namespace or CRD: decided by [`namespace_refusal`] or
    /// [`custom_resources_refusal`] once this is counted.
    Count(Guarded),
}

/// The decision on deleting an object with these labels.
pub fn verdict(
    labels: Option<&BTreeMap<String, String>>,
    deleting: bool,
    guarded: Guarded,
) -> Verdict {
    let Some(protection) = protection(labels, deleting) else {
        return Verdict::Allow;
    };
    match (protection, guarded) {
        (Protection::Always(value), _) => Verdict::Refuse(always(value)),
        (Protection::Cascading(value), Guarded::Workload { replicas }) => {
            with_replicas(value, replicas).map_or(Verdict::Allow, Verdict::Refuse)
        }
        (Protection::Cascading(_), Guarded::AlwaysOnly) => Verdict::Allow,
        (Protection::Cascading(_), guarded) => Verdict::Count(guarded),
    }
}

/// What a `Cascading` Namespace holds, each count or why it could not be counted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamespaceContents {
    /// Pods neither finished (`Succeeded`, `Failed`) nor being deleted.
    pub active_pods: Result<usize, String>,
    /// Claims `Bound` and not being deleted.
    pub bound_claims: Result<usize, String>,
}

/// The field selector of the pods that may be active (Kubernetes' `IsPodActive`: neither
/// finished nor being deleted): the apiserver leaves out the finished ones, and those not being
/// deleted count.
pub const UNFINISHED_PODS: &str = "status.phase!=Succeeded,status.phase!=Failed";

/// Whether a claim keeps a `Cascading` namespace (OpenKruise: bound and not being deleted).
pub fn is_bound_claim(phase: Option<&str>, deleting: bool) -> bool {
    !deleting && phase == Some("Bound")
}

/// Why deleting a `Cascading` Namespace is refused, if it is: a count that failed refuses it (the
/// protection holds when it cannot be checked), pods first, as OpenKruise lists them first.
pub fn namespace_refusal(contents: &NamespaceContents) -> Option<String> {
    let value = DELETION_PROTECTION_CASCADING;
    match &contents.active_pods {
        Err(error) => return Some(format!("{FORBIDDEN_BY} list pods error: {error}")),
        Ok(active) if *active > 0 => {
            return Some(format!(
                "{FORBIDDEN_BY} {DELETION_PROTECTION_LABEL}={value} and active pods {active}>0"
            ));
        }
        Ok(_) => {}
    }
    match &contents.bound_claims {
        Err(error) => Some(format!("{FORBIDDEN_BY} list pvc error: {error}")),
        Ok(bound) if *bound > 0 => Some(format!(
            "{FORBIDDEN_BY} {DELETION_PROTECTION_LABEL}={value} and \"Bound\" status pvc {bound}>0"
        )),
        Ok(_) => None,
    }
}

/// Why deleting a `Cascading` CRD is refused, if it is: objects not being deleted remain, or
/// they could not be counted.
pub fn custom_resources_refusal(
    resources: &CustomResources,
    active: &Result<usize, String>,
) -> Option<String> {
    match active {
        Err(error) => Some(format!("failed to list CRs of {resources}: {error}")),
        Ok(active) if *active > 0 => Some(format!(
            "{FORBIDDEN_BY} {DELETION_PROTECTION_LABEL}={DELETION_PROTECTION_CASCADING} and active CRs {active}>0"
        )),
        Ok(_) => None,
    }
}

#[cfg(test)]
mod tests;
