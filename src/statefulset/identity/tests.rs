use super::*;
use crate::podmarks::PodView;
use crate::statefulset::ordinals::{ReplicaRange, Reserved};
use crate::statefulset::pod::{Availability, Phase};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::json;

fn set(spec: serde_json::Value) -> StatefulSet {
    let mut value = json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": "db", "uid": "set-uid"},
        "spec": {
            "replicas": 3, "serviceName": "web",
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}, "annotations": {"a": "b"},
                    "finalizers": ["example.io/keep"]},
                "spec": {"containers": [{"name": "main", "image": "nginx:1"}],
                    "volumes": [{"name": "data", "emptyDir": {}}, {"name": "conf", "emptyDir": {}}]}
            },
            "volumeClaimTemplates": [
                {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"],
                    "resources": {"requests": {"storage": "1Gi"}}}}
            ],
            "updateStrategy": {"type": "RollingUpdate"}
        }
    });
    merge(&mut value["spec"], spec);
    serde_json::from_value(value).unwrap()
}

fn merge(into: &mut serde_json::Value, from: serde_json::Value) {
    match (into, from) {
        (serde_json::Value::Object(a), serde_json::Value::Object(b)) => {
            for (k, v) in b {
                merge(a.entry(k).or_insert(serde_json::Value::Null), v);
            }
        }
        (slot, value) => *slot = value,
    }
}

#[test]
fn a_new_pod_is_the_template_with_its_identity() {
    let set = set(json!({}));
    let pod = new_pod(
        &set,
        &set.spec.template,
        "web-h1",
        0,
        "2024-01-01T00:00:00Z",
    );
    assert_eq!(
        serde_json::to_value(&pod).unwrap(),
        json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {
                "name": "web-0", "generateName": "web-", "namespace": "db",
                "labels": {
                    "app": "web", "controller-revision-hash": "web-h1",
                    "statefulset.kubernetes.io/pod-name": "web-0",
                    "apps.kubernetes.io/pod-index": "0",
                    "lifecycle.apps.kruise.io/state": "Normal"
                },
                "annotations": {"a": "b", "lifecycle.apps.kruise.io/timestamp": "2024-01-01T00:00:00Z"},
                "finalizers": ["example.io/keep"],
                "ownerReferences": [{"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet",
                    "name": "web", "uid": "set-uid", "controller": true, "blockOwnerDeletion": true}]
            },
            "spec": {
                "containers": [{"name": "main", "image": "nginx:1"}],
                "hostname": "web-0", "subdomain": "web",
                // The claim's volume replaces the template's volume of the same name.
                "volumes": [
                    {"name": "data", "persistentVolumeClaim": {"claimName": "data-web-0"}},
                    {"name": "conf", "emptyDir": {}}
                ]
            }
        })
    );
    // No readiness gate is added (the template carries InPlaceUpdateReady if the user wants it).
    assert!(pod.spec.as_ref().unwrap().readiness_gates.is_none());
}

#[test]
fn a_pre_normal_hook_not_yet_satisfied_starts_pods_preparing() {
    let hooked = set(json!({"lifecycle": {"preNormal": {"labelsHandler": {"gate": "open"}}}}));
    let pod = new_pod(&hooked, &hooked.spec.template, "web-h1", 1, "t");
    assert_eq!(
        pod.metadata.labels.as_ref().unwrap()[LIFECYCLE_STATE],
        PREPARING_NORMAL
    );
    let satisfied = set(json!({
        "lifecycle": {"preNormal": {"labelsHandler": {"gate": "open"}}},
        "template": {"metadata": {"labels": {"gate": "open"}}}
    }));
    let pod = new_pod(&satisfied, &satisfied.spec.template, "web-h1", 1, "t");
    assert_eq!(
        pod.metadata.labels.as_ref().unwrap()[LIFECYCLE_STATE],
        NORMAL
    );
    // No service name: no subdomain.
    let headless = set(json!({"serviceName": null}));
    let pod = new_pod(&headless, &headless.spec.template, "web-h1", 2, "t");
    assert_eq!(pod.spec.unwrap().subdomain, None);
}

#[test]
fn identity_and_storage_checks() {
    let set = set(json!({}));
    assert!(identity_matches(&set, 2, "web-2", "db", Some("web-2")));
    assert!(!identity_matches(&set, 2, "web-2", "db", None));
    assert!(!identity_matches(&set, 2, "web-2", "other", Some("web-2")));
    assert!(!identity_matches(&set, 2, "web-02", "db", Some("web-02")));
    let ok = [("logs", "logs-web-2"), ("data", "data-web-2")];
    assert!(storage_matches(&set, 2, ok.iter().copied()));
    let wrong = [("data", "data-web-3")];
    assert!(!storage_matches(&set, 2, wrong.iter().copied()));
    let misnamed = [("state", "data-web-2")];
    assert!(!storage_matches(&set, 2, misnamed.iter().copied()));
    assert!(!storage_matches(&set, 2, [].iter().copied()));

    let pod = new_pod(&set, &set.spec.template, "web-h1", 2, "t");
    assert!(storage_matches(&set, 2, pod.claim_volumes()));
    let mut broken = pod.clone();
    broken.metadata.labels.as_mut().unwrap().clear();
    broken.spec.as_mut().unwrap().volumes = None;
    let fixed = with_identity(&set, &broken, 2, false, false);
    assert_eq!(
        fixed.metadata.labels.as_ref().unwrap(),
        &BTreeMap::from([
            (keys::STATEFULSET_POD_NAME.to_string(), "web-2".to_string()),
            (keys::POD_INDEX.to_string(), "2".to_string()),
        ])
    );
    assert!(storage_matches(&set, 2, fixed.claim_volumes()));
    // Only what does not match is touched.
    assert_eq!(with_identity(&set, &broken, 2, true, true), broken);
}

fn facts(names_update: bool) -> StatefulPodFacts {
    StatefulPodFacts {
        phase: Phase::Running,
        terminating: false,
        lifecycle: crate::workload::lifecycle::LifecycleState::Normal,
        running_ready: true,
        healthy: true,
        availability: Availability::Available,
        at_update: names_update,
        at_current: !names_update,
        names_update,
        specified_delete: false,
    }
}

/// Slots of `web` with `present` ordinals listed (by position) and `reserved` ones.
fn slots(replicas: i64, reserved: &[i32], present: &[i64]) -> Slots {
    let reserved: Vec<IntOrString> = reserved.iter().map(|n| IntOrString::Int(*n)).collect();
    let range = ReplicaRange::new(0, replicas, Reserved::of(Some(&reserved))).unwrap();
    let names: Vec<String> = present.iter().map(|o| format!("web-{o}")).collect();
    Slots::of("web", range, names.iter().map(String::as_str))
}

#[test]
fn new_pods_take_the_current_revision_below_the_partition() {
    let with = |rolling: serde_json::Value| {
        set(json!({"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": rolling}}))
    };
    let all_old = |_: usize| facts(false);
    // AS-7: R 3, reserve [1] → slots 0, 2, 3. Partition 1 keeps web-0 old; partition 2 keeps
    // web-0 and web-2 (pods counted, not ordinals).
    let empty = slots(3, &[1], &[]);
    assert_eq!(
        new_pod_revisions(&with(json!({"partition": 1})), &empty, all_old),
        vec![(0, true), (2, false), (3, false)]
    );
    assert_eq!(
        new_pod_revisions(&with(json!({"partition": 2})), &empty, all_old),
        vec![(0, true), (2, true), (3, false)]
    );
    assert_eq!(
        new_pod_revisions(&with(json!({})), &empty, all_old),
        vec![(0, false), (2, false), (3, false)]
    );
    // Only missing slots are decided; present ones still count below.
    let some = slots(4, &[], &[0, 2]);
    assert_eq!(
        new_pod_revisions(&with(json!({"partition": 2})), &some, all_old),
        vec![(1, true), (3, false)]
    );
}

#[test]
fn new_pods_follow_status_without_rolling_update_and_update_on_delete() {
    let mut no_rolling = set(json!({}));
    no_rolling.status = Some(crate::api::statefulset::StatefulSetStatus {
        current_replicas: 2,
        ..Default::default()
    });
    let empty = slots(4, &[], &[]);
    assert_eq!(
        new_pod_revisions(&no_rolling, &empty, |_| facts(false)),
        vec![(0, true), (1, true), (2, false), (3, false)]
    );
    let on_delete = set(json!({"updateStrategy": {"type": "OnDelete"}}));
    assert!(
        new_pod_revisions(&on_delete, &empty, |_| facts(false))
            .iter()
            .all(|(_, current)| !current)
    );
}

#[test]
fn unordered_new_pods_keep_partition_pods_old() {
    let unordered = |partition: i32| {
        set(json!({"updateStrategy": {"type": "RollingUpdate",
            "rollingUpdate": {"partition": partition, "unorderedUpdate": {}}}}))
    };
    // web-1 (position 0) updated, web-3 (position 1) old; slots 0, 2, 4 missing.
    let present = slots(5, &[], &[1, 3]);
    let facts_of = |p: usize| facts(p == 0);
    // Partition 2: web-3 is one old pod; web-0 becomes the second; the rest updated.
    assert_eq!(
        new_pod_revisions(&unordered(2), &present, facts_of),
        vec![(0, true), (2, false), (4, false)]
    );
    assert_eq!(
        new_pod_revisions(&unordered(1), &present, facts_of),
        vec![(0, false), (2, false), (4, false)]
    );
    assert_eq!(
        new_pod_revisions(&unordered(5), &present, facts_of),
        vec![(0, true), (2, true), (4, true)]
    );
}
