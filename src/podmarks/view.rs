//! What the planners read off a pod every round, as one trait: the same decisions run on a full
//! [`Pod`] (fresh reads, tests) and on the controllers' compact
//! [`PodSummary`](super::summary::PodSummary), which holds only these parts, laid out so that
//! a pass over 10,000 pods stays in the CPU caches.

use std::borrow::Cow;

use k8s_openapi::api::core::v1::{Pod, PodCondition};
use k8s_openapi::jiff::Timestamp;

use super::codec::{HashEntries, SidecarState, parse_upgrade_specs, recorded_upgrade_hash};
use super::fields::annotation;
use super::kruise_ready::ReadinessMarks;
use crate::api::keys;
use crate::k8s::owner;
use crate::k8s::pod::has_readiness_gate;
use crate::k8s::selector::Labels;

/// The annotations the planner reads as text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlannerAnnotation {
    /// `kruise.io/sidecarset-injected-list`.
    InjectedList,
    /// `kruise.io/sidecarset-working-hotupgrade-container`.
    WorkingHotUpgrade,
}

/// Where the in-place engine stands on the pod (`apps.kruise.io/inplace-update-state`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineProgress<'a> {
    pub revision: Cow<'a, str>,
    /// Lower-priority containers still wait for a later batch.
    pub has_next_batch: bool,
}

impl EngineProgress<'_> {
    /// As the engine reads it ([`super::inplace_state::read_state`]): the current key, else the
    /// legacy one; `None` when neither is set or the state is unreadable.
    pub fn of(pod: &Pod) -> Option<EngineProgress<'static>> {
        let state = super::inplace_state::read_state(pod)?.ok()?;
        Some(EngineProgress {
            has_next_batch: state.has_next_batch(),
            revision: Cow::Owned(state.revision),
        })
    }
}

/// The two per-SidecarSet hash annotations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HashAnnotation {
    /// `kruise.io/sidecarset-hash`.
    Hash,
    /// `kruise.io/sidecarset-hash-without-image`.
    HashWithoutImage,
}

impl HashAnnotation {
    pub fn key(self) -> &'static str {
        match self {
            Self::Hash => keys::SIDECARSET_HASH,
            Self::HashWithoutImage => keys::SIDECARSET_HASH_WITHOUT_IMAGE,
        }
    }
}

/// A hash annotation as a pod holds it.
#[derive(Debug, Clone, Copy)]
pub enum RecordedHashes<'a> {
    /// The annotation's text (`None`: no annotation), read in place on demand.
    Text(Option<&'a str>),
    /// Already parsed: an absent or unreadable annotation has no entries.
    Parsed(HashEntries<'a>),
}

impl RecordedHashes<'_> {
    /// The hash recorded for `sidecarset`, `None` when there is none or the text is unreadable.
    pub fn get(&self, sidecarset: &str) -> Option<Cow<'_, str>> {
        match self {
            Self::Text(text) => text.and_then(|value| recorded_upgrade_hash(value, sidecarset)),
            Self::Parsed(entries) => entries.get(sidecarset).map(Cow::Borrowed),
        }
    }
}

/// One container of the pod spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContainerView<'a> {
    pub name: &'a str,
    /// "" when the spec names none.
    pub image: &'a str,
}

/// One entry of `status.containerStatuses`.
/// The pod's `SidecarSetUpgradable` condition: the parts that decide whether it must change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UpgradableView<'a> {
    pub status: &'a str,
    pub reason: Option<&'a str>,
    pub message: Option<&'a str>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]

pub struct StatusView<'a> {
    pub name: &'a str,
    pub image: &'a str,
    pub image_id: &'a str,
    pub ready: bool,
    pub restart_count: i32,
}

/// The parts of a pod the rollout planner, and the CloneSet planner on every pod of every round,
/// read.
pub trait PodView {
    /// `metadata.namespace`, "" when unset.
    fn namespace(&self) -> &str;
    /// `metadata.name`, "" when unset.
    fn name(&self) -> &str;
    /// `metadata.uid`, "" when unset.
    fn uid(&self) -> &str;
    /// `metadata.resourceVersion`, "" when unset.
    fn resource_version(&self) -> &str;
    /// The uid of each of `metadata.ownerReferences`, in order.
    fn owner_uids(&self) -> impl Iterator<Item = &str>;
    /// The uid of the first owner reference with `controller: true`.
    fn controller_uid(&self) -> Option<&str>;
    /// `controller.kubernetes.io/pod-deletion-cost` as a number; 0 when absent or not one.
    fn deletion_cost(&self) -> i32;
    /// The in-place engine's grace annotation is set (either key, non-empty).
    fn has_inplace_grace(&self) -> bool;
    /// The in-place engine's state annotation is set (either key, non-empty).
    fn has_inplace_state(&self) -> bool;
    fn labels(&self) -> Option<&Labels>;
    fn annotation(&self, which: PlannerAnnotation) -> Option<&str>;
    fn recorded_hashes(&self, which: HashAnnotation) -> RecordedHashes<'_>;
    /// The `controllerRevision` of `sidecarset`'s entry in `kruise.io/sidecarset-hash`, when
    /// it names one.
    fn recorded_revision(&self, sidecarset: &str) -> Option<Cow<'_, str>>;
    /// One SidecarSet's entry of `kruise.io/sidecarset-inplace-update-state`.
    fn sidecar_state(&self, sidecarset: &str) -> Cow<'_, SidecarState>;
    fn engine_progress(&self) -> Option<EngineProgress<'_>>;
    /// `spec.containers`, in order.
    fn containers(&self) -> impl ExactSizeIterator<Item = ContainerView<'_>>;
    /// The names of `spec.initContainers`, in order.
    fn init_container_names(&self) -> impl Iterator<Item = &str>;
    /// `status.containerStatuses`, in order.
    fn container_statuses(&self) -> impl ExactSizeIterator<Item = StatusView<'_>>;
    /// `status.phase`, "" when unset.
    fn phase(&self) -> &str;
    /// Some condition Ready is True.
    fn has_ready_condition(&self) -> bool;
    /// Kubernetes' `IsPodReady`: the first Ready condition is True.
    fn first_ready_true(&self) -> bool;
    /// `lastTransitionTime` of the first Ready condition.
    fn ready_since(&self) -> Option<&Timestamp>;
    /// The status of the first `InPlaceUpdateReady` condition.
    fn inplace_ready_status(&self) -> Option<&str>;
    /// `spec.readinessGates` lists `InPlaceUpdateReady`.
    fn has_inplace_gate(&self) -> bool;
    /// The `KruisePodReady` condition in flags; `None` without its readiness gate.
    fn kruise_ready(&self) -> Option<ReadinessMarks>;
    fn created(&self) -> Option<&Timestamp>;
    /// `metadata.deletionTimestamp` is set.
    fn deleting(&self) -> bool;
    /// `spec.nodeName`, "" when unset.
    fn node_name(&self) -> &str;
    /// `spec.volumes` with a `persistentVolumeClaim` source: (volume name, claim name), in order.
    fn claim_volumes(&self) -> impl Iterator<Item = (&str, &str)> + Clone;
    /// The first `SidecarSetUpgradable` condition.
    fn upgradable_condition(&self) -> Option<UpgradableView<'_>>;

    /// `spec.nodeName` is set and not empty.
    fn scheduled(&self) -> bool {
        !self.node_name().is_empty()
    }

    /// Still running or about to run: finished and terminating pods are left alone.
    fn is_active(&self) -> bool {
        !matches!(self.phase(), "Succeeded" | "Failed") && !self.deleting()
    }
}

impl PodView for Pod {
    fn namespace(&self) -> &str {
        self.metadata.namespace.as_deref().unwrap_or("")
    }

    fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or("")
    }

    fn uid(&self) -> &str {
        self.metadata.uid.as_deref().unwrap_or("")
    }

    fn resource_version(&self) -> &str {
        self.metadata.resource_version.as_deref().unwrap_or("")
    }

    fn owner_uids(&self) -> impl Iterator<Item = &str> {
        let owners = self.metadata.owner_references.as_deref().unwrap_or(&[]);
        owners.iter().map(|o| o.uid.as_str())
    }

    fn controller_uid(&self) -> Option<&str> {
        owner::controller_of(&self.metadata).map(|o| o.uid.as_str())
    }

    fn deletion_cost(&self) -> i32 {
        annotation(self, keys::POD_DELETION_COST)
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    }

    fn has_inplace_grace(&self) -> bool {
        super::inplace_state::has_grace(self)
    }

    fn has_inplace_state(&self) -> bool {
        super::inplace_state::has_state(self)
    }

    fn labels(&self) -> Option<&Labels> {
        self.metadata.labels.as_ref()
    }

    fn annotation(&self, which: PlannerAnnotation) -> Option<&str> {
        let key = match which {
            PlannerAnnotation::InjectedList => keys::SIDECARSET_INJECTED_LIST,
            PlannerAnnotation::WorkingHotUpgrade => keys::SIDECARSET_WORKING_HOTUPGRADE_CONTAINER,
        };
        annotation(self, key)
    }

    fn sidecar_state(&self, sidecarset: &str) -> Cow<'_, SidecarState> {
        let value = annotation(self, keys::SIDECARSET_INPLACE_UPDATE_STATE);
        Cow::Owned(SidecarState::read(value, sidecarset))
    }

    fn engine_progress(&self) -> Option<EngineProgress<'_>> {
        EngineProgress::of(self)
    }

    fn recorded_hashes(&self, which: HashAnnotation) -> RecordedHashes<'_> {
        RecordedHashes::Text(annotation(self, which.key()))
    }

    fn recorded_revision(&self, sidecarset: &str) -> Option<Cow<'_, str>> {
        let value = annotation(self, keys::SIDECARSET_HASH)?;
        let mut specs = parse_upgrade_specs(value).ok()?;
        let revision = specs.remove(sidecarset)?.controller_revision;
        (!revision.is_empty()).then_some(Cow::Owned(revision))
    }

    fn containers(&self) -> impl ExactSizeIterator<Item = ContainerView<'_>> {
        let containers = self.spec.as_ref().map(|s| s.containers.as_slice());
        containers.unwrap_or(&[]).iter().map(|c| ContainerView {
            name: &c.name,
            image: c.image.as_deref().unwrap_or(""),
        })
    }

    fn init_container_names(&self) -> impl Iterator<Item = &str> {
        let spec = self.spec.as_ref();
        let init = spec
            .and_then(|s| s.init_containers.as_deref())
            .unwrap_or(&[]);
        init.iter().map(|c| c.name.as_str())
    }

    fn container_statuses(&self) -> impl ExactSizeIterator<Item = StatusView<'_>> {
        let statuses = self
            .status
            .as_ref()
            .and_then(|s| s.container_statuses.as_deref());
        statuses.unwrap_or(&[]).iter().map(|s| StatusView {
            name: &s.name,
            image: &s.image,
            image_id: &s.image_id,
            ready: s.ready,
            restart_count: s.restart_count,
        })
    }

    fn phase(&self) -> &str {
        self.status
            .as_ref()
            .and_then(|s| s.phase.as_deref())
            .unwrap_or("")
    }

    fn has_ready_condition(&self) -> bool {
        self.status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|conditions| {
                conditions
                    .iter()
                    .any(|c| c.type_ == "Ready" && c.status == "True")
            })
    }

    fn first_ready_true(&self) -> bool {
        first_condition(self, keys::CONDITION_READY)
            .is_some_and(|c| c.status == keys::CONDITION_TRUE)
    }

    fn ready_since(&self) -> Option<&Timestamp> {
        first_condition(self, keys::CONDITION_READY)
            .and_then(|c| c.last_transition_time.as_ref())
            .map(|t| &t.0)
    }

    fn inplace_ready_status(&self) -> Option<&str> {
        first_condition(self, keys::INPLACE_UPDATE_READY).map(|c| c.status.as_str())
    }

    fn kruise_ready(&self) -> Option<ReadinessMarks> {
        ReadinessMarks::of(self)
    }

    fn has_inplace_gate(&self) -> bool {
        has_readiness_gate(self, keys::INPLACE_UPDATE_READY)
    }

    fn created(&self) -> Option<&Timestamp> {
        self.metadata.creation_timestamp.as_ref().map(|t| &t.0)
    }

    fn deleting(&self) -> bool {
        self.metadata.deletion_timestamp.is_some()
    }

    fn node_name(&self) -> &str {
        let node = self.spec.as_ref().and_then(|s| s.node_name.as_deref());
        node.unwrap_or("")
    }

    fn claim_volumes(&self) -> impl Iterator<Item = (&str, &str)> + Clone {
        self.spec
            .iter()
            .flat_map(|s| s.volumes.iter().flatten())
            .filter_map(|v| {
                let claim = v.persistent_volume_claim.as_ref()?;
                Some((v.name.as_str(), claim.claim_name.as_str()))
            })
    }

    fn upgradable_condition(&self) -> Option<UpgradableView<'_>> {
        let conditions = self.status.as_ref()?.conditions.as_ref()?;
        let condition = conditions
            .iter()
            .find(|c| c.type_ == keys::SIDECARSET_UPGRADABLE_CONDITION)?;
        Some(UpgradableView {
            status: &condition.status,
            reason: condition.reason.as_deref(),
            message: condition.message.as_deref(),
        })
    }
}

fn first_condition<'a>(pod: &'a Pod, condition_type: &str) -> Option<&'a PodCondition> {
    let conditions = pod.status.as_ref()?.conditions.as_ref()?;
    conditions.iter().find(|c| c.type_ == condition_type)
}

/// `impl PodView for $type` answering every read with `$target` (an expression of `self`), e.g.
/// a pointer's pod or a record's summary.
macro_rules! forward_pod_view {
    ([$($generics:tt)*] $type:ty, $this:ident => $target:expr) => {
        impl<$($generics)*> $crate::podmarks::PodView for $type {
            fn namespace(&$this) -> &str { $target.namespace() }
            fn name(&$this) -> &str { $target.name() }
            fn uid(&$this) -> &str { $target.uid() }
            fn resource_version(&$this) -> &str { $target.resource_version() }
            fn owner_uids(&$this) -> impl Iterator<Item = &str> { $target.owner_uids() }
            fn controller_uid(&$this) -> Option<&str> { $target.controller_uid() }
            fn deletion_cost(&$this) -> i32 { $target.deletion_cost() }
            fn has_inplace_grace(&$this) -> bool { $target.has_inplace_grace() }
            fn has_inplace_state(&$this) -> bool { $target.has_inplace_state() }
            fn labels(&$this) -> Option<&$crate::k8s::selector::Labels> { $target.labels() }
            fn annotation(&$this, which: $crate::podmarks::PlannerAnnotation) -> Option<&str> {
                $target.annotation(which)
            }
            fn recorded_hashes(
                &$this,
                which: $crate::podmarks::HashAnnotation,
            ) -> $crate::podmarks::RecordedHashes<'_> {
                $target.recorded_hashes(which)
            }
            fn recorded_revision(&$this, sidecarset: &str) -> Option<std::borrow::Cow<'_, str>> {
                $target.recorded_revision(sidecarset)
            }
            fn sidecar_state(
                &$this,
                sidecarset: &str,
            ) -> std::borrow::Cow<'_, $crate::podmarks::sidecarset::SidecarState> {
                $target.sidecar_state(sidecarset)
            }
            fn engine_progress(&$this) -> Option<$crate::podmarks::EngineProgress<'_>> {
                $target.engine_progress()
            }
            fn containers(
                &$this,
            ) -> impl ExactSizeIterator<Item = $crate::podmarks::ContainerView<'_>> {
                $target.containers()
            }
            fn init_container_names(&$this) -> impl Iterator<Item = &str> {
                $target.init_container_names()
            }
            fn container_statuses(
                &$this,
            ) -> impl ExactSizeIterator<Item = $crate::podmarks::StatusView<'_>> {
                $target.container_statuses()
            }
            fn phase(&$this) -> &str { $target.phase() }
            fn has_ready_condition(&$this) -> bool { $target.has_ready_condition() }
            fn first_ready_true(&$this) -> bool { $target.first_ready_true() }
            fn ready_since(&$this) -> Option<&k8s_openapi::jiff::Timestamp> {
                $target.ready_since()
            }
            fn inplace_ready_status(&$this) -> Option<&str> { $target.inplace_ready_status() }
            fn has_inplace_gate(&$this) -> bool { $target.has_inplace_gate() }
            fn kruise_ready(&$this) -> Option<$crate::podmarks::kruise_ready::ReadinessMarks> {
                $target.kruise_ready()
            }
            fn created(&$this) -> Option<&k8s_openapi::jiff::Timestamp> { $target.created() }
            fn deleting(&$this) -> bool { $target.deleting() }
            fn node_name(&$this) -> &str { $target.node_name() }
            fn claim_volumes(&$this) -> impl Iterator<Item = (&str, &str)> + Clone {
                $target.claim_volumes()
            }
            fn scheduled(&$this) -> bool { $target.scheduled() }
            fn upgradable_condition(&$this) -> Option<$crate::podmarks::UpgradableView<'_>> {
                $target.upgradable_condition()
            }
        }
    };
}
pub(crate) use forward_pod_view;

// A pod behind a pointer reads as the pod, so that the planners take `&Arc<Pod>`,
// `&Arc<PodSummary>` and `&&Pod` alike.
forward_pod_view!([T: PodView + ?Sized] &T, self => (**self));
forward_pod_view!([T: PodView + ?Sized] std::sync::Arc<T>, self => (**self));
forward_pod_view!([T: PodView + ?Sized] Box<T>, self => (**self));
