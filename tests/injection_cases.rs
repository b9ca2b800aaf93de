//! Pod mutating webhook cases from `shared/spec/sidecarset-injection.md` §6–§10 and §13, driven
//! through `mutate_pod` exactly as the apiserver would: an AdmissionReview around the *raw* pod JSON,
//! the returned JSON patch applied to that raw JSON, the result re-parsed as a `Pod`.
//!
//! Every case also checks, in the harness:
//! * fields the Rust types do not know (`futureField` on `spec` and on the first container) survive
//!   the patch untouched;
//! * reinvocation safety: the webhook run again on its own output returns no patch.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Container, Pod, Volume};
use kruise_webhook::admission::pod::{PodMutation, mutate_pod};
use kruise_webhook::admission::review::{AdmissionResponse, decode_envelope};
use kruise_webhook::api::{SidecarContainer, SidecarSet};
use kruise_webhook::source::Catalogue;
use serde_json::{Value, json};
use support::SidecarSetBuilder;

mod support;

// ---------------------------------------------------------------------------------------------
// Harness

const NOW: &str = "2026-07-02T10:04:05Z";
const SUFFIX: &str = "x7k2q";

fn future() -> Value {
    json!({"x": 1})
}

/// How a case is run. `run(...)` uses the defaults; the builder methods cover the rest.
#[derive(Clone)]
struct Harness {
    sets: Vec<SidecarSet>,
    namespaces: HashMap<String, BTreeMap<String, String>>,
    assume_undeclared_namespaces: bool,
    sort_sidecars_by_name: bool,
    operation: &'static str,
    sub_resource: Option<&'static str>,
    dry_run: bool,
    /// Reinvocation: `None` = the second run must return no patch (the default); `Some(reason)` =
    /// the spec forces the second run to change the pod (the reason says why); then the third run
    /// must return no patch.
    reinvocation_changes: Option<&'static str>,
    /// Skip the reinvocation check entirely (only for pods the apiserver rejects anyway).
    skip_reinvocation: Option<&'static str>,
}

fn harness(sets: Vec<SidecarSet>) -> Harness {
    Harness {
        sets,
        namespaces: HashMap::new(),
        assume_undeclared_namespaces: true,
        sort_sidecars_by_name: false,
        operation: "CREATE",
        sub_resource: None,
        dry_run: false,
        reinvocation_changes: None,
        skip_reinvocation: None,
    }
}

/// The harness of the brief: SidecarSets, declared namespaces (name → labels), raw pod JSON.
fn run(sets: Vec<SidecarSet>, namespaces: &[(&str, &[(&str, &str)])], pod: Value) -> Outcome {
    harness(sets).namespaces(namespaces).run(pod)
}

struct Outcome {
    response: AdmissionResponse,
    /// The raw pod sent (with the unknown fields added by the harness).
    raw: Value,
    /// `raw` with the response's patch applied (`raw` itself when there is no patch).
    patched: Value,
    /// `patched` parsed as a Pod.
    pod: Pod,
}

impl Harness {
    fn namespaces(mut self, namespaces: &[(&str, &[(&str, &str)])]) -> Self {
        for (name, labels) in namespaces {
            self.namespaces.insert(
                name.to_string(),
                labels
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            );
        }
        self
    }

    fn assume_undeclared(mut self, assume: bool) -> Self {
        self.assume_undeclared_namespaces = assume;
        self
    }

    fn sorted(mut self) -> Self {
        self.sort_sidecars_by_name = true;
        self
    }

    fn operation(mut self, operation: &'static str) -> Self {
        self.operation = operation;
        self
    }

    fn sub_resource(mut self, sub_resource: &'static str) -> Self {
        self.sub_resource = Some(sub_resource);
        self
    }

    fn dry_run(mut self) -> Self {
        self.dry_run = true;
        self
    }

    fn reinvocation_changes(mut self, reason: &'static str) -> Self {
        self.reinvocation_changes = Some(reason);
        self
    }

    fn skip_reinvocation(mut self, reason: &'static str) -> Self {
        self.skip_reinvocation = Some(reason);
        self
    }

    fn catalogue(&self) -> Catalogue {
        Catalogue::new(
            self.sets.iter().cloned().map(Arc::new).collect(),
            self.namespaces.clone(),
            self.assume_undeclared_namespaces,
        )
    }

    /// One admission call on `pod` exactly as given (no fields added).
    fn call(&self, catalogue: &Catalogue, pod: &Value) -> AdmissionResponse {
        let namespace = pod
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or("default");
        let mut request = json!({
            "uid": "0b1c2d3e-0000-4000-8000-000000000001",
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "requestKind": {"group": "", "version": "v1", "kind": "Pod"},
            "requestResource": {"group": "", "version": "v1", "resource": "pods"},
            "name": pod.pointer("/metadata/name").cloned().unwrap_or(json!("")),
            "namespace": namespace,
            "operation": self.operation,
            "userInfo": {"username": "system:serviceaccount:kube-system:replicaset-controller"},
            "object": pod,
            "dryRun": self.dry_run,
        });
        if let Some(sub) = self.sub_resource {
            request["subResource"] = json!(sub);
        }
        if self.operation == "UPDATE" || self.operation == "DELETE" {
            request["oldObject"] = pod.clone();
        }
        let body = serde_json::to_vec(&json!({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": request,
        }))
        .unwrap();
        let (version, envelope) = decode_envelope(&body).expect("AdmissionReview decodes");
        assert_eq!(version, "admission.k8s.io/v1");
        let response = mutate_pod(
            &envelope,
            &PodMutation {
                catalogue,
                now: NOW,
                name_suffix: SUFFIX,
                sort_sidecars_by_name: self.sort_sidecars_by_name,
                draw: &kruise_webhook::inject::sidecar::random_draw,
            },
        );
        assert_eq!(response.uid, "0b1c2d3e-0000-4000-8000-000000000001");
        response
    }

    fn run(&self, pod: Value) -> Outcome {
        let raw = with_unknown_fields(pod);
        let catalogue = self.catalogue();
        let response = self.call(&catalogue, &raw);
        if !response.allowed {
            assert!(response.patch.is_none(), "a denial carries no patch");
            let pod = parse_pod(&raw);
            return Outcome {
                response,
                patched: raw.clone(),
                raw,
                pod,
            };
        }
        let patched = apply(&raw, &response);
        let pod = parse_pod(&patched);
        check_unknown_fields(&raw, &patched);

        if self.skip_reinvocation.is_none() {
            let second = self.call(&catalogue, &patched);
            assert!(second.allowed, "second run denied: {:?}", second.status);
            match self.reinvocation_changes {
                None => assert!(
                    second.patch.is_none(),
                    "reinvocation is not a no-op; second patch: {}",
                    serde_json::to_string_pretty(&second.patch_operations()).unwrap()
                ),
                Some(reason) => {
                    assert!(
                        second.patch.is_some(),
                        "expected a second-run change: {reason}"
                    );
                    let again = apply(&patched, &second);
                    let third = self.call(&catalogue, &again);
                    assert!(
                        third.allowed && third.patch.is_none(),
                        "third run must be a no-op"
                    );
                }
            }
        }
        Outcome {
            response,
            raw,
            patched,
            pod,
        }
    }
}

fn parse_pod(value: &Value) -> Pod {
    serde_json::from_value(value.clone()).expect("patched pod parses as a Pod")
}

fn apply(raw: &Value, response: &AdmissionResponse) -> Value {
    let mut doc = raw.clone();
    if response.patch.is_some() {
        assert_eq!(response.patch_type, Some("JSONPatch"));
        let ops = response.patch_operations().expect("patch decodes");
        assert!(!ops.is_empty(), "a patch is never empty");
        json_patch::patch(&mut doc, &ops).expect("patch applies to the raw pod");
    } else {
        assert!(response.patch_type.is_none());
    }
    doc
}

/// Adds `futureField` to `spec` and to the first container, as a newer apiserver might send.
fn with_unknown_fields(mut pod: Value) -> Value {
    if let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) {
        spec.insert("futureField".into(), future());
        if let Some(first) = spec
            .get_mut("containers")
            .and_then(Value::as_array_mut)
            .and_then(|c| c.first_mut())
            .and_then(Value::as_object_mut)
        {
            first.insert("futureField".into(), future());
        }
    }
    pod
}

fn check_unknown_fields(raw: &Value, patched: &Value) {
    if raw.pointer("/spec/futureField").is_some() {
        assert_eq!(
            patched.pointer("/spec/futureField"),
            Some(&future()),
            "spec.futureField lost"
        );
    }
    let Some(first) = raw.pointer("/spec/containers/0") else {
        return;
    };
    let name = first["name"].as_str().unwrap_or("");
    let survivors: Vec<&Value> = patched["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["name"].as_str() == Some(name) && c.get("futureField").is_some())
        .collect();
    assert_eq!(survivors.len(), 1, "futureField of container {name:?} lost");
    assert_eq!(survivors[0]["futureField"], future());
}

impl Outcome {
    /// Allowed, no patch, pod as sent.
    fn assert_unchanged(&self) {
        assert!(self.response.allowed, "denied: {:?}", self.response.status);
        assert!(
            self.response.patch.is_none(),
            "unexpected patch: {:?}",
            self.response.patch_operations()
        );
        assert_eq!(self.patched, self.raw);
    }

    fn assert_patched(&self) {
        assert!(self.response.allowed, "denied: {:?}", self.response.status);
        assert!(self.response.patch.is_some(), "expected a patch");
    }

    /// Denied with `code`; returns the message.
    fn denied(&self, code: u16) -> String {
        assert!(!self.response.allowed, "expected a denial");
        let status = self.response.status.as_ref().expect("denial has a status");
        assert_eq!(status.code, code, "{}", status.message);
        status.message.clone()
    }

    fn containers(&self) -> Vec<&str> {
        names(&self.pod.spec.as_ref().unwrap().containers)
    }

    fn init_containers(&self) -> Vec<&str> {
        names(
            self.pod
                .spec
                .as_ref()
                .unwrap()
                .init_containers
                .as_deref()
                .unwrap_or(&[]),
        )
    }

    fn container(&self, name: &str) -> &Container {
        let spec = self.pod.spec.as_ref().unwrap();
        spec.containers
            .iter()
            .chain(spec.init_containers.iter().flatten())
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("no container {name}"))
    }

    /// Raw JSON of the container (or init container) `name` in the patched pod.
    fn raw_container(&self, name: &str) -> &Value {
        ["containers", "initContainers"]
            .iter()
            .flat_map(|list| self.patched["spec"][list].as_array().into_iter().flatten())
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("no container {name}"))
    }

    /// `name=value` of every env var of a container (valueFrom vars as `name=<from>`).
    fn env(&self, name: &str) -> Vec<String> {
        env_strings(self.container(name))
    }

    fn mount_paths(&self, name: &str) -> Vec<&str> {
        self.container(name)
            .volume_mounts
            .iter()
            .flatten()
            .map(|m| m.mount_path.as_str())
            .collect()
    }

    fn devices(&self, name: &str) -> Vec<(&str, &str)> {
        self.container(name)
            .volume_devices
            .iter()
            .flatten()
            .map(|d| (d.name.as_str(), d.device_path.as_str()))
            .collect()
    }

    fn volumes(&self) -> Vec<&str> {
        self.pod
            .spec
            .as_ref()
            .unwrap()
            .volumes
            .iter()
            .flatten()
            .map(|v| v.name.as_str())
            .collect()
    }

    fn annotation(&self, key: &str) -> Option<&str> {
        self.pod
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(key))
            .map(String::as_str)
    }

    fn annotations(&self) -> BTreeMap<String, String> {
        self.pod.metadata.annotations.clone().unwrap_or_default()
    }
}

fn names(containers: &[Container]) -> Vec<&str> {
    containers.iter().map(|c| c.name.as_str()).collect()
}

fn env_strings(container: &Container) -> Vec<String> {
    container
        .env
        .iter()
        .flatten()
        .map(|e| match (&e.value, &e.value_from) {
            (Some(v), _) => format!("{}={v}", e.name),
            (None, Some(_)) => format!("{}=<from>", e.name),
            (None, None) => format!("{}=", e.name),
        })
        .collect()
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

fn ss(yaml: &str) -> SidecarSet {
    ss_with(yaml, |_| {})
}

/// Parses a fixture and edits it through its JSON form, in the version it is written in
/// (`edit` gets the whole object); the result is the v1beta1 SidecarSet the server works on.
fn ss_with(yaml: &str, edit: impl FnOnce(&mut Value)) -> SidecarSet {
    let mut value: Value = kruise_webhook::yaml::from_str(yaml)
        .unwrap_or_else(|e| panic!("fixture does not parse: {e}\n{yaml}"));
    edit(&mut value);
    let converted = kruise_webhook::convert::convert(&value, "apps.kruise.io/v1beta1")
        .unwrap_or_else(|e| panic!("fixture does not convert: {e}\n{yaml}"));
    serde_json::from_value(converted).expect("edited SidecarSet parses")
}

/// The §8.1 value of one hash-annotation entry, byte for byte.
fn hash_entry(set: &str, hash: &str, list: &[&str], revision: Option<&str>) -> String {
    let list: Vec<String> = list.iter().map(|s| format!("{s:?}")).collect();
    let revision = revision
        .map(|r| format!(",\"controllerRevision\":{r:?}"))
        .unwrap_or_default();
    format!(
        "{set:?}:{{\"updateTimestamp\":{NOW:?},\"hash\":{hash:?},\"sidecarSetName\":{set:?},\"sidecarList\":[{}]{revision}}}",
        list.join(",")
    )
}

fn hash_annotation(entries: &[String]) -> String {
    format!("{{{}}}", entries.join(","))
}

const HASH: &str = "kruise.io/sidecarset-hash";
const HASH_WITHOUT_IMAGE: &str = "kruise.io/sidecarset-hash-without-image";
const INJECTED_LIST: &str = "kruise.io/sidecarset-injected-list";
const WORKING_HOTUPGRADE: &str = "kruise.io/sidecarset-working-hotupgrade-container";
const LAUNCH_PRIORITY: &str = "apps.kruise.io/container-launch-priority";

// ---------------------------------------------------------------------------------------------
// §13 fixtures, as written (no defaulting)

const SS1: &str = r#"
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata: {name: sidecarset1, annotations: {kruise.io/sidecarset-hash: c4k2dbb95d}}
spec:
  selector: {matchLabels: {app: suxing-test}}
  initContainers: [{name: init-2, image: "busybox:1.0.0"}, {name: init-1, image: "busybox:1.0.0"}]
  containers:
  - {name: dns-f, image: "dns-f-image:1.0", podInjectPolicy: BeforeAppContainer, shareVolumePolicy: {type: disabled}}
  - {name: log-agent, image: "log-agent-image:1.0", podInjectPolicy: AfterAppContainer, shareVolumePolicy: {type: disabled}}
"#;

const SS2: &str = r#"
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata: {name: sidecarset2, annotations: {kruise.io/sidecarset-hash: c4k2dbb95d}}
spec:
  selector: {matchLabels: {app: suxing-test}}
  initContainers:
  - {name: dns-e, image: "dns-e-image:1.0", podInjectPolicy: BeforeAppContainer,
     volumeMounts: [{name: volume-1}], transferEnv: [{sourceContainerName: nginx, envName: hello2}]}
  containers:
  - {name: dns-f, image: "dns-f-image:1.0", podInjectPolicy: BeforeAppContainer, shareVolumePolicy: {type: disabled},
     volumeMounts: [{name: volume-1}], transferEnv: [{sourceContainerName: nginx, envName: hello2}]}
  volumes: [{name: volume-1}, {name: volume-2}]
"#;

const SS3: &str = r#"
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata: {name: sidecarset3, annotations: {kruise.io/sidecarset-hash: gm967682cm}}
spec:
  selector: {matchLabels: {app: suxing-test}}
  containers:
  - {name: dns-f, image: "dns-f-image:1.0", podInjectPolicy: AfterAppContainer, shareVolumePolicy: {type: enabled},
     volumeMounts: [{name: volume-1, mountPath: /a/b/c}, {name: volume-2, mountPath: /d/e/f}]}
  - {name: log-agent, image: "log-agent-image:1.0", podInjectPolicy: AfterAppContainer, shareVolumePolicy: {type: disabled}}
  volumes: [{name: volume-1}, {name: volume-2}]
"#;

/// "with staragent"; containers keep only the first entry, as the upstream tests do.
const SSA: &str = r#"
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata: {name: sidecarset3, annotations: {kruise.io/sidecarset-hash: gm967682cm}}
spec:
  selector: {matchLabels: {app: suxing-test}}
  initContainers:
  - {name: dns-e, image: "dns-e-image:1.0", podInjectPolicy: BeforeAppContainer, shareVolumePolicy: {type: enabled},
     volumeMounts: [{name: volume-3, mountPath: /g/h/i}, {name: volume-4, mountPath: /j/k/l}, {name: volume-staragent, mountPath: /staragent}]}
  containers:
  - {name: dns-f, image: "dns-f-image:1.0", podInjectPolicy: AfterAppContainer, shareVolumePolicy: {type: enabled},
     volumeMounts: [{name: volume-1, mountPath: /a/b/c}, {name: volume-2, mountPath: /d/e/f}, {name: volume-staragent, mountPath: /staragent}]}
  volumes: [{name: volume-1}, {name: volume-2}, {name: volume-staragent}, {name: volume-3}, {name: volume-4}]
"#;

fn pod1() -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "test-pod", "namespace": "default", "labels": {"app": "suxing-test"}},
        "spec": {
            "initContainers": [{"name": "init-0", "image": "busybox:1.0.0"}],
            "containers": [{
                "name": "nginx",
                "image": "nginx:1.15.1",
                "env": [{"name": "hello1", "value": "world1"}, {"name": "hello2", "value": "world2"}],
                "volumeMounts": [{"name": "volume-a", "mountPath": "/a/b"}, {"name": "volume-b", "mountPath": "/e/f"}]
            }],
            "volumes": [{"name": "volume-a"}, {"name": "volume-b"}]
        }
    })
}

fn pods() -> Value {
    let mut pod = pod1();
    let spec = pod["spec"].as_object_mut().unwrap();
    spec.remove("initContainers");
    spec["containers"][0]["volumeMounts"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "volume-staragent", "mountPath": "/staragent"}));
    spec["volumes"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "volume-staragent"}));
    pod
}

/// A SidecarSet selecting `app: demo`.
fn demo(name: &str) -> SidecarSetBuilder {
    SidecarSetBuilder::new(name).selector(&[("app", "demo")])
}

/// Sidecars from a YAML flow list, as written (no defaulting).
fn sidecars(yaml: &str) -> Vec<SidecarContainer> {
    kruise_webhook::yaml::from_str(yaml)
        .unwrap_or_else(|e| panic!("sidecars do not parse: {e}\n{yaml}"))
}

/// A minimal SidecarSet selecting `app: demo` with the given containers (YAML flow list).
fn demo_set(name: &str, containers: &str) -> SidecarSet {
    demo(name).containers(sidecars(containers)).build()
}

fn demo_pod(containers: Value) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "demo-0", "namespace": "default", "labels": {"app": "demo"}},
        "spec": {"containers": containers}
    })
}

// ---------------------------------------------------------------------------------------------
// 13.0 golden

const GOLDEN_STORED: &str = r#"
apiVersion: apps.kruise.io/v1beta1
kind: SidecarSet
metadata:
  name: log-sidecar
  annotations:
    kruise.io/sidecarset-hash: dzw7fx282v47vxxddxb4d44448bcvz2875xx89x4bcxww8f9xf9ff4d45v22vc4c
    kruise.io/sidecarset-hash-without-image: v4497x7v99fdbcd9dfvcc2xd759zcv27fxb4c68fd9f8b52b4f77c72ff988cwbd
spec:
  selector: {matchLabels: {app: web}}
  containers:
  - name: log-agent
    image: "fluent-bit:2.0"
    resources: {}
    volumeMounts: [{name: fb-config, mountPath: /fluent-bit/etc}]
    terminationMessagePath: /dev/termination-log
    terminationMessagePolicy: File
    imagePullPolicy: IfNotPresent
    podInjectPolicy: AfterAppContainer
    upgradeStrategy: {upgradeType: ColdUpgrade}
    shareVolumePolicy: {type: enabled}
    transferEnv: [{sourceContainerName: app, envName: LOG_LEVEL}]
  volumes:
  - {name: fb-config, configMap: {name: fb-config, defaultMode: 420}}
  - {name: unused, emptyDir: {}}
  imagePullSecrets: [{name: regcred}]
  updateStrategy: {type: RollingUpdate, partition: 0, maxUnavailable: 1}
  revisionHistoryLimit: 10
status: {latestRevision: log-sidecar-5d8f7c9b6, matchedPods: 0, updatedPods: 0, readyPods: 0}
"#;

/// What a user writes; the SidecarSet webhook turns it into `GOLDEN_STORED`.
const GOLDEN_USER: &str = r#"
apiVersion: apps.kruise.io/v1beta1
kind: SidecarSet
metadata: {name: log-sidecar}
spec:
  selector: {matchLabels: {app: web}}
  containers:
  - name: log-agent
    image: "fluent-bit:2.0"
    volumeMounts: [{name: fb-config, mountPath: /fluent-bit/etc}]
    podInjectPolicy: AfterAppContainer
    shareVolumePolicy: {type: enabled}
    transferEnv: [{sourceContainerName: app, envName: LOG_LEVEL}]
  volumes:
  - {name: fb-config, configMap: {name: fb-config}}
  - {name: unused}
  imagePullSecrets: [{name: regcred}]
"#;

const GOLDEN_HASH: &str = "dzw7fx282v47vxxddxb4d44448bcvz2875xx89x4bcxww8f9xf9ff4d45v22vc4c";
const GOLDEN_HASH_WITHOUT_IMAGE: &str =
    "v4497x7v99fdbcd9dfvcc2xd759zcv27fxb4c68fd9f8b52b4f77c72ff988cwbd";

fn golden_pod() -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web-0", "namespace": "prod", "labels": {"app": "web"}},
        "spec": {
            "containers": [{
                "name": "app",
                "image": "web:1",
                "env": [{"name": "LOG_LEVEL", "value": "debug"}],
                "volumeMounts": [{"name": "logs", "mountPath": "/var/log/app"}]
            }],
            "volumes": [{"name": "logs", "emptyDir": {}}]
        }
    })
}

fn assert_golden_result(out: &Outcome) {
    out.assert_patched();
    let annotations = out.annotations();
    assert_eq!(
        annotations[HASH],
        hash_annotation(&[hash_entry(
            "log-sidecar",
            GOLDEN_HASH,
            &["log-agent"],
            Some("log-sidecar-5d8f7c9b6")
        )])
    );
    assert_eq!(
        annotations[HASH_WITHOUT_IMAGE],
        hash_annotation(&[hash_entry(
            "log-sidecar",
            GOLDEN_HASH_WITHOUT_IMAGE,
            &["log-agent"],
            None
        )])
    );
    assert_eq!(annotations[INJECTED_LIST], "log-sidecar");
    assert_eq!(annotations.len(), 3, "{annotations:?}");
    assert_eq!(out.patched["metadata"]["name"], "web-0");
    assert_eq!(out.patched["metadata"]["namespace"], "prod");
    assert_eq!(out.patched["metadata"]["labels"], json!({"app": "web"}));

    let mut app = golden_pod()["spec"]["containers"][0].clone();
    app["futureField"] = future();
    assert_eq!(out.patched["spec"]["containers"][0], app, "app untouched");
    assert_eq!(
        out.patched["spec"]["containers"][1],
        json!({
            "name": "log-agent",
            "image": "fluent-bit:2.0",
            "env": [{"name": "IS_INJECTED", "value": "true"}, {"name": "LOG_LEVEL", "value": "debug"}],
            "resources": {},
            "volumeMounts": [
                {"name": "fb-config", "mountPath": "/fluent-bit/etc"},
                {"name": "logs", "mountPath": "/var/log/app"}
            ],
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
            "imagePullPolicy": "IfNotPresent"
        })
    );
    assert_eq!(
        out.patched["spec"]["containers"].as_array().unwrap().len(),
        2
    );
    assert_eq!(
        out.patched["spec"]["volumes"],
        json!([{"name": "logs", "emptyDir": {}}, {"name": "fb-config", "configMap": {"name": "fb-config", "defaultMode": 420}}])
    );
    assert_eq!(
        out.patched["spec"]["imagePullSecrets"],
        json!([{"name": "regcred"}])
    );
    assert_eq!(out.patched["spec"]["futureField"], future());
}

#[test]
fn golden_13_0_stored_sidecarset() {
    let out = run(vec![ss(GOLDEN_STORED)], &[], golden_pod());
    assert_golden_result(&out);
}

#[test]
fn golden_13_0_defaulting_gives_the_stored_sidecarset() {
    let mut set = ss(GOLDEN_USER);
    kruise_webhook::defaults::sidecarset::default_and_hash(&mut set);
    let stored = ss(GOLDEN_STORED);
    assert_eq!(
        set.metadata.annotations, stored.metadata.annotations,
        "hashes of §13.0"
    );
    // Go always writes `resources: {}` (a struct); the typed model may leave it absent.
    let mut expected = stored.spec.clone();
    let mut actual = set.spec.clone();
    for spec in [&mut expected, &mut actual] {
        for c in spec.containers.iter_mut().flatten() {
            c.container.resources.get_or_insert_with(Default::default);
        }
    }
    assert_eq!(actual, expected, "defaulted spec of §13.0");
    // Injecting the defaulted object gives the golden pod (no latestRevision without a controller).
    let mut with_status = set.clone();
    with_status.status = stored.status.clone();
    assert_golden_result(&run(vec![with_status], &[], golden_pod()));
}

// ---------------------------------------------------------------------------------------------
// A. Matching and skipping

#[test]
fn a1_no_match() {
    let mut pod = pod1();
    pod["metadata"]["labels"]["app"] = json!("doesnt-match");
    run(vec![ss(SS1)], &[], pod).assert_unchanged();
}

#[test]
fn a2_injection_paused() {
    let set = ss_with(SS1, |s| {
        s["spec"]["injectionStrategy"] = json!({"paused": true})
    });
    run(vec![set], &[], pod1()).assert_unchanged();
}

#[test]
fn a3_inactive_pod_succeeded_failed_or_terminating() {
    for phase in ["Succeeded", "Failed"] {
        let mut pod = pod1();
        pod["status"] = json!({"phase": phase});
        run(vec![ss(SS1)], &[], pod).assert_unchanged();
    }
    let mut pod = pod1();
    pod["metadata"]["deletionTimestamp"] = json!("2026-07-02T10:00:00Z");
    run(vec![ss(SS1)], &[], pod).assert_unchanged();
    // A running pod is injected.
    let mut pod = pod1();
    pod["status"] = json!({"phase": "Pending"});
    run(vec![ss(SS1)], &[], pod).assert_patched();
}

#[test]
fn a4_nil_or_empty_selector() {
    let null_selector = ss_with(SS1, |s| {
        s["spec"].as_object_mut().unwrap().remove("selector");
    });
    run(vec![null_selector], &[], pod1()).assert_unchanged();
    let empty_selector = ss_with(SS1, |s| s["spec"]["selector"] = json!({}));
    run(vec![empty_selector], &[], pod1()).assert_unchanged();
    let empty_lists = ss_with(SS1, |s| {
        s["spec"]["selector"] = json!({"matchLabels": {}, "matchExpressions": []})
    });
    run(vec![empty_lists], &[], pod1()).assert_unchanged();
}

#[test]
fn a5_namespace_selector() {
    let set = || {
        ss_with(SS1, |s| {
            s["spec"]["namespaceSelector"] = json!({"matchLabels": {"env": "prod"}})
        })
    };
    let in_ns = |ns: &str| {
        let mut pod = pod1();
        pod["metadata"]["namespace"] = json!(ns);
        pod
    };
    let namespaces: &[(&str, &[(&str, &str)])] = &[
        (
            "a",
            &[("env", "prod"), ("kubernetes.io/metadata.name", "a")],
        ),
        ("b", &[("kubernetes.io/metadata.name", "b")]),
    ];
    for assume in [false, true] {
        let h = harness(vec![set()])
            .namespaces(namespaces)
            .assume_undeclared(assume);
        let out = h.run(in_ns("a"));
        out.assert_patched();
        assert_eq!(out.containers(), ["dns-f", "nginx", "log-agent"]);
        h.run(in_ns("b")).assert_unchanged();
        // Namespace object not visible: no injection, no error.
        h.run(in_ns("c")).assert_unchanged();
    }
}

#[test]
fn a6_v1alpha1_namespace_field() {
    let pinned = ss_with(SS1, |s| s["spec"]["namespace"] = json!("ns1"));
    let converted = ss_with(SS1, |s| {
        s["spec"]["namespaceSelector"] =
            json!({"matchLabels": {"kubernetes.io/metadata.name": "ns1"}})
    });
    let in_ns = |ns: &str| {
        let mut pod = pod1();
        pod["metadata"]["namespace"] = json!(ns);
        pod
    };
    let namespaces: &[(&str, &[(&str, &str)])] = &[
        ("ns1", &[("kubernetes.io/metadata.name", "ns1")]),
        ("ns2", &[("kubernetes.io/metadata.name", "ns2")]),
    ];
    for set in [pinned, converted] {
        let h = harness(vec![set.clone()])
            .namespaces(namespaces)
            .assume_undeclared(false);
        let out = h.run(in_ns("ns1"));
        out.assert_patched();
        assert_eq!(out.annotation(INJECTED_LIST), Some("sidecarset1"));
        h.run(in_ns("ns2")).assert_unchanged();
        // v1beta1 stores `namespace: ns1` as a namespaceSelector on kubernetes.io/metadata.name,
        // so a Namespace that is not visible is not matched (§2.3); one without the label (a
        // pre-1.21 apiserver does not set it) is matched as a 1.21 apiserver would label it.
        h.run(in_ns("ns3")).assert_unchanged();
        let unlabelled = harness(vec![set.clone()])
            .namespaces(&[("ns1", &[("team", "x")]), ("ns2", &[])])
            .assume_undeclared(false);
        unlabelled.run(in_ns("ns1")).assert_patched();
        unlabelled.run(in_ns("ns2")).assert_unchanged();
        // Without a cluster, an undeclared namespace is assumed to carry its name label.
        let assumed = harness(vec![set]).assume_undeclared(true);
        assumed.run(in_ns("ns1")).assert_patched();
        assumed.run(in_ns("ns2")).assert_unchanged();
    }
}

#[test]
fn a7_kube_system_is_injected() {
    let mut pod = pod1();
    pod["metadata"]["namespace"] = json!("kube-system");
    let out = run(vec![ss(SS1)], &[], pod);
    out.assert_patched();
    assert_eq!(out.containers(), ["dns-f", "nginx", "log-agent"]);
}

#[test]
fn a8_control_plane_namespace_is_excluded_by_configuration_not_by_handler() {
    // The exclusion is the webhook configuration's namespaceSelector (`control-plane DoesNotExist`);
    // if the apiserver does call the handler, it injects like anywhere else (§6.2).
    let mut pod = pod1();
    pod["metadata"]["namespace"] = json!("kruise-system");
    let out = harness(vec![ss(SS1)])
        .namespaces(&[("kruise-system", &[("control-plane", "x")])])
        .assume_undeclared(false)
        .run(pod);
    out.assert_patched();
}

// ---------------------------------------------------------------------------------------------
// B. Ordering and name conflicts

#[test]
fn b1_inject_policy_ordering() {
    let out = run(vec![ss(SS1)], &[], pod1());
    out.assert_patched();
    assert_eq!(out.containers(), ["dns-f", "nginx", "log-agent"]);
    assert_eq!(out.init_containers(), ["init-0", "init-1", "init-2"]);
    for name in ["dns-f", "log-agent", "init-1", "init-2"] {
        assert_eq!(out.env(name), ["IS_INJECTED=true"], "{name}");
        assert_eq!(
            out.raw_container(name)["env"],
            json!([{"name": "IS_INJECTED", "value": "true"}])
        );
    }
    assert_eq!(out.env("init-0"), Vec::<String>::new());
    assert_eq!(out.env("nginx"), ["hello1=world1", "hello2=world2"]);
    assert_eq!(
        out.annotation(HASH).unwrap(),
        r#"{"sidecarset1":{"updateTimestamp":"2026-07-02T10:04:05Z","hash":"c4k2dbb95d","sidecarSetName":"sidecarset1","sidecarList":["dns-f","log-agent"]}}"#
    );
    assert_eq!(
        out.annotation(HASH_WITHOUT_IMAGE).unwrap(),
        r#"{"sidecarset1":{"updateTimestamp":"2026-07-02T10:04:05Z","hash":"","sidecarSetName":"sidecarset1","sidecarList":["dns-f","log-agent"]}}"#
    );
    assert_eq!(out.annotation(INJECTED_LIST), Some("sidecarset1"));
    assert_eq!(out.annotations().len(), 3);
    // The injected core containers carry exactly what the SidecarSet says (Kruise fields dropped),
    // with Go's always-present `resources: {}`.
    assert_eq!(
        out.raw_container("dns-f"),
        &json!({"name": "dns-f", "image": "dns-f-image:1.0", "env": [{"name": "IS_INJECTED", "value": "true"}], "resources": {}})
    );
    // Volumes untouched, no secrets added.
    assert_eq!(out.volumes(), ["volume-a", "volume-b"]);
    assert!(out.patched["spec"].get("imagePullSecrets").is_none());
}

#[test]
fn b1_e2e_variant() {
    let set = demo_set(
        "base",
        "[{name: nginx-sidecar, image: nginx, podInjectPolicy: BeforeAppContainer}, {name: busybox-sidecar, image: busybox, podInjectPolicy: AfterAppContainer}]",
    );
    let out = run(
        vec![set],
        &[],
        demo_pod(json!([{"name": "main", "image": "main:1"}])),
    );
    assert_eq!(
        out.containers(),
        ["nginx-sidecar", "main", "busybox-sidecar"]
    );
}

/// B2: `sidecar-2(After)`, `sidecar-1(After)`, `new-sidecar-1(Before)`, sorted by name first
/// (the sort gate reproduces the sorted list the upstream merge test feeds in).
fn b2_set(which: &[&str]) -> SidecarSet {
    let all = [
        ("sidecar-2", "AfterAppContainer"),
        ("sidecar-1", "AfterAppContainer"),
        ("new-sidecar-1", "BeforeAppContainer"),
    ];
    let containers: Vec<String> = all
        .iter()
        .filter(|(n, _)| which.contains(n))
        .map(|(n, p)| format!("{{name: {n}, image: {n}-image, podInjectPolicy: {p}}}"))
        .collect();
    demo_set("merge", &format!("[{}]", containers.join(", ")))
}

fn b2_case(pod_containers: &[&str], injected: &[&str]) -> Vec<String> {
    let containers: Vec<Value> = pod_containers
        .iter()
        .map(|n| json!({"name": n, "image": "app:1"}))
        .collect();
    let out = harness(vec![b2_set(injected)])
        .sorted()
        .run(demo_pod(json!(containers)));
    out.assert_patched();
    // Same-name pod containers are replaced by the sidecar.
    for name in injected {
        assert_eq!(
            out.container(name).image.as_deref(),
            Some(format!("{name}-image").as_str())
        );
    }
    strings(&out.containers())
}

const B2_ALL: &[&str] = &["sidecar-2", "sidecar-1", "new-sidecar-1"];

#[test]
fn b2_merge_function_all_three_into_app() {
    assert_eq!(
        b2_case(&["app-container"], B2_ALL),
        ["new-sidecar-1", "app-container", "sidecar-1", "sidecar-2"]
    );
}

#[test]
fn b2_merge_function_before_only() {
    assert_eq!(
        b2_case(&["app-container"], &["new-sidecar-1"]),
        ["new-sidecar-1", "app-container"]
    );
}

#[test]
fn b2_merge_function_after_only() {
    assert_eq!(
        b2_case(&["app-container"], &["sidecar-2", "sidecar-1"]),
        ["app-container", "sidecar-1", "sidecar-2"]
    );
}

#[test]
fn b2_merge_function_replaced_in_place() {
    assert_eq!(
        b2_case(
            &["sidecar-1", "app-container", "sidecar-2"],
            &["sidecar-2", "sidecar-1"]
        ),
        ["sidecar-1", "app-container", "sidecar-2"]
    );
}

#[test]
fn b2_merge_function_replaced_and_new() {
    assert_eq!(
        b2_case(&["sidecar-1", "app-container", "sidecar-2"], B2_ALL),
        ["new-sidecar-1", "sidecar-1", "app-container", "sidecar-2"]
    );
}

#[test]
fn b2_merge_function_empty_pod() {
    assert_eq!(
        b2_case(&[], B2_ALL),
        ["new-sidecar-1", "sidecar-1", "sidecar-2"]
    );
}

fn init_set(inits: &str) -> SidecarSet {
    demo("inits").init_containers(sidecars(inits)).build()
}

fn init_pod(inits: &[&str]) -> Value {
    let mut pod = demo_pod(json!([{"name": "app", "image": "app:1"}]));
    if !inits.is_empty() {
        let list: Vec<Value> = inits
            .iter()
            .map(|n| json!({"name": n, "image": "init:1"}))
            .collect();
        pod["spec"]["initContainers"] = json!(list);
    }
    pod
}

#[test]
fn b3_init_container_sort_and_placement() {
    let unordered = || {
        init_set("[{name: a-init, image: i}, {name: c-init, image: i}, {name: b-init, image: i}]")
    };
    // (a) no pod init containers
    let out = run(vec![unordered()], &[], init_pod(&[]));
    assert_eq!(out.init_containers(), ["a-init", "b-init", "c-init"]);
    assert_eq!(out.containers(), ["app"]);
    // (b) after the pod's own
    let out = run(
        vec![unordered()],
        &[],
        init_pod(&["app1-init", "app2-init"]),
    );
    assert_eq!(
        out.init_containers(),
        ["app1-init", "app2-init", "a-init", "b-init", "c-init"]
    );
    // (c) podInjectPolicy honoured
    let with_policy = init_set(
        "[{name: a-init, image: i, podInjectPolicy: AfterAppContainer}, {name: c-init, image: i, podInjectPolicy: BeforeAppContainer}, {name: b-init, image: i, podInjectPolicy: BeforeAppContainer}]",
    );
    let out = run(
        vec![with_policy],
        &[],
        init_pod(&["app1-init", "app2-init"]),
    );
    assert_eq!(
        out.init_containers(),
        ["b-init", "c-init", "app1-init", "app2-init", "a-init"]
    );
    // Plain init containers never enter the sidecar list.
    assert_eq!(
        out.annotation(HASH).unwrap(),
        hash_annotation(&[hash_entry("inits", "", &[], None)])
    );
}

#[test]
fn b3_init_containers_sorted_across_sidecarsets() {
    let first = demo("aaa").init_container("z-init", "i").build();
    let second = demo("bbb").init_container("m-init", "i").build();
    let out = run(vec![first, second], &[], init_pod(&["app-init"]));
    assert_eq!(out.init_containers(), ["app-init", "m-init", "z-init"]);
    assert_eq!(out.annotation(INJECTED_LIST), Some("aaa,bbb"));
}

#[test]
fn b4_same_name_as_app_container() {
    let mut pod = pod1();
    pod["spec"]["containers"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "dns-f", "image": "old:0"}));
    let out = run(vec![ss(SS1)], &[], pod);
    assert_eq!(out.containers(), ["nginx", "dns-f", "log-agent"]);
    assert_eq!(
        out.container("dns-f").image.as_deref(),
        Some("dns-f-image:1.0")
    );
    assert_eq!(out.env("dns-f"), ["IS_INJECTED=true"]);
}

#[test]
fn b5_empty_pod_inject_policy_goes_after() {
    let set = demo_set("plain", "[{name: sidecar, image: x}]");
    let out = run(
        vec![set],
        &[],
        demo_pod(json!([{"name": "app", "image": "app:1"}])),
    );
    assert_eq!(out.containers(), ["app", "sidecar"]);
    // An unknown policy is After as well.
    let set = demo_set(
        "odd",
        "[{name: sidecar, image: x, podInjectPolicy: Middle}]",
    );
    let out = run(
        vec![set],
        &[],
        demo_pod(json!([{"name": "app", "image": "app:1"}])),
    );
    assert_eq!(out.containers(), ["app", "sidecar"]);
}

#[test]
fn b6_two_sidecarsets_names_list() {
    // Both define dns-f/log-agent: duplicates are emitted and the apiserver rejects the pod, so a
    // reinvocation (where "the last one processed wins" the first same-name slot) is moot.
    let out = harness(vec![ss(SS3), ss(SS1)])
        .skip_reinvocation("duplicate container names: the apiserver rejects this pod")
        .run(pod1());
    assert_eq!(
        out.annotation(INJECTED_LIST),
        Some("sidecarset1,sidecarset3")
    );
    assert_eq!(
        out.annotation(HASH).unwrap(),
        hash_annotation(&[
            hash_entry("sidecarset1", "c4k2dbb95d", &["dns-f", "log-agent"], None),
            hash_entry("sidecarset3", "gm967682cm", &["dns-f", "log-agent"], None),
        ])
    );
    // Catalogue order (by name): sidecarset1 then sidecarset3; no dedupe.
    assert_eq!(
        out.containers(),
        ["dns-f", "nginx", "log-agent", "dns-f", "log-agent"]
    );
}

#[test]
fn b7_duplicate_across_sidecarsets() {
    let out = harness(vec![ss(SS2), ss(SS3)])
        .skip_reinvocation("duplicate container names: the apiserver rejects this pod")
        .run(pod1());
    assert_eq!(
        out.annotation(HASH).unwrap(),
        hash_annotation(&[
            hash_entry("sidecarset2", "c4k2dbb95d", &["dns-f"], None),
            hash_entry("sidecarset3", "gm967682cm", &["dns-f", "log-agent"], None),
        ])
    );
    assert_eq!(out.containers(), ["dns-f", "nginx", "dns-f", "log-agent"]);
    let containers = &out.pod.spec.as_ref().unwrap().containers;
    // SS2's dns-f (mount volume-1, transferred hello2) before nginx, SS3's (shared mounts) after.
    assert_eq!(
        env_strings(&containers[0]),
        ["IS_INJECTED=true", "hello2=world2"]
    );
    let ss3_paths: Vec<&str> = containers[2]
        .volume_mounts
        .iter()
        .flatten()
        .map(|m| m.mount_path.as_str())
        .collect();
    assert_eq!(ss3_paths, ["/a/b/c", "/d/e/f", "/a/b", "/e/f"]);
    assert_eq!(out.init_containers(), ["dns-e", "init-0"]);
    assert_eq!(
        out.volumes(),
        ["volume-a", "volume-b", "volume-1", "volume-2"]
    );
}

#[test]
fn b7_duplicate_within_one_request_is_reinvocation_safe_when_names_differ() {
    // Control for B6/B7: two SidecarSets with distinct names re-run cleanly.
    let out = run(
        vec![
            ss(SS1),
            ss_with(SS3, |s| {
                s["spec"]["containers"] = json!([
                    {"name": "other-f", "image": "x", "podInjectPolicy": "AfterAppContainer", "shareVolumePolicy": {"type": "enabled"}}
                ]);
            }),
        ],
        &[],
        pod1(),
    );
    assert_eq!(out.containers(), ["dns-f", "nginx", "log-agent", "other-f"]);
    assert_eq!(out.mount_paths("other-f"), ["/a/b", "/e/f"]);
}

#[test]
fn b8_existing_injected_list_merged() {
    let mut pod = pod1();
    pod["metadata"]["annotations"] = json!({INJECTED_LIST: "zzz,aaa"});
    let out = run(vec![ss(SS1)], &[], pod);
    assert_eq!(out.annotation(INJECTED_LIST), Some("aaa,sidecarset1,zzz"));
}

#[test]
fn b8_empty_segment_is_kept() {
    let mut pod = pod1();
    pod["metadata"]["annotations"] = json!({INJECTED_LIST: "zzz,,aaa"});
    let out = run(vec![ss(SS1)], &[], pod);
    assert_eq!(out.annotation(INJECTED_LIST), Some(",aaa,sidecarset1,zzz"));
}

#[test]
fn b9_sort_gate() {
    let zeta = demo_set(
        "set-a",
        "[{name: zeta, image: z, podInjectPolicy: BeforeAppContainer}]",
    );
    let alpha = demo_set(
        "set-b",
        "[{name: alpha, image: a, podInjectPolicy: BeforeAppContainer}]",
    );
    let pod = || demo_pod(json!([{"name": "app", "image": "app:1"}]));
    for sets in [
        vec![zeta.clone(), alpha.clone()],
        vec![alpha.clone(), zeta.clone()],
    ] {
        let out = harness(sets.clone()).sorted().run(pod());
        assert_eq!(out.containers(), ["alpha", "zeta", "app"]);
        // Gate off: SidecarSet order, which this server makes deterministic (by name).
        let out = harness(sets).run(pod());
        assert_eq!(out.containers(), ["zeta", "alpha", "app"]);
    }
}

// ---------------------------------------------------------------------------------------------
// C. Volumes, shareVolumePolicy, devices

#[test]
fn c1_only_referenced_volumes() {
    let out = run(vec![ss(SS2)], &[], pod1());
    assert_eq!(out.volumes(), ["volume-a", "volume-b", "volume-1"]);
    assert_eq!(out.containers(), ["dns-f", "nginx"]);
    assert_eq!(out.init_containers(), ["dns-e", "init-0"]);
}

#[test]
fn c2_pod_volume_wins() {
    let set = demo("vols")
        .containers(sidecars(
            "[{name: s, image: s, volumeMounts: [{name: volume-a, mountPath: /s}]}]",
        ))
        .volumes(vec![Volume {
            name: "volume-a".into(),
            empty_dir: Some(Default::default()),
            ..Default::default()
        }])
        .build();
    let mut pod = demo_pod(json!([{"name": "app", "image": "app:1"}]));
    pod["spec"]["volumes"] = json!([{"name": "volume-a", "hostPath": {"path": "/x"}}]);
    let out = run(vec![set], &[], pod);
    assert_eq!(
        out.patched["spec"]["volumes"],
        json!([{"name": "volume-a", "hostPath": {"path": "/x"}}])
    );
    assert_eq!(out.mount_paths("s"), ["/s"]);
}

#[test]
fn c3_share_volume_policy_enabled() {
    let out = run(vec![ss(SSA)], &[], pods());
    assert_eq!(out.init_containers(), ["dns-e"]);
    assert_eq!(
        out.mount_paths("dns-e"),
        ["/g/h/i", "/j/k/l", "/staragent", "/a/b", "/e/f"]
    );
    assert_eq!(out.containers(), ["nginx", "dns-f"]);
    assert_eq!(
        out.mount_paths("dns-f"),
        ["/a/b/c", "/d/e/f", "/staragent", "/a/b", "/e/f"]
    );
    let shared: Vec<&str> = out.container("dns-f").volume_mounts.as_ref().unwrap()[3..]
        .iter()
        .map(|m| m.name.as_str())
        .collect();
    assert_eq!(shared, ["volume-a", "volume-b"]);
    assert_eq!(
        out.volumes(),
        [
            "volume-a",
            "volume-b",
            "volume-staragent",
            "volume-3",
            "volume-4",
            "volume-1",
            "volume-2"
        ]
    );
}

fn c4_pod(sub_path_expr: Option<&str>) -> Value {
    let mut pod = pods();
    let nginx = &mut pod["spec"]["containers"][0];
    let mut mount = json!({"name": "volume-expansion", "mountPath": "/e/expansion"});
    if let Some(expr) = sub_path_expr {
        mount["subPathExpr"] = json!(expr);
    }
    nginx["volumeMounts"].as_array_mut().unwrap().push(mount);
    nginx["env"] =
        json!([{"name": "POD_NAME", "value": "bar"}, {"name": "OD_NAME", "value": "od_name"}]);
    pod["spec"]["volumes"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "volume-expansion", "emptyDir": {}}));
    pod
}

#[test]
fn c4_sub_path_expr_env_copy() {
    let out = run(
        vec![ss(SSA)],
        &[],
        c4_pod(Some("foo/$(POD_NAME)/$(OD_NAME)/conf")),
    );
    for name in ["dns-e", "dns-f"] {
        assert!(out.mount_paths(name).contains(&"/e/expansion"), "{name}");
        assert_eq!(
            out.env(name),
            ["IS_INJECTED=true", "POD_NAME=bar", "OD_NAME=od_name"],
            "{name}"
        );
    }
    assert_eq!(
        out.mount_paths("dns-f"),
        [
            "/a/b/c",
            "/d/e/f",
            "/staragent",
            "/a/b",
            "/e/f",
            "/e/expansion"
        ]
    );
    let mount = out
        .container("dns-e")
        .volume_mounts
        .as_ref()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(
        mount.sub_path_expr.as_deref(),
        Some("foo/$(POD_NAME)/$(OD_NAME)/conf")
    );
}

#[test]
fn c5_sub_path_expr_without_references() {
    for expr in [Some("foo"), Some(""), None] {
        let out = run(vec![ss(SSA)], &[], c4_pod(expr));
        for name in ["dns-e", "dns-f"] {
            assert!(out.mount_paths(name).contains(&"/e/expansion"), "{name}");
            assert_eq!(out.env(name), ["IS_INJECTED=true"], "{name} {expr:?}");
        }
    }
}

#[test]
fn c6_sharing_excludes_injected_sidecars() {
    let set = demo_set(
        "share",
        "[{name: s, image: s, shareVolumePolicy: {type: enabled}}]",
    );
    let pod = demo_pod(json!([
        {"name": "app", "image": "app:1", "volumeMounts": [{"name": "data", "mountPath": "/data"}]},
        {"name": "old-sidecar", "image": "o", "env": [{"name": "IS_INJECTED", "value": "true"}],
         "volumeMounts": [{"name": "logs", "mountPath": "/logs"}]}
    ]));
    let out = run(vec![set], &[], pod);
    assert_eq!(out.mount_paths("s"), ["/data"]);
}

#[test]
fn c6_share_policy_type_is_case_sensitive() {
    let set = demo_set(
        "share",
        "[{name: s, image: s, shareVolumePolicy: {type: Enabled}}]",
    );
    let pod = demo_pod(json!([
        {"name": "app", "image": "app:1", "volumeMounts": [{"name": "data", "mountPath": "/data"}]}
    ]));
    let out = run(vec![set], &[], pod);
    assert!(out.container("s").volume_mounts.is_none());
}

#[test]
fn c7_sharing_disabled() {
    let out = run(vec![ss(SS1)], &[], pod1());
    assert!(out.container("dns-f").volume_mounts.is_none());
    assert!(out.raw_container("dns-f").get("volumeMounts").is_none());
}

fn c8_pod() -> Value {
    let mut pod = pods();
    pod["spec"]["containers"][0]["volumeDevices"] = json!([
        {"name": "origin-pvc-1", "devicePath": "/origin-1"},
        {"name": "origin-pvc-share", "devicePath": "/share"}
    ]);
    let volumes = pod["spec"]["volumes"].as_array_mut().unwrap();
    volumes.push(json!({"name": "origin-pvc-1", "persistentVolumeClaim": {"claimName": "pvc-1"}}));
    volumes.push(
        json!({"name": "origin-pvc-share", "persistentVolumeClaim": {"claimName": "pvc-share"}}),
    );
    pod
}

#[test]
fn c8_volume_devices_share_disabled() {
    let set = ss_with(SSA, |s| {
        let init = &mut s["spec"]["initContainers"][0];
        init.as_object_mut().unwrap().remove("volumeMounts");
        init["volumeDevices"] = json!([{"name": "disk0", "devicePath": "/dev/nvme0"}]);
        init["shareVolumePolicy"] = json!({});
        let container = &mut s["spec"]["containers"][0];
        container.as_object_mut().unwrap().remove("volumeMounts");
        container["volumeDevices"] = json!([{"name": "disk0", "devicePath": "/dev/nvme1"}]);
        container["shareVolumePolicy"] = json!({});
        s["spec"]["volumes"] =
            json!([{"name": "disk0", "persistentVolumeClaim": {"claimName": "pvc-0"}}]);
    });
    let out = run(vec![set], &[], c8_pod());
    assert_eq!(out.devices("dns-e"), [("disk0", "/dev/nvme0")]);
    assert_eq!(out.devices("dns-f"), [("disk0", "/dev/nvme1")]);
    assert!(out.container("dns-f").volume_mounts.is_none());
    assert_eq!(
        out.volumes(),
        [
            "volume-a",
            "volume-b",
            "volume-staragent",
            "origin-pvc-1",
            "origin-pvc-share",
            "disk0"
        ]
    );
}

#[test]
fn c9_volume_devices_share_enabled() {
    let set = ss_with(SSA, |s| {
        let init = &mut s["spec"]["initContainers"][0];
        init["volumeDevices"] = json!([{"name": "disk0", "devicePath": "/dev/nvme0"}]);
        init["shareVolumePolicy"] = json!({});
        init["shareVolumeDevicePolicy"] = json!({"type": "enabled"});
        let container = &mut s["spec"]["containers"][0];
        container.as_object_mut().unwrap().remove("volumeMounts");
        container["volumeDevices"] = json!([{"name": "disk0", "devicePath": "/dev/nvme1"}]);
        container["shareVolumePolicy"] = json!({});
        container["shareVolumeDevicePolicy"] = json!({"type": "enabled"});
        s["spec"]["volumes"] = json!([
            {"name": "volume-3"}, {"name": "volume-4"}, {"name": "volume-staragent"},
            {"name": "disk0", "persistentVolumeClaim": {"claimName": "pvc-0"}}
        ]);
    });
    let out = run(vec![set], &[], c8_pod());
    assert_eq!(
        out.devices("dns-e"),
        [
            ("disk0", "/dev/nvme0"),
            ("origin-pvc-1", "/origin-1"),
            ("origin-pvc-share", "/share")
        ]
    );
    assert_eq!(
        out.devices("dns-f"),
        [
            ("disk0", "/dev/nvme1"),
            ("origin-pvc-1", "/origin-1"),
            ("origin-pvc-share", "/share")
        ]
    );
    assert_eq!(out.mount_paths("dns-e"), ["/g/h/i", "/j/k/l", "/staragent"]);
    assert_eq!(
        out.volumes(),
        [
            "volume-a",
            "volume-b",
            "volume-staragent",
            "origin-pvc-1",
            "origin-pvc-share",
            "volume-3",
            "volume-4",
            "disk0"
        ]
    );
}

#[test]
fn c9_shared_device_path_taken_by_own_mount_is_skipped() {
    let set = demo_set(
        "dev",
        "[{name: s, image: s, volumeMounts: [{name: v, mountPath: /share}], shareVolumeDevicePolicy: {type: enabled}}]",
    );
    let pod = demo_pod(json!([{"name": "app", "image": "a", "volumeDevices": [
        {"name": "p1", "devicePath": "/origin-1"}, {"name": "p2", "devicePath": "/share"}
    ]}]));
    let out = run(vec![set], &[], pod);
    assert_eq!(out.devices("s"), [("p1", "/origin-1")]);
}

#[test]
fn c10_volumes_collected_order_and_missing_names() {
    // None of the referenced names is declared: nothing is collected (HEAD ignores missing names).
    let missing = ss_with(SSA, |s| {
        s["spec"]["volumes"] =
            json!([{"name": "volume-a1"}, {"name": "volume-b2"}, {"name": "volume-c3"}]);
        s["spec"]["initContainers"][0]["volumeDevices"] =
            json!([{"name": "disk0", "devicePath": "/dev/nvme0"}]);
        s["spec"]["containers"][0]["volumeDevices"] =
            json!([{"name": "disk0", "devicePath": "/dev/nvme1"}]);
    });
    let out = run(vec![missing], &[], pods());
    assert_eq!(out.volumes(), ["volume-a", "volume-b", "volume-staragent"]);

    let declared = ss_with(SSA, |s| {
        let init = &mut s["spec"]["initContainers"][0];
        init["volumeMounts"] = json!([{"name": "volume-1", "mountPath": "/v1"}, {"name": "volume-2", "mountPath": "/v2"}]);
        init["volumeDevices"] = json!([{"name": "disk0", "devicePath": "/dev/nvme0"}]);
        let container = &mut s["spec"]["containers"][0];
        container["volumeMounts"] = json!([{"name": "volume-3", "mountPath": "/v3"}, {"name": "volume-4", "mountPath": "/v4"}]);
        container["volumeDevices"] = json!([{"name": "disk1", "devicePath": "/dev/nvme1"}]);
        s["spec"]["volumes"] = json!([
            {"name": "disk1"}, {"name": "volume-4"}, {"name": "volume-3"},
            {"name": "disk0"}, {"name": "volume-2"}, {"name": "volume-1"}
        ]);
    });
    let out = run(vec![declared], &[], pods());
    assert_eq!(
        out.volumes(),
        [
            "volume-a",
            "volume-b",
            "volume-staragent",
            "volume-1",
            "volume-2",
            "disk0",
            "volume-3",
            "volume-4",
            "disk1"
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// D. Env / transferEnv

#[test]
fn d1_transfer_env_basic() {
    let set = ss_with(SS2, |s| {
        s["spec"]["initContainers"][0]
            .as_object_mut()
            .unwrap()
            .remove("podInjectPolicy");
    });
    let out = run(vec![set], &[], pod1());
    assert_eq!(out.init_containers(), ["init-0", "dns-e"]);
    assert_eq!(out.env("dns-e"), ["IS_INJECTED=true", "hello2=world2"]);
    assert_eq!(out.containers(), ["dns-f", "nginx"]);
    assert_eq!(out.env("dns-f"), ["IS_INJECTED=true", "hello2=world2"]);
}

fn d2_set(transfer: &str) -> SidecarSet {
    demo_set(
        "transfer",
        &format!(
            "[{{name: proxy, image: p, podInjectPolicy: BeforeAppContainer, env: [{{name: OD_NAME, value: sidecar_name}}, {{name: SidecarName, value: proxy}}], transferEnv: {transfer}}}]"
        ),
    )
}

fn d2_pod() -> Value {
    let mut pod = demo_pod(json!([{"name": "main", "image": "main:1", "env": [
        {"name": "POD_NAME", "value": "bar"},
        {"name": "OD_NAME", "value": "od_name"},
        {"name": "PROXY_IP", "value": "127.0.0.1"}
    ]}]));
    pod["metadata"]["labels"]["biz"] = json!("main");
    pod["metadata"]["annotations"] = json!({"biz": "main"});
    pod
}

const D2_ENV: &[&str] = &[
    "OD_NAME=sidecar_name",
    "SidecarName=proxy",
    "IS_INJECTED=true",
    "POD_NAME=bar",
    "PROXY_IP=127.0.0.1",
];

#[test]
fn d2_own_env_wins() {
    let set = d2_set(
        "[{sourceContainerName: main, envName: POD_NAME}, {sourceContainerName: main, envName: OD_NAME}, {sourceContainerName: main, envName: PROXY_IP}]",
    );
    let out = run(vec![set], &[], d2_pod());
    assert_eq!(out.env("proxy"), D2_ENV);
}

#[test]
fn d3_source_container_name_from_labels() {
    let set = d2_set(
        "[{sourceContainerNameFrom: {fieldRef: {apiVersion: v1, fieldPath: \"metadata.labels['biz']\"}}, envNames: [POD_NAME, OD_NAME, PROXY_IP]}]",
    );
    let out = run(vec![set], &[], d2_pod());
    assert_eq!(out.env("proxy"), D2_ENV);
}

#[test]
fn d4_source_container_name_from_annotations() {
    let set = d2_set(
        "[{sourceContainerNameFrom: {fieldRef: {apiVersion: v1, fieldPath: \"metadata.annotations['biz']\"}}, envNames: [POD_NAME, OD_NAME, PROXY_IP]}]",
    );
    let out = run(vec![set], &[], d2_pod());
    assert_eq!(out.env("proxy"), D2_ENV);
}

#[test]
fn d4_source_container_name_from_missing_label_transfers_nothing() {
    let set = d2_set(
        "[{sourceContainerNameFrom: {fieldRef: {apiVersion: v1, fieldPath: \"metadata.labels['nope']\"}}, envNames: [POD_NAME]}]",
    );
    let out = run(vec![set], &[], d2_pod());
    assert_eq!(
        out.env("proxy"),
        [
            "OD_NAME=sidecar_name",
            "SidecarName=proxy",
            "IS_INJECTED=true"
        ]
    );
}

#[test]
fn d5_unresolvable_sources() {
    let set = ss_with(SS1, |s| {
        s["spec"]["containers"][0]["transferEnv"] = json!([
            {"sourceContainerName": "ghost", "envName": "X"},
            {"sourceContainerName": "nginx", "envName": "missing"}
        ]);
    });
    let out = run(vec![set], &[], pod1());
    assert_eq!(out.env("dns-f"), ["IS_INJECTED=true"]);
}

#[test]
fn d6_field_ref_metadata_name() {
    let set = ss_with(SS1, |s| {
        s["spec"]["containers"][0]["transferEnv"] = json!([
            {"sourceContainerNameFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}, "envName": "hello1"}
        ]);
    });
    let mut pod = pod1();
    pod["metadata"]["name"] = json!("nginx");
    let out = run(vec![set], &[], pod);
    assert_eq!(out.env("dns-f"), ["IS_INJECTED=true"]);
}

#[test]
fn d7_sorted_env_names() {
    let set = demo_set(
        "sorted",
        "[{name: s, image: s, transferEnv: [{sourceContainerName: app, envNames: [Z, A]}]}]",
    );
    let pod = demo_pod(
        json!([{"name": "app", "image": "a", "env": [{"name": "Z", "value": "1"}, {"name": "A", "value": "2"}]}]),
    );
    let out = run(vec![set], &[], pod);
    assert_eq!(out.env("s"), ["IS_INJECTED=true", "A=2", "Z=1"]);
}

#[test]
fn d_transfer_env_wins_over_sub_path_env_and_value_from_is_copied() {
    let set = demo_set(
        "mix",
        "[{name: s, image: s, shareVolumePolicy: {type: enabled}, env: [{name: IS_INJECTED, value: \"false\"}], transferEnv: [{sourceContainerName: other, envName: POD_NAME}]}]",
    );
    let pod = demo_pod(json!([
        {"name": "app", "image": "a",
         "env": [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
         "volumeMounts": [{"name": "v", "mountPath": "/v", "subPathExpr": "$(POD_NAME)"}]},
        {"name": "other", "image": "o", "env": [{"name": "POD_NAME", "value": "from-other"}]}
    ]));
    let out = run(vec![set], &[], pod);
    // Own IS_INJECTED kept, ours appended anyway; transferEnv's POD_NAME beats the subPathExpr copy.
    assert_eq!(
        out.env("s"),
        [
            "IS_INJECTED=false",
            "IS_INJECTED=true",
            "POD_NAME=from-other"
        ]
    );

    let set = demo_set(
        "mix",
        "[{name: s, image: s, shareVolumePolicy: {type: enabled}}]",
    );
    let pod = demo_pod(json!([
        {"name": "app", "image": "a",
         "env": [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
         "volumeMounts": [{"name": "v", "mountPath": "/v", "subPathExpr": "$(POD_NAME)"}]}
    ]));
    let out = run(vec![set], &[], pod);
    assert_eq!(
        out.raw_container("s")["env"],
        json!([{"name": "IS_INJECTED", "value": "true"},
               {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}])
    );
}

// ---------------------------------------------------------------------------------------------
// G. patchPodMetadata

#[test]
fn g1_merge_patch_json_from_two_sidecarsets_and_retain() {
    let first = || {
        ss_with(SS1, |s| {
            s["spec"]["patchPodMetadata"] = json!([
                {"patchPolicy": "MergePatchJson", "annotations": {"key1": "{\"log-agent\":1}"}},
                {"patchPolicy": "Retain", "annotations": {"key": "envoy=1,log=2"}}
            ]);
        })
    };
    let second = || {
        ss_with(SS1, |s| {
            s["metadata"]["name"] = json!("sidecarset2");
            s["spec"]["patchPodMetadata"] = json!([{"patchPolicy": "MergePatchJson", "annotations": {"key1": "{\"envoy\":2}"}}]);
        })
    };
    for sets in [vec![first(), second()], vec![second(), first()]] {
        // Same container names twice: duplicates, rejected by the apiserver; only metadata matters.
        let out = harness(sets)
            .skip_reinvocation("duplicate container names: the apiserver rejects this pod")
            .run(pod1());
        assert_eq!(out.annotation("key1"), Some(r#"{"envoy":2,"log-agent":1}"#));
        assert_eq!(out.annotation("key"), Some("envoy=1,log=2"));
    }
    // Same metadata with distinct sidecars, so the reinvocation check applies too.
    let second_distinct = ss_with(SS1, |s| {
        s["metadata"]["name"] = json!("sidecarset2");
        s["spec"].as_object_mut().unwrap().remove("initContainers");
        s["spec"]["containers"] = json!([{"name": "envoy", "image": "envoy"}]);
        s["spec"]["patchPodMetadata"] =
            json!([{"patchPolicy": "MergePatchJson", "annotations": {"key1": "{\"envoy\":2}"}}]);
    });
    let out = run(vec![first(), second_distinct], &[], pod1());
    assert_eq!(out.annotation("key1"), Some(r#"{"envoy":2,"log-agent":1}"#));
    assert_eq!(out.annotation("key"), Some("envoy=1,log=2"));
}

fn patch_set(patches: Value) -> SidecarSet {
    ss_with(SS1, |s| s["spec"]["patchPodMetadata"] = patches)
}

#[test]
fn g2_retain_vs_overwrite() {
    let mut pod = pod1();
    pod["metadata"]["annotations"] = json!({"a": "old", "e": ""});
    let out = run(
        vec![patch_set(
            json!([{"patchPolicy": "Retain", "annotations": {"a": "new", "b": "x", "e": "y"}}]),
        )],
        &[],
        pod.clone(),
    );
    assert_eq!(out.annotation("a"), Some("old"));
    assert_eq!(out.annotation("b"), Some("x"));
    assert_eq!(
        out.annotation("e"),
        Some(""),
        "present-but-empty counts as present"
    );
    let out = run(
        vec![patch_set(
            json!([{"patchPolicy": "Overwrite", "annotations": {"a": "new"}}]),
        )],
        &[],
        pod.clone(),
    );
    assert_eq!(out.annotation("a"), Some("new"));
    // No policy means Retain; an unknown policy is ignored.
    let out = run(
        vec![patch_set(
            json!([{"annotations": {"a": "new", "c": "1"}}, {"patchPolicy": "Bogus", "annotations": {"d": "1"}}]),
        )],
        &[],
        pod,
    );
    assert_eq!(out.annotation("a"), Some("old"));
    assert_eq!(out.annotation("c"), Some("1"));
    assert_eq!(out.annotation("d"), None);
}

#[test]
fn g2_patch_metadata_applies_even_when_nothing_is_injected() {
    let set = ss_with(SS1, |s| {
        s["spec"]["containers"] = json!([]);
        s["spec"].as_object_mut().unwrap().remove("initContainers");
        s["spec"]["patchPodMetadata"] =
            json!([{"patchPolicy": "Overwrite", "annotations": {"a": "b"}}]);
    });
    let out = run(vec![set], &[], pod1());
    out.assert_patched();
    assert_eq!(
        out.annotations(),
        BTreeMap::from([("a".to_string(), "b".to_string())])
    );
    assert_eq!(out.containers(), ["nginx"]);
}

#[test]
fn g3_merge_onto_invalid_json() {
    let mut pod = pod1();
    pod["metadata"]["annotations"] = json!({"key1": "not-json"});
    let out = run(
        vec![patch_set(
            json!([{"patchPolicy": "MergePatchJson", "annotations": {"key1": "{\"x\":1}"}}]),
        )],
        &[],
        pod,
    );
    let message = out.denied(500);
    assert!(message.contains("key1"), "{message}");
}

#[test]
fn g4_verbatim_first_value() {
    // The first value is stored verbatim (§7.5); a later merge re-serializes it compactly, so the
    // spec itself makes a reinvocation canonicalize the value once.
    let out = harness(vec![patch_set(json!([
        {"patchPolicy": "MergePatchJson", "annotations": {"key1": "{\"b\": 1, \"a\": 2}"}}
    ]))])
    .reinvocation_changes("§7.5: merge onto an existing value re-serializes it")
    .run(pod1());
    assert_eq!(out.annotation("key1"), Some(r#"{"b": 1, "a": 2}"#));
    // An already compact value is stable under reinvocation.
    let out = run(
        vec![patch_set(
            json!([{"patchPolicy": "MergePatchJson", "annotations": {"key1": "{\"a\":2,\"b\":1}"}}]),
        )],
        &[],
        pod1(),
    );
    assert_eq!(out.annotation("key1"), Some(r#"{"a":2,"b":1}"#));
    // An empty existing value counts as absent.
    let mut pod = pod1();
    pod["metadata"]["annotations"] = json!({"key1": ""});
    let out = harness(vec![patch_set(json!([
        {"patchPolicy": "MergePatchJson", "annotations": {"key1": "{\"b\": 1}"}}
    ]))])
    .reinvocation_changes("§7.5: merge onto an existing value re-serializes it")
    .run(pod);
    assert_eq!(out.annotation("key1"), Some(r#"{"b": 1}"#));
}

#[test]
fn g4_merge_onto_existing_value_is_sorted_and_compact() {
    let mut pod = pod1();
    pod["metadata"]["annotations"] = json!({"key1": "{\"z\": 1, \"m\": {\"y\": 1, \"x\": null}}"});
    let out = run(
        vec![patch_set(
            json!([{"patchPolicy": "MergePatchJson", "annotations": {"key1": "{\"a\":1,\"m\":{\"y\":null,\"w\":2}}"}}]),
        )],
        &[],
        pod,
    );
    assert_eq!(
        out.annotation("key1"),
        Some(r#"{"a":1,"m":{"w":2,"x":null},"z":1}"#)
    );
}

#[test]
fn g5_e2e_merge_patch_json() {
    let set = demo_set("e2e", "[{name: nginx-sidecar, image: nginx}]");
    let set: SidecarSet = {
        let mut value = serde_json::to_value(set).unwrap();
        value["spec"]["patchPodMetadata"] = json!([{"patchPolicy": "MergePatchJson", "annotations": {"key": "{\"nginx-sidecar\":1}"}}]);
        serde_json::from_value(value).unwrap()
    };
    for i in 0..3 {
        let mut pod = demo_pod(json!([{"name": "main", "image": "main:1"}]));
        pod["metadata"]["name"] = json!(format!("demo-{i}"));
        let out = run(vec![set.clone()], &[], pod);
        assert_eq!(out.annotation("key"), Some(r#"{"nginx-sidecar":1}"#));
    }
}

// ---------------------------------------------------------------------------------------------
// §7.6.6 HotUpgrade

fn hot_set(policy: &str) -> SidecarSet {
    demo_set(
        "hot",
        &format!(
            "[{{name: envoy, image: \"envoy:1\", podInjectPolicy: {policy}, upgradeStrategy: {{upgradeType: HotUpgrade, hotUpgradeEmptyImage: \"empty:1\"}}, env: [{{name: A, value: a}}]}}]"
        ),
    )
}

#[test]
fn hot_upgrade_pair() {
    let out = run(
        vec![hot_set("BeforeAppContainer")],
        &[],
        demo_pod(json!([{"name": "app", "image": "app:1"}])),
    );
    assert_eq!(out.containers(), ["envoy-1", "envoy-2", "app"]);
    assert_eq!(out.container("envoy-1").image.as_deref(), Some("envoy:1"));
    assert_eq!(out.container("envoy-2").image.as_deref(), Some("empty:1"));
    for copy in ["envoy-1", "envoy-2"] {
        assert_eq!(
            out.raw_container(copy)["env"],
            json!([
                {"name": "A", "value": "a"},
                {"name": "IS_INJECTED", "value": "true"},
                {"name": "SIDECARSET_VERSION", "valueFrom": {"fieldRef": {"fieldPath": format!("metadata.annotations['version.sidecarset.kruise.io/{copy}']")}}},
                {"name": "SIDECARSET_VERSION_ALT", "valueFrom": {"fieldRef": {"fieldPath": format!("metadata.annotations['versionalt.sidecarset.kruise.io/{copy}']")}}}
            ])
        );
    }
    let annotations = out.annotations();
    assert_eq!(annotations["version.sidecarset.kruise.io/envoy-1"], "1");
    assert_eq!(annotations["versionalt.sidecarset.kruise.io/envoy-1"], "0");
    assert_eq!(annotations["version.sidecarset.kruise.io/envoy-2"], "0");
    assert_eq!(annotations["versionalt.sidecarset.kruise.io/envoy-2"], "1");
    assert_eq!(annotations[WORKING_HOTUPGRADE], r#"{"envoy":"envoy-1"}"#);
    assert_eq!(
        annotations[HASH],
        hash_annotation(&[hash_entry("hot", "", &["envoy"], None)])
    );

    // After policy, existing entries for other sidecars preserved.
    let mut pod = demo_pod(json!([{"name": "app", "image": "app:1"}]));
    pod["metadata"]["annotations"] = json!({WORKING_HOTUPGRADE: "{\"zz\":\"zz-2\"}"});
    let out = run(vec![hot_set("AfterAppContainer")], &[], pod);
    assert_eq!(out.containers(), ["app", "envoy-1", "envoy-2"]);
    assert_eq!(
        out.annotation(WORKING_HOTUPGRADE),
        Some(r#"{"envoy":"envoy-1","zz":"zz-2"}"#)
    );
}

#[test]
fn hot_upgrade_native_and_plain_init_containers() {
    let set = demo("hot-init")
        .init_containers(sidecars(r#"
- {name: native, image: "n:1", restartPolicy: Always, upgradeStrategy: {upgradeType: HotUpgrade, hotUpgradeEmptyImage: "e:1"}}
- {name: plain, image: "p:1", upgradeStrategy: {upgradeType: HotUpgrade, hotUpgradeEmptyImage: "e:1"}}
"#))
        .build();
    let out = run(
        vec![set],
        &[],
        demo_pod(json!([{"name": "app", "image": "app:1"}])),
    );
    assert_eq!(out.init_containers(), ["native-1", "native-2", "plain"]);
    assert_eq!(out.env("plain"), ["IS_INJECTED=true"]);
    assert_eq!(
        out.annotation(WORKING_HOTUPGRADE),
        Some(r#"{"native":"native-1"}"#)
    );
    // Native sidecars enter the sidecar list, plain init containers do not.
    assert_eq!(
        out.annotation(HASH).unwrap(),
        hash_annotation(&[hash_entry("hot-init", "", &["native"], None)])
    );
}

// ---------------------------------------------------------------------------------------------
// §8.1 hash annotations: legacy format, invalid values, controllerRevision

#[test]
fn legacy_hash_annotation_is_converted_and_merged() {
    let mut pod = pod1();
    pod["metadata"]["annotations"] = json!({
        HASH: "{\"sidecarset1\":\"abc\",\"other\":\"def\"}",
        HASH_WITHOUT_IMAGE: "{\"other\":\"ghi\"}"
    });
    let out = run(vec![ss(SS1)], &[], pod);
    assert_eq!(
        out.annotation(HASH).unwrap(),
        format!(
            "{{\"other\":{{\"updateTimestamp\":null,\"hash\":\"def\",\"sidecarSetName\":\"other\",\"sidecarList\":null}},{}}}",
            hash_entry("sidecarset1", "c4k2dbb95d", &["dns-f", "log-agent"], None)
        )
    );
    assert_eq!(
        out.annotation(HASH_WITHOUT_IMAGE).unwrap(),
        format!(
            "{{\"other\":{{\"updateTimestamp\":null,\"hash\":\"ghi\",\"sidecarSetName\":\"other\",\"sidecarList\":null}},{}}}",
            hash_entry("sidecarset1", "", &["dns-f", "log-agent"], None)
        )
    );
}

#[test]
fn existing_object_format_entries_are_kept() {
    let other = r#"{"other":{"updateTimestamp":"2020-01-01T00:00:00Z","hash":"h","sidecarSetName":"other","sidecarList":["x"],"controllerRevision":"other-1"}}"#;
    let stale = r#"{"updateTimestamp":"2020-01-01T00:00:00Z","hash":"old","sidecarSetName":"sidecarset1","sidecarList":["dns-f"]}"#;
    let mut pod = pod1();
    pod["metadata"]["annotations"] = json!({
        HASH: format!("{},\"sidecarset1\":{stale}}}", &other[..other.len() - 1]),
    });
    let out = run(vec![ss(SS1)], &[], pod);
    assert_eq!(
        out.annotation(HASH).unwrap(),
        format!(
            "{},{}}}",
            &other[..other.len() - 1],
            hash_entry("sidecarset1", "c4k2dbb95d", &["dns-f", "log-agent"], None)
        )
    );
}

#[test]
fn invalid_hash_annotation_is_denied() {
    for key in [HASH, HASH_WITHOUT_IMAGE] {
        let mut pod = pod1();
        pod["metadata"]["annotations"] = json!({key: "not-json"});
        let out = run(vec![ss(SS1)], &[], pod);
        let message = out.denied(500);
        let expected = format!(
            "pod(default/test-pod) invalid annotations[{key}] value not-json, unmarshal failed: "
        );
        assert!(message.starts_with(&expected), "{message}");
    }
    // Neither format (mixed values) is invalid too.
    let mut pod = pod1();
    pod["metadata"]["annotations"] = json!({HASH: "{\"a\":\"x\",\"b\":{\"hash\":\"y\"}}"});
    run(vec![ss(SS1)], &[], pod).denied(500);
}

#[test]
fn controller_revision_from_latest_revision() {
    let mut set = ss(SS1);
    set.status = Some(kruise_webhook::api::SidecarSetStatus {
        latest_revision: Some("sidecarset1-7b9f6d8c4".into()),
        ..Default::default()
    });
    let out = run(vec![set], &[], pod1());
    assert_eq!(
        out.annotation(HASH).unwrap(),
        r#"{"sidecarset1":{"updateTimestamp":"2026-07-02T10:04:05Z","hash":"c4k2dbb95d","sidecarSetName":"sidecarset1","sidecarList":["dns-f","log-agent"],"controllerRevision":"sidecarset1-7b9f6d8c4"}}"#
    );
    // Never in the without-image annotation.
    assert!(
        !out.annotation(HASH_WITHOUT_IMAGE)
            .unwrap()
            .contains("controllerRevision")
    );
}

#[test]
fn image_pull_secrets_merged() {
    let set = ss_with(SS1, |s| {
        s["spec"]["imagePullSecrets"] = json!([{"name": "b"}, {"name": "c"}]);
    });
    let mut pod = pod1();
    pod["spec"]["imagePullSecrets"] = json!([{"name": "a"}, {"name": "b"}, {"name": "a"}]);
    let out = run(vec![set], &[], pod);
    assert_eq!(
        out.patched["spec"]["imagePullSecrets"],
        json!([{"name": "a"}, {"name": "b"}, {"name": "c"}])
    );
}

#[test]
fn canary_replaces_its_base() {
    let base = ss(SS1);
    let canary = ss_with(SS1, |s| {
        s["metadata"]["name"] = json!("sidecarset1-canary");
        s["metadata"]["annotations"]["apps.kruise.io/sidecarset-canary"] = json!("true");
        s["metadata"]["annotations"]["apps.kruise.io/sidecarset-base"] = json!("sidecarset1");
        s["spec"]["containers"][0]["image"] = json!("dns-f-image:2.0");
    });
    let out = run(vec![base.clone(), canary.clone()], &[], pod1());
    assert_eq!(out.annotation(INJECTED_LIST), Some("sidecarset1-canary"));
    assert_eq!(
        out.container("dns-f").image.as_deref(),
        Some("dns-f-image:2.0")
    );
    // A canary that does not match leaves the base alone.
    let canary_elsewhere = ss_with(SS1, |s| {
        s["metadata"]["name"] = json!("sidecarset1-canary");
        s["metadata"]["annotations"]["apps.kruise.io/sidecarset-canary"] = json!("true");
        s["metadata"]["annotations"]["apps.kruise.io/sidecarset-base"] = json!("sidecarset1");
        s["spec"]["selector"] = json!({"matchLabels": {"app": "other"}});
    });
    let out = run(vec![base, canary_elsewhere], &[], pod1());
    assert_eq!(out.annotation(INJECTED_LIST), Some("sidecarset1"));
}

#[test]
fn invalid_selector_operator_is_denied() {
    let set = ss_with(SS1, |s| {
        s["spec"]["selector"] =
            json!({"matchExpressions": [{"key": "app", "operator": "Near", "values": ["x"]}]});
    });
    let message = run(vec![set], &[], pod1()).denied(500);
    assert!(message.contains("sidecarset1"), "{message}");
}

#[test]
fn injection_revision_that_cannot_be_found_is_denied() {
    let set = ss_with(SS1, |s| {
        s["spec"]["injectionStrategy"] =
            json!({"revision": {"revisionName": "sidecarset1-abc", "policy": "Always"}});
    });
    let message = run(vec![set], &[], pod1()).denied(500);
    assert!(message.contains("sidecarset1-abc"), "{message}");
    // Empty revision (neither name nor custom version) means the current SidecarSet.
    let set = ss_with(SS1, |s| {
        s["spec"]["injectionStrategy"] = json!({"revision": {"policy": "Always"}})
    });
    run(vec![set], &[], pod1()).assert_patched();
}

// ---------------------------------------------------------------------------------------------
// §7.6.7 resourcesPolicy (switch-from-kruise §5)

/// Two app containers with limits and requests, and a native sidecar of the pod's own.
fn sized_pod() -> Value {
    let mut pod = demo_pod(json!([
        {"name": "app-main", "image": "app", "resources": {
            "limits": {"cpu": "200m", "memory": "200Mi"},
            "requests": {"cpu": "50m", "memory": "100Mi"}}},
        {"name": "app-helper", "image": "app", "resources": {
            "limits": {"cpu": "400m", "memory": "400Mi"},
            "requests": {"cpu": "100m"}}},
        {"name": "log-agent", "image": "log", "resources": {"limits": {"cpu": "8"}}}
    ]));
    pod["spec"]["initContainers"] = json!([
        {"name": "mesh", "image": "mesh", "restartPolicy": "Always",
         "resources": {"limits": {"cpu": "100m", "memory": "56Mi"}}}
    ]);
    pod
}

#[test]
fn resources_policy_sets_the_sidecar_resources_at_creation() {
    let policy = r#"{targetContainersMode: sum, targetContainersNameRegex: "^(app-|mesh)",
        resourcesExpr: {limits: {cpu: "cpu*50%", memory: "max(memory*25%, 200Mi)"},
                        requests: {cpu: "max(cpu*50%, 50m)", memory: "memory + 28Mi"}}}"#;
    let sized = demo_set(
        "sized",
        &format!("[{{name: envoy, image: envoy, resourcesPolicy: {policy}}}]"),
    );
    // Another SidecarSet's container named like a pod container is no target of the policy.
    let other = demo_set("other", "[{name: log-agent, image: log:2}]");
    let out = run(vec![sized, other], &[], sized_pod());
    out.assert_patched();
    assert_eq!(
        out.raw_container("envoy")["resources"],
        // Limits: every target has one, 200m+400m+100m and 200Mi+400Mi+56Mi; requests: the
        // helper's missing memory request counts 0, the mesh's are all missing.
        json!({"limits": {"cpu": "350m", "memory": "200Mi"},
               "requests": {"cpu": "75m", "memory": "128Mi"}})
    );
}

#[test]
fn resources_policy_leaves_an_unlimited_limit_unset_and_serves_both_hot_upgrade_copies() {
    let sized = demo_set(
        "sized",
        r#"[{name: envoy, image: envoy, upgradeStrategy: {upgradeType: HotUpgrade, hotUpgradeEmptyImage: empty},
             resourcesPolicy: {targetContainersMode: max, targetContainersNameRegex: ".*",
                               resourcesExpr: {limits: {cpu: "cpu", memory: "memory"}}}}]"#,
    );
    let mut pod = sized_pod();
    // The log agent has no memory limit: the memory limit is unlimited.
    pod["spec"]["initContainers"] = json!([]);
    let out = run(vec![sized], &[], pod);
    out.assert_patched();
    for copy in ["envoy-1", "envoy-2"] {
        assert_eq!(
            out.raw_container(copy)["resources"],
            json!({"limits": {"cpu": "8"}}),
            "{copy}"
        );
    }
}

#[test]
fn resources_policy_without_a_target_or_with_a_failing_expression_denies_the_pod() {
    let set = |policy: &str| {
        demo_set(
            "sized",
            &format!(
                "[{{name: envoy, image: envoy}}, {{name: envoy2, image: envoy, resourcesPolicy: {policy}}}]"
            ),
        )
    };
    let none = set(
        r#"{targetContainersMode: sum, targetContainersNameRegex: "^web$", resourcesExpr: {limits: {cpu: "cpu"}}}"#,
    );
    assert_eq!(
        run(vec![none], &[], sized_pod()).denied(500),
        r#"sidecarset sized: spec.containers[1].resourcesPolicy: no containers match the regex pattern "^web$""#
    );
    let failing = set(
        r#"{targetContainersMode: sum, targetContainersNameRegex: "app", resourcesExpr: {requests: {cpu: "cpu*cpu"}}}"#,
    );
    assert_eq!(
        run(vec![failing], &[], sized_pod()).denied(500),
        r#"sidecarset sized: spec.containers[1].resourcesPolicy: failed to evaluate CPU requests expression: failed to parse expression "cpu*cpu": multiplication of two quantities"#
    );
}

// ---------------------------------------------------------------------------------------------
// §6 request handling

#[test]
fn dry_run_gives_the_same_answer() {
    let h = harness(vec![ss(SS1)]);
    let normal = h.run(pod1());
    let dry = h.clone().dry_run().run(pod1());
    assert_eq!(normal.response, dry.response);
    assert_eq!(normal.patched, dry.patched);
}

#[test]
fn subresource_request_is_allowed_untouched() {
    for sub in ["status", "binding", "ephemeralcontainers"] {
        harness(vec![ss(SS1)])
            .sub_resource(sub)
            .run(pod1())
            .assert_unchanged();
    }
}

#[test]
fn update_and_delete_are_allowed_untouched() {
    for op in ["UPDATE", "DELETE", "CONNECT"] {
        let mut pod = pod1();
        pod["metadata"]["annotations"] = json!({LAUNCH_PRIORITY: "Ordered"});
        pod["spec"]["containers"]
            .as_array_mut()
            .unwrap()
            .push(json!({"name": "b", "image": "b"}));
        harness(vec![ss(SS1)])
            .operation(op)
            .run(pod)
            .assert_unchanged();
    }
}

#[test]
fn namespace_fill_is_not_in_the_patch() {
    let mut pod = pod1();
    pod["metadata"].as_object_mut().unwrap().remove("namespace");
    let out = run(vec![ss(SS1)], &[], pod);
    out.assert_patched();
    assert!(
        out.patched["metadata"].get("namespace").is_none(),
        "{}",
        out.patched["metadata"]
    );
    assert_eq!(out.containers(), ["dns-f", "nginx", "log-agent"]);
}

#[test]
#[ignore = "§6.1 step 4.1 (readiness gate KruisePodReady for pods controlled by an apps.kruise.io owner) is not implemented in src/admission/pod.rs"]
fn readiness_gate_for_kruise_workload_pods() {
    let mut pod = pod1();
    pod["metadata"]["ownerReferences"] = json!([{
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web",
        "uid": "0f6c2b9e-5d0a-4c55-9d2e-3f3b1d9a7e11", "controller": true
    }]);
    let out = run(vec![], &[], pod);
    assert_eq!(
        out.patched["spec"]["readinessGates"],
        json!([{"conditionType": "KruisePodReady"}])
    );
}

#[test]
fn no_sidecarsets_no_patch() {
    run(vec![], &[], pod1()).assert_unchanged();
}

#[test]
fn raw_fields_around_the_patch_survive() {
    // Nulls and fields the typed model drops or re-encodes differently must not break the patch.
    let mut pod = pod1();
    pod["metadata"]["annotations"] = Value::Null;
    pod["metadata"]["futureMeta"] = json!([1, 2]);
    pod["spec"]["containers"][0]["env"] = Value::Null;
    pod["spec"]["containers"][0]["ports"] = json!([{"containerPort": 80, "futurePortField": true}]);
    pod["spec"]["imagePullSecrets"] = Value::Null;
    pod["status"] = json!({"futureStatus": "x"});
    let set = ss_with(SS3, |s| {
        s["spec"]["containers"][1]["transferEnv"] =
            json!([{"sourceContainerName": "nginx", "envName": "hello2"}]);
        s["spec"]["imagePullSecrets"] = json!([{"name": "regcred"}]);
    });
    let out = run(vec![set], &[], pod);
    assert_eq!(out.patched["metadata"]["futureMeta"], json!([1, 2]));
    assert_eq!(out.patched["status"], json!({"futureStatus": "x"}));
    assert_eq!(
        out.patched["spec"]["containers"][0]["ports"][0]["futurePortField"],
        json!(true)
    );
    assert_eq!(out.containers(), ["nginx", "dns-f", "log-agent"]);
    assert_eq!(out.env("log-agent"), ["IS_INJECTED=true"]);
}

// ---------------------------------------------------------------------------------------------
// §10 container launch priority

/// `(configmap, key)` of each container's barrier env, which must be the last env var.
fn barriers(out: &Outcome) -> Vec<(String, String)> {
    out.patched["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let last = c["env"]
                .as_array()
                .and_then(|e| e.last())
                .cloned()
                .unwrap_or(Value::Null);
            assert_eq!(last["name"], "KRUISE_CONTAINER_BARRIER", "{c}");
            assert!(last.get("value").is_none());
            let reference = &last["valueFrom"]["configMapKeyRef"];
            assert_eq!(last["valueFrom"].as_object().unwrap().len(), 1);
            (
                reference["name"].as_str().unwrap().to_string(),
                reference["key"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn priority_pod(priorities: &[Option<&str>]) -> Value {
    let containers: Vec<Value> = priorities
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let mut c = json!({"name": format!("c{i}"), "image": "img:1"});
            if let Some(p) = p {
                c["env"] = json!([{"name": "KRUISE_CONTAINER_PRIORITY", "value": p}]);
            }
            c
        })
        .collect();
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "lp-pod", "namespace": "default"},
        "spec": {"containers": containers}
    })
}

fn keyed(name: &str, keys: &[&str]) -> Vec<(String, String)> {
    keys.iter()
        .map(|k| (format!("{name}-barrier"), k.to_string()))
        .collect()
}

#[test]
fn lp_ordered_annotation() {
    let mut pod = priority_pod(&[Some("100"), None, Some("-7")]);
    pod["metadata"]["annotations"] = json!({LAUNCH_PRIORITY: "Ordered"});
    let out = run(vec![], &[], pod);
    assert_eq!(barriers(&out), keyed("lp-pod", &["p_0", "p_-1", "p_-2"]));
    // Appended last, existing env kept.
    assert_eq!(
        out.env("c0"),
        [
            "KRUISE_CONTAINER_PRIORITY=100",
            "KRUISE_CONTAINER_BARRIER=<from>"
        ]
    );
    assert_eq!(out.env("c1"), ["KRUISE_CONTAINER_BARRIER=<from>"]);
    assert_eq!(
        out.raw_container("c1")["env"],
        json!([{"name": "KRUISE_CONTAINER_BARRIER", "valueFrom": {"configMapKeyRef": {"name": "lp-pod-barrier", "key": "p_-1"}}}])
    );
    // No annotation of ours, no name change.
    assert_eq!(out.annotations().len(), 1);
    assert_eq!(out.patched["metadata"]["name"], "lp-pod");
}

#[test]
fn lp_ordered_is_case_sensitive() {
    let mut pod = priority_pod(&[None, None]);
    pod["metadata"]["annotations"] = json!({LAUNCH_PRIORITY: "ordered"});
    run(vec![], &[], pod).assert_unchanged();
}

#[test]
fn lp_env_priorities() {
    let out = run(
        vec![],
        &[],
        priority_pod(&[Some("10"), Some("-2"), None, Some("+3")]),
    );
    assert_eq!(
        barriers(&out),
        keyed("lp-pod", &["p_10", "p_-2", "p_0", "p_3"])
    );
    // The last KRUISE_CONTAINER_PRIORITY wins; no range check.
    let mut pod = priority_pod(&[Some("1"), None]);
    pod["spec"]["containers"][0]["env"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "KRUISE_CONTAINER_PRIORITY", "value": "9999999999"}));
    let out = run(vec![], &[], pod);
    assert_eq!(barriers(&out), keyed("lp-pod", &["p_9999999999", "p_0"]));
}

#[test]
fn lp_single_container_skipped() {
    run(vec![], &[], priority_pod(&[Some("5")])).assert_unchanged();
    let mut pod = priority_pod(&[None]);
    pod["metadata"]["annotations"] = json!({LAUNCH_PRIORITY: "Ordered"});
    pod["spec"]["initContainers"] = json!([{"name": "init", "image": "i"}]);
    run(vec![], &[], pod).assert_unchanged();
    // Even an unparseable value is not looked at.
    run(vec![], &[], priority_pod(&[Some("abc")])).assert_unchanged();
}

#[test]
fn lp_all_equal_skipped() {
    run(
        vec![],
        &[],
        priority_pod(&[Some("3"), Some("3"), Some("3")]),
    )
    .assert_unchanged();
    run(vec![], &[], priority_pod(&[None, None])).assert_unchanged();
    run(vec![], &[], priority_pod(&[Some("0"), None, Some("-0")])).assert_unchanged();
}

#[test]
fn lp_ordered_with_injected_sidecars() {
    let mut pod = pod1();
    pod["metadata"]["annotations"] = json!({LAUNCH_PRIORITY: "Ordered"});
    let out = run(vec![ss(SS1)], &[], pod);
    assert_eq!(out.containers(), ["dns-f", "nginx", "log-agent"]);
    assert_eq!(barriers(&out), keyed("test-pod", &["p_0", "p_-1", "p_-2"]));
    assert_eq!(
        out.env("dns-f"),
        ["IS_INJECTED=true", "KRUISE_CONTAINER_BARRIER=<from>"]
    );
    // Init containers never get a barrier.
    for init in ["init-0", "init-1", "init-2"] {
        assert!(
            !out.env(init)
                .iter()
                .any(|e| e.starts_with("KRUISE_CONTAINER_BARRIER")),
            "{init}"
        );
    }
    assert_eq!(out.annotation(INJECTED_LIST), Some("sidecarset1"));
}

#[test]
fn lp_injected_sidecars_get_no_automatic_priority() {
    // An app priority alone: injected sidecars are plain priority-0 containers.
    let mut pod = pod1();
    pod["spec"]["containers"][0]["env"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "KRUISE_CONTAINER_PRIORITY", "value": "-1"}));
    let out = run(vec![ss(SS1)], &[], pod);
    assert_eq!(barriers(&out), keyed("test-pod", &["p_0", "p_-1", "p_0"]));
    // Without any priority, injection alone adds no barrier.
    let out = run(vec![ss(SS1)], &[], pod1());
    assert!(
        out.env("nginx")
            .iter()
            .all(|e| !e.starts_with("KRUISE_CONTAINER_BARRIER"))
    );
}

#[test]
fn lp_priority_carried_by_a_sidecar() {
    let set = ss_with(SS1, |s| {
        s["spec"]["containers"][0]["env"] =
            json!([{"name": "KRUISE_CONTAINER_PRIORITY", "value": "1000"}]);
    });
    let out = run(vec![set], &[], pod1());
    assert_eq!(barriers(&out), keyed("test-pod", &["p_1000", "p_0", "p_0"]));
    // Or transferred from the app with transferEnv.
    let set = ss_with(SS1, |s| {
        s["spec"]["containers"][1]["transferEnv"] =
            json!([{"sourceContainerName": "nginx", "envName": "KRUISE_CONTAINER_PRIORITY"}]);
    });
    let mut pod = pod1();
    pod["spec"]["containers"][0]["env"] =
        json!([{"name": "KRUISE_CONTAINER_PRIORITY", "value": "5"}]);
    let out = run(vec![set], &[], pod);
    assert_eq!(barriers(&out), keyed("test-pod", &["p_0", "p_5", "p_5"]));
}

#[test]
fn lp_hot_upgrade_pair_consecutive_priorities() {
    let mut pod = demo_pod(json!([{"name": "app", "image": "app:1"}]));
    pod["metadata"]["annotations"] = json!({LAUNCH_PRIORITY: "Ordered"});
    let out = run(vec![hot_set("BeforeAppContainer")], &[], pod);
    assert_eq!(out.containers(), ["envoy-1", "envoy-2", "app"]);
    assert_eq!(barriers(&out), keyed("demo-0", &["p_0", "p_-1", "p_-2"]));
    assert_eq!(
        out.env("envoy-1"),
        [
            "A=a",
            "IS_INJECTED=true",
            "SIDECARSET_VERSION=<from>",
            "SIDECARSET_VERSION_ALT=<from>",
            "KRUISE_CONTAINER_BARRIER=<from>"
        ]
    );
}

#[test]
fn lp_unparseable_value_is_denied() {
    for (value, reason) in [
        ("abc", "invalid syntax"),
        ("", "invalid syntax"),
        (" 1", "invalid syntax"),
        ("1.5", "invalid syntax"),
        ("99999999999999999999", "value out of range"),
    ] {
        let out = run(vec![], &[], priority_pod(&[None, Some(value)]));
        let message = out.denied(500);
        assert!(message.contains("c1"), "names the container: {message}");
        assert!(
            message.contains(&format!("strconv.Atoi: parsing {value:?}: {reason}")),
            "{message}"
        );
    }
    // valueFrom only is a parse failure of the empty value.
    let mut pod = priority_pod(&[None, None]);
    pod["spec"]["containers"][1]["env"] = json!([
        {"name": "KRUISE_CONTAINER_PRIORITY", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}
    ]);
    let message = run(vec![], &[], pod).denied(500);
    assert!(
        message.contains("c1") && message.contains("strconv.Atoi: parsing \"\""),
        "{message}"
    );
    // Under Ordered the env is not parsed.
    let mut pod = priority_pod(&[None, Some("abc")]);
    pod["metadata"]["annotations"] = json!({LAUNCH_PRIORITY: "Ordered"});
    let out = run(vec![], &[], pod);
    assert_eq!(barriers(&out), keyed("lp-pod", &["p_0", "p_-1"]));
}

#[test]
fn lp_unparseable_value_in_injected_sidecar_is_denied() {
    let set = ss_with(SS1, |s| {
        s["spec"]["containers"][1]["env"] =
            json!([{"name": "KRUISE_CONTAINER_PRIORITY", "value": "high"}]);
    });
    let message = run(vec![set], &[], pod1()).denied(500);
    assert!(message.contains("log-agent"), "{message}");
}

#[test]
fn lp_generate_name_gets_a_name() {
    let mut pod = priority_pod(&[Some("1"), None]);
    let metadata = pod["metadata"].as_object_mut().unwrap();
    metadata.remove("name");
    metadata.insert("generateName".into(), json!("web-7d4b9c8f6d-"));
    let out = run(vec![], &[], pod);
    let name = format!("web-7d4b9c8f6d-{SUFFIX}");
    assert_eq!(out.patched["metadata"]["name"], json!(name));
    assert_eq!(out.patched["metadata"]["generateName"], "web-7d4b9c8f6d-");
    assert_eq!(barriers(&out), keyed(&name, &["p_1", "p_0"]));

    // generateName is cut to 58 characters before the suffix.
    let long = format!("{}-", "a".repeat(70));
    let mut pod = priority_pod(&[Some("1"), None]);
    let metadata = pod["metadata"].as_object_mut().unwrap();
    metadata.remove("name");
    metadata.insert("generateName".into(), json!(long));
    let out = run(vec![], &[], pod);
    let name = format!("{}{SUFFIX}", "a".repeat(58));
    assert_eq!(name.len(), 63);
    assert_eq!(out.patched["metadata"]["name"], json!(name));
    assert_eq!(barriers(&out)[0].0, format!("{name}-barrier"));

    // Neither name nor generateName: ConfigMap "-barrier".
    let mut pod = priority_pod(&[Some("1"), None]);
    pod["metadata"].as_object_mut().unwrap().remove("name");
    let out = run(vec![], &[], pod);
    assert_eq!(
        barriers(&out),
        vec![
            ("-barrier".into(), "p_1".into()),
            ("-barrier".into(), "p_0".into())
        ]
    );
    assert!(out.patched["metadata"].get("name").is_none());
}

#[test]
fn lp_generate_name_not_used_when_skipped() {
    let mut pod = priority_pod(&[None, None]);
    let metadata = pod["metadata"].as_object_mut().unwrap();
    metadata.remove("name");
    metadata.insert("generateName".into(), json!("web-"));
    run(vec![], &[], pod).assert_unchanged();
}

#[test]
fn lp_generate_name_with_injection() {
    let mut pod = pod1();
    let metadata = pod["metadata"].as_object_mut().unwrap();
    metadata.remove("name");
    metadata.insert("generateName".into(), json!("test-pod-"));
    metadata.insert("annotations".into(), json!({LAUNCH_PRIORITY: "Ordered"}));
    let out = run(vec![ss(SS1)], &[], pod);
    let name = format!("test-pod-{SUFFIX}");
    assert_eq!(out.patched["metadata"]["name"], json!(name));
    assert_eq!(barriers(&out), keyed(&name, &["p_0", "p_-1", "p_-2"]));
}

#[test]
fn lp_existing_different_barrier_gets_another_appended() {
    // §10.7 appends even if a barrier env exists; only an identical last entry (our own output on
    // reinvocation) is not repeated.
    let mut pod = priority_pod(&[Some("1"), None]);
    pod["spec"]["containers"][1]["env"] = json!([
        {"name": "KRUISE_CONTAINER_BARRIER", "valueFrom": {"configMapKeyRef": {"name": "x-barrier", "key": "p_9"}}}
    ]);
    let out = run(vec![], &[], pod);
    assert_eq!(
        out.env("c1"),
        [
            "KRUISE_CONTAINER_BARRIER=<from>",
            "KRUISE_CONTAINER_BARRIER=<from>"
        ]
    );
    assert_eq!(barriers(&out), keyed("lp-pod", &["p_1", "p_0"]));
}

// ---------------------------------------------------------------------------------------------
// Property test: random small pods × random SidecarSets

mod random {
    use super::*;
    use proptest::prelude::*;

    const POD_NAMES: &[&str] = &["app", "web", "db", "cache"];
    const SIDECAR_NAMES: &[&str] = &["proxy", "log", "app", "mesh", "init-a", "web"];
    const ENV_NAMES: &[&str] = &[
        "A",
        "B",
        "IS_INJECTED",
        "KRUISE_CONTAINER_PRIORITY",
        "POD_NAME",
    ];
    const ENV_VALUES: &[&str] = &["true", "1", "-2", "0", "x", ""];
    const LABEL_KEYS: &[&str] = &["app", "tier"];
    const LABEL_VALUES: &[&str] = &["a", "b"];
    const PATHS: &[&str] = &["/a", "/b", "/c", "/data"];
    const VOLUMES: &[&str] = &["v1", "v2", "v3"];

    fn pick(items: &'static [&'static str]) -> impl Strategy<Value = &'static str> {
        proptest::sample::select(items)
    }

    fn env_var() -> impl Strategy<Value = Value> {
        (pick(ENV_NAMES), pick(ENV_VALUES), any::<bool>()).prop_map(|(n, v, from)| {
            if from && n != "KRUISE_CONTAINER_PRIORITY" {
                json!({"name": n, "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}})
            } else {
                json!({"name": n, "value": v})
            }
        })
    }

    fn mount() -> impl Strategy<Value = Value> {
        (
            pick(VOLUMES),
            pick(PATHS),
            proptest::option::of(pick(&["$(A)", "x/$(POD_NAME)", "plain"])),
        )
            .prop_map(|(v, p, expr)| {
                let mut m = json!({"name": v, "mountPath": p});
                if let Some(expr) = expr {
                    m["subPathExpr"] = json!(expr);
                }
                m
            })
    }

    fn device() -> impl Strategy<Value = Value> {
        (pick(VOLUMES), pick(&["/dev/x", "/dev/y", "/a"]))
            .prop_map(|(v, p)| json!({"name": v, "devicePath": p}))
    }

    /// `Some(list)`, `None` (field absent) or JSON null.
    fn list_field(
        item: impl Strategy<Value = Value>,
        max: usize,
    ) -> impl Strategy<Value = Option<Value>> {
        prop_oneof![
            3 => prop::collection::vec(item, 0..=max).prop_map(|v| Some(Value::Array(v))),
            1 => Just(None),
            1 => Just(Some(Value::Null)),
        ]
    }

    fn pod_container(name: &'static str) -> impl Strategy<Value = Value> {
        (
            list_field(env_var(), 3),
            list_field(mount(), 2),
            list_field(device(), 1),
        )
            .prop_map(move |(env, mounts, devices)| {
                let mut c = json!({"name": name, "image": format!("{name}:1")});
                for (key, value) in [
                    ("env", env),
                    ("volumeMounts", mounts),
                    ("volumeDevices", devices),
                ] {
                    if let Some(value) = value {
                        c[key] = value;
                    }
                }
                c
            })
    }

    prop_compose! {
        fn pod()(
            names in proptest::sample::subsequence(POD_NAMES, 0..=3).prop_shuffle(),
            inits in proptest::sample::subsequence(&["init-a", "init-b"][..], 0..=2),
            labels in prop::collection::btree_map(pick(LABEL_KEYS), pick(LABEL_VALUES), 0..=2)
                .prop_map(|mut l| { if l.is_empty() { l.insert("app", "a"); } l }),
            ordered in prop_oneof![Just(None), Just(Some("Ordered")), Just(Some("ordered"))],
            generate in any::<bool>(),
            annotations_null in any::<bool>(),
        )(
            containers in names.iter().map(|n| pod_container(n)).collect::<Vec<_>>(),
            inits in Just(inits),
            labels in Just(labels),
            ordered in Just(ordered),
            generate in Just(generate),
            annotations_null in Just(annotations_null),
        ) -> Value {
            let mut metadata = json!({"namespace": "default", "labels": labels});
            if generate {
                metadata["generateName"] = json!("rand-");
            } else {
                metadata["name"] = json!("rand-0");
            }
            if let Some(ordered) = ordered {
                metadata["annotations"] = json!({LAUNCH_PRIORITY: ordered});
            } else if annotations_null {
                metadata["annotations"] = Value::Null;
            }
            let mut spec = json!({"containers": containers});
            if !inits.is_empty() {
                let inits: Vec<Value> = inits.iter().map(|n| json!({"name": n, "image": "i"})).collect();
                spec["initContainers"] = json!(inits);
            }
            spec["volumes"] = json!([{"name": "v1", "emptyDir": {}}]);
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec})
        }
    }

    fn transfer() -> impl Strategy<Value = Value> {
        (
            pick(&["app", "web", "ghost"]),
            proptest::option::of(pick(ENV_NAMES)),
            prop::collection::vec(pick(ENV_NAMES), 0..=2),
            prop_oneof![
                4 => Just(None),
                1 => Just(Some("metadata.labels['app']")),
                1 => Just(Some("metadata.annotations['x']")),
                1 => Just(Some("metadata.name")),
            ],
        )
            .prop_map(|(source, name, names, from)| {
                let mut t = json!({"sourceContainerName": source});
                if let Some(name) = name {
                    t["envName"] = json!(name);
                }
                if !names.is_empty() {
                    t["envNames"] = json!(names);
                }
                if let Some(path) = from {
                    t["sourceContainerNameFrom"] =
                        json!({"fieldRef": {"apiVersion": "v1", "fieldPath": path}});
                }
                t
            })
    }

    /// A sidecar name: usually private to its SidecarSet, sometimes one that collides with a pod
    /// container or a sidecar of another SidecarSet.
    fn sidecar_name(index: usize, base: &'static str) -> impl Strategy<Value = String> {
        prop_oneof![
            4 => Just(format!("s{index}-{base}")),
            1 => Just(base.to_string()),
        ]
    }

    fn sidecar(name: String) -> impl Strategy<Value = Value> {
        (
            pick(&["BeforeAppContainer", "AfterAppContainer", "", "Middle"]),
            pick(&["enabled", "disabled", ""]),
            any::<bool>(),
            prop::collection::vec(transfer(), 0..=2),
            prop::collection::vec(mount(), 0..=2),
            prop::collection::vec(env_var(), 0..=1),
            prop_oneof![4 => Just(None), 1 => Just(Some("HotUpgrade")), 1 => Just(Some("ColdUpgrade"))],
            prop_oneof![3 => Just(None), 1 => Just(Some("Always"))],
            proptest::bool::weighted(0.1),
        )
            .prop_map(move |(policy, share, share_devices, transfer, mounts, env, upgrade, restart, own_is_injected)| {
                let mut c = json!({"name": name, "image": format!("{name}:2")});
                if !policy.is_empty() {
                    c["podInjectPolicy"] = json!(policy);
                }
                if !share.is_empty() {
                    c["shareVolumePolicy"] = json!({"type": share});
                }
                if share_devices {
                    c["shareVolumeDevicePolicy"] = json!({"type": "enabled"});
                }
                if !transfer.is_empty() {
                    c["transferEnv"] = json!(transfer);
                }
                // Distinct own mount paths, as validation demands.
                let mut seen = std::collections::HashSet::new();
                let mounts: Vec<Value> = mounts
                    .into_iter()
                    .filter(|m| seen.insert(m["mountPath"].as_str().unwrap().to_string()))
                    .collect();
                if !mounts.is_empty() {
                    c["volumeMounts"] = json!(mounts);
                }
                let env: Vec<Value> = env
                    .into_iter()
                    .filter(|e| e["name"] != "KRUISE_CONTAINER_PRIORITY")
                    .filter(|e| own_is_injected || e["name"] != "IS_INJECTED")
                    .collect();
                if !env.is_empty() {
                    c["env"] = json!(env);
                }
                if let Some(upgrade) = upgrade {
                    c["upgradeStrategy"] = json!({"upgradeType": upgrade, "hotUpgradeEmptyImage": "empty:1"});
                }
                if let Some(restart) = restart {
                    c["restartPolicy"] = json!(restart);
                }
                c
            })
    }

    prop_compose! {
        fn sidecarset(index: usize)(
            selector in prop_oneof![
                3 => Just(BTreeMap::from([("app", "a")])),
                2 => prop::collection::btree_map(pick(LABEL_KEYS), pick(LABEL_VALUES), 1..=2),
            ],
            container_names in proptest::sample::subsequence(SIDECAR_NAMES, 0..=2)
                .prop_flat_map(move |names| names.into_iter().map(|n| sidecar_name(index, n)).collect::<Vec<_>>()),
            init_names in proptest::sample::subsequence(SIDECAR_NAMES, 0..=2)
                .prop_flat_map(move |names| names.into_iter().map(|n| sidecar_name(index, n)).collect::<Vec<_>>()),
            hash in proptest::option::of(pick(&["h1", "h2"])),
            patch in proptest::option::of((pick(&["Retain", "Overwrite", "MergePatchJson"]), pick(&["{\"a\":1}", "v", "{\"b\": 2}"]))),
            paused in proptest::bool::weighted(0.1),
        )(
            containers in container_names.iter().map(|n| sidecar(n.clone())).collect::<Vec<_>>(),
            inits in init_names.iter().map(|n| sidecar(n.clone())).collect::<Vec<_>>(),
            selector in Just(selector),
            hash in Just(hash),
            patch in Just(patch),
            paused in Just(paused),
        ) -> Value {
            let mut set = json!({
                "apiVersion": "apps.kruise.io/v1alpha1",
                "kind": "SidecarSet",
                "metadata": {"name": format!("set-{index}")},
                "spec": {
                    "selector": {"matchLabels": selector},
                    "containers": containers,
                    "initContainers": inits,
                    "volumes": [{"name": "v1"}, {"name": "v2", "emptyDir": {}}],
                    "imagePullSecrets": [{"name": format!("secret-{}", index % 2)}],
                },
            });
            if let Some(hash) = hash {
                set["metadata"]["annotations"] = json!({HASH: hash});
            }
            if let Some((policy, value)) = patch {
                set["spec"]["patchPodMetadata"] = json!([{"patchPolicy": policy, "annotations": {"k": value}}]);
            }
            if paused {
                set["spec"]["injectionStrategy"] = json!({"paused": true});
            }
            set
        }
    }

    fn sidecarsets() -> impl Strategy<Value = Vec<Value>> {
        (0usize..=3).prop_flat_map(|n| (0..n).map(sidecarset).collect::<Vec<_>>())
    }

    /// Names the sidecars of `sets` would give the pod's containers / init containers, if they all
    /// matched (HotUpgrade expanded as the injector does).
    fn injected_names(sets: &[SidecarSet]) -> (Vec<String>, Vec<String>) {
        let expand = |c: &kruise_webhook::api::SidecarContainer, init: bool| {
            if c.is_hot_upgrade() && (!init || c.is_native_sidecar()) {
                vec![format!("{}-1", c.name()), format!("{}-2", c.name())]
            } else {
                vec![c.name().to_string()]
            }
        };
        let containers = sets
            .iter()
            .flat_map(|s| s.containers().iter().flat_map(|c| expand(c, false)))
            .collect();
        let inits = sets
            .iter()
            .flat_map(|s| s.init_containers().iter().flat_map(|c| expand(c, true)))
            .collect();
        (containers, inits)
    }

    fn all_distinct(names: &[String]) -> bool {
        let mut seen = std::collections::HashSet::new();
        names.iter().all(|n| seen.insert(n))
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 1024, max_shrink_time: 60_000, ..ProptestConfig::default() })]

        #[test]
        fn random_pods_and_sidecarsets(pod in pod(), sets in sidecarsets(), sorted in any::<bool>()) {
            let sets: Vec<SidecarSet> = sets
                .into_iter()
                .map(|s| serde_json::from_value(s).expect("generated SidecarSet parses"))
                .collect();
            let pod_names: Vec<String> = pod["spec"]["containers"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["name"].as_str().unwrap().to_string())
                .collect();
            let pod_inits: Vec<String> = pod["spec"]["initContainers"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|c| c["name"].as_str().unwrap().to_string())
                .collect();
            let (containers, inits) = injected_names(&sets);
            let transfers_from_sidecars = sets.iter().flat_map(|s| s.containers().iter().chain(s.init_containers())).any(|c| {
                c.transfer_env.iter().flatten().any(|t| {
                    let source = t.source_container_name.as_deref().unwrap_or("");
                    // (sourceContainerNameFrom resolves to label values "a"/"b" or "": never a sidecar)
                    containers.iter().any(|n| n == source)
                })
            });
            let merge_patch_values_not_compact = sets.iter().any(|s| {
                s.spec.patch_pod_metadata.iter().flatten().any(|p| {
                    p.patch_policy.as_deref() == Some("MergePatchJson")
                        && p.annotations.iter().flatten().any(|(_, v)| v.contains(' ') || !v.starts_with('{'))
                })
            });
            let policies_of = |policy: &str| -> std::collections::HashSet<String> {
                sets.iter()
                    .flat_map(|s| s.spec.patch_pod_metadata.iter().flatten())
                    .filter(|p| p.patch_policy.as_deref() == Some(policy))
                    .flat_map(|p| p.annotations.iter().flatten().map(|(k, _)| k.clone()))
                    .collect()
            };
            // Overwrite and MergePatchJson on one key (validation V31 forbids it): the overwritten
            // value may not be JSON when the merge meets it on the second run.
            let merge_meets_overwrite = !policies_of("MergePatchJson").is_disjoint(&policies_of("Overwrite"));
            let sidecar_declares_is_injected = sets.iter().flat_map(|s| s.containers().iter().chain(s.init_containers())).any(|c| {
                c.container.env.iter().flatten().any(|e| e.name == "IS_INJECTED")
            });
            // Reinvocation is only a no-op where the spec makes it one: no sidecar named like a pod
            // container or another sidecar (§7.7 replaces the first same-name container; §7.6.3
            // then stops sharing from it), no transferEnv reading an injected sidecar (§7.6.4) and no
            // non-canonical merge-patch value (§7.5 stores it verbatim, re-serializes on merge), no
            // sidecar declaring its own IS_INJECTED (§7.6.3 looks at the *first* one only, so such
            // a sidecar is an app container on the second run and its mounts get shared), no key
            // patched with both Overwrite and MergePatchJson (§5E forbids it).
            let mut all_containers = containers.clone();
            all_containers.extend(pod_names.iter().cloned());
            let mut all_inits = inits.clone();
            all_inits.extend(pod_inits.iter().cloned());
            let clean = all_distinct(&all_containers)
                && all_distinct(&all_inits)
                && !transfers_from_sidecars
                && !merge_patch_values_not_compact
                && !merge_meets_overwrite
                && !sidecar_declares_is_injected;

            let mut h = harness(sets);
            h.sort_sidecars_by_name = sorted;
            if !clean {
                h = h.skip_reinvocation("random case outside the reinvocation-safe space");
            }
            // Never panics; the patch applies to the raw JSON and parses (asserted in `run`).
            let out = h.run(pod.clone());
            if !out.response.allowed {
                let status = out.response.status.as_ref().unwrap();
                prop_assert_eq!(status.code, 500);
                // Launch-priority parse errors, merge-patch onto a non-JSON value written by another
                // SidecarSet: the two rejections this space can produce.
                prop_assert!(
                    status.message.contains("strconv.Atoi") || status.message.contains("spec.patchPodMetadata"),
                    "{}", status.message
                );
            } else {
                // Pod containers keep their relative order.
                let names = out.containers();
                let kept: Vec<&str> = names.iter().copied().filter(|n| pod_names.iter().any(|p| p == n)).collect();
                let mut expected: Vec<&str> = pod_names.iter().map(String::as_str).collect();
                expected.dedup();
                if all_distinct(&all_containers) {
                    prop_assert_eq!(kept, expected);
                }
                // Every container of every SidecarSet named in the injected list is in the pod
                // and carries IS_INJECTED=true.
                let list = out.annotation(INJECTED_LIST).unwrap_or("").to_string();
                for set in h.sets.iter().filter(|s| list.split(',').any(|n| n == s.name())) {
                    let (names, _) = injected_names(std::slice::from_ref(set));
                    for name in names {
                        let c = out.container(&name);
                        prop_assert!(
                            c.env.iter().flatten().any(|e| e.name == "IS_INJECTED" && e.value.as_deref() == Some("true")),
                            "{} lacks IS_INJECTED", name
                        );
                    }
                }
            }
        }
    }
}
