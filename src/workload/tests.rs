use serde_json::json;

use super::*;

fn meta() -> serde_json::Value {
    json!({"name": "web", "namespace": "ns", "uid": "u-1"})
}

fn template() -> serde_json::Value {
    json!({"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "main", "image": "a"}]}})
}

#[test]
fn every_kind_owns_what_it_creates_under_its_own_version() {
    let cloneset: CloneSet = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "metadata": meta(),
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template(), "minReadySeconds": 3}
    }))
    .unwrap();
    let statefulset: StatefulSet = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet", "metadata": meta(),
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template(),
                 "updateStrategy": {"rollingUpdate": {"minReadySeconds": 4}}}
    }))
    .unwrap();
    let daemonset: DaemonSet = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "DaemonSet", "metadata": meta(),
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template(), "minReadySeconds": 5}
    }))
    .unwrap();
    let owners = [
        cloneset.owner_reference(),
        statefulset.owner_reference(),
        daemonset.owner_reference(),
    ];
    let versions: Vec<(&str, &str)> = owners
        .iter()
        .map(|o| (o.api_version.as_str(), o.kind.as_str()))
        .collect();
    assert_eq!(
        versions,
        [
            ("apps.kruise.io/v1alpha1", "CloneSet"),
            ("apps.kruise.io/v1beta1", "StatefulSet"),
            ("apps.kruise.io/v1beta1", "DaemonSet"),
        ]
    );
    assert!(owners.iter().all(|o| o.uid == "u-1"
        && o.name == "web"
        && o.controller == Some(true)
        && o.block_owner_deletion == Some(true)));
    assert_eq!(
        [
            cloneset.min_ready_seconds(),
            statefulset.min_ready_seconds(),
            daemonset.min_ready_seconds()
        ],
        [3, 4, 5]
    );
    assert_eq!(cloneset.key(), "ns/web");
    let kinds: Vec<Option<WorkloadKind>> = owners.iter().map(WorkloadKind::of).collect();
    assert_eq!(
        kinds,
        [
            Some(WorkloadKind::CloneSet),
            Some(WorkloadKind::StatefulSet),
            Some(WorkloadKind::DaemonSet)
        ]
    );
    // The apps/v1 kinds are not this group's.
    let mut native = owners[1].clone();
    native.api_version = "apps/v1".into();
    assert_eq!(WorkloadKind::of(&native), None);
}

#[test]
fn each_kind_names_pod_revisions_its_own_way() {
    let daemonset: DaemonSet = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "DaemonSet", "metadata": meta(),
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template()}
    }))
    .unwrap();
    let revision = revision::candidate(&daemonset, 0, 1).unwrap();
    let name = revision.metadata.name.clone().unwrap();
    let hash = name.strip_prefix("web-").unwrap().to_string();
    // The DaemonSet labels its revision with `controller-revision-hash` and its pods with the hash.
    assert_eq!(
        revision.metadata.labels.as_ref().unwrap()[crate::api::keys::CONTROLLER_REVISION_HASH],
        hash
    );
    assert_eq!(DaemonSet::REVISIONS.pod_value(&revision), hash);
    assert_eq!(StatefulSet::REVISIONS.pod_value(&revision), name);
    // A revision Go created keeps its own hash: the label, not a recomputation, names it.
    let mut go_made = revision.clone();
    go_made.metadata.labels.as_mut().unwrap().insert(
        crate::api::keys::CONTROLLER_REVISION_HASH.into(),
        "5d8f7b9c4".into(),
    );
    assert_eq!(DaemonSet::REVISIONS.pod_value(&go_made), "5d8f7b9c4");
    // The CloneSet also accepts the short hash; the others match exactly.
    assert!(CloneSet::REVISIONS.names(&hash, &name));
    assert!(!StatefulSet::REVISIONS.names(&hash, &name));
    assert!(StatefulSet::REVISIONS.names(&name, &name));
    assert!(DaemonSet::REVISIONS.names(&hash, &hash));
}

#[test]
fn requeues_keep_the_earliest_wish() {
    use std::time::Duration;
    let mut requeue = None;
    push_requeue(&mut requeue, Some(Duration::ZERO));
    assert_eq!(requeue, None);
    push_requeue(&mut requeue, Some(Duration::from_secs(5)));
    push_requeue(&mut requeue, Some(Duration::from_secs(9)));
    push_requeue(&mut requeue, None);
    assert_eq!(requeue, Some(Duration::from_secs(5)));
    push_requeue(&mut requeue, Some(Duration::from_secs(2)));
    assert_eq!(requeue, Some(Duration::from_secs(2)));
}
