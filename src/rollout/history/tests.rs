use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Pod;
use proptest::prelude::*;

use super::*;
use crate::api::{
    SidecarSetBuilder, SidecarSetInjectRevision, SidecarSetInjectionStrategy, SidecarSetStatus,
};
use crate::inject::tests::default_and_hash;

const NS: &str = "kruise-system";

fn set(image: &str) -> SidecarSet {
    let mut set = SidecarSetBuilder::new("mesh")
        .selector(&[("app", "web")])
        .container("proxy", image)
        .label("team", "net")
        .build();
    set.metadata.uid = Some("uid-mesh".into());
    default_and_hash(&mut set);
    set
}

/// The revision of `set` as the watch holds it once created, numbered `number`.
fn held(set: &SidecarSet, number: i64) -> HeldRevision {
    let revision = candidate(set, NS, number, 0);
    HeldRevision {
        name: revision.metadata.name.unwrap().into(),
        uid: format!("uid-{number}").into(),
        set: set.name().into(),
        number,
        created: None,
        custom_version: set.spec.custom_version.clone().map(Into::into),
        controller: set.metadata.uid.clone().map(Into::into),
        digest: data_digest(&revision_data(set)),
    }
}

fn named(name: &str, number: i64) -> HeldRevision {
    HeldRevision {
        name: name.into(),
        uid: name.into(),
        set: "mesh".into(),
        number,
        created: None,
        custom_version: None,
        controller: None,
        digest: number as u128,
    }
}

fn pod_on(revision: &str) -> Arc<Pod> {
    let hash = format!(
        r#"{{"mesh":{{"updateTimestamp":"2026-01-01T00:00:00Z","hash":"h","sidecarSetName":"mesh","sidecarList":["proxy"],"controllerRevision":"{revision}"}}}}"#
    );
    Arc::new(Pod {
        metadata: ObjectMeta {
            name: Some(format!("on-{revision}")),
            annotations: Some(BTreeMap::from([(keys::SIDECARSET_HASH.to_string(), hash)])),
            ..Default::default()
        },
        ..Default::default()
    })
}

const NO_PODS: &[Arc<Pod>] = &[];

#[test]
fn a_first_revision_is_created_as_openkruise_creates_it() {
    let mut v1 = set("envoy:1");
    v1.spec.custom_version = Some("stable".into());
    let plan = plan_history(&v1, &[], NO_PODS, NS);
    let Latest::Create(created) = &plan.latest else {
        panic!("{plan:?}")
    };
    let name = created.metadata.name.clone().unwrap();
    assert!(name.starts_with("mesh-"));
    assert_eq!(created.revision, 1);
    assert_eq!(created.metadata.namespace.as_deref(), Some(NS));
    let labels = created.metadata.labels.as_ref().unwrap();
    assert_eq!(labels["team"], "net");
    assert_eq!(labels[keys::SIDECARSET_NAME_LABEL], "mesh");
    assert_eq!(labels[keys::SIDECARSET_CUSTOM_VERSION], "stable");
    assert_eq!(format!("mesh-{}", labels[HASH_LABEL]), name);
    let annotations = created.metadata.annotations.as_ref().unwrap();
    assert_eq!(
        annotations[keys::SIDECARSET_HASH],
        v1.annotation(keys::SIDECARSET_HASH).unwrap()
    );
    let owner = &created.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!(
        (
            owner.api_version.as_str(),
            owner.kind.as_str(),
            owner.uid.as_str()
        ),
        ("apps.kruise.io/v1beta1", "SidecarSet", "uid-mesh")
    );
    assert_eq!(
        (owner.controller, owner.block_owner_deletion),
        (Some(true), Some(true))
    );
    assert_eq!(
        history::stored_data(created),
        revision_data(&v1),
        "the data is OpenKruise's bytes"
    );
    assert_eq!(plan.label_custom_version, None);
    assert!(plan.delete.is_empty() && plan.over_limit.is_none());
}

#[test]
fn unchanged_reuses_changed_creates_and_a_rollback_renumbers() {
    let (v1, v2) = (set("envoy:1"), set("envoy:2"));
    let r1 = held(&v1, 1);
    let r2 = held(&v2, 2);
    assert_eq!(
        plan_history(&v2, &[&r1, &r2], NO_PODS, NS).latest,
        Latest::Reuse {
            name: r2.name.to_string()
        }
    );
    // Back to v1: its revision comes back with the next number, and is not truncated though
    // it is the oldest.
    let mut back = v1.clone();
    back.spec.revision_history_limit = Some(1);
    let plan = plan_history(&back, &[&r1, &r2], NO_PODS, NS);
    assert_eq!(
        plan.latest,
        Latest::Renumber {
            name: r1.name.to_string(),
            number: 3
        }
    );
    assert_eq!(plan.delete, [r2.name.to_string()]);
    let plan = plan_history(&set("envoy:3"), &[&r1, &r2], NO_PODS, NS);
    assert!(matches!(&plan.latest, Latest::Create(r) if r.revision == 3));
    // The collision count names a new revision, the data stays.
    let mut bumped = set("envoy:3");
    bumped.status = Some(SidecarSetStatus {
        collision_count: Some(2),
        ..Default::default()
    });
    let Latest::Create(created) = plan_history(&bumped, &[&r1], NO_PODS, NS).latest else {
        panic!()
    };
    assert_eq!(
        created.metadata.name.unwrap(),
        crate::inject::revision::revision_name(&bumped, 2)
    );
}

#[test]
fn the_latest_gets_the_custom_version_label() {
    let mut v1 = set("envoy:1");
    let r1 = held(&v1, 1);
    v1.spec.custom_version = Some("canary".into());
    assert_eq!(
        plan_history(&v1, &[&r1], NO_PODS, NS)
            .label_custom_version
            .as_deref(),
        Some("canary")
    );
    let mut labelled = r1.clone();
    labelled.custom_version = Some("canary".into());
    assert_eq!(
        plan_history(&v1, &[&labelled], NO_PODS, NS).label_custom_version,
        None
    );
}

#[test]
fn truncation_keeps_the_latest_and_what_is_in_use() {
    let history: Vec<HeldRevision> = (1..=6).map(|n| named(&format!("mesh-r{n}"), n)).collect();
    let refs: Vec<&HeldRevision> = history.iter().collect();
    let mut current = set("envoy:x");
    current.spec.revision_history_limit = Some(3);
    // The set's data is new: a 7th revision is created, four must go: r1..r4.
    let plan = plan_history(&current, &refs, NO_PODS, NS);
    assert_eq!(plan.delete, ["mesh-r1", "mesh-r2", "mesh-r3", "mesh-r4"]);
    // r1 is run by a pod, r3 is the revisionName: r5 and r6 go instead... but only r2, r4 and
    // r5 are not in use, one short: over the limit, in OpenKruise's words.
    current.spec.injection_strategy = Some(SidecarSetInjectionStrategy {
        paused: None,
        revision: Some(SidecarSetInjectRevision {
            revision_name: Some("mesh-r3".into()),
            custom_version: Some("v6".into()),
            policy: None,
        }),
    });
    let mut labelled = history.clone();
    labelled[5].custom_version = Some("v6".into());
    labelled[1].custom_version = Some("v6".into());
    let refs: Vec<&HeldRevision> = labelled.iter().collect();
    let pods = [pod_on("mesh-r1")];
    let plan = plan_history(&current, &refs, &pods, NS);
    assert_eq!(plan.delete, ["mesh-r2", "mesh-r4", "mesh-r5"]);
    assert_eq!(
        plan.over_limit.as_deref(),
        Some("failed to limit the number of stored revisions, limited: 3, actual: 4, name: mesh")
    );
    // A limit below 1 is 1; the latest always stays.
    current.spec.injection_strategy = None;
    current.spec.revision_history_limit = Some(0);
    let plan = plan_history(&current, &refs, NO_PODS, NS);
    assert_eq!(plan.delete.len(), 6);
    assert!(!plan.delete.contains(&plan.latest.name().to_string()));
}

#[test]
fn own_history_leaves_out_another_owners_revisions() {
    let current = set("envoy:1");
    let mut foreign = held(&current, 2);
    foreign.controller = Some("uid-of-a-deleted-set".into());
    let mut unowned = held(&current, 3);
    unowned.controller = None;
    let mine = held(&current, 1);
    let mut other_set = held(&current, 4);
    other_set.set = "other".into();
    let own = own_history(&current, [&unowned, &foreign, &mine, &other_set]);
    assert_eq!(own, [&mine, &unowned]);
}

proptest! {
    /// Whatever the history, the limit and what is in use: the latest and every revision in use
    /// stay, what goes is the oldest of the rest, and the history ends at the limit unless what
    /// is in use holds it above.
    #[test]
    fn truncation_never_removes_the_latest_nor_one_in_use(
        count in 0usize..14,
        limit in -2i32..12,
        worn in proptest::collection::btree_set(1i64..16, 0..5),
        named_revision in proptest::option::of(1i64..16),
        changed in any::<bool>(),
    ) {
        let history: Vec<HeldRevision> =
            (1..=count as i64).map(|n| named(&format!("mesh-r{n}"), n)).collect();
        let refs: Vec<&HeldRevision> = history.iter().collect();
        let mut current = set("envoy:p");
        current.spec.revision_history_limit = Some(limit);
        current.spec.injection_strategy = named_revision.map(|n| SidecarSetInjectionStrategy {
            paused: None,
            revision: Some(SidecarSetInjectRevision {
                revision_name: Some(format!("mesh-r{n}")),
                ..Default::default()
            }),
        });
        let pods: Vec<Arc<Pod>> = worn.iter().map(|n| pod_on(&format!("mesh-r{n}"))).collect();
        let mut refs = refs;
        let last;
        if !changed && count > 0 {
            // The set equals the newest revision.
            last = HeldRevision { digest: data_digest(&revision_data(&current)), ..history[count - 1].clone() };
            refs[count - 1] = &last;
        }
        let plan = plan_history(&current, &refs, &pods, NS);
        let latest = plan.latest.name().to_string();
        prop_assert!(!plan.delete.contains(&latest));
        let in_use: BTreeSet<String> = worn.iter().chain(named_revision.iter())
            .map(|n| format!("mesh-r{n}")).collect();
        for gone in &plan.delete {
            prop_assert!(!in_use.contains(gone));
        }
        let total = count + usize::from(matches!(plan.latest, Latest::Create(_)));
        let limit = limit.max(1) as usize;
        let left = total - plan.delete.len();
        if plan.over_limit.is_none() {
            prop_assert_eq!(left, total.min(limit));
        } else {
            prop_assert!(left > limit);
            // Nothing more could go: everything left but the latest is in use.
            let deletable = refs.iter().filter(|r| *r.name != *latest)
                .filter(|r| !in_use.contains(&*r.name)).count();
            prop_assert_eq!(plan.delete.len(), deletable);
        }
        // Oldest first among those not in use.
        let order: Vec<&str> = refs.iter().map(|r| &*r.name)
            .filter(|n| !in_use.contains(*n) && **n != *latest).collect();
        prop_assert_eq!(&order[..plan.delete.len()], &plan.delete.iter().map(String::as_str).collect::<Vec<_>>()[..]);
    }

    /// Going back to any earlier image reuses that image's revision under the next number;
    /// staying reuses the newest.
    #[test]
    fn a_rollback_reuses_its_revision(images in proptest::collection::vec(0u8..5, 1..8), back in 0usize..8) {
        let mut history: Vec<HeldRevision> = Vec::new();
        for image in &images {
            let current = set(&format!("envoy:{image}"));
            let refs: Vec<&HeldRevision> = history.iter().collect();
            let plan = plan_history(&current, &refs, NO_PODS, NS);
            let next = history.last().map_or(1, |r| r.number + 1);
            match plan.latest {
                Latest::Create(created) => {
                    prop_assert!(history.iter().all(|r| r.digest != data_digest(&revision_data(&current))));
                    let mut revision = held(&current, next);
                    revision.name = created.metadata.name.unwrap().into();
                    history.push(revision);
                }
                Latest::Renumber { name, number } => {
                    prop_assert_eq!(number, next);
                    let found = history.iter_mut().find(|r| *r.name == *name).unwrap();
                    prop_assert_eq!(found.digest, data_digest(&revision_data(&current)));
                    found.number = number;
                    history.sort_by_key(|r| r.number);
                }
                Latest::Reuse { name } => {
                    prop_assert_eq!(&*history.last().unwrap().name, name.as_str());
                }
            }
        }
        let target = set(&format!("envoy:{}", images[back % images.len()]));
        let refs: Vec<&HeldRevision> = history.iter().collect();
        let plan = plan_history(&target, &refs, NO_PODS, NS);
        prop_assert!(!matches!(plan.latest, Latest::Create(_)));
        prop_assert_eq!(plan.latest.name(), crate::inject::revision::revision_name(&target, 0));
    }
}
