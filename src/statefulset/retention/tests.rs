use super::*;
use crate::api::statefulset::StatefulSetPersistentVolumeClaimRetentionPolicy;

const SET: Owner<'static> = Owner {
    name: "web",
    uid: "set-uid",
};
const POD: Owner<'static> = Owner {
    name: "web-2",
    uid: "pod-uid",
};

fn set_with(when_scaled: Option<&str>, when_deleted: Option<&str>) -> StatefulSet {
    let mut set = StatefulSet::default();
    set.spec.persistent_volume_claim_retention_policy =
        Some(StatefulSetPersistentVolumeClaimRetentionPolicy {
            when_scaled: when_scaled.map(str::to_string),
            when_deleted: when_deleted.map(str::to_string),
        });
    set
}

fn pod_ref(owner: Owner<'_>) -> OwnerReference {
    OwnerReference {
        api_version: "v1".into(),
        kind: "Pod".into(),
        name: owner.name.into(),
        uid: owner.uid.into(),
        ..OwnerReference::default()
    }
}

fn other_ref() -> OwnerReference {
    OwnerReference {
        api_version: "example.com/v1".into(),
        kind: "Keeper".into(),
        name: "keeper".into(),
        uid: "other-uid".into(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

#[test]
fn the_policy_reads_the_four_combinations_and_nothing_else() {
    let policy = |s, d| Policy::of(&set_with(s, d));
    let (r, d) = (Some("Retain"), Some("Delete"));
    assert_eq!(policy(r, r), Policy::RETAIN);
    assert_eq!(
        policy(r, d),
        Policy {
            delete_when_scaled: false,
            delete_when_deleted: true
        }
    );
    assert_eq!(
        policy(d, r),
        Policy {
            delete_when_scaled: true,
            delete_when_deleted: false
        }
    );
    assert_eq!(
        policy(d, d),
        Policy {
            delete_when_scaled: true,
            delete_when_deleted: true
        }
    );
    for odd in [
        (None, d),
        (d, None),
        (Some("delete"), d),
        (d, Some("Orphan")),
    ] {
        assert_eq!(policy(odd.0, odd.1), Policy::RETAIN, "{odd:?}");
    }
    assert_eq!(Policy::of(&StatefulSet::default()), Policy::RETAIN);
}

#[test]
fn the_owner_table() {
    let (r, d) = (Some("Retain"), Some("Delete"));
    // (whenScaled, whenDeleted) → (in range, scaled down) as (set ref, pod ref).
    let table = [
        ((r, r), ((false, false), (false, false))),
        ((r, d), ((true, false), (true, false))),
        ((d, r), ((false, false), (false, true))),
        ((d, d), ((true, false), (false, true))),
    ];
    for ((scaled, deleted), (in_range, scaled_down)) in table {
        let policy = Policy::of(&set_with(scaled, deleted));
        assert_eq!(policy.owners(false), in_range, "{scaled:?}/{deleted:?}");
        assert_eq!(policy.owners(true), scaled_down, "{scaled:?}/{deleted:?}");
    }
}

#[test]
fn every_starting_set_of_references_ends_matching_the_table() {
    let policies = [
        Policy::RETAIN,
        Policy {
            delete_when_scaled: false,
            delete_when_deleted: true,
        },
        Policy {
            delete_when_scaled: true,
            delete_when_deleted: false,
        },
        Policy {
            delete_when_scaled: true,
            delete_when_deleted: true,
        },
    ];
    let starts: Vec<Vec<OwnerReference>> = vec![
        vec![],
        vec![set_ref(SET)],
        vec![pod_ref(POD)],
        vec![set_ref(SET), pod_ref(POD)],
        vec![other_ref(), pod_ref(POD), set_ref(SET)],
        vec![pod_ref(POD), other_ref()],
    ];
    for policy in policies {
        for scaled_down in [false, true] {
            for start in &starts {
                let after = wanted_refs(policy, start, SET, POD, scaled_down);
                let refs = after.clone().unwrap_or_else(|| start.clone());
                assert!(matches(policy, &refs, SET.uid, POD.uid, scaled_down));
                assert_eq!(
                    after.is_none(),
                    matches(policy, start, SET.uid, POD.uid, scaled_down),
                    "{policy:?} {scaled_down} {start:?}"
                );
                // Others' references stay, in their order, with their flags.
                let others: Vec<_> = refs.iter().filter(|r| r.uid == "other-uid").collect();
                let before: Vec<_> = start.iter().filter(|r| r.uid == "other-uid").collect();
                assert_eq!(others, before);
                // Idempotent.
                assert_eq!(wanted_refs(policy, &refs, SET, POD, scaled_down), None);
            }
        }
    }
}

#[test]
fn written_references_are_exactly_kruises() {
    let delete = Policy {
        delete_when_scaled: true,
        delete_when_deleted: true,
    };
    // AS-3 Delete/Delete: the set ref replaced by the pod ref.
    let after = wanted_refs(delete, &[set_ref(SET)], SET, POD, true).unwrap();
    assert_eq!(
        serde_json::to_value(&after).unwrap(),
        serde_json::json!([{"apiVersion": "v1", "kind": "Pod", "name": "web-2", "uid": "pod-uid"}])
    );
    let after = wanted_refs(delete, &[other_ref()], SET, POD, false).unwrap();
    assert_eq!(
        serde_json::to_value(&after[1]).unwrap(),
        serde_json::json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet",
            "name": "web", "uid": "set-uid"})
    );
    // A pod not created yet (no uid) is never referred to.
    let unborn = Owner {
        name: "web-2",
        uid: "",
    };
    assert_eq!(wanted_refs(delete, &[], SET, unborn, true), None);
}

#[test]
fn a_claim_naming_the_pod_blocks_its_creation_unless_claims_are_kept_on_scale() {
    let stale = [pod_ref(POD)];
    let unrelated = [set_ref(SET), other_ref()];
    let claims = || [&stale[..], &unrelated[..]];
    let (r, d) = (Some("Retain"), Some("Delete"));
    assert!(blocks_creation(&set_with(d, r), "web-2", claims()));
    assert!(blocks_creation(&set_with(d, d), "web-2", claims()));
    assert!(!blocks_creation(&set_with(d, d), "web-3", claims()));
    assert!(!blocks_creation(&set_with(d, d), "web-2", [&unrelated[..]]));
    assert!(!blocks_creation(&set_with(r, d), "web-2", claims()));
    assert!(!blocks_creation(&StatefulSet::default(), "web-2", claims()));
    // A policy without whenScaled is not Retain to OpenKruise's check.
    assert!(blocks_creation(&set_with(None, d), "web-2", claims()));
}
