//! What a SidecarSet writes on a pod, read and written in one place: the codec of its
//! annotations ([`super::codec`], re-exported here) and the predicates over a [`PodView`]: was
//! the SidecarSet injected, which hot-upgrade copies work, are its containers updated. The
//! injection writes them, the rollout planner reads them, pod by pod and in place.

use std::collections::BTreeMap;

pub use super::codec::*;
pub use super::fields::{annotation, container_statuses};
use super::view::{PlannerAnnotation, PodView};

/// Was the SidecarSet injected into the pod (`kruise.io/sidecarset-injected-list`)?
pub fn is_injected(pod: &impl PodView, sidecarset: &str) -> bool {
    pod.annotation(PlannerAnnotation::InjectedList)
        .is_some_and(|list| list.split(',').any(|name| name == sidecarset))
}

/// `kruise.io/sidecarset-working-hotupgrade-container`: sidecar name → working copy.
pub fn working_containers(pod: &impl PodView) -> BTreeMap<String, String> {
    pod.annotation(PlannerAnnotation::WorkingHotUpgrade)
        .and_then(|value| serde_json::from_str(value).ok())
        .unwrap_or_default()
}

impl SidecarState {
    /// Upstream's `IsSidecarContainerUpdateCompleted` over the named containers (§2.9).
    pub fn consistent<N: AsRef<str>>(&self, pod: &impl PodView, names: &[N]) -> bool {
        let named = |name: &str| names.iter().any(|n| n.as_ref() == name);
        // Statuses missing: containers are still being created.
        if pod.containers().len() != pod.container_statuses().len() {
            return false;
        }
        let checked = || pod.containers().filter(|c| named(c.name));
        let all_digests = checked().all(|c| is_digest_reference(c.image));
        if all_digests {
            return pod
                .container_statuses()
                .filter(|s| named(s.name))
                .all(|status| {
                    let spec_image = checked()
                        .find(|c| c.name == status.name)
                        .map_or("", |c| c.image);
                    digest_images_equal(spec_image, status.image_id)
                });
        }
        let recorded = match self {
            Self::Absent => return true,
            Self::Unreadable => return false,
            Self::Recorded(recorded) => recorded,
        };
        pod.container_statuses()
            .filter(|s| named(s.name))
            .all(|status| {
                let Some((_, old_image_id)) = recorded.iter().find(|(name, _)| name == status.name)
                else {
                    return true;
                };
                let spec_image = pod
                    .containers()
                    .find(|c| c.name == status.name)
                    .map_or("", |c| c.image);
                // Same image ID as before the update while the spec asks for another image: the
                // runtime has not switched yet.
                !(*old_image_id == status.image_id && spec_image != status.image)
            })
    }
}

#[cfg(test)]
mod tests;
