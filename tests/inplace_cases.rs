//! In-place update cases from `shared/spec/inplace-rollout-validation-certs.md` §5.1 (CalculateSpec)
//! and §5.3 (Refresh with a fixed clock), then whole updates driven step by step the way a
//! controller would, with the test playing the apiserver and kubelet.

use std::collections::BTreeMap;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::{Pod, PodCondition};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kruise_webhook::api::keys;
use kruise_webhook::inplace::completion::Incomplete;
use kruise_webhook::inplace::state::{
    self, ContainerBatch, InPlaceUpdateState, LastContainerStatus, UpdateSpec,
};
use kruise_webhook::inplace::{
    BatchKind, CalculateOptions, EngineOptions, EnvFromMetadata, NotInPlace, Revision, Step, Write,
    calculate_spec, next_step, refresh,
};
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------------
// Helpers

/// The fixed clock of §5.3 ("T").
fn t() -> Timestamp {
    "2026-07-02T09:00:00Z".parse().expect("fixed clock")
}

fn time(ts: Timestamp) -> Option<Time> {
    Some(Time(ts))
}

/// `tmpl{labels, containers}` of §5.
fn tmpl(labels: Value, containers: Value) -> Value {
    json!({"spec":{"template":{"$patch":"replace","metadata":{"labels":labels},"spec":{"containers":containers}}}})
}

fn c(name: &str, image: &str) -> Value {
    json!({"name": name, "image": image})
}

/// §5.1 runs with OpenKruise's env-from-metadata feature on.
fn kruise_options() -> CalculateOptions {
    CalculateOptions {
        env_from_metadata: EnvFromMetadata::InPlace,
        ..Default::default()
    }
}

fn calc(old: Option<&Value>, new: Option<&Value>) -> Result<UpdateSpec, NotInPlace> {
    calc_with(old, new, None, None, &kruise_options())
}

fn calc_with(
    old: Option<&Value>,
    new: Option<&Value>,
    old_vct: Option<&str>,
    new_vct: Option<&str>,
    options: &CalculateOptions,
) -> Result<UpdateSpec, NotInPlace> {
    let old = old.map(|data| Revision {
        name: "old-revision",
        data,
        volume_claim_templates_hash: old_vct,
    });
    let new = new.map(|data| Revision {
        name: "new-revision",
        data,
        volume_claim_templates_hash: new_vct,
    });
    calculate_spec(old.as_ref(), new.as_ref(), options)
}

fn images(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn image_spec(pairs: &[(&str, &str)]) -> UpdateSpec {
    UpdateSpec {
        revision: "new-revision".into(),
        container_images: images(pairs),
        ..Default::default()
    }
}

fn pod(value: Value) -> Pod {
    serde_json::from_value(value).expect("test pod")
}

fn with_annotation(mut pod: Pod, key: &str, value: String) -> Pod {
    pod.metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(key.to_string(), value);
    pod
}

fn with_state(pod: Pod, state: &InPlaceUpdateState) -> Pod {
    with_annotation(
        pod,
        keys::INPLACE_UPDATE_STATE,
        serde_json::to_string(state).expect("state json"),
    )
}

fn read_state(pod: &Pod) -> InPlaceUpdateState {
    state::read_state(pod)
        .expect("state annotation")
        .expect("readable state")
}

fn last(pairs: &[(&str, &str)]) -> Option<BTreeMap<String, LastContainerStatus>> {
    Some(
        pairs
            .iter()
            .map(|(k, v)| {
                (
                    k.to_string(),
                    LastContainerStatus {
                        image_id: v.to_string(),
                    },
                )
            })
            .collect(),
    )
}

fn batch(at: Timestamp, names: &[&str]) -> ContainerBatch {
    ContainerBatch {
        timestamp: time(at),
        containers: names.iter().map(|n| n.to_string()).collect(),
    }
}

fn image_of<'a>(pod: &'a Pod, container: &str) -> Option<&'a str> {
    pod.spec
        .as_ref()?
        .containers
        .iter()
        .find(|c| c.name == container)?
        .image
        .as_deref()
}

fn condition<'a>(pod: &'a Pod, type_: &str) -> Option<&'a PodCondition> {
    pod.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == type_)
}

fn gate() -> Value {
    json!([{"conditionType": "InPlaceUpdateReady"}])
}

// ---------------------------------------------------------------------------------------------
// §5.1 CalculateSpec (env-from-metadata on)

#[test]
fn ip01_missing_old_revision_recreates() {
    let new = tmpl(json!({}), json!([c("c1", "foo2")]));
    assert!(matches!(
        calc(None, Some(&new)),
        Err(NotInPlace::MissingRevision(_))
    ));
    assert!(matches!(
        calc(Some(&new), None),
        Err(NotInPlace::MissingRevision(_))
    ));
}

#[test]
fn ip02_image_only() {
    let old = tmpl(json!({}), json!([c("c1", "foo1")]));
    let new = tmpl(json!({}), json!([c("c1", "foo2")]));
    assert_eq!(
        calc(Some(&old), Some(&new)).unwrap(),
        image_spec(&[("c1", "foo2")])
    );
}

#[test]
fn ip03_unchanged_revision_metadata_is_ignored() {
    let mut old = tmpl(json!({}), json!([c("c1", "foo1")]));
    let mut new = tmpl(json!({}), json!([c("c1", "foo2")]));
    old["metadata"] = json!({"labels":{"k":"v"}});
    new["metadata"] = json!({"labels":{"k":"v"}});
    assert_eq!(
        calc(Some(&old), Some(&new)).unwrap(),
        image_spec(&[("c1", "foo2")])
    );
}

#[test]
fn ip04_template_label_added() {
    let old = tmpl(json!({"k":"v"}), json!([c("c1", "foo1")]));
    let new = tmpl(json!({"k":"v","k1":"v1"}), json!([c("c1", "foo2")]));
    let spec = calc(Some(&old), Some(&new)).unwrap();
    assert_eq!(
        spec,
        UpdateSpec {
            meta_data_patch: br#"{"metadata":{"labels":{"k1":"v1"}}}"#.to_vec(),
            ..image_spec(&[("c1", "foo2")])
        }
    );
}

#[test]
fn ip05_env_reads_changed_label() {
    let container = |image: &str| json!({"name":"c1","image":image,"env":[{"name":"TEST_ENV","valueFrom":{"fieldRef":{"fieldPath":"metadata.labels['k']"}}}]});
    let old = tmpl(json!({"k":"v"}), json!([container("foo1")]));
    let new = tmpl(json!({"k":"v2","k1":"v1"}), json!([container("foo2")]));
    let spec = calc(Some(&old), Some(&new)).unwrap();
    assert_eq!(
        spec,
        UpdateSpec {
            container_ref_metadata: BTreeMap::from([(
                "c1".to_string(),
                ObjectMeta {
                    labels: Some(images(&[("k", "v2")])),
                    ..Default::default()
                }
            )]),
            update_env_from_metadata: true,
            meta_data_patch: br#"{"metadata":{"labels":{"k1":"v1"}}}"#.to_vec(),
            ..image_spec(&[("c1", "foo2")])
        }
    );
    // Without a node agent to restart c1 (this project's default), the same change recreates.
    assert_eq!(
        calc_with(
            Some(&old),
            Some(&new),
            None,
            None,
            &CalculateOptions::default()
        ),
        Err(NotInPlace::EnvReadsChangedMetadata {
            container: "c1".into(),
            field: "metadata.labels",
            key: "k".into()
        })
    );
}

#[test]
fn ip06_labels_and_finalizers() {
    let mut old = tmpl(json!({"k":"v","k2":"v2"}), json!([c("c1", "foo1")]));
    let mut new = tmpl(json!({"k":"v","k1":"v1"}), json!([c("c1", "foo2")]));
    old["spec"]["template"]["metadata"]["finalizers"] = json!(["fz1", "fz2"]);
    new["spec"]["template"]["metadata"]["finalizers"] = json!(["fz2"]);
    let spec = calc(Some(&old), Some(&new)).unwrap();
    assert_eq!(
        String::from_utf8(spec.meta_data_patch.clone()).unwrap(),
        r#"{"metadata":{"$deleteFromPrimitiveList/finalizers":["fz1"],"$setElementOrder/finalizers":["fz2"],"labels":{"k1":"v1","k2":null}}}"#
    );
    assert_eq!(spec.container_images, images(&[("c1", "foo2")]));
}

#[test]
fn ip07_unreadable_new_revision() {
    let old = tmpl(json!({}), json!([c("c1", "foo1")]));
    let new = json!({"spec":{"template":{"spec":{"containers":"not a list"}}}});
    assert!(matches!(
        calc(Some(&old), Some(&new)),
        Err(NotInPlace::UnreadableTemplate { .. })
    ));
}

#[test]
fn ip08_volume_claim_template_hash() {
    let old = tmpl(json!({}), json!([c("c1", "foo1")]));
    let new = tmpl(json!({}), json!([c("c1", "foo2")]));
    let gate_on = CalculateOptions {
        recreate_on_volume_claim_templates_change: true,
        ..kruise_options()
    };
    assert_eq!(
        calc_with(Some(&old), Some(&new), Some(""), Some("balala"), &gate_on),
        Err(NotInPlace::VolumeClaimTemplatesChanged)
    );
    let ignoring = CalculateOptions {
        ignore_volume_claim_templates_hash_diff: true,
        ..gate_on.clone()
    };
    assert_eq!(
        calc_with(Some(&old), Some(&new), Some(""), Some("balala"), &ignoring).unwrap(),
        image_spec(&[("c1", "foo2")])
    );
    for (a, b) in [(None, Some("balala")), (Some(""), None)] {
        assert_eq!(
            calc_with(Some(&old), Some(&new), a, b, &gate_on).unwrap(),
            image_spec(&[("c1", "foo2")])
        );
    }
    // Gate off: the hashes are not looked at.
    assert!(
        calc_with(
            Some(&old),
            Some(&new),
            Some(""),
            Some("balala"),
            &kruise_options()
        )
        .is_ok()
    );
}

#[test]
fn grace_seconds_is_carried() {
    let old = tmpl(json!({}), json!([c("c1", "foo1")]));
    let new = tmpl(json!({}), json!([c("c1", "foo2")]));
    let spec = calc_with(
        Some(&old),
        Some(&new),
        None,
        None,
        &CalculateOptions {
            grace_seconds: 30,
            ..kruise_options()
        },
    )
    .unwrap();
    assert_eq!(spec.grace_seconds, 30);
}

// ---------------------------------------------------------------------------------------------
// §5.3 Refresh, clock fixed at T

fn refresh_at_t(pod: &Pod) -> Step {
    refresh(pod, &EngineOptions::default(), t()).expect("refresh")
}

#[test]
fn ip13_plain_pod_is_left_alone() {
    let p = pod(json!({"metadata":{"name":"p"},"spec":{"containers":[c("c1","img")]}}));
    assert_eq!(refresh_at_t(&p), Step::Idle);
}

#[test]
fn ip14_batch_without_statuses_waits() {
    let p = with_state(
        pod(json!({"spec":{"readinessGates":gate(),"containers":[c("c1","img")]}})),
        &InPlaceUpdateState {
            last_container_statuses: last(&[("c1", "img01")]),
            ..Default::default()
        },
    );
    assert_eq!(
        refresh_at_t(&p),
        Step::WaitBatch {
            reason: Incomplete::StatusesMissing(vec!["c1".into()])
        }
    );
}

#[test]
fn ip15_gate_without_condition_becomes_true() {
    let p = pod(json!({"spec":{"readinessGates":gate(),"containers":[c("c1","img")]}}));
    let Step::Complete { pod: done } = refresh_at_t(&p) else {
        panic!("expected the gate to be set");
    };
    assert_eq!(
        done.status.as_ref().unwrap().conditions,
        Some(vec![PodCondition {
            type_: keys::INPLACE_UPDATE_READY.into(),
            status: "True".into(),
            last_transition_time: time(t()),
            ..Default::default()
        }])
    );
}

#[test]
fn ip16_false_becomes_true_and_others_untouched() {
    let p = pod(json!({
        "spec":{"readinessGates":gate(),"containers":[c("c1","img")]},
        "status":{"conditions":[
            {"type":"ContainersReady","status":"True","lastTransitionTime":"2026-07-01T00:00:00Z"},
            {"type":"InPlaceUpdateReady","status":"False","reason":"StartInPlaceUpdate","lastTransitionTime":"2026-07-01T00:00:00Z"}
        ]}
    }));
    let step = refresh_at_t(&p);
    assert!(matches!(step.write(), Some(Write::Status(_))));
    let Step::Complete { pod: done } = step else {
        panic!("expected completion");
    };
    assert_eq!(
        condition(&done, keys::INPLACE_UPDATE_READY),
        Some(&PodCondition {
            type_: keys::INPLACE_UPDATE_READY.into(),
            status: "True".into(),
            last_transition_time: time(t()),
            ..Default::default()
        })
    );
    assert_eq!(
        condition(&done, "ContainersReady"),
        condition(&p, "ContainersReady")
    );
}

#[test]
fn ip17_already_true_writes_nothing() {
    let p = pod(json!({
        "spec":{"readinessGates":gate(),"containers":[c("c1","img")]},
        "status":{"conditions":[
            {"type":"ContainersReady","status":"False"},
            {"type":"InPlaceUpdateReady","status":"True"}
        ]}
    }));
    assert_eq!(refresh_at_t(&p), Step::Idle);
}

fn grace_pod(grace_seconds: i32) -> Pod {
    let p = pod(json!({
        "metadata":{"labels":{"controller-revision-hash":"new-revision"}},
        "spec":{"containers":[c("main","img-name01")]}
    }));
    let p = with_state(
        p,
        &InPlaceUpdateState {
            revision: "new-revision".into(),
            update_timestamp: time(t() - SignedDuration::from_secs(10)),
            last_container_statuses: last(&[("c1", "img01")]),
            ..Default::default()
        },
    );
    with_annotation(
        p,
        keys::INPLACE_UPDATE_GRACE,
        format!(
            r#"{{"revision":"new-revision","containerImages":{{"main":"img-name02"}},"graceSeconds":{grace_seconds}}}"#
        ),
    )
}

#[test]
fn ip18_grace_not_elapsed_waits_the_rest() {
    // The stamp (T - 10 s) is a whole second, as OpenKruise writes it: the update may have
    // started up to a second later, so the 30 s count from T - 9 s.
    assert_eq!(
        refresh_at_t(&grace_pod(30)),
        Step::WaitGrace {
            until: t() + SignedDuration::from_secs(21),
            requeue_after: Duration::from_secs(21),
        }
    );
    // Requeues are exact to the millisecond, rounded up.
    let step = refresh(
        &grace_pod(30),
        &EngineOptions::default(),
        t() + SignedDuration::from_nanos(500_000_001),
    )
    .unwrap();
    assert_eq!(step.requeue_after(), Some(Duration::from_millis(20_500)));
}

#[test]
fn ip19_grace_elapsed_patches_first_batch() {
    let before = grace_pod(5);
    let step = refresh_at_t(&before);
    let Step::PatchBatch {
        pod: after,
        kind: BatchKind::AfterGrace,
        containers,
    } = step
    else {
        panic!("expected the first batch, got {step:?}");
    };
    assert_eq!(containers, vec!["main".to_string()]);
    assert_eq!(image_of(&after, "main"), Some("img-name02"));
    assert!(!state::has_grace(&after));
    assert_eq!(
        read_state(&after),
        InPlaceUpdateState {
            revision: "new-revision".into(),
            update_timestamp: time(t() - SignedDuration::from_secs(10)),
            last_container_statuses: last(&[("c1", "img01")]),
            container_batches_record: vec![batch(t(), &["main"])],
            ..Default::default()
        }
    );
}

fn two_batch_pod(c1_image_id: &str) -> Pod {
    let p = pod(json!({
        "metadata":{"labels":{"controller-revision-hash":"new-revision"}},
        "spec":{"readinessGates":gate(),"containers":[c("c1","c1-img2"),c("c2","c2-img1")]},
        "status":{
            "conditions":[{"type":"InPlaceUpdateReady","status":"False","reason":"StartInPlaceUpdate"}],
            "containerStatuses":[
                {"name":"c1","image":"","imageID":c1_image_id,"ready":false,"restartCount":0},
                {"name":"c2","image":"","imageID":"c2-img1-ID","ready":false,"restartCount":0}
            ]
        }
    }));
    with_state(
        p,
        &InPlaceUpdateState {
            update_timestamp: time(t()),
            last_container_statuses: last(&[("c1", "c1-img1-ID")]),
            container_batches_record: vec![batch(t(), &["c1"])],
            next_container_images: images(&[("c2", "c2-img2")]),
            ..Default::default()
        },
    )
}

#[test]
fn ip20_next_batch_waits_for_image_id() {
    assert_eq!(
        refresh_at_t(&two_batch_pod("c1-img1-ID")),
        Step::WaitBatch {
            reason: Incomplete::ImageIdNotChanged("c1".into())
        }
    );
}

#[test]
fn ip21_next_batch_proceeds() {
    let before = two_batch_pod("c1-img2-ID");
    let step = refresh_at_t(&before);
    assert!(matches!(step.write(), Some(Write::Pod(_))));
    let Step::PatchBatch {
        pod: after,
        kind: BatchKind::Next,
        containers,
    } = step
    else {
        panic!("expected the next batch, got {step:?}");
    };
    assert_eq!(containers, vec!["c2".to_string()]);
    assert_eq!(image_of(&after, "c2"), Some("c2-img2"));
    assert_eq!(image_of(&after, "c1"), Some("c1-img2"));
    assert_eq!(
        read_state(&after),
        InPlaceUpdateState {
            update_timestamp: time(t()),
            last_container_statuses: last(&[("c1", "c1-img1-ID"), ("c2", "c2-img1-ID")]),
            container_batches_record: vec![batch(t(), &["c1"]), batch(t(), &["c2"])],
            ..Default::default()
        }
    );
    // The gate stays False until a later refresh sees the last batch done.
    assert_eq!(after.status, before.status);
}

// ---------------------------------------------------------------------------------------------
// Whole updates, step by step

/// Plays kubelet: every container whose spec image differs from what it runs pulls it and is
/// restarted with it (new imageID, container ID and restart count) and, if `ready`, becomes
/// ready.
fn kubelet_runs_spec(pod: &mut Pod, ready: bool) {
    let spec: Vec<(String, String)> = pod
        .spec
        .as_ref()
        .unwrap()
        .containers
        .iter()
        .map(|c| (c.name.clone(), c.image.clone().unwrap_or_default()))
        .collect();
    let status = pod.status.get_or_insert_with(Default::default);
    for cs in status.container_statuses.get_or_insert_with(Vec::new) {
        if let Some((_, image)) = spec.iter().find(|(n, _)| *n == cs.name) {
            if cs.image != *image {
                cs.image = image.clone();
                cs.image_id = format!("{image}-ID");
                cs.restart_count += 1;
                cs.container_id = Some(format!("containerd://{}-{}", cs.name, cs.restart_count));
                cs.ready = false;
            }
            if ready {
                cs.ready = true;
            }
        }
    }
}

fn prioritised_pod() -> Pod {
    let barrier = |p: i64| json!([{"name":"KRUISE_CONTAINER_BARRIER","valueFrom":{"configMapKeyRef":{"name":"web-barrier","key":format!("p_{p}")}}}]);
    pod(json!({
        "metadata":{"name":"web","labels":{"controller-revision-hash":"old-revision"}},
        "spec":{
            "readinessGates":gate(),
            "containers":[
                {"name":"app","image":"app:1","env":barrier(0)},
                {"name":"proxy","image":"proxy:1","env":barrier(10)}
            ]
        },
        "status":{
            "conditions":[
                {"type":"Ready","status":"True"},
                {"type":"ContainersReady","status":"True"},
                {"type":"InPlaceUpdateReady","status":"True"}
            ],
            "containerStatuses":[
                {"name":"app","image":"app:1","imageID":"app:1-ID","ready":true,"restartCount":0},
                {"name":"proxy","image":"proxy:1","imageID":"proxy:1-ID","ready":true,"restartCount":0}
            ]
        }
    }))
}

#[test]
fn two_priorities_update_in_order_then_gate_true() {
    let options = EngineOptions::default();
    let target = image_spec(&[("app", "app:2"), ("proxy", "proxy:2")]);
    let mut p = prioritised_pod();
    let mut now = t();
    let mut seen = Vec::new();
    for _ in 0..20 {
        now += SignedDuration::from_secs(1);
        let step = next_step(&p, Some(&target), &options, now).unwrap();
        seen.push(match &step {
            Step::SetNotReady { pod } => {
                assert_eq!(
                    condition(pod, "Ready").unwrap().reason.as_deref(),
                    Some("ReadinessGatesNotReady")
                );
                "not-ready".to_string()
            }
            Step::PatchBatch {
                kind, containers, ..
            } => format!("{kind:?}:{}", containers.join(",")),
            Step::WaitBatch { .. } => "wait-batch".into(),
            Step::WaitReady { containers } => format!("wait-ready:{}", containers.join(",")),
            Step::Complete { .. } => "complete".into(),
            Step::Idle => break,
            other => panic!("unexpected {other:?}"),
        });
        if let Some(Write::Pod(next) | Write::Status(next)) = step.write() {
            p = next.clone();
            continue;
        }
        // Nothing written: let kubelet move, first without readiness, then with it.
        let ready = seen.last().is_some_and(|s| s.starts_with("wait-ready"));
        kubelet_runs_spec(&mut p, ready);
    }
    assert_eq!(
        seen,
        vec![
            "not-ready",
            "First:proxy",
            "wait-batch",
            "wait-ready:proxy",
            "Next:app",
            "wait-batch",
            "complete",
        ]
    );
    let state = read_state(&p);
    assert_eq!(
        state
            .container_batches_record
            .iter()
            .map(|b| b.containers.clone())
            .collect::<Vec<_>>(),
        vec![vec!["proxy".to_string()], vec!["app".to_string()]]
    );
    assert_eq!(
        state.last_container_statuses,
        last(&[("app", "app:1-ID"), ("proxy", "proxy:1-ID")])
    );
    assert_eq!(
        condition(&p, keys::INPLACE_UPDATE_READY).unwrap().status,
        "True"
    );
    assert_eq!(
        p.metadata.labels.as_ref().unwrap()["controller-revision-hash"],
        "new-revision"
    );
}

#[test]
fn grace_period_then_batch() {
    let options = EngineOptions::default();
    let target = UpdateSpec {
        grace_seconds: 30,
        ..image_spec(&[("app", "app:2")])
    };
    // No readiness gate: no status writes at all. A controller's clock has fractions of a second.
    let start = t() + SignedDuration::from_millis(250);
    let mut p = pod(json!({"spec":{"containers":[c("app","app:1")]}}));
    let step = next_step(&p, Some(&target), &options, start).unwrap();
    let Step::StartGrace {
        pod: started,
        until,
        requeue_after,
    } = step
    else {
        panic!("expected the grace period to start, got {step:?}");
    };
    assert_eq!(until, start + SignedDuration::from_secs(30));
    assert_eq!(requeue_after, Duration::from_secs(30));
    assert_eq!(image_of(&started, "app"), Some("app:1"));
    assert_eq!(
        state::read_grace(&started).unwrap().unwrap(),
        target.clone()
    );
    // The stamp keeps its fraction of a second on the wire.
    let annotation = &started.metadata.annotations.as_ref().unwrap()[keys::INPLACE_UPDATE_STATE];
    assert!(
        annotation.contains(r#""updateTimestamp":"2026-07-02T09:00:00.25Z""#),
        "{annotation}"
    );
    let fresh = read_state(&started);
    assert_eq!(fresh.update_timestamp, time(start));
    assert!(fresh.update_images);
    assert_eq!(fresh.last_container_statuses, None);
    p = started;

    let step = next_step(
        &p,
        Some(&target),
        &options,
        start + SignedDuration::from_secs(29),
    )
    .unwrap();
    assert_eq!(step.requeue_after(), Some(Duration::from_secs(1)));
    let step = next_step(
        &p,
        Some(&target),
        &options,
        start + SignedDuration::from_nanos(29_999_999_999),
    )
    .unwrap();
    assert_eq!(step.requeue_after(), Some(Duration::from_millis(1)));
    let step = next_step(
        &p,
        Some(&target),
        &options,
        start + SignedDuration::from_secs(30),
    )
    .unwrap();
    let Step::PatchBatch {
        pod: patched,
        kind: BatchKind::AfterGrace,
        ..
    } = step
    else {
        panic!("expected the batch after grace, got {step:?}");
    };
    assert_eq!(image_of(&patched, "app"), Some("app:2"));
    assert!(!state::has_grace(&patched));
}

#[test]
fn rollback_during_grace_cancels_it() {
    let mut p = grace_pod(30);
    p.metadata
        .labels
        .as_mut()
        .unwrap()
        .insert("controller-revision-hash".into(), "old-revision".into());
    let Step::CancelGrace { pod: after } = refresh_at_t(&p) else {
        panic!("expected the grace to be cancelled");
    };
    assert!(!state::has_grace(&after));
    assert_eq!(image_of(&after, "main"), Some("img-name01"));
}

#[test]
fn grace_without_state_is_an_error() {
    let p = with_annotation(
        pod(json!({"spec":{"containers":[c("main","a")]}})),
        keys::INPLACE_UPDATE_GRACE,
        r#"{"revision":"r"}"#.into(),
    );
    let err = refresh(&p, &EngineOptions::default(), t()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "pod has apps.kruise.io/inplace-update-grace but apps.kruise.io/inplace-update-state not found"
    );
}

#[test]
fn caller_without_revision_label_leaves_labels_alone() {
    let options = EngineOptions {
        revision_label: None,
        ..EngineOptions::default()
    };
    let target = UpdateSpec::images("sidecar-hash-2", images(&[("sidecar", "s:2")]));
    let p = pod(json!({
        "metadata":{"labels":{"controller-revision-hash":"workload-rev"}},
        "spec":{"containers":[c("app","a:1"),c("sidecar","s:1")]}
    }));
    let Step::PatchBatch { pod: after, .. } = next_step(&p, Some(&target), &options, t()).unwrap()
    else {
        panic!("expected a batch");
    };
    assert_eq!(after.metadata.labels, p.metadata.labels);
    // Once the state records the revision, the same target is not started again.
    let again = next_step(&after, Some(&target), &options, t()).unwrap();
    assert!(
        !matches!(again, Step::PatchBatch { .. } | Step::StartGrace { .. }),
        "{again:?}"
    );
}

#[test]
fn unknown_container_is_never_half_applied() {
    let p = pod(json!({"spec":{"containers":[c("app","a:1")]}}));
    let target = image_spec(&[("app", "a:2"), ("ghost", "g:2")]);
    for grace_seconds in [0, 10] {
        let target = UpdateSpec {
            grace_seconds,
            ..target.clone()
        };
        let step = next_step(&p, Some(&target), &EngineOptions::default(), t()).unwrap();
        assert!(matches!(step, Step::NeedsRecreate { .. }), "{step:?}");
        assert_eq!(step.write(), None);
    }
}

#[test]
fn new_update_discards_the_old_record() {
    let options = EngineOptions::default();
    let mut p = two_batch_pod("c1-img1-ID");
    let target = UpdateSpec {
        revision: "third-revision".into(),
        ..image_spec(&[("c1", "c1-img3"), ("c2", "c2-img3")])
    };
    // The gate is already False: no status write, straight to the first batch.
    let Step::PatchBatch { pod: after, .. } = next_step(&p, Some(&target), &options, t()).unwrap()
    else {
        panic!("expected a batch");
    };
    p = after;
    let state = read_state(&p);
    assert_eq!(state.revision, "third-revision");
    assert_eq!(state.container_batches_record.len(), 1);
    assert_eq!(
        state.last_container_statuses,
        last(&[("c1", "c1-img1-ID"), ("c2", "c2-img1-ID")])
    );
}

// ---------------------------------------------------------------------------------------------
// Properties

mod properties {
    use super::*;
    use kruise_webhook::inplace::NoRuntimeHashes;
    use kruise_webhook::inplace::batch::patch_batch;
    use kruise_webhook::inplace::completion::batch_completed;
    use proptest::prelude::*;

    /// Per container: its priority (None = no barrier) and whether the update touches it.
    fn containers() -> impl Strategy<Value = Vec<(Option<i64>, bool)>> {
        prop::collection::vec((prop::option::of(-3i64..=3), any::<bool>()), 1..7)
    }

    fn build(containers: &[(Option<i64>, bool)]) -> (Pod, UpdateSpec) {
        let list: Vec<Value> = containers
            .iter()
            .enumerate()
            .map(|(i, (priority, _))| {
                let env = priority.map(|p| json!([{"name":"KRUISE_CONTAINER_BARRIER","valueFrom":{"configMapKeyRef":{"name":"p-barrier","key":format!("p_{p}")}}}]));
                json!({"name": format!("c{i}"), "image": format!("c{i}:1"), "env": env})
            })
            .collect();
        let statuses: Vec<Value> = (0..containers.len())
            .map(|i| json!({"name":format!("c{i}"),"image":format!("c{i}:1"),"imageID":format!("c{i}:1-ID"),"ready":true,"restartCount":0}))
            .collect();
        let p = pod(json!({
            "metadata":{"labels":{"controller-revision-hash":"old-revision"}},
            "spec":{"readinessGates":gate(),"containers":list},
            "status":{"conditions":[{"type":"InPlaceUpdateReady","status":"True"}],"containerStatuses":statuses}
        }));
        let touched = containers
            .iter()
            .enumerate()
            .filter(|(_, (_, t))| *t)
            .map(|(i, _)| (format!("c{i}"), format!("c{i}:2")))
            .collect();
        (p, UpdateSpec::images("new-revision", touched))
    }

    /// One update with a grace period, started at `start` (the gate turned False at `gate_at`,
    /// no later), refreshed after each of `gaps`: the time of its first batch, if it came, after
    /// checking every wait on the way. With `whole_second_stamp`, the state carries the start cut
    /// to the second, as OpenKruise writes it.
    fn first_batch_at(
        gate_at: Timestamp,
        start: Timestamp,
        grace: i32,
        gaps: &[SignedDuration],
        whole_second_stamp: bool,
    ) -> Result<Option<Timestamp>, TestCaseError> {
        let options = EngineOptions::default();
        let target = UpdateSpec {
            grace_seconds: grace,
            ..image_spec(&[("app", "app:2")])
        };
        let asked = gate_at + SignedDuration::from_secs(i64::from(grace));
        let p = pod(json!({"spec":{"containers":[c("app","app:1")]}}));
        let Step::StartGrace { pod: mut p, .. } =
            next_step(&p, Some(&target), &options, start).unwrap()
        else {
            return Err(TestCaseError::fail("the grace period did not start"));
        };
        if whole_second_stamp {
            let mut state = read_state(&p);
            state.update_timestamp = time(Timestamp::from_second(start.as_second()).unwrap());
            p = with_state(p, &state);
        }
        let mut now = start;
        for gap in gaps {
            now += *gap;
            match next_step(&p, Some(&target), &options, now).unwrap() {
                Step::PatchBatch { .. } => return Ok(Some(now)),
                Step::WaitGrace {
                    until,
                    requeue_after,
                } => {
                    prop_assert!(until >= asked, "waits until {until}, asked {asked}");
                    prop_assert!(now + requeue_after >= until);
                }
                other => return Err(TestCaseError::fail(format!("{other:?}"))),
            }
        }
        Ok(None)
    }

    proptest! {
        /// The grace period is never shorter than asked: whatever instant (to the nanosecond) the
        /// gate turned False and the update started, however the refreshes fall, the first batch
        /// is patched only once the whole grace has passed since the gate turned False — with the
        /// state read back from its annotation text each time, as from the apiserver, and also
        /// when its stamp is cut to the second, as OpenKruise writes it. And not much later: at
        /// the start plus the grace (plus one second for a whole-second stamp) it is patched.
        #[test]
        fn the_grace_is_never_shorter_than_asked(
            gate_nanos in 0i64..100_000_000_000,
            start_after_nanos in 0i64..2_000_000_000,
            grace in 1i32..=30,
            gaps in prop::collection::vec(0i64..3_000_000_000, 1..60),
            whole_second_stamp in any::<bool>(),
        ) {
            let gate_at = t() + SignedDuration::from_nanos(gate_nanos);
            let start = gate_at + SignedDuration::from_nanos(start_after_nanos);
            let gaps: Vec<SignedDuration> =
                gaps.into_iter().map(SignedDuration::from_nanos).collect();
            let asked = gate_at + SignedDuration::from_secs(i64::from(grace));
            if let Some(at) = first_batch_at(gate_at, start, grace, &gaps, whole_second_stamp)? {
                prop_assert!(at >= asked, "first batch at {at}, gate False at {gate_at}, grace {grace} s");
            }
            let latest = if whole_second_stamp {
                Timestamp::from_second(start.as_second() + 1).unwrap()
            } else {
                start
            } + SignedDuration::from_secs(i64::from(grace));
            let late = [latest.duration_since(start)];
            prop_assert_eq!(
                first_batch_at(gate_at, start, grace, &late, whole_second_stamp)?,
                Some(latest)
            );
        }

        /// Batches cover every changed container exactly once; unprioritised ones go first; each
        /// batch's prioritised containers share one level; levels strictly decrease.
        #[test]
        fn batches_partition_changes_in_priority_order(containers in containers()) {
            let (mut p, spec) = build(&containers);
            let mut state = InPlaceUpdateState::default();
            let mut next = spec.clone();
            let mut batches: Vec<Vec<String>> = Vec::new();
            loop {
                let (after, names) = patch_batch(&p, &next, state, t()).unwrap();
                p = after;
                state = read_state(&p);
                batches.push(names);
                if !state.has_next_batch() {
                    break;
                }
                prop_assert!(batches.len() <= containers.len());
                next = UpdateSpec { container_images: state.next_container_images.clone(), ..Default::default() };
            }
            let priority = |name: &str| -> Option<i64> {
                let i: usize = name[1..].parse().unwrap();
                containers[i].0
            };
            let mut all: Vec<String> = batches.iter().flatten().cloned().collect();
            all.sort();
            let mut expected: Vec<String> = spec.container_images.keys().cloned().collect();
            expected.sort();
            prop_assert_eq!(&all, &expected);
            let mut previous_level: Option<i64> = None;
            for (k, names) in batches.iter().enumerate() {
                let levels: std::collections::BTreeSet<i64> = names.iter().filter_map(|n| priority(n)).collect();
                prop_assert!(levels.len() <= 1, "one level per batch: {:?}", batches);
                if k > 0 {
                    prop_assert!(names.iter().all(|n| priority(n).is_some()), "unprioritised only first: {:?}", batches);
                }
                if let (Some(prev), Some(level)) = (previous_level, levels.iter().next()) {
                    prop_assert!(*level < prev, "levels decrease: {:?}", batches);
                }
                if let Some(level) = levels.iter().next() {
                    previous_level = Some(*level);
                }
            }
            for (name, image) in &spec.container_images {
                prop_assert_eq!(image_of(&p, name), Some(image.as_str()));
            }
            prop_assert_eq!(state.container_batches_record.len(), batches.len());
        }

        /// Completion is declared exactly when every recorded container reports a new imageID or
        /// the spec image itself.
        #[test]
        fn completion_never_with_an_old_image_id(
            cases in prop::collection::vec((any::<bool>(), any::<bool>(), any::<bool>()), 1..6)
        ) {
            // Per container: has a status, imageID changed, status shows the spec image.
            let spec: Vec<Value> = (0..cases.len()).map(|i| c(&format!("c{i}"), &format!("c{i}:2"))).collect();
            let statuses: Vec<Value> = cases.iter().enumerate().filter(|(_, (has, _, _))| *has)
                .map(|(i, (_, changed, shows))| json!({
                    "name": format!("c{i}"),
                    "image": if *shows { format!("c{i}:2") } else { format!("c{i}:1") },
                    "imageID": if *changed { format!("new-{i}") } else { format!("old-{i}") },
                    "ready": true, "restartCount": 0
                }))
                .collect();
            let p = pod(json!({"spec":{"containers":spec},"status":{"containerStatuses":statuses}}));
            let recorded: Vec<(String, String)> = (0..cases.len()).map(|i| (format!("c{i}"), format!("old-{i}"))).collect();
            let state = InPlaceUpdateState {
                last_container_statuses: Some(recorded.into_iter().map(|(n, id)| (n, LastContainerStatus { image_id: id })).collect()),
                ..Default::default()
            };
            let expected = cases.iter().all(|(has, changed, shows)| *has && (*changed || *shows));
            prop_assert_eq!(batch_completed(&p, &state, &NoRuntimeHashes).is_ok(), expected);
        }

        /// Driving the engine against a kubelet that applies images and readiness in random order:
        /// the gate turns True only once every changed container runs its new image, and the
        /// update always finishes.
        #[test]
        fn engine_finishes_and_gate_true_only_at_the_end(
            containers in containers(),
            kubelet in prop::collection::vec((any::<bool>(), any::<bool>()), 64),
        ) {
            let (mut p, spec) = build(&containers);
            let options = EngineOptions::default();
            let mut now = t();
            let mut finished = false;
            for (pulls, readies) in kubelet.iter().copied().chain(std::iter::repeat((true, true))).take(200) {
                now += SignedDuration::from_secs(1);
                let step = next_step(&p, Some(&spec), &options, now).unwrap();
                if let Step::Complete { pod } = &step {
                    for (name, image) in &spec.container_images {
                        let status = pod.status.as_ref().unwrap().container_statuses.as_ref().unwrap()
                            .iter().find(|s| s.name == *name).unwrap();
                        prop_assert_eq!(&status.image, image);
                        prop_assert_ne!(status.image_id.clone(), format!("{name}:1-ID"));
                    }
                }
                if step == Step::Idle {
                    finished = true;
                    break;
                }
                let unexpected = matches!(step, Step::NeedsRecreate { .. } | Step::CancelGrace { .. });
                prop_assert!(!unexpected, "unexpected step {:?}", step);
                match step.write() {
                    Some(Write::Pod(next) | Write::Status(next)) => p = next.clone(),
                    None => {
                        if pulls {
                            kubelet_runs_spec(&mut p, readies);
                        } else if readies {
                            kubelet_marks_ready(&mut p);
                        }
                    }
                }
            }
            prop_assert!(finished);
            prop_assert_eq!(condition(&p, keys::INPLACE_UPDATE_READY).map(|c| c.status.as_str()), Some("True"));
            for (name, image) in &spec.container_images {
                prop_assert_eq!(image_of(&p, name), Some(image.as_str()));
            }
        }
    }

    /// Plays kubelet's readiness probe: containers already running their spec image become ready.
    fn kubelet_marks_ready(pod: &mut Pod) {
        let spec: Vec<(String, String)> = pod
            .spec
            .as_ref()
            .unwrap()
            .containers
            .iter()
            .map(|c| (c.name.clone(), c.image.clone().unwrap_or_default()))
            .collect();
        for cs in pod
            .status
            .as_mut()
            .unwrap()
            .container_statuses
            .as_mut()
            .unwrap()
        {
            if spec.iter().any(|(n, i)| *n == cs.name && *i == cs.image) {
                cs.ready = true;
            }
        }
    }
}

/// §1.2's example annotation, produced by starting a two-priority update with no grace period.
#[test]
fn first_batch_state_matches_the_spec_example_byte_for_byte() {
    let barrier = |p: i64| json!([{"name":"KRUISE_CONTAINER_BARRIER","valueFrom":{"configMapKeyRef":{"name":"sample-barrier","key":format!("p_{p}")}}}]);
    let p = pod(json!({
        "metadata":{"name":"sample"},
        "spec":{"containers":[
            {"name":"main","image":"nginx:1.25","env":barrier(1)},
            {"name":"sidecar","image":"busybox:1.35","env":barrier(0)}
        ]},
        "status":{"containerStatuses":[
            {"name":"main","image":"nginx:1.25","imageID":"docker-pullable://nginx@sha256:aaa","ready":true,"restartCount":0},
            {"name":"sidecar","image":"busybox:1.35","imageID":"docker-pullable://busybox@sha256:bbb","ready":true,"restartCount":0}
        ]}
    }));
    let target = UpdateSpec::images(
        "sample-7d9c5b8f6",
        images(&[("main", "nginx:1.26"), ("sidecar", "busybox:1.36")]),
    );
    let now: Timestamp = "2024-05-01T10:00:00Z".parse().unwrap();
    let step = next_step(&p, Some(&target), &EngineOptions::default(), now).unwrap();
    let Some(Write::Pod(after)) = step.write() else {
        panic!("expected a pod write, got {step:?}");
    };
    assert_eq!(
        after.metadata.annotations.as_ref().unwrap()[keys::INPLACE_UPDATE_STATE],
        r#"{"revision":"sample-7d9c5b8f6","updateTimestamp":"2024-05-01T10:00:00Z","lastContainerStatuses":{"main":{"imageID":"docker-pullable://nginx@sha256:aaa"}},"updateImages":true,"nextContainerImages":{"sidecar":"busybox:1.36"},"preCheckBeforeNext":{"containersRequiredReady":["main"]},"containerBatchesRecord":[{"timestamp":"2024-05-01T10:00:00Z","containers":["main"]}]}"#
    );
    assert_eq!(image_of(after, "main"), Some("nginx:1.26"));
    assert_eq!(image_of(after, "sidecar"), Some("busybox:1.35"));
}
