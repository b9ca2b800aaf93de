use super::*;
use crate::inject::launch_priority::barrier_env;
use k8s_openapi::api::core::v1::{Container, ContainerStatus, PodCondition, PodSpec, PodStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

fn container(name: &str, priority: Option<i64>) -> Container {
    Container {
        name: name.into(),
        env: priority.map(|p| vec![barrier_env("web-barrier", p)]),
        ..Default::default()
    }
}

/// `containers`: (name, priority, status: None = no status yet, Some(ready)).
fn pod(containers: &[(&str, Option<i64>, Option<bool>)]) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some("web".into()),
            namespace: Some("default".into()),
            ..Default::default()
        },
        spec: Some(PodSpec {
            containers: containers
                .iter()
                .map(|(n, p, _)| container(n, *p))
                .collect(),
            ..Default::default()
        }),
        status: Some(PodStatus {
            container_statuses: Some(
                containers
                    .iter()
                    .filter_map(|(n, _, s)| {
                        s.map(|ready| ContainerStatus {
                            name: (*n).into(),
                            ready,
                            ..Default::default()
                        })
                    })
                    .collect(),
            ),
            ..Default::default()
        }),
    }
}

fn release(keys: &[&str]) -> BarrierDecision {
    BarrierDecision::Release {
        configmap: "web-barrier".into(),
        keys: keys.iter().map(|k| (*k).to_string()).collect(),
    }
}

#[test]
fn pod_without_barrier_envs_is_ignored() {
    let pod = pod(&[("a", None, Some(false)), ("b", None, Some(false))]);
    assert_eq!(decide(&pod), BarrierDecision::Ignore);
}

#[test]
fn nothing_is_released_before_kubelet_reports_statuses() {
    let pod = pod(&[("a", Some(0), None), ("b", Some(-1), None)]);
    assert_eq!(decide(&pod), BarrierDecision::Wait);
}

#[test]
fn highest_pending_priority_is_released_first() {
    let pod = pod(&[("a", Some(0), Some(false)), ("b", Some(-1), Some(false))]);
    assert_eq!(decide(&pod), release(&["p_0"]));
}

#[test]
fn next_key_once_higher_priority_is_ready_and_earlier_keys_stay() {
    let pod = pod(&[
        ("a", Some(10), Some(true)),
        ("b", Some(0), Some(false)),
        ("c", Some(-2), Some(false)),
    ]);
    assert_eq!(decide(&pod), release(&["p_0", "p_10"]));
}

#[test]
fn a_not_ready_higher_priority_container_blocks_lower_ones() {
    // c became ready earlier but a (higher) restarted: only a's level is wanted, c's key is
    // not withdrawn by the writer (it only adds).
    let pod = pod(&[
        ("a", Some(5), Some(false)),
        ("b", Some(1), Some(true)),
        ("c", Some(0), Some(true)),
    ]);
    assert_eq!(decide(&pod), release(&["p_5"]));
}

#[test]
fn containers_sharing_a_priority_share_a_key() {
    let pod = pod(&[
        ("a", Some(1), Some(true)),
        ("b", Some(0), Some(false)),
        ("c", Some(0), Some(true)),
    ]);
    assert_eq!(decide(&pod), release(&["p_0", "p_1"]));
}

#[test]
fn negative_priorities_release_in_descending_order() {
    let pod = pod(&[
        ("a", Some(0), Some(true)),
        ("b", Some(-1), Some(true)),
        ("c", Some(-2), Some(false)),
    ]);
    assert_eq!(decide(&pod), release(&["p_-1", "p_-2", "p_0"]));
}

#[test]
fn containers_without_status_are_not_pending() {
    let pod = pod(&[("a", Some(3), None), ("b", Some(1), Some(false))]);
    assert_eq!(decide(&pod), release(&["p_1", "p_3"]));
}

#[test]
fn all_ready_statuses_without_containers_ready_condition_wait() {
    let pod = pod(&[("a", Some(1), Some(true)), ("b", Some(0), Some(true))]);
    assert_eq!(decide(&pod), BarrierDecision::Wait);
}

#[test]
fn containers_ready_completes() {
    let mut pod = pod(&[("a", Some(1), Some(true)), ("b", Some(0), Some(true))]);
    pod.status.as_mut().unwrap().conditions = Some(vec![PodCondition {
        type_: "ContainersReady".into(),
        status: "True".into(),
        ..Default::default()
    }]);
    assert_eq!(decide(&pod), BarrierDecision::Complete);
}

#[test]
fn completed_and_terminating_pods_are_ignored() {
    let mut done = pod(&[("a", Some(1), Some(false)), ("b", Some(0), Some(false))]);
    done.metadata.annotations = Some(BTreeMap::from([(
        keys::CONTAINER_LAUNCH_PRIORITY_COMPLETED.to_string(),
        "true".to_string(),
    )]));
    assert_eq!(decide(&done), BarrierDecision::Ignore);
    let mut terminating = pod(&[("a", Some(1), Some(false)), ("b", Some(0), Some(false))]);
    terminating.metadata.deletion_timestamp = Some(Time(jiff::Timestamp::UNIX_EPOCH));
    assert_eq!(decide(&terminating), BarrierDecision::Ignore);
}

#[test]
fn configmap_name_comes_from_the_env_else_the_pod_name() {
    let with_env = pod(&[("a", Some(1), None)]);
    assert_eq!(configmap_name(&with_env), "web-barrier");
    let mut other = pod(&[("a", None, None)]);
    other.metadata.name = Some("api".into());
    assert_eq!(configmap_name(&other), "api-barrier");
}

#[test]
fn missing_keys_skips_present_ones() {
    let wanted: BTreeSet<String> = ["p_0", "p_1"].iter().map(|s| s.to_string()).collect();
    let existing = BTreeMap::from([("p_1".to_string(), "true".to_string())]);
    let missing: Vec<&String> = missing_keys(Some(&existing), &wanted).into_iter().collect();
    assert_eq!(missing, vec!["p_0"]);
    assert_eq!(missing_keys(None, &wanted).len(), 2);
}

fn stored(data: &[&str]) -> ConfigMap {
    ConfigMap {
        data: Some(
            data.iter()
                .map(|k| (k.to_string(), "true".into()))
                .collect(),
        ),
        ..Default::default()
    }
}

fn wanted(keys: &[&str]) -> BTreeSet<String> {
    keys.iter().map(|k| k.to_string()).collect()
}

#[test]
fn an_absent_configmap_is_created_owned_by_the_pod() {
    let mut pod = pod(&[("a", Some(1), Some(false))]);
    pod.metadata.uid = Some("web-uid".into());
    let Some(ConfigMapWrite::Create(created)) =
        configmap_write(&pod, "web-barrier", &wanted(&["p_1"]), None)
    else {
        panic!("expected a create");
    };
    assert_eq!(created.metadata.name.as_deref(), Some("web-barrier"));
    assert_eq!(created.metadata.namespace.as_deref(), Some("default"));
    let owner = &created.metadata.owner_references.unwrap()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str(), owner.uid.as_str()),
        ("Pod", "web", "web-uid")
    );
    assert_eq!(created.data, stored(&["p_1"]).data);
}

#[test]
fn an_existing_configmap_gets_only_the_missing_keys_or_nothing() {
    let pod = pod(&[("a", Some(1), Some(false))]);
    let keys = wanted(&["p_0", "p_1"]);
    assert_eq!(
        configmap_write(&pod, "web-barrier", &keys, Some(&stored(&["p_1"]))),
        Some(ConfigMapWrite::AddKeys(
            serde_json::json!({"data": {"p_0": "true"}})
        ))
    );
    assert_eq!(
        configmap_write(
            &pod,
            "web-barrier",
            &keys,
            Some(&stored(&["p_0", "p_1", "p_2"]))
        ),
        None
    );
}

#[test]
fn completion_is_the_annotation_alone() {
    assert_eq!(
        completed_patch(),
        serde_json::json!({"metadata": {"annotations": {
            "apps.kruise.io/container-launch-priority-completed": "true"}}})
    );
}
