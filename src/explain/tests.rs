//! `explain` says what admission does: the property test over generated catalogues, then each
//! part of the report on the embedded examples, the inputs and the targets.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;
use proptest::prelude::*;

use super::input::{Subject, from_text};
use super::report::{Report, Sources, explain};
use super::*;
use crate::admission::pod::{PodMutation, mutate_pod};
use crate::admission::review::{decode_envelope, pod_creation_review};
use crate::api::{SidecarSet, keys};
use crate::k8s::selector::Labels;
use crate::source::tests::catalogues::{any_sidecarset, pod};

const NOW: &str = "2026-11-29T10:00:00Z";

fn sources<'a>(
    catalogue: &'a Catalogue,
    refused: &'a [(String, String)],
    hooks: &'a [webhooks::Hook],
    labels: Option<&'a Labels>,
) -> Sources<'a> {
    Sources {
        catalogue,
        refused,
        hooks,
        webhook_namespace_labels: labels,
        now: NOW,
        name_suffix: "x2b4z",
        sort_sidecars_by_name: false,
        draw: &|| 0.5,
        notes: Vec::new(),
    }
}

/// What the pod webhook answers for `pod`: denied with a message, or the patched pod.
fn admitted(catalogue: &Catalogue, pod: &Pod) -> Result<Option<serde_json::Value>, String> {
    let object = serde_json::to_value(pod).unwrap();
    let namespace = crate::inject::sidecar::pod_namespace(pod);
    let review = pod_creation_review("u", namespace, object.clone()).to_string();
    let (_, request) = decode_envelope(review.as_bytes()).unwrap();
    let response = mutate_pod(
        &request,
        &PodMutation {
            catalogue,
            now: NOW,
            name_suffix: "x2b4z",
            sort_sidecars_by_name: false,
            draw: &|| 0.5,
        },
    );
    if !response.allowed {
        return Err(response.status.map(|s| s.message).unwrap_or_default());
    }
    Ok(response.patch_operations().map(|ops| {
        let mut patched = object;
        json_patch::patch(&mut patched, &ops).unwrap();
        patched
    }))
}

fn injecting(report: &Report) -> BTreeSet<String> {
    report
        .sidecarsets
        .iter()
        .filter(|set| set.injects)
        .map(|set| set.name.clone())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Explain says a SidecarSet injects exactly when admission injects it, and the pod is
    /// refused (with the same message) or changed exactly when admission refuses or changes it.
    #[test]
    fn explain_says_what_admission_does(
        sets in proptest::collection::vec(any_sidecarset(), 0..16),
        (pod, namespace_labels) in pod(),
    ) {
        let sets: BTreeMap<String, SidecarSet> =
            sets.into_iter().map(|s| (s.name().to_string(), s)).collect();
        let namespace = crate::inject::sidecar::pod_namespace(&pod).to_string();
        let namespaces: HashMap<String, Labels> =
            namespace_labels.into_iter().map(|labels| (namespace.clone(), labels)).collect();
        let catalogue = Catalogue::new(sets.into_values().map(Arc::new).collect(), namespaces, false);
        let subject = Subject { pod: pod.clone(), origin: "generated".into() };
        let report = explain(&subject, &sources(&catalogue, &[], &[], None));
        match admitted(&catalogue, &pod) {
            Err(message) => {
                prop_assert!(!report.admission.allowed);
                prop_assert_eq!(report.admission.denied.as_deref(), Some(message.as_str()));
                prop_assert!(report.sidecarsets.iter().any(|s| s.reason.as_deref() == Some("RefusesPod")));
            }
            Ok(patched) => {
                prop_assert!(report.admission.allowed);
                prop_assert_eq!(report.admission.changes_pod, patched.is_some());
                let listed: BTreeSet<String> = patched
                    .as_ref()
                    .and_then(|p| p.pointer("/metadata/annotations")?.get(keys::SIDECARSET_INJECTED_LIST)?.as_str().map(str::to_string))
                    .map(|list| list.split(',').map(str::to_string).collect())
                    .unwrap_or_default();
                // The list is written when a set adds a container; every injected set has some.
                prop_assert_eq!(listed, injecting(&report));
            }
        }
    }
}

fn examples() -> (Catalogue, Vec<(String, String)>, Vec<String>) {
    catalogue_of_files(&dir::embedded_files())
}

fn web(namespace: &str, labels: &str) -> Subject {
    from_text(&format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web-1\n  namespace: {namespace}\n  labels: {{{labels}}}\nspec:\n  containers:\n    - name: app\n      image: nginx:1.25\n"
    ))
    .unwrap()
}

fn reason(report: &Report, name: &str) -> Option<String> {
    let set = report.sidecarsets.iter().find(|s| s.name == name).unwrap();
    set.reason.clone()
}

#[test]
fn the_examples_inject_with_their_containers_volumes_and_launch_order() {
    let (catalogue, refused, notes) = examples();
    assert!(
        refused.is_empty() && notes.is_empty(),
        "{refused:?} {notes:?}"
    );
    let hooks = webhooks::deployed().unwrap();
    let labels = catalogue.namespace_labels("shop").unwrap().into_owned();
    let report = explain(
        &web("shop", "app: web, mesh: enabled"),
        &sources(&catalogue, &refused, &hooks, Some(&labels)),
    );
    assert_eq!(report.admission.webhook_called, Some(true));
    assert!(report.admission.allowed && report.admission.changes_pod);
    let proxy = report
        .sidecarsets
        .iter()
        .find(|s| s.name == "proxy")
        .unwrap();
    assert!(proxy.injects);
    assert_eq!(proxy.containers[0].name, "proxy");
    assert_eq!(proxy.volumes, ["proxy-config"]);
    let log_agent = report
        .sidecarsets
        .iter()
        .find(|s| s.name == "log-agent")
        .unwrap();
    // The buffer volume is not mounted by the sidecar: never added.
    assert_eq!(log_agent.volumes, ["log-agent-config"]);
    let revision = log_agent.revision.as_ref().unwrap();
    assert_eq!(
        Some(revision.hash.as_str()),
        catalogue
            .get("log-agent")
            .unwrap()
            .annotation(keys::SIDECARSET_HASH)
    );
    let launch = &report.launch_priority;
    assert!(launch.ordered);
    assert_eq!(launch.barrier.as_deref(), Some("web-1-barrier"));
    let keys: Vec<(&str, i64, Option<&str>)> = launch
        .containers
        .iter()
        .map(|c| (c.name.as_str(), c.priority, c.barrier_key.as_deref()))
        .collect();
    assert_eq!(
        keys,
        [
            ("proxy", 100, Some("p_100")),
            ("app", 0, Some("p_0")),
            ("log-agent", 0, Some("p_0"))
        ]
    );
}

#[test]
fn reasons_on_the_examples() {
    let (catalogue, refused, _) = examples();
    let report = explain(
        &web("default", "app: db"),
        &sources(&catalogue, &refused, &[], None),
    );
    assert_eq!(
        reason(&report, "proxy").as_deref(),
        Some("NamespaceNotSelected")
    );
    assert_eq!(
        reason(&report, "log-agent").as_deref(),
        Some("PodNotSelected")
    );
    assert!(report.admission.allowed && !report.admission.changes_pod);
    assert!(!report.launch_priority.ordered);
    assert!(report.webhooks.is_empty());
}

#[test]
fn a_refused_sidecarset_is_shown_with_the_catalogue_s_reason() {
    let broken = "apiVersion: apps.kruise.io/v1beta1\nkind: SidecarSet\nmetadata:\n  name: broken\nspec:\n  selector:\n    matchLabels: {app: web}\n  containers:\n    - name: c\n      image: ''\n";
    let mut files = dir::embedded_files();
    files.push(("broken.yaml".into(), broken.into()));
    let (catalogue, refused, _) = catalogue_of_files(&files);
    let report = explain(
        &web("shop", "app: web"),
        &sources(&catalogue, &refused, &[], None),
    );
    let set = report
        .sidecarsets
        .iter()
        .find(|s| s.name == "broken")
        .unwrap();
    assert!(!set.injects);
    assert_eq!(set.reason.as_deref(), Some("RefusedByCatalogue"));
    assert!(
        set.message.as_ref().unwrap().contains("broken.yaml"),
        "{set:?}"
    );
}

#[test]
fn the_pod_webhook_skips_system_namespaces() {
    let (catalogue, refused, _) = examples();
    let hooks = webhooks::deployed().unwrap();
    let labels = catalogue
        .namespace_labels("kube-system")
        .unwrap()
        .into_owned();
    let report = explain(
        &web("kube-system", "app: web"),
        &sources(&catalogue, &refused, &hooks, Some(&labels)),
    );
    assert_eq!(report.admission.webhook_called, Some(false));
    let text = render::human(&report);
    assert!(text.contains("is not called for this pod"), "{text}");
    assert!(
        text.contains("skips  mpod.kb.io (/mutate-pod: CREATE pods): namespaceSelector does not select the namespace: kubernetes.io/metadata.name NotIn [kube-system, kube-public, kruise-system]"),
        "{text}"
    );
    // Opting a namespace out by label.
    let opted_out: Labels = [
        (keys::NAMESPACE_NAME_LABEL.to_string(), "team".to_string()),
        ("kruise-webhook/skip".to_string(), "true".to_string()),
    ]
    .into();
    let passages = webhooks::passages(&hooks, &opted_out);
    assert!(passages.iter().all(|p| !p.passes));
    // Webhooks of cluster-scoped objects are not a namespace's business.
    assert!(passages.iter().all(|p| p.webhook != "vsidecarset.kb.io"));
}

#[test]
fn workloads_are_explained_by_their_pod_template() {
    let workload = |api_version: &str, kind: &str| {
        format!(
            "apiVersion: {api_version}\nkind: {kind}\nmetadata:\n  name: web\n  namespace: shop\nspec:\n  template:\n    metadata:\n      labels: {{app: web}}\n    spec:\n      containers: [{{name: app, image: nginx}}]\n"
        )
    };
    for (api_version, kind) in [
        ("apps/v1", "Deployment"),
        ("apps/v1", "StatefulSet"),
        ("apps/v1", "DaemonSet"),
        ("apps.kruise.io/v1alpha1", "CloneSet"),
        ("apps.kruise.io/v1beta1", "StatefulSet"),
        ("apps.kruise.io/v1alpha1", "DaemonSet"),
    ] {
        let subject = from_text(&workload(api_version, kind)).unwrap();
        assert_eq!(
            subject.origin,
            format!("{kind} shop/web (its pod template)")
        );
        assert_eq!(subject.pod.metadata.namespace.as_deref(), Some("shop"));
        assert_eq!(subject.pod.metadata.generate_name.as_deref(), Some("web-"));
        assert_eq!(subject.pod.metadata.labels.as_ref().unwrap()["app"], "web");
    }
    let (catalogue, refused, _) = examples();
    let subject = from_text(&workload("apps/v1", "Deployment")).unwrap();
    let report = explain(&subject, &sources(&catalogue, &refused, &[], None));
    assert!(
        report
            .sidecarsets
            .iter()
            .any(|s| s.name == "log-agent" && s.injects)
    );
}

#[test]
fn bad_input_is_named() {
    let error = |text: &str| from_text(text).unwrap_err();
    assert!(
        error("kind: Service\napiVersion: v1\n")
            .starts_with("kind: Unsupported value: \"Service\"")
    );
    assert!(error("a: [").starts_with("the input is neither JSON nor YAML"));
    assert!(error("").starts_with("the input holds 0 objects, not one"));
    assert!(
        error("kind: Pod\napiVersion: v1\n---\nkind: Pod\napiVersion: v1\n")
            .starts_with("the input holds 2 objects")
    );
    assert_eq!(
        error("apiVersion: v1\nkind: Pod\nspec:\n  containers: nginx\n"),
        "spec.containers: invalid type: string \"nginx\", expected a sequence"
    );
    assert_eq!(
        error("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"),
        "spec: Required value: the pod has no spec"
    );
    assert_eq!(
        error(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: n}\nspec: {}\n"
        ),
        "Deployment n/d: spec.template: Required value: the workload has no pod template"
    );
    assert_eq!(
        error(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  template:\n    spec:\n      containers: 3\n"
        ),
        "spec.template.spec.containers: invalid type: integer `3`, expected a sequence"
    );
}

#[test]
fn targets() {
    let target = cluster::parse_target("cloneset/default/cart").unwrap();
    assert_eq!(
        (
            target.group,
            target.kind,
            target.namespace.as_str(),
            target.name.as_str()
        ),
        (keys::GROUP, "CloneSet", "default", "cart")
    );
    assert_eq!(cluster::parse_target("Pod/shop/web-1").unwrap().kind, "Pod");
    assert!(
        cluster::parse_target("pod/web-1")
            .unwrap_err()
            .contains("expected <kind>/<namespace>/<name>")
    );
    assert!(
        cluster::parse_target("service/a/b")
            .unwrap_err()
            .contains("unknown kind \"service\"")
    );
    assert!(
        cluster::parse_target("pod//b")
            .unwrap_err()
            .contains("must not be empty")
    );
}

#[test]
fn json_output_names_each_part() {
    let (catalogue, refused, _) = examples();
    let report = explain(
        &web("shop", "app: web"),
        &sources(&catalogue, &refused, &[], None),
    );
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["admission"]["allowed"], true);
    assert_eq!(json["sidecarsets"][0]["name"], "proxy");
    assert_eq!(json["sidecarsets"][0]["reason"], "PodNotSelected");
    assert_eq!(json["sidecarsets"][1]["containers"][0]["name"], "log-agent");
    assert_eq!(json["launchPriority"]["ordered"], false);
}

#[test]
fn a_webhook_called_by_url_has_its_path() {
    let configuration: k8s_openapi::api::admissionregistration::v1::MutatingWebhookConfiguration =
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "m"},
            "webhooks": [{
                "name": "mpod.kb.io",
                "clientConfig": {"url": "https://127.0.0.1:9443/mutate-pod?timeout=5s"},
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
                "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}]
            }]
        }))
        .unwrap();
    let hooks = webhooks::hooks(&[configuration], &[]);
    assert_eq!(hooks[0].path.as_deref(), Some("/mutate-pod"));
    assert!(hooks[0].mutating);
}
