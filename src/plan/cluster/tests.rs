use serde_json::json;

use super::*;

fn cloneset(uid: &str) -> Planned {
    let value = json!({
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "cart", "namespace": "shop", "uid": uid},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "cart"}},
            "template": {
                "metadata": {"labels": {"app": "cart"}},
                "spec": {"containers": [{"name": "main", "image": "nginx"}]}
            }
        }
    });
    super::super::input::planned(value, "test").unwrap()
}

/// An object named `name` labelled `labels`, controlled by `controller` (a uid) and owned (not
/// controlled) by `owner`.
fn meta(name: &str, labels: Value, controller: Option<&str>, owner: Option<&str>) -> Value {
    let reference = |uid: &str, controller: bool| {
        json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "cart",
               "uid": uid, "controller": controller})
    };
    let mut references = Vec::new();
    references.extend(controller.map(|uid| reference(uid, true)));
    references.extend(owner.map(|uid| reference(uid, false)));
    json!({"name": name, "namespace": "shop", "labels": labels, "ownerReferences": references})
}

fn pod(name: &str, labels: Value, controller: Option<&str>, owner: Option<&str>) -> Pod {
    serde_json::from_value(json!({"metadata": meta(name, labels, controller, owner)})).unwrap()
}

fn revision(name: &str, controller: Option<&str>) -> ControllerRevision {
    serde_json::from_value(json!({
        "metadata": meta(name, json!({}), controller, None),
        "revision": 1
    }))
    .unwrap()
}

fn names<T: kube::Resource>(objects: &[T]) -> Vec<String> {
    objects
        .iter()
        .map(|o| o.meta().name.clone().unwrap())
        .collect()
}

#[test]
fn a_clonesets_pods_are_those_it_controls_and_selects() {
    let app = json!({"app": "cart"});
    let pods = vec![
        pod("cart-a", app.clone(), Some("u1"), None),
        // The same labels, another controller (a CloneSet of the same name before it was
        // recreated): not this one's.
        pod("cart-old", app.clone(), Some("u0"), None),
        // Owned but not as controller, and an orphan with the labels: the controller has not
        // adopted them.
        pod("cart-owned", app.clone(), None, Some("u1")),
        pod("cart-orphan", app.clone(), None, None),
        // Controlled but no longer selected (relabelled): released by the controller.
        pod("cart-relabelled", json!({"app": "other"}), Some("u1"), None),
        pod("cart-b", app, Some("u1"), None),
    ];
    let revisions = vec![
        revision("cart-1", Some("u1")),
        revision("cart-0", Some("u0")),
        revision("stray", None),
    ];
    let (pods, revisions) = belonging(&cloneset("u1"), pods, revisions, &BTreeMap::new()).unwrap();
    assert_eq!(names(&pods), ["cart-a", "cart-b"]);
    assert_eq!(names(&revisions), ["cart-1"]);
}

#[test]
fn an_object_without_a_uid_owns_nothing() {
    let pods = vec![pod("cart-a", json!({"app": "cart"}), Some("u1"), None)];
    let (pods, revisions) = belonging(&cloneset(""), pods, Vec::new(), &BTreeMap::new()).unwrap();
    assert!(pods.is_empty() && revisions.is_empty());
}

#[test]
fn a_sidecarsets_pods_are_those_it_selects_in_its_namespaces_and_injected() {
    let set = super::super::input::planned(
        json!({
            "apiVersion": "apps.kruise.io/v1beta1",
            "kind": "SidecarSet",
            "metadata": {"name": "proxy", "uid": "s1"},
            "spec": {
                "selector": {"matchLabels": {"app": "web"}},
                "namespaceSelector": {"matchLabels": {"mesh": "on"}},
                "containers": [{"name": "proxy", "image": "envoy"}]
            }
        }),
        "test",
    )
    .unwrap();
    let web = |name: &str, namespace: &str, injected: bool| -> Pod {
        let annotations = if injected {
            json!({"kruise.io/sidecarset-injected-list": "proxy"})
        } else {
            json!({})
        };
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": namespace, "labels": {"app": "web"},
                         "annotations": annotations},
            "spec": {"containers": [{"name": "main", "image": "web"}, {"name": "proxy", "image": "envoy"}]}
        }))
        .unwrap()
    };
    let pods = vec![
        web("web-1", "meshed", true),
        web("web-2", "plain", true),
        web("web-3", "meshed", false),
    ];
    let namespaces = BTreeMap::from([
        (
            "meshed".to_string(),
            Labels::from([("mesh".to_string(), "on".to_string())]),
        ),
        ("plain".to_string(), Labels::new()),
    ]);
    let (pods, revisions) = belonging(&set, pods, Vec::new(), &namespaces).unwrap();
    assert_eq!(names(&pods), ["web-1"]);
    assert!(revisions.is_empty());
}

#[test]
fn targets_name_a_cloneset_in_its_namespace_and_a_sidecarset_alone() {
    let cloneset = parse_target("cloneset/shop/cart").unwrap();
    assert_eq!(cloneset.shown(), "CloneSet shop/cart");
    assert_eq!(cloneset.plural, "clonesets");
    let sidecarset = parse_target("SidecarSet/proxy").unwrap();
    assert_eq!(sidecarset.shown(), "SidecarSet proxy");
    assert_eq!(sidecarset.namespace, "");
    for (target, error) in [
        ("cloneset/cart", "expected <kind>/<namespace>/<name>"),
        (
            "sidecarset/default/proxy",
            "or <kind>/<name> (kinds: sidecarset)",
        ),
        ("deployment/shop/web", "unknown kind \"deployment\""),
        ("cloneset//cart", "must not be empty"),
        ("sidecarset/", "must not be empty"),
        ("cart", "expected <kind>/<namespace>/<name>"),
    ] {
        let message = parse_target(target).unwrap_err();
        assert!(message.contains(error), "{target}: {message}");
    }
}

#[test]
fn the_changed_object_names_its_live_one() {
    let target = target_of(&cloneset("u1")).unwrap();
    assert_eq!(target.shown(), "CloneSet shop/cart");
    let mut unnamespaced = cloneset("u1");
    if let Planned::CloneSet(set) = &mut unnamespaced {
        set.metadata.namespace = None;
    }
    // As `kubectl apply` without `-n`.
    assert_eq!(target_of(&unnamespaced).unwrap().namespace, "default");
}

/// The Advanced StatefulSet and DaemonSet are read as the CloneSet is: by their own target names,
/// their pods those they control and select, their revisions those they control.
#[test]
fn the_advanced_workloads_are_targets_and_own_what_they_control() {
    let statefulset = parse_target("asts/shop/db").unwrap();
    assert_eq!(
        (statefulset.shown(), statefulset.plural),
        ("StatefulSet shop/db".to_string(), "statefulsets")
    );
    let daemonset = parse_target("advanceddaemonset/shop/agent").unwrap();
    assert_eq!(
        (daemonset.shown(), daemonset.plural),
        ("DaemonSet shop/agent".to_string(), "daemonsets")
    );
    let workload = |kind: &str| {
        super::super::input::planned(
            json!({
                "apiVersion": "apps.kruise.io/v1beta1",
                "kind": kind,
                "metadata": {"name": "cart", "namespace": "shop", "uid": "u1"},
                "spec": {
                    "selector": {"matchLabels": {"app": "cart"}},
                    "template": {
                        "metadata": {"labels": {"app": "cart"}},
                        "spec": {"containers": [{"name": "main", "image": "nginx"}]}
                    }
                }
            }),
            "test",
        )
        .unwrap()
    };
    for kind in ["StatefulSet", "DaemonSet"] {
        let object = workload(kind);
        assert_eq!(
            target_of(&object).unwrap().shown(),
            format!("{kind} shop/cart")
        );
        let app = json!({"app": "cart"});
        let pods = vec![
            pod("cart-0", app.clone(), Some("u1"), None),
            pod("cart-orphan", app.clone(), None, None),
            pod("cart-other", app, Some("u0"), None),
            pod("cart-relabelled", json!({"app": "x"}), Some("u1"), None),
        ];
        let revisions = vec![
            revision("cart-1", Some("u1")),
            revision("cart-0", Some("u0")),
        ];
        let (pods, revisions) = belonging(&object, pods, revisions, &BTreeMap::new()).unwrap();
        assert_eq!(names(&pods), ["cart-0"], "{kind}");
        assert_eq!(names(&revisions), ["cart-1"], "{kind}");
    }
}
