use super::*;
use crate::statefulset::pod::{Availability, Phase};
use crate::workload::lifecycle::LifecycleState as Lifecycle;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde_json::json;

fn facts(phase: Phase, ready: bool, available: bool, revision: &str) -> StatefulPodFacts {
    StatefulPodFacts {
        phase,
        terminating: false,
        lifecycle: Lifecycle::Normal,
        running_ready: ready,
        healthy: ready,
        availability: if available {
            Availability::Available
        } else {
            Availability::No
        },
        at_update: revision == "new",
        at_current: revision == "old",
        names_update: revision == "new",
        specified_delete: false,
    }
}

#[test]
fn counters_follow_compute_replica_status() {
    let mut terminating = facts(Phase::Running, true, true, "old");
    terminating.terminating = true;
    let pods = [
        facts(Phase::Running, true, true, "old"),
        facts(Phase::Running, true, false, "new"),
        facts(Phase::Running, true, true, "new"),
        facts(Phase::Pending, false, false, "new"),
        // Not created yet: counted nowhere.
        facts(Phase::None, false, false, "new"),
        terminating,
    ];
    assert_eq!(
        Counts::of(&pods),
        Counts {
            replicas: 5,
            ready: 4,
            available: 3,
            current: 1,
            updated: 3,
            updated_ready: 2,
            updated_available: 1,
        }
    );
}

fn input(counts: Counts, rolling_update: bool) -> StatusInput<'static> {
    StatusInput {
        generation: Some(4),
        counts,
        current_revision: "web-old",
        update_revision: "web-new",
        collision_count: 0,
        selector: None,
        volume_claims: Vec::new(),
        rolling_update,
    }
}

#[test]
fn a_finished_rolling_update_makes_the_update_revision_current() {
    let done = Counts {
        replicas: 3,
        ready: 3,
        available: 3,
        current: 0,
        updated: 3,
        ..Counts::default()
    };
    let status = compute(input(done, true));
    assert_eq!(status.current_revision.as_deref(), Some("web-new"));
    assert_eq!(status.current_replicas, 3);
    // OnDelete never completes; nor does an update with a pod not ready.
    let status = compute(input(done, false));
    assert_eq!(status.current_revision.as_deref(), Some("web-old"));
    assert_eq!(status.current_replicas, 0);
    let status = compute(input(Counts { ready: 2, ..done }, true));
    assert_eq!(status.current_revision.as_deref(), Some("web-old"));
    // No pods at all is a finished update (Go compares the counted pods, not spec.replicas).
    let status = compute(input(Counts::default(), true));
    assert_eq!(status.current_revision.as_deref(), Some("web-new"));
}

#[test]
fn the_status_is_written_as_go_encodes_it() {
    let selector: LabelSelector =
        serde_json::from_value(json!({"matchLabels": {"app": "web"}})).unwrap();
    let mut input = input(
        Counts {
            replicas: 1,
            current: 1,
            ..Counts::default()
        },
        true,
    );
    input.selector = Some(&selector);
    input.volume_claims = vec![VolumeClaimStatus {
        volume_claim_name: "data".into(),
        compatible_replicas: 1,
        compatible_ready_replicas: 0,
    }];
    let status = compute(input);
    assert_eq!(
        serde_json::to_value(&status).unwrap(),
        json!({
            "observedGeneration": 4, "replicas": 1, "readyReplicas": 0, "availableReplicas": 0,
            "currentReplicas": 1, "updatedReplicas": 0, "currentRevision": "web-old",
            "updateRevision": "web-new", "collisionCount": 0, "labelSelector": "app=web",
            "volumeClaims": [{"volumeClaimName": "data", "compatibleReplicas": 1,
                "compatibleReadyReplicas": 0}]
        })
    );
}

#[test]
fn only_what_go_compares_triggers_a_write() {
    let base = compute(input(
        Counts {
            replicas: 2,
            ready: 2,
            available: 2,
            current: 2,
            updated: 0,
            ..Counts::default()
        },
        true,
    ));
    assert!(changed(None, &base));
    assert!(!changed(Some(&base), &base));
    let mut quiet = base.clone();
    quiet.updated_ready_replicas = Some(2);
    quiet.collision_count = Some(3);
    quiet.observed_generation = Some(3);
    record_failure(&mut quiet, FAILED_CREATE_POD, "boom", Timestamp::UNIX_EPOCH);
    assert!(!changed(Some(&base), &quiet), "never written alone");
    let mut newer = base.clone();
    newer.observed_generation = Some(5);
    assert!(changed(Some(&base), &newer));
    for edit in [
        |s: &mut StatefulSetStatus| s.replicas = 1,
        |s: &mut StatefulSetStatus| s.ready_replicas = 1,
        |s: &mut StatefulSetStatus| s.available_replicas = 1,
        |s: &mut StatefulSetStatus| s.current_replicas = 1,
        |s: &mut StatefulSetStatus| s.updated_replicas = 1,
        |s: &mut StatefulSetStatus| s.current_revision = None,
        |s: &mut StatefulSetStatus| s.update_revision = Some("x".into()),
        |s: &mut StatefulSetStatus| s.label_selector = Some("a=b".into()),
    ] {
        let mut other = base.clone();
        edit(&mut other);
        assert!(changed(Some(&base), &other), "{other:?}");
    }
    // volumeClaims: an old entry missing or different is a change; a new entry alone is not.
    let claim = |name: &str, n: i32| VolumeClaimStatus {
        volume_claim_name: name.into(),
        compatible_replicas: n,
        compatible_ready_replicas: n,
    };
    let mut old = base.clone();
    old.volume_claims = Some(vec![claim("data", 2)]);
    let mut new = base.clone();
    new.volume_claims = Some(vec![claim("data", 2), claim("logs", 1)]);
    assert!(!changed(Some(&old), &new));
    assert!(changed(Some(&new), &old));
    new.volume_claims = Some(vec![claim("data", 1)]);
    assert!(changed(Some(&old), &new));
}

#[test]
fn a_failure_replaces_its_condition() {
    let mut status = StatefulSetStatus::default();
    record_failure(&mut status, FAILED_CREATE_POD, "one", Timestamp::UNIX_EPOCH);
    record_failure(&mut status, FAILED_UPDATE_POD, "two", Timestamp::UNIX_EPOCH);
    record_failure(
        &mut status,
        FAILED_CREATE_POD,
        "three",
        Timestamp::UNIX_EPOCH,
    );
    let conditions = status.conditions.unwrap();
    let mut seen: Vec<(&str, &str)> = conditions
        .iter()
        .map(|c| (c.type_.as_str(), c.message.as_deref().unwrap()))
        .collect();
    seen.sort();
    assert_eq!(
        seen,
        vec![(FAILED_CREATE_POD, "three"), (FAILED_UPDATE_POD, "two")]
    );
    assert!(conditions.iter().all(|c| c.status == "True"));
}

fn claim(spec: serde_json::Value, capacity: Option<&str>) -> PersistentVolumeClaim {
    let mut value = json!({"metadata": {"name": "data-web-0"}, "spec": spec});
    if let Some(capacity) = capacity {
        value["status"] = json!({"capacity": {"storage": capacity}});
    }
    serde_json::from_value(value).unwrap()
}

fn spec(class: Option<&str>, modes: &[&str], request: Option<&str>) -> serde_json::Value {
    let mut spec = json!({"accessModes": modes});
    if let Some(class) = class {
        spec["storageClassName"] = json!(class);
    }
    if let Some(request) = request {
        spec["resources"] = json!({"requests": {"storage": request}});
    }
    spec
}

#[test]
fn claims_are_compatible_and_ready_as_kruise_compares_them() {
    let template = claim(spec(Some("local"), &["ReadWriteOnce"], Some("1Gi")), None);
    let check = |c: &PersistentVolumeClaim| claim_compatible_and_ready(c, &template);
    let rwo = &["ReadWriteOnce"][..];
    assert_eq!(
        check(&claim(spec(Some("local"), rwo, Some("1Gi")), Some("1Gi"))),
        (true, true)
    );
    // Unbound: no capacity yet.
    assert_eq!(
        check(&claim(spec(Some("local"), rwo, Some("1Gi")), None)),
        (true, false)
    );
    assert_eq!(
        check(&claim(spec(Some("local"), rwo, Some("2Gi")), Some("1Gi"))),
        (true, false)
    );
    assert_eq!(
        check(&claim(spec(None, rwo, Some("1Gi")), Some("5Gi"))),
        (true, true)
    );
    assert_eq!(
        check(&claim(spec(Some("fast"), rwo, Some("1Gi")), Some("1Gi"))),
        (false, false)
    );
    assert_eq!(
        check(&claim(
            spec(
                Some("local"),
                &["ReadWriteOnce", "ReadOnlyMany"],
                Some("1Gi")
            ),
            Some("1Gi")
        )),
        (false, false)
    );
    assert_eq!(
        check(&claim(spec(Some("local"), rwo, Some("512Mi")), Some("1Gi"))),
        (false, false)
    );
    // A claim without a request is 0 and smaller than the template's.
    assert_eq!(
        check(&claim(spec(Some("local"), rwo, None), Some("1Gi"))),
        (false, false)
    );
}

#[test]
fn volume_claims_count_per_template_skipping_terminating_claims() {
    let data = claim(spec(None, &["ReadWriteOnce"], Some("1Gi")), None);
    let mut logs = data.clone();
    logs.metadata.name = Some("logs".into());
    let mut data_template = data.clone();
    data_template.metadata.name = Some("data".into());
    let templates = [data_template, logs];
    let bound = claim(spec(None, &["ReadWriteOnce"], Some("1Gi")), Some("1Gi"));
    let pending = claim(spec(None, &["ReadWriteOnce"], Some("1Gi")), None);
    let mut going = bound.clone();
    going.metadata.deletion_timestamp = Some(Time(Timestamp::UNIX_EPOCH));
    let counted = volume_claims(
        &templates,
        [
            (0, &bound),
            (0, &pending),
            (0, &going),
            (1, &bound),
            (7, &bound),
        ],
    );
    assert_eq!(
        counted,
        vec![
            VolumeClaimStatus {
                volume_claim_name: "data".into(),
                compatible_replicas: 2,
                compatible_ready_replicas: 1
            },
            VolumeClaimStatus {
                volume_claim_name: "logs".into(),
                compatible_replicas: 1,
                compatible_ready_replicas: 1
            },
        ]
    );
}
