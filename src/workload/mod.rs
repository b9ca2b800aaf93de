//! The workload core: what the CloneSet, the Advanced StatefulSet and the Advanced DaemonSet
//! planners share (OpenKruise's `pkg/util/{revision, lifecycle, inplaceupdate, volumeclaimtemplate,
//! refmanager}`). Pure: snapshots in, decisions out; no I/O, no clock.
//!
//! - [`Workload`]: what the core reads of a workload object, implemented for the three kinds;
//! - [`revision`]: revision data, hashes, names, history choice and truncation, with a per-kind
//!   [`revision::RevisionScheme`] (how pods and revisions name each other);
//! - [`pod`], [`listed`], [`facts`]: predicates on one pod, the pod as a round gets it (summary,
//!   whole when held) and the flat record the counting steps read;
//! - [`lifecycle`]: the lifecycle states, their transition table, label writes and hooks;
//! - [`engine`], [`inplace`]: the in-place engine's options and the refresh and start steps;
//! - [`claim`]: adoption and release of pods;
//! - [`pvc`]: PVCs from `volumeClaimTemplates`, named by a per-kind suffix;
//! - [`sort`]: scale-in order (the update order and budgets are [`crate::updatesort`]'s);
//! - [`status`]: conditions and the selector string;
//! - [`events`]: how each kind words the events of its requests ([`events::Wording`]).
//!
//! A planner returns a [`Plan`] of [`Action`]s; the shell (`controller::workload`) sends them.

pub mod claim;
pub mod engine;
pub mod events;
pub mod facts;
pub mod inplace;
pub mod lifecycle;
pub mod listed;
pub mod plan;
pub mod pod;
pub mod pod_after;
pub mod pvc;
pub mod readiness;
pub mod revision;
pub mod simulation;
pub mod sort;
pub mod status;

use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, OwnerReference};
use kube::Resource;

use crate::api::cloneset::{CloneSet, Lifecycle};
use crate::api::daemonset::DaemonSet;
use crate::api::statefulset::StatefulSet;
pub use listed::ListedPod;
pub use plan::{Plan, PlanError};
pub use pod_after::PodAfter;
use revision::RevisionScheme;

/// What the core reads of a workload object. `kube::Resource` gives its metadata, kind and
/// apiVersion (for the controller ownerReference of everything it creates).
pub trait Workload: Resource<DynamicType = ()> {
    /// How this kind's pods and ControllerRevisions name each other.
    const REVISIONS: RevisionScheme;

    fn selector(&self) -> Option<&LabelSelector>;
    fn template(&self) -> &PodTemplateSpec;
    /// `spec.lifecycle`: the hooks.
    fn lifecycle(&self) -> Option<&Lifecycle>;
    fn min_ready_seconds(&self) -> i32;
    /// `spec.revisionHistoryLimit`, 10 when unset.
    fn revision_history_limit(&self) -> i32;
    fn volume_claim_templates(&self) -> &[PersistentVolumeClaim];
    /// `status.collisionCount`, 0 when unset.
    fn collision_count(&self) -> i32;
    /// `status.currentRevision` (the DaemonSet has none).
    fn current_revision(&self) -> Option<&str>;

    fn name(&self) -> &str {
        self.meta().name.as_deref().unwrap_or("")
    }
    fn namespace(&self) -> &str {
        self.meta().namespace.as_deref().unwrap_or("")
    }
    fn uid(&self) -> &str {
        self.meta().uid.as_deref().unwrap_or("")
    }
    /// Being deleted: adopts nothing, releases nothing, creates nothing.
    fn deleting(&self) -> bool {
        self.meta().deletion_timestamp.is_some()
    }
    /// `namespace/name`: the key of its expectations and logs.
    fn key(&self) -> String {
        format!("{}/{}", self.namespace(), self.name())
    }
    /// The controller ownerReference of everything it creates.
    fn owner_reference(&self) -> OwnerReference {
        OwnerReference {
            api_version: Self::api_version(&()).into_owned(),
            kind: Self::kind(&()).into_owned(),
            name: self.name().to_string(),
            uid: self.uid().to_string(),
            controller: Some(true),
            block_owner_deletion: Some(true),
        }
    }
}

/// The accessors every kind reads from the same fields (`spec.selector`, `spec.template`,
/// `spec.lifecycle`, `spec.revisionHistoryLimit`, `status.collisionCount`); each kind adds the ones
/// where it differs.
macro_rules! common_accessors {
    () => {
        fn selector(&self) -> Option<&LabelSelector> {
            self.spec.selector.as_ref()
        }
        fn template(&self) -> &PodTemplateSpec {
            &self.spec.template
        }
        fn lifecycle(&self) -> Option<&Lifecycle> {
            self.spec.lifecycle.as_ref()
        }
        fn revision_history_limit(&self) -> i32 {
            self.spec.revision_history_limit.unwrap_or(10)
        }
        fn collision_count(&self) -> i32 {
            self.status
                .as_ref()
                .and_then(|s| s.collision_count)
                .unwrap_or(0)
        }
    };
}

impl Workload for CloneSet {
    const REVISIONS: RevisionScheme = RevisionScheme::CLONESET;
    common_accessors!();

    fn min_ready_seconds(&self) -> i32 {
        self.spec.min_ready_seconds.unwrap_or(0)
    }
    fn volume_claim_templates(&self) -> &[PersistentVolumeClaim] {
        self.spec.volume_claim_templates.as_deref().unwrap_or(&[])
    }
    fn current_revision(&self) -> Option<&str> {
        self.status.as_ref()?.current_revision.as_deref()
    }
}

impl Workload for StatefulSet {
    const REVISIONS: RevisionScheme = RevisionScheme::STATEFULSET;
    common_accessors!();

    /// The StatefulSet keeps it under `spec.updateStrategy.rollingUpdate`.
    fn min_ready_seconds(&self) -> i32 {
        self.spec
            .update_strategy
            .rolling_update
            .as_ref()
            .and_then(|r| r.min_ready_seconds)
            .unwrap_or(0)
    }
    fn volume_claim_templates(&self) -> &[PersistentVolumeClaim] {
        self.spec.volume_claim_templates.as_deref().unwrap_or(&[])
    }
    fn current_revision(&self) -> Option<&str> {
        self.status.as_ref()?.current_revision.as_deref()
    }
}

impl Workload for DaemonSet {
    const REVISIONS: RevisionScheme = RevisionScheme::DAEMONSET;
    common_accessors!();

    fn min_ready_seconds(&self) -> i32 {
        self.spec.min_ready_seconds.unwrap_or(0)
    }
    fn volume_claim_templates(&self) -> &[PersistentVolumeClaim] {
        &[]
    }
    fn current_revision(&self) -> Option<&str> {
        None
    }
}

/// The workload kinds of this API group, as a pod's controller ownerReference names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkloadKind {
    CloneSet,
    StatefulSet,
    DaemonSet,
}

impl WorkloadKind {
    /// The kind `owner` names, when it is one of this API group's workloads (any version).
    pub fn of(owner: &OwnerReference) -> Option<WorkloadKind> {
        if !crate::k8s::owner::in_group(owner, crate::api::keys::GROUP) {
            return None;
        }
        match owner.kind.as_str() {
            "CloneSet" => Some(WorkloadKind::CloneSet),
            "StatefulSet" => Some(WorkloadKind::StatefulSet),
            "DaemonSet" => Some(WorkloadKind::DaemonSet),
            _ => None,
        }
    }

    /// The kind of workload among `owners` that could own the pod: its controller, or else the
    /// first workload named (a pod nobody controls may be adopted).
    pub fn owning<'a>(owners: impl IntoIterator<Item = &'a OwnerReference>) -> Option<Self> {
        owners.into_iter().find_map(WorkloadKind::of)
    }

    pub fn revisions(self) -> RevisionScheme {
        match self {
            WorkloadKind::CloneSet => CloneSet::REVISIONS,
            WorkloadKind::StatefulSet => StatefulSet::REVISIONS,
            WorkloadKind::DaemonSet => DaemonSet::REVISIONS,
        }
    }
}

/// One pod write; a list of them is sent in order, each against the pod the previous returned.
#[derive(Debug, PartialEq)]
pub struct PodWrite {
    /// `true`: the `status` subresource.
    pub status: bool,
    /// The pod after the write (possibly built only when first read).
    pub pod: PodAfter,
}

impl PodWrite {
    pub fn spec(pod: Pod) -> Self {
        PodWrite {
            status: false,
            pod: PodAfter::built(pod),
        }
    }
    pub fn status(pod: Pod) -> Self {
        PodWrite {
            status: true,
            pod: PodAfter::built(pod),
        }
    }
}

impl Clone for PodWrite {
    fn clone(&self) -> Self {
        PodWrite {
            status: self.status,
            pod: self.pod.duplicate(),
        }
    }
}

/// Why a pod is written (for events and logs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Purpose {
    /// The in-place engine moves an update forward (gate, grace, next batch).
    Refresh,
    /// The lifecycle label moves on in the update step.
    Lifecycle,
    /// The lifecycle label moves on in the scale step: `PreparingDelete` instead of a hooked pod's
    /// deletion, `PreparingNormal` for a pod taken back. Its failure is a failed scale.
    ScaleLifecycle,
    /// An in-place update to `revision` starts.
    InPlace { revision: String },
    /// Marked `specified-delete` so that Scale re-creates it at `revision`.
    Recreate { revision: String },
}

/// A Kubernetes event on the workload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub warning: bool,
    pub reason: &'static str,
    pub message: String,
}

impl Event {
    pub fn normal(reason: &'static str, message: String) -> Self {
        Event {
            warning: false,
            reason,
            message,
        }
    }

    pub fn warning(reason: &'static str, message: String) -> Self {
        Event {
            warning: true,
            reason,
            message,
        }
    }
}

/// For which pod a PVC is created or its owners rewritten, and so what a failure means (the
/// Advanced StatefulSet reports each path its own way).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PvcFix {
    /// A pod created this round (`CreateStatefulPod`): the pod's `FailedCreate` (creation) or
    /// `FailedUpdate` (owners) event and condition `FailedCreatePod`.
    NewPod,
    /// A pending pod's PVCs (`createMissingPersistentVolumeClaims`): the round's error, and a
    /// `FailedUpdate` event when the owners failed.
    Pending,
    /// With the pod's identity (`UpdateStatefulPod`): `FailedUpdate` and condition
    /// `FailedUpdatePod`.
    Identity,
    /// A condemned pod's PVCs: the round's error only.
    Condemned,
}

/// What a planner asks the shell to do to pods and PVCs; each kind's send policy says in which
/// order ([`crate::controller`]'s workload shell).
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    CreatePod {
        pod: Box<Pod>,
        revision: String,
    },
    DeletePod {
        name: String,
    },
    /// A write of the in-place engine or of the lifecycle state.
    WritePod {
        /// The pod as listed: the writes are guarded by its resourceVersion.
        before: Arc<Pod>,
        writes: Vec<PodWrite>,
        purpose: Purpose,
    },
    /// A pod's identity labels and volumes fixed in place (the Advanced StatefulSet's
    /// `UpdateStatefulPod`; `after` equals `before` when only its PVCs' owners needed a fix).
    UpdatePod {
        before: Arc<Pod>,
        after: Box<Pod>,
    },
    /// A PVC of `pod` that does not exist yet (an AlreadyExists answer counts as done).
    CreatePvc {
        pvc: Box<PersistentVolumeClaim>,
        pod: String,
        fix: PvcFix,
    },
    /// A PVC's ownerReferences rewritten (PUT of the PVC as cached, guarded by its
    /// resourceVersion).
    UpdatePvcOwners {
        before: Arc<PersistentVolumeClaim>,
        owner_references: Vec<OwnerReference>,
        pod: String,
        fix: PvcFix,
    },
    Event(Event),
}

/// Kubernetes timestamps: seconds, UTC.
pub fn rfc3339(now: Timestamp) -> String {
    now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// How soon a step wants the round to run again: the earliest of the requeues asked for (zero
/// means no wish).
pub fn push_requeue(requeue: &mut Option<std::time::Duration>, next: Option<std::time::Duration>) {
    if let Some(next) = next.filter(|d| !d.is_zero()) {
        *requeue = Some(requeue.map_or(next, |r| r.min(next)));
    }
}

#[cfg(test)]
pub(crate) mod tests;
