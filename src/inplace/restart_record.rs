//! This project's own evidence for completion, in an annotation of its own beside OpenKruise's
//! state (which keeps its wire meaning): each patched container's ID and restart count at the
//! moment its image was patched, and when. Both change with every restart, unlike the imageID,
//! which stays put when the new tag has the digest of the old one.

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{ContainerStatus, Pod};
use serde::{Deserialize, Serialize};

use crate::api::keys;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RestartRecord {
    /// The update revision the record belongs to; a record of another revision is stale.
    pub revision: String,
    /// When the image was patched (controller clock, RFC 3339).
    pub patched_at: String,
    pub containers: BTreeMap<String, ContainerStart>,
}

/// What identified the running container when its image was patched.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerStart {
    #[serde(rename = "containerID", default)]
    pub container_id: String,
    #[serde(default)]
    pub restart_count: i32,
}

impl ContainerStart {
    pub fn of(status: &ContainerStatus) -> Self {
        Self {
            container_id: status.container_id.clone().unwrap_or_default(),
            restart_count: status.restart_count,
        }
    }

    /// The container in `status` is not the one recorded: kubelet started a new one since.
    pub fn restarted_in(&self, status: &ContainerStatus) -> bool {
        let id = status.container_id.as_deref().unwrap_or("");
        (!id.is_empty() && id != self.container_id) || status.restart_count > self.restart_count
    }
}

/// The pod's record, if it has one that reads; an unreadable one counts as absent.
pub fn read_record(pod: &Pod) -> Option<RestartRecord> {
    let raw = pod
        .metadata
        .annotations
        .as_ref()?
        .get(keys::INPLACE_UPDATE_RESTART_RECORD)?;
    serde_json::from_str(raw).ok()
}

/// Records `statuses` (the containers being patched now) for `revision`. A container already
/// recorded for the same revision keeps its first record, so a retried batch cannot erase it.
pub fn record_patch<'a>(
    pod: &mut Pod,
    revision: &str,
    now: Timestamp,
    statuses: impl IntoIterator<Item = &'a ContainerStatus>,
) {
    let mut record = read_record(pod)
        .filter(|r| r.revision == revision)
        .unwrap_or_else(|| RestartRecord {
            revision: revision.to_string(),
            patched_at: now.to_string(),
            containers: BTreeMap::new(),
        });
    for status in statuses {
        record
            .containers
            .entry(status.name.clone())
            .or_insert_with(|| ContainerStart::of(status));
    }
    let raw = serde_json::to_string(&record).expect("a restart record always serialises");
    pod.metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(keys::INPLACE_UPDATE_RESTART_RECORD.to_string(), raw);
}

#[cfg(test)]
mod tests;
