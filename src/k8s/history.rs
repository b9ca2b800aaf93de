//! Kubernetes' controller history (`k8s.io/kubernetes/pkg/controller/history`) as every kind of
//! this project keeps it: how a ControllerRevision is hashed and named, the history order, and
//! which revision a new one is equal to. The workloads and the SidecarSet differ only in the data
//! they store.

use k8s_openapi::api::apps::v1::ControllerRevision;

use super::go_text::go_quote;
use super::gojson;
use crate::api::SidecarSetInjectRevision;

/// Label Kubernetes' history puts on every ControllerRevision it makes: its first hash (kept
/// when a collision renames it).
pub const HASH_LABEL: &str = "controller.kubernetes.io/hash";

/// Kubernetes caps the name prefix so that `<prefix>-<hash>` stays a valid name.
const MAX_PREFIX_LEN: usize = 223;

/// FNV-32 (multiply, then xor), Go's `hash/fnv.New32`, which `HashControllerRevision` uses.
pub fn fnv32(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5_u32, |hash, &b| {
        hash.wrapping_mul(0x0100_0193) ^ u32::from(b)
    })
}

/// Kubernetes' `rand.SafeEncodeString`: digits become characters no word can be spelled from.
fn safe_encode(text: &str) -> String {
    const ALPHANUMS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    text.bytes()
        .map(|b| char::from(ALPHANUMS[usize::from(b) % ALPHANUMS.len()]))
        .collect()
}

/// The hash of revision data under a collision count: FNV-32 over the data followed by the
/// decimal collision count, printed in decimal, each digit mapped through `SafeEncodeString`.
pub fn revision_hash(data: &str, collision_count: i32) -> String {
    let mut bytes = data.as_bytes().to_vec();
    bytes.extend_from_slice(collision_count.to_string().as_bytes());
    safe_encode(&fnv32(&bytes).to_string())
}

/// `<prefix>-<hash>`, the prefix cut to 223 bytes (on a character boundary).
pub fn revision_name(owner: &str, hash: &str) -> String {
    let mut end = owner.len().min(MAX_PREFIX_LEN);
    while !owner.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}-{hash}", &owner[..end])
}

/// The data of a stored revision in canonical bytes (keys sorted, Go's escaping), so that data
/// written by Go and by this project compare equal whatever escaping each used.
pub fn stored_data(revision: &ControllerRevision) -> String {
    revision
        .data
        .as_ref()
        .map_or_else(|| "null".into(), |d| gojson::encode_value(&d.0))
}

/// Kubernetes' history order: by `.revision`, then creation time, then name.
pub fn sort_history(revisions: &mut [ControllerRevision]) {
    revisions.sort_by(|a, b| {
        a.revision
            .cmp(&b.revision)
            .then_with(|| {
                let time = |r: &ControllerRevision| r.metadata.creation_timestamp.clone();
                time(a).map(|t| t.0).cmp(&time(b).map(|t| t.0))
            })
            .then_with(|| a.metadata.name.cmp(&b.metadata.name))
    });
}

/// Where a history (in history order) holds data equal to a new revision's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Equivalent {
    /// The newest revision: nothing changed.
    Latest(usize),
    /// An older one, the newest of those equal (a rollback): it gets the next number.
    Older(usize),
    /// None: the new revision is created.
    None,
}

/// Kubernetes' `FindEqualRevisions` and the choice every history controller makes with it.
pub fn find_equivalent(len: usize, is_equal: impl Fn(usize) -> bool) -> Equivalent {
    match (0..len).rev().find(|&i| is_equal(i)) {
        Some(i) if i + 1 == len => Equivalent::Latest(i),
        Some(i) => Equivalent::Older(i),
        None => Equivalent::None,
    }
}

/// What OpenKruise's lookup of a SidecarSet's injection revision answers when there is none, in
/// the client's words: the NotFound of its GET by `revisionName`, or the one it makes up (naming
/// the SidecarSet) for a `customVersion` that no revision of the set carries.
pub fn injection_revision_not_found(revision: &SidecarSetInjectRevision, set: &str) -> String {
    match revision.revision_name.as_deref() {
        Some("") => "resource name may not be empty".to_string(),
        Some(name) => format!("controllerrevisions.apps {} not found", go_quote(name)),
        None => format!("ControllerRevision.apps {} not found", go_quote(set)),
    }
}

#[cfg(test)]
mod tests;
