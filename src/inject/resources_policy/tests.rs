use super::*;
use proptest::prelude::*;
use serde_json::json;

/// A container named `name` with `limits` and `requests` given as `(cpu, memory)`, each optional.
fn container(
    name: &str,
    limits: (Option<&str>, Option<&str>),
    requests: (Option<&str>, Option<&str>),
) -> serde_json::Value {
    let list = |(cpu, memory): (Option<&str>, Option<&str>)| {
        let mut map = serde_json::Map::new();
        if let Some(cpu) = cpu {
            map.insert("cpu".into(), json!(cpu));
        }
        if let Some(memory) = memory {
            map.insert("memory".into(), json!(memory));
        }
        serde_json::Value::Object(map)
    };
    json!({"name": name, "image": "app", "resources": {"limits": list(limits), "requests": list(requests)}})
}

fn pod(containers: Vec<serde_json::Value>, init_containers: Vec<serde_json::Value>) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {"containers": containers, "initContainers": init_containers},
    }))
    .unwrap()
}

fn policy(
    mode: &str,
    regex: &str,
    limits: (&str, &str),
    requests: (&str, &str),
) -> ResourcesPolicy {
    serde_json::from_value(json!({
        "targetContainersMode": mode,
        "targetContainersNameRegex": regex,
        "resourcesExpr": {
            "limits": {"cpu": limits.0, "memory": limits.1},
            "requests": {"cpu": requests.0, "memory": requests.1},
        },
    }))
    .unwrap()
}

/// The computed resources as `limits cpu/memory; requests cpu/memory`, `-` for an unset entry.
fn shown(resources: &ResourceRequirements) -> String {
    let get = |list: &Option<BTreeMap<String, WireQuantity>>, key: &str| {
        list.as_ref()
            .and_then(|l| l.get(key))
            .map_or("-".to_string(), |q| q.0.clone())
    };
    format!(
        "{}/{}; {}/{}",
        get(&resources.limits, "cpu"),
        get(&resources.limits, "memory"),
        get(&resources.requests, "cpu"),
        get(&resources.requests, "memory"),
    )
}

fn compute(policy: &ResourcesPolicy, pod: &Pod, sidecars: &[&str]) -> Result<String, String> {
    let names: HashSet<&str> = sidecars.iter().copied().collect();
    sidecar_resources(policy, pod, &names)
        .map(|r| shown(&r))
        .map_err(|e| e.0)
}

fn two_engines() -> Pod {
    pod(
        vec![
            container(
                "large-engine-v4",
                (Some("200m"), Some("200Mi")),
                (Some("50m"), Some("100Mi")),
            ),
            container(
                "large-engine-v8",
                (Some("400m"), Some("400Mi")),
                (Some("100m"), Some("200Mi")),
            ),
        ],
        vec![],
    )
}

#[test]
fn sum_and_max_over_the_targets() {
    let pod = two_engines();
    let cases = [
        (
            policy("sum", ".*", ("cpu*50%", "200Mi"), ("cpu*50%", "100Mi")),
            "300m/200Mi; 75m/100Mi",
        ),
        (
            policy(
                "max",
                "^large.engine.v.*$",
                ("max(cpu*50%, 50m)", "200Mi"),
                ("max(cpu*50%, 50m)", "100Mi"),
            ),
            "200m/200Mi; 50m/100Mi",
        ),
        (
            policy(
                "sum",
                "^large.engine.v4$",
                ("max(cpu*50%, 50m)", "200Mi"),
                ("max(cpu*50%, 50m)", "100Mi"),
            ),
            "100m/200Mi; 50m/100Mi",
        ),
        (
            policy("sum", "engine", ("cpu", "memory"), ("cpu", "memory")),
            "600m/600Mi; 150m/300Mi",
        ),
        (
            policy("max", "engine", ("cpu", "memory"), ("cpu", "memory")),
            "400m/400Mi; 100m/200Mi",
        ),
        (
            policy("sum", ".*", ("memory*30%", "memory*30%"), ("", "")),
            "180m/180Mi; -/-",
        ),
    ];
    for (policy, expected) in cases {
        assert_eq!(
            compute(&policy, &pod, &[]),
            Ok(expected.to_string()),
            "{policy:?}"
        );
    }
}

#[test]
fn a_limit_needs_every_target_to_have_one_and_a_missing_request_counts_zero() {
    let pod = pod(
        vec![
            container(
                "app-a",
                (Some("200m"), Some("200Mi")),
                (Some("100m"), Some("100Mi")),
            ),
            container("app-b", (None, Some("400Mi")), (Some("50m"), Some("200Mi"))),
        ],
        vec![],
    );
    let sum = policy(
        "sum",
        ".*",
        ("cpu*50%", "memory*30%"),
        ("cpu*30%", "memory*20%"),
    );
    assert_eq!(compute(&sum, &pod, &[]), Ok("-/180Mi; 45m/60Mi".into()));

    let pod = self::pod(
        vec![
            container(
                "app-a",
                (Some("200m"), Some("200Mi")),
                (Some("200m"), Some("100Mi")),
            ),
            container("app-b", (Some("400m"), None), (Some("200m"), None)),
        ],
        vec![],
    );
    let max = policy(
        "max",
        ".*",
        ("cpu*40%", "memory*30%"),
        ("cpu*25%", "memory*20%"),
    );
    assert_eq!(compute(&max, &pod, &[]), Ok("160m/-; 50m/20Mi".into()));

    // No requests anywhere: requests are computed from 0.
    let pod = self::pod(
        vec![container("app", (Some("1"), None), (None, None))],
        vec![],
    );
    let floor = policy(
        "sum",
        ".*",
        ("cpu", ""),
        ("max(cpu*50%, 50m)", "memory + 64Mi"),
    );
    assert_eq!(compute(&floor, &pod, &[]), Ok("1/-; 50m/64Mi".into()));
}

#[test]
fn targets_are_native_sidecars_and_containers_but_no_sidecarset_container() {
    let pod = pod(
        vec![
            container("app", (Some("1"), None), (None, None)),
            container("envoy", (Some("2"), None), (None, None)),
        ],
        vec![
            json!({"name": "native", "image": "x", "restartPolicy": "Always", "resources": {"limits": {"cpu": "500m"}}}),
            json!({"name": "plain-init", "image": "x", "resources": {"limits": {"cpu": "8"}}}),
        ],
    );
    let all = policy("sum", ".*", ("cpu", ""), ("", ""));
    assert_eq!(compute(&all, &pod, &["envoy"]), Ok("1500m/-; -/-".into()));
    assert_eq!(compute(&all, &pod, &[]), Ok("3500m/-; -/-".into()));
    let none = policy("sum", "^nonexistent$", ("cpu", ""), ("", ""));
    assert_eq!(
        compute(&none, &pod, &[]),
        Err(r#"no containers match the regex pattern "^nonexistent$""#.into())
    );
    assert_eq!(
        compute(&all, &pod, &["app", "envoy", "native"]),
        Err(r#"no containers match the regex pattern ".*""#.into())
    );
}

#[test]
fn numbers_are_millicores_for_cpu_and_bytes_for_memory() {
    let pod = pod(
        vec![container("app", (Some("1"), Some("1Gi")), (None, None))],
        vec![],
    );
    // The variable is `memory` only when the expression names it: a number in a memory
    // expression without it is taken as cores, as upstream does.
    let numbers = policy("sum", ".*", ("0.5", "memory / 1024 / 1024"), ("", "0.5"));
    assert_eq!(compute(&numbers, &pod, &[]), Ok("500m/1Ki; -/500m".into()));
    let mixed = policy("sum", ".*", ("cpu + 0.25", "memory * 50%"), ("", "1024"));
    assert_eq!(compute(&mixed, &pod, &[]), Ok("1250m/512Mi; -/1024".into()));
}

#[test]
fn errors_name_the_expression() {
    let pod = two_engines();
    let bad = policy("sum", ".*", ("cpu*cpu", ""), ("", ""));
    assert_eq!(
        compute(&bad, &pod, &[]),
        Err(r#"failed to evaluate CPU limits expression: failed to parse expression "cpu*cpu": multiplication of two quantities"#.into())
    );
    let negative = policy("sum", ".*", ("", ""), ("", "memory - 1Gi"));
    assert_eq!(
        compute(&negative, &pod, &[]),
        Err(r#"failed to evaluate memory requests expression: failed to parse expression "memory - 1Gi": calculation result is negative: -724Mi"#.into())
    );
    let infinite = policy("sum", ".*", ("1e999", ""), ("", ""));
    assert!(
        compute(&infinite, &pod, &[])
            .unwrap_err()
            .contains("out of range")
    );
    let invalid = self::pod(
        vec![container("app", (Some("lots"), None), (None, None))],
        vec![],
    );
    let all = policy("sum", ".*", ("cpu", ""), ("", ""));
    assert!(
        compute(&all, &invalid, &[])
            .unwrap_err()
            .starts_with(r#"container "app": resources.limits.cpu: "#)
    );
}

#[test]
fn word_boundaries_as_go() {
    assert!(names_word("memory*2", "memory"));
    assert!(names_word("max(memory, 1Gi)", "memory"));
    assert!(!names_word("memory_x + 1", "memory"));
    assert!(!names_word("xmemory", "memory"));
    assert!(names_word("xmemory + memory", "memory"));
}

fn milli_quantity() -> impl Strategy<Value = String> {
    (0u64..100_000, prop::sample::select(vec!["m", "", "Mi"])).prop_map(|(n, u)| format!("{n}{u}"))
}

proptest! {
    /// Adding a target never lowers a sum, and never lowers a max.
    #[test]
    fn aggregates_are_monotonic(
        limits in prop::collection::vec(milli_quantity(), 1..5),
        extra in milli_quantity(),
        sum in any::<bool>(),
    ) {
        let mode = if sum { "sum" } else { "max" };
        let make = |values: &[String]| {
            let containers = values
                .iter()
                .enumerate()
                .map(|(i, v)| container(&format!("app-{i}"), (Some(v), None), (None, None)))
                .collect();
            pod(containers, vec![])
        };
        let mut more = limits.clone();
        more.push(extra);
        let of = |pod: &Pod| {
            let targets: Vec<&Container> = pod.spec.as_ref().unwrap().containers.iter().collect();
            Aggregate::of(&targets, mode).unwrap().limits.remove(CPU).unwrap()
        };
        let (before, after) = (of(&make(&limits)), of(&make(&more)));
        prop_assert!(after.cmp_value(&before).is_ge());
    }

    /// Any policy over any pod answers: resources or an error, never a panic.
    #[test]
    fn arbitrary_policies_never_panic(
        regex in "\\PC{0,8}",
        expr in "\\PC{0,16}",
        limit in "\\PC{0,6}",
    ) {
        let pod = pod(vec![container("app", (Some(&limit), Some(&limit)), (Some(&limit), None))], vec![]);
        let policy = policy("sum", &regex, (&expr, &expr), (&expr, &expr));
        let _ = sidecar_resources(&policy, &pod, &HashSet::new());
    }
}
