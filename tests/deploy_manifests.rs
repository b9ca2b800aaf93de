//! The kustomize base in `deploy/`: every manifest parses, and the invariants the README promises
//! hold (hardened pods, two replicas, probes on the admin port, webhook settings, paths the router
//! serves).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kruise_webhook::admission::SERVED_PATHS;
use kruise_webhook::k8s::selector::{self, Labels};
use serde_json::Value;

fn deploy_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy")
}

/// The `resources` of a kustomization, in order.
fn kustomization_resources(dir: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join("kustomization.yaml"))
        .unwrap_or_else(|e| panic!("{}/kustomization.yaml: {e}", dir.display()));
    let value: Value = kruise_webhook::yaml::from_str(&text).unwrap();
    value["resources"]
        .as_array()
        .unwrap_or_else(|| panic!("{}: no resources", dir.display()))
        .iter()
        .map(|r| r.as_str().unwrap().to_string())
        .collect()
}

/// Every document the base renders (directories are followed through their kustomization).
fn documents(dir: &Path) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for resource in kustomization_resources(dir) {
        let path = dir.join(&resource);
        if path.is_dir() {
            out.extend(documents(&path));
            continue;
        }
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let values: Vec<Value> = kruise_webhook::yaml::from_multiple(&text)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for value in values {
            if !value.is_null() {
                out.push((path.display().to_string(), value));
            }
        }
    }
    out
}

fn of_kind<'a>(docs: &'a [(String, Value)], kind: &str) -> Vec<&'a Value> {
    docs.iter()
        .map(|(_, v)| v)
        .filter(|v| v["kind"] == kind)
        .collect()
}

fn one<'a>(docs: &'a [(String, Value)], kind: &str) -> &'a Value {
    let found = of_kind(docs, kind);
    assert_eq!(found.len(), 1, "expected exactly one {kind}");
    found[0]
}

/// The one object of `kind` named `name` (the certificate job brings its own ServiceAccount and
/// roles, so kinds alone are ambiguous).
fn named<'a>(docs: &'a [(String, Value)], kind: &str, name: &str) -> &'a Value {
    let found: Vec<_> = of_kind(docs, kind)
        .into_iter()
        .filter(|v| v["metadata"]["name"] == name)
        .collect();
    assert_eq!(found.len(), 1, "expected exactly one {kind} {name}");
    found[0]
}

fn strings(value: &Value) -> BTreeSet<String> {
    value
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|i| i.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn every_crd_file_is_in_the_base() {
    let crds = deploy_dir().join("crds");
    let listed: BTreeSet<String> = kustomization_resources(&crds).into_iter().collect();
    let on_disk: BTreeSet<String> = std::fs::read_dir(&crds)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".yaml") && n != "kustomization.yaml")
        .collect();
    assert_eq!(
        listed, on_disk,
        "regenerate with `cargo run -- crds --output-dir deploy/crds`"
    );
    let docs = documents(&deploy_dir());
    assert_eq!(
        of_kind(&docs, "CustomResourceDefinition").len(),
        on_disk.len()
    );
    assert!(kustomization_resources(&deploy_dir()).contains(&"crds".to_string()));
}

/// The Namespace objects of the base, by name.
fn namespaces(docs: &[(String, Value)]) -> BTreeMap<String, &Value> {
    of_kind(docs, "Namespace")
        .into_iter()
        .map(|n| (n["metadata"]["name"].as_str().unwrap().to_string(), n))
        .collect()
}

#[test]
fn namespaced_objects_live_in_kruise_system_which_webhooks_skip() {
    let docs = documents(&deploy_dir());
    let namespaces = namespaces(&docs);
    assert_eq!(
        namespaces.keys().collect::<Vec<_>>(),
        ["kruise-system", "kube-public", "kube-system"]
    );
    // OpenKruise's label on its own namespace.
    assert_eq!(
        namespaces["kruise-system"]["metadata"]["labels"]["control-plane"],
        "openkruise"
    );
    for kind in ["Deployment", "Service", "PodDisruptionBudget"] {
        assert_eq!(
            one(&docs, kind)["metadata"]["namespace"],
            "kruise-system",
            "{kind}"
        );
    }
    for (_, object) in &docs {
        let kind = object["kind"].as_str().unwrap_or("");
        let cluster_scoped = [
            "Namespace",
            "CustomResourceDefinition",
            "ClusterRole",
            "ClusterRoleBinding",
            "MutatingWebhookConfiguration",
            "ValidatingWebhookConfiguration",
        ];
        // The certs job and the controllers record their events about cluster-scoped objects
        // (webhook configurations, SidecarSets) where such events live: `default`.
        let name = object["metadata"]["name"].as_str().unwrap_or("");
        let cluster_events = [
            "kruise-webhook-certs-events",
            "kruise-webhook-cluster-events",
        ];
        if !cluster_scoped.contains(&kind) && !cluster_events.contains(&name) {
            assert_eq!(object["metadata"]["namespace"], "kruise-system", "{object}");
        }
    }
}

#[test]
fn deployment_is_replicated_hardened_and_probed_on_the_admin_port() {
    let docs = documents(&deploy_dir());
    let deployment = one(&docs, "Deployment");
    assert_eq!(deployment["spec"]["replicas"], 2);
    let pod = &deployment["spec"]["template"]["spec"];
    assert_eq!(pod["serviceAccountName"], "kruise-webhook");
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert_eq!(
        pod["securityContext"]["seccompProfile"]["type"],
        "RuntimeDefault"
    );
    let spread = pod["topologySpreadConstraints"]
        .as_array()
        .map_or(0, Vec::len);
    let anti_affinity = !pod["affinity"]["podAntiAffinity"].is_null();
    assert!(
        spread > 0 || anti_affinity,
        "no topology spread nor anti-affinity"
    );

    let containers = pod["containers"].as_array().unwrap();
    assert_eq!(containers.len(), 1);
    let container = &containers[0];
    let security = &container["securityContext"];
    assert_eq!(security["allowPrivilegeEscalation"], false);
    assert_eq!(security["readOnlyRootFilesystem"], true);
    assert_eq!(
        strings(&security["capabilities"]["drop"]),
        BTreeSet::from(["ALL".to_string()])
    );
    for kind in ["requests", "limits"] {
        for resource in ["cpu", "memory"] {
            assert!(
                container["resources"][kind][resource].is_string(),
                "resources.{kind}.{resource}"
            );
        }
    }

    let port_of = |name: &str| {
        container["ports"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .map(|p| p["containerPort"].clone())
    };
    assert_eq!(port_of("admin"), Some(Value::from(9090)));
    assert_eq!(port_of("webhook"), Some(Value::from(9443)));
    for (probe, path) in [("readinessProbe", "/readyz"), ("livenessProbe", "/livez")] {
        let get = &container[probe]["httpGet"];
        assert_eq!(get["path"], path, "{probe}");
        assert!(get["port"] == "admin" || get["port"] == 9090, "{probe}");
    }

    // The serving certificate comes from the Secret the certs job writes.
    let args = strings(&container["args"]);
    assert!(args.contains("--source=cluster"), "{args:?}");
    let cert_dir = args
        .iter()
        .find_map(|a| a.strip_prefix("--cert-dir="))
        .expect("--cert-dir");
    let mount = container["volumeMounts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["mountPath"] == cert_dir)
        .expect("a volume mounted at --cert-dir");
    assert_eq!(mount["readOnly"], true);
    let volume = pod["volumes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == mount["name"])
        .unwrap();
    assert_eq!(volume["secret"]["secretName"], "kruise-webhook-certs");
}

#[test]
fn termination_grace_covers_the_shutdown_delay_and_the_drain() {
    let docs = documents(&deploy_dir());
    let pod = &one(&docs, "Deployment")["spec"]["template"]["spec"];
    let container = &pod["containers"][0];
    let delay_seconds: u64 = strings(&container["args"])
        .iter()
        .find_map(|a| a.strip_prefix("--shutdown-delay="))
        .expect("--shutdown-delay set explicitly")
        .strip_suffix('s')
        .expect("--shutdown-delay in seconds")
        .parse()
        .unwrap();
    assert!(
        delay_seconds > 0,
        "a zero delay refuses connections endpoints still send"
    );
    let needed = Duration::from_secs(delay_seconds)
        + kruise_webhook::server::IDLE_GRACE
        + kruise_webhook::server::DRAIN_DEADLINE;
    let grace = pod["terminationGracePeriodSeconds"]
        .as_u64()
        .expect("terminationGracePeriodSeconds");
    assert!(
        Duration::from_secs(grace) > needed,
        "terminationGracePeriodSeconds {grace} does not cover delay + grace + drain {needed:?}"
    );
    // A replica that stops being ready leaves the endpoints within the delay.
    let readiness = &container["readinessProbe"];
    let unready_after = readiness["periodSeconds"].as_u64().unwrap()
        * readiness["failureThreshold"].as_u64().unwrap();
    assert!(
        unready_after <= delay_seconds,
        "readiness notices in {unready_after}s, after the {delay_seconds}s delay"
    );
}

#[test]
fn service_pdb_and_rbac() {
    let docs = documents(&deploy_dir());
    let service = one(&docs, "Service");
    let ports = service["spec"]["ports"].as_array().unwrap();
    assert_eq!(ports.len(), 1);
    assert_eq!(ports[0]["port"], 443);
    assert!(ports[0]["targetPort"] == "webhook" || ports[0]["targetPort"] == 9443);

    // The certificate `serve` and `certs` make without `--service-name` covers this Service.
    assert_eq!(
        service["metadata"]["name"],
        kruise_webhook::cli::DEFAULT_SERVICE_NAME
    );

    let selector = &one(&docs, "Deployment")["spec"]["selector"]["matchLabels"];
    assert_eq!(&service["spec"]["selector"], selector);
    let pdb = one(&docs, "PodDisruptionBudget");
    assert_eq!(&pdb["spec"]["selector"]["matchLabels"], selector);
    assert_eq!(pdb["spec"]["minAvailable"], 1);

    // Least privilege: exactly these grants, each with the feature that needs it in rbac.yaml.
    let role = named(&docs, "ClusterRole", "kruise-webhook");
    let crds = crd_names();
    let mut expected: BTreeSet<String> = [
        "apps.kruise.io/sidecarsets list *",
        "apps.kruise.io/sidecarsets watch *",
        "apps.kruise.io/sidecarsets/status patch *",
        "/namespaces list *",
        "/namespaces watch *",
        "admissionregistration.k8s.io/mutatingwebhookconfigurations get kruise-mutating-webhook-configuration",
        "admissionregistration.k8s.io/validatingwebhookconfigurations get kruise-validating-webhook-configuration",
        "/pods get *",
        "/pods list *",
        "/pods watch *",
        "/pods create *",
        "/pods delete *",
        "/pods patch *",
        "/pods/status patch *",
        "/configmaps get *",
        "/configmaps create *",
        "/configmaps patch *",
        "events.k8s.io/events create *",
        "events.k8s.io/events patch *",
        "apps.kruise.io/clonesets patch *",
        "apps.kruise.io/clonesets/status patch *",
        "apps.kruise.io/daemonsets/status patch *",
        "apps.kruise.io/statefulsets/status update *",
        "apps/controllerrevisions get *",
        "apps/controllerrevisions list *",
        "apps/controllerrevisions create *",
        "apps/controllerrevisions patch *",
        "apps/controllerrevisions delete *",
        "/persistentvolumeclaims list *",
        "/persistentvolumeclaims watch *",
        "/persistentvolumeclaims create *",
        "/persistentvolumeclaims delete *",
        "/persistentvolumeclaims patch *",
        "/persistentvolumeclaims update *",
        "/nodes list *",
        "/nodes watch *",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    for kind in ["clonesets", "statefulsets", "daemonsets"] {
        for verb in ["get", "list", "watch"] {
            expected.insert(format!("apps.kruise.io/{kind} {verb} *"));
        }
    }
    expected.insert(format!(
        "apiextensions.k8s.io/customresourcedefinitions get {crds}"
    ));
    assert_eq!(grants(role), expected);
    let election = named(&docs, "Role", "kruise-webhook-leader-election");
    assert_eq!(election["metadata"]["namespace"], "kruise-system");
    assert_eq!(
        grants(election),
        ["get", "create", "update"]
            .iter()
            .map(|verb| format!("coordination.k8s.io/leases {verb} *"))
            .collect::<BTreeSet<_>>()
    );
    // Nothing may touch Secrets but the certificate job's own account.
    for (_, object) in &docs {
        let is_role = object["kind"] == "ClusterRole" || object["kind"] == "Role";
        if is_role
            && !object["metadata"]["name"]
                .as_str()
                .unwrap_or("")
                .contains("certs")
        {
            assert!(!object.to_string().contains("secrets"), "{object}");
        }
    }
    let binding = named(&docs, "ClusterRoleBinding", "kruise-webhook");
    assert_eq!(binding["roleRef"]["name"], role["metadata"]["name"]);
    assert_eq!(binding["subjects"][0]["name"], "kruise-webhook");
    assert_eq!(binding["subjects"][0]["namespace"], "kruise-system");
}

/// Every grant of a role as `group/resource verb names` (`*` for any name).
fn grants(role: &Value) -> BTreeSet<String> {
    let mut granted = BTreeSet::new();
    for rule in role["rules"].as_array().unwrap() {
        let names = strings(&rule["resourceNames"]);
        for group in strings(&rule["apiGroups"]) {
            for resource in strings(&rule["resources"]) {
                for verb in strings(&rule["verbs"]) {
                    let scope = if names.is_empty() {
                        "*".to_string()
                    } else {
                        names.iter().cloned().collect::<Vec<_>>().join(",")
                    };
                    granted.insert(format!("{group}/{resource} {verb} {scope}"));
                }
            }
        }
    }
    granted
}

/// The CRDs of this project, by name: what `certs` and `serve --external-certs` look after.
fn crd_names() -> String {
    let mut names: Vec<String> = kruise_webhook::crds::all()
        .iter()
        .map(|crd| crd.metadata.name.clone().unwrap())
        .collect();
    names.sort();
    names.join(",")
}

/// `(configuration kind, webhook)` for every webhook of both configurations.
fn webhooks(docs: &[(String, Value)]) -> Vec<(&'static str, &Value)> {
    let mut out = Vec::new();
    for (kind, name) in [
        (
            "MutatingWebhookConfiguration",
            "kruise-mutating-webhook-configuration",
        ),
        (
            "ValidatingWebhookConfiguration",
            "kruise-validating-webhook-configuration",
        ),
    ] {
        let configuration = one(docs, kind);
        assert_eq!(configuration["metadata"]["name"], name);
        for webhook in configuration["webhooks"].as_array().unwrap() {
            out.push((kind, webhook));
        }
    }
    out
}

#[test]
fn webhooks_have_explicit_safe_settings() {
    let docs = documents(&deploy_dir());
    let service = one(&docs, "Service");
    for (kind, webhook) in webhooks(&docs) {
        let name = webhook["name"].as_str().unwrap();
        assert_eq!(webhook["sideEffects"], "None", "{name}");
        assert_eq!(
            strings(&webhook["admissionReviewVersions"]),
            BTreeSet::from(["v1".to_string()]),
            "{name}"
        );
        let timeout = webhook["timeoutSeconds"].as_u64().expect("timeoutSeconds");
        assert!((1..=10).contains(&timeout), "{name}: timeout {timeout}");
        assert!(
            webhook["failurePolicy"] == "Fail" || webhook["failurePolicy"] == "Ignore",
            "{name}: failurePolicy must be explicit"
        );
        assert!(
            webhook["clientConfig"]["caBundle"].is_null(),
            "{name}: the certs job sets caBundle"
        );
        let target = &webhook["clientConfig"]["service"];
        assert_eq!(target["name"], service["metadata"]["name"], "{name}");
        assert_eq!(target["namespace"], "kruise-system", "{name}");
        assert_eq!(target["port"], 443, "{name}");

        assert_eq!(
            webhook["namespaceSelector"],
            webhooks(&docs)[0].1["namespaceSelector"],
            "{name}: every webhook skips the same namespaces"
        );
        if kind == "ValidatingWebhookConfiguration" {
            assert!(webhook["reinvocationPolicy"].is_null(), "{name}");
        }
    }
}

/// Whether the webhooks' namespaceSelector sends a namespace with these labels to the webhook.
fn sent_to_the_webhooks(docs: &[(String, Value)], labels: &[(&str, &str)]) -> bool {
    let selector: LabelSelector =
        serde_json::from_value(webhooks(docs)[0].1["namespaceSelector"].clone()).unwrap();
    let labels: Labels = labels
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    selector::matches(&selector, Some(&labels), "namespaceSelector").unwrap()
}

/// A Namespace's labels once the base is applied: those the cluster gave it, plus the base's.
fn applied_labels<'a>(
    docs: &'a [(String, Value)],
    name: &str,
    from_the_cluster: &[(&'a str, &'a str)],
) -> Vec<(&'a str, &'a str)> {
    let mut labels = from_the_cluster.to_vec();
    if let Some(namespace) = namespaces(docs).get(name)
        && let Some(applied) = namespace["metadata"]["labels"].as_object()
    {
        labels.extend(
            applied
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str().unwrap())),
        );
    }
    labels
}

#[test]
fn system_namespaces_are_skipped_on_kubernetes_1_20_and_later_and_operator_namespaces_are_not() {
    let docs = documents(&deploy_dir());
    for name in ["kube-system", "kube-public", "kruise-system"] {
        // 1.20: a namespace carries only the labels it was given (kube-system none at all).
        let on_1_20 = applied_labels(&docs, name, &[]);
        assert!(!sent_to_the_webhooks(&docs, &on_1_20), "{name} on 1.20");
        // 1.21 and later: its name label too; skipped even without the base's labels.
        let name_label = [("kubernetes.io/metadata.name", name)];
        assert!(!sent_to_the_webhooks(&docs, &name_label), "{name} by name");
    }
    // OpenKruise's rule: only its own `control-plane` value is skipped; kubebuilder operators'
    // namespaces keep their sidecars.
    assert!(!sent_to_the_webhooks(
        &docs,
        &[("control-plane", "openkruise")]
    ));
    for labels in [
        vec![],
        vec![("control-plane", "controller-manager")],
        vec![("kubernetes.io/metadata.name", "default")],
        vec![("kruise-webhook/skip", "false")],
    ] {
        assert!(sent_to_the_webhooks(&docs, &labels), "{labels:?}");
    }
    // Any namespace may opt out with the label.
    assert!(!sent_to_the_webhooks(
        &docs,
        &[("kruise-webhook/skip", "true")]
    ));
}

#[test]
fn webhook_paths_and_rules_are_openkruises() {
    let docs = documents(&deploy_dir());
    let mut seen = Vec::new();
    for (kind, webhook) in webhooks(&docs) {
        let path = webhook["clientConfig"]["service"]["path"].as_str().unwrap();
        let rule = &webhook["rules"][0];
        seen.push((
            kind,
            path.to_string(),
            strings(&rule["resources"]),
            strings(&rule["operations"]),
            strings(&rule["apiVersions"]),
        ));
        if path == "/mutate-pod" {
            assert_eq!(webhook["reinvocationPolicy"], "IfNeeded");
            // The end-to-end suite proves registration by this refusal.
            assert_eq!(webhook["failurePolicy"], "Fail");
        }
    }
    let set = |items: &[&str]| items.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
    let expected = vec![
        (
            "MutatingWebhookConfiguration",
            "/mutate-pod".to_string(),
            set(&["pods"]),
            set(&["CREATE"]),
            set(&["v1"]),
        ),
        (
            "MutatingWebhookConfiguration",
            "/mutate-apps-kruise-io-sidecarset".to_string(),
            set(&["sidecarsets"]),
            set(&["CREATE", "UPDATE"]),
            set(&["v1alpha1", "v1beta1"]),
        ),
        (
            "MutatingWebhookConfiguration",
            "/mutate-apps-kruise-io-cloneset".to_string(),
            set(&["clonesets"]),
            set(&["CREATE", "UPDATE"]),
            set(&["v1alpha1", "v1beta1"]),
        ),
        (
            "MutatingWebhookConfiguration",
            "/mutate-apps-kruise-io-statefulset".to_string(),
            set(&["statefulsets"]),
            set(&["CREATE", "UPDATE"]),
            set(&["v1alpha1", "v1beta1"]),
        ),
        (
            "MutatingWebhookConfiguration",
            "/mutate-apps-kruise-io-daemonset".to_string(),
            set(&["daemonsets"]),
            set(&["CREATE", "UPDATE"]),
            set(&["v1alpha1", "v1beta1"]),
        ),
        (
            "ValidatingWebhookConfiguration",
            "/validate-apps-kruise-io-sidecarset".to_string(),
            set(&["sidecarsets"]),
            set(&["CREATE", "UPDATE"]),
            set(&["v1alpha1", "v1beta1"]),
        ),
        (
            "ValidatingWebhookConfiguration",
            "/validate-apps-kruise-io-cloneset".to_string(),
            set(&["clonesets"]),
            set(&["CREATE", "UPDATE", "DELETE"]),
            set(&["v1alpha1", "v1beta1"]),
        ),
        (
            "ValidatingWebhookConfiguration",
            "/validate-apps-kruise-io-statefulset".to_string(),
            set(&["statefulsets"]),
            set(&["CREATE", "UPDATE", "DELETE"]),
            set(&["v1alpha1", "v1beta1"]),
        ),
        (
            "ValidatingWebhookConfiguration",
            "/validate-apps-kruise-io-daemonset".to_string(),
            set(&["daemonsets"]),
            set(&["CREATE", "UPDATE"]),
            set(&["v1alpha1", "v1beta1"]),
        ),
    ];
    // OpenKruise's deletion protection of Kubernetes' own objects: DELETE only.
    let mut expected = expected;
    for (path, resource, versions) in [
        ("/validate-namespace", "namespaces", &["v1"][..]),
        (
            "/validate-customresourcedefinition",
            "customresourcedefinitions",
            &["v1", "v1beta1"][..],
        ),
        ("/validate-apps-deployment", "deployments", &["v1"][..]),
        ("/validate-apps-replicaset", "replicasets", &["v1"][..]),
        ("/validate-apps-statefulset", "statefulsets", &["v1"][..]),
        ("/validate-service", "services", &["v1"][..]),
        ("/validate-ingress", "ingresses", &["v1", "v1beta1"][..]),
    ] {
        expected.push((
            "ValidatingWebhookConfiguration",
            path.to_string(),
            set(&[resource]),
            set(&["DELETE"]),
            set(versions),
        ));
    }
    assert_eq!(seen, expected);
}

/// The entries of deploy/ carry OpenKruise v1.9.0's names, so `kubectl apply` over an OpenKruise
/// install replaces its entries rather than adding beside them.
#[test]
fn webhook_names_are_openkruises() {
    let docs = documents(&deploy_dir());
    let names: Vec<&str> = webhooks(&docs)
        .iter()
        .map(|(_, w)| w["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "mpod.kb.io",
            "msidecarset.kb.io",
            "mcloneset.kb.io",
            "mstatefulset.kb.io",
            "mdaemonset.kb.io",
            "vsidecarset.kb.io",
            "vcloneset.kb.io",
            "vstatefulset.kb.io",
            "vdaemonset.kb.io",
            "vnamespace.kb.io",
            "vcustomresourcedefinition.kb.io",
            "vbuiltindeployment.kb.io",
            "vbuiltinreplicaset.kb.io",
            "vbuiltinstatefulset.kb.io",
            "vservice.kb.io",
            "vingress.kb.io",
        ]
    );
}

/// The certificate job: its Secret, the two configurations, the caBundle of the CRDs' conversion
/// webhook (get and patch, by name, exactly the CRDs of deploy/crds and of `--conversion-crd`'s
/// default), and events in `default` (create only).
#[test]
fn certs_job_rbac_is_least_privilege() {
    let docs = documents(&deploy_dir());
    let crds = crd_names();
    assert_eq!(crds, kruise_webhook::cli::DEFAULT_CONVERSION_CRDS);
    let cluster = named(&docs, "ClusterRole", "kruise-webhook-certs");
    let expected: BTreeSet<String> = [
        "admissionregistration.k8s.io/mutatingwebhookconfigurations get kruise-mutating-webhook-configuration".to_string(),
        "admissionregistration.k8s.io/mutatingwebhookconfigurations update kruise-mutating-webhook-configuration".to_string(),
        "admissionregistration.k8s.io/validatingwebhookconfigurations get kruise-validating-webhook-configuration".to_string(),
        "admissionregistration.k8s.io/validatingwebhookconfigurations update kruise-validating-webhook-configuration".to_string(),
        format!("apiextensions.k8s.io/customresourcedefinitions get {crds}"),
        format!("apiextensions.k8s.io/customresourcedefinitions patch {crds}"),
    ]
    .into_iter()
    .collect();
    assert_eq!(grants(cluster), expected);
    let secret = named(&docs, "Role", "kruise-webhook-certs");
    assert_eq!(secret["metadata"]["namespace"], "kruise-system");
    assert_eq!(
        grants(secret),
        [
            "/secrets get kruise-webhook-certs",
            "/secrets update kruise-webhook-certs",
            "/secrets create *",
        ]
        .into_iter()
        .map(String::from)
        .collect()
    );
    let events = named(&docs, "Role", "kruise-webhook-certs-events");
    assert_eq!(events["metadata"]["namespace"], "default");
    assert_eq!(
        grants(events),
        BTreeSet::from(["/events create *".to_string()])
    );
    for name in ["kruise-webhook-certs", "kruise-webhook-certs-events"] {
        let kind = if name.ends_with("events") {
            "RoleBinding"
        } else {
            "ClusterRoleBinding"
        };
        let binding = named(&docs, kind, name);
        assert_eq!(binding["roleRef"]["name"], name);
        assert_eq!(binding["subjects"][0]["name"], "kruise-webhook-certs");
        assert_eq!(binding["subjects"][0]["namespace"], "kruise-system");
    }
}

/// Whether the router has a route at `path` (anything but its 404 fallback).
async fn routed(path: &str) -> bool {
    use kruise_webhook::admission::{AdmissionState, router};
    use tower::ServiceExt;
    let state = AdmissionState {
        catalogue: kruise_webhook::source::shared(Default::default()),
        metrics: std::sync::Arc::new(kruise_webhook::metrics::Metrics::new()),
        sort_sidecars_by_name: false,
        deletion_reads: None,
    };
    let request = axum::http::Request::post(path)
        .header("content-type", "application/json")
        .body(axum::body::Body::from("{}"))
        .unwrap();
    let response = router(state, false).oneshot(request).await.unwrap();
    response.status() != axum::http::StatusCode::NOT_FOUND
}

#[tokio::test]
async fn every_webhook_path_is_served_by_the_router() {
    let docs = documents(&deploy_dir());
    for (_, webhook) in webhooks(&docs) {
        let path = webhook["clientConfig"]["service"]["path"].as_str().unwrap();
        assert!(
            SERVED_PATHS.contains(&path),
            "{path} is not in admission::SERVED_PATHS {SERVED_PATHS:?}"
        );
        assert!(routed(path).await, "{path} is not routed");
    }
}

/// The node agent: opt-in, one pod per node, the CRI socket its only host access, not privileged,
/// and RBAC limited to reading pods, writing pods/status and events.
#[test]
fn node_agent_is_opt_in_and_least_privilege() {
    let base = std::fs::read_to_string(deploy_dir().join("kustomization.yaml")).unwrap();
    assert!(
        base.contains("# - node-agent"),
        "the base offers the agent commented out"
    );
    assert!(!kustomization_resources(&deploy_dir()).contains(&"node-agent".to_string()));

    let docs = documents(&deploy_dir().join("node-agent"));
    let daemonset = named(&docs, "DaemonSet", "kruise-node-agent");
    assert_eq!(daemonset["metadata"]["namespace"], "kruise-system");
    let pod = &daemonset["spec"]["template"]["spec"];
    assert_eq!(pod["serviceAccountName"], "kruise-node-agent");
    assert!(pod["hostNetwork"].is_null() && pod["hostPID"].is_null());
    let container = &pod["containers"][0];
    assert_eq!(container["args"][0], "node-agent");
    let security = &container["securityContext"];
    assert_eq!(security["privileged"], false);
    assert_eq!(security["allowPrivilegeEscalation"], false);
    assert_eq!(security["readOnlyRootFilesystem"], true);
    assert_eq!(
        strings(&security["capabilities"]["drop"]),
        BTreeSet::from(["ALL".to_string()])
    );
    let volumes = pod["volumes"].as_array().unwrap();
    assert_eq!(volumes.len(), 1, "only the CRI socket");
    assert_eq!(volumes[0]["hostPath"]["type"], "Socket");
    let mount = &container["volumeMounts"][0];
    let socket_env = container["env"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "KRUISE_NODE_AGENT_CRI_SOCKET")
        .unwrap();
    assert_eq!(socket_env["value"], mount["mountPath"]);
    let node_env = container["env"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "NODE_NAME")
        .unwrap();
    assert_eq!(
        node_env["valueFrom"]["fieldRef"]["fieldPath"],
        "spec.nodeName"
    );
    // The probes reach the agent's admin port (`node-agent --admin-listen`, default :10221).
    assert_eq!(container["ports"][0]["name"], "admin");
    assert_eq!(container["ports"][0]["containerPort"], 10221);
    for (probe, path) in [("livenessProbe", "/livez"), ("readinessProbe", "/readyz")] {
        assert_eq!(container[probe]["httpGet"]["path"], path, "{probe}");
        assert_eq!(container[probe]["httpGet"]["port"], "admin", "{probe}");
    }

    let role = named(&docs, "ClusterRole", "kruise-node-agent");
    let expected: BTreeSet<String> = [
        "/pods list *",
        "/pods watch *",
        "/pods/status patch *",
        "events.k8s.io/events create *",
        "events.k8s.io/events patch *",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(grants(role), expected);
    let binding = named(&docs, "ClusterRoleBinding", "kruise-node-agent");
    assert_eq!(binding["subjects"][0]["name"], "kruise-node-agent");
    assert_eq!(binding["subjects"][0]["namespace"], "kruise-system");
}
