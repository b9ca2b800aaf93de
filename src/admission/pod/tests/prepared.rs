//! The catalogue's prepared work changes nothing: `/mutate-pod` with it answers exactly what the
//! typed path (every value serialized from its typed form) answers, patch bytes included, for
//! SidecarSets and pods with names, hashes and revisions that need escaping, duplicate names,
//! existing annotations (reinvocation), hot upgrades, native sidecars and launch priority.

use proptest::prelude::*;
use serde_json::{Value, json};

use super::super::*;
use crate::admission::review::decode_envelope;
use crate::api::SidecarSet;
use std::sync::Arc;

fn review(pod: &Value) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "u-1",
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "operation": "CREATE",
            "namespace": "prod",
            "object": pod,
        }
    }))
    .unwrap()
}

fn catalogue(sets: &[Value]) -> Catalogue {
    let sets = sets
        .iter()
        .map(|set| Arc::new(serde_json::from_value::<SidecarSet>(set.clone()).unwrap()))
        .collect();
    Catalogue::new(sets, Default::default(), true)
}

/// Both answers to the pod: (prepared, typed).
fn answers(catalogue: &Catalogue, pod: &Value) -> (AdmissionResponse, AdmissionResponse) {
    let body = review(pod);
    let (_, request) = decode_envelope(&body).unwrap();
    let input = PodMutation {
        catalogue,
        now: "2026-11-22T10:00:00Z",
        name_suffix: "x2b4z",
        sort_sidecars_by_name: false,
        draw: &crate::inject::sidecar::random_draw,
    };
    (
        mutate_pod(&request, &input),
        mutate_pod_typed(&request, &input),
    )
}

fn patched(pod: &Value, answer: &AdmissionResponse) -> Value {
    let mut pod = pod.clone();
    if let Some(ops) = answer.patch_operations() {
        json_patch::patch(&mut pod, &ops).unwrap();
    }
    pod
}

/// Texts that JSON escapes, or that are long or not ASCII.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z0-9]{0,6}",
        Just("q\"uote\\back/slash".to_string()),
        Just("tab\tnew\nline\u{1}\u{1f}\u{7f}".to_string()),
        Just("ünï€😀".to_string()),
        Just("</script>&'".to_string()),
    ]
}

fn set_name() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("log-agent".to_string()),
        Just("mesh".to_string()),
        Just("a\"b".to_string()),
        Just("zé".to_string()),
    ]
}

fn sidecar() -> impl Strategy<Value = Value> {
    (
        prop_oneof![Just("agent"), Just("proxy"), Just("app")],
        text(),
        prop::option::of(prop_oneof![Just("cfg"), Just("data"), Just("logs")]),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(name, image, mount, hot, shared, before)| {
            let mut sidecar = json!({"name": name, "image": image,
                "podInjectPolicy": if before { "BeforeAppContainer" } else { "AfterAppContainer" },
                "shareVolumePolicy": {"type": if shared { "enabled" } else { "disabled" }}});
            if let Some(mount) = mount {
                sidecar["volumeMounts"] =
                    json!([{"name": mount, "mountPath": format!("/{mount}")}]);
            }
            if hot {
                sidecar["upgradeStrategy"] =
                    json!({"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": "empty:1"});
            }
            sidecar
        })
}

fn init_sidecar() -> impl Strategy<Value = Value> {
    (prop_oneof![Just("init-a"), Just("init-b")], any::<bool>()).prop_map(|(name, native)| {
        let mut sidecar = json!({"name": name, "image": "init:1"});
        if native {
            sidecar["restartPolicy"] = json!("Always");
        }
        sidecar
    })
}

fn volume() -> impl Strategy<Value = Value> {
    (prop_oneof![Just("cfg"), Just("data"), Just("logs")], text()).prop_map(|(name, config)| {
        if config.is_empty() {
            json!({"name": name, "emptyDir": {}})
        } else {
            json!({"name": name, "configMap": {"name": config}})
        }
    })
}

fn sidecarset() -> impl Strategy<Value = Value> {
    (
        set_name(),
        prop::option::of(text()),
        prop::option::of(text()),
        prop::option::of(text()),
        prop::collection::vec(sidecar(), 0..3),
        prop::collection::vec(init_sidecar(), 0..2),
        prop::collection::vec(volume(), 0..3),
        prop::option::of(text()),
        any::<bool>(),
    )
        .prop_map(
            |(name, hash, hash_without_image, revision, containers, inits, volumes, secret, matching)| {
                let mut annotations = serde_json::Map::new();
                if let Some(hash) = hash {
                    annotations.insert("kruise.io/sidecarset-hash".into(), hash.into());
                }
                if let Some(hash) = hash_without_image {
                    annotations
                        .insert("kruise.io/sidecarset-hash-without-image".into(), hash.into());
                }
                let mut set = json!({
                    "apiVersion": "apps.kruise.io/v1alpha1",
                    "kind": "SidecarSet",
                    "metadata": {"name": name, "annotations": annotations},
                    "spec": {
                        "selector": {"matchLabels": {"app": if matching { "web" } else { "other" }}},
                        "containers": containers,
                        "initContainers": inits,
                        "volumes": volumes,
                    }
                });
                if let Some(secret) = secret {
                    set["spec"]["imagePullSecrets"] = json!([{"name": secret}]);
                }
                if let Some(revision) = revision {
                    set["status"] = json!({"latestRevision": revision});
                }
                set
            },
        )
}

/// Annotations a pod may already carry: its own, hash annotations of a former injection (in
/// the current or the legacy format, or unreadable), an injected list, launch priority.
fn pod_annotations() -> impl Strategy<Value = Option<Value>> {
    let hash = prop_oneof![
        Just(None),
        Just(Some(
            r#"{"mesh":{"updateTimestamp":"2020-01-01T00:00:00Z","hash":"old","sidecarSetName":"mesh","sidecarList":["proxy"]}}"#
        )),
        Just(Some(r#"{"log-agent":"legacy"}"#)),
        Just(Some("not json")),
    ];
    (
        hash.clone(),
        hash,
        prop::option::of(prop_oneof![Just("mesh"), Just(""), Just("x,log-agent")]),
        any::<bool>(),
        prop::option::of(text()),
    )
        .prop_map(|(hash, without_image, injected, ordered, own)| {
            let mut annotations = serde_json::Map::new();
            let mut put = |key: &str, value: Option<&str>| {
                if let Some(value) = value {
                    annotations.insert(key.into(), value.into());
                }
            };
            put("kruise.io/sidecarset-hash", hash);
            put("kruise.io/sidecarset-hash-without-image", without_image);
            put("kruise.io/sidecarset-injected-list", injected);
            put(
                "apps.kruise.io/container-launch-priority",
                ordered.then_some("Ordered"),
            );
            put("own", own.as_deref());
            (!annotations.is_empty()).then_some(Value::Object(annotations))
        })
}

fn pod() -> impl Strategy<Value = Value> {
    (
        pod_annotations(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(annotations, volumes, priority, secrets)| {
            let mut env = vec![json!({"name": "TZ", "value": "Europe/Berlin"})];
            if priority {
                env.push(json!({"name": "KRUISE_CONTAINER_PRIORITY", "value": "10"}));
            }
            let mut pod = json!({
                "metadata": {"generateName": "web-", "namespace": "prod", "labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": "nginx:1.25", "env": env,
                    "volumeMounts": [{"name": "logs", "mountPath": "/var/log/app"}]}]}
            });
            if let Some(annotations) = annotations {
                pod["metadata"]["annotations"] = annotations;
            }
            if volumes {
                pod["spec"]["volumes"] = json!([{"name": "logs", "emptyDir": {}}]);
            }
            if secrets {
                pod["spec"]["imagePullSecrets"] = json!([{"name": "pull"}]);
            }
            pod
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    #[test]
    fn prepared_and_typed_paths_give_the_same_answer(
        sets in prop::collection::vec(sidecarset(), 0..4),
        pod in pod(),
    ) {
        let catalogue = catalogue(&sets);
        let (prepared, typed) = answers(&catalogue, &pod);
        prop_assert_eq!(&prepared, &typed);
        // Reinvocation on the patched pod, too.
        let again = patched(&pod, &typed);
        let (prepared, typed) = answers(&catalogue, &again);
        prop_assert_eq!(prepared, typed);
    }
}

/// The benchmark's request takes the prepared path, and its answer is the typed one.
#[test]
fn benchmark_request_takes_the_prepared_path() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/sidecarsets");
    let (catalogue, errors) =
        crate::source::dir::load(&crate::source::dir::read_directory(&path).unwrap())
            .into_catalogue();
    assert!(errors.is_empty(), "{errors:?}");
    let review: Value = serde_json::from_slice(
        &std::fs::read(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/pod-web-log-agent.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let pod = &review["request"]["object"];
    let (prepared, typed) = answers(&catalogue, pod);
    assert!(prepared.patch.is_some());
    assert_eq!(prepared, typed);

    let mut decoded: Pod = serde_json::from_value(pod.clone()).unwrap();
    let context = InjectionContext {
        sidecarsets: catalogue.sidecarsets(),
        namespace_labels: None,
        now: "2026-11-22T10:00:00Z",
        sort_sidecars_by_name: false,
        revisions: None,
        draw: &crate::inject::sidecar::random_draw,
    };
    let injection =
        crate::inject::sidecar::inject_prepared(&mut decoded, &context, Some(catalogue.prepared()))
            .unwrap();
    assert!(injection.changed);
    assert_eq!(
        injection.known.strings.len(),
        2,
        "both hash annotations prepared"
    );
    assert_eq!(injection.known.volumes.len(), 2, "the log-agent's volumes");
}

/// The `KruisePodReady` gate goes first, on the pods of the workloads this project runs, once;
/// with a sidecar and a launch priority beside it the patch holds all three.
#[test]
fn pods_of_the_groups_workloads_get_the_kruise_pod_ready_gate() {
    let owned = |api_version: &str, kind: &str, controller: bool| {
        json!({"metadata": {"name": "p", "namespace": "prod", "labels": {"app": "web"},
            "ownerReferences": [{"apiVersion": api_version, "kind": kind, "name": "w", "uid": "u",
                "controller": controller}]},
            "spec": {"containers": [{"name": "app", "image": "app:1"}]}})
    };
    let gates = |pod: &Value| pod["spec"]["readinessGates"].clone();
    let kruise_pod_ready = json!([{"conditionType": "KruisePodReady"}]);
    let empty = catalogue(&[]);
    for (api_version, kind) in [
        ("apps.kruise.io/v1alpha1", "CloneSet"),
        ("apps.kruise.io/v1beta1", "CloneSet"),
        ("apps.kruise.io/v1beta1", "StatefulSet"),
        ("apps.kruise.io/v1alpha1", "DaemonSet"),
    ] {
        let pod = owned(api_version, kind, true);
        let (prepared, typed) = answers(&empty, &pod);
        assert_eq!(prepared.patch, typed.patch, "{kind}");
        assert_eq!(gates(&patched(&pod, &prepared)), kruise_pod_ready, "{kind}");
        // Already gated (reinvocation, or a template that lists it): no second entry, no patch.
        let gated = patched(&pod, &prepared);
        assert_eq!(answers(&empty, &gated).0.patch, None, "{kind}");
    }
    for (api_version, kind, controller) in [
        ("apps/v1", "ReplicaSet", true),
        ("apps.kruise.io/v1alpha1", "BroadcastJob", true),
        ("apps.kruise.io/v1alpha1", "CloneSet", false),
    ] {
        let pod = owned(api_version, kind, controller);
        assert_eq!(answers(&empty, &pod).0.patch, None, "{kind} {controller}");
    }
    // Another gate kept, ours appended after it.
    let mut pod = owned("apps.kruise.io/v1alpha1", "CloneSet", true);
    pod["spec"]["readinessGates"] = json!([{"conditionType": "InPlaceUpdateReady"}]);
    let (prepared, typed) = answers(&empty, &pod);
    assert_eq!(prepared.patch, typed.patch);
    assert_eq!(
        gates(&patched(&pod, &prepared)),
        json!([{"conditionType": "InPlaceUpdateReady"}, {"conditionType": "KruisePodReady"}])
    );
    // With a sidecar and a launch priority: all three in one patch.
    let set = json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "SidecarSet",
        "metadata": {"name": "log"},
        "spec": {"selector": {"matchLabels": {"app": "web"}},
            "containers": [{"name": "log", "image": "log:1"}]}});
    let mut pod = owned("apps.kruise.io/v1alpha1", "CloneSet", true);
    pod["spec"]["containers"][0]["env"] =
        json!([{"name": "KRUISE_CONTAINER_PRIORITY", "value": "1"}]);
    pod["spec"]["containers"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "late", "image": "app:1"}));
    let (prepared, typed) = answers(&catalogue(&[set]), &pod);
    assert_eq!(prepared.patch, typed.patch);
    let after = patched(&pod, &prepared);
    assert_eq!(gates(&after), kruise_pod_ready);
    let names: Vec<&str> = after["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"log"), "{names:?}");
    assert!(
        after.to_string().contains("KRUISE_CONTAINER_BARRIER"),
        "{after}"
    );
}
