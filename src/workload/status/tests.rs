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
fn repeated_failure_keeps_its_transition_time() {
    let mut conditions: Vec<CloneSetCondition> = Vec::new();
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

#[test]
fn every_kind_records_failures_alike() {
    let mut conditions: Option<Vec<StatefulSetCondition>> = None;
    record_failure(
        &mut conditions,
        "FailedCreatePod",
        "quota",
        Timestamp::UNIX_EPOCH,
    );
    let conditions = conditions.unwrap();
    assert_eq!(conditions[0].type_, "FailedCreatePod");
    assert_eq!(conditions[0].status, "True");
    assert_eq!(conditions[0].message.as_deref(), Some("quota"));
}
