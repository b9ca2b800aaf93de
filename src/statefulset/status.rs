//! `status` of an Advanced StatefulSet (OpenKruise `stateful_set_control.go`
//! `computeReplicaStatus`, `completeRollingUpdate`, `updatePVCStatus`; `stateful_set_utils.go`
//! `inconsistentStatus`; `pkg/util/pvc` `IsPVCCompatibleAndReady`).
//!
//! The counters are taken over the pods of the round's slots and the condemned ones, as cached
//! at the start of the round: a pod deleted this round still counts, one created does not.
//! `volumeClaims` counts, per claim template, the slot pods whose claim is compatible with it.

use jiff::Timestamp;
use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{PersistentVolumeClaim, PersistentVolumeClaimSpec};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as WireQuantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::pod::StatefulPodFacts;
use crate::api::statefulset::{StatefulSetStatus, VolumeClaimStatus};
use crate::k8s::quantity::Quantity;
use crate::workload::status::{self as conditions, selector_string};

/// Condition types the round sets when a pod write fails.
pub const FAILED_CREATE_POD: &str = "FailedCreatePod";
pub const FAILED_UPDATE_POD: &str = "FailedUpdatePod";

/// The replica counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub replicas: i32,
    pub ready: i32,
    pub available: i32,
    pub current: i32,
    pub updated: i32,
    pub updated_ready: i32,
    pub updated_available: i32,
}

impl Counts {
    /// `computeReplicaStatus` over `pods`.
    pub fn of<'a>(pods: impl IntoIterator<Item = &'a StatefulPodFacts>) -> Counts {
        let mut counts = Counts::default();
        for p in pods {
            let created = p.created();
            counts.replicas += i32::from(created);
            if p.running_ready {
                counts.ready += 1;
                let available = p.availability.is_available();
                counts.available += i32::from(available);
                if p.at_update {
                    counts.updated_ready += 1;
                    counts.updated_available += i32::from(available);
                }
            }
            if created && !p.terminating {
                counts.current += i32::from(p.at_current);
                counts.updated += i32::from(p.at_update);
            }
        }
        counts
    }
}

/// Everything the status is made of.
pub struct StatusInput<'a> {
    pub generation: Option<i64>,
    pub counts: Counts,
    pub current_revision: &'a str,
    pub update_revision: &'a str,
    pub collision_count: i32,
    pub selector: Option<&'a LabelSelector>,
    pub volume_claims: Vec<VolumeClaimStatus>,
    /// `updateStrategy.type` is `RollingUpdate`.
    pub rolling_update: bool,
}

/// The status of the round, with a finished rolling update completed (`completeRollingUpdate`:
/// every counted pod updated and ready makes the update revision current).
pub fn compute(input: StatusInput<'_>) -> StatefulSetStatus {
    let counts = input.counts;
    let complete = input.rolling_update
        && counts.updated == counts.replicas
        && counts.ready == counts.replicas;
    let omit_zero = |n: i32| (n != 0).then_some(n);
    StatefulSetStatus {
        observed_generation: input.generation,
        replicas: counts.replicas,
        ready_replicas: counts.ready,
        available_replicas: counts.available,
        current_replicas: if complete {
            counts.updated
        } else {
            counts.current
        },
        updated_replicas: counts.updated,
        updated_ready_replicas: omit_zero(counts.updated_ready),
        updated_available_replicas: omit_zero(counts.updated_available),
        current_revision: Some(
            if complete {
                input.update_revision
            } else {
                input.current_revision
            }
            .to_string(),
        )
        .filter(|r| !r.is_empty()),
        update_revision: Some(input.update_revision.to_string()).filter(|r| !r.is_empty()),
        collision_count: Some(input.collision_count),
        conditions: None,
        label_selector: input
            .selector
            .map(selector_string)
            .filter(|s| !s.is_empty()),
        volume_claims: (!input.volume_claims.is_empty()).then_some(input.volume_claims),
    }
}

/// A failed pod write of the round in the status (`SetStatefulsetCondition` on the round's fresh
/// status: a condition of the same type is replaced).
pub fn record_failure(status: &mut StatefulSetStatus, kind: &str, message: &str, now: Timestamp) {
    conditions::record_failure(&mut status.conditions, kind, message, now);
}

/// `inconsistentStatus`: whether `status` is worth writing over `previous`. The generation grown,
/// a counter, a revision or the selector changed, or a claim template's counts of `previous`
/// missing or different. `updatedReadyReplicas`, `updatedAvailableReplicas`, `collisionCount`
/// and the conditions alone are never written.
pub fn changed(previous: Option<&StatefulSetStatus>, status: &StatefulSetStatus) -> bool {
    let empty = StatefulSetStatus::default();
    let previous = previous.unwrap_or(&empty);
    let generation = |s: &StatefulSetStatus| s.observed_generation.unwrap_or(0);
    let text = |s: &Option<String>| s.clone().unwrap_or_default();
    if generation(status) > generation(previous)
        || status.replicas != previous.replicas
        || status.current_replicas != previous.current_replicas
        || status.ready_replicas != previous.ready_replicas
        || status.available_replicas != previous.available_replicas
        || status.updated_replicas != previous.updated_replicas
        || text(&status.current_revision) != text(&previous.current_revision)
        || text(&status.update_revision) != text(&previous.update_revision)
        || text(&status.label_selector) != text(&previous.label_selector)
    {
        return true;
    }
    let new = status.volume_claims.as_deref().unwrap_or(&[]);
    previous.volume_claims.iter().flatten().any(|old| {
        // Go indexes the new entries by name: the last of a repeated name wins.
        new.iter()
            .rev()
            .find(|v| v.volume_claim_name == old.volume_claim_name)
            .is_none_or(|v| {
                v.compatible_replicas != old.compatible_replicas
                    || v.compatible_ready_replicas != old.compatible_ready_replicas
            })
    })
}

/// `IsPVCCompatibleAndReady`: a claim is compatible with its template when their storage
/// classes agree (when both name one), their access modes are the same list, and it requests
/// at least the template's storage; ready when also its capacity covers its request (an unbound
/// claim has none). A missing quantity is zero.
pub fn claim_compatible_and_ready(
    claim: &PersistentVolumeClaim,
    template: &PersistentVolumeClaim,
) -> (bool, bool) {
    ClaimTemplate::of(template).compatible_and_ready(claim)
}

/// What [`claim_compatible_and_ready`] reads of a claim template, its storage request parsed
/// once for all the claims compared with it.
pub struct ClaimTemplate<'a> {
    storage_class: Option<&'a str>,
    access_modes: &'a [String],
    request_text: Option<&'a str>,
    request: Quantity,
}

impl<'a> ClaimTemplate<'a> {
    pub fn of(template: &'a PersistentVolumeClaim) -> ClaimTemplate<'a> {
        let spec = template.spec.as_ref();
        let request_text = storage_text(requests(spec));
        ClaimTemplate {
            storage_class: spec.and_then(|s| s.storage_class_name.as_deref()),
            access_modes: access_modes(spec),
            request_text,
            request: parsed(request_text),
        }
    }

    /// `(compatible, ready)` of `claim` against this template.
    pub fn compatible_and_ready(&self, claim: &PersistentVolumeClaim) -> (bool, bool) {
        let spec = claim.spec.as_ref();
        if let (Some(a), Some(b)) = (
            spec.and_then(|s| s.storage_class_name.as_deref()),
            self.storage_class,
        ) && a != b
        {
            return (false, false);
        }
        if access_modes(spec) != self.access_modes {
            return (false, false);
        }
        // A claim made from the template requests the same text: the same quantity, parsed
        // already.
        let requested_text = storage_text(requests(spec));
        let claim_request;
        let requested = if requested_text == self.request_text {
            &self.request
        } else {
            claim_request = parsed(requested_text);
            &claim_request
        };
        let compatible = requested.cmp_value(&self.request).is_ge();
        let capacity = parsed(storage_text(
            claim.status.as_ref().and_then(|s| s.capacity.as_ref()),
        ));
        (
            compatible,
            compatible && capacity.cmp_value(requested).is_ge(),
        )
    }
}

fn access_modes(spec: Option<&PersistentVolumeClaimSpec>) -> &[String] {
    spec.and_then(|s| s.access_modes.as_deref()).unwrap_or(&[])
}

fn requests(spec: Option<&PersistentVolumeClaimSpec>) -> Option<&BTreeMap<String, WireQuantity>> {
    spec.and_then(|s| s.resources.as_ref())
        .and_then(|r| r.requests.as_ref())
}

/// The `storage` entry of a resource list, as written.
fn storage_text(list: Option<&BTreeMap<String, WireQuantity>>) -> Option<&str> {
    list.and_then(|l| l.get("storage")).map(|q| q.0.as_str())
}

/// A missing or unparsable quantity is zero.
fn parsed(text: Option<&str>) -> Quantity {
    text.and_then(|t| Quantity::parse(t).ok())
        .unwrap_or(Quantity::ZERO)
}

/// `volumeClaims`: one entry per claim template, in template order, counting `claims` — the
/// cached claims of the slot pods, each with the position of its template. Terminating claims
/// are not counted.
pub fn volume_claims<'a>(
    templates: &[PersistentVolumeClaim],
    claims: impl IntoIterator<Item = (usize, &'a PersistentVolumeClaim)>,
) -> Vec<VolumeClaimStatus> {
    let compared: Vec<ClaimTemplate> = templates.iter().map(ClaimTemplate::of).collect();
    let mut out: Vec<VolumeClaimStatus> = templates
        .iter()
        .map(|t| VolumeClaimStatus {
            volume_claim_name: t.metadata.name.clone().unwrap_or_default(),
            ..VolumeClaimStatus::default()
        })
        .collect();
    for (index, claim) in claims {
        let (Some(template), Some(entry)) = (compared.get(index), out.get_mut(index)) else {
            continue;
        };
        if claim.metadata.deletion_timestamp.is_some() {
            continue;
        }
        let (compatible, ready) = template.compatible_and_ready(claim);
        entry.compatible_replicas += i32::from(compatible);
        entry.compatible_ready_replicas += i32::from(ready);
    }
    out
}

#[cfg(test)]
mod tests;
