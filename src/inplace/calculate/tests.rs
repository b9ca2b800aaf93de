use super::*;

fn rev(data: &Value) -> Revision<'_> {
    Revision {
        name: "new-revision",
        data,
        volume_claim_templates_hash: None,
    }
}

fn tmpl(containers: Value) -> Value {
    json!({"spec":{"template":{"$patch":"replace","spec":{"containers":containers}}}})
}

#[test]
fn image_path_is_exact() {
    assert_eq!(image_index("/spec/containers/12/image"), Some(12));
    assert_eq!(image_index("/spec/containers//image"), None);
    assert_eq!(image_index("/spec/containers/1/imagePullPolicy"), None);
    assert_eq!(image_index("/spec/initContainers/0/image"), None);
    assert_eq!(image_index("/spec/containers/+1/image"), None);
}

#[test]
fn each_non_image_change_is_a_recreate() {
    let old = tmpl(json!([{"name":"c1","image":"a","env":[{"name":"E","value":"1"}]}]));
    let cases = [
        (
            tmpl(json!([{"name":"c1","image":"a","env":[{"name":"E","value":"2"}]}])),
            "FieldChanged",
        ),
        (
            tmpl(
                json!([{"name":"c1","image":"a","env":[{"name":"E","value":"1"}]},{"name":"c2","image":"b"}]),
            ),
            "NotAReplacement",
        ),
        (
            tmpl(json!([{"name":"c1","env":[{"name":"E","value":"1"}]}])),
            "NotAReplacement",
        ),
        (
            tmpl(json!([{"name":"c1","image":null,"env":[{"name":"E","value":"1"}]}])),
            "ImageNotAString",
        ),
        (
            tmpl(json!([{"name":"c1","image":7,"env":[{"name":"E","value":"1"}]}])),
            "UnreadableTemplate",
        ),
    ];
    for (new, expected) in cases {
        let err = calculate_spec(
            Some(&rev(&old)),
            Some(&rev(&new)),
            &CalculateOptions::default(),
        )
        .unwrap_err();
        assert!(format!("{err:?}").starts_with(expected), "{err:?}");
    }
    // A change outside spec.template.
    let mut one = old.clone();
    one["spec"]["replicas"] = json!(1);
    let mut other = old.clone();
    other["spec"]["replicas"] = json!(3);
    let err = calculate_spec(
        Some(&rev(&one)),
        Some(&rev(&other)),
        &CalculateOptions::default(),
    )
    .unwrap_err();
    assert_eq!(
        err,
        NotInPlace::FieldChanged {
            path: "/spec/replicas".into()
        }
    );
    let mut outside = old.clone();
    outside["status"] = json!({});
    assert!(matches!(
        calculate_spec(
            Some(&rev(&old)),
            Some(&rev(&outside)),
            &CalculateOptions::default()
        ),
        Err(NotInPlace::OutsidePodSpec { .. })
    ));
}

#[test]
fn image_and_other_change_together_is_still_a_recreate() {
    let old = tmpl(json!([{"name":"c1","image":"a","command":["x"]}]));
    let new = tmpl(json!([{"name":"c1","image":"b","command":["y"]}]));
    assert!(
        calculate_spec(
            Some(&rev(&old)),
            Some(&rev(&new)),
            &CalculateOptions::default()
        )
        .is_err()
    );
}

#[test]
fn env_reference_policies() {
    let env =
        json!([{"name":"E","valueFrom":{"fieldRef":{"fieldPath":"metadata.annotations['a/b']"}}}]);
    let old = json!({"spec":{"template":{"metadata":{"annotations":{"a/b":"1","x":"1"}},"spec":{"containers":[{"name":"c1","image":"i","env":env}]}}}});
    let mut new = old.clone();
    new["spec"]["template"]["metadata"]["annotations"]["a/b"] = json!("2");
    new["spec"]["template"]["metadata"]["annotations"]["x"] = json!("2");

    let in_place = calculate_spec(
        Some(&rev(&old)),
        Some(&rev(&new)),
        &CalculateOptions {
            env_from_metadata: EnvFromMetadata::InPlace,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(in_place.update_env_from_metadata);
    assert_eq!(
        in_place.container_ref_metadata["c1"]
            .annotations
            .as_ref()
            .unwrap()["a/b"],
        "2"
    );
    assert_eq!(
        in_place.meta_data_patch,
        br#"{"metadata":{"annotations":{"x":"2"}}}"#.to_vec()
    );

    let ignored = calculate_spec(
        Some(&rev(&old)),
        Some(&rev(&new)),
        &CalculateOptions {
            env_from_metadata: EnvFromMetadata::Ignore,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(!ignored.update_env_from_metadata);
    assert!(ignored.container_ref_metadata.is_empty());
    assert_eq!(
        ignored.meta_data_patch,
        br#"{"metadata":{"annotations":{"a/b":"2","x":"2"}}}"#.to_vec()
    );

    let recreate = calculate_spec(
        Some(&rev(&old)),
        Some(&rev(&new)),
        &CalculateOptions::default(),
    );
    assert_eq!(
        recreate,
        Err(NotInPlace::EnvReadsChangedMetadata {
            container: "c1".into(),
            field: "metadata.annotations",
            key: "a/b".into()
        })
    );
}

#[test]
fn literal_env_value_and_version_env_are_not_references() {
    let c: Container = serde_json::from_value(json!({"name":"c","env":[
        {"name":"SIDECARSET_VERSION","valueFrom":{"fieldRef":{"fieldPath":"metadata.labels['k']"}}},
        {"name":"E","value":"v","valueFrom":{"fieldRef":{"fieldPath":"metadata.labels['k']"}}}
    ]}))
    .unwrap();
    assert!(!reads_metadata(&c, MetadataSource::Labels, "k"));
    let c: Container = serde_json::from_value(json!({"name":"c","env":[
        {"name":"E","valueFrom":{"fieldRef":{"fieldPath":"metadata.labels['k']"}}}
    ]}))
    .unwrap();
    assert!(reads_metadata(&c, MetadataSource::Labels, "k"));
    assert!(!reads_metadata(&c, MetadataSource::Annotations, "k"));
}

#[test]
fn revision_data_from_template_round_trips() {
    let template: PodTemplateSpec = serde_json::from_value(json!({
        "metadata":{"labels":{"a":"b"}},
        "spec":{"containers":[{"name":"c1","image":"x"}]}
    }))
    .unwrap();
    let data = revision_data(&template).unwrap();
    assert_eq!(data["spec"]["template"]["$patch"], json!("replace"));
    assert_eq!(template_of(&data, Side::Old).unwrap(), template);
}
