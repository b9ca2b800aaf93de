use super::*;
use crate::daemonset::fixtures::*;

#[test]
fn a_fresh_history_creates_the_revision_named_and_labelled_by_its_hash() {
    let mut set = agent();
    set.metadata.annotations = Some([("note".to_string(), "x".to_string())].into());
    let plan = plan_history(&set, &[], 0).unwrap();
    let Current::Create(revision) = plan.current else {
        panic!("{plan:?}")
    };
    let data = revision_data(&set.spec.template).unwrap();
    let hash = hash_of(&data, 0);
    assert_eq!(
        revision.metadata.name.as_deref(),
        Some(format!("agent-{hash}").as_str())
    );
    let labels = revision.metadata.labels.as_ref().unwrap();
    assert_eq!(labels["app"], "agent");
    assert_eq!(labels[keys::CONTROLLER_REVISION_HASH], hash);
    assert_eq!(revision.metadata.annotations, set.metadata.annotations);
    assert_eq!(revision.revision, 1);
    assert_eq!(stored_data(&revision), data);
    assert_eq!(
        revision.metadata.owner_references.as_ref().unwrap()[0].kind,
        "DaemonSet"
    );
    // A collision count moves the hash.
    let Current::Create(bumped) = plan_history(&set, &[], 1).unwrap().current else {
        unreachable!()
    };
    assert_ne!(bumped.metadata.name, revision.metadata.name);
}

#[test]
fn the_matching_revision_is_current_and_a_rollback_renumbers_it() {
    let v1 = revision_of(&agent(), 1);
    let v2 = revision_of(&with_image(agent(), "agent:v2"), 2);
    let history = [v1.clone(), v2.clone()];
    let plan = plan_history(&with_image(agent(), "agent:v2"), &history, 0).unwrap();
    assert_eq!(
        plan.current,
        Current::Existing {
            name: v2.metadata.name.clone().unwrap(),
            renumber: None
        }
    );
    let back = plan_history(&agent(), &history, 0).unwrap();
    assert_eq!(
        back.current,
        Current::Existing {
            name: v1.metadata.name.clone().unwrap(),
            renumber: Some(3)
        }
    );
    assert!(back.duplicates.is_empty() && back.relabel_pods_to.is_none());
    assert!(back.label_with_name.is_empty());
    // A third template: created as revision 3.
    let Current::Create(v3) = plan_history(&with_image(agent(), "agent:v3"), &history, 0)
        .unwrap()
        .current
    else {
        unreachable!()
    };
    assert_eq!(v3.revision, 3);
}

#[test]
fn duplicates_fold_into_the_highest_and_unlabelled_revisions_get_their_name() {
    let v1 = revision_of(&agent(), 1);
    let mut twin = v1.clone();
    twin.metadata.name = Some("agent-twin".into());
    twin.revision = 4;
    twin.metadata
        .labels
        .as_mut()
        .unwrap()
        .insert(keys::CONTROLLER_REVISION_HASH.into(), "twin".into());
    let mut bare = revision_of(&with_image(agent(), "agent:v0"), 2);
    bare.metadata.labels = None;
    let plan = plan_history(&agent(), &[v1.clone(), twin, bare.clone()], 0).unwrap();
    assert_eq!(
        plan.current,
        Current::Existing {
            name: "agent-twin".into(),
            renumber: None
        }
    );
    assert_eq!(plan.duplicates, [v1.metadata.name.clone().unwrap()]);
    assert_eq!(plan.relabel_pods_to.as_deref(), Some("twin"));
    assert_eq!(plan.label_with_name, [bare.metadata.name.clone().unwrap()]);
    assert_eq!(hash_label(&bare), bare.metadata.name.unwrap());
}

#[test]
fn cleanup_keeps_the_limit_and_revisions_pods_still_wear() {
    let mut set = agent();
    set.spec.revision_history_limit = Some(1);
    let old: Vec<_> = (1..=4)
        .map(|i| revision_of(&with_image(agent(), &format!("agent:v{i}")), i))
        .collect();
    let refs: Vec<&ControllerRevision> = old.iter().rev().collect();
    let worn = revision_hash(&old[0]);
    let deleted = to_delete(&set, &refs, &[worn]);
    let names: Vec<&str> = old
        .iter()
        .map(|r| r.metadata.name.as_deref().unwrap())
        .collect();
    // Three over the limit: the worn one is skipped, the next three go.
    assert_eq!(deleted, [names[1], names[2], names[3]]);
    set.spec.revision_history_limit = None;
    assert!(to_delete(&set, &refs, &[]).is_empty());
}
