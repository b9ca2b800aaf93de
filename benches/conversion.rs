//! The conversion webhook's pure work (no TLS, no HTTP): one ConversionReview of `N` objects
//! (`CONVERSION_BENCH_OBJECTS`, 100) through `admission::conversion::answer`, decode and encode
//! included, for each kind and direction. Run with `cargo bench --bench conversion`; it prints the
//! time per object.
//!
//! The objects are what a list through the apiserver carries: a SidecarSet as its webhook stores
//! it (two defaulted sidecars, their volumes, the hash annotations, managedFields, a status) and
//! a DaemonSet, CloneSet and StatefulSet with a realistic pod template (probes, env, resources,
//! volumes) and a status.
//!
//! With `CONVERSION_BENCH_ONLY=<case>` it converts that case's review
//! `CONVERSION_BENCH_ITERATIONS` times and prints nothing: `bench/instructions.sh conversion`
//! counts the instructions of such runs under valgrind.

use std::hint::black_box;
use std::time::Instant;

use kruise_webhook::admission::conversion::answer;
use serde_json::{Value, json};

#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

const ALPHA: &str = "apps.kruise.io/v1alpha1";
const BETA: &str = "apps.kruise.io/v1beta1";

fn metadata(name: &str, namespace: Option<&str>, annotations: Value) -> Value {
    let mut metadata = json!({
        "name": name, "uid": "0d1c8f0e-2b7a-4f43-9d6c-1a2b3c4d5e6f", "resourceVersion": "412345",
        "generation": 3, "creationTimestamp": "2026-11-20T08:00:00Z",
        "labels": {"app.kubernetes.io/name": name, "team": "platform"},
        "annotations": annotations,
        "managedFields": [{
            "manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": ALPHA,
            "time": "2026-11-20T08:00:00Z", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app.kubernetes.io/name": {}, "f:team": {}}},
                         "f:spec": {".": {}, "f:selector": {}, "f:template": {}, "f:updateStrategy": {}}}
        }]
    });
    if let Some(namespace) = namespace {
        metadata["namespace"] = json!(namespace);
    }
    metadata
}

fn sidecar(name: &str, image: &str) -> Value {
    json!({
        "name": name, "image": image, "imagePullPolicy": "IfNotPresent",
        "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
        "env": [{"name": "LOG_LEVEL", "value": "info"}, {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}}],
        "resources": {"limits": {"cpu": "200m", "memory": "128Mi"}, "requests": {"cpu": "50m", "memory": "64Mi"}},
        "volumeMounts": [{"name": format!("{name}-config"), "mountPath": "/etc/sidecar"}],
        "podInjectPolicy": "AfterAppContainer", "shareVolumePolicy": {"type": "enabled"},
        "upgradeStrategy": {"upgradeType": "ColdUpgrade"},
        "transferEnv": [{"sourceContainerName": "app", "envName": "TZ"}]
    })
}

fn sidecarset(version: &str, i: usize) -> Value {
    let name = format!("logs-{i}");
    let hash = "7f3c9a1e5b2d4c6a8e0f1b3d5c7e9a2b4d6f8a0c2e4b6d8f0a1c3e5b7d9f1a3c";
    let mut spec = json!({
        "selector": {"matchLabels": {"app": name}},
        "containers": [sidecar("log-agent", "fluent/fluent-bit:2.2.2"), sidecar("metrics", "prom/statsd-exporter:v0.26.0")],
        "volumes": [{"name": "log-agent-config", "configMap": {"name": "log-agent"}}, {"name": "metrics-config", "configMap": {"name": "metrics"}}],
        "updateStrategy": {"type": "RollingUpdate", "partition": 0, "maxUnavailable": 1},
        "revisionHistoryLimit": 10
    });
    if version == "v1alpha1" {
        spec["namespace"] = json!("shop");
    } else {
        spec["namespaceSelector"] = json!({"matchLabels": {"kubernetes.io/metadata.name": "shop"}});
    }
    json!({
        "apiVersion": format!("apps.kruise.io/{version}"), "kind": "SidecarSet",
        "metadata": metadata(&name, None, json!({"kruise.io/sidecarset-hash": hash, "kruise.io/sidecarset-hash-without-image": hash})),
        "spec": spec,
        "status": {"observedGeneration": 3, "matchedPods": 12, "updatedPods": 12, "readyPods": 12, "updatedReadyPods": 12}
    })
}

fn template(app: &str) -> Value {
    json!({
        "metadata": {"labels": {"app": app}, "annotations": {"prometheus.io/scrape": "true"}},
        "spec": {
            "containers": [{
                "name": "main", "image": format!("registry.example.com/{app}:1.4.2"), "imagePullPolicy": "IfNotPresent",
                "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
                "env": [{"name": "MODE", "value": "production"}, {"name": "NODE", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}}}],
                "resources": {"limits": {"cpu": "1", "memory": "512Mi"}, "requests": {"cpu": "250m", "memory": "256Mi"}},
                "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080, "scheme": "HTTP"}, "periodSeconds": 5, "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3},
                "livenessProbe": {"httpGet": {"path": "/live", "port": 8080, "scheme": "HTTP"}, "periodSeconds": 10, "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3},
                "volumeMounts": [{"name": "data", "mountPath": "/data"}, {"name": "config", "mountPath": "/etc/app", "readOnly": true}],
                "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"
            }],
            "volumes": [{"name": "config", "configMap": {"name": app, "defaultMode": 420}}, {"name": "data", "emptyDir": {}}],
            "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
            "schedulerName": "default-scheduler", "securityContext": {}, "tolerations": [{"operator": "Exists"}]
        }
    })
}

fn daemonset(version: &str, i: usize) -> Value {
    let name = format!("agent-{i}");
    let (status_hash, scale) = if version == "v1alpha1" {
        ("daemonSetHash", Value::Null)
    } else {
        ("updateRevision", json!({"partitionedScaling": true}))
    };
    let annotations = if version == "v1alpha1" {
        json!({"daemonset.kruise.io/progressive-create-pod": "true"})
    } else {
        json!({})
    };
    let mut spec = json!({
        "selector": {"matchLabels": {"app": name}}, "template": template(&name),
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"rollingUpdateType": "Standard", "maxUnavailable": 1, "maxSurge": 0, "partition": 0}},
        "burstReplicas": 250, "revisionHistoryLimit": 10
    });
    if !scale.is_null() {
        spec["scaleStrategy"] = scale;
    }
    json!({
        "apiVersion": format!("apps.kruise.io/{version}"), "kind": "DaemonSet",
        "metadata": metadata(&name, Some("kube-system"), annotations),
        "spec": spec,
        "status": {"currentNumberScheduled": 40, "numberMisscheduled": 0, "desiredNumberScheduled": 40, "numberReady": 40,
                   "observedGeneration": 3, "updatedNumberScheduled": 40, "numberAvailable": 40, status_hash: "6d5f8b9c7"}
    })
}

fn cloneset(version: &str, i: usize) -> Value {
    let name = format!("web-{i}");
    let strategy = if version == "v1alpha1" {
        json!({"type": "InPlaceIfPossible", "partition": 0, "maxUnavailable": "20%", "maxSurge": 0, "inPlaceUpdateStrategy": {"gracePeriodSeconds": 10}})
    } else {
        json!({"type": "RollingUpdate", "rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible", "partition": 0, "maxUnavailable": "20%", "maxSurge": 0, "inPlaceUpdateStrategy": {"gracePeriodSeconds": 10}}})
    };
    json!({
        "apiVersion": format!("apps.kruise.io/{version}"), "kind": "CloneSet",
        "metadata": metadata(&name, Some("shop"), json!({})),
        "spec": {"replicas": 6, "selector": {"matchLabels": {"app": name}}, "template": template(&name),
                 "updateStrategy": strategy, "revisionHistoryLimit": 10},
        "status": {"observedGeneration": 3, "replicas": 6, "readyReplicas": 6, "availableReplicas": 6, "updatedReplicas": 6,
                   "updatedReadyReplicas": 6, "updatedAvailableReplicas": 6, "updateRevision": "web-6d5f8b9c7",
                   "currentRevision": "web-6d5f8b9c7", "labelSelector": format!("app={name}")}
    })
}

fn statefulset(version: &str, i: usize) -> Value {
    let name = format!("db-{i}");
    let mut set = json!({
        "apiVersion": format!("apps.kruise.io/{version}"), "kind": "StatefulSet",
        "metadata": metadata(&name, Some("shop"), json!({})),
        "spec": {"replicas": 3, "serviceName": name, "selector": {"matchLabels": {"app": name}}, "template": template(&name),
                 "podManagementPolicy": "OrderedReady",
                 "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible", "partition": 0, "maxUnavailable": 1}},
                 "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}}}}],
                 "revisionHistoryLimit": 10},
        "status": {"observedGeneration": 3, "replicas": 3, "readyReplicas": 3, "availableReplicas": 3, "currentReplicas": 3,
                   "updatedReplicas": 3, "currentRevision": "db-6d5f8b9c7", "updateRevision": "db-6d5f8b9c7"}
    });
    if version == "v1beta1" {
        set["spec"]["persistentVolumeClaimRetentionPolicy"] =
            json!({"whenDeleted": "Retain", "whenScaled": "Delete"});
    }
    set
}

type Make = fn(&str, usize) -> Value;

/// The cases: name, the kind's objects, the version they are sent in, the version asked for.
const CASES: &[(&str, Make, &str, &str)] = &[
    (
        "sidecarset-v1alpha1-to-v1beta1",
        sidecarset,
        "v1alpha1",
        BETA,
    ),
    (
        "sidecarset-v1beta1-to-v1alpha1",
        sidecarset,
        "v1beta1",
        ALPHA,
    ),
    ("daemonset-v1alpha1-to-v1beta1", daemonset, "v1alpha1", BETA),
    ("daemonset-v1beta1-to-v1alpha1", daemonset, "v1beta1", ALPHA),
    ("cloneset-v1alpha1-to-v1beta1", cloneset, "v1alpha1", BETA),
    (
        "statefulset-v1beta1-to-v1alpha1",
        statefulset,
        "v1beta1",
        ALPHA,
    ),
];

fn review(make: Make, from: &str, desired: &str, objects: usize) -> Vec<u8> {
    let objects: Vec<Value> = (0..objects).map(|i| make(from, i)).collect();
    serde_json::to_vec(&json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
        "request": {"uid": "bench", "desiredAPIVersion": desired, "objects": objects}
    }))
    .unwrap()
}

/// One review answered and encoded, as the route does.
fn convert(body: &[u8]) {
    let answer = answer(black_box(body)).unwrap();
    assert_eq!(answer.response.result.status, "Success");
    black_box(serde_json::to_vec(&answer).unwrap());
}

fn main() {
    let objects: usize = env_number("CONVERSION_BENCH_OBJECTS", 100);
    if let Ok(only) = std::env::var("CONVERSION_BENCH_ONLY") {
        let &(_, make, from, desired) = CASES
            .iter()
            .find(|case| case.0 == only)
            .unwrap_or_else(|| panic!("CONVERSION_BENCH_ONLY={only}: not a case"));
        let body = review(make, from, desired, objects);
        let iterations: u32 = env_number("CONVERSION_BENCH_ITERATIONS", 10);
        (0..iterations).for_each(|_| convert(&body));
        return;
    }
    let rounds = 200;
    for &(name, make, from, desired) in CASES {
        let body = review(make, from, desired, objects);
        for _ in 0..10 {
            convert(&body);
        }
        let started = Instant::now();
        for _ in 0..rounds {
            convert(&body);
        }
        let per_object = started.elapsed() / (rounds * objects as u32);
        let bytes = body.len() / objects;
        println!("{name:<34} {per_object:>10.2?} per object ({bytes} bytes each)");
    }
}

/// A number from the environment, `default` when unset or unreadable.
fn env_number<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}
