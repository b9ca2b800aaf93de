//! Events, recorded in one place. An event is a courtesy to whoever looks at the object: failing
//! to record one is logged and never fails the round that asked for it.

use k8s_openapi::api::core::v1::ObjectReference;
use kube::runtime::events::{Event, Recorder};

/// Records `event` about `reference`.
pub async fn record(recorder: &Recorder, reference: &ObjectReference, event: &Event) {
    if let Err(error) = recorder.publish(event, reference).await {
        tracing::debug!(%error, "event not recorded");
    }
}
