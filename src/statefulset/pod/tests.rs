use super::*;
use k8s_openapi::api::core::v1::Pod;
use serde_json::json;

fn at(seconds: i64) -> Timestamp {
    Timestamp::from_second(1_700_000_000 + seconds).unwrap()
}

fn pod(phase: &str, ready: Option<(&str, i64)>, labels: serde_json::Value, deleting: bool) -> Pod {
    let mut conditions = vec![];
    if let Some((status, since)) = ready {
        conditions.push(json!({"type": "Ready", "status": status,
            "lastTransitionTime": at(since).to_string()}));
    }
    let mut meta = json!({"name": "web-0", "labels": labels});
    if deleting {
        meta["deletionTimestamp"] = json!(at(0).to_string());
    }
    serde_json::from_value(json!({
        "metadata": meta,
        "status": {"phase": phase, "conditions": conditions}
    }))
    .unwrap()
}

fn facts(p: &Pod, min_ready: i32, now: i64) -> StatefulPodFacts {
    StatefulPodFacts::of(p, "web-a", "web-b", min_ready, at(now))
}

#[test]
fn healthy_means_normal_running_ready_and_not_terminating() {
    let ready = Some(("True", 0));
    let labels = |state: &str| json!({"lifecycle.apps.kruise.io/state": state});
    assert!(facts(&pod("Running", ready, json!({}), false), 0, 10).healthy);
    assert!(facts(&pod("Running", ready, labels("Normal"), false), 0, 10).healthy);
    assert!(facts(&pod("Running", ready, labels(""), false), 0, 10).healthy);
    for state in [
        "PreparingNormal",
        "Updating",
        "Updated",
        "PreparingDelete",
        "Odd",
    ] {
        let f = facts(&pod("Running", ready, labels(state), false), 0, 10);
        assert!(!f.healthy && f.running_ready, "{state}");
        assert_eq!(f.availability, Availability::No, "{state}");
    }
    let terminating = facts(&pod("Running", ready, json!({}), true), 0, 10);
    assert!(!terminating.healthy && terminating.terminating && terminating.running_ready);
    assert!(!facts(&pod("Pending", ready, json!({}), false), 0, 10).running_ready);
    assert!(!facts(&pod("Running", Some(("False", 0)), json!({}), false), 0, 10).running_ready);
    assert!(!facts(&pod("Running", None, json!({}), false), 0, 10).running_ready);
}

#[test]
fn available_after_min_ready_seconds_inclusive() {
    let p = pod("Running", Some(("True", 100)), json!({}), false);
    assert_eq!(facts(&p, 0, 100).availability, Availability::Available);
    assert_eq!(
        facts(&p, 10, 104).availability,
        Availability::After(Duration::from_secs(6))
    );
    // Go: `waitTime > 0` waits, so the very second it is up counts as available.
    assert_eq!(facts(&p, 10, 110).availability, Availability::Available);
    assert_eq!(facts(&p, 10, 111).availability, Availability::Available);
    assert_eq!(
        facts(&p, 10, 104).availability.wait(),
        Some(Duration::from_secs(6))
    );
    // No transition time: the whole minReadySeconds.
    let mut no_time = p.clone();
    no_time
        .status
        .as_mut()
        .unwrap()
        .conditions
        .as_mut()
        .unwrap()[0]
        .last_transition_time = None;
    assert_eq!(
        facts(&no_time, 30, 500).availability,
        Availability::After(Duration::from_secs(30))
    );
    assert!(facts(&p, 0, 0).availability.is_available());
}

#[test]
fn phases_revisions_and_marks() {
    for (text, phase) in [
        ("", Phase::None),
        ("Pending", Phase::Pending),
        ("Running", Phase::Running),
        ("Succeeded", Phase::Succeeded),
        ("Failed", Phase::Failed),
        ("Unknown", Phase::Other),
    ] {
        let f = facts(&pod(text, None, json!({}), false), 0, 0);
        assert_eq!(f.phase, phase);
        assert_eq!(f.created(), !text.is_empty());
        assert_eq!(f.finished(), matches!(text, "Succeeded" | "Failed"));
    }
    let at_rev = |label: &str| {
        facts(
            &pod(
                "Running",
                None,
                json!({"controller-revision-hash": label}),
                false,
            ),
            0,
            0,
        )
    };
    let exact = at_rev("web-b");
    assert!(exact.at_update && exact.names_update && !exact.at_current);
    // The short hash names the revision for OpenKruise's IsPodUpdate, not for the exact checks.
    let short = at_rev("b");
    assert!(!short.at_update && short.names_update);
    assert!(at_rev("web-a").at_current);
    let marked = facts(
        &pod(
            "Running",
            None,
            json!({"apps.kruise.io/specified-delete": ""}),
            false,
        ),
        0,
        0,
    );
    assert!(marked.specified_delete);
    let new = StatefulPodFacts::new_pod(false, true);
    assert!(!new.created() && new.at_update && !new.healthy);
}
