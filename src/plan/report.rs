//! What `plan` prints: the rollout round by round and its end. Pure data; [`super::render`]
//! words it.

use serde::Serialize;

/// One planned rollout.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// `CloneSet`, `SidecarSet`.
    pub kind: String,
    /// `namespace/name`, or the name of a cluster-scoped object.
    pub object: String,
    /// Where the simulation started from (the pods given, or the ones it made).
    pub start: String,
    /// What the simulation assumes beyond the planner (e.g. how a hook is treated).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The rounds that changed a pod, in order.
    pub rounds: Vec<Round>,
    pub verdict: Verdict,
}

/// One reconcile that changed pods. Pods are named as the cluster names them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Round {
    /// The reconcile's number, counted from 1 (one simulated second apart).
    pub round: usize,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub updated_in_place: Vec<String>,
    /// Marked for re-creation at the new revision: deleted and created again in later rounds.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub recreated: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub created: Vec<String>,
    /// Created at the new revision beside the old pod it replaces (a DaemonSet's `maxSurge`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub surged: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub deleted: Vec<String>,
    /// Pods that cannot be updated in place and wait for someone to re-create them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_upgradable: Vec<String>,
    /// Pods at the new revision after the round, of `total`.
    pub updated: usize,
    pub total: usize,
}

impl Round {
    /// Whether the round changed any pod.
    pub fn changed_pods(&self) -> bool {
        !(self.updated_in_place.is_empty()
            && self.recreated.is_empty()
            && self.created.is_empty()
            && self.surged.is_empty()
            && self.deleted.is_empty()
            && self.not_upgradable.is_empty())
    }
}

/// How the rollout ends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "result", rename_all = "camelCase")]
pub enum Verdict {
    /// Every pod runs the new revision and is ready, after `rounds` reconciles.
    Completes { rounds: usize },
    /// The controller settles (or runs out of rounds) short of that, for `reasons`.
    Blocked { rounds: usize, reasons: Vec<String> },
}

impl Verdict {
    pub fn completes(&self) -> bool {
        matches!(self, Verdict::Completes { .. })
    }
}
