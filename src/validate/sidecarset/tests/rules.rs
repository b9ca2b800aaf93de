//! Rules the V table does not cover: one passing and one failing case each.

use super::*;
use crate::api::{
    UpdatePriorityOrderTerm, UpdatePriorityStrategy, UpdatePriorityWeightTerm, UpdateScatterTerm,
    match_labels,
};
use crate::validate::field::aggregate;
use k8s_openapi::api::core::v1::EnvVar;

fn check(set: &SidecarSet) -> Vec<String> {
    validate_sidecarset(set, None, &[])
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn the_valid_base_passes() {
    assert_eq!(check(&base().build()), Vec::<String>::new());
}

#[test]
fn metadata_rules() {
    let mut set = base()
        .annotation("Example.com/Fine", "x")
        .label("app", "web")
        .build();
    assert!(check(&set).is_empty());

    set.metadata.labels = Some(labels(&[("app", "bad value!")]));
    set.metadata.namespace = Some("default".into());
    let errors = check(&set);
    assert_eq!(errors.len(), 2, "{errors:#?}");
    assert_eq!(
        errors[0],
        "metadata.namespace: Forbidden: not allowed on this type"
    );
    assert!(errors[1].starts_with("metadata.labels: Invalid value: \"bad value!\""));
}

#[test]
fn canary_with_a_valid_base_passes_and_skips_the_base_in_conflicts() {
    let set = canary(base(), "base-sidecarset")
        .volumes(vec![host_path("shared", "/a")])
        .build();
    let base_set = named("base-sidecarset")
        .volumes(vec![host_path("shared", "/b")])
        .build();
    let stored = others(vec![base_set]);
    assert!(validate_sidecarset(&set, None, &stored).is_empty());
    // Any other SidecarSet does conflict with the base (here: the container name).
    assert_eq!(validate_sidecarset(&base().build(), None, &stored).len(), 1);
    let errors = validate_sidecarset(&named("x").build(), None, &stored);
    assert_eq!(
        aggregate(&errors),
        "spec.containers: Invalid value: \"test-sidecar\": container test-sidecar already exist in base-sidecarset"
    );
}

#[test]
fn canary_marker_needs_both_annotations() {
    let mut set = base().annotation(keys::SIDECARSET_CANARY, "true").build();
    assert!(check(&set).is_empty());
    set.metadata.annotations = Some(labels(&[
        (keys::SIDECARSET_CANARY, "false"),
        (keys::SIDECARSET_BASE, "nope"),
    ]));
    assert!(check(&set).is_empty());
}

#[test]
fn v1alpha1_namespace_acts_as_a_namespace_selector() {
    let set = base().namespace("default").build();
    assert!(check(&set).is_empty());

    let set = base().namespace("Bad_NS!").build();
    let errors = check(&set);
    assert_eq!(errors.len(), 2, "{errors:#?}");
    assert!(
        errors[0].starts_with("spec.namespaceSelector.matchLabels: Invalid value: \"Bad_NS!\"")
    );
    assert!(errors[1].starts_with("spec.namespaceSelector.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"kubernetes.io/metadata.name\":\"Bad_NS!\"}"));

    // Conflicts: different namespaces never overlap; the same one does, even against a selector.
    let mine = base().namespace("ns-a").build();
    let mut theirs = other()
        .containers(vec![sidecar("test-sidecar")])
        .namespace("ns-b")
        .build();
    assert!(validate_sidecarset(&mine, None, &others(vec![theirs.clone()])).is_empty());
    theirs.spec.namespace_selector = Some(match_labels(&[(keys::NAMESPACE_NAME_LABEL, "ns-a")]));
    assert_eq!(
        validate_sidecarset(&mine, None, &others(vec![theirs])).len(),
        1
    );
}

#[test]
fn update_strategy_selector_is_checked_only_for_rolling_update() {
    let bad_selector = with_expressions(
        LabelSelector::default(),
        vec![expression("k", "In", &["bad-"])],
    );
    let mut set = base()
        .update_strategy(SidecarSetUpdateStrategy {
            type_: Some(keys::NOT_UPDATE.into()),
            selector: Some(bad_selector.clone()),
            partition: Some(IntOrString::String("x".into())),
            ..Default::default()
        })
        .build();
    assert!(check(&set).is_empty());
    if let Some(strategy) = set.spec.update_strategy.as_mut() {
        strategy.type_ = Some(keys::ROLLING_UPDATE.into());
        strategy.partition = None;
    }
    let errors = check(&set);
    assert_eq!(errors.len(), 2, "{errors:#?}");
    assert!(errors[0].starts_with(
        "spec.updateStrategy.selector.matchExpressions[0].values[0]: Invalid value: \"bad-\""
    ));
    assert!(errors[1].starts_with("spec.updateStrategy.selector.selector: Invalid value:"));
}

#[test]
fn revision_policy_must_be_known() {
    let mut set = base()
        .injection_strategy(revision(None, Some("rev"), "Sometimes"))
        .build();
    let errors = check(&set);
    assert_eq!(errors.len(), 2, "{errors:#?}");
    assert_eq!(
        errors[1],
        "revision.policy: Invalid value: v1beta1.SidecarSetInjectRevision{CustomVersion:(*string)(nil), RevisionName:(*string)(\"rev\"), Policy:\"Sometimes\"}: Invalid policy Sometimes, supported: [Always, Partial]"
    );
    // Without any revision there is nothing to check.
    set.spec.injection_strategy = Some(SidecarSetInjectionStrategy {
        paused: Some(true),
        revision: None,
    });
    assert!(check(&set).is_empty());
}

#[test]
fn priority_strategy_rules() {
    let weight = |weight, selector: LabelSelector| UpdatePriorityWeightTerm {
        weight,
        match_selector: selector,
    };
    let order = |key: &str| UpdatePriorityOrderTerm {
        ordered_key: key.into(),
    };
    let cases: Vec<(UpdatePriorityStrategy, Option<&str>)> = vec![
        (
            UpdatePriorityStrategy {
                weight_priority: Some(vec![weight(50, match_labels(&[("a", "b")]))]),
                order_priority: None,
            },
            None,
        ),
        (
            UpdatePriorityStrategy {
                weight_priority: None,
                order_priority: Some(vec![order("rank")]),
            },
            None,
        ),
        (
            UpdatePriorityStrategy {
                weight_priority: Some(vec![weight(50, match_labels(&[("a", "b")]))]),
                order_priority: Some(vec![order("rank")]),
            },
            Some("only one of weightPriority and orderPriority can be used"),
        ),
        (
            UpdatePriorityStrategy {
                weight_priority: Some(vec![weight(101, match_labels(&[("a", "b")]))]),
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
                weight_priority: Some(vec![weight(
                    10,
                    with_expressions(LabelSelector::default(), vec![expression("a", "In", &[])]),
                )]),
                order_priority: None,
            },
            Some(
                "invalid selector values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty",
            ),
        ),
        (
            UpdatePriorityStrategy {
                weight_priority: None,
                order_priority: Some(vec![order("")]),
            },
            Some("order key can not be empty"),
        ),
    ];
    for (priority, expected) in cases {
        let set = base()
            .update_strategy(SidecarSetUpdateStrategy {
                type_: Some(keys::ROLLING_UPDATE.into()),
                priority_strategy: Some(priority),
                ..Default::default()
            })
            .build();
        let message = aggregate(&validate_sidecarset(&set, None, &[]));
        match expected {
            None => assert_eq!(message, ""),
            Some(detail) => assert_eq!(
                message,
                format!("spec.updateStrategy.priorityStrategy: Required value: {detail}")
            ),
        }
    }
}

#[test]
fn scatter_terms_need_a_key() {
    let term = |key: &str, value: &str| UpdateScatterTerm {
        key: key.into(),
        value: value.into(),
    };
    let mut set = base()
        .update_strategy(SidecarSetUpdateStrategy {
            type_: Some(keys::ROLLING_UPDATE.into()),
            scatter_strategy: Some(vec![term("zone", "a"), term("zone", "*")]),
            ..Default::default()
        })
        .build();
    assert!(check(&set).is_empty());
    if let Some(strategy) = set.spec.update_strategy.as_mut() {
        strategy.scatter_strategy = Some(vec![term("", "a")]);
    }
    assert_eq!(
        check(&set),
        vec!["spec.updateStrategy.scatterStrategy: Required value: key should not be empty"]
    );
}

#[test]
fn transfer_env_field_refs() {
    let run = |api_version: Option<&str>, field_path: &str| {
        let proxy = SidecarContainer {
            transfer_env: transfer_env(api_version, field_path),
            ..sidecar("test-sidecar")
        };
        check(&base().containers(vec![proxy]).build())
    };
    assert!(run(Some("v1"), "metadata.labels['app.kubernetes.io/name']").is_empty());
    assert!(run(Some("v1"), "metadata.annotations['Example.com/Sidecar']").is_empty());
    assert_eq!(
        run(None, "metadata.labels['a']"),
        vec!["spec[0].transferEnv.fieldRef.apiVersion: Required value"]
    );
    assert_eq!(
        run(Some("v1"), ""),
        vec!["spec[0].transferEnv.fieldRef.fieldPath: Required value"]
    );
    assert_eq!(
        run(Some("v2"), "metadata.labels['a']"),
        vec![
            "spec[0].transferEnv.fieldRef.fieldPath: Invalid value: \"metadata.labels['a']\": error converting fieldPath: unsupported pod version: v2"
        ]
    );
    assert_eq!(
        run(Some("v1"), "metadata.name"),
        vec![
            "spec[0].transferEnv.fieldRef.fieldPath: Invalid value: \"metadata.name\": error converting fieldPath: field label not supported: metadata.name"
        ]
    );
    assert_eq!(
        run(Some("v1"), "spec.containers['x']"),
        vec![
            "spec[0].transferEnv.fieldRef.fieldPath: Invalid value: \"spec.containers['x']\": error converting fieldPath: field path not supported: spec.containers"
        ]
    );
    let errors = run(Some("v1"), "metadata.labels['bad key']");
    assert_eq!(errors.len(), 1);
    assert!(errors[0].starts_with(
        "spec[0].transferEnv.fieldRef: Invalid value: \"bad key\": name part must consist of"
    ));
}

#[test]
fn resources_policy_structure() {
    let run = |policy: Option<ResourcesPolicy>| {
        let sized = SidecarContainer {
            resources_policy: policy,
            ..sidecar("test-sidecar")
        };
        check(&base().containers(vec![sized]).build())
    };
    assert_eq!(
        run(resources_policy("^app.*$", Some("max(cpu*50%, 50m)"))),
        Vec::<String>::new()
    );

    let errors = run(resources_policy("[invalid(regex", Some("cpu*50%")));
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert!(errors[0].starts_with("spec[0].resourcesPolicy.targetContainersNameRegex: Invalid value: \"[invalid(regex\": invalid regex pattern: error parsing regexp:"), "{}", errors[0]);

    let mut no_expressions = resources_policy(".*", None);
    if let Some(policy) = no_expressions.as_mut() {
        policy.resources_expr = None;
    }
    let errors = run(no_expressions);
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert!(errors[0].ends_with("at least one of limits or requests must be configured"));
}

#[test]
fn resources_policy_expressions_evaluate_with_their_variable_at_one() {
    let run = |limits: (&str, &str), requests: (&str, &str)| {
        let pair = |(cpu, memory): (&str, &str)| ResourceExprPair {
            cpu: Some(cpu.into()),
            memory: Some(memory.into()),
        };
        let mut policy = resources_policy(".*", None);
        if let Some(policy) = policy.as_mut() {
            policy.resources_expr = Some(ResourcesExpr {
                limits: Some(pair(limits)),
                requests: Some(pair(requests)),
            });
        }
        let sized = SidecarContainer {
            resources_policy: policy,
            ..sidecar("test-sidecar")
        };
        check(&base().containers(vec![sized]).build())
    };
    let none = Vec::<String>::new();
    assert_eq!(
        run(
            (
                "0.5*cpu - 0.3*max(0, cpu-4) + 0.3*max(0, cpu-8)",
                "max(memory*50%, 100Mi)"
            ),
            ("", "100Mi")
        ),
        none
    );
    // The variable is a number here, so a product of two variables passes (upstream fails the
    // pod at injection instead).
    assert_eq!(run(("cpu*cpu", ""), ("", "")), none);
    assert_eq!(
        run(("max(cpu*50%, 50m", ""), ("", "")),
        vec![
            "spec[0].resourcesPolicy.resourcesExpr.limits.cpu: Invalid value: \"max(cpu*50%, 50m\": invalid expression: parse error: syntax error at line 1, col 17"
        ]
    );
    assert_eq!(
        run(("", "cpu*50%"), ("invalidvar * 50%", "")),
        vec![
            "spec[0].resourcesPolicy.resourcesExpr.limits.memory: Invalid value: \"cpu*50%\": invalid expression: undefined variable: cpu",
            "spec[0].resourcesPolicy.resourcesExpr.requests.cpu: Invalid value: \"invalidvar * 50%\": invalid expression: undefined variable: invalidvar",
        ]
    );
    assert_eq!(
        run(("max(cpu*50%)", ""), ("", "memory - 2")),
        vec![
            "spec[0].resourcesPolicy.resourcesExpr.limits.cpu: Invalid value: \"max(cpu*50%)\": invalid expression: max function requires exactly 2 arguments, got 1",
            "spec[0].resourcesPolicy.resourcesExpr.requests.memory: Invalid value: \"memory - 2\": invalid expression: calculation result is negative: -1",
        ]
    );
}

#[test]
fn sidecars_are_validated_as_a_pod() {
    let mut a = sidecar("dup");
    a.container.env = Some(vec![EnvVar {
        name: "1BAD".into(),
        value: Some("x".into()),
        value_from: None,
    }]);
    let b = sidecar("dup");
    let init = sidecar("dup");
    let set = base()
        .containers(vec![a, b])
        .init_containers(vec![init])
        .volumes(vec![empty_dir("v"), empty_dir("v")])
        .build();
    let errors = check(&set);
    assert_eq!(errors.len(), 4, "{errors:#?}");
    assert_eq!(errors[0], "spec.volumes[1].name: Duplicate value: \"v\"");
    assert!(errors[1].starts_with("spec.containers[0].env[0].name: Invalid value: \"1BAD\""));
    assert_eq!(
        errors[2],
        "spec.containers[1].name: Duplicate value: \"dup\""
    );
    assert_eq!(
        errors[3],
        "spec.initContainers[0].name: Duplicate value: \"dup\""
    );

    // Init containers' own podInjectPolicy is not validated, and a lone init container is fine.
    let mut init = sidecar("init");
    init.pod_inject_policy = Some("Sideways".into());
    let set = base().containers(None).init_containers(vec![init]).build();
    assert!(check(&set).is_empty());
}

#[test]
fn patch_pod_metadata_entries() {
    let mut set = base()
        .patch_pod_metadata(vec![
            patch(keys::PATCH_POLICY_RETAIN, &[("a", "1")]),
            patch(keys::PATCH_POLICY_OVERWRITE, &[("b", "2")]),
        ])
        .build();
    assert!(check(&set).is_empty());

    set.spec.patch_pod_metadata = Some(vec![
        SidecarSetPatchPodMetadata {
            annotations: None,
            patch_policy: Some(keys::PATCH_POLICY_RETAIN.into()),
        },
        SidecarSetPatchPodMetadata {
            annotations: Some(labels(&[("ok", "1")])),
            patch_policy: None,
        },
        patch(keys::PATCH_POLICY_RETAIN, &[("bad key", "1")]),
    ]);
    let errors = check(&set);
    assert_eq!(errors.len(), 3, "{errors:#?}");
    assert_eq!(
        errors[0],
        "spec.patchPodMetadata: Required value: no annotations defined for SidecarSet"
    );
    assert_eq!(
        errors[1],
        "spec.patchPodMetadata: Required value: no patchPolicy defined for patchPodMetadata"
    );
    assert!(errors[2].starts_with("patchPodMetadata.annotations: Invalid value: \"bad key\""));
}

#[test]
fn updates_may_remove_containers_and_change_init_containers() {
    let old = base().sidecar(sidecar("second")).build();
    let set = base().init_containers(vec![sidecar("added-init")]).build();
    assert!(validate_sidecarset(&set, Some(&old), &[]).is_empty());

    // An old container without an upgrade type may take one.
    let untyped = SidecarContainer {
        upgrade_strategy: None,
        ..sidecar("test-sidecar")
    };
    let old = base().containers(vec![untyped]).build();
    assert!(validate_sidecarset(&base().build(), Some(&old), &[]).is_empty());
}
