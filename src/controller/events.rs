//! Events, recorded in one place. An event is a courtesy to whoever looks at the object: failing
//! to record one is logged and never fails the round that asked for it.
//!
//! An event about a cluster-scoped object (a SidecarSet) goes through the core `v1` Events API,
//! into `default`, as OpenKruise's recorder writes it: apiservers before 1.22 (1.20 among them)
//! refuse such an event from `events.k8s.io/v1` ("involvedObject.namespace: does not match
//! event.namespace"), while the core API takes it on every version. Events about namespaced
//! objects use `events.k8s.io/v1` through kube's recorder (its series of repeats included).

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Event as CoreEvent, EventSource, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kube::api::{Api, PostParams};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};

/// Where cluster-scoped objects' events live.
const CLUSTER_EVENT_NAMESPACE: &str = "default";

/// A component's events on one replica.
#[derive(Clone)]
pub struct EventRecorder {
    recorder: Recorder,
    client: kube::Client,
    reporter: Reporter,
}

impl EventRecorder {
    pub fn new(client: kube::Client, reporter: Reporter) -> Self {
        EventRecorder {
            recorder: Recorder::new(client.clone(), reporter.clone()),
            client,
            reporter,
        }
    }

    /// Records `event` about `reference`.
    pub async fn record(&self, reference: &ObjectReference, event: &Event) {
        let recorded = match reference.namespace.as_deref() {
            Some(namespace) if !namespace.is_empty() => {
                self.recorder.publish(event, reference).await
            }
            _ => self.record_cluster_scoped(reference, event).await,
        };
        if let Err(error) = recorded {
            tracing::warn!(%error, reason = %event.reason, object = ?reference.name, "event not recorded");
        }
    }

    async fn record_cluster_scoped(
        &self,
        reference: &ObjectReference,
        event: &Event,
    ) -> Result<(), kube::Error> {
        let api: Api<CoreEvent> = Api::namespaced(self.client.clone(), CLUSTER_EVENT_NAMESPACE);
        api.create(
            &PostParams::default(),
            &core_event(&self.reporter, reference, event, Timestamp::now()),
        )
        .await
        .map(drop)
    }
}

/// The core `v1` form of `event` about `reference`, recorded at `now`, in the legacy fields
/// (source, timestamps, count) that every apiserver validates alike.
fn core_event(
    reporter: &Reporter,
    reference: &ObjectReference,
    event: &Event,
    now: Timestamp,
) -> CoreEvent {
    let name = reference.name.as_deref().unwrap_or(&reporter.controller);
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
        type_: Some(match event.type_ {
            EventType::Normal => "Normal".to_string(),
            EventType::Warning => "Warning".to_string(),
        }),
        source: Some(EventSource {
            component: Some(reporter.controller.clone()),
            host: None,
        }),
        first_timestamp: Some(Time(now)),
        last_timestamp: Some(Time(now)),
        count: Some(1),
        ..CoreEvent::default()
    }
}
