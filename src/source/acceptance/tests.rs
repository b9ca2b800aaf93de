//! The indexed, incremental acceptance gives exactly the pairwise verdicts of
//! [`accept_in_name_order`] (the oracle), over random catalogues and random changes to them.

use super::*;
use crate::source::accept_in_name_order;
use crate::source::tests::catalogues::{catalogue, sidecarset};
use proptest::prelude::*;

/// Accepted names and `(name, origin, message)` of the refused, from either implementation.
type Outcome = (Vec<String>, Vec<(String, usize, String)>);

fn outcome(result: (Vec<Arc<SidecarSet>>, Vec<Refused<usize>>)) -> Outcome {
    let (accepted, refused) = result;
    (
        accepted.iter().map(|s| s.name().to_string()).collect(),
        refused
            .into_iter()
            .map(|r| (r.name, r.origin, r.message))
            .collect(),
    )
}

fn numbered(sets: &[SidecarSet]) -> Vec<(Arc<SidecarSet>, usize)> {
    sets.iter()
        .enumerate()
        .map(|(i, set)| (Arc::new(set.clone()), i))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// One pass over a whole catalogue: duplicates and all.
    #[test]
    fn indexed_verdicts_are_the_pairwise_ones(sets in catalogue(0..24)) {
        let pairwise = outcome(accept_in_name_order(numbered(&sets)));
        let indexed = outcome(accept_all(numbered(&sets)));
        prop_assert_eq!(indexed, pairwise);
    }

    /// A catalogue kept current through upserts and removals judges as one rebuilt from scratch
    /// after every step (names are unique, as in a cluster).
    #[test]
    fn incremental_verdicts_are_the_pairwise_ones(
        initial in catalogue(0..16),
        steps in proptest::collection::vec(
            (0usize..8, proptest::option::of(sidecarset())),
            1..12,
        ),
    ) {
        let mut current: BTreeMap<String, SidecarSet> = BTreeMap::new();
        for set in initial {
            current.insert(set.name().to_string(), set);
        }
        let mut acceptance: Acceptance<String, usize> = Acceptance::default();
        for set in current.values() {
            acceptance.upsert(set.name().to_string(), Arc::new(set.clone()), 0);
        }
        acceptance.settle();
        for (pick, change) in steps {
            match change {
                // Replaces (or adds) a SidecarSet, under its own name.
                Some(set) => {
                    let name = set.name().to_string();
                    acceptance.upsert(name.clone(), Arc::new(set.clone()), 0);
                    current.insert(name, set);
                }
                None => {
                    let Some(name) = current.keys().nth(pick % current.len().max(1)).cloned()
                    else {
                        continue;
                    };
                    current.remove(&name);
                    acceptance.remove(&name);
                }
            }
            acceptance.settle();
            let sets: Vec<SidecarSet> = current.values().cloned().collect();
            let (accepted, refused) = outcome(accept_in_name_order(
                sets.iter().map(|s| (Arc::new(s.clone()), 0)).collect(),
            ));
            let incremental: Vec<String> =
                acceptance.accepted().map(|s| s.name().to_string()).collect();
            prop_assert_eq!(&incremental, &accepted);
            for (name, _, message) in refused {
                prop_assert_eq!(
                    acceptance.verdict(&name),
                    Some(&Verdict::Refused(message)),
                    "{}", name
                );
            }
        }
    }
}

/// A change re-judges what follows from it: accepting the first of two conflicting SidecarSets
/// refuses the second, and removing it accepts the second again.
#[test]
fn a_removal_accepts_what_it_refused() {
    let set = |name: &str| {
        let mut set = crate::api::SidecarSetBuilder::new(name)
            .selector(&[("app", "x")])
            .container("same", "i")
            .build();
        crate::defaults::sidecarset::default_and_hash(&mut set);
        Arc::new(set)
    };
    let mut acceptance: Acceptance<String, &str> = Acceptance::default();
    acceptance.upsert("b".into(), set("b"), "cluster");
    assert_eq!(acceptance.settle(), vec!["b".to_string()]);
    assert_eq!(acceptance.verdict(&"b".into()), Some(&Verdict::Accepted));
    acceptance.upsert("a".into(), set("a"), "cluster");
    assert_eq!(acceptance.settle(), vec!["a".to_string(), "b".to_string()]);
    assert!(
        matches!(acceptance.verdict(&"b".into()), Some(Verdict::Refused(m)) if m.contains("already exist in a"))
    );
    acceptance.remove(&"a".into());
    assert_eq!(acceptance.settle(), vec!["b".to_string()]);
    assert_eq!(acceptance.verdict(&"b".into()), Some(&Verdict::Accepted));
}
