//! Every AdmissionReview fixture, through the webhook that serves it, with the example
//! SidecarSets: the patch applies to the raw request object, the result decodes, and running the
//! webhook again on its own output gives no patch (reinvocation safety).

use std::path::Path;

use k8s_openapi::api::core::v1::Pod;
use kruise_webhook::admission::pod::{PodMutation, mutate_pod};
use kruise_webhook::admission::review::{AdmissionResponse, decode_envelope};
use kruise_webhook::admission::sidecarset::mutate_sidecarset;
use kruise_webhook::admission::workload::{Workload, mutate_workload};
use kruise_webhook::api::SidecarSet;
use kruise_webhook::api::cloneset::CloneSet;
use kruise_webhook::api::daemonset::DaemonSet;
use kruise_webhook::api::statefulset::StatefulSet;
use kruise_webhook::convert;
use kruise_webhook::source::Catalogue;
use kruise_webhook::source::dir::{self, EMBEDDED_EXAMPLES};
use serde_json::Value;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

fn example_catalogue() -> Catalogue {
    let files: Vec<(String, String)> = EMBEDDED_EXAMPLES
        .iter()
        .map(|(n, c)| (n.to_string(), c.to_string()))
        .collect();
    let (catalogue, errors) = dir::load(&files).into_catalogue();
    assert!(errors.is_empty(), "{errors:?}");
    catalogue
}

fn answer(review: &Value, catalogue: &Catalogue) -> AdmissionResponse {
    let bytes = serde_json::to_vec(review).unwrap();
    let (_, request) = decode_envelope(&bytes).expect("fixture is an AdmissionReview");
    match request.kind.kind.as_str() {
        "SidecarSet" => return mutate_sidecarset(&request),
        "CloneSet" => return mutate_workload(Workload::CloneSet, &request),
        "StatefulSet" => return mutate_workload(Workload::StatefulSet, &request),
        "DaemonSet" => return mutate_workload(Workload::DaemonSet, &request),
        _ => {}
    }
    mutate_pod(
        &request,
        &PodMutation {
            catalogue,
            now: "2026-11-22T10:00:00Z",
            name_suffix: "x2b4z",
            sort_sidecars_by_name: false,
            draw: &kruise_webhook::inject::sidecar::random_draw,
        },
    )
}

fn apply(object: &Value, response: &AdmissionResponse) -> Value {
    let mut object = object.clone();
    if let Some(ops) = response.patch_operations() {
        json_patch::patch(&mut object, &ops).expect("the patch applies to the raw object");
    }
    object
}

/// Decodes `object`, in whichever version it is, as the working type `K`.
fn working<K: kube::Resource<DynamicType = ()> + serde::de::DeserializeOwned>(
    object: &Value,
) -> Result<(), String> {
    let converted = convert::convert(object, &K::api_version(&())).map_err(|e| e.to_string())?;
    serde_json::from_value::<K>(converted)
        .map(drop)
        .map_err(|e| e.to_string())
}

#[test]
fn every_fixture_round_trips_and_is_reinvocation_safe() {
    let catalogue = example_catalogue();
    let mut seen = 0;
    let mut entries: Vec<_> = std::fs::read_dir(FIXTURES)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
    {
        let name = path.file_name().unwrap().to_string_lossy();
        let review: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let first = answer(&review, &catalogue);
        assert_eq!(
            first.uid,
            review["request"]["uid"].as_str().unwrap(),
            "{name}"
        );
        if review["request"]["operation"] == "DELETE" {
            // Mutating webhooks are not called on DELETE; the validating answer is tested below.
            assert!(first.allowed && first.patch.is_none(), "{name}");
            seen += 1;
            continue;
        }
        if !first.allowed {
            // Denials are their own tests; they must carry a reason.
            assert!(
                first.status.as_ref().is_some_and(|s| !s.message.is_empty()),
                "{name}"
            );
            seen += 1;
            continue;
        }
        let object = apply(&review["request"]["object"], &first);
        let decoded = match review["request"]["kind"]["kind"].as_str() {
            Some("Pod") => serde_json::from_value::<Pod>(object.clone())
                .map(drop)
                .map_err(|e| e.to_string()),
            Some("SidecarSet") => working::<SidecarSet>(&object),
            Some("CloneSet") => working::<CloneSet>(&object),
            Some("StatefulSet") => working::<StatefulSet>(&object),
            Some("DaemonSet") => working::<DaemonSet>(&object),
            other => panic!("{name}: no decoder for kind {other:?}"),
        };
        decoded.unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut again = review.clone();
        again["request"]["object"] = object;
        let second = answer(&again, &catalogue);
        assert!(second.allowed, "{name}");
        assert_eq!(
            second.patch_operations(),
            None,
            "{name}: reinvocation must not patch again"
        );
        seen += 1;
    }
    assert!(
        seen >= 12,
        "only {seen} fixtures found in {}",
        Path::new(FIXTURES).display()
    );
}

#[test]
fn fixture_expectations() {
    let catalogue = example_catalogue();
    let load = |name: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(Path::new(FIXTURES).join(name)).unwrap())
            .unwrap()
    };

    // The proxy example: injected before the app, and started first through launch priority.
    let review = load("pod-shop-proxy-priority.json");
    let pod: Pod = serde_json::from_value(apply(
        &review["request"]["object"],
        &answer(&review, &catalogue),
    ))
    .unwrap();
    let spec = pod.spec.unwrap();
    let order: Vec<_> = spec.containers.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(order, vec!["proxy", "checkout"]);
    let barrier = |i: usize| {
        let env = spec.containers[i].env.as_ref().unwrap().last().unwrap();
        assert_eq!(env.name, "KRUISE_CONTAINER_BARRIER");
        let key_ref = env
            .value_from
            .as_ref()
            .unwrap()
            .config_map_key_ref
            .as_ref()
            .unwrap();
        (key_ref.name.clone(), key_ref.key.clone())
    };
    assert_eq!(barrier(0), ("checkout-0-barrier".into(), "p_100".into()));
    assert_eq!(barrier(1), ("checkout-0-barrier".into(), "p_0".into()));

    // Ordered: a name is assigned from generateName, priorities follow container order.
    let review = load("pod-ordered-launch.json");
    let pod: Pod = serde_json::from_value(apply(
        &review["request"]["object"],
        &answer(&review, &catalogue),
    ))
    .unwrap();
    assert_eq!(pod.metadata.name.as_deref(), Some("batch-x2b4z"));
    let keys: Vec<String> = pod
        .spec
        .unwrap()
        .containers
        .iter()
        .map(|c| {
            let env = c.env.as_ref().unwrap().last().unwrap();
            env.value_from
                .as_ref()
                .unwrap()
                .config_map_key_ref
                .as_ref()
                .unwrap()
                .key
                .clone()
        })
        .collect();
    assert_eq!(keys, vec!["p_0", "p_-1", "p_-2"]);

    // No SidecarSet matches and no priority: allowed, no patch.
    let review = load("pod-no-match.json");
    let response = answer(&review, &catalogue);
    assert!(response.allowed && response.patch.is_none());

    // A bad priority is refused with the container named.
    let review = load("pod-bad-priority.json");
    let response = answer(&review, &catalogue);
    assert!(!response.allowed);
    let status = response.status.unwrap();
    assert_eq!(status.code, 500);
    assert!(
        status.message.contains("container \"helper\""),
        "{}",
        status.message
    );
}

/// The workloads the end-to-end checks store in a real apiserver pass the validating webhooks,
/// as users wrote them (no defaults applied).
#[test]
fn e2e_workloads_pass_validation() {
    use kruise_webhook::admission::workload::validate_workload;
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/examples/workloads/workloads.yaml"),
    )
    .unwrap();
    let mut checked = 0;
    for object in kruise_webhook::yaml::from_multiple::<Value>(&text).unwrap() {
        let (group, version) = object["apiVersion"]
            .as_str()
            .unwrap()
            .split_once('/')
            .unwrap();
        let kind = object["kind"].as_str().unwrap();
        let workload = match kind {
            "CloneSet" => Workload::CloneSet,
            "StatefulSet" => Workload::StatefulSet,
            "DaemonSet" => Workload::DaemonSet,
            other => panic!("unexpected kind {other}"),
        };
        let review = serde_json::json!({
            "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": "u", "kind": {"group": group, "version": version, "kind": kind},
                        "operation": "CREATE", "object": object}
        });
        let bytes = serde_json::to_vec(&review).unwrap();
        let (_, request) = decode_envelope(&bytes).unwrap();
        let answer = validate_workload(workload, &request);
        assert!(answer.allowed, "{kind}: {:?}", answer.status);
        checked += 1;
    }
    assert_eq!(checked, 3);
}

/// A SidecarSet is defaulted in the version it was sent in: the patch adds the defaults and the
/// hashes and makes the object what storage (v1beta1) keeps of it (`spec.namespace` as a
/// namespace selector), and the hashes do not depend on the version.
#[test]
fn sidecarsets_are_defaulted_in_either_version() {
    let catalogue = example_catalogue();
    let load = |name: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(Path::new(FIXTURES).join(name)).unwrap())
            .unwrap()
    };
    let review = load("sidecarset-v1alpha1-namespace.json");
    let response = answer(&review, &catalogue);
    let object = apply(&review["request"]["object"], &response);
    assert_eq!(object["spec"].get("namespace"), None);
    assert_eq!(
        object["spec"]["namespaceSelector"],
        serde_json::json!({"matchLabels": {"kubernetes.io/metadata.name": "shop"}})
    );
    assert_eq!(
        object["metadata"]["labels"]["apps.kruise.io/sidecarset-custom-version"],
        "v1"
    );
    assert_eq!(
        object["spec"]["containers"][0]["upgradeStrategy"]["upgradeType"],
        "ColdUpgrade"
    );

    let hashes = |review: &Value| -> (Value, Value) {
        let object = apply(&review["request"]["object"], &answer(review, &catalogue));
        let annotations = &object["metadata"]["annotations"];
        (
            annotations["kruise.io/sidecarset-hash"].clone(),
            annotations["kruise.io/sidecarset-hash-without-image"].clone(),
        )
    };
    let alpha = load("sidecarset-create.json");
    let mut beta = alpha.clone();
    for key in ["kind", "resource", "requestKind", "requestResource"] {
        beta["request"][key]["version"] = "v1beta1".into();
    }
    beta["request"]["object"] =
        convert::convert(&alpha["request"]["object"], "apps.kruise.io/v1beta1").unwrap();
    assert_eq!(
        beta["request"]["object"]["apiVersion"],
        "apps.kruise.io/v1beta1"
    );
    let (alpha_hashes, beta_hashes) = (hashes(&alpha), hashes(&beta));
    assert!(alpha_hashes.0.is_string(), "{alpha_hashes:?}");
    assert_eq!(alpha_hashes, beta_hashes);
}
