use super::*;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement;

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn requirement(key: &str, operator: &str, values: &[&str]) -> LabelSelectorRequirement {
    LabelSelectorRequirement {
        key: key.into(),
        operator: operator.into(),
        values: Some(values.iter().map(|v| v.to_string()).collect()),
    }
}

#[test]
fn paths_render_like_kubernetes() {
    let path = Path::new("spec")
        .child("containers")
        .index(0)
        .child("env")
        .index(1)
        .child("name");
    assert_eq!(path.to_string(), "spec.containers[0].env[1].name");
    assert_eq!(
        Path::default().child("spec").key("foo").to_string(),
        "spec[foo]"
    );
    assert_eq!(
        Path::new("spec").index(2).child("transferEnv").as_str(),
        "spec[2].transferEnv"
    );
}

#[test]
fn display_matches_kubernetes_for_every_kind() {
    let spec = Path::new("spec");
    let cases = [
        (
            FieldError::required(
                &spec.child("selector"),
                "no selector defined for SidecarSet",
            ),
            "spec.selector: Required value: no selector defined for SidecarSet",
        ),
        (
            FieldError::required(&spec.child("x"), ""),
            "spec.x: Required value",
        ),
        (
            FieldError::invalid(&spec.child("x"), "abc", "detail"),
            "spec.x: Invalid value: \"abc\": detail",
        ),
        (
            FieldError::invalid(&spec.child("n"), -1i64, NEGATIVE_ERROR),
            "spec.n: Invalid value: -1: must be greater than or equal to 0",
        ),
        (
            FieldError::not_supported(
                &spec
                    .child("persistentVolumeClaimRetentionPolicy")
                    .child("whenDeleted"),
                "Keep",
                &["Retain", "Delete"],
            ),
            "spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: \"Keep\": supported values: \"Retain\", \"Delete\"",
        ),
        (
            FieldError::duplicate(&spec.child("containers").index(0).child("name"), "a"),
            "spec.containers[0].name: Duplicate value: \"a\"",
        ),
        (
            FieldError::forbidden(&spec.child("f"), "not allowed"),
            "spec.f: Forbidden: not allowed",
        ),
        (
            FieldError::too_long(&Path::new("metadata").child("name"), 63),
            "metadata.name: Too long: may not be more than 63 bytes",
        ),
        (
            FieldError::not_found(&spec.child("v"), "vol"),
            "spec.v: Not found: \"vol\"",
        ),
        (
            FieldError::too_many(&spec.child("l"), Some(5), 3),
            "spec.l: Too many: 5: must have at most 3 items",
        ),
        (
            FieldError::internal(&Path::new("x"), "boom"),
            "x: Internal error: boom",
        ),
    ];
    for (error, expected) in cases {
        assert_eq!(error.to_string(), expected);
    }
}

#[test]
fn aggregate_formats_one_many_and_deduplicates() {
    let a = FieldError::required(&Path::new("a"), "x");
    let b = FieldError::required(&Path::new("b"), "y");
    assert_eq!(aggregate(&[]), "");
    assert_eq!(aggregate(std::slice::from_ref(&a)), "a: Required value: x");
    assert_eq!(
        aggregate(&[a.clone(), b.clone(), a.clone()]),
        "[a: Required value: x, b: Required value: y]"
    );
    assert_eq!(aggregate(&[a.clone(), a]), "a: Required value: x");
}

#[test]
fn go_quote_escapes_like_strconv_quote() {
    assert_eq!(go_quote("a\"b\\c"), r#""a\"b\\c""#);
    assert_eq!(go_quote("tab\there\n"), r#""tab\there\n""#);
    assert_eq!(go_quote("\u{1}"), r#""\x01""#);
    assert_eq!(go_quote("héllo"), "\"héllo\"");
    assert_eq!(go_quote("\u{a0}"), r#""\u00a0""#);
}

#[test]
fn go_struct_renderings() {
    let selector = LabelSelector {
        match_labels: Some(map(&[("a", "b")])),
        match_expressions: Some(vec![requirement("k", "In", &["x", "y"])]),
    };
    assert_eq!(
        go_label_selector(&selector),
        "v1.LabelSelector{MatchLabels:map[string]string{\"a\":\"b\"}, MatchExpressions:[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement{Key:\"k\", Operator:\"In\", Values:[]string{\"x\", \"y\"}}}}"
    );
    assert_eq!(
        go_label_selector(&LabelSelector::default()),
        "v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}"
    );
    assert_eq!(
        go_int_or_string(&IntOrString::String("abc%".into())),
        "intstr.IntOrString{Type:1, IntVal:0, StrVal:\"abc%\"}"
    );
}

#[test]
fn dns_labels_and_subdomains() {
    assert!(dns1123_label_errors("my-name").is_empty());
    assert!(dns1123_label_errors("123-abc").is_empty());
    assert_eq!(dns1123_label_errors("a.b"), vec!["must not contain dots"]);
    let upper = dns1123_label_errors("Bad_Name");
    assert_eq!(upper.len(), 1);
    assert!(
        upper[0].starts_with("a lowercase RFC 1123 label must consist of"),
        "{upper:?}"
    );
    assert!(upper[0].contains("(e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"));
    assert_eq!(
        dns1123_label_errors(&"a".repeat(64)),
        vec![max_len_error(63)]
    );
    assert!(dns1123_label_errors("").len() == 1);
    assert!(dns1123_label_errors("-a").len() == 1);
    assert!(dns1123_subdomain_errors("example.com").is_empty());
    assert_eq!(dns1123_subdomain_errors("example..com").len(), 1);
    assert_eq!(dns1123_subdomain_errors(&"a".repeat(254)).len(), 1);
}

#[test]
fn qualified_names_report_each_part() {
    assert!(qualified_name_errors("example.com/MyName").is_empty());
    assert!(qualified_name_errors("my.name").is_empty());
    assert_eq!(
        qualified_name_errors("/a"),
        vec!["prefix part must be non-empty"]
    );
    let errors = qualified_name_errors("a/b/c");
    assert_eq!(errors.len(), 1);
    assert!(
        errors[0].starts_with("a qualified name must consist of"),
        "{errors:?}"
    );
    let errors = qualified_name_errors("Bad_/x");
    assert!(
        errors[0].starts_with("prefix part a lowercase RFC 1123 subdomain"),
        "{errors:?}"
    );
    assert_eq!(
        qualified_name_errors("a/"),
        vec![
            "name part must be non-empty".to_string(),
            format!(
                "name part {}",
                regex_error(
                    QUALIFIED_NAME_ERR,
                    QUALIFIED_NAME_FMT,
                    &["MyName", "my.name", "123-abc"]
                )
            )
        ]
    );
    assert_eq!(
        qualified_name_errors(&"a".repeat(64)),
        vec![format!("name part {}", max_len_error(63))]
    );
}

#[test]
fn label_values_env_names_keys_ports_percents() {
    assert!(label_value_errors("").is_empty());
    assert!(label_value_errors("app-group").is_empty());
    assert_eq!(label_value_errors("app-risk-").len(), 1);
    assert_eq!(label_value_errors(&"a".repeat(64)).len(), 1);

    assert!(env_var_name_errors("MY_ENV.NAME").is_empty());
    assert!(env_var_name_errors("-x").is_empty());
    assert_eq!(env_var_name_errors("1abc").len(), 1);
    assert_eq!(env_var_name_errors("a=b").len(), 1);
    assert_eq!(env_var_name_errors(".."), vec!["must not be '..'"]);
    assert_eq!(env_var_name_errors("..a"), vec!["must not start with '..'"]);
    assert_eq!(env_var_name_errors("").len(), 1);

    assert!(config_map_key_errors("key.name").is_empty());
    assert_eq!(config_map_key_errors("a/b").len(), 1);

    assert!(port_number_errors(80).is_empty());
    assert_eq!(
        port_number_errors(0),
        vec!["must be between 1 and 65535, inclusive"]
    );
    assert_eq!(port_number_errors(65536).len(), 1);
    assert!(port_name_errors("http").is_empty());
    assert_eq!(
        port_name_errors("123"),
        vec!["must contain at least one letter (a-z)"]
    );
    assert_eq!(
        port_name_errors("a--b"),
        vec!["must not contain consecutive hyphens"]
    );
    assert_eq!(port_name_errors("Http").len(), 1);

    assert!(percent_errors("150%").is_empty());
    assert_eq!(percent_errors("abc%").len(), 1);
    assert_eq!(percent_errors("%").len(), 1);
    assert_eq!(percent_errors("5").len(), 1);
}

#[test]
fn int_or_percent() {
    let path = Path::new("spec").child("updateStrategy").child("partition");
    assert!(validate_positive_int_or_percent(&IntOrString::Int(0), &path).is_empty());
    assert!(
        validate_positive_int_or_percent(&IntOrString::String("150%".into()), &path).is_empty()
    );
    let errors = validate_positive_int_or_percent(&IntOrString::Int(-1), &path);
    assert_eq!(
        errors[0].to_string(),
        "spec.updateStrategy.partition: Invalid value: -1: must be greater than or equal to 0"
    );
    let errors = validate_positive_int_or_percent(&IntOrString::String("abc%".into()), &path);
    assert_eq!(errors.len(), 1);
    assert!(
        errors[0]
            .to_string()
            .contains("a valid percent string must be a numeric string followed by an ending '%'")
    );
}

#[test]
fn object_meta_rules() {
    let path = Path::new("metadata");
    let dns = |v: &str| dns1123_subdomain_errors(v);
    let meta = ObjectMeta {
        name: Some("ok".into()),
        labels: Some(map(&[("app", "web")])),
        annotations: Some(map(&[("Example.com/Key", "v")])),
        ..Default::default()
    };
    assert!(validate_object_meta(&meta, false, dns, &path).is_empty());

    let meta = ObjectMeta::default();
    let errors = validate_object_meta(&meta, false, dns, &path);
    assert_eq!(
        aggregate(&errors),
        "metadata.name: Required value: name or generateName is required"
    );

    let meta = ObjectMeta {
        name: Some("ok".into()),
        namespace: Some("default".into()),
        labels: Some(map(&[("bad key", "bad value!")])),
        annotations: Some(map(&[("a/b/c", &"x".repeat(TOTAL_ANNOTATION_SIZE_LIMIT))])),
        finalizers: Some(vec!["good/finalizer".into(), "bad finalizer".into()]),
        ..Default::default()
    };
    let errors = validate_object_meta(&meta, false, dns, &path);
    let rendered: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(errors.len(), 6, "{rendered:#?}");
    assert!(rendered[0].starts_with("metadata.namespace: Forbidden: not allowed on this type"));
    assert!(
        rendered
            .iter()
            .any(|e| e.starts_with("metadata.labels: Invalid value: \"bad key\""))
    );
    assert!(
        rendered
            .iter()
            .any(|e| e.starts_with("metadata.labels: Invalid value: \"bad value!\""))
    );
    assert!(
        rendered
            .iter()
            .any(|e| e == "metadata.annotations: Too long: may not be more than 262144 bytes")
    );
    assert!(
        rendered
            .iter()
            .any(|e| e.starts_with("metadata.finalizers: Invalid value: \"bad finalizer\""))
    );

    let namespaced = ObjectMeta {
        name: Some("ok".into()),
        ..Default::default()
    };
    let errors = validate_object_meta(&namespaced, true, dns, &path);
    assert_eq!(aggregate(&errors), "metadata.namespace: Required value");
}

#[test]
fn label_selector_validation() {
    let path = Path::new("spec").child("selector");
    let valid = LabelSelector {
        match_labels: Some(map(&[("a", "b")])),
        match_expressions: Some(vec![
            requirement("x", "In", &["1"]),
            requirement("y", "Exists", &[]),
        ]),
    };
    assert!(validate_label_selector(&valid, LabelSelectorOptions::default(), &path).is_empty());
    assert_eq!(label_selector_conversion_error(&valid), None);

    let invalid = LabelSelector {
        match_labels: Some(map(&[("a", "b")])),
        match_expressions: Some(vec![
            requirement("app-name", "NotIn", &["app-group", "app-risk-"]),
            requirement("x", "In", &[]),
            requirement("y", "Exists", &["v"]),
            requirement("z", "Near", &[]),
            requirement("bad key", "Exists", &[]),
        ]),
    };
    let errors = validate_label_selector(&invalid, LabelSelectorOptions::default(), &path);
    let rendered: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(errors.len(), 5, "{rendered:#?}");
    assert!(rendered[0].starts_with("spec.selector.matchExpressions[0].values[1]: Invalid value: \"app-risk-\": a valid label must be"));
    assert_eq!(
        rendered[1],
        "spec.selector.matchExpressions[1].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"
    );
    assert_eq!(
        rendered[2],
        "spec.selector.matchExpressions[2].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
    );
    assert_eq!(
        rendered[3],
        "spec.selector.matchExpressions[3].operator: Invalid value: \"Near\": not a valid selector operator"
    );
    assert!(
        rendered[4]
            .starts_with("spec.selector.matchExpressions[4].key: Invalid value: \"bad key\"")
    );

    let lenient = LabelSelectorOptions {
        allow_invalid_label_value: true,
    };
    assert_eq!(validate_label_selector(&invalid, lenient, &path).len(), 4);

    let conversion = label_selector_conversion_error(&invalid).unwrap_or_default();
    assert!(
        conversion.starts_with(
            "values[1][app-name]: Invalid value: \"app-risk-\": a valid label must be"
        ),
        "{conversion}"
    );
    let unknown = LabelSelector {
        match_expressions: Some(vec![requirement("z", "Near", &[])]),
        ..Default::default()
    };
    assert_eq!(
        label_selector_conversion_error(&unknown).as_deref(),
        Some("\"Near\" is not a valid label selector operator")
    );
    let empty_in = LabelSelector {
        match_expressions: Some(vec![requirement("x", "In", &[])]),
        ..Default::default()
    };
    assert_eq!(
        label_selector_conversion_error(&empty_in).as_deref(),
        Some(
            "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty"
        )
    );
}
