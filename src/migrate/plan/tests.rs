use super::*;
use serde_json::json;

const SERVED: &[&str] = &["/mutate-pod", "/validate-apps-kruise-io-v1alpha1-cloneset"];

fn validating() -> ValidatingWebhookConfiguration {
    let entry = |name: &str, path: &str| {
        json!({"name": name, "sideEffects": "None", "admissionReviewVersions": ["v1"],
               "clientConfig": {"service": {"name": "kruise-webhook-service",
                                            "namespace": "kruise-system", "path": path}}})
    };
    serde_json::from_value(json!({
        "metadata": {"name": "kruise-validating-webhook-configuration"},
        "webhooks": [entry("vcloneset.kb.io", "/validate-apps-kruise-io-v1alpha1-cloneset"),
                     entry("vpod.kb.io", "/validate-pod"),
                     entry("vpodeviction.kb.io", "/validate-pod-eviction")],
    }))
    .unwrap()
}

fn crd(name: &str, stored: &[&str], wanted: &[&str], differs: bool) -> CrdState {
    CrdState {
        name: name.to_string(),
        stored_versions: stored.iter().map(|s| s.to_string()).collect(),
        wanted_versions: wanted.iter().map(|s| s.to_string()).collect(),
        spec_differs: differs,
    }
}

fn openkruise_cluster() -> Snapshot {
    Snapshot {
        manager: Manager::Replicas(2),
        validating: vec![validating()],
        crds: vec![crd(
            "clonesets.apps.kruise.io",
            &["v1alpha1"],
            &["v1alpha1"],
            true,
        )],
        unrun: vec![UnrunKind {
            kind: "PodUnavailableBudget".into(),
            objects: vec!["default/web".into()],
        }],
        ..Snapshot::default()
    }
}

/// What the cluster holds once every step ran.
fn applied(snapshot: &Snapshot, plan: &Plan) -> Snapshot {
    let mut next = snapshot.clone();
    for step in &plan.steps {
        match step {
            Step::ScaleManagerToZero { .. } => next.manager = Manager::Replicas(0),
            Step::RemoveEntries { entries, .. } => {
                for config in &mut next.validating {
                    if let Some(webhooks) = &mut config.webhooks {
                        webhooks.retain(|w| !entries.contains(&w.name));
                    }
                }
            }
            Step::ReplaceCrd { name } => {
                for crd in next.crds.iter_mut().filter(|c| &c.name == name) {
                    crd.spec_differs = false;
                }
            }
        }
    }
    next
}

fn replaces_no_crd(plan: &Plan) -> bool {
    !plan
        .steps
        .iter()
        .any(|s| matches!(s, Step::ReplaceCrd { .. }))
}

#[test]
fn an_openkruise_cluster_gets_its_steps_in_order() {
    let plan = plan(&openkruise_cluster(), SERVED);
    assert!(!plan.blocked);
    assert_eq!(
        plan.steps,
        vec![
            Step::ScaleManagerToZero {
                deployment: "kruise-system/kruise-controller-manager".into()
            },
            Step::RemoveEntries {
                kind: ConfigurationKind::ValidatingWebhookConfiguration,
                configuration: "kruise-validating-webhook-configuration".into(),
                entries: vec!["vpod.kb.io".into(), "vpodeviction.kb.io".into()],
            },
            Step::ReplaceCrd {
                name: "clonesets.apps.kruise.io".into()
            },
        ]
    );
    let text: Vec<String> = plan.findings.iter().map(ToString::to_string).collect();
    assert!(text[1].contains("vpod.kb.io (/validate-pod)"), "{text:?}");
    assert!(
        text.iter()
            .any(|t| t.contains("PodUnavailableBudget") && t.contains("default/web"))
    );
}

#[test]
fn a_second_apply_does_nothing() {
    let snapshot = openkruise_cluster();
    let first = plan(&snapshot, SERVED);
    let second = plan(&applied(&snapshot, &first), SERVED);
    assert!(second.steps.is_empty(), "{:?}", second.steps);
    // What it cannot change is still reported.
    assert!(matches!(
        second.findings[..],
        [Finding::UnrunObjects { .. }]
    ));
}

#[test]
fn a_stored_version_not_served_blocks_every_crd_replacement() {
    let mut snapshot = openkruise_cluster();
    snapshot.crds.push(crd(
        "daemonsets.apps.kruise.io",
        &["v1alpha1", "v1beta1"],
        &["v1alpha1"],
        true,
    ));
    let plan = plan(&snapshot, SERVED);
    assert!(plan.blocked);
    assert!(replaces_no_crd(&plan));
    assert!(plan.findings.contains(&Finding::StoredVersionNotServed {
        crd: "daemonsets.apps.kruise.io".into(),
        versions: vec!["v1beta1".into()],
    }));
}

#[test]
fn a_cluster_already_switched_has_nothing_to_do() {
    let snapshot = Snapshot {
        manager: Manager::Replicas(0),
        crds: vec![crd(
            "sidecarsets.apps.kruise.io",
            &["v1beta1"],
            &["v1alpha1", "v1beta1"],
            false,
        )],
        ..Snapshot::default()
    };
    assert_eq!(plan(&snapshot, SERVED), Plan::default());
}

#[test]
fn the_plan_serializes_for_json_output() {
    let value = serde_json::to_value(plan(&openkruise_cluster(), SERVED)).unwrap();
    let deployment = "kruise-system/kruise-controller-manager";
    assert_eq!(
        value["steps"][0],
        json!({"step": "scaleManagerToZero", "deployment": deployment})
    );
    assert_eq!(
        value["findings"][0],
        json!({"finding": "managerRunning", "deployment": deployment, "replicas": 2})
    );
}

#[test]
fn what_could_not_be_read_blocks_the_switch() {
    let mut snapshot = openkruise_cluster();
    snapshot.unreadable.push(Unreadable {
        what: "Deployment kruise-system/kruise-controller-manager".into(),
        reason: "403 Forbidden: deployments.apps is forbidden".into(),
    });
    snapshot.manager = Manager::Unread;
    let plan = plan(&snapshot, SERVED);
    assert!(plan.blocked);
    assert!(replaces_no_crd(&plan));
    // Not read is not absent.
    assert!(
        !plan
            .findings
            .iter()
            .any(|f| matches!(f, Finding::ManagerNotFound { .. }))
    );
    let text = plan.findings[0].to_string();
    assert!(
        text.contains("could not read Deployment kruise-system/kruise-controller-manager")
            && text.contains("403 Forbidden"),
        "{text}"
    );
}

#[test]
fn a_missing_manager_or_crd_is_said_and_asks_for_no_step() {
    let snapshot = Snapshot {
        manager: Manager::Absent,
        missing_crds: vec!["clonesets.apps.kruise.io".into()],
        ..Snapshot::default()
    };
    let plan = plan(&snapshot, SERVED);
    assert!(plan.steps.is_empty() && !plan.blocked);
    assert_eq!(
        plan.findings,
        vec![
            Finding::ManagerNotFound {
                deployment: "kruise-system/kruise-controller-manager".into()
            },
            Finding::CrdNotInstalled {
                crd: "clonesets.apps.kruise.io".into()
            },
        ]
    );
}

#[test]
fn long_lists_of_objects_are_cut_in_text() {
    let finding = Finding::UnrunObjects {
        kind: "WorkloadSpread".into(),
        objects: (0..12).map(|i| format!("default/ws-{i}")).collect(),
    };
    let text = finding.to_string();
    assert!(text.starts_with("12 WorkloadSpread object(s)"), "{text}");
    assert!(text.contains("default/ws-9 and 2 more"), "{text}");
    assert!(!text.contains("ws-10"), "{text}");
}
