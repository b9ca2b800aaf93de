use super::*;
use jiff::Timestamp;

fn time(text: &str) -> Time {
    Time(text.parse::<Timestamp>().expect("test timestamp"))
}

/// The spec's example: HEAD state after the first batch of a two-priority update.
const SPEC_STATE: &str = r#"{"revision":"sample-7d9c5b8f6","updateTimestamp":"2024-05-01T10:00:00Z","lastContainerStatuses":{"main":{"imageID":"docker-pullable://nginx@sha256:aaa"}},"updateImages":true,"nextContainerImages":{"sidecar":"busybox:1.36"},"preCheckBeforeNext":{"containersRequiredReady":["main"]},"containerBatchesRecord":[{"timestamp":"2024-05-01T10:00:00Z","containers":["main"]}]}"#;

#[test]
fn state_round_trips_byte_for_byte() {
    let state: InPlaceUpdateState = serde_json::from_str(SPEC_STATE).unwrap();
    assert_eq!(state.revision, "sample-7d9c5b8f6");
    assert_eq!(state.update_timestamp, Some(time("2024-05-01T10:00:00Z")));
    assert_eq!(
        state.last_container_statuses.as_ref().unwrap()["main"].image_id,
        "docker-pullable://nginx@sha256:aaa"
    );
    assert!(state.update_images);
    assert_eq!(state.next_container_images["sidecar"], "busybox:1.36");
    assert_eq!(
        state
            .pre_check_before_next
            .as_ref()
            .unwrap()
            .containers_required_ready,
        vec!["main".to_string()]
    );
    assert_eq!(state.container_batches_record.len(), 1);
    assert!(state.has_next_batch());
    assert_eq!(serde_json::to_string(&state).unwrap(), SPEC_STATE);
}

#[test]
fn fresh_state_writes_null_statuses_and_omits_empty_fields() {
    let state = InPlaceUpdateState {
        revision: "r1".into(),
        update_timestamp: Some(time("2024-05-01T10:00:00Z")),
        ..Default::default()
    };
    assert_eq!(
        serde_json::to_string(&state).unwrap(),
        r#"{"revision":"r1","updateTimestamp":"2024-05-01T10:00:00Z","lastContainerStatuses":null}"#
    );
    let zero = InPlaceUpdateState::default();
    assert_eq!(
        serde_json::to_string(&zero).unwrap(),
        r#"{"revision":"","updateTimestamp":null,"lastContainerStatuses":null}"#
    );
}

#[test]
fn go_written_state_with_nulls_and_creation_timestamp_is_read() {
    let raw = r#"{"revision":"r","updateTimestamp":"2024-05-01T10:00:00.5+02:00","lastContainerStatuses":{},"updateEnvFromMetadata":true,"nextContainerImages":null,"nextContainerRefMetadata":{"c2":{"creationTimestamp":null,"labels":{"k":"v"}}},"containerBatchesRecord":[{"timestamp":"2024-05-01T10:00:00Z","containers":null}]}"#;
    let state: InPlaceUpdateState = serde_json::from_str(raw).unwrap();
    assert_eq!(
        state.update_timestamp.as_ref().map(|t| t.0.as_second()),
        Some(time("2024-05-01T08:00:00Z").0.as_second())
    );
    assert_eq!(state.last_container_statuses, Some(BTreeMap::new()));
    assert!(state.next_container_images.is_empty());
    assert_eq!(
        state.next_container_ref_metadata["c2"]
            .labels
            .as_ref()
            .unwrap()["k"],
        "v"
    );
    assert!(state.container_batches_record[0].containers.is_empty());
    assert!(state.has_next_batch());
    // Written back: UTC, the stamp with its fraction of a second (a batch's time in whole
    // seconds, as `metav1.Time`), an empty non-nil map stays `{}`.
    let written = serde_json::to_string(&state).unwrap();
    assert!(
        written.starts_with(r#"{"revision":"r","updateTimestamp":"2024-05-01T08:00:00.5Z","lastContainerStatuses":{},"updateEnvFromMetadata":true,"nextContainerRefMetadata":{"c2":{"labels":{"k":"v"}}}"#),
        "{written}"
    );
}

#[test]
fn grace_spec_round_trips_with_base64_patch() {
    let raw =
        r#"{"revision":"new-revision","containerImages":{"main":"img-name02"},"graceSeconds":30}"#;
    let spec: UpdateSpec = serde_json::from_str(raw).unwrap();
    assert_eq!(spec.grace_seconds, 30);
    assert_eq!(spec.container_images["main"], "img-name02");
    assert_eq!(serde_json::to_string(&spec).unwrap(), raw);

    let with_patch = UpdateSpec {
        revision: "r".into(),
        meta_data_patch: br#"{"metadata":{"labels":{"k1":"v1"}}}"#.to_vec(),
        update_env_from_metadata: true,
        ..Default::default()
    };
    let json = serde_json::to_string(&with_patch).unwrap();
    assert_eq!(
        json,
        r#"{"revision":"r","metaDataPatch":"eyJtZXRhZGF0YSI6eyJsYWJlbHMiOnsiazEiOiJ2MSJ9fX0=","updateEnvFromMetadata":true}"#
    );
    let back: UpdateSpec = serde_json::from_str(&json).unwrap();
    assert_eq!(back, with_patch);
}

#[test]
fn go_written_grace_spec_with_ref_metadata_is_read() {
    let raw = r#"{"revision":"r2","containerImages":{"c1":"foo2"},"containerRefMetadata":{"c1":{"creationTimestamp":null,"labels":{"k":"v2"}}},"metaDataPatch":"eyJtZXRhZGF0YSI6eyJsYWJlbHMiOnsiazEiOiJ2MSJ9fX0=","updateEnvFromMetadata":true,"graceSeconds":5}"#;
    let spec: UpdateSpec = serde_json::from_str(raw).unwrap();
    assert_eq!(
        spec.container_ref_metadata["c1"].labels,
        Some(BTreeMap::from([("k".to_string(), "v2".to_string())]))
    );
    assert_eq!(
        spec.meta_data_patch,
        br#"{"metadata":{"labels":{"k1":"v1"}}}"#.to_vec()
    );
    assert!(spec.touches("c1"));
    assert!(!spec.touches("c2"));
    // Written back the same, minus Go's spurious creationTimestamp.
    assert_eq!(
        serde_json::to_string(&spec).unwrap(),
        raw.replace(r#""creationTimestamp":null,"#, "")
    );
}

#[test]
fn legacy_keys_are_read_and_replaced() {
    let mut pod = Pod::default();
    assert!(read_state(&pod).is_none());
    pod.metadata.annotations = Some(BTreeMap::from([
        (
            keys::INPLACE_UPDATE_STATE_LEGACY.to_string(),
            r#"{"revision":"old"}"#.to_string(),
        ),
        (keys::INPLACE_UPDATE_GRACE.to_string(), String::new()),
        (
            keys::INPLACE_UPDATE_GRACE_LEGACY.to_string(),
            r#"{"revision":"g"}"#.to_string(),
        ),
    ]));
    assert_eq!(read_state(&pod).unwrap().unwrap().revision, "old");
    // An empty current key falls through to the legacy one.
    assert_eq!(read_grace(&pod).unwrap().unwrap().revision, "g");
    assert!(has_grace(&pod));

    let state = InPlaceUpdateState {
        revision: "new".into(),
        ..Default::default()
    };
    write_state(&mut pod, &state).unwrap();
    remove_grace(&mut pod);
    let annotations = pod.metadata.annotations.as_ref().unwrap();
    assert!(!annotations.contains_key(keys::INPLACE_UPDATE_STATE_LEGACY));
    assert!(!has_grace(&pod));
    assert_eq!(read_state(&pod).unwrap().unwrap().revision, "new");
}

#[test]
fn unreadable_state_names_the_key() {
    let mut pod = Pod::default();
    pod.metadata.annotations = Some(BTreeMap::from([(
        keys::INPLACE_UPDATE_STATE.to_string(),
        "{not json".to_string(),
    )]));
    let err = read_state(&pod).unwrap().unwrap_err();
    assert!(
        err.to_string().contains(keys::INPLACE_UPDATE_STATE),
        "{err}"
    );
}

/// The start of an update keeps its fraction of a second through the annotation (the grace
/// period counts from it), in the RFC 3339 form Go's `time.Parse` reads into a `metav1.Time`.
#[test]
fn update_timestamp_keeps_its_fraction_of_a_second() {
    for (stamp, text) in [
        ("2024-05-01T10:00:00.25Z", "2024-05-01T10:00:00.25Z"),
        (
            "2024-05-01T10:00:00.000000001Z",
            "2024-05-01T10:00:00.000000001Z",
        ),
        (
            "2024-05-01T12:00:00.123456+02:00",
            "2024-05-01T10:00:00.123456Z",
        ),
    ] {
        let state = InPlaceUpdateState {
            update_timestamp: Some(time(stamp)),
            ..Default::default()
        };
        let written = serde_json::to_string(&state).unwrap();
        assert!(
            written.contains(&format!(r#""updateTimestamp":"{text}""#)),
            "{written}"
        );
        let read: InPlaceUpdateState = serde_json::from_str(&written).unwrap();
        assert_eq!(read, state);
    }
}

/// A grace period whose gate write was answered after the round's clock starts again then; a
/// stamp already later, a pod without a grace period or without a state are left alone.
#[test]
fn restamping_moves_the_grace_start_forward_only() {
    let planned = time("2024-05-01T10:00:00.25Z");
    let answered: jiff::Timestamp = "2024-05-01T10:00:00.4Z".parse().unwrap();
    let mut pod = Pod::default();
    write_state(
        &mut pod,
        &InPlaceUpdateState {
            revision: "r".into(),
            update_timestamp: Some(planned.clone()),
            ..Default::default()
        },
    )
    .unwrap();
    let without_grace = pod.clone();
    write_grace(&mut pod, &UpdateSpec::images("r", BTreeMap::new())).unwrap();

    let mut restamped = pod.clone();
    assert!(restamp_grace_start(&mut restamped, answered).unwrap());
    let state = read_state(&restamped).unwrap().unwrap();
    assert_eq!(state.update_timestamp, Some(Time(answered)));
    assert_eq!(state.revision, "r");
    assert!(has_grace(&restamped));

    let mut again = restamped.clone();
    assert!(!restamp_grace_start(&mut again, planned.0).unwrap());
    assert_eq!(again, restamped);
    let mut plain = without_grace.clone();
    assert!(!restamp_grace_start(&mut plain, answered).unwrap());
    assert_eq!(plain, without_grace);
    let mut empty = Pod::default();
    assert!(!restamp_grace_start(&mut empty, answered).unwrap());
}
