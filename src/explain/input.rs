//! What `explain` is asked about: a Pod, or the pod a workload's template creates, read from
//! YAML or JSON (a file, standard input or the apiserver's answer). Pure.

use k8s_openapi::api::core::v1::Pod;
use serde_json::{Value, json};

use crate::source::dir::decode;

/// The pod to explain and where it came from.
#[derive(Debug, Clone)]
pub struct Subject {
    pub pod: Pod,
    /// `Pod shop/web-1`, or `CloneSet default/cart (its pod template)`.
    pub origin: String,
}

/// The workloads whose pod template can be explained: `(API group, kind)`, the path of the
/// template below the object.
const WORKLOADS: &[(&str, &str, &str)] = &[
    ("apps", "Deployment", "/spec/template"),
    ("apps", "ReplicaSet", "/spec/template"),
    ("apps", "StatefulSet", "/spec/template"),
    ("apps", "DaemonSet", "/spec/template"),
    ("apps.kruise.io", "CloneSet", "/spec/template"),
    ("apps.kruise.io", "StatefulSet", "/spec/template"),
    ("apps.kruise.io", "DaemonSet", "/spec/template"),
    ("batch", "Job", "/spec/template"),
    ("batch", "CronJob", "/spec/jobTemplate/spec/template"),
];

const EXPECTED: &str = "expected a Pod (v1), an AdmissionReview of one, or a workload with a pod template: Deployment, ReplicaSet, StatefulSet, DaemonSet (apps/v1), CloneSet, StatefulSet, DaemonSet (apps.kruise.io), Job, CronJob (batch)";

/// The subject in `text`: exactly one YAML or JSON document.
pub fn from_text(text: &str) -> Result<Subject, String> {
    let documents: Vec<Value> = crate::yaml::from_multiple(text)
        .map_err(|e| format!("the input is neither JSON nor YAML: {e}"))?;
    let mut documents: Vec<Value> = documents.into_iter().filter(|d| !d.is_null()).collect();
    if documents.len() != 1 {
        return Err(format!(
            "the input holds {} objects, not one: {EXPECTED}",
            documents.len()
        ));
    }
    from_value(documents.remove(0))
}

/// The subject an object names.
pub fn from_value(object: Value) -> Result<Subject, String> {
    let text = |pointer: &str| object.pointer(pointer).and_then(Value::as_str);
    let api_version = text("/apiVersion").unwrap_or("");
    let kind = text("/kind").unwrap_or("");
    let group = api_version.rsplit_once('/').map_or("", |(group, _)| group);
    if kind == "AdmissionReview" {
        let pod = object
            .pointer("/request/object")
            .filter(|o| o.is_object())
            .cloned()
            .ok_or("request.object: Required value: the AdmissionReview holds no pod")?;
        let mut subject = pod_of(pod, "request.object")?;
        if subject.pod.metadata.namespace.is_none() {
            subject.pod.metadata.namespace = text("/request/namespace").map(str::to_string);
        }
        subject.origin = format!("{} (from an AdmissionReview)", subject.origin);
        return Ok(subject);
    }
    if kind == "Pod" && group.is_empty() {
        return pod_of(object, "");
    }
    let Some((_, _, template)) = WORKLOADS.iter().find(|(g, k, _)| *g == group && *k == kind)
    else {
        let shown = if kind.is_empty() { "<none>" } else { kind };
        return Err(format!(
            "kind: Unsupported value: {shown:?} (apiVersion {api_version:?}): {EXPECTED}"
        ));
    };
    let namespace = text("/metadata/namespace").unwrap_or("default");
    let name = text("/metadata/name").unwrap_or("");
    let field = template.trim_start_matches('/').replace('/', ".");
    let Some(template) = object.pointer(template).filter(|t| t.is_object()) else {
        return Err(format!(
            "{kind} {namespace}/{name}: {field}: Required value: the workload has no pod template"
        ));
    };
    // The pod the workload's controller creates: the template's metadata and spec, in the
    // workload's namespace, named by the apiserver from a prefix.
    let mut metadata = template.get("metadata").cloned().unwrap_or(json!({}));
    if !metadata.is_object() {
        return Err(format!(
            "{kind} {namespace}/{name}: {field}.metadata: Invalid value: not an object"
        ));
    }
    metadata["namespace"] = json!(namespace);
    if metadata.get("name").is_none() && metadata.get("generateName").is_none() {
        metadata["generateName"] = json!(format!("{name}-"));
    }
    let pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": template.get("spec").cloned().unwrap_or(Value::Null),
    });
    let mut subject = pod_of(pod, &field)?;
    subject.origin = format!("{kind} {namespace}/{name} (its pod template)");
    Ok(subject)
}

/// Decodes a pod; `field` is where it sits in the input, for messages.
fn pod_of(object: Value, field: &str) -> Result<Subject, String> {
    let pod: Pod = decode(object).map_err(|e| {
        if field.is_empty() {
            e
        } else {
            format!("{field}.{e}")
        }
    })?;
    if pod.spec.is_none() {
        let at = if field.is_empty() {
            "spec".to_string()
        } else {
            format!("{field}.spec")
        };
        return Err(format!("{at}: Required value: the pod has no spec"));
    }
    let namespace = pod.metadata.namespace.as_deref().unwrap_or("default");
    let name = pod
        .metadata
        .name
        .as_deref()
        .or(pod.metadata.generate_name.as_deref())
        .unwrap_or("");
    Ok(Subject {
        origin: format!("Pod {namespace}/{name}"),
        pod,
    })
}
