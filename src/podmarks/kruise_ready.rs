//! The `KruisePodReady` condition (OpenKruise `pkg/util/podreadiness`): one readiness gate that
//! several writers share. Each holds the pod not ready by a message `{userAgent, key}` in the
//! condition's `message`, a JSON list sorted by user agent then key; the condition is True when
//! the list is empty. The lifecycle hooks' writer is the user agent `Lifecycle`.

use k8s_openapi::api::core::v1::{Pod, PodCondition, PodReadinessGate};
use serde::{Deserialize, Serialize};

use crate::api::keys;
use crate::k8s::owner;
use crate::k8s::pod::has_readiness_gate;

/// The user agent of the lifecycle hooks' messages.
pub const LIFECYCLE_AGENT: &str = "Lifecycle";
/// The lifecycle's key while a pod waits in `PreparingDelete` with `preDelete.markPodNotReady`.
pub const PRE_DELETE_HOOK: &str = "preDeleteHook";
/// The lifecycle's key while a pod waits for (and goes through) an in-place update with
/// `inPlaceUpdate.markPodNotReady`.
pub const PRE_UPDATE_HOOK: &str = "preUpdateHook";

/// One writer's reason to hold the pod not ready. The field order is the wire order, and the
/// derived order (user agent, then key) is the order OpenKruise sorts the list in.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NotReadyKey {
    #[serde(default)]
    pub user_agent: String,
    #[serde(default)]
    pub key: String,
}

impl NotReadyKey {
    pub fn lifecycle(key: &str) -> Self {
        NotReadyKey {
            user_agent: LIFECYCLE_AGENT.to_string(),
            key: key.to_string(),
        }
    }
}

/// The lifecycle's keys, as a pair of flags (what a pod summary keeps).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LifecycleKeys {
    pub pre_delete: bool,
    pub pre_update: bool,
}

impl LifecycleKeys {
    pub fn is_empty(self) -> bool {
        !self.pre_delete && !self.pre_update
    }

    fn of(messages: &[NotReadyKey]) -> Self {
        let has = |key: &str| {
            messages
                .iter()
                .any(|m| m.user_agent == LIFECYCLE_AGENT && m.key == key)
        };
        LifecycleKeys {
            pre_delete: has(PRE_DELETE_HOOK),
            pre_update: has(PRE_UPDATE_HOOK),
        }
    }

    fn messages(self) -> impl Iterator<Item = NotReadyKey> {
        [
            (self.pre_delete, PRE_DELETE_HOOK),
            (self.pre_update, PRE_UPDATE_HOOK),
        ]
        .into_iter()
        .filter(|(on, _)| *on)
        .map(|(_, key)| NotReadyKey::lifecycle(key))
    }
}

/// What a pod with the gate shows of the condition, in a few flags.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadinessMarks {
    /// The condition exists.
    pub present: bool,
    /// Its status is `True`.
    pub ready: bool,
    /// The lifecycle's keys in its message.
    pub lifecycle: LifecycleKeys,
    /// Its message holds another writer's keys.
    pub others: bool,
}

impl ReadinessMarks {
    /// The marks of `pod`; `None` without the `KruisePodReady` readiness gate.
    pub fn of(pod: &Pod) -> Option<Self> {
        if !has_gate(pod) {
            return None;
        }
        let Some(condition) = condition(pod) else {
            return Some(ReadinessMarks::default());
        };
        let messages = messages(condition);
        Some(ReadinessMarks {
            present: true,
            ready: condition.status == "True",
            lifecycle: LifecycleKeys::of(&messages),
            others: messages.iter().any(|m| m.user_agent != LIFECYCLE_AGENT),
        })
    }

    /// Whether the condition already says what `wanted` lifecycle keys ask (the other writers'
    /// keys kept): present, these keys, and True exactly when no key is left.
    pub fn agrees_with(self, wanted: LifecycleKeys) -> bool {
        self.present
            && self.lifecycle == wanted
            && self.ready == (wanted.is_empty() && !self.others)
    }
}

/// The kinds of this group whose pods get the gate at creation: the workloads this project runs,
/// whose controllers set the condition. (OpenKruise gates every pod its group controls; here a
/// gate nobody would set keeps a pod out of service for good.)
const GATED_KINDS: [&str; 3] = ["CloneSet", "StatefulSet", "DaemonSet"];

/// Whether a pod being created gets the `KruisePodReady` readiness gate: its controller is a
/// CloneSet, Advanced StatefulSet or Advanced DaemonSet (any version of the group).
pub fn wants_gate(pod: &Pod) -> bool {
    owner::controller_of(&pod.metadata)
        .is_some_and(|o| owner::in_group(o, keys::GROUP) && GATED_KINDS.contains(&o.kind.as_str()))
}

/// Adds the `KruisePodReady` readiness gate to a pod being created that [`wants_gate`], unless
/// it has it; whether the pod changed.
pub fn add_gate(pod: &mut Pod) -> bool {
    if !wants_gate(pod) || has_gate(pod) {
        return false;
    }
    let Some(spec) = pod.spec.as_mut() else {
        return false;
    };
    spec.readiness_gates
        .get_or_insert_with(Vec::new)
        .push(PodReadinessGate {
            condition_type: keys::KRUISE_POD_READY.to_string(),
        });
    true
}

/// `spec.readinessGates` lists `KruisePodReady`.
pub fn has_gate(pod: &Pod) -> bool {
    has_readiness_gate(pod, keys::KRUISE_POD_READY)
}

/// The `KruisePodReady` condition of `pod`.
pub fn condition(pod: &Pod) -> Option<&PodCondition> {
    pod.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == keys::KRUISE_POD_READY)
}

/// The keys in a condition's message. OpenKruise ignores a message that does not read, and so
/// does this.
pub fn messages(condition: &PodCondition) -> Vec<NotReadyKey> {
    condition
        .message
        .as_deref()
        .filter(|m| !m.is_empty())
        .and_then(|m| serde_json::from_str(m).ok())
        .unwrap_or_default()
}

/// The message holding `messages`, as OpenKruise writes it (sorted; `[]` when empty).
pub fn dump(mut messages: Vec<NotReadyKey>) -> String {
    messages.sort();
    messages.dedup();
    serde_json::to_string(&messages).expect("a list of strings always serialises")
}

/// The message of `condition` with the lifecycle's keys replaced by `wanted`; the other
/// writers' keys are kept.
pub fn with_lifecycle_keys(
    condition: Option<&PodCondition>,
    wanted: LifecycleKeys,
) -> Vec<NotReadyKey> {
    let mut kept: Vec<NotReadyKey> = condition
        .map(messages)
        .unwrap_or_default()
        .into_iter()
        .filter(|m| m.user_agent != LIFECYCLE_AGENT)
        .collect();
    kept.extend(wanted.messages());
    kept
}

#[cfg(test)]
mod tests;
