use std::time::Duration;

use super::*;

#[test]
fn one_rule_says_when_to_look_again() {
    let after = |outcome| requeue(outcome);
    assert_eq!(
        after(Outcome::CachesNotReady),
        Requeue::requeue(Duration::from_secs(1))
    );
    assert_eq!(
        after(Outcome::Waiting(Duration::from_secs(3))),
        Requeue::requeue(Duration::from_secs(3))
    );
    assert_eq!(
        after(Outcome::Waiting(Duration::from_secs(300))),
        Requeue::requeue(Duration::from_secs(15))
    );
    assert_eq!(
        after(Outcome::Conflict),
        Requeue::requeue(Duration::from_secs(1))
    );
    assert_eq!(after(Outcome::InvalidSpec), Requeue::await_change());
    assert_eq!(
        after(Outcome::Failed),
        Requeue::requeue(Duration::from_secs(10))
    );
    let done = |requeue_after, unfinished| Outcome::Done {
        requeue_after,
        unfinished,
    };
    assert_eq!(
        after(done(Some(Duration::from_secs(4)), false)),
        Requeue::requeue(Duration::from_secs(4))
    );
    assert_eq!(
        after(done(Some(Duration::from_secs(40)), false)),
        Requeue::requeue(Duration::from_secs(15))
    );
    assert_eq!(
        after(done(None, true)),
        Requeue::requeue(Duration::from_secs(15))
    );
    assert_eq!(after(done(None, false)), Requeue::await_change());
}

#[test]
fn owners_name_a_kind_by_group_and_kind_only() {
    use crate::api::cloneset::CloneSet;
    use crate::api::statefulset::StatefulSet;
    let owner = |kind: &str, api: &str| OwnerReference {
        api_version: api.into(),
        kind: kind.into(),
        name: "web".into(),
        uid: "u".into(),
        controller: Some(true),
        block_owner_deletion: None,
    };
    assert!(names_kind::<CloneSet>(&owner(
        "CloneSet",
        "apps.kruise.io/v1beta1"
    )));
    assert!(names_kind::<StatefulSet>(&owner(
        "StatefulSet",
        "apps.kruise.io/v1alpha1"
    )));
    assert!(!names_kind::<StatefulSet>(&owner("StatefulSet", "apps/v1")));
    assert!(!names_kind::<CloneSet>(&owner(
        "StatefulSet",
        "apps.kruise.io/v1beta1"
    )));
    let meta = ObjectMeta {
        namespace: Some("ns".into()),
        owner_references: Some(vec![owner("StatefulSet", "apps.kruise.io/v1beta1")]),
        ..ObjectMeta::default()
    };
    assert_eq!(
        controlling::<StatefulSet>(&meta),
        Some(ObjectRef::new("web").within("ns"))
    );
    assert_eq!(controlling::<CloneSet>(&meta), None);
}
