use super::*;
use crate::api::keys;
use proptest::prelude::*;
use serde_json::json;

fn pod_with_hashes(hash: &str, without_image: &str) -> Pod {
    let mut pod = Pod::default();
    pod.metadata.annotations = Some(
        [
            (keys::SIDECARSET_HASH.to_string(), hash.to_string()),
            (
                keys::SIDECARSET_HASH_WITHOUT_IMAGE.to_string(),
                without_image.to_string(),
            ),
        ]
        .into(),
    );
    pod
}

#[test]
fn recorded_revisions_answer_as_the_annotation_text_does() {
    let hash = r#"{"b":{"hash":"hb","controllerRevision":"b-1"},"a":{"hash":"ha"},"c":{"hash":"hc","controllerRevision":"c-2"}}"#;
    // The without-image annotation records no revision; one that does is not read.
    let without_image = r#"{"a":{"hash":"wa","controllerRevision":"a-9"}}"#;
    for (hash, without_image) in [
        (hash, without_image),
        ("not json", ""),
        (r#"{"b":"legacy"}"#, ""),
    ] {
        let pod = pod_with_hashes(hash, without_image);
        let summary = PodSummary::of(&pod);
        for set in ["a", "b", "c", "absent"] {
            assert_eq!(
                summary.recorded_revision(set),
                pod.recorded_revision(set),
                "{set} in {hash}"
            );
        }
    }
    let pod = pod_with_hashes(hash, without_image);
    assert_eq!(pod.recorded_revision("c").as_deref(), Some("c-2"));
    assert_eq!(pod.recorded_revision("a"), None);
}

#[test]
fn parsed_hashes_answer_as_the_annotation_text_does() {
    let values = [
        r#"{"b":{"hash":"hb"},"a":{"hash":"ha"},"d":{"hash":"hd"},"c":{"hash":"h\u0063"}}"#,
        r#"{"z":"legacy-z","m":"legacy-m","a":"legacy-a"}"#,
        r#"{"a":{"hash":7}}"#,
        "not json",
        "",
    ];
    for hash in values {
        for without_image in values {
            let pod = pod_with_hashes(hash, without_image);
            let summary = PodSummary::of(&pod);
            for which in HASHES {
                for set in ["a", "b", "c", "d", "m", "z", "absent", ""] {
                    assert_eq!(
                        summary.recorded_hashes(which).get(set),
                        pod.recorded_hashes(which).get(set),
                        "{which:?} {set} in {hash} / {without_image}"
                    );
                }
            }
        }
    }
}

#[test]
fn engine_progress_is_read_as_the_engine_reads_it() {
    let state = |revision: &str, next: bool| {
        let next = if next {
            r#","nextContainerImages":{"b":"b:2"}"#
        } else {
            ""
        };
        format!(r#"{{"revision":"{revision}","lastContainerStatuses":null{next}}}"#)
    };
    let cases: [&[(&str, String)]; 6] = [
        &[],
        &[(keys::INPLACE_UPDATE_STATE, state("r1", true))],
        &[(keys::INPLACE_UPDATE_STATE, state("r1", false))],
        &[(keys::INPLACE_UPDATE_STATE_LEGACY, state("r0", true))],
        &[
            (keys::INPLACE_UPDATE_STATE, String::new()),
            (keys::INPLACE_UPDATE_STATE_LEGACY, state("r0", false)),
        ],
        &[(keys::INPLACE_UPDATE_STATE, "{not json".into())],
    ];
    let mut seen = Vec::new();
    for annotations in cases {
        let mut pod = Pod::default();
        pod.metadata.annotations = Some(
            annotations
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        );
        let summary = PodSummary::of(&pod);
        assert_eq!(
            summary.engine_progress(),
            pod.engine_progress(),
            "{annotations:?}"
        );
        seen.push(
            summary
                .engine_progress()
                .map(|p| (p.revision.into_owned(), p.has_next_batch)),
        );
    }
    let r = |revision: &str, next| Some((revision.to_string(), next));
    assert_eq!(
        seen,
        [
            None,
            r("r1", true),
            r("r1", false),
            r("r0", true),
            r("r0", false),
            None
        ]
    );
}

#[test]
fn a_pod_without_metadata_or_status_reads_empty() {
    let summary = PodSummary::of(&Pod::default());
    assert_eq!(summary.name_field(), None);
    assert_eq!(summary.namespace(), "");
    assert_eq!(summary.phase(), "");
    assert_eq!(summary.containers().len(), 0);
    assert!(!summary.has_ready_condition());
    assert!(!summary.scheduled());
}

/// Every answer of [`PodView`] that is not about SidecarSets, as one value.
#[derive(Debug, PartialEq)]
struct EveryRoundReads {
    identity: (String, String, String, String),
    owner_uids: Vec<String>,
    controller_uid: Option<String>,
    labels: Option<Labels>,
    phase: String,
    node_name: String,
    scheduled: bool,
    readiness: (bool, bool, Option<Timestamp>),
    inplace: (Option<String>, bool, bool, bool),
    deletion_cost: i32,
    created: Option<Timestamp>,
    deleting: bool,
    active: bool,
    restart_counts: Vec<i32>,
    claim_volumes: Vec<(String, String)>,
    init_containers: Vec<String>,
}

fn every_round_reads(pod: &impl PodView) -> EveryRoundReads {
    let text = |v: &str| v.to_string();
    EveryRoundReads {
        identity: (
            text(pod.namespace()),
            text(pod.name()),
            text(pod.uid()),
            text(pod.resource_version()),
        ),
        owner_uids: pod.owner_uids().map(text).collect(),
        controller_uid: pod.controller_uid().map(text),
        labels: pod.labels().cloned(),
        phase: text(pod.phase()),
        node_name: text(pod.node_name()),
        scheduled: pod.scheduled(),
        readiness: (
            pod.has_ready_condition(),
            pod.first_ready_true(),
            pod.ready_since().copied(),
        ),
        inplace: (
            pod.inplace_ready_status().map(text),
            pod.has_inplace_gate(),
            pod.has_inplace_grace(),
            pod.has_inplace_state(),
        ),
        deletion_cost: pod.deletion_cost(),
        created: pod.created().copied(),
        deleting: pod.deleting(),
        active: pod.is_active(),
        restart_counts: pod.container_statuses().map(|s| s.restart_count).collect(),
        claim_volumes: pod
            .claim_volumes()
            .map(|(v, c)| (text(v), text(c)))
            .collect(),
        init_containers: pod.init_container_names().map(text).collect(),
    }
}

/// A condition of one of the types the planners read, in some status, maybe with a time.
fn condition() -> impl Strategy<Value = serde_json::Value> {
    (
        prop::sample::select(vec!["Ready", "InPlaceUpdateReady", "ContainersReady"]),
        prop::sample::select(vec!["True", "False", "Unknown"]),
        prop::option::of(0u8..4),
    )
        .prop_map(|(type_, status, minute)| {
            let mut c = json!({"type": type_, "status": status});
            if let Some(minute) = minute {
                c["lastTransitionTime"] = json!(format!("2026-11-26T10:0{minute}:00Z"));
            }
            c
        })
}

/// Annotation values the every-round reads look at: empty, numbers, junk.
fn annotation_value() -> impl Strategy<Value = Option<&'static str>> {
    prop::option::of(prop::sample::select(vec![
        "",
        "7",
        "-10",
        "2147483648",
        "x",
        "{}",
    ]))
}

prop_compose! {
    fn pod()(
        identity in prop::collection::vec(prop::option::of(prop::sample::select(vec!["", "a"])), 4),
        owners in prop::collection::vec((prop::sample::select(vec!["u1", "u2", ""]),
            prop::option::of(any::<bool>())), 0..3),
        node in prop::option::of(prop::sample::select(vec!["", "node-1"])),
        phase in prop::option::of(prop::sample::select(vec!["Running", "Pending", "Failed",
            "Succeeded", ""])),
        conditions in prop::option::of(prop::collection::vec(condition(), 0..4)),
        gates in prop::option::of(prop::collection::vec(
            prop::sample::select(vec!["InPlaceUpdateReady", "other"]), 0..2)),
        annotations in prop::collection::vec(annotation_value(), 5),
        restarts in prop::option::of(prop::collection::vec(0i32..3, 0..3)),
        deleting in any::<bool>(),
        volumes in prop::collection::vec(prop::option::of(prop::sample::select(vec!["data-web-0", "logs-web-0"])), 0..3),
        init in prop::option::of(prop::collection::vec(prop::sample::select(vec!["init", "mesh-init", ""]), 0..3)),
    ) -> Pod {
        let keys = [
            keys::POD_DELETION_COST,
            keys::INPLACE_UPDATE_GRACE,
            keys::INPLACE_UPDATE_GRACE_LEGACY,
            keys::INPLACE_UPDATE_STATE,
            keys::INPLACE_UPDATE_STATE_LEGACY,
        ];
        let annotations: serde_json::Map<String, serde_json::Value> = keys
            .iter()
            .zip(&annotations)
            .filter_map(|(k, v)| Some((k.to_string(), json!(v.as_ref()?))))
            .collect();
        let owners: Vec<_> = owners
            .iter()
            .map(|(uid, controller)| json!({"apiVersion": "apps.kruise.io/v1alpha1",
                "kind": "CloneSet", "name": "c", "uid": uid, "controller": controller}))
            .collect();
        let statuses: Option<Vec<_>> = restarts.map(|r| r.iter().enumerate()
            .map(|(i, n)| json!({"name": format!("c{i}"), "image": "i", "imageID": "",
                "ready": true, "restartCount": n}))
            .collect());
        let gates: Option<Vec<_>> =
            gates.map(|g| g.iter().map(|t| json!({"conditionType": t})).collect());
        let field = |i: usize| identity[i].map(|v| format!("{v}{i}"));
        // Volumes with and without a claim.
        let volumes: Vec<_> = volumes
            .iter()
            .enumerate()
            .map(|(i, claim)| match claim {
                Some(claim) => json!({"name": format!("v{i}"), "persistentVolumeClaim": {"claimName": claim}}),
                None => json!({"name": format!("v{i}"), "emptyDir": {}}),
            })
            .collect();
        let mut pod = json!({
            "metadata": {"namespace": field(0), "name": field(1), "uid": field(2),
                "resourceVersion": field(3), "labels": {"app": "web"},
                "annotations": annotations, "ownerReferences": owners,
                "creationTimestamp": "2026-11-26T09:00:00Z"},
            "spec": {"containers": [{"name": "c0"}], "nodeName": node, "readinessGates": gates,
                "volumes": volumes,
                "initContainers": init.map(|names| names.iter().map(|n| json!({"name": n})).collect::<Vec<_>>())},
            "status": {"phase": phase, "conditions": conditions, "containerStatuses": statuses},
        });
        if deleting {
            pod["metadata"]["deletionTimestamp"] = json!("2026-11-26T11:00:00Z");
        }
        serde_json::from_value(pod).unwrap()
    }
}

proptest! {
    #[test]
    fn a_summary_answers_every_round_reads_as_its_pod_does(pod in pod()) {
        prop_assert_eq!(every_round_reads(&PodSummary::of(&pod)), every_round_reads(&pod));
    }
}

#[test]
fn every_round_reads_of_a_pod() {
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": "p", "uid": "u", "resourceVersion": "9",
            "annotations": {keys::POD_DELETION_COST: "-3", keys::INPLACE_UPDATE_STATE: "",
                keys::INPLACE_UPDATE_STATE_LEGACY: "{}"},
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "A", "name": "a", "uid": "a1"},
                {"apiVersion": "v1", "kind": "B", "name": "b", "uid": "b1", "controller": true}]},
        "spec": {"containers": [], "nodeName": "n",
            "readinessGates": [{"conditionType": keys::INPLACE_UPDATE_READY}]},
        "status": {"conditions": [
            {"type": "Ready", "status": "False"}, {"type": "Ready", "status": "True"},
            {"type": keys::INPLACE_UPDATE_READY, "status": "False"}]},
    }))
    .unwrap();
    let reads = every_round_reads(&PodSummary::of(&pod));
    assert_eq!(reads.owner_uids, ["a1", "b1"]);
    assert_eq!(reads.controller_uid.as_deref(), Some("b1"));
    assert_eq!(reads.deletion_cost, -3);
    assert_eq!(reads.readiness, (true, false, None));
    // The state's current key is empty, so the legacy one counts.
    assert_eq!(reads.inplace, (Some("False".into()), true, false, true));
    assert_eq!(reads.node_name, "n");
    assert_eq!(reads, every_round_reads(&pod));
}

/// The SidecarSet pass reads every summary of the cluster each round: `Arc<PodSummary>` (two
/// counters and the summary) stays in jemalloc's 320-byte class, where it was before the
/// CloneSet's parts were added (they are boxed apart for this).
#[test]
fn an_arc_of_a_summary_fits_the_320_byte_allocation_class() {
    let arc_counters = 2 * std::mem::size_of::<usize>();
    assert!(arc_counters + std::mem::size_of::<PodSummary>() <= 320);
}
