use super::*;
use crate::api::CloneSetBuilder;
use crate::api::cloneset::CloneSet;
use crate::k8s::history::fnv32;
use k8s_openapi::api::core::v1::Container;

fn sample(image: &str) -> CloneSet {
    CloneSetBuilder::new("sample")
        .uid("uid-1")
        .image(image)
        .build()
}

#[test]
fn data_is_the_go_encoding_with_replace_directive() {
    let data = revision_data(&sample("nginx:alpine").spec.template).unwrap();
    assert_eq!(
        data,
        r#"{"spec":{"template":{"$patch":"replace","metadata":{"creationTimestamp":null,"labels":{"app":"sample"}},"spec":{"containers":[{"image":"nginx:alpine","name":"main","resources":{}}]}}}}"#
    );
}

#[test]
fn hashes_match_the_go_algorithm() {
    let data = revision_data(&sample("nginx:alpine").spec.template).unwrap();
    let mut bytes = data.clone().into_bytes();
    bytes.push(b'0');
    assert_eq!(fnv32(&bytes), 2_823_198_129);
    assert_eq!(
        revision_name("sample", &revision_hash(&data, 0)),
        "sample-6d675fd56f"
    );
    assert_eq!(revision_hash(&data, 1), "6d675fd56d");
    assert_eq!(revision_hash(&data, 2), "6d675fd575");
    let other = revision_data(&sample("nginx:1.25").spec.template).unwrap();
    assert_eq!(revision_hash(&other, 0), "cd9bb944");
}

#[test]
fn long_names_are_cut_before_the_hash() {
    let long = "a".repeat(300);
    assert_eq!(revision_name(&long, "h").len(), 225);
    assert_eq!(short_hash("sample-6d675fd56f"), "6d675fd56f");
    assert!(label_names_revision("6d675fd56f", "sample-6d675fd56f"));
    assert!(!label_names_revision("sample-x", "sample-6d675fd56f"));
}

#[test]
fn candidate_carries_labels_annotations_owner_and_number() {
    let mut set = sample("nginx:alpine");
    set.metadata.annotations = Some([("team".to_string(), "a".to_string())].into());
    let revision = candidate(&set, 0, 3).unwrap();
    assert_eq!(revision.metadata.name.as_deref(), Some("sample-6d675fd56f"));
    assert_eq!(revision.revision, 3);
    let labels = revision.metadata.labels.unwrap();
    assert_eq!(labels[HASH_LABEL], "6d675fd56f");
    assert_eq!(labels["app"], "sample");
    assert_eq!(revision.metadata.annotations.unwrap()["team"], "a");
    assert_eq!(revision.metadata.owner_references.unwrap()[0].uid, "uid-1");
    let template = template_of(&candidate(&set, 0, 1).unwrap()).unwrap();
    assert_eq!(
        template.spec.unwrap().containers[0],
        Container {
            name: "main".into(),
            image: Some("nginx:alpine".into()),
            resources: Some(Default::default()),
            ..Default::default()
        }
    );
}

#[test]
fn update_revision_reuses_creates_or_renumbers() {
    let v1 = sample("v1");
    let v2 = sample("v2");
    assert!(matches!(
        update_revision(&v1, &[], 0).unwrap(),
        UpdateRevision::Create(r) if r.revision == 1
    ));
    let r1 = candidate(&v1, 0, 1).unwrap();
    let r2 = candidate(&v2, 0, 2).unwrap();
    let history = vec![r1.clone(), r2.clone()];
    assert_eq!(
        update_revision(&v2, &history, 0).unwrap(),
        UpdateRevision::Latest {
            name: r2.metadata.name.clone().unwrap()
        }
    );
    assert_eq!(
        update_revision(&v1, &history, 0).unwrap(),
        UpdateRevision::Renumber {
            name: r1.metadata.name.clone().unwrap(),
            revision: 3
        }
    );
    // A collision count changes the name, not the data: still recognised.
    assert!(matches!(
        update_revision(&v2, &history, 4).unwrap(),
        UpdateRevision::Latest { .. }
    ));
}

#[test]
fn truncation_keeps_live_and_worn_revisions() {
    let history: Vec<ControllerRevision> = (1..=5)
        .map(|n| {
            let mut r = candidate(&sample(&format!("v{n}")), 0, n).unwrap();
            r.metadata.name = Some(format!("cs-h{n}"));
            r
        })
        .collect();
    // Live: h5, h1 and h2 (a pod's short hash); h3 and h4 are within the limit of 2.
    let live = ["cs-h5", "cs-h1"];
    assert!(
        RevisionScheme::CLONESET
            .history_to_truncate(&history, &live, &["h2"], 2)
            .is_empty()
    );
    assert_eq!(
        RevisionScheme::CLONESET.history_to_truncate(&history, &live, &["h2"], 1),
        ["cs-h3"]
    );
    assert_eq!(
        RevisionScheme::CLONESET.history_to_truncate(&history, &live, &["h2"], 0),
        ["cs-h3", "cs-h4"]
    );
    let dropped = RevisionScheme::CLONESET.history_to_truncate(&history, &["cs-h5"], &[], 3);
    assert_eq!(dropped, ["cs-h1"]);
    assert!(
        RevisionScheme::CLONESET
            .history_to_truncate(&history, &[], &[], 10)
            .is_empty()
    );
}
