use super::*;
use k8s_openapi::api::core::v1::PodSpec;
use std::collections::BTreeMap;

fn container(name: &str, priority: Option<&str>) -> Container {
    Container {
        name: name.into(),
        image: Some("img".into()),
        env: priority.map(|p| {
            vec![EnvVar {
                name: keys::ENV_CONTAINER_PRIORITY.into(),
                value: Some(p.into()),
                value_from: None,
            }]
        }),
        ..Default::default()
    }
}

fn pod(containers: Vec<Container>) -> Pod {
    Pod {
        metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
            name: Some("web-0".into()),
            ..Default::default()
        },
        spec: Some(PodSpec {
            containers,
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn barrier_key(container: &Container) -> Option<(String, String)> {
    container.env.iter().flatten().rev().find_map(|e| {
        let r = e.value_from.as_ref()?.config_map_key_ref.as_ref()?;
        (e.name == keys::ENV_CONTAINER_BARRIER).then(|| (r.name.clone(), r.key.clone()))
    })
}

#[test]
fn env_priorities_get_barriers() {
    let mut p = pod(vec![
        container("a", Some("10")),
        container("b", Some("-2")),
        container("c", None),
    ]);
    assert_eq!(apply_launch_priority(&mut p, "xxxxx"), Ok(true));
    let keys: Vec<_> = p
        .spec
        .as_ref()
        .unwrap()
        .containers
        .iter()
        .map(barrier_key)
        .collect();
    assert_eq!(
        keys,
        vec![
            Some(("web-0-barrier".into(), "p_10".into())),
            Some(("web-0-barrier".into(), "p_-2".into())),
            Some(("web-0-barrier".into(), "p_0".into())),
        ]
    );
    // Reinvocation adds nothing.
    let again = p.clone();
    assert_eq!(apply_launch_priority(&mut p, "xxxxx"), Ok(false));
    assert_eq!(p, again);
}

#[test]
fn ordered_annotation_overrides_env() {
    let mut p = pod(vec![
        container("a", Some("-5")),
        container("b", Some("100")),
        container("c", None),
    ]);
    p.metadata.annotations = Some(BTreeMap::from([(
        keys::CONTAINER_LAUNCH_PRIORITY.to_string(),
        "Ordered".to_string(),
    )]));
    assert_eq!(container_priorities(&p), Ok(vec![0, -1, -2]));
    // Case matters.
    p.metadata
        .annotations
        .as_mut()
        .unwrap()
        .insert(keys::CONTAINER_LAUNCH_PRIORITY.into(), "ordered".into());
    assert_eq!(container_priorities(&p), Ok(vec![-5, 100, 0]));
}

#[test]
fn skips_single_container_and_equal_priorities() {
    let mut single = pod(vec![container("a", Some("5"))]);
    assert_eq!(apply_launch_priority(&mut single, "xxxxx"), Ok(false));
    let mut equal = pod(vec![container("a", Some("3")), container("b", Some("3"))]);
    assert_eq!(apply_launch_priority(&mut equal, "xxxxx"), Ok(false));
    let mut none = pod(vec![container("a", None), container("b", None)]);
    assert_eq!(apply_launch_priority(&mut none, "xxxxx"), Ok(false));
}

#[test]
fn generate_name_gets_a_name() {
    let mut p = pod(vec![container("a", Some("1")), container("b", None)]);
    p.metadata.name = None;
    p.metadata.generate_name = Some(format!("{}-", "x".repeat(70)));
    assert_eq!(apply_launch_priority(&mut p, "bcd42"), Ok(true));
    let name = p.metadata.name.clone().unwrap();
    assert_eq!(name, format!("{}bcd42", "x".repeat(58)));
    assert_eq!(
        barrier_key(&p.spec.as_ref().unwrap().containers[1])
            .unwrap()
            .0,
        format!("{name}-barrier")
    );
}

#[test]
fn bad_priority_names_the_container() {
    for (value, reason) in [
        ("abc", "invalid syntax"),
        ("", "invalid syntax"),
        (" 1", "invalid syntax"),
        ("1.5", "invalid syntax"),
        ("99999999999999999999", "value out of range"),
    ] {
        let mut p = pod(vec![
            container("app", None),
            container("sidecar", Some(value)),
        ]);
        let err = apply_launch_priority(&mut p, "xxxxx").unwrap_err();
        assert_eq!(err.container, "sidecar");
        assert_eq!(err.index, 1);
        let message = err.to_string();
        assert!(message.contains("\"sidecar\""), "{message}");
        assert!(message.contains(reason), "{message}");
        assert!(
            message.starts_with("spec.containers[1].env[KRUISE_CONTAINER_PRIORITY]"),
            "{message}"
        );
    }
}

#[test]
fn barrier_priority_reads_the_barrier_key_only() {
    let mut p = pod(vec![
        container("a", Some("10")),
        container("b", Some("-2")),
        container("c", None),
    ]);
    let before: Vec<_> = p
        .spec
        .as_ref()
        .unwrap()
        .containers
        .iter()
        .map(barrier_priority)
        .collect();
    assert_eq!(before, vec![None, None, None]);
    apply_launch_priority(&mut p, "xxxxx").unwrap();
    let after: Vec<_> = p
        .spec
        .as_ref()
        .unwrap()
        .containers
        .iter()
        .map(barrier_priority)
        .collect();
    assert_eq!(after, vec![Some(10), Some(-2), Some(0)]);
}

#[test]
fn sign_and_range() {
    assert_eq!(parse_go_int("+7"), Ok(7));
    assert_eq!(parse_go_int("-9223372036854775808"), Ok(i64::MIN));
    assert!(parse_go_int("+-1").is_err());
    assert!(parse_go_int("-").is_err());
}

#[test]
fn barrier_priority_reads_the_injected_key() {
    let mut p = pod(vec![
        container("a", Some("10")),
        container("b", Some("-2")),
        container("c", None),
    ]);
    assert_eq!(apply_launch_priority(&mut p, "xxxxx"), Ok(true));
    let read: Vec<_> = p
        .spec
        .as_ref()
        .unwrap()
        .containers
        .iter()
        .map(barrier_priority)
        .collect();
    assert_eq!(read, vec![Some(10), Some(-2), Some(0)]);
    // The priority env alone is not a barrier.
    assert_eq!(barrier_priority(&container("x", Some("7"))), None);
    // A malformed key still marks the container as ordered.
    let mut odd = container("y", None);
    odd.env = Some(vec![barrier_env("y-barrier", 3)]);
    odd.env.as_mut().unwrap()[0]
        .value_from
        .as_mut()
        .unwrap()
        .config_map_key_ref
        .as_mut()
        .unwrap()
        .key = "p".into();
    assert_eq!(barrier_priority(&odd), Some(0));
}

#[test]
fn suffix_alphabet() {
    let s = random_name_suffix();
    assert_eq!(s.len(), NAME_SUFFIX_LEN);
    assert!(s.bytes().all(|b| NAME_SUFFIX_ALPHABET.contains(&b)));
}
