//! `status` of a CloneSet (OpenKruise `cloneset_status.go`), counted over the active pods listed
//! at the start of the round.

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, Time};

use super::facts::PodFacts;
use crate::api::cloneset::{CloneSetCondition, CloneSetStatus};

/// Everything the status is computed from.
pub struct StatusInput<'a> {
    pub generation: Option<i64>,
    pub replicas: i64,
    pub partition: i64,
    /// The active pods (readiness and availability taken with `minReadySeconds` and the time).
    pub active: &'a [PodFacts],
    pub current_revision: &'a str,
    pub update_revision: &'a str,
    pub collision_count: i32,
    pub selector: Option<&'a LabelSelector>,
    pub previous: Option<&'a CloneSetStatus>,
    /// `(type, message)` of this round's failure, if any.
    pub failure: Option<(&'a str, &'a str)>,
    pub now: Timestamp,
}

pub fn compute(input: &StatusInput<'_>) -> CloneSetStatus {
    let count = |f: fn(&PodFacts) -> bool| input.active.iter().filter(|p| f(p)).count() as i32;
    let updated = |p: &PodFacts| p.at_update_revision;
    let replicas = input.active.len() as i32;
    let updated_replicas = count(updated);
    let all_updated = updated_replicas == replicas && i64::from(replicas) == input.replicas;
    let mut conditions = input
        .previous
        .and_then(|s| s.conditions.clone())
        .unwrap_or_default();
    if let Some((kind, message)) = input.failure {
        set_condition(&mut conditions, kind, message, input.now);
    }
    CloneSetStatus {
        observed_generation: input.generation,
        replicas,
        ready_replicas: count(|p| p.ready),
        available_replicas: count(|p| p.available),
        updated_replicas,
        updated_ready_replicas: count(|p| p.at_update_revision && p.ready),
        expected_updated_replicas: Some((input.replicas - input.partition).max(0) as i32),
        update_revision: Some(input.update_revision.to_string()),
        current_revision: Some(if all_updated {
            input.update_revision.to_string()
        } else {
            input.current_revision.to_string()
        }),
        collision_count: Some(input.collision_count),
        conditions: (!conditions.is_empty()).then_some(conditions),
        label_selector: input.selector.map(selector_string),
    }
}

/// Records a failure of the round (`FailedScale`, `FailedUpdate`) in `status`, as the planner
/// does for its own; the shell uses it for the writes that failed.
pub fn record_failure(status: &mut CloneSetStatus, kind: &str, message: &str, now: Timestamp) {
    let mut conditions = status.conditions.take().unwrap_or_default();
    set_condition(&mut conditions, kind, message, now);
    status.conditions = Some(conditions);
}

/// Set-condition semantics: a condition of the same type is replaced; when status and message
/// stay the same the old transition time is kept, so a failure repeated each round writes once.
fn set_condition(
    conditions: &mut Vec<CloneSetCondition>,
    kind: &str,
    message: &str,
    now: Timestamp,
) {
    if let Some(existing) = conditions.iter_mut().find(|c| c.type_ == kind) {
        if existing.status == "True" && existing.message.as_deref() == Some(message) {
            return;
        }
        *existing = failed(kind, message, now);
        return;
    }
    conditions.push(failed(kind, message, now));
}

fn failed(kind: &str, message: &str, now: Timestamp) -> CloneSetCondition {
    CloneSetCondition {
        type_: kind.to_string(),
        status: "True".into(),
        last_transition_time: Some(Time(now)),
        reason: None,
        message: Some(message.to_string()),
    }
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

/// Whether the new status is worth a write (OpenKruise's `inconsistentStatus`): observedGeneration
/// increased, or a counter, a revision or the label selector differs. The conditions and
/// `collisionCount` go along with such a write but are never written on their own, so a failure
/// repeated every round costs no write.
pub fn changed(previous: Option<&CloneSetStatus>, next: &CloneSetStatus) -> bool {
    let none = CloneSetStatus::default();
    let old = previous.unwrap_or(&none);
    next.observed_generation.unwrap_or(0) > old.observed_generation.unwrap_or(0)
        || next.replicas != old.replicas
        || next.ready_replicas != old.ready_replicas
        || next.available_replicas != old.available_replicas
        || next.updated_replicas != old.updated_replicas
        || next.updated_ready_replicas != old.updated_ready_replicas
        || next.expected_updated_replicas != old.expected_updated_replicas
        || next.update_revision != old.update_revision
        || next.current_revision != old.current_revision
        || next.label_selector != old.label_selector
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement;

    #[test]
    fn selector_strings() {
        let selector = LabelSelector {
            match_labels: Some(
                [
                    ("app".to_string(), "sample".to_string()),
                    ("z".to_string(), "1".to_string()),
                ]
                .into(),
            ),
            match_expressions: Some(vec![
                LabelSelectorRequirement {
                    key: "tier".into(),
                    operator: "In".into(),
                    values: Some(vec!["b".into(), "a".into()]),
                },
                LabelSelectorRequirement {
                    key: "gone".into(),
                    operator: "DoesNotExist".into(),
                    values: None,
                },
            ]),
        };
        assert_eq!(
            selector_string(&selector),
            "app=sample,!gone,tier in (a,b),z=1"
        );
    }

    #[test]
    fn only_generation_counters_revisions_and_selector_are_written_on_their_own() {
        let old = CloneSetStatus {
            observed_generation: Some(2),
            replicas: 3,
            expected_updated_replicas: Some(3),
            update_revision: Some("web-1".into()),
            current_revision: Some("web-1".into()),
            collision_count: Some(0),
            label_selector: Some("app=web".into()),
            ..CloneSetStatus::default()
        };
        let with = |change: fn(&mut CloneSetStatus)| {
            let mut next = old.clone();
            change(&mut next);
            changed(Some(&old), &next)
        };
        assert!(!with(|_| {}));
        assert!(!with(|s| s.collision_count = Some(1)));
        assert!(!with(|s| {
            record_failure(s, "FailedScale", "quota", Timestamp::UNIX_EPOCH);
            record_failure(s, "FailedUpdate", "refused", Timestamp::UNIX_EPOCH);
        }));
        assert!(!with(|s| s.observed_generation = Some(1)));
        assert!(with(|s| s.observed_generation = Some(3)));
        assert!(with(|s| s.replicas = 2));
        assert!(with(|s| s.ready_replicas = 1));
        assert!(with(|s| s.available_replicas = 1));
        assert!(with(|s| s.updated_replicas = 1));
        assert!(with(|s| s.updated_ready_replicas = 1));
        assert!(with(|s| s.expected_updated_replicas = Some(2)));
        assert!(with(|s| s.update_revision = Some("web-2".into())));
        assert!(with(|s| s.current_revision = Some("web-2".into())));
        assert!(with(|s| s.label_selector = None));
        // Nothing written yet: any status with a revision is news.
        assert!(changed(None, &old));
    }

    #[test]
    fn repeated_failure_keeps_its_transition_time() {
        let mut conditions = Vec::new();
        let t0 = Timestamp::UNIX_EPOCH;
        let t1 = Timestamp::from_second(60).unwrap();
        set_condition(&mut conditions, "FailedUpdate", "boom", t0);
        set_condition(&mut conditions, "FailedUpdate", "boom", t1);
        assert_eq!(conditions.len(), 1);
        assert_eq!(conditions[0].last_transition_time, Some(Time(t0)));
        set_condition(&mut conditions, "FailedUpdate", "other", t1);
        assert_eq!(conditions[0].last_transition_time, Some(Time(t1)));
        set_condition(&mut conditions, "FailedScale", "x", t1);
        assert_eq!(conditions.len(), 2);
    }
}
