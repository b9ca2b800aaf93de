//! The CustomResourceDefinitions of `apps.kruise.io`, generated from the Rust types.
//!
//! `kruise-webhook crds --output-dir deploy/crds` writes them; a test fails when the committed
//! files differ from what the code generates.

use std::path::Path;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceConversion, CustomResourceDefinition, ServiceReference, WebhookClientConfig,
    WebhookConversion,
};
use kube::CustomResourceExt;

use crate::api::cloneset::{self, CloneSet};
use crate::api::daemonset::{self, DaemonSet};
use crate::api::statefulset::{self, StatefulSet};
use crate::api::{SidecarSet, keys, sidecarset};

/// Every CRD this project owns.
pub fn all() -> Vec<CustomResourceDefinition> {
    vec![
        served_in_two_versions(
            sidecarset::v1alpha1::SidecarSet::crd(),
            SidecarSet::crd(),
            "v1beta1",
        ),
        served_in_two_versions(
            CloneSet::crd(),
            cloneset::v1beta1::CloneSet::crd(),
            "v1alpha1",
        ),
        served_in_two_versions(
            statefulset::v1alpha1::StatefulSet::crd(),
            StatefulSet::crd(),
            "v1beta1",
        ),
        served_in_two_versions(
            daemonset::v1alpha1::DaemonSet::crd(),
            DaemonSet::crd(),
            "v1beta1",
        ),
    ]
    .into_iter()
    .map(with_clean_schemas)
    .collect()
}

/// Where the apiserver sends the CRDs' ConversionReviews: the webhook's Service, as `deploy/`
/// installs it. The `certs` job adds the caBundle (the manifests carry none).
pub const CONVERSION_SERVICE_NAMESPACE: &str = "kruise-system";

/// One CRD serving both versions, each with its own schema, columns and subresources, `storage`
/// stored, converted by the webhook's `/convert` as OpenKruise's CRDs are.
fn served_in_two_versions(
    v1alpha1: CustomResourceDefinition,
    v1beta1: CustomResourceDefinition,
    storage: &str,
) -> CustomResourceDefinition {
    // Merging only fails on mismatched groups, kinds or scopes, which each pair shares.
    let mut crd =
        kube::core::crd::merge_crds(vec![v1alpha1, v1beta1.clone()], storage).unwrap_or(v1beta1);
    // In name order, as OpenKruise's (controller-gen) CRDs list them.
    crd.spec.versions.sort_by(|a, b| a.name.cmp(&b.name));
    crd.spec.conversion = Some(CustomResourceConversion {
        strategy: "Webhook".to_string(),
        webhook: Some(WebhookConversion {
            client_config: Some(WebhookClientConfig {
                service: Some(ServiceReference {
                    name: crate::cli::DEFAULT_SERVICE_NAME.to_string(),
                    namespace: CONVERSION_SERVICE_NAMESPACE.to_string(),
                    path: Some(keys::PATH_CONVERT.to_string()),
                    port: None,
                }),
                ca_bundle: None,
                url: None,
            }),
            conversion_review_versions: vec!["v1".to_string(), "v1beta1".to_string()],
        }),
    });
    crd
}

/// Rewrites, in every object of the CRD, what schemars emits and the apiserver or `kubectl
/// explain` do not take as OpenKruise's CRDs have it: see the three edits below.
fn with_clean_schemas(crd: CustomResourceDefinition) -> CustomResourceDefinition {
    fn walk(value: &mut serde_json::Value) {
        match value {
            serde_json::Value::Object(map) => {
                drop_empty_default(map);
                drop_nullable(map);
                bound_int32(map);
                map.values_mut().for_each(walk);
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(walk),
            _ => {}
        }
    }
    let Ok(mut value) = serde_json::to_value(&crd) else {
        return crd;
    };
    walk(&mut value);
    serde_json::from_value(value).unwrap_or(crd)
}

type Object = serde_json::Map<String, serde_json::Value>;

/// Drops `nullable: true`, which schemars gives every `Option` field. A v1.20 apiserver publishes
/// a nullable field to OpenAPI v2 without its type and properties (`ToStructuralOpenAPIV2`), so
/// `kubectl explain` shows `<>` and cannot descend into it; OpenKruise's CRDs have none. The
/// apiserver drops a `null` sent for a field that is not nullable (`PruneNonNullableNullsWithoutDefaults`),
/// which the types read as unset, as before.
fn drop_nullable(map: &mut Object) {
    if map.get("nullable") == Some(&serde_json::Value::Bool(true)) {
        map.remove("nullable");
    }
}

/// Adds the `int32` range as `minimum`/`maximum` to every `format: int32` integer that has none:
/// the apiserver does not enforce the format, so without them it stores values such as
/// `revisionHistoryLimit: 99999999999` that the Rust types (`i32`) cannot read.
fn bound_int32(map: &mut Object) {
    let int32 = map.get("type").and_then(|t| t.as_str()) == Some("integer")
        && map.get("format").and_then(|f| f.as_str()) == Some("int32");
    if int32 {
        map.entry("minimum").or_insert(i32::MIN.into());
        map.entry("maximum").or_insert(i32::MAX.into());
    }
}

/// Drops the empty defaults (`""`, `{}`, `[]`, `null`) schemars emits for `#[serde(default)]`
/// fields: a v1.20 apiserver reads an empty-string default as null and refuses the CRD ("must be
/// of type string"), and `{}` would make the apiserver store fields the user never wrote (say
/// `scaleStrategy: {}`), which OpenKruise's CRDs do not do. The types decode a missing field the
/// same way, and the webhooks' defaulting fills what matters.
fn drop_empty_default(map: &mut Object) {
    let empty_default = map.get("default").is_some_and(|d| match d {
        serde_json::Value::Null => true,
        serde_json::Value::String(s) => s.is_empty(),
        serde_json::Value::Object(o) => o.is_empty(),
        serde_json::Value::Array(a) => a.is_empty(),
        _ => false,
    });
    if empty_default {
        map.remove("default");
    }
}

/// File name of a CRD under `deploy/crds/`: `<plural>.<group>.yaml`.
pub fn file_name(crd: &CustomResourceDefinition) -> String {
    format!("{}.yaml", crd.metadata.name.as_deref().unwrap_or("unnamed"))
}

/// The YAML of one CRD, with a header saying it is generated.
pub fn render(crd: &CustomResourceDefinition) -> Result<String, crate::yaml::SerializeError> {
    Ok(format!(
        "# Generated by `kruise-webhook crds --output-dir deploy/crds`; do not edit.\n{}",
        crate::yaml::to_string(crd)?
    ))
}

/// Name of the kustomization that lists the generated CRD files (`deploy/` includes the directory).
pub const KUSTOMIZATION: &str = "kustomization.yaml";

/// The kustomization listing every CRD file, so `deploy/kustomization.yaml` picks up new CRDs
/// without being edited.
pub fn kustomization(crds: &[CustomResourceDefinition]) -> String {
    let mut names: Vec<String> = crds.iter().map(file_name).collect();
    names.sort();
    let mut text = String::from(
        "# Generated by `kruise-webhook crds --output-dir deploy/crds`; do not edit.\n\
         apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n",
    );
    for name in names {
        text.push_str(&format!("  - {name}\n"));
    }
    text
}

/// Writes every CRD into `dir`, and the kustomization listing them.
pub fn write_all(dir: &Path) -> Result<Vec<String>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let crds = all();
    let mut files = Vec::new();
    for crd in &crds {
        let name = file_name(crd);
        let yaml = render(crd).map_err(|e| format!("rendering {name}: {e}"))?;
        files.push((name, yaml));
    }
    files.push((KUSTOMIZATION.to_string(), kustomization(&crds)));
    let mut written = Vec::new();
    for (name, content) in files {
        let path = dir.join(&name);
        std::fs::write(&path, content).map_err(|e| format!("writing {}: {e}", path.display()))?;
        written.push(name);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn committed_crds_are_current() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/crds");
        for crd in all() {
            let name = file_name(&crd);
            let committed = std::fs::read_to_string(dir.join(&name)).unwrap_or_default();
            assert!(
                committed == render(&crd).unwrap(),
                "deploy/crds/{name} is stale: run `cargo run -- crds --output-dir deploy/crds`"
            );
        }
        let committed = std::fs::read_to_string(dir.join(KUSTOMIZATION)).unwrap_or_default();
        assert!(
            committed == kustomization(&all()),
            "deploy/crds/{KUSTOMIZATION} is stale: run `cargo run -- crds --output-dir deploy/crds`"
        );
    }

    /// Every `int32` of every CRD carries its range, so the apiserver refuses what the types
    /// cannot read.
    #[test]
    fn every_int32_is_bounded() {
        fn walk(value: &serde_json::Value, path: &str, found: &mut Vec<String>) {
            match value {
                serde_json::Value::Object(map) => {
                    if map.get("format").and_then(|f| f.as_str()) == Some("int32") {
                        let min = map.get("minimum").and_then(|m| m.as_f64());
                        let max = map.get("maximum").and_then(|m| m.as_f64());
                        assert_eq!(min, Some(f64::from(i32::MIN)), "{path}");
                        assert_eq!(max, Some(f64::from(i32::MAX)), "{path}");
                        found.push(path.to_string());
                    }
                    for (key, child) in map {
                        walk(child, &format!("{path}.{key}"), found);
                    }
                }
                serde_json::Value::Array(items) => {
                    for (i, child) in items.iter().enumerate() {
                        walk(child, &format!("{path}[{i}]"), found);
                    }
                }
                _ => {}
            }
        }
        let mut found = Vec::new();
        for crd in all() {
            walk(
                &serde_json::to_value(&crd).unwrap(),
                &file_name(&crd),
                &mut found,
            );
        }
        let limit = "sidecarsets.apps.kruise.io.yaml.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.revisionHistoryLimit";
        assert!(found.iter().any(|p| p == limit), "{found:?}");
    }

    /// The published schema as a v1.20 `kubectl explain` reads it (the apiserver's OpenAPI v2,
    /// `ToStructuralOpenAPIV2`): no field is `nullable` (it would be published without type and
    /// properties), every field has a description, and every field has a type except the
    /// int-or-strings (published without one on every apiserver) and the schemaless pod and
    /// claim templates (whose type the apiserver drops, as for OpenKruise's).
    #[test]
    fn every_field_shows_a_type_and_a_description_in_kubectl_explain() {
        fn walk(schema: &serde_json::Value, path: &str, problems: &mut Vec<String>) {
            let Some(map) = schema.as_object() else {
                return;
            };
            if map.contains_key("nullable") {
                problems.push(format!("{path}: nullable"));
            }
            if let Some(properties) = map.get("properties").and_then(|p| p.as_object()) {
                for (name, field) in properties {
                    let field_path = format!("{path}.{name}");
                    let has = |key: &str| field.get(key).is_some();
                    if field
                        .get("description")
                        .and_then(|d| d.as_str())
                        .is_none_or(|d| d.trim().is_empty())
                    {
                        problems.push(format!("{field_path}: no description"));
                    }
                    let untyped_by_design = has("x-kubernetes-int-or-string")
                        || has("x-kubernetes-preserve-unknown-fields");
                    if !has("type") && !untyped_by_design {
                        problems.push(format!("{field_path}: no type"));
                    }
                    walk(field, &field_path, problems);
                }
            }
            for key in ["items", "additionalProperties"] {
                if let Some(inner) = map.get(key) {
                    walk(inner, &format!("{path}[]"), problems);
                }
            }
        }
        let mut problems = Vec::new();
        for crd in all() {
            for version in &crd.spec.versions {
                let schema = serde_json::to_value(&version.schema).unwrap();
                let root = &schema["openAPIV3Schema"];
                let path = format!("{}/{}", file_name(&crd), version.name);
                for part in ["spec", "status"] {
                    walk(
                        &root["properties"][part],
                        &format!("{path}.{part}"),
                        &mut problems,
                    );
                }
            }
        }
        assert!(problems.is_empty(), "{problems:#?}");
    }

    #[test]
    fn sidecarset_crd_shape() {
        let crd = find("sidecarsets.apps.kruise.io");
        assert_eq!(crd.spec.scope, "Cluster");
        for version in &crd.spec.versions {
            assert!(version.subresources.as_ref().unwrap().status.is_some());
            let columns: Vec<_> = version
                .additional_printer_columns
                .iter()
                .flatten()
                .map(|c| c.name.as_str())
                .collect();
            assert_eq!(columns, vec!["MATCHED", "UPDATED", "READY", "AGE"]);
        }
        let spec_fields = |version: usize| -> Vec<String> {
            let schema = serde_json::to_value(&crd.spec.versions[version].schema).unwrap();
            let spec = &schema["openAPIV3Schema"]["properties"]["spec"]["properties"];
            spec.as_object().unwrap().keys().cloned().collect()
        };
        let (alpha, beta) = (spec_fields(0), spec_fields(1));
        assert!(alpha.contains(&"namespace".into()) && !alpha.contains(&"customVersion".into()));
        assert!(!beta.contains(&"namespace".into()) && beta.contains(&"customVersion".into()));
    }

    fn find(name: &str) -> CustomResourceDefinition {
        all()
            .into_iter()
            .find(|c| c.metadata.name.as_deref() == Some(name))
            .unwrap_or_else(|| panic!("{name} missing"))
    }

    /// Served and stored versions as OpenKruise v1.9.0 (its main branch for CloneSet, which
    /// stores v1alpha1 here: docs/conversion.md), converted by the webhook's `/convert` behind
    /// the Service `deploy/` installs; the caBundle is left to the `certs` job.
    #[test]
    fn versions_and_conversion_as_openkruise_serves_them() {
        let table = [
            ("sidecarsets.apps.kruise.io", "v1beta1"),
            ("statefulsets.apps.kruise.io", "v1beta1"),
            ("daemonsets.apps.kruise.io", "v1beta1"),
            ("clonesets.apps.kruise.io", "v1alpha1"),
        ];
        for (name, storage) in table {
            let crd = find(name);
            let versions: Vec<(&str, bool, bool)> = crd
                .spec
                .versions
                .iter()
                .map(|v| (v.name.as_str(), v.served, v.storage))
                .collect();
            assert_eq!(
                versions,
                [
                    ("v1alpha1", true, storage == "v1alpha1"),
                    ("v1beta1", true, storage == "v1beta1")
                ],
                "{name}"
            );
            let conversion = serde_json::to_value(&crd.spec.conversion).unwrap();
            assert_eq!(
                conversion,
                serde_json::json!({
                    "strategy": "Webhook",
                    "webhook": {
                        "clientConfig": {"service": {
                            "name": "kruise-webhook-service",
                            "namespace": "kruise-system",
                            "path": "/convert"
                        }},
                        "conversionReviewVersions": ["v1", "v1beta1"]
                    }
                }),
                "{name}"
            );
        }
    }

    #[test]
    fn workload_crds_shape() {
        let crds = all();
        let find = |name: &str| {
            crds.iter()
                .find(|c| c.metadata.name.as_deref() == Some(name))
                .unwrap_or_else(|| panic!("{name} missing"))
        };
        let columns = |crd: &CustomResourceDefinition, version: usize| -> Vec<String> {
            crd.spec.versions[version]
                .additional_printer_columns
                .iter()
                .flatten()
                .map(|c| c.name.clone())
                .collect()
        };
        let cloneset = find("clonesets.apps.kruise.io");
        assert_eq!(cloneset.spec.scope, "Namespaced");
        let subresources = cloneset.spec.versions[0].subresources.as_ref().unwrap();
        assert!(subresources.status.is_some() && subresources.scale.is_some());
        assert_eq!(
            columns(cloneset, 0)[..7],
            [
                "DESIRED",
                "UPDATED",
                "UPDATED_READY",
                "UPDATED_AVAILABLE",
                "READY",
                "TOTAL",
                "AGE"
            ]
        );
        let statefulset = find("statefulsets.apps.kruise.io");
        let versions: Vec<(&str, bool, bool)> = statefulset
            .spec
            .versions
            .iter()
            .map(|v| (v.name.as_str(), v.served, v.storage))
            .collect();
        assert!(versions.contains(&("v1beta1", true, true)), "{versions:?}");
        assert!(
            versions.contains(&("v1alpha1", true, false)),
            "{versions:?}"
        );
        let daemonset = find("daemonsets.apps.kruise.io");
        assert_eq!(
            columns(daemonset, 0)[..6],
            [
                "DESIRED",
                "CURRENT",
                "READY",
                "UP-TO-DATE",
                "AVAILABLE",
                "AGE"
            ]
        );
        // No empty defaults: the apiserver must store exactly what users wrote.
        for crd in &crds {
            let yaml = render(crd).unwrap();
            for empty in ["default: {}", "default: []", "default: ''", "default: null"] {
                assert!(!yaml.contains(empty), "{}: {empty}", file_name(crd));
            }
        }
    }
}
