//! Pod writes as RFC 6902 patches instead of whole-object PUTs.
//!
//! A decision is computed on the typed pod; what goes over the wire is only what it changed
//! (typed before against typed after). Fields this binary's `Pod` type does not know — those a
//! newer apiserver adds — are therefore never dropped, and a pod read from the pruned cache (see
//! [`super::pod_cache`]) can be written without losing what the cache left out.
//!
//! Every patch first replaces `metadata.resourceVersion` with the version the decision was made
//! on. When the pod is still at that version this is a no-op; when it moved on, the patched object
//! carries a stale version and the apiserver answers 409 Conflict, exactly as a PUT would, so
//! callers keep their read-decide-write-retry loops.

use json_patch::{Patch, PatchOperation, ReplaceOperation};
use jsonptr::PointerBuf;
use k8s_openapi::api::core::v1::Pod;
use serde_json::Value;

use crate::admission::patch::diff;

/// The guarded patch turning `before` into `after`; `None` when they are the same.
pub fn guarded_patch(before: &Pod, after: &Pod) -> Result<Option<Patch>, serde_json::Error> {
    let mut operations = diff(
        &serde_json::to_value(before)?,
        &serde_json::to_value(after)?,
    );
    // The version is the apiserver's to set; the guard below is the only mention of it.
    operations.retain(|op| op.path().as_str() != "/metadata/resourceVersion");
    if operations.is_empty() {
        return Ok(None);
    }
    if let Some(version) = before.metadata.resource_version.as_deref() {
        let guard = PatchOperation::Replace(ReplaceOperation {
            path: PointerBuf::from_tokens(["metadata", "resourceVersion"]),
            value: Value::String(version.to_string()),
        });
        operations.insert(0, guard);
    }
    Ok(Some(Patch(operations)))
}

#[cfg(test)]
mod tests;
