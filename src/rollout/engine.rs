//! A SidecarSet upgrade through the in-place engine: a pod whose changed sidecars sit on several
//! launch priorities gets them batch by batch, the engine recording its progress on the pod under
//! a revision of the SidecarSet. Decided here, as data: the revision, the pods the engine is
//! moving, where it starts and where it goes, and whether an upgrade goes through it at all. The
//! controller runs the engine's steps and sends their writes.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Pod;

use super::upgrade::PodUpgrade;
use crate::api::{SidecarSet, keys};
use crate::podmarks::PodView;
use crate::podmarks::inplace_state::UpdateSpec;

/// The in-place revision a SidecarSet's multi-batch upgrades record: unique per SidecarSet and
/// per content. `None` until the SidecarSet carries its hash.
pub fn engine_revision(set: &SidecarSet) -> Option<String> {
    let hash = set.annotation(keys::SIDECARSET_HASH)?;
    Some(format!("{}-{hash}", set.name()))
}

/// Whether the engine has an update of this revision on the pod.
pub fn engine_in_flight(pod: &impl PodView, revision: &str) -> bool {
    matches!(pod.engine_progress(), Some(p) if p.revision == revision)
}

/// Whether the pod is between two batches of this revision's multi-batch update.
pub fn between_batches(pod: &impl PodView, revision: &str) -> bool {
    matches!(pod.engine_progress(), Some(p) if p.revision == revision && p.has_next_batch)
}

/// The pod the engine starts from: every bookkeeping annotation of the upgrade written, but no
/// image changed yet; the engine patches images batch by batch.
pub fn engine_base(upgrade: &PodUpgrade) -> Pod {
    let mut pod = upgrade.pod.clone();
    if let Some(spec) = pod.spec.as_mut() {
        for change in upgrade.batches.iter().flatten() {
            if let Some(c) = spec
                .containers
                .iter_mut()
                .find(|c| c.name == change.container)
            {
                c.image = change.previous_image.clone();
            }
        }
    }
    pod
}

/// The engine's target for an upgrade: every changed image.
pub fn engine_target(upgrade: &PodUpgrade, revision: &str) -> UpdateSpec {
    let images: BTreeMap<String, String> = upgrade
        .batches
        .iter()
        .flatten()
        .map(|c| (c.container.clone(), c.image.clone()))
        .collect();
    UpdateSpec::images(revision, images)
}

/// How one upgrade reaches its pod.
#[derive(Debug, Clone, PartialEq)]
pub enum UpgradeRoute {
    /// Another owner's in-place update (the pod's CloneSet) is in flight on the pod: one update
    /// at a time per pod, so this pod is taken again in a later round.
    WaitFor { other: String },
    /// One batch: the upgraded pod is written at once, as OpenKruise does.
    Whole,
    /// Several launch priorities: the engine goes from `base` to `target`, first batch now, later
    /// batches in later rounds.
    Engine {
        base: Box<Pod>,
        target: Box<UpdateSpec>,
    },
}

/// How `upgrade` goes to its pod, given the SidecarSet's engine revision and the revision of the
/// in-place update in flight on the freshly read pod (as [`crate::inplace::in_flight_revision`]
/// reads it).
pub fn upgrade_route(
    upgrade: &PodUpgrade,
    revision: Option<&str>,
    in_flight: Option<String>,
) -> UpgradeRoute {
    if let Some(other) = in_flight.filter(|other| Some(other.as_str()) != revision) {
        return UpgradeRoute::WaitFor { other };
    }
    match revision {
        Some(revision) if upgrade.batches.len() > 1 => UpgradeRoute::Engine {
            base: Box::new(engine_base(upgrade)),
            target: Box::new(engine_target(upgrade, revision)),
        },
        _ => UpgradeRoute::Whole,
    }
}

#[cfg(test)]
pub(crate) mod tests;
