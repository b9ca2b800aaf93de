use super::*;
use crate::api::SidecarSetBuilder;

fn set(name: &str) -> Arc<SidecarSet> {
    Arc::new(
        SidecarSetBuilder::new(name)
            .selector(&[("app", name)])
            .container("proxy", "proxy:v1")
            .build(),
    )
}

#[test]
fn work_is_done_on_first_use_and_kept_by_the_next_snapshots() {
    let (a, b) = (set("a"), set("b"));
    let first = PreparedSidecarSets::new(&[a.clone(), b.clone()], None);
    assert_eq!(first.done(), 0);

    let prepared = first.get(&a).expect("a SidecarSet of the snapshot");
    assert!(prepared.hash.is_some() && prepared.hash_without_image.is_some());
    assert!(std::ptr::eq(prepared, first.get(&a).unwrap()));
    assert_eq!(first.done(), 1);

    // The next snapshot holds the same `a` (its work carried over) and a changed `b`.
    let changed_b = set("b");
    let second = PreparedSidecarSets::new(&[a.clone(), changed_b.clone()], Some(&first));
    assert_eq!(second.done(), 1);
    assert!(std::ptr::eq(prepared, second.get(&a).unwrap()));
    assert!(
        second.get(&b).is_none(),
        "b of the first snapshot is not in the second"
    );
    assert!(second.get(&changed_b).is_some());
    assert_eq!(second.done(), 2);
}

#[test]
fn a_sidecarset_of_another_snapshot_gets_nothing() {
    let a = set("a");
    let prepared = PreparedSidecarSets::new(&[a], None);
    assert!(prepared.get(&set("a")).is_none());
    assert_eq!(prepared.done(), 0);
}
