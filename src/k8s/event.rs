//! The core `v1` form of an event about a cluster-scoped object (a SidecarSet, a webhook
//! configuration), as client-go's recorder writes one: into `default`, in the legacy fields
//! (source, timestamps, count) that every apiserver validates alike. Apiservers before 1.22 (1.20
//! among them) refuse such an event from `events.k8s.io/v1` ("involvedObject.namespace: does not
//! match event.namespace"); the core API takes it on every version.

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Event as CoreEvent, EventSource, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kube::runtime::events::{Event, EventType};

/// Where events about cluster-scoped objects go.
pub const CLUSTER_EVENT_NAMESPACE: &str = "default";

/// The core `v1` event `event` about the cluster-scoped `reference`, told by `component` at
/// `now`: named `<object>.<nanoseconds in hex>` as client-go names it.
pub fn cluster_scoped_event(
    component: &str,
    reference: &ObjectReference,
    event: &Event,
    now: Timestamp,
) -> CoreEvent {
    let name = reference.name.as_deref().unwrap_or(component);
    CoreEvent {
        metadata: ObjectMeta {
            name: Some(format!("{name}.{:x}", now.as_nanosecond())),
            namespace: Some(CLUSTER_EVENT_NAMESPACE.to_string()),
            ..ObjectMeta::default()
        },
        involved_object: reference.clone(),
        related: event.secondary.clone(),
        reason: Some(event.reason.clone()),
        message: event.note.clone(),
        type_: Some(type_name(event.type_)),
        source: Some(EventSource {
            component: Some(component.to_string()),
            host: None,
        }),
        first_timestamp: Some(Time(now)),
        last_timestamp: Some(Time(now)),
        count: Some(1),
        ..CoreEvent::default()
    }
}

/// `Normal` or `Warning`, as the events APIs spell them.
pub fn type_name(type_: EventType) -> String {
    match type_ {
        EventType::Normal => "Normal".to_string(),
        EventType::Warning => "Warning".to_string(),
    }
}
