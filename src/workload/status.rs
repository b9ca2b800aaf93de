//! Status pieces every workload writes: failure conditions and the label selector string.

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{DaemonSetCondition, StatefulSetCondition};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, Time};

use crate::api::cloneset::CloneSetCondition;

/// A status condition of some workload kind.
pub trait Condition {
    fn type_(&self) -> &str;
    fn status(&self) -> &str;
    fn message(&self) -> Option<&str>;
    /// A True condition of `kind` with `message`, changed at `now`.
    fn failed(kind: &str, message: &str, now: Timestamp) -> Self;
}

macro_rules! condition {
    ($type:ty $(, $update_time:ident)?) => {
        impl Condition for $type {
            fn type_(&self) -> &str {
                &self.type_
            }
            fn status(&self) -> &str {
                &self.status
            }
            fn message(&self) -> Option<&str> {
                self.message.as_deref()
            }
            fn failed(kind: &str, message: &str, now: Timestamp) -> Self {
                Self {
                    type_: kind.to_string(),
                    status: "True".into(),
                    last_transition_time: Some(Time(now)),
                    $($update_time: Some(Time(now)),)?
                    reason: None,
                    message: Some(message.to_string()),
                }
            }
        }
    };
}

condition!(CloneSetCondition, last_update_time);
condition!(StatefulSetCondition);
condition!(DaemonSetCondition);

/// Records a failure of the round (`FailedScale`, `FailedUpdate`, …) in a status's conditions.
pub fn record_failure<C: Condition>(
    conditions: &mut Option<Vec<C>>,
    kind: &str,
    message: &str,
    now: Timestamp,
) {
    set_condition(conditions.get_or_insert_with(Vec::new), kind, message, now);
}

/// Set-condition semantics: a condition of the same type is replaced; when status and message
/// stay the same the old transition time is kept, so a failure repeated each round writes once.
pub fn set_condition<C: Condition>(
    conditions: &mut Vec<C>,
    kind: &str,
    message: &str,
    now: Timestamp,
) {
    if let Some(existing) = conditions.iter_mut().find(|c| c.type_() == kind) {
        if existing.status() == "True" && existing.message() == Some(message) {
            return;
        }
        *existing = C::failed(kind, message, now);
        return;
    }
    conditions.push(C::failed(kind, message, now));
}

/// The selector as `kubectl` and the scale subresource print it (`app=sample,tier in (a,b)`),
/// requirements sorted by key.
pub fn selector_string(selector: &LabelSelector) -> String {
    let mut parts: Vec<(String, String)> = Vec::new();
    for (key, value) in selector.match_labels.iter().flatten() {
        parts.push((key.clone(), format!("{key}={value}")));
    }
    for requirement in selector.match_expressions.iter().flatten() {
        let key = &requirement.key;
        let mut values = requirement.values.clone().unwrap_or_default();
        values.sort();
        let values = values.join(",");
        let text = match requirement.operator.as_str() {
            "In" => format!("{key} in ({values})"),
            "NotIn" => format!("{key} notin ({values})"),
            "Exists" => key.clone(),
            "DoesNotExist" => format!("!{key}"),
            other => format!("{key} {other} ({values})"),
        };
        parts.push((key.clone(), text));
    }
    parts.sort_by(|a, b| a.0.cmp(&b.0));
    parts
        .into_iter()
        .map(|(_, text)| text)
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests;
