use super::*;
use serde_json::json;

/// OpenKruise v1.9.0's CRDs as the switch e2e lays them out.
fn openkruise() -> Vec<CustomResourceDefinition> {
    crate::yaml::from_multiple(include_str!(
        "../../../scripts/fixtures/openkruise-v1.9.0/crds.yaml"
    ))
    .unwrap()
}

fn ours(name: &str) -> CustomResourceDefinition {
    crate::crds::all()
        .into_iter()
        .find(|crd| crd.metadata.name.as_deref() == Some(name))
        .unwrap()
}

fn found(name: &str) -> CustomResourceDefinition {
    openkruise()
        .into_iter()
        .find(|crd| crd.metadata.name.as_deref() == Some(name))
        .unwrap()
}

/// `crd` as the apiserver stores it once applied: its defaults filled in, metadata and status of
/// its own, the conversion sent where the install (or the e2e harness) points it.
fn as_stored(crd: &CustomResourceDefinition, stored: &[&str]) -> CustomResourceDefinition {
    let mut value = serde_json::to_value(crd).unwrap();
    let kind = crd.spec.names.kind.clone();
    value["spec"]["names"]["singular"] = json!(kind.to_lowercase());
    value["spec"]["names"]["listKind"] = json!(format!("{kind}List"));
    value["spec"]["preserveUnknownFields"] = json!(false);
    if value["spec"]["conversion"]["strategy"] == "Webhook" {
        value["spec"]["conversion"]["webhook"]["clientConfig"] =
            json!({"url": "https://127.0.0.1:9443/convert", "caBundle": "Q0E="});
    }
    value["metadata"]["uid"] = json!("uid-1");
    value["metadata"]["resourceVersion"] = json!("42");
    value["metadata"]["annotations"] = json!({"kept": "yes"});
    value["status"] = json!({"storedVersions": stored});
    serde_json::from_value(value).unwrap()
}

#[test]
fn ours_as_the_apiserver_stores_it_does_not_differ() {
    for crd in crate::crds::all() {
        let stored = as_stored(&crd, &["v1beta1"]);
        let state = state(&stored, &crd);
        assert!(!state.spec_differs, "{}", state.name);
        assert_eq!(state.stored_versions, vec!["v1beta1"]);
        assert_eq!(state.wanted_versions, vec!["v1alpha1", "v1beta1"]);
    }
}

#[test]
fn openkruise_crds_differ_and_keep_their_stored_versions() {
    for crd in openkruise()
        .iter()
        .filter(|crd| crd.spec.group == "apps.kruise.io")
    {
        let name = crd.metadata.name.clone().unwrap();
        let found = as_stored(crd, &["v1beta1"]);
        let state = state(&found, &ours(&name));
        assert!(state.spec_differs, "{name}");
        assert_eq!(state.name, name);
    }
}

#[test]
fn a_changed_column_is_a_difference() {
    let crd = ours("clonesets.apps.kruise.io");
    let mut found = as_stored(&crd, &["v1alpha1"]);
    found.spec.versions[0].additional_printer_columns = None;
    assert!(state(&found, &crd).spec_differs);
}

#[test]
fn the_replacement_keeps_metadata_and_where_conversion_goes() {
    let wanted = ours("sidecarsets.apps.kruise.io");
    let mut found = as_stored(&found("sidecarsets.apps.kruise.io"), &["v1beta1"]);
    let kept = found
        .spec
        .conversion
        .as_mut()
        .and_then(|c| c.webhook.as_mut())
        .and_then(|w| w.client_config.clone())
        .unwrap();
    let replaced = replacement(&found, &wanted);
    assert_eq!(replaced.metadata, found.metadata);
    assert!(replaced.status.is_none());
    assert_eq!(
        crate::tls::bundle_targets::conversion_client_config(&replaced),
        Some(&kept)
    );
    // Apart from where conversion goes, the spec is ours: nothing left to replace.
    assert!(!state(&as_stored(&replaced, &["v1beta1"]), &wanted).spec_differs);
    assert_eq!(replaced.spec.versions, wanted.spec.versions);
}

#[test]
fn a_crd_without_conversion_gets_ours() {
    // OpenKruise v1.9.0's CloneSet CRD serves v1alpha1 alone, without conversion.
    let wanted = ours("clonesets.apps.kruise.io");
    let found = as_stored(&found("clonesets.apps.kruise.io"), &["v1alpha1"]);
    assert!(found.spec.conversion.is_none());
    let replaced = replacement(&found, &wanted);
    assert_eq!(replaced.spec, wanted.spec);
}
