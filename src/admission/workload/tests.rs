use super::*;
use crate::admission::review::decode_envelope;
use crate::admission::test_reviews::{denial, review};
use serde_json::{Value, json};

fn cloneset() -> Value {
    json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                         "spec": {"containers": [{"name": "web", "image": "nginx"}]}}
        }
    })
}

fn validate(workload: Workload, body: &[u8]) -> AdmissionResponse {
    let (_, request) = decode_envelope(body).unwrap();
    validate_workload(workload, &request)
}

#[test]
fn a_template_that_is_not_a_pod_template_is_a_400_naming_the_field() {
    let mut object = cloneset();
    object["spec"]["template"]["spec"]["containers"] = json!("nginx");
    let response = validate(
        Workload::CloneSet,
        &review("CloneSet", "v1alpha1", "CREATE", object, None),
    );
    let (code, message) = denial(&response);
    assert_eq!(code, 400);
    assert!(
        message.starts_with("request.object.spec.template.spec.containers: Invalid value"),
        "{message}"
    );
}

#[test]
fn numbers_where_strings_are_expected_are_a_400() {
    let mut object = cloneset();
    object["spec"]["updateStrategy"] = json!({"type": 7});
    let response = validate(
        Workload::CloneSet,
        &review("CloneSet", "v1alpha1", "CREATE", object, None),
    );
    let (code, message) = denial(&response);
    assert_eq!(code, 400);
    assert!(message.contains("spec.updateStrategy.type"), "{message}");
}

#[test]
fn unknown_enum_values_are_refused_with_the_supported_ones() {
    let mut object = cloneset();
    object["apiVersion"] = json!("apps.kruise.io/v1beta1");
    object["kind"] = json!("StatefulSet");
    object["spec"]["podManagementPolicy"] = json!("Sometimes");
    object["spec"]["persistentVolumeClaimRetentionPolicy"] = json!({"whenScaled": "Keep"});
    let response = validate(
        Workload::StatefulSet,
        &review("StatefulSet", "v1beta1", "CREATE", object, None),
    );
    let (code, message) = denial(&response);
    assert_eq!(code, 422);
    assert!(
            message.contains(r#"spec.podManagementPolicy: Invalid value: "Sometimes": must be 'OrderedReady' or 'Parallel'"#),
            "{message}"
        );
    assert!(
            message.contains(r#"spec.persistentVolumeClaimRetentionPolicy.whenScaled: Unsupported value: "Keep": supported values: "Retain", "Delete""#),
            "{message}"
        );
}

#[test]
fn an_update_without_old_object_is_a_400() {
    let response = validate(
        Workload::CloneSet,
        &review("CloneSet", "v1alpha1", "UPDATE", cloneset(), None),
    );
    let (code, message) = denial(&response);
    assert_eq!(code, 400);
    assert_eq!(
        message,
        "request.oldObject: Required value: the request carries no object"
    );
}

#[test]
fn a_huge_object_is_judged_like_any_other() {
    // 6 MiB of annotations: within the body limit, so it is decoded and validated (and
    // refused by Kubernetes' 256 KiB annotation limit), not dropped.
    let mut object = cloneset();
    object["metadata"]["annotations"] = json!({"example.com/blob": "x".repeat(6 * 1024 * 1024)});
    let response = validate(
        Workload::CloneSet,
        &review("CloneSet", "v1alpha1", "CREATE", object, None),
    );
    let (code, message) = denial(&response);
    assert_eq!(code, 422);
    assert!(
        message.starts_with("metadata.annotations: Too long"),
        "{message}"
    );
}

#[test]
fn a_protected_delete_without_old_object_is_allowed_and_a_cascading_one_with_replicas_is_not() {
    let response = validate(
        Workload::CloneSet,
        &review("CloneSet", "v1alpha1", "DELETE", Value::Null, None),
    );
    assert!(response.allowed);
    let mut old = cloneset();
    old["metadata"]["labels"] = json!({"policy.kruise.io/delete-protection": "Cascading"});
    let response = validate(
        Workload::CloneSet,
        &review(
            "CloneSet",
            "v1alpha1",
            "DELETE",
            Value::Null,
            Some(old.clone()),
        ),
    );
    assert_eq!(denial(&response).0, 403);
    old["spec"]["replicas"] = json!(0);
    let response = validate(
        Workload::CloneSet,
        &review("CloneSet", "v1alpha1", "DELETE", Value::Null, Some(old)),
    );
    assert!(response.allowed);
}

#[test]
fn v1alpha1_statefulsets_are_validated_in_their_v1beta1_form() {
    let mut object = cloneset();
    object["apiVersion"] = json!("apps.kruise.io/v1alpha1");
    object["kind"] = json!("StatefulSet");
    object["spec"]["updateStrategy"] = json!({"rollingUpdate": {"podUpdatePolicy": "InPlaceOnly"}});
    let response = validate(
        Workload::StatefulSet,
        &review("StatefulSet", "v1alpha1", "CREATE", object, None),
    );
    let (code, message) = denial(&response);
    assert_eq!(code, 422);
    assert!(
        message.contains("must contains InPlaceUpdateReady"),
        "{message}"
    );
}

#[test]
fn wrong_kinds_and_versions_are_refused() {
    let response = validate(
        Workload::DaemonSet,
        &review("DaemonSet", "v2", "CREATE", cloneset(), None),
    );
    assert_eq!(denial(&response).0, 400);
    let body = review("CloneSet", "v1alpha1", "CREATE", cloneset(), None);
    let (_, request) = decode_envelope(&body).unwrap();
    let response = mutate_workload(Workload::StatefulSet, &request);
    assert_eq!(denial(&response).0, 400);
}

#[test]
fn mutation_is_reinvocation_safe() {
    let body = review("CloneSet", "v1alpha1", "CREATE", cloneset(), None);
    let (_, request) = decode_envelope(&body).unwrap();
    let first = mutate_workload(Workload::CloneSet, &request);
    let mut object = cloneset();
    json_patch::patch(&mut object, &first.patch_operations().unwrap()).unwrap();
    let body = review("CloneSet", "v1alpha1", "CREATE", object, None);
    let (_, request) = decode_envelope(&body).unwrap();
    assert_eq!(
        mutate_workload(Workload::CloneSet, &request).patch_operations(),
        None
    );
}

/// Fractional percentages (`"12.5%"`): a CloneSet is admitted, with a warning for each field that
/// OpenKruise's controller cannot read (naming the value, what OpenKruise does and what this
/// controller does); `partition`, which OpenKruise's controller reads as a float too, gets none.
/// The StatefulSet and DaemonSet validators refuse these values (as OpenKruise's do), so no other
/// kind admits one.
#[test]
fn fractional_percentages_are_admitted_with_a_warning_where_kruise_reads_them_as_zero() {
    let mut object = cloneset();
    object["spec"]["replicas"] = json!(8);
    object["spec"]["updateStrategy"] = json!({"type": "InPlaceIfPossible",
        "partition": "12.5%", "maxUnavailable": "12.5%", "maxSurge": "25.5%"});
    object["spec"]["scaleStrategy"] = json!({"maxUnavailable": "37.5%"});
    let response = validate(
        Workload::CloneSet,
        &review("CloneSet", "v1alpha1", "CREATE", object, None),
    );
    assert!(response.allowed, "{response:?}");
    let fractional: Vec<&String> = response
        .warnings
        .iter()
        .filter(|w| w.contains("fractional"))
        .collect();
    assert_eq!(fractional.len(), 3, "{:#?}", response.warnings);
    for (warning, field, value) in [
        (fractional[0], "spec.updateStrategy.maxUnavailable", "12.5%"),
        (fractional[1], "spec.updateStrategy.maxSurge", "25.5%"),
        (fractional[2], "spec.scaleStrategy.maxUnavailable", "37.5%"),
    ] {
        assert!(
            warning.starts_with(&format!("{field}: \"{value}\"")),
            "{warning}"
        );
        assert!(warning.contains("OpenKruise's controller"), "{warning}");
        assert!(warning.contains("cannot parse it"), "{warning}");
        assert!(
            warning.contains("use 0") || warning.contains("uses 0"),
            "{warning}"
        );
    }
    assert!(fractional[1].contains("this one both"), "{}", fractional[1]);
    assert!(
        fractional[0].contains("updates no pod"),
        "{}",
        fractional[0]
    );
    assert!(
        fractional[0].contains("rolls the update"),
        "{}",
        fractional[0]
    );
    assert!(
        fractional[2].contains("creates no pod when scaling up"),
        "{}",
        fractional[2]
    );
    assert!(fractional[2].contains("and scales"), "{}", fractional[2]);
    assert!(!response.warnings.iter().any(|w| w.contains("partition")));

    let mut statefulset = cloneset();
    statefulset["kind"] = json!("StatefulSet");
    statefulset["apiVersion"] = json!("apps.kruise.io/v1beta1");
    statefulset["spec"]["podManagementPolicy"] = json!("Parallel");
    statefulset["spec"]["updateStrategy"] =
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "12.5%"}});
    let response = validate(
        Workload::StatefulSet,
        &review("StatefulSet", "v1beta1", "CREATE", statefulset, None),
    );
    let (code, message) = denial(&response);
    assert_eq!(code, 422);
    assert!(message.contains("maxUnavailable"), "{message}");

    let mut daemonset = cloneset();
    daemonset["kind"] = json!("DaemonSet");
    daemonset["spec"]
        .as_object_mut()
        .unwrap()
        .remove("replicas");
    daemonset["spec"]["updateStrategy"] =
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "12.5%"}});
    let response = validate(
        Workload::DaemonSet,
        &review("DaemonSet", "v1alpha1", "CREATE", daemonset, None),
    );
    let (_, message) = denial(&response);
    assert!(message.contains("maxUnavailable"), "{message}");
}

fn daemonset(version: &str) -> Value {
    json!({
        "apiVersion": format!("apps.kruise.io/{version}"), "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {"metadata": {"labels": {"app": "agent"}},
                         "spec": {"containers": [{"name": "agent", "image": "agent:1"}]}}
        }
    })
}

/// The defaulting answer to `object`, the object it makes, and the answer to that object
/// (which must add nothing).
fn mutate_twice(workload: Workload, kind: &str, version: &str, object: Value) -> Value {
    let body = review(kind, version, "CREATE", object.clone(), None);
    let (_, request) = decode_envelope(&body).unwrap();
    let first = mutate_workload(workload, &request);
    assert!(first.allowed, "{first:?}");
    let mut patched = object;
    if let Some(ops) = first.patch_operations() {
        json_patch::patch(&mut patched, &ops).unwrap();
    }
    let body = review(kind, version, "CREATE", patched.clone(), None);
    let (_, request) = decode_envelope(&body).unwrap();
    assert_eq!(mutate_workload(workload, &request).patch_operations(), None);
    patched
}

#[test]
fn daemonsets_of_either_version_are_defaulted_in_their_own_version() {
    let beta = mutate_twice(
        Workload::DaemonSet,
        "DaemonSet",
        "v1beta1",
        daemonset("v1beta1"),
    );
    assert_eq!(beta["apiVersion"], "apps.kruise.io/v1beta1");
    assert_eq!(beta["spec"]["burstReplicas"], 250);
    let rolling = &beta["spec"]["updateStrategy"]["rollingUpdate"];
    assert_eq!(rolling["rollingUpdateType"], "Standard");
    assert_eq!(rolling["maxUnavailable"], 1);

    // v1alpha1: OpenKruise's v1alpha1 webhook makes the deprecated Surging a surge; conversion
    // then stores it as Standard.
    let mut alpha = daemonset("v1alpha1");
    alpha["metadata"]["annotations"] =
        json!({"daemonset.kruise.io/progressive-create-pod": "true"});
    alpha["spec"]["updateStrategy"] = json!({"rollingUpdate": {"rollingUpdateType": "Surging"}});
    let alpha = mutate_twice(Workload::DaemonSet, "DaemonSet", "v1alpha1", alpha);
    let rolling = &alpha["spec"]["updateStrategy"]["rollingUpdate"];
    assert_eq!(
        (&rolling["maxSurge"], &rolling["maxUnavailable"]),
        (&json!(1), &json!(0))
    );
    assert_eq!(alpha["spec"].get("scaleStrategy"), None);
    assert_eq!(
        alpha["metadata"]["annotations"]["daemonset.kruise.io/progressive-create-pod"],
        "true"
    );
    let stored = crate::convert::convert(&alpha, "apps.kruise.io/v1beta1").unwrap();
    let rolling = &stored["spec"]["updateStrategy"]["rollingUpdate"];
    assert_eq!(rolling["rollingUpdateType"], "Standard");
    assert_eq!(stored["spec"]["scaleStrategy"]["partitionedScaling"], true);

    for (version, object) in [("v1beta1", beta), ("v1alpha1", alpha)] {
        let response = validate(
            Workload::DaemonSet,
            &review("DaemonSet", version, "CREATE", object, None),
        );
        assert!(response.allowed, "{version}: {response:?}");
    }
}

/// A v1alpha1 StatefulSet is defaulted as OpenKruise's v1alpha1 webhook does (no retention
/// policy), and the v1beta1 fields it carries in its annotation are judged with the rest.
#[test]
fn statefulsets_of_either_version_are_defaulted_in_their_own_version() {
    let mut alpha = crate::api::statefulset::tests::manifest("apps.kruise.io/v1alpha1");
    alpha.as_object_mut().unwrap().remove("status");
    let annotation = crate::convert::statefulset::V1BETA1_FIELDS_ANNOTATION;
    alpha["metadata"]["annotations"] = json!({annotation: r#"{"reserveOrdinals":[1]}"#});
    let defaulted = mutate_twice(Workload::StatefulSet, "StatefulSet", "v1alpha1", alpha);
    assert_eq!(
        defaulted["metadata"]["annotations"][annotation],
        r#"{"reserveOrdinals":[1]}"#
    );
    assert_eq!(
        defaulted["spec"]["template"]["spec"]["restartPolicy"],
        "Always"
    );
    let response = validate(
        Workload::StatefulSet,
        &review("StatefulSet", "v1alpha1", "CREATE", defaulted.clone(), None),
    );
    assert!(response.allowed, "{response:?}");
    let mut broken = defaulted;
    broken["metadata"]["annotations"][annotation] = json!(r#"{"reserveOrdinals": 1}"#);
    let response = validate(
        Workload::StatefulSet,
        &review("StatefulSet", "v1alpha1", "CREATE", broken, None),
    );
    let (code, message) = denial(&response);
    assert_eq!(code, 422);
    assert!(
        message.starts_with(&format!(
            "metadata.annotations[{annotation}]: Invalid value: "
        )),
        "{message}"
    );
}

/// A v1beta1 CloneSet (OpenKruise's main branch) is defaulted in v1beta1 and judged in the
/// v1alpha1 form this project works in.
#[test]
fn clonesets_of_either_version_are_defaulted_in_their_own_version() {
    let mut beta = cloneset();
    beta["apiVersion"] = json!("apps.kruise.io/v1beta1");
    beta["spec"]["updateStrategy"] =
        json!({"rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible"}});
    beta["spec"]["scaleStrategy"] = json!({"excludePreparingDelete": true});
    let defaulted = mutate_twice(Workload::CloneSet, "CloneSet", "v1beta1", beta);
    let rolling = &defaulted["spec"]["updateStrategy"]["rollingUpdate"];
    assert_eq!(defaulted["spec"]["updateStrategy"]["type"], "RollingUpdate");
    assert_eq!(rolling["maxUnavailable"], "20%");
    assert_eq!(rolling["partition"], 0);
    assert_eq!(rolling["inPlaceUpdateStrategy"], json!({}));
    assert_eq!(
        defaulted["spec"]["scaleStrategy"]["excludePreparingDelete"],
        true
    );
    assert_eq!(defaulted["metadata"].get("labels"), None);
    let response = validate(
        Workload::CloneSet,
        &review("CloneSet", "v1beta1", "CREATE", defaulted.clone(), None),
    );
    assert!(response.allowed, "{response:?}");
    // An unknown policy is refused by name.
    let mut bad = defaulted;
    bad["spec"]["updateStrategy"]["rollingUpdate"]["podUpdatePolicy"] = json!("Sideways");
    let response = validate(
        Workload::CloneSet,
        &review("CloneSet", "v1beta1", "CREATE", bad, None),
    );
    let (code, message) = denial(&response);
    assert_eq!(code, 422);
    assert!(message.contains("\"Sideways\""), "{message}");
}
