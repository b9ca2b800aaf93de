//! The switch's decision, pure: from a snapshot of what was read, the findings (each with its
//! reason) and the ordered, idempotent steps. Applying the steps and reading again yields a
//! snapshot whose plan has no steps.

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};

use crate::tls::bundle_targets::{RemovedEntry, remove_unserved};

/// OpenKruise's namespace, and its manager's Deployment there.
pub const MANAGER_NAMESPACE: &str = "kruise-system";
pub const MANAGER_DEPLOYMENT: &str = "kruise-controller-manager";

/// `namespace/name` of the manager's Deployment, as findings and steps name it.
fn manager() -> String {
    format!("{MANAGER_NAMESPACE}/{MANAGER_DEPLOYMENT}")
}

/// One CRD of `apps.kruise.io` as found, next to the one this project installs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrdState {
    pub name: String,
    /// `status.storedVersions` of the CRD in the cluster.
    pub stored_versions: Vec<String>,
    /// The versions this project's CRD of that name serves.
    pub wanted_versions: Vec<String>,
    /// Whether the cluster's spec differs from this project's.
    pub spec_differs: bool,
}

/// Objects of an OpenKruise kind this project does not run (PodUnavailableBudget, WorkloadSpread, …).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnrunKind {
    pub kind: String,
    pub objects: Vec<String>,
}

/// A SidecarSet this server's webhooks would not serve (the types cannot read it, or the
/// validating webhook would refuse it), and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnservedSidecarSet {
    pub sidecarset: String,
    pub reason: String,
}

/// Something the switch decides on that could not be read (no permission, no answer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable {
    pub what: String,
    pub reason: String,
}

/// OpenKruise's manager's Deployment as read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Manager {
    /// It could not be read (the reason is among [`Snapshot::unreadable`]).
    #[default]
    Unread,
    Absent,
    /// The replicas it asks for.
    Replicas(i32),
}

/// Everything the switch decides on.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// OpenKruise's manager's Deployment.
    pub manager: Manager,
    pub mutating: Vec<MutatingWebhookConfiguration>,
    pub validating: Vec<ValidatingWebhookConfiguration>,
    pub crds: Vec<CrdState>,
    /// This project's CRDs that the cluster does not have (the install creates them).
    pub missing_crds: Vec<String>,
    pub unrun: Vec<UnrunKind>,
    pub unserved_sidecarsets: Vec<UnservedSidecarSet>,
    pub unreadable: Vec<Unreadable>,
}

/// What the switch meets, with the reason an operator reads.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "finding", rename_all = "camelCase")]
pub enum Finding {
    /// OpenKruise's manager still runs: two controllers would act on the same objects.
    ManagerRunning { deployment: String, replicas: i32 },
    /// No manager's Deployment: nothing to scale (OpenKruise not installed there, or already
    /// removed).
    ManagerNotFound { deployment: String },
    /// Entries pointing at paths this server does not serve; with `failurePolicy: Fail` each
    /// refuses every request it matches once it points here.
    UnservedEntries {
        configuration: String,
        entries: Vec<String>,
    },
    /// A CRD whose stored versions this project's CRD does not serve: replacing it would be
    /// refused by the apiserver.
    StoredVersionNotServed { crd: String, versions: Vec<String> },
    /// One of this project's CRDs is not in the cluster: the install creates it.
    CrdNotInstalled { crd: String },
    /// Objects whose protection stops with the switch.
    UnrunObjects { kind: String, objects: Vec<String> },
    /// A SidecarSet this server's webhooks would not serve.
    UnservedSidecarSet { sidecarset: String, reason: String },
    /// Something the switch decides on could not be read: the plan is incomplete.
    Unreadable { what: String, reason: String },
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Finding::ManagerRunning {
                deployment,
                replicas,
            } => write!(
                f,
                "OpenKruise's manager {deployment} runs {replicas} replica(s): two controllers would act on the same objects"
            ),
            Finding::ManagerNotFound { deployment } => write!(
                f,
                "OpenKruise's manager {deployment} not found: nothing to scale"
            ),
            Finding::UnservedEntries {
                configuration,
                entries,
            } => write!(
                f,
                "{configuration}: entries this server does not serve (failurePolicy Fail would refuse what they match): {}",
                entries.join(", ")
            ),
            Finding::StoredVersionNotServed { crd, versions } => write!(
                f,
                "{crd}: status.storedVersions holds {} which this project's CRD does not serve; it cannot be replaced in place",
                versions.join(", ")
            ),
            Finding::CrdNotInstalled { crd } => write!(
                f,
                "{crd} is not installed: nothing to replace (the install creates it)"
            ),
            Finding::UnrunObjects { kind, objects } => write!(
                f,
                "{} {kind} object(s) stay but nothing acts on them (this project does not run {kind}): {}",
                objects.len(),
                listed(objects)
            ),
            Finding::UnservedSidecarSet { sidecarset, reason } => write!(
                f,
                "SidecarSet {sidecarset} would not be served by this server's webhooks (new pods start without its sidecars): {reason}"
            ),
            Finding::Unreadable { what, reason } => write!(
                f,
                "could not read {what} ({reason}): the report is incomplete and --apply refuses to run; run as a cluster administrator"
            ),
        }
    }
}

/// Names shown in a text line: the first few, then how many more.
fn listed(names: &[String]) -> String {
    const SHOWN: usize = 10;
    let mut text = names
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > SHOWN {
        text.push_str(&format!(" and {} more", names.len() - SHOWN));
    }
    text
}

/// Which configuration kind a step edits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum ConfigurationKind {
    MutatingWebhookConfiguration,
    ValidatingWebhookConfiguration,
}

/// One safe, idempotent step, in the order they must run.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "step", rename_all = "camelCase")]
pub enum Step {
    /// Scale OpenKruise's manager to zero (never deleted: switching back scales it up).
    ScaleManagerToZero { deployment: String },
    /// Remove the named entries of one configuration.
    RemoveEntries {
        kind: ConfigurationKind,
        configuration: String,
        entries: Vec<String>,
    },
    /// Replace a CRD in place with this project's (never deleted: that would delete its objects).
    ReplaceCrd { name: String },
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Step::ScaleManagerToZero { deployment } => write!(f, "scale {deployment} to 0"),
            Step::RemoveEntries {
                kind,
                configuration,
                entries,
            } => write!(
                f,
                "remove from {kind:?} {configuration}: {}",
                entries.join(", ")
            ),
            Step::ReplaceCrd { name } => write!(f, "replace CRD {name} in place"),
        }
    }
}

/// The findings and the steps; `blocked` when the switch cannot be taken safely yet (a stored
/// version this project's CRD does not serve, or something it decides on could not be read):
/// then no CRD replacement is planned and `--apply` takes no step at all.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
pub struct Plan {
    pub findings: Vec<Finding>,
    pub steps: Vec<Step>,
    pub blocked: bool,
}

/// The switch's decision over `snapshot`; `served` is every path this server answers
/// (`admission::SERVED_PATHS`).
pub fn plan(snapshot: &Snapshot, served: &[&str]) -> Plan {
    let mut out = Plan::default();
    for unreadable in &snapshot.unreadable {
        out.blocked = true;
        out.findings.push(Finding::Unreadable {
            what: unreadable.what.clone(),
            reason: unreadable.reason.clone(),
        });
    }
    match snapshot.manager {
        Manager::Replicas(replicas) if replicas > 0 => {
            out.findings.push(Finding::ManagerRunning {
                deployment: manager(),
                replicas,
            });
            out.steps.push(Step::ScaleManagerToZero {
                deployment: manager(),
            });
        }
        Manager::Replicas(_) | Manager::Unread => {}
        Manager::Absent => out.findings.push(Finding::ManagerNotFound {
            deployment: manager(),
        }),
    }
    for config in &snapshot.mutating {
        unserved(
            &mut out,
            ConfigurationKind::MutatingWebhookConfiguration,
            config.metadata.name.as_deref().unwrap_or_default(),
            remove_unserved(&mut config.clone(), served),
        );
    }
    for config in &snapshot.validating {
        unserved(
            &mut out,
            ConfigurationKind::ValidatingWebhookConfiguration,
            config.metadata.name.as_deref().unwrap_or_default(),
            remove_unserved(&mut config.clone(), served),
        );
    }
    let mut replace = Vec::new();
    for crd in &snapshot.crds {
        let missing: Vec<String> = crd
            .stored_versions
            .iter()
            .filter(|v| !crd.wanted_versions.contains(v))
            .cloned()
            .collect();
        if !missing.is_empty() {
            out.blocked = true;
            out.findings.push(Finding::StoredVersionNotServed {
                crd: crd.name.clone(),
                versions: missing,
            });
        } else if crd.spec_differs {
            replace.push(Step::ReplaceCrd {
                name: crd.name.clone(),
            });
        }
    }
    if !out.blocked {
        out.steps.extend(replace);
    }
    for crd in &snapshot.missing_crds {
        out.findings
            .push(Finding::CrdNotInstalled { crd: crd.clone() });
    }
    for kind in snapshot.unrun.iter().filter(|k| !k.objects.is_empty()) {
        out.findings.push(Finding::UnrunObjects {
            kind: kind.kind.clone(),
            objects: kind.objects.clone(),
        });
    }
    for set in &snapshot.unserved_sidecarsets {
        out.findings.push(Finding::UnservedSidecarSet {
            sidecarset: set.sidecarset.clone(),
            reason: set.reason.clone(),
        });
    }
    out
}

fn unserved(out: &mut Plan, kind: ConfigurationKind, name: &str, removed: Vec<RemovedEntry>) {
    if removed.is_empty() {
        return;
    }
    let entries: Vec<String> = removed.iter().map(ToString::to_string).collect();
    out.findings.push(Finding::UnservedEntries {
        configuration: name.to_string(),
        entries: entries.clone(),
    });
    out.steps.push(Step::RemoveEntries {
        kind,
        configuration: name.to_string(),
        entries: removed.into_iter().map(|e| e.name).collect(),
    });
}

#[cfg(test)]
mod tests;
