//! The rollout planner's compact copy of a pod: exactly what [`PodView`] reads, with every string
//! in one buffer and the hash annotations already parsed.
//!
//! A reconcile round looks at every pod a SidecarSet matches. Held as k8s-openapi `Pod`s, even
//! pruned ones, each pod is kilobytes of sparsely filled structs and scattered small strings, and
//! a pass over 10,000 of them waits on memory rather than computing; a summary is a few hundred
//! bytes in a handful of allocations. It is built once per pod change (the controller's
//! reflector builds it next to the pod cache), and a property test checks that every planner
//! decision is the same on a pod and on its summary.

use std::borrow::Cow;
use std::cell::Cell;
use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use k8s_openapi::jiff::Timestamp;
use serde_json::Value;

use super::codec::{HashEntries, SidecarState, Span, parse_upgrade_specs};
use super::fields::annotation;
use super::kruise_ready::ReadinessMarks;
use super::view::{
    ContainerView, EngineProgress, HashAnnotation, PlannerAnnotation, PodView, RecordedHashes,
    StatusView, UpgradableView,
};
use crate::api::keys;
use crate::k8s::selector::Labels;

/// Whose options the in-place engine's verdict on a pod is taken under: they complete an update
/// differently (a workload's waits for the node agent's record of env read from metadata).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineOwner {
    SidecarSet = 0,
    /// The workloads' own updates (CloneSet, Advanced StatefulSet, Advanced DaemonSet).
    Workload = 1,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct StatusSpans {
    name: Span,
    image: Span,
    image_id: Span,
    ready: bool,
    restart_count: i32,
}

/// One of `metadata.ownerReferences`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct OwnerSpans {
    api_version: Span,
    kind: Span,
    name: Span,
    uid: Span,
    controller: bool,
}

/// What only a workload round reads of every pod (and a SidecarSet's history truncation, now
/// and then), strings included, in a box of its own: inline,
/// it would put the summary in the next allocation class and spread the SidecarSet pass over
/// more memory.
#[derive(Debug, Clone, PartialEq)]
struct WorkloadParts {
    text: Box<str>,
    uid: Span,
    resource_version: Span,
    owners: Box<[OwnerSpans]>,
    node_name: Span,
    inplace_ready_status: Option<Span>,
    kruise_ready: Option<ReadinessMarks>,
    deletion_cost: i32,
    /// (volume, claim) of the volumes with a PVC source (a StatefulSet round checks them).
    claim_volumes: Box<[(Span, Span)]>,
    /// The names of the init containers (the SidecarSet safety net checks them, for sets with
    /// init containers only).
    init_containers: Box<[Span]>,
    /// (SidecarSet, controllerRevision) of the `kruise.io/sidecarset-hash` entries that name
    /// one, sorted by SidecarSet: read by a SidecarSet's history truncation, not every round.
    sidecarset_revisions: Box<[(Span, Span)]>,
}

impl WorkloadParts {
    fn str(&self, span: Span) -> &str {
        span.of(&self.text)
    }
}

/// `kruise.io/sidecarset-inplace-update-state`, decoded once.
#[derive(Debug, Clone, PartialEq)]
enum SidecarStates {
    Absent,
    Unreadable,
    /// Each SidecarSet's entry, sorted by SidecarSet.
    Entries(Box<[(Span, SidecarState)]>),
}

static ABSENT: SidecarState = SidecarState::Absent;
static UNREADABLE: SidecarState = SidecarState::Unreadable;
static NO_ENTRY: SidecarState = SidecarState::Recorded(Vec::new());

/// The planner's parts of one pod.
///
/// Laid out for the SidecarSet pass, which reads every pod of the cluster each round and waits on
/// memory more than it computes: what it reads comes first (`repr(C)` keeps the order), and what
/// only a workload round reads of every pod is boxed apart with its own text ([`WorkloadParts`]),
/// so that the pass touches as few cache lines as it needs.
#[derive(Debug, Clone, PartialEq)]
#[repr(C)]
pub struct PodSummary {
    text: Box<str>,
    labels: Option<Labels>,
    namespace: Option<Span>,
    name: Option<Span>,
    phase: Span,
    /// Indexed by [`annotation_slot`].
    annotations: [Option<Span>; 2],
    /// (name, image) of each container.
    containers: Box<[(Span, Span)]>,
    /// (SidecarSet, hash) pairs, sorted by SidecarSet; indexed by [`hash_slot`].
    hashes: [Box<[(Span, Span)]>; 2],
    sidecar_states: SidecarStates,
    statuses: Box<[StatusSpans]>,
    ready_since: Option<Timestamp>,
    created: Option<Timestamp>,
    /// `node_name` is not empty: kept apart, the SidecarSet planner reads it of every pod and
    /// the text is another allocation.
    scheduled: bool,
    /// Some condition Ready is True.
    ready: bool,
    deleting: bool,
    /// The engine's revision and whether a batch is still to come.
    engine: Option<(Span, bool)>,
    /// The `SidecarSetUpgradable` condition: status, reason, message.
    upgradable: Option<(Span, Option<Span>, Option<Span>)>,
    // What only a workload round reads of every pod.
    workload: Box<WorkloadParts>,
    first_ready_true: bool,
    inplace_gate: bool,
    inplace_grace: bool,
    inplace_state: bool,
    /// Whether the in-place engine has nothing to do on the pod (`inplace::at_rest`) under each
    /// owner's options, by [`EngineOwner`]: set by whoever builds the summary (`podmarks` sits
    /// below the engine, which reads the state), `false` until then.
    engine_at_rest: [bool; 2],
}

const ANNOTATIONS: [PlannerAnnotation; 2] = [
    PlannerAnnotation::InjectedList,
    PlannerAnnotation::WorkingHotUpgrade,
];

fn annotation_slot(which: PlannerAnnotation) -> usize {
    match which {
        PlannerAnnotation::InjectedList => 0,
        PlannerAnnotation::WorkingHotUpgrade => 1,
    }
}

const HASHES: [HashAnnotation; 2] = [HashAnnotation::Hash, HashAnnotation::HashWithoutImage];

fn hash_slot(which: HashAnnotation) -> usize {
    match which {
        HashAnnotation::Hash => 0,
        HashAnnotation::HashWithoutImage => 1,
    }
}

/// Appends strings to one buffer and hands out their spans.
struct TextBuilder {
    text: String,
}

thread_local! {
    /// The buffer summaries are written in, kept between them: each summary then allocates its
    /// text once, at its length, instead of a doubling series.
    static SCRATCH: Cell<String> = const { Cell::new(String::new()) };
}

/// A scratch buffer larger than this (a pod with huge strings) is not kept.
const SCRATCH_KEPT: usize = 64 * 1024;

impl TextBuilder {
    fn new() -> Self {
        Self {
            text: SCRATCH.take(),
        }
    }

    /// The text, in an allocation of its length.
    fn finish(mut self) -> Box<str> {
        let text = Box::from(self.text.as_str());
        if self.text.capacity() <= SCRATCH_KEPT {
            self.text.clear();
            SCRATCH.set(self.text);
        }
        text
    }

    fn push(&mut self, value: &str) -> Span {
        // Offsets fit: an object the apiserver stores is far below 4 GiB.
        let start = u32::try_from(self.text.len()).unwrap_or(u32::MAX);
        self.text.push_str(value);
        Span {
            start,
            len: u32::try_from(value.len()).unwrap_or(0),
        }
    }
}

impl PodSummary {
    /// Reads the planner's parts of `pod`.
    pub fn of(pod: &Pod) -> Self {
        // The strings in the order the SidecarSet pass reads them; the workloads' apart.
        let mut text = TextBuilder::new();
        let metadata = &pod.metadata;
        let namespace = metadata.namespace.as_deref().map(|v| text.push(v));
        let name = metadata.name.as_deref().map(|v| text.push(v));
        let phase = text.push(pod.phase());
        let annotations = ANNOTATIONS.map(|which| pod.annotation(which).map(|v| text.push(v)));
        let containers = pod
            .containers()
            .map(|c| (text.push(c.name), text.push(c.image)))
            .collect();
        let mut revisions = Vec::new();
        let mut workload_text = TextBuilder::new();
        let hashes = HASHES.map(|which| {
            let RecordedHashes::Text(Some(value)) = pod.recorded_hashes(which) else {
                return Box::default();
            };
            // Unreadable: no entries, which is what an in-place read of the text finds.
            let specs = parse_upgrade_specs(value).unwrap_or_default();
            specs
                .iter()
                .map(|(set, spec)| {
                    let revision = &spec.controller_revision;
                    if matches!(which, HashAnnotation::Hash) && !revision.is_empty() {
                        revisions.push((workload_text.push(set), workload_text.push(revision)));
                    }
                    (text.push(set), text.push(&spec.hash))
                })
                .collect()
        });
        let sidecar_states = match annotation(pod, keys::SIDECARSET_INPLACE_UPDATE_STATE) {
            None => SidecarStates::Absent,
            // The reading `SidecarState::read` is tested against, for every SidecarSet at once.
            Some(value) => match serde_json::from_str::<BTreeMap<String, Value>>(value) {
                Err(_) => SidecarStates::Unreadable,
                Ok(entries) => SidecarStates::Entries(
                    entries
                        .iter()
                        .map(|(set, state)| (text.push(set), SidecarState::from_entry(Some(state))))
                        .collect(),
                ),
            },
        };
        let statuses = pod
            .container_statuses()
            .map(|s| StatusSpans {
                name: text.push(s.name),
                image: text.push(s.image),
                image_id: text.push(s.image_id),
                ready: s.ready,
                restart_count: s.restart_count,
            })
            .collect();
        let engine = EngineProgress::of(pod)
            .map(|progress| (text.push(&progress.revision), progress.has_next_batch));
        let upgradable = pod.upgradable_condition().map(|c| {
            (
                text.push(c.status),
                c.reason.map(|v| text.push(v)),
                c.message.map(|v| text.push(v)),
            )
        });
        let text = text.finish();
        let uid = workload_text.push(pod.uid());
        let resource_version = workload_text.push(pod.resource_version());
        let owners = metadata
            .owner_references
            .iter()
            .flatten()
            .map(|o| OwnerSpans {
                api_version: workload_text.push(&o.api_version),
                kind: workload_text.push(&o.kind),
                name: workload_text.push(&o.name),
                uid: workload_text.push(&o.uid),
                controller: o.controller == Some(true),
            })
            .collect();
        let node_name = workload_text.push(pod.node_name());
        let inplace_ready_status = pod.inplace_ready_status().map(|v| workload_text.push(v));
        let claim_volumes = pod
            .claim_volumes()
            .map(|(volume, claim)| (workload_text.push(volume), workload_text.push(claim)))
            .collect();
        let init_containers = pod
            .init_container_names()
            .map(|name| workload_text.push(name))
            .collect();
        Self {
            text,
            labels: pod.labels().cloned(),
            namespace,
            name,
            phase,
            annotations,
            containers,
            hashes,
            sidecar_states,
            statuses,
            ready_since: pod.ready_since().copied(),
            created: pod.created().copied(),
            scheduled: pod.scheduled(),
            ready: pod.has_ready_condition(),
            deleting: pod.deleting(),
            engine,
            upgradable,
            workload: Box::new(WorkloadParts {
                text: workload_text.finish(),
                uid,
                resource_version,
                owners,
                node_name,
                inplace_ready_status,
                kruise_ready: pod.kruise_ready(),
                deletion_cost: pod.deletion_cost(),
                claim_volumes,
                init_containers,
                sidecarset_revisions: revisions.into(),
            }),
            first_ready_true: pod.first_ready_true(),
            inplace_gate: pod.has_inplace_gate(),
            inplace_grace: pod.has_inplace_grace(),
            inplace_state: pod.has_inplace_state(),
            engine_at_rest: [false; 2],
        }
    }

    /// The summary with [`engine_at_rest`](Self::engine_at_rest) set for `owner`.
    pub fn with_engine_at_rest(mut self, owner: EngineOwner, at_rest: bool) -> Self {
        self.engine_at_rest[owner as usize] = at_rest;
        self
    }

    /// Whether the in-place engine, under `owner`'s options, has nothing to do on the pod: no
    /// update of any owner in flight, nothing to drive.
    pub fn engine_at_rest(&self, owner: EngineOwner) -> bool {
        self.engine_at_rest[owner as usize]
    }

    fn str(&self, span: Span) -> &str {
        span.of(&self.text)
    }

    fn opt_str(&self, span: Option<Span>) -> Option<&str> {
        span.map(|span| self.str(span))
    }

    /// `metadata.namespace` as the pod has it (`None`: unset).
    pub fn namespace_field(&self) -> Option<&str> {
        self.opt_str(self.namespace)
    }

    /// `metadata.name` as the pod has it (`None`: unset).
    pub fn name_field(&self) -> Option<&str> {
        self.opt_str(self.name)
    }

    /// `metadata.ownerReferences` as the pod has them, without `blockOwnerDeletion` (`None`:
    /// none).
    pub fn owner_references(&self) -> Option<Vec<OwnerReference>> {
        let owners = self.workload.owners.iter().map(|o| OwnerReference {
            api_version: self.workload.str(o.api_version).to_string(),
            kind: self.workload.str(o.kind).to_string(),
            name: self.workload.str(o.name).to_string(),
            uid: self.workload.str(o.uid).to_string(),
            controller: o.controller.then_some(true),
            block_owner_deletion: None,
        });
        (!self.workload.owners.is_empty()).then(|| owners.collect())
    }
}

impl PodView for PodSummary {
    fn namespace(&self) -> &str {
        self.namespace_field().unwrap_or("")
    }

    fn name(&self) -> &str {
        self.name_field().unwrap_or("")
    }

    fn uid(&self) -> &str {
        self.workload.str(self.workload.uid)
    }

    fn resource_version(&self) -> &str {
        self.workload.str(self.workload.resource_version)
    }

    fn owner_uids(&self) -> impl Iterator<Item = &str> {
        self.workload
            .owners
            .iter()
            .map(|o| self.workload.str(o.uid))
    }

    fn controller_uid(&self) -> Option<&str> {
        let controller = self.workload.owners.iter().find(|o| o.controller)?;
        Some(self.workload.str(controller.uid))
    }

    fn deletion_cost(&self) -> i32 {
        self.workload.deletion_cost
    }

    fn has_inplace_grace(&self) -> bool {
        self.inplace_grace
    }

    fn has_inplace_state(&self) -> bool {
        self.inplace_state
    }

    fn labels(&self) -> Option<&Labels> {
        self.labels.as_ref()
    }

    fn annotation(&self, which: PlannerAnnotation) -> Option<&str> {
        self.opt_str(self.annotations[annotation_slot(which)])
    }

    fn recorded_hashes(&self, which: HashAnnotation) -> RecordedHashes<'_> {
        RecordedHashes::Parsed(HashEntries {
            text: &self.text,
            entries: &self.hashes[hash_slot(which)],
        })
    }

    fn recorded_revision(&self, sidecarset: &str) -> Option<Cow<'_, str>> {
        let parts = &self.workload;
        let revisions = &parts.sidecarset_revisions;
        let i = revisions
            .binary_search_by(|(set, _)| parts.str(*set).cmp(sidecarset))
            .ok()?;
        Some(Cow::Borrowed(parts.str(revisions[i].1)))
    }

    fn sidecar_state(&self, sidecarset: &str) -> Cow<'_, SidecarState> {
        Cow::Borrowed(match &self.sidecar_states {
            SidecarStates::Absent => &ABSENT,
            SidecarStates::Unreadable => &UNREADABLE,
            SidecarStates::Entries(entries) => entries
                .binary_search_by(|(set, _)| self.str(*set).cmp(sidecarset))
                .map_or(&NO_ENTRY, |i| &entries[i].1),
        })
    }

    fn engine_progress(&self) -> Option<EngineProgress<'_>> {
        self.engine
            .map(|(revision, has_next_batch)| EngineProgress {
                revision: Cow::Borrowed(self.str(revision)),
                has_next_batch,
            })
    }

    fn containers(&self) -> impl ExactSizeIterator<Item = ContainerView<'_>> {
        self.containers.iter().map(|&(name, image)| ContainerView {
            name: self.str(name),
            image: self.str(image),
        })
    }

    fn init_container_names(&self) -> impl Iterator<Item = &str> {
        let parts = &self.workload;
        parts.init_containers.iter().map(|&name| parts.str(name))
    }

    fn container_statuses(&self) -> impl ExactSizeIterator<Item = StatusView<'_>> {
        self.statuses.iter().map(|s| StatusView {
            name: self.str(s.name),
            image: self.str(s.image),
            image_id: self.str(s.image_id),
            ready: s.ready,
            restart_count: s.restart_count,
        })
    }

    fn phase(&self) -> &str {
        self.str(self.phase)
    }

    fn has_ready_condition(&self) -> bool {
        self.ready
    }

    fn first_ready_true(&self) -> bool {
        self.first_ready_true
    }

    fn ready_since(&self) -> Option<&Timestamp> {
        self.ready_since.as_ref()
    }

    fn inplace_ready_status(&self) -> Option<&str> {
        self.workload
            .inplace_ready_status
            .map(|span| self.workload.str(span))
    }

    fn has_inplace_gate(&self) -> bool {
        self.inplace_gate
    }

    fn kruise_ready(&self) -> Option<ReadinessMarks> {
        self.workload.kruise_ready
    }

    fn created(&self) -> Option<&Timestamp> {
        self.created.as_ref()
    }

    fn deleting(&self) -> bool {
        self.deleting
    }

    fn node_name(&self) -> &str {
        self.workload.str(self.workload.node_name)
    }

    fn claim_volumes(&self) -> impl Iterator<Item = (&str, &str)> + Clone {
        self.workload
            .claim_volumes
            .iter()
            .map(|(volume, claim)| (self.workload.str(*volume), self.workload.str(*claim)))
    }

    fn scheduled(&self) -> bool {
        self.scheduled
    }

    fn upgradable_condition(&self) -> Option<UpgradableView<'_>> {
        self.upgradable
            .map(|(status, reason, message)| UpgradableView {
                status: self.str(status),
                reason: self.opt_str(reason),
                message: self.opt_str(message),
            })
    }
}

#[cfg(test)]
mod tests;
