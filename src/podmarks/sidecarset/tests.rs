use super::*;
use std::borrow::Cow;

use k8s_openapi::api::core::v1::Pod;
use serde_json::Value;

use crate::api::keys;
use crate::podmarks::PodSummary;
use proptest::prelude::*;

/// What a hash annotation value holds, as the injection's full parse reads it.
fn parsed_hash(value: &str, sidecarset: &str) -> Option<String> {
    parse_upgrade_specs(value)
        .ok()
        .and_then(|mut specs| specs.remove(sidecarset))
        .map(|spec| spec.hash)
}

/// SidecarSet names as annotation keys: two plain, one spelled with an escape.
fn sidecarset_name() -> impl Strategy<Value = String> + Clone {
    prop_oneof![
        Just("mesh".to_string()),
        Just("log".to_string()),
        Just("me\\u0073h".to_string()),
    ]
}

/// Annotation values near the accepted shapes: object and legacy entries, wrong types,
/// escapes, duplicates, and junk.
fn hash_annotation() -> impl Strategy<Value = String> {
    let name = sidecarset_name();
    let string = prop_oneof![
        Just("\"abc\"".to_string()),
        Just("\"a\\\"b\"".to_string()),
        Just("\"\"".to_string())
    ];
    let field_value = prop_oneof![
        string.clone(),
        Just("null".to_string()),
        Just("7".to_string()),
        Just("[\"x\"]".to_string()),
        Just("{}".to_string()),
    ];
    let field = prop_oneof![
        Just("hash"),
        Just("sidecarSetName"),
        Just("sidecarList"),
        Just("updateTimestamp"),
        Just("controllerRevision"),
        Just("other"),
    ];
    let spec =
        prop::collection::vec((field, field_value), 0..4).prop_map(|fields| json_object(&fields));
    let entry_value = prop_oneof![spec, string, Just("null".to_string())];
    let entries =
        prop::collection::vec((name, entry_value), 0..4).prop_map(|entries| json_object(&entries));
    prop_oneof![
        8 => entries,
        1 => Just("[]".to_string()),
        1 => Just("not json".to_string()),
        1 => Just("null".to_string()),
    ]
}

proptest! {
    #[test]
    fn in_place_hash_reading_agrees_with_the_full_parse(value in hash_annotation()) {
        for sidecarset in ["mesh", "log", "absent"] {
            prop_assert_eq!(
                recorded_upgrade_hash(&value, sidecarset).map(Cow::into_owned),
                parsed_hash(&value, sidecarset),
                "{}", value
            );
        }
    }
}

/// The in-place state as a full parse finds its entry: the whole annotation into a map.
fn state_by_full_parse(value: &str, sidecarset: &str) -> SidecarState {
    let Ok(states) = serde_json::from_str::<BTreeMap<String, Value>>(value) else {
        return SidecarState::Unreadable;
    };
    SidecarState::from_entry(states.get(sidecarset))
}

/// `{"<key>":<value>,…}` from already encoded keys and values.
fn json_object(entries: &[(impl std::fmt::Display, String)]) -> String {
    let body: Vec<String> = entries
        .iter()
        .map(|(k, v)| format!("\"{k}\":{v}"))
        .collect();
    format!("{{{}}}", body.join(","))
}

fn pod_with_state(value: &str) -> Pod {
    let mut pod = Pod::default();
    pod.metadata.annotations = Some(
        [(
            keys::SIDECARSET_INPLACE_UPDATE_STATE.to_string(),
            value.to_string(),
        )]
        .into(),
    );
    pod
}

fn state_annotation() -> impl Strategy<Value = String> {
    let name = sidecarset_name();
    let status = prop_oneof![
        Just(r#"{"imageID":"docker://a"}"#.to_string()),
        Just(r#"{"imageID":7}"#.to_string()),
        Just("{}".to_string()),
        Just("null".to_string()),
    ];
    let entry = prop_oneof![
        prop::collection::vec((name.clone(), status), 0..3).prop_map(|statuses| {
            format!(r#"{{"lastContainerStatuses":{}}}"#, json_object(&statuses))
        }),
        Just("null".to_string()),
        Just("[1]".to_string()),
        Just("\"text\"".to_string()),
    ];
    let object =
        prop::collection::vec((name, entry), 0..4).prop_map(|entries| json_object(&entries));
    prop_oneof![
        8 => object.clone(),
        1 => object.prop_map(|o| format!("{o} trailing")),
        1 => Just("[]".to_string()),
        1 => Just("not json".to_string()),
    ]
}

proptest! {
    #[test]
    fn in_place_state_reading_agrees_with_the_full_parse(value in state_annotation()) {
        let pod = pod_with_state(&value);
        let summary = PodSummary::of(&pod);
        for sidecarset in ["mesh", "log", "absent"] {
            let full_parse = state_by_full_parse(&value, sidecarset);
            prop_assert_eq!(
                &SidecarState::read(Some(&value), sidecarset),
                &full_parse,
                "{}", value
            );
            prop_assert_eq!(pod.sidecar_state(sidecarset).into_owned(), full_parse.clone());
            prop_assert_eq!(summary.sidecar_state(sidecarset).into_owned(), full_parse);
        }
    }
}

#[test]
fn hash_reading_handles_both_formats_and_escapes() {
    let current = r#"{"mesh":{"hash":"h1","sidecarSetName":"mesh","sidecarList":["proxy"]},"log":{"hash":"h\u0032"}}"#;
    assert_eq!(
        recorded_upgrade_hash(current, "mesh").as_deref(),
        Some("h1")
    );
    assert_eq!(recorded_upgrade_hash(current, "log").as_deref(), Some("h2"));
    assert_eq!(
        recorded_upgrade_hash(r#"{"mesh":"legacy"}"#, "mesh").as_deref(),
        Some("legacy")
    );
    assert_eq!(
        recorded_upgrade_hash(r#"{"mesh":{"hash":7}}"#, "mesh"),
        None
    );
    assert_eq!(recorded_upgrade_hash("garbage", "mesh"), None);
}

#[test]
fn digest_comparison_normalises_repositories() {
    assert!(digest_images_equal(
        "nginx@sha256:abc",
        "docker-pullable://docker.io/library/nginx@sha256:abc"
    ));
    assert!(digest_images_equal(
        "reg.io:5000/team/app:v1@sha256:abc",
        "reg.io:5000/team/app@sha256:abc"
    ));
    assert!(!digest_images_equal(
        "nginx@sha256:abc",
        "docker.io/library/nginx@sha256:abd"
    ));
    assert!(!digest_images_equal(
        "team/app@sha256:abc",
        "app@sha256:abc"
    ));
    assert!(!is_digest_reference("nginx:1.25"));
}

mod writing;
