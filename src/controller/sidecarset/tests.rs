use super::*;
use crate::k8s::shared::Shared;
use crate::rollout::engine::tests::{images, two_priority_upgrade};
use crate::rollout::engine::{between_batches, engine_base, engine_in_flight, engine_target};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::api::ObjectMeta;

fn set(name: &str, match_labels: Option<&[(&str, &str)]>) -> Arc<Shared<SidecarSet>> {
    let mut set = SidecarSet::new(name, Default::default());
    set.spec.selector = match_labels.map(|labels| LabelSelector {
        match_labels: Some(
            labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        ),
        ..Default::default()
    });
    Arc::new(set.into())
}

#[test]
fn namespaces_of_old_apiservers_get_their_name_label() {
    let namespace = |name: &str, labels: &[(&str, &str)]| {
        Arc::new(Namespace {
            metadata: ObjectMeta {
                name: Some(name.into()),
                labels: Some(
                    labels
                        .iter()
                        .map(|(k, v)| (k.to_string(), v.to_string()))
                        .collect(),
                ),
                ..Default::default()
            },
            ..Default::default()
        })
    };
    let labels = namespace_labels_by_name(&[
        namespace("shop", &[("team", "a")]),
        namespace("other", &[(keys::NAMESPACE_NAME_LABEL, "other")]),
    ]);
    assert_eq!(labels["shop"][keys::NAMESPACE_NAME_LABEL], "shop");
    assert_eq!(labels["shop"]["team"], "a");
    assert_eq!(labels["other"].len(), 1);
    // a SidecarSet pinned to `shop` (v1alpha1's spec.namespace, converted) selects it, and only
    // it, though the 1.20 Namespace lacks the name label
    let mut pinned = set("mesh", Some(&[("app", "web")])).arc().as_ref().clone();
    pinned.spec.namespace_selector = Some(crate::convert::sidecarset::pinned_to("shop".into()));
    let matches =
        |ns: &str| crate::inject::sidecar::namespace_matches(&pinned, labels.get(ns)).unwrap();
    assert!(matches("shop"));
    assert!(!matches("other"));
}

fn pod(labels: &[(&str, &str)], injected: Option<&str>) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some("p".into()),
            labels: Some(
                labels
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
            annotations: injected.map(|list| {
                BTreeMap::from([(keys::SIDECARSET_INJECTED_LIST.to_string(), list.into())])
            }),
            ..Default::default()
        },
        ..Default::default()
    }
}

fn names(found: BTreeSet<String>) -> Vec<String> {
    found.into_iter().collect()
}

#[test]
fn injected_list_names_are_mapped_even_when_the_set_is_unknown() {
    let found = sidecarsets_for_pod(&pod(&[], Some("a, b,,")), &[]);
    assert_eq!(names(found), vec!["a", "b"]);
}

#[test]
fn selector_matches_are_added_and_others_left_out() {
    let sets = [
        set("web", Some(&[("app", "web")])),
        set("db", Some(&[("app", "db")])),
        set("nil-selector", None),
        set("everything", Some(&[])),
    ];
    let found = sidecarsets_for_pod(&pod(&[("app", "web")], Some("old")), &sets);
    assert_eq!(names(found), vec!["everything", "old", "web"]);
}

#[test]
fn pod_without_labels_or_annotation_only_hits_empty_selectors() {
    let sets = [set("web", Some(&[("app", "web")]))];
    assert!(sidecarsets_for_pod(&pod(&[], None), &sets).is_empty());
}

#[test]
fn engine_patches_the_higher_priority_sidecar_first() {
    let upgrade = two_priority_upgrade();
    let step = inplace::next_step(
        &engine_base(&upgrade),
        Some(&engine_target(&upgrade, "mesh-h2")),
        &ENGINE,
        Timestamp::UNIX_EPOCH,
    )
    .unwrap();
    let Step::PatchBatch {
        pod, containers, ..
    } = step
    else {
        panic!("expected the first batch, got {step:?}");
    };
    assert_eq!(containers, vec!["proxy"]);
    assert_eq!(
        images(&pod),
        [
            ("proxy", "proxy:v2"),
            ("agent", "agent:v1"),
            ("app", "app:v1")
        ]
        .map(|(n, i)| (n.to_string(), i.to_string()))
    );
    assert!(between_batches(&pod, "mesh-h2"));
    assert!(engine_in_flight(&pod, "mesh-h2"));
    assert!(!engine_in_flight(&pod, "mesh-other"));
}

mod condition;
mod safety_net;
mod shell;
