//! Events, recorded in one place. An event is a courtesy to whoever looks at the object: failing
//! to record one is logged and never fails the round that asked for it.
//!
//! An event about a cluster-scoped object (a SidecarSet) goes through the core `v1` Events API
//! ([`crate::k8s::event`] says why), as OpenKruise's recorder writes it. Events about namespaced
//! objects use `events.k8s.io/v1` through kube's recorder (its series of repeats included).
//!
//! An event that must be told once per object and cause, whichever replica or term tells it
//! ([`EventRecorder::record_once`]), gets a name derived from that cause: a second create of it is
//! refused by the apiserver as existing, until the event expires (`--event-ttl`, an hour by
//! default). kube's recorder cannot do this: it takes a second event of the same reason about the
//! same object for a repeat of the first, whatever its note says.

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Event as CoreEvent, ObjectReference};
use k8s_openapi::api::events::v1::Event as K8sEvent;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::api::{Api, PostParams};
use kube::runtime::events::{Event, Recorder, Reporter};
use sha2::{Digest, Sha256};

use crate::k8s::event::{CLUSTER_EVENT_NAMESPACE, cluster_scoped_event, type_name};

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

    /// Records `event` about the namespaced object `reference` once for `cause` (for instance a
    /// SidecarSet and the object's uid): an event of the same object and cause recorded before,
    /// by this process or another, and not yet expired, is left as it is. Returns whether the
    /// event is recorded (now or before).
    pub async fn record_once(
        &self,
        reference: &ObjectReference,
        event: &Event,
        cause: &str,
    ) -> bool {
        let namespace = reference.namespace.as_deref().unwrap_or("default");
        let api: Api<K8sEvent> = Api::namespaced(self.client.clone(), namespace);
        let once = once_event(&self.reporter, reference, event, cause, Timestamp::now());
        match api.create(&PostParams::default(), &once).await {
            Ok(_) => true,
            Err(kube::Error::Api(status)) if status.code == 409 => {
                tracing::debug!(reason = %event.reason, object = ?reference.name, "event recorded before");
                true
            }
            Err(error) => {
                tracing::warn!(%error, reason = %event.reason, object = ?reference.name, "event not recorded");
                false
            }
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
            &cluster_scoped_event(
                &self.reporter.controller,
                reference,
                event,
                Timestamp::now(),
            ),
        )
        .await
        .map(drop)
    }
}

/// The name of the event about `object` for `cause`: the object's name (cut to leave room) and a
/// digest of the cause, a valid DNS subdomain as event names must be.
pub fn once_event_name(object: &str, cause: &str) -> String {
    const DIGEST_CHARS: usize = 16;
    let digest = Sha256::digest(cause.as_bytes());
    let digest: String = digest
        .iter()
        .take(DIGEST_CHARS / 2)
        .map(|b| format!("{b:02x}"))
        .collect();
    // Object names are DNS subdomains of ASCII; what is cut must not end a label with - or .
    let room = 253 - 1 - DIGEST_CHARS;
    let prefix = object.get(..room.min(object.len())).unwrap_or(object);
    let prefix = prefix.trim_end_matches(['-', '.']);
    if prefix.is_empty() {
        digest
    } else {
        format!("{prefix}.{digest}")
    }
}

/// The `events.k8s.io/v1` form of `event` about `reference`, named for `cause`, as kube's
/// recorder fills it otherwise.
fn once_event(
    reporter: &Reporter,
    reference: &ObjectReference,
    event: &Event,
    cause: &str,
    now: Timestamp,
) -> K8sEvent {
    let object = reference.name.as_deref().unwrap_or(&reporter.controller);
    K8sEvent {
        metadata: ObjectMeta {
            name: Some(once_event_name(object, cause)),
            namespace: reference.namespace.clone(),
            ..ObjectMeta::default()
        },
        action: Some(event.action.clone()),
        reason: Some(event.reason.clone()),
        note: event.note.clone(),
        event_time: Some(MicroTime(now)),
        regarding: Some(reference.clone()),
        related: event.secondary.clone(),
        reporting_controller: Some(reporter.controller.clone()),
        reporting_instance: Some(
            reporter
                .instance
                .clone()
                .unwrap_or_else(|| reporter.controller.clone()),
        ),
        type_: Some(type_name(event.type_)),
        ..K8sEvent::default()
    }
}

#[cfg(test)]
mod tests;
