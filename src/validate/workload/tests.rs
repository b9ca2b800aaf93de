use super::*;
use crate::api::{UpdatePriorityOrderTerm, UpdatePriorityWeightTerm};
use k8s_openapi::api::core::v1::PodReadinessGate;
use serde_json::json;

fn int(n: i32) -> IntOrString {
    IntOrString::Int(n)
}

fn text(s: &str) -> IntOrString {
    IntOrString::String(s.into())
}

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Value, total, round up, expected result.
type ScalerCase = (Option<IntOrString>, i32, bool, Result<i64, &'static str>);

#[test]
fn kruise_scaler_accepts_fractions_and_refuses_bare_numbers() {
    let cases: [ScalerCase; 9] = [
        (None, 10, true, Ok(0)),
        (Some(int(3)), 10, true, Ok(3)),
        (Some(int(-1)), 10, true, Ok(-1)),
        (Some(text("20%")), 3, true, Ok(1)),
        (Some(text("20%")), 3, false, Ok(0)),
        (Some(text("12.5%")), 8, true, Ok(1)),
        (
            Some(text("5")),
            10,
            true,
            Err("invalid type: string is not a percentage"),
        ),
        (
            Some(text("abc%")),
            10,
            true,
            Err(r#"invalid value "abc%": strconv.ParseFloat: parsing "abc": invalid syntax"#),
        ),
        (
            Some(text("1e400%")),
            10,
            true,
            Err(
                r#"invalid value "1e400%": strconv.ParseFloat: parsing "1e400": value out of range"#,
            ),
        ),
    ];
    for (value, total, round_up, expected) in cases {
        assert_eq!(
            kruise_scaled_value(value.as_ref(), total, round_up),
            expected.map_err(String::from),
            "{value:?} of {total}"
        );
    }
}

#[test]
fn legacy_scaler_reads_every_string_as_percent() {
    assert_eq!(legacy_scaled_value(&text("1%"), 1, true), Ok(1));
    assert_eq!(legacy_scaled_value(&text("0%"), 1, true), Ok(0));
    assert_eq!(legacy_scaled_value(&text("5"), 1, true), Ok(1));
    assert_eq!(legacy_scaled_value(&int(0), 1, true), Ok(0));
    assert_eq!(
            legacy_scaled_value(&text("x%"), 1, true),
            Err(r#"invalid value for IntOrString: invalid value "x%": strconv.Atoi: parsing "x": invalid syntax"#.into())
        );
}

#[test]
fn daemonset_numbers_and_percent_bounds() {
    assert_eq!(int_or_percent_number(&text("30%")), 30);
    assert_eq!(int_or_percent_number(&text("7")), 7);
    assert_eq!(int_or_percent_number(&text("abc")), 0);
    assert_eq!(int_or_percent_number(&int(-2)), -2);
    let path = Path::new("p");
    assert!(not_more_than_100_percent(&text("100%"), &path).is_none());
    assert!(not_more_than_100_percent(&int(500), &path).is_none());
    assert_eq!(
            not_more_than_100_percent(&text("101%"), &path).map(|e| e.to_string()),
            Some(r#"p: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"101%"}: must not be greater than 100%"#.into())
        );
}

#[test]
fn selectors_convert_like_label_selector_as_selector() {
    let set = labels(&[("a", "b")]);
    assert_eq!(Selector::convert(None), Ok(Selector::Nothing));
    assert!(!Selector::Nothing.matches(Some(&set)));
    let empty = LabelSelector::default();
    assert_eq!(Selector::convert(Some(&empty)), Ok(Selector::Everything));
    let selector = LabelSelector {
        match_labels: Some(labels(&[("a", "b")])),
        ..Default::default()
    };
    let converted = Selector::convert(Some(&selector)).unwrap();
    assert!(converted.matches(Some(&set)));
    assert!(!converted.matches(None));
    let bad = LabelSelector {
        match_labels: Some(labels(&[("a", "b!")])),
        ..Default::default()
    };
    assert!(Selector::convert(Some(&bad)).is_err());
}

#[test]
fn priority_and_scatter_rules() {
    let weight = |w: i32, selector: LabelSelector| UpdatePriorityWeightTerm {
        weight: w,
        match_selector: selector,
    };
    let foo = LabelSelector {
        match_labels: Some(labels(&[("key", "foo")])),
        ..Default::default()
    };
    let cases = [
        (
            UpdatePriorityStrategy {
                weight_priority: Some(vec![weight(20, foo.clone())]),
                order_priority: None,
            },
            None,
        ),
        (
            UpdatePriorityStrategy {
                weight_priority: Some(vec![weight(0, foo.clone())]),
                order_priority: None,
            },
            None,
        ),
        (
            UpdatePriorityStrategy {
                weight_priority: Some(vec![weight(101, foo.clone())]),
                order_priority: None,
            },
            Some("weight must be valid number in the range 1-100"),
        ),
        (
            UpdatePriorityStrategy {
                weight_priority: Some(vec![weight(10, LabelSelector::default())]),
                order_priority: None,
            },
            Some("selector can not be empty"),
        ),
        (
            UpdatePriorityStrategy {
                weight_priority: Some(vec![weight(10, foo)]),
                order_priority: Some(vec![UpdatePriorityOrderTerm {
                    ordered_key: "k".into(),
                }]),
            },
            Some("only one of weightPriority and orderPriority can be used"),
        ),
        (
            UpdatePriorityStrategy {
                weight_priority: None,
                order_priority: Some(vec![UpdatePriorityOrderTerm {
                    ordered_key: String::new(),
                }]),
            },
            Some("order key can not be empty"),
        ),
    ];
    for (strategy, expected) in cases {
        assert_eq!(
            priority_strategy_error(&strategy).as_deref(),
            expected,
            "{strategy:?}"
        );
    }
    let term = |k: &str, v: &str| UpdateScatterTerm {
        key: k.into(),
        value: v.into(),
    };
    assert_eq!(
        scatter_strategy_error(&[term("a", "1"), term("a", "2")]),
        None
    );
    assert_eq!(
        scatter_strategy_error(&[term("a", "1"), term("a", "1")]).as_deref(),
        Some("duplicated key=a value=1")
    );
    assert_eq!(
        scatter_strategy_error(&[term("", "1")]).as_deref(),
        Some("key should not be empty")
    );
}

fn pod_spec(value: serde_json::Value) -> PodSpec {
    serde_json::from_value(value).unwrap()
}

#[test]
fn pod_spec_patch_compares_containers_by_index() {
    let old = pod_spec(
        json!({"containers": [{"name": "a", "image": "img:1", "imagePullPolicy": "Always"}], "nodeSelector": {"x": "y"}}),
    );
    let new = pod_spec(
        json!({"containers": [{"name": "a", "image": "img:2", "imagePullPolicy": "IfNotPresent"}], "nodeSelector": {"x": "y"}}),
    );
    assert_eq!(
        pod_spec_patch(&old, &new),
        [
            PatchOp {
                op: "replace",
                path: "/containers/0/image".into()
            },
            PatchOp {
                op: "replace",
                path: "/containers/0/imagePullPolicy".into()
            },
        ]
    );
    let grown = pod_spec(
        json!({"containers": [{"name": "a", "image": "img:1", "imagePullPolicy": "Always"}, {"name": "b", "image": "x"}]}),
    );
    let ops = pod_spec_patch(&old, &grown);
    assert!(
        ops.contains(&PatchOp {
            op: "add",
            path: "/containers/1".into()
        }),
        "{ops:?}"
    );
    assert!(
        ops.contains(&PatchOp {
            op: "remove",
            path: "/nodeSelector".into()
        }),
        "{ops:?}"
    );
    // Unset and empty are the same.
    let with_empty = pod_spec(
        json!({"containers": [{"name": "a", "image": "img:1", "imagePullPolicy": "Always", "env": []}], "nodeSelector": {"x": "y"}, "hostname": ""}),
    );
    assert!(pod_spec_patch(&old, &with_empty).is_empty());
    // Lists of scalars are compared as sets.
    let args = |a: serde_json::Value| pod_spec(json!({"containers": [{"name": "a", "args": a}]}));
    assert_eq!(
        pod_spec_patch(&args(json!(["x", "y"])), &args(json!(["y", "z"]))),
        [
            PatchOp {
                op: "remove",
                path: "/containers/0/args/0".into()
            },
            PatchOp {
                op: "add",
                path: "/containers/0/args/1".into()
            },
        ]
    );
}

#[test]
fn image_path_matchers() {
    assert!(is_container_image_path("/containers/0/image"));
    assert!(is_container_image_path("/containers/12/image"));
    assert!(!is_container_image_path("/containers/0/imagePullPolicy"));
    assert!(!is_container_image_path("/initContainers/0/image"));
    assert!(!is_container_image_path("/containers/x/image"));
    assert!(contains_container_image_path(
        "/containers/0/imagePullPolicy"
    ));
    // Case-sensitive, like upstream's regex: init containers never match.
    assert!(!contains_container_image_path("/initContainers/0/image"));
    assert!(contains_container_image_path("/x/containers/3/image"));
    assert!(!contains_container_image_path("/containers/0/name"));
    assert!(!contains_container_image_path("/containers//image"));
}

#[test]
fn meta_update_rules() {
    let old = ObjectMeta {
        name: Some("a".into()),
        namespace: Some("default".into()),
        uid: Some("u1".into()),
        generation: Some(3),
        resource_version: Some("1".into()),
        ..Default::default()
    };
    let mut new = old.clone();
    new.resource_version = Some("2".into());
    assert!(validate_object_meta_update(&new, &old, &Path::new("metadata")).is_empty());
    new.name = Some("b".into());
    new.generation = Some(2);
    new.resource_version = None;
    let rendered: Vec<String> = validate_object_meta_update(&new, &old, &Path::new("metadata"))
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        rendered,
        [
            "metadata.resourceVersion: Invalid value: \"\": must be specified for an update",
            "metadata.generation: Invalid value: 2: must not be decremented",
            "metadata.name: Invalid value: \"b\": field is immutable",
        ]
    );
}

#[test]
fn deletion_protection_rules() {
    let always = labels(&[(DELETION_PROTECTION_LABEL, "Always")]);
    let cascading = labels(&[(DELETION_PROTECTION_LABEL, "Cascading")]);
    assert_eq!(
        deletion_protection(Some(&always), Some(0), false).as_deref(),
        Some(
            "forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Always"
        )
    );
    assert_eq!(deletion_protection(Some(&always), Some(0), true), None);
    assert_eq!(
        deletion_protection(Some(&cascading), Some(3), false).as_deref(),
        Some(
            "forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Cascading and replicas 3>0"
        )
    );
    assert_eq!(deletion_protection(Some(&cascading), Some(0), false), None);
    assert_eq!(deletion_protection(Some(&cascading), None, false), None);
    assert_eq!(deletion_protection(None, Some(3), false), None);
    let other = labels(&[(DELETION_PROTECTION_LABEL, "Never")]);
    assert_eq!(deletion_protection(Some(&other), Some(3), false), None);
}

#[test]
fn pod_template_rules() {
    let template: PodTemplateSpec = serde_json::from_value(json!({
            "metadata": {"labels": {"bad key": "v"}},
            "spec": {
                "containers": [{"name": "c", "image": "i", "imagePullPolicy": "Always", "terminationMessagePolicy": "File", "volumeMounts": [{"name": "data", "mountPath": "/d"}]}],
                "dnsPolicy": "Sometimes",
                "activeDeadlineSeconds": 0,
                "readinessGates": [{"conditionType": "bad gate"}],
                "ephemeralContainers": [{"name": "debug", "image": "busybox"}]
            }
        }))
        .unwrap();
    let claim = Volume {
        name: "data".into(),
        persistent_volume_claim: Some(
            k8s_openapi::api::core::v1::PersistentVolumeClaimVolumeSource {
                claim_name: "data".into(),
                read_only: Some(false),
            },
        ),
        ..Default::default()
    };
    let paths = |extra: &[Volume]| -> Vec<String> {
        validate_pod_template(&template, extra, &Path::new("spec.template"))
            .iter()
            .map(|e| e.path.clone())
            .collect()
    };
    let with_claim = paths(std::slice::from_ref(&claim));
    assert_eq!(
        with_claim,
        [
            "spec.template.labels",
            "spec.template.spec.restartPolicy",
            "spec.template.spec.dnsPolicy",
            "spec.template.spec.readinessGates[0].conditionType",
            "spec.template.spec.activeDeadlineSeconds",
            "spec.template.spec.ephemeralContainers",
        ]
    );
    // Without the claim volume, the mount refers to nothing.
    assert!(
        paths(&[]).contains(&"spec.template.spec.containers[0].volumeMounts[0].name".to_string())
    );
    let gate = PodReadinessGate {
        condition_type: IN_PLACE_UPDATE_READY.into(),
    };
    assert!(validate_qualified_name(&gate.condition_type, &Path::new("x")).is_empty());
}

#[test]
fn differs_ignores_unset_values() {
    let a = json!({"a": "", "b": [], "c": {"d": null}});
    let b = json!({});
    assert!(!differs(&a, &b));
    assert!(differs(&json!({"a": "x"}), &b));
}

/// The three validators must answer, never panic, whatever a decodable object holds.
mod never_panics;
