//! What the SidecarSet controller reads off one pod: is it updated, may it be upgraded, are its
//! sidecars done rolling, is it ready. Computed once per pod per round, reading the pod in place;
//! the marks themselves are read through [`crate::podmarks`].

use memchr::memmem;

use crate::api::{SidecarSet, keys};
use crate::podmarks::sidecarset::{
    SidecarState, hot_upgrade_copies, idle_copy, recorded_upgrade_hash, working_containers,
};
use crate::podmarks::{HashAnnotation, PodView, RecordedHashes};

/// The parts of a SidecarSet every per-pod check needs, worked out once per round.
#[derive(Debug, Clone)]
pub struct SidecarSetView<'a> {
    pub name: &'a str,
    /// The SidecarSet's `kruise.io/sidecarset-hash` annotation ("" when absent).
    pub hash: ExpectedHash<'a>,
    /// The SidecarSet's `kruise.io/sidecarset-hash-without-image` annotation ("" when absent).
    pub hash_without_image: ExpectedHash<'a>,
    /// Pod container names the SidecarSet owns: a hot-upgrade sidecar stands for its two copies.
    pub sidecar_names: Vec<String>,
    /// Hot-upgrade sidecars: (name, image of the idle copy).
    pub hot_upgrade: Vec<(&'a str, &'a str)>,
    /// ColdUpgrade sidecar names (containers only: init containers are never checked).
    pub cold_upgrade: Vec<&'a str>,
}

impl<'a> SidecarSetView<'a> {
    pub fn new(set: &'a SidecarSet) -> Self {
        let mut sidecar_names = Vec::new();
        let mut hot_upgrade = Vec::new();
        let mut cold_upgrade = Vec::new();
        for sidecar in set.containers() {
            let name = sidecar.name();
            if sidecar.is_hot_upgrade() {
                let empty_image = sidecar
                    .upgrade_strategy
                    .as_ref()
                    .and_then(|s| s.hot_upgrade_empty_image.as_deref())
                    .unwrap_or("");
                hot_upgrade.push((name, empty_image));
                let (first, second) = hot_upgrade_copies(name);
                sidecar_names.push(first);
                sidecar_names.push(second);
            } else {
                cold_upgrade.push(name);
                sidecar_names.push(name.to_string());
            }
        }
        sidecar_names.sort();
        sidecar_names.dedup();
        Self {
            name: set.name(),
            hash: ExpectedHash::new(set.annotation(keys::SIDECARSET_HASH).unwrap_or("")),
            hash_without_image: ExpectedHash::new(
                set.annotation(keys::SIDECARSET_HASH_WITHOUT_IMAGE)
                    .unwrap_or(""),
            ),
            sidecar_names,
            hot_upgrade,
            cold_upgrade,
        }
    }
}

/// Everything one round needs to know about one matched pod.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PodFacts {
    /// The pod records the SidecarSet's current hash.
    pub updated: bool,
    /// The pod's hash-without-image equals the SidecarSet's: only images differ, so the sidecars
    /// can be upgraded in place.
    pub upgradable: bool,
    /// Ready in the SidecarSet sense (§2.9).
    pub ready: bool,
    /// Every sidecar container runs what its spec says (no in-place update still rolling).
    pub consistent: bool,
    /// Some sidecar reports ready while a previous in-place update of it is still rolling: the
    /// pod waits for that update before the next one.
    pub upgrade_in_progress: bool,
    /// Hot upgrade done (updated, running and ready on the new working copies) but some idle copy
    /// still holds a real image: time to reset it to the empty image.
    pub idle_copy_to_reset: bool,
}

impl PodFacts {
    /// Counted in `readyPods` and able to absorb an upgrade without adding to unavailability.
    pub fn available(&self) -> bool {
        self.consistent && self.ready
    }
}

/// Reads one matched pod against one SidecarSet. The in-place state annotation is parsed once.
pub fn pod_facts(pod: &impl PodView, view: &SidecarSetView<'_>) -> PodFacts {
    let state = pod.sidecar_state(view.name);
    let upgrade_in_progress = view.sidecar_names.iter().any(|name| {
        pod.container_statuses().any(|s| s.ready && s.name == *name)
            && !state.consistent(pod, std::slice::from_ref(name))
    });
    let mut facts = PodFacts {
        updated: view.hash.recorded_by(pod, HashAnnotation::Hash, view.name),
        upgradable: view.hash_without_image.recorded_by(
            pod,
            HashAnnotation::HashWithoutImage,
            view.name,
        ),
        ready: is_ready(pod, view),
        consistent: state.consistent(pod, &view.sidecar_names),
        upgrade_in_progress,
        idle_copy_to_reset: false,
    };
    facts.idle_copy_to_reset = facts.updated && hot_upgrade_finished(pod, view, &state);
    facts
}

/// Every hot-upgrade sidecar's working copy runs its spec image and is ready, the pod is running
/// and ready, and some idle copy does not run the empty image yet.
fn hot_upgrade_finished(
    pod: &impl PodView,
    view: &SidecarSetView<'_>,
    state: &SidecarState,
) -> bool {
    if !hot_upgrade_pending(pod, view)
        || pod.phase() != "Running"
        || !pod.has_ready_condition()
        || pod.deleting()
    {
        return false;
    }
    let working = working_containers(pod);
    view.hot_upgrade.iter().all(|(name, _)| {
        let Some(copy) = working.get(*name) else {
            return false;
        };
        let ready = pod.container_statuses().any(|s| s.name == *copy && s.ready);
        ready && state.consistent(pod, std::slice::from_ref(copy))
    })
}

/// A SidecarSet hash that pods are checked against, with its substring searcher built once.
#[derive(Debug, Clone)]
pub struct ExpectedHash<'a> {
    pub text: &'a str,
    finder: memmem::Finder<'a>,
}

impl<'a> ExpectedHash<'a> {
    pub fn new(text: &'a str) -> Self {
        Self {
            text,
            finder: memmem::Finder::new(text),
        }
    }

    /// Does the pod record this hash for `sidecarset` in `which`? Absent and unreadable
    /// annotations record "".
    pub fn recorded_by(&self, pod: &impl PodView, which: HashAnnotation, sidecarset: &str) -> bool {
        let value = match pod.recorded_hashes(which) {
            RecordedHashes::Text(Some(value)) => value,
            parsed_or_absent => {
                return parsed_or_absent.get(sidecarset).as_deref().unwrap_or("") == self.text;
            }
        };
        // Without escapes a JSON text can only hold the hash verbatim: a value that does not
        // contain it needs no parsing (every pod still waiting for a rollout).
        if !self.text.is_empty()
            && memchr::memchr(b'\\', value.as_bytes()).is_none()
            && self.finder.find(value.as_bytes()).is_none()
        {
            return false;
        }
        recorded_upgrade_hash(value, sidecarset)
            .as_deref()
            .unwrap_or("")
            == self.text
    }
}

/// Does the pod still carry every sidecar of the SidecarSet (§2.4)? Hot-upgrade sidecars need both
/// copies and an entry in the working-container annotation.
pub fn carries_sidecars(pod: &impl PodView, view: &SidecarSetView<'_>) -> bool {
    let has = |name: &str| pod.containers().any(|c| c.name == name);
    if !view.cold_upgrade.iter().all(|name| has(name)) {
        return false;
    }
    if view.hot_upgrade.is_empty() {
        return true;
    }
    let working = working_containers(pod);
    view.hot_upgrade.iter().all(|(name, _)| {
        let (first, second) = hot_upgrade_copies(name);
        working.contains_key(*name) && has(&first) && has(&second)
    })
}

/// Ready in the SidecarSet sense: no hot upgrade half done (every idle copy runs the empty image),
/// Running, Ready and not terminating.
pub fn is_ready(pod: &impl PodView, view: &SidecarSetView<'_>) -> bool {
    if hot_upgrade_pending(pod, view) {
        return false;
    }
    pod.phase() == "Running" && pod.has_ready_condition() && !pod.deleting()
}

/// Some hot-upgrade sidecar's idle copy does not run the empty image yet.
pub fn hot_upgrade_pending(pod: &impl PodView, view: &SidecarSetView<'_>) -> bool {
    if view.hot_upgrade.is_empty() {
        return false;
    }
    let working = working_containers(pod);
    view.hot_upgrade.iter().any(|(name, empty_image)| {
        let idle = idle_copy(name, &working);
        pod.containers()
            .find(|c| c.name == idle)
            .is_some_and(|c| c.image != *empty_image)
    })
}
