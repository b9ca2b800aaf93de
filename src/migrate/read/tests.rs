use super::*;
use k8s_openapi::api::apps::v1::DeploymentSpec;
use serde_json::json;

fn crds(text: &str) -> Vec<CustomResourceDefinition> {
    crate::yaml::from_multiple(text).unwrap()
}

const OPENKRUISE_CRDS: &str = include_str!("../../../scripts/fixtures/openkruise-v1.9.0/crds.yaml");

#[test]
fn the_manager_asks_for_one_replica_when_unset() {
    let mut deployment = Deployment::default();
    assert_eq!(manager_replicas(&deployment), 1);
    deployment.spec = Some(DeploymentSpec {
        replicas: Some(0),
        ..DeploymentSpec::default()
    });
    assert_eq!(manager_replicas(&deployment), 0);
}

#[test]
fn each_of_our_crds_is_found_or_named_missing() {
    let cluster: Vec<_> = crds(OPENKRUISE_CRDS)
        .into_iter()
        .filter(|crd| crd.metadata.name.as_deref() != Some("clonesets.apps.kruise.io"))
        .collect();
    let (states, missing) = crd_states(&cluster, &crate::crds::all());
    assert_eq!(missing, vec!["clonesets.apps.kruise.io"]);
    let names: Vec<_> = states.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "sidecarsets.apps.kruise.io",
            "statefulsets.apps.kruise.io",
            "daemonsets.apps.kruise.io"
        ]
    );
}

#[test]
fn kinds_not_run_are_openkruise_groups_but_ours_read_in_their_stored_version() {
    let mut cluster = crds(OPENKRUISE_CRDS);
    cluster.extend(crds(
        r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true}]
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: workloadspreads.apps.kruise.io}
spec:
  group: apps.kruise.io
  names: {kind: WorkloadSpread, plural: workloadspreads}
  scope: Namespaced
  versions:
    - {name: v1alpha1, served: true, storage: false}
    - {name: v1beta1, served: true, storage: true}
"#,
    ));
    let found: Vec<_> = unrun_resources(&cluster, &crate::crds::all())
        .into_iter()
        .map(|(kind, resource)| (kind, resource.api_version, resource.plural))
        .collect();
    assert_eq!(
        found,
        [
            (
                "PodUnavailableBudget".to_string(),
                "policy.kruise.io/v1alpha1".to_string(),
                "podunavailablebudgets".to_string()
            ),
            (
                "WorkloadSpread".to_string(),
                "apps.kruise.io/v1beta1".to_string(),
                "workloadspreads".to_string()
            ),
        ]
    );
}

fn sidecarset(value: serde_json::Value) -> DynamicObject {
    serde_json::from_value(value).unwrap()
}

#[test]
fn sidecarsets_the_webhooks_would_not_serve_are_named_with_why() {
    let served = sidecarset(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet",
        "metadata": {"name": "mesh"},
        "spec": {"selector": {"matchLabels": {"app": "web"}},
                 "containers": [{"name": "proxy", "image": "proxy:v1"}]},
    }));
    let undecodable = sidecarset(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet",
        "metadata": {"name": "broken"},
        "spec": {"containers": "not a list"},
    }));
    let unserved = unserved_sidecarsets(&[served.clone(), undecodable]);
    assert_eq!(unserved.len(), 1, "{unserved:?}");
    assert_eq!(unserved[0].sidecarset, "broken");
    assert!(
        unserved[0].reason.contains("spec.containers"),
        "{unserved:?}"
    );
    assert!(unserved_sidecarsets(&[served]).is_empty());
}

#[test]
fn a_refused_read_names_what_and_why() {
    let error = kube::Error::Api(Box::new(
        kube::core::Status::failure("deployments.apps is forbidden", "Forbidden").with_code(403),
    ));
    let unreadable = unreadable(
        "Deployment kruise-system/kruise-controller-manager".into(),
        error,
    );
    assert_eq!(
        unreadable.reason,
        "403 Forbidden: deployments.apps is forbidden"
    );
}
