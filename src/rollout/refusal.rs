//! A SidecarSet the webhooks cannot serve, reported where an operator looks: the status condition
//! `InjectionFailure` (`True` while it lasts, removed once the set is served again, as a
//! Deployment's `ReplicaFailure`), a Warning event when it starts or its reason changes, a Normal
//! one when it ends. Decided here; the controller writes it.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::runtime::events::EventType;

use super::round::{PlannedEvent, Subject};
use crate::api::keys;

/// Why the catalogue cannot serve a SidecarSet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RefusalReason {
    /// The validating webhook would refuse it (a field, or a conflict with another set).
    Invalid,
    /// The types cannot read it.
    Undecodable,
    /// The revision `injectionStrategy.revision` names cannot be found or restored: the pods
    /// it matches are refused.
    RevisionNotFound,
}

impl RefusalReason {
    /// The condition's and the event's reason.
    pub fn as_str(self) -> &'static str {
        match self {
            RefusalReason::Invalid => "Invalid",
            RefusalReason::Undecodable => "Undecodable",
            RefusalReason::RevisionNotFound => "RevisionNotFound",
        }
    }

    /// The `reason` label of the metric.
    pub fn metric_label(self) -> &'static str {
        match self {
            RefusalReason::Invalid => "invalid",
            RefusalReason::Undecodable => "undecodable",
            RefusalReason::RevisionNotFound => "revision",
        }
    }

    pub const ALL: [RefusalReason; 3] = [
        RefusalReason::Invalid,
        RefusalReason::Undecodable,
        RefusalReason::RevisionNotFound,
    ];

    /// What an operator reads first: what the webhooks do with the set.
    fn consequence(self) -> &'static str {
        match self {
            RefusalReason::Invalid | RefusalReason::Undecodable => {
                "the webhooks do not inject it: new pods start without its sidecars"
            }
            RefusalReason::RevisionNotFound => "the pod webhook refuses the new pods it matches",
        }
    }
}

/// A SidecarSet the catalogue cannot serve, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub reason: RefusalReason,
    pub message: String,
}

/// Every SidecarSet the webhooks cannot serve, by name.
pub type Refusals = std::collections::BTreeMap<String, Refusal>;

/// Conditions and event notes are bounded; the message keeps its start.
const MESSAGE_LIMIT: usize = 1024;

fn bounded(text: String) -> String {
    if text.len() <= MESSAGE_LIMIT {
        return text;
    }
    let mut end = MESSAGE_LIMIT - 3;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &text[..end])
}

impl Refusal {
    /// The condition's message: the consequence, then the cause.
    pub fn condition_message(&self) -> String {
        bounded(format!("{}: {}", self.reason.consequence(), self.message))
    }
}

/// What to write so that a set's conditions say `refusal`.
#[derive(Debug, Clone, PartialEq)]
pub struct ConditionChange {
    /// The whole list of conditions to store.
    pub conditions: Vec<Condition>,
    pub event: PlannedEvent,
}

/// The conditions a set should carry given its `current` ones and `refusal` (`None`: served),
/// and the event that tells of the change; `None` when they already say it. Other condition
/// types are kept as they are.
pub fn injection_failure(
    current: &[Condition],
    refusal: Option<&Refusal>,
    generation: Option<i64>,
    now: &Time,
) -> Option<ConditionChange> {
    let existing = current
        .iter()
        .find(|c| c.type_ == keys::SIDECARSET_INJECTION_FAILURE);
    let others = current
        .iter()
        .filter(|c| c.type_ != keys::SIDECARSET_INJECTION_FAILURE)
        .cloned();
    match (existing, refusal) {
        (None, None) => None,
        (Some(_), None) => Some(ConditionChange {
            conditions: others.collect(),
            event: PlannedEvent {
                about: Subject::SidecarSet,
                type_: EventType::Normal,
                reason: "Served",
                note: "the webhooks serve this SidecarSet again".into(),
                action: "Serve",
            },
        }),
        (existing, Some(refusal)) => {
            let message = refusal.condition_message();
            let reason = refusal.reason.as_str();
            if let Some(c) = existing
                && c.status == "True"
                && c.reason == reason
                && c.message == message
            {
                return None;
            }
            let condition = Condition {
                type_: keys::SIDECARSET_INJECTION_FAILURE.into(),
                status: "True".into(),
                reason: reason.into(),
                message: message.clone(),
                observed_generation: generation,
                // The failure goes on: its start stays.
                last_transition_time: existing
                    .filter(|c| c.status == "True")
                    .map_or_else(|| now.clone(), |c| c.last_transition_time.clone()),
            };
            Some(ConditionChange {
                conditions: others.chain([condition]).collect(),
                event: PlannedEvent {
                    about: Subject::SidecarSet,
                    type_: EventType::Warning,
                    reason,
                    note: message,
                    action: "Serve",
                },
            })
        }
    }
}

#[cfg(test)]
mod tests;
