use super::*;
use crate::api::cloneset::CloneSet;
use serde_json::{Value, json};

const UID: &str = "web-uid";

/// `pods` as the caller holds them: whole.
fn whole(pods: &[Arc<Pod>]) -> Vec<ListedPod> {
    pods.iter().cloned().map(ListedPod::whole).collect()
}

fn cloneset(deleting: bool) -> CloneSet {
    let mut set: CloneSet = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "web", "namespace": "default", "uid": UID},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": []}}
        }
    }))
    .unwrap();
    if deleting {
        set.metadata.deletion_timestamp =
            Some(serde_json::from_value(json!("2024-01-01T00:00:00Z")).unwrap());
    }
    set
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Controller {
    Nobody,
    Us,
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Kept,
    Adopted,
    Released,
    Ignored,
}

fn reference(api_version: &str, name: &str, uid: &str, controller: bool) -> Value {
    json!({"apiVersion": api_version, "kind": "CloneSet", "name": name, "uid": uid,
        "controller": controller})
}

/// A pod with the given controller, plus (when `named`) a non-controller reference to the
/// CloneSet (as OpenKruise lists pods) and always an unrelated one.
fn pod(controller: Controller, named: bool, selected: bool, terminating: bool) -> Arc<Pod> {
    let mut owners = vec![
        json!({"apiVersion": "v1", "kind": "ConfigMap", "name": "cm",
        "uid": "cm-uid"}),
    ];
    match controller {
        Controller::Nobody => {}
        Controller::Us => owners.push(reference("apps.kruise.io/v1alpha1", "web", UID, true)),
        Controller::Other => owners.push(json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "name": "rs", "uid": "rs-uid", "controller": true})),
    }
    if named && controller != Controller::Us {
        owners.push(reference("apps.kruise.io/v1beta1", "web", UID, false));
    }
    let mut pod = json!({"metadata": {"name": "p", "namespace": "default",
        "resourceVersion": "7",
        "labels": {"app": if selected { "web" } else { "other" }},
        "ownerReferences": owners}});
    if terminating {
        pod["metadata"]["deletionTimestamp"] = json!("2024-01-01T00:00:00Z");
    }
    Arc::new(serde_json::from_value(pod).unwrap())
}

/// Spec §2 step 6, row by row; terminating pods are not claimed at all (OpenKruise claims the
/// active pods only) and pass as listed.
fn expected(controller: Controller, selected: bool, terminating: bool, deleting: bool) -> Outcome {
    match (controller, selected, terminating, deleting) {
        (_, _, true, _) => Outcome::Kept,
        (Controller::Other, ..) => Outcome::Ignored,
        (Controller::Us, true, _, _) => Outcome::Kept,
        (Controller::Us, false, _, true) => Outcome::Ignored,
        (Controller::Us, false, _, false) => Outcome::Released,
        (Controller::Nobody, true, false, false) => Outcome::Adopted,
        (Controller::Nobody, ..) => Outcome::Ignored,
    }
}

fn outcome(claims: &Claims) -> Outcome {
    match (claims.kept.as_slice(), claims.changes.as_slice()) {
        ([_], []) => Outcome::Kept,
        ([], [change]) if change.adopt => Outcome::Adopted,
        ([], [_]) => Outcome::Released,
        ([], []) => Outcome::Ignored,
        _ => panic!("one pod, several outcomes: {claims:?}"),
    }
}

fn owners(pod: &Pod) -> Vec<OwnerReference> {
    pod.metadata.owner_references.clone().unwrap_or_default()
}

#[test]
fn every_combination_follows_the_claim_rules() {
    let controllers = [Controller::Nobody, Controller::Us, Controller::Other];
    for controller in controllers {
        for named in [false, true] {
            for selected in [false, true] {
                for terminating in [false, true] {
                    for deleting in [false, true] {
                        let before = pod(controller, named, selected, terminating);
                        let claims =
                            claim(&cloneset(deleting), &whole(std::slice::from_ref(&before)))
                                .unwrap();
                        let case = format!(
                            "{controller:?} named={named} selected={selected} \
                             terminating={terminating} deleting={deleting}"
                        );
                        let wanted = expected(controller, selected, terminating, deleting);
                        assert_eq!(outcome(&claims), wanted, "{case}");
                        let Some(change) = claims.changes.first() else {
                            continue;
                        };
                        assert_eq!(change.before, before, "{case}");
                        let mut unchanged = change.after.clone();
                        unchanged.metadata.owner_references =
                            before.metadata.owner_references.clone();
                        assert_eq!(
                            &unchanged,
                            before.as_ref(),
                            "{case}: only the owners change"
                        );
                        check_owners(&before, &change.after, change.adopt, &case);
                    }
                }
            }
        }
    }
}

fn check_owners(before: &Pod, after: &Pod, adopt: bool, case: &str) {
    let ours = |o: &OwnerReference| o.uid == UID;
    let before = owners(before);
    let after = owners(after);
    // The unrelated reference always stays.
    assert!(after.iter().any(|o| o.uid == "cm-uid"), "{case}: {after:?}");
    if adopt {
        let controllers: Vec<&OwnerReference> = after
            .iter()
            .filter(|o| o.controller == Some(true))
            .collect();
        assert_eq!(controllers.len(), 1, "{case}: {after:?}");
        assert!(ours(controllers[0]), "{case}");
        assert_eq!(controllers[0].block_owner_deletion, Some(true), "{case}");
        assert_eq!(
            after.iter().filter(|o| ours(o)).count(),
            1,
            "{case}: {after:?}"
        );
        // A non-controller reference to the CloneSet is replaced, not doubled.
        let grew = usize::from(!before.iter().any(ours));
        assert_eq!(after.len(), before.len() + grew, "{case}: {after:?}");
    } else {
        assert!(!after.iter().any(ours), "{case}: {after:?}");
        assert_eq!(after.len(), before.len() - 1, "{case}: {after:?}");
    }
}

#[test]
fn a_released_pod_with_no_owner_left_has_no_owner_list() {
    let pod: Arc<Pod> = Arc::new(
        serde_json::from_value(json!({"metadata": {"name": "p", "labels": {"app": "moved"},
            "ownerReferences": [reference("apps.kruise.io/v1alpha1", "web", UID, true)]}}))
        .unwrap(),
    );
    let claims = claim(&cloneset(false), &whole(&[pod])).unwrap();
    assert_eq!(claims.changes.len(), 1);
    assert_eq!(claims.changes[0].after.metadata.owner_references, None);
}

#[test]
fn a_bare_pod_is_adopted_with_a_new_controller_reference() {
    let pod: Arc<Pod> = Arc::new(
        serde_json::from_value(json!({"metadata": {"name": "p", "labels": {"app": "web"}}}))
            .unwrap(),
    );
    let set = cloneset(false);
    let claims = claim(&set, &whole(&[pod])).unwrap();
    assert_eq!(
        claims.changes[0].after.metadata.owner_references,
        Some(vec![set.owner_reference()])
    );
}

#[test]
fn pods_keep_their_list_order() {
    let named = |name: &str, app: &str| -> Arc<Pod> {
        Arc::new(
            serde_json::from_value(json!({"metadata": {"name": name, "labels": {"app": app},
                "ownerReferences": [reference("apps.kruise.io/v1alpha1", "web", UID, true)]}}))
            .unwrap(),
        )
    };
    let pods = [
        named("a", "web"),
        named("b", "x"),
        named("c", "web"),
        named("d", "x"),
    ];
    let claims = claim(&cloneset(false), &whole(&pods)).unwrap();
    let names = |pods: Vec<&Pod>| -> Vec<String> {
        pods.iter()
            .map(|p| p.metadata.name.clone().unwrap())
            .collect()
    };
    let kept: Vec<&Pod> = claims
        .kept
        .iter()
        .map(|p| &**p.whole.as_ref().unwrap())
        .collect();
    assert_eq!(names(kept), ["a", "c"]);
    assert_eq!(
        names(claims.changes.iter().map(|c| &c.after).collect()),
        ["b", "d"]
    );
}

#[test]
fn a_missing_or_unusable_selector_is_an_error_naming_the_field() {
    let mut set = cloneset(false);
    let pods = [pod(Controller::Us, false, true, false)];
    set.spec.selector = None;
    assert_eq!(
        claim(&set, &whole(&pods)).unwrap_err().field,
        "spec.selector"
    );
    set.spec.selector = Some(
        serde_json::from_value(json!({"matchExpressions": [{"key": "app", "operator": "Near"}]}))
            .unwrap(),
    );
    assert_eq!(
        claim(&set, &whole(&pods)).unwrap_err().field,
        "spec.selector.matchExpressions[0].operator"
    );
}

/// Pods listed as summaries only: the ones kept stay so; one to adopt or release is asked for
/// whole, and nothing is written for it.
#[test]
fn a_pod_to_change_listed_as_a_summary_is_asked_for_whole() {
    let pods = [
        pod(Controller::Us, false, true, false),
        pod(Controller::Us, false, false, false),
        pod(Controller::Nobody, true, true, false),
    ];
    let named: Vec<ListedPod> = pods
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let mut p = Pod::clone(p);
            p.metadata.name = Some(format!("p{i}"));
            ListedPod::summary(Arc::new(crate::workload::listed::summarize(&p)))
        })
        .collect();
    let claims = claim(&cloneset(false), &named).unwrap();
    assert_eq!(claims.kept, named[..1]);
    assert!(claims.changes.is_empty());
    assert_eq!(claims.needs_whole, ["p1", "p2"]);
}
