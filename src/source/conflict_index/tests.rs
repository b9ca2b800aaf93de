use super::*;
use crate::source::tests::catalogues::{catalogue, sidecarset};
use crate::validate::sidecarset::selectors_overlap;
use proptest::prelude::*;

/// What the conflict rule looks at before names: both selectors overlap.
fn overlap(a: &SidecarSet, b: &SidecarSet) -> bool {
    let pods = selectors_overlap(
        a.spec.selector.as_ref().unwrap_or(&EMPTY_SELECTOR),
        b.spec.selector.as_ref().unwrap_or(&EMPTY_SELECTOR),
    );
    let namespaces = match (namespace_selector(a), namespace_selector(b)) {
        (Some(x), Some(y)) => selectors_overlap(&x, &y),
        _ => true,
    };
    pods && namespaces
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    /// Every filed SidecarSet that shares a name with the one looked up and overlaps it is
    /// found.
    #[test]
    fn finds_every_overlapping_sidecarset_sharing_a_name(
        filed in catalogue(0..24),
        looked_up in sidecarset(),
    ) {
        let mut index = ConflictIndex::default();
        for (id, set) in filed.iter().enumerate() {
            index.insert(id, set);
        }
        let found = index.candidates(&looked_up);
        let names = shared_names(&looked_up);
        for (id, set) in filed.iter().enumerate() {
            let shares = !shared_names(set).is_disjoint(&names);
            if shares && overlap(&looked_up, set) {
                prop_assert!(found.contains(&id), "{} missed", id);
            }
        }
    }

    /// Removing what was inserted leaves an empty index.
    #[test]
    fn removal_undoes_insertion(filed in catalogue(0..12)) {
        let mut index = ConflictIndex::default();
        for (id, set) in filed.iter().enumerate() {
            index.insert(id, set);
        }
        for id in 0..filed.len() {
            index.remove(&id);
        }
        prop_assert!(index.buckets.is_empty() && index.filed.is_empty());
    }
}

/// Distinct values of one label keep SidecarSets with the same container apart.
#[test]
fn pinned_values_narrow_the_lookup() {
    let set = |app: &str| {
        crate::api::SidecarSetBuilder::new(app)
            .selector(&[("app", app)])
            .container("proxy", "i")
            .build()
    };
    let mut index = ConflictIndex::default();
    for app in ["a", "b", "c"] {
        index.insert(app.to_string(), &set(app));
    }
    assert_eq!(
        index.candidates(&set("b")).into_iter().collect::<Vec<_>>(),
        vec!["b".to_string()]
    );
}
