//! Admission through the catalogue's match index decides what a full scan decides: the same
//! SidecarSets matched (or the same error), the same injected pod.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, Pod, PodSpec};
use proptest::prelude::*;

use super::*;
use crate::api::{SidecarSetInjectRevision, SidecarSetInjectionStrategy};
use crate::inject::sidecar::{InjectionContext, inject_sidecars, matching_sidecarsets};
use crate::source::tests::catalogues::{labels, sidecarset};

/// SidecarSets as the catalogue may hold them, unvalidated: paused, pinned to a revision,
/// without or with a broken selector.
fn any_sidecarset() -> impl Strategy<Value = SidecarSet> {
    (sidecarset(), 0..8u8).prop_map(|(mut set, extra)| {
        match extra {
            0 => {
                set.spec.injection_strategy = Some(SidecarSetInjectionStrategy {
                    paused: Some(true),
                    revision: None,
                })
            }
            1 => {
                set.spec.injection_strategy = Some(SidecarSetInjectionStrategy {
                    paused: None,
                    revision: Some(SidecarSetInjectRevision {
                        revision_name: Some("r1".into()),
                        ..Default::default()
                    }),
                })
            }
            _ => {}
        }
        set
    })
}

fn pod() -> impl Strategy<Value = (Pod, Option<Labels>)> {
    (
        proptest::sample::select(&["ns1", "ns2", "", "default"][..]),
        labels(),
        proptest::option::of(labels()),
        proptest::bool::ANY,
    )
        .prop_map(|(namespace, pod_labels, namespace_labels, named)| {
            let pod = Pod {
                metadata: ObjectMeta {
                    name: Some("p".into()),
                    namespace: (!namespace.is_empty()).then(|| namespace.to_string()),
                    labels: (!pod_labels.is_empty()).then_some(pod_labels),
                    ..Default::default()
                },
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "app".into(),
                        image: Some("app:1".into()),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
                ..Default::default()
            };
            let namespace_labels = namespace_labels.map(|mut labels| {
                if named {
                    let name = if namespace.is_empty() {
                        "default"
                    } else {
                        namespace
                    };
                    labels.insert(keys::NAMESPACE_NAME_LABEL.into(), name.into());
                }
                labels
            });
            (pod, namespace_labels)
        })
}

type ObjectMeta = k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

fn names(matched: Result<Vec<&SidecarSet>, crate::inject::sidecar::InjectError>) -> String {
    match matched {
        Ok(sets) => format!("{:?}", sets.iter().map(|s| s.name()).collect::<Vec<_>>()),
        Err(e) => format!("error: {e}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    #[test]
    fn the_index_matches_what_a_full_scan_matches(
        sets in proptest::collection::vec(any_sidecarset(), 0..24),
        (pod, namespace_labels) in pod(),
    ) {
        // Unique names, as in a catalogue.
        let sets: BTreeMap<String, SidecarSet> =
            sets.into_iter().map(|s| (s.name().to_string(), s)).collect();
        let catalogue = Catalogue::new(
            sets.into_values().map(Arc::new).collect(),
            HashMap::new(),
            true,
        );
        let context = |sidecarsets| InjectionContext {
            sidecarsets,
            namespace_labels: namespace_labels.as_ref(),
            now: "2026-11-22T10:00:00Z",
            sort_sidecars_by_name: false,
            revisions: None,
            draw: &crate::inject::sidecar::random_draw,
        };
        let candidates = catalogue.match_index().candidate_sets(
            catalogue.sidecarsets(),
            &pod,
            namespace_labels.as_ref(),
        );
        let full = context(catalogue.sidecarsets());
        let indexed = context(&candidates);
        prop_assert_eq!(
            names(matching_sidecarsets(&pod, &indexed)),
            names(matching_sidecarsets(&pod, &full))
        );
        let (mut by_index, mut by_scan) = (pod.clone(), pod);
        let changed = |result: Result<bool, _>| result.map_err(|e: crate::inject::sidecar::InjectError| e.to_string());
        prop_assert_eq!(
            changed(inject_sidecars(&mut by_index, &indexed)),
            changed(inject_sidecars(&mut by_scan, &full))
        );
        prop_assert_eq!(by_index, by_scan);
    }
}

/// A pod that no SidecarSet can match looks at none of them.
#[test]
fn a_pod_nothing_matches_looks_at_nothing() {
    let sets: Vec<Arc<SidecarSet>> = (0..1000)
        .map(|i| {
            let app = format!("app-{i}");
            Arc::new(
                crate::api::SidecarSetBuilder::new(&format!("s-{i}"))
                    .selector(&[("app", &app)])
                    .container("sidecar", "i")
                    .build(),
            )
        })
        .collect();
    let catalogue = Catalogue::new(sets, HashMap::new(), true);
    let pod = |app: &str| Pod {
        metadata: ObjectMeta {
            labels: Some(BTreeMap::from([("app".to_string(), app.to_string())])),
            ..Default::default()
        },
        ..Default::default()
    };
    let candidates = |pod: &Pod| {
        let sets = catalogue.sidecarsets();
        let found = catalogue.match_index().candidate_sets(sets, pod, None);
        found
            .iter()
            .map(|s| s.name().to_string())
            .collect::<Vec<_>>()
    };
    assert!(candidates(&pod("other")).is_empty());
    assert_eq!(candidates(&pod("app-7")), vec!["s-7"]);
}
