//! What the rollout planner reads off a pod, as one trait: the same decisions run on a full
//! [`Pod`] (fresh reads, tests) and on the controller's compact
//! [`PodSummary`](super::summary::PodSummary), which holds only these parts, laid out so that
//! a pass over 10,000 pods stays in the CPU caches.

use std::borrow::Cow;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;

use super::sidecarset::{SidecarState, annotation, recorded_upgrade_hash};
use super::summary::HashEntries;
use crate::api::keys;
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

/// The parts of a pod the rollout planner reads.
pub trait PodView {
    /// `metadata.namespace`, "" when unset.
    fn namespace(&self) -> &str;
    /// `metadata.name`, "" when unset.
    fn name(&self) -> &str;
    fn labels(&self) -> Option<&Labels>;
    fn annotation(&self, which: PlannerAnnotation) -> Option<&str>;
    fn recorded_hashes(&self, which: HashAnnotation) -> RecordedHashes<'_>;
    /// One SidecarSet's entry of `kruise.io/sidecarset-inplace-update-state`.
    fn sidecar_state(&self, sidecarset: &str) -> Cow<'_, SidecarState>;
    fn engine_progress(&self) -> Option<EngineProgress<'_>>;
    /// `spec.containers`, in order.
    fn containers(&self) -> impl ExactSizeIterator<Item = ContainerView<'_>>;
    /// `status.containerStatuses`, in order.
    fn container_statuses(&self) -> impl ExactSizeIterator<Item = StatusView<'_>>;
    /// `status.phase`, "" when unset.
    fn phase(&self) -> &str;
    /// Kubernetes' `IsPodReady`: some condition Ready is True.
    fn has_ready_condition(&self) -> bool;
    /// `lastTransitionTime` of the first Ready condition.
    fn ready_since(&self) -> Option<&Timestamp>;
    fn created(&self) -> Option<&Timestamp>;
    /// `metadata.deletionTimestamp` is set.
    fn deleting(&self) -> bool;
    /// `spec.nodeName` is set and not empty.
    fn scheduled(&self) -> bool;
    /// The first `SidecarSetUpgradable` condition.
    fn upgradable_condition(&self) -> Option<UpgradableView<'_>>;

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

    fn containers(&self) -> impl ExactSizeIterator<Item = ContainerView<'_>> {
        let containers = self.spec.as_ref().map(|s| s.containers.as_slice());
        containers.unwrap_or(&[]).iter().map(|c| ContainerView {
            name: &c.name,
            image: c.image.as_deref().unwrap_or(""),
        })
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

    fn ready_since(&self) -> Option<&Timestamp> {
        self.status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .and_then(|conditions| conditions.iter().find(|c| c.type_ == "Ready"))
            .and_then(|c| c.last_transition_time.as_ref())
            .map(|t| &t.0)
    }

    fn created(&self) -> Option<&Timestamp> {
        self.metadata.creation_timestamp.as_ref().map(|t| &t.0)
    }

    fn deleting(&self) -> bool {
        self.metadata.deletion_timestamp.is_some()
    }

    fn scheduled(&self) -> bool {
        self.spec
            .as_ref()
            .and_then(|s| s.node_name.as_deref())
            .is_some_and(|n| !n.is_empty())
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
