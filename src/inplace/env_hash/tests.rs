use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, EnvVar, EnvVarSource, ObjectFieldSelector, Pod};
use proptest::prelude::*;

use super::*;

fn field_env(name: &str, path: &str) -> EnvVar {
    EnvVar {
        name: name.to_string(),
        value_from: Some(EnvVarSource {
            field_ref: Some(ObjectFieldSelector {
                field_path: path.to_string(),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn container(env: Vec<EnvVar>) -> Container {
    Container {
        name: "sidecar".to_string(),
        env: Some(env),
        ..Default::default()
    }
}

fn pod_with_annotation(key: &str, value: &str) -> Pod {
    let mut pod = Pod::default();
    pod.metadata.annotations = Some(BTreeMap::from([(key.to_string(), value.to_string())]));
    pod
}

/// The worked numbers of the spec (§12.3), computed by OpenKruise's Go code.
#[test]
fn hashes_match_openkruise() {
    assert_eq!(hash_envs(vec![]), 86_995_377);
    assert_eq!(hash_envs(vec![("APP_CONFIG", "config v1")]), 417_093_530);
    assert_eq!(hash_envs(vec![("APP_CONFIG", "config v2")]), 2_451_607_708);
    assert_eq!(hash_envs(vec![("APP_CONFIG", "")]), 225_531_427);
    assert_eq!(hash_envs(vec![("B", "x"), ("A", "y")]), 2_224_003_736);
    // Go escapes `<` as `\u003c` before hashing.
    assert_eq!(hash_envs(vec![("A", "a<b")]), 3_417_310_312);
}

#[test]
fn expected_hash_reads_the_pods_current_metadata() {
    let c = container(vec![field_env(
        "APP_CONFIG",
        "metadata.annotations['app-config']",
    )]);
    assert_eq!(
        expected_hash(&pod_with_annotation("app-config", "config v1"), &c),
        417_093_530
    );
    assert_eq!(
        expected_hash(&pod_with_annotation("app-config", "config v2"), &c),
        2_451_607_708
    );
    // A missing annotation is an empty value, not an absent variable.
    assert_eq!(expected_hash(&Pod::default(), &c), 225_531_427);
}

#[test]
fn only_subscripted_metadata_field_refs_count() {
    let mut literal = field_env("LITERAL", "metadata.labels['x']");
    literal.value = Some("set".to_string());
    let c = container(vec![
        literal,
        field_env("POD_NAME", "metadata.name"),
        field_env("SIDECARSET_VERSION", "metadata.annotations['v']"),
        field_env("BAD", "metadata.labels[x]"),
    ]);
    assert!(metadata_envs(&c).is_empty());
    assert_eq!(expected_hash(&Pod::default(), &c), 86_995_377);
    let labelled = container(vec![field_env("TIER", "metadata.labels['tier']")]);
    let mut pod = Pod::default();
    pod.metadata.labels = Some(BTreeMap::from([("tier".to_string(), "x".to_string())]));
    assert_eq!(
        expected_hash(&pod, &labelled),
        hash_envs(vec![("TIER", "x")])
    );
}

#[test]
fn current_hash_splits_env_output_at_the_first_equals_sign() {
    let c = container(vec![field_env("APP_CONFIG", "metadata.annotations['a']")]);
    let output = "PATH=/bin\nAPP_CONFIG=k=v\nHOSTNAME=x\n";
    assert_eq!(
        current_hash(&c, output),
        hash_envs(vec![("APP_CONFIG", "k=v")])
    );
    assert_eq!(current_hash(&c, "PATH=/bin\n"), 225_531_427);
}

proptest! {
    /// A container started with the pod's metadata reports the hash the pod expects.
    #[test]
    fn current_equals_expected_when_started_with_the_same_values(
        values in proptest::collection::btree_map("[A-Z]{1,4}", "[ -~]{0,12}", 0..5)
    ) {
        let env: Vec<EnvVar> = values
            .keys()
            .map(|name| field_env(name, &format!("metadata.annotations['{}']", name.to_lowercase())))
            .collect();
        let c = container(env);
        let mut pod = Pod::default();
        pod.metadata.annotations = Some(
            values.iter().map(|(k, v)| (k.to_lowercase(), v.clone())).collect(),
        );
        let output: String = values
            .iter()
            .map(|(k, v)| format!("{k}={v}\n"))
            .collect();
        prop_assert_eq!(current_hash(&c, &output), expected_hash(&pod, &c));
    }
}
