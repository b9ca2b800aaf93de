//! Which of the project's webhooks objects of a namespace pass through: each namespaced webhook's
//! `namespaceSelector` against the Namespace's labels, as the apiserver matches it. Pure.

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, RuleWithOperations, ValidatingWebhookConfiguration,
    WebhookClientConfig,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde::{Deserialize, Serialize};

use crate::k8s::selector::{self, Labels};

/// `deploy/webhooks.yaml`, what `kubectl apply -k deploy/` installs: the offline answer.
const DEPLOYED: &str = include_str!("../../deploy/webhooks.yaml");

/// One webhook of a configuration, as much as matching a namespace needs.
#[derive(Debug, Clone)]
pub struct Hook {
    pub configuration: String,
    pub mutating: bool,
    pub name: String,
    pub path: Option<String>,
    pub rules: Vec<RuleWithOperations>,
    pub namespace_selector: Option<LabelSelector>,
    pub object_selector: Option<LabelSelector>,
}

/// Whether objects of one namespace pass through one webhook.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Passage {
    pub configuration: String,
    pub webhook: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// `CREATE pods`, `CREATE,UPDATE clonesets`, one entry per rule.
    pub rules: Vec<String>,
    pub passes: bool,
    /// Why it passes or not.
    pub reason: String,
}

/// The webhooks of `deploy/webhooks.yaml`.
pub fn deployed() -> Result<Vec<Hook>, String> {
    let documents: Vec<serde_json::Value> =
        crate::yaml::from_multiple(DEPLOYED).map_err(|e| format!("deploy/webhooks.yaml: {e}"))?;
    let mut mutating = Vec::new();
    let mut validating = Vec::new();
    for document in documents {
        match document.get("kind").and_then(|k| k.as_str()) {
            Some("MutatingWebhookConfiguration") => mutating.push(
                crate::source::dir::decode(document)
                    .map_err(|e| format!("deploy/webhooks.yaml: {e}"))?,
            ),
            Some("ValidatingWebhookConfiguration") => validating.push(
                crate::source::dir::decode(document)
                    .map_err(|e| format!("deploy/webhooks.yaml: {e}"))?,
            ),
            _ => {}
        }
    }
    Ok(hooks(&mutating, &validating))
}

/// The webhooks of these configurations, mutating first, in their order.
pub fn hooks(
    mutating: &[MutatingWebhookConfiguration],
    validating: &[ValidatingWebhookConfiguration],
) -> Vec<Hook> {
    let mutating = mutating.iter().flat_map(|configuration| {
        let name = configuration.metadata.name.as_deref().unwrap_or_default();
        let webhooks = configuration.webhooks.iter().flatten();
        webhooks.filter_map(move |webhook| hook(name, true, webhook))
    });
    let validating = validating.iter().flat_map(|configuration| {
        let name = configuration.metadata.name.as_deref().unwrap_or_default();
        let webhooks = configuration.webhooks.iter().flatten();
        webhooks.filter_map(move |webhook| hook(name, false, webhook))
    });
    mutating.chain(validating).collect()
}

/// What a mutating and a validating webhook share, and matching reads.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Shared {
    name: String,
    client_config: WebhookClientConfig,
    rules: Option<Vec<RuleWithOperations>>,
    namespace_selector: Option<LabelSelector>,
    object_selector: Option<LabelSelector>,
}

/// One webhook (a `MutatingWebhook` or a `ValidatingWebhook`) of `configuration`.
fn hook(configuration: &str, mutating: bool, webhook: &impl Serialize) -> Option<Hook> {
    let shared: Shared = serde_json::from_value(serde_json::to_value(webhook).ok()?).ok()?;
    Some(Hook {
        configuration: configuration.to_string(),
        mutating,
        path: path(&shared.client_config),
        name: shared.name,
        rules: shared.rules.unwrap_or_default(),
        namespace_selector: shared.namespace_selector,
        object_selector: shared.object_selector,
    })
}

/// The path a webhook calls: its Service's, or its URL's (`clientConfig.url`).
fn path(client: &WebhookClientConfig) -> Option<String> {
    if let Some(service) = &client.service {
        return service.path.clone();
    }
    let url = client.url.as_deref()?;
    let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    let path = after_scheme.find('/').map(|at| &after_scheme[at..])?;
    Some(path.split(['?', '#']).next().unwrap_or(path).to_string())
}

/// For each webhook that sees namespaced objects, whether those of a Namespace labelled
/// `namespace_labels` pass through it. Webhooks of cluster-scoped objects only (SidecarSets,
/// Namespaces, CRDs) are left out: no namespace's labels decide for them.
pub fn passages(hooks: &[Hook], namespace_labels: &Labels) -> Vec<Passage> {
    hooks
        .iter()
        .filter(|hook| hook.rules.iter().any(namespaced))
        .map(|hook| {
            let (passes, mut reason) = match &hook.namespace_selector {
                None => (true, "no namespaceSelector: every namespace".to_string()),
                Some(selector) => {
                    match selector::matches(selector, Some(namespace_labels), "namespaceSelector") {
                        Ok(true) => (true, "namespaceSelector selects the namespace".to_string()),
                        Ok(false) => (
                            false,
                            format!(
                                "namespaceSelector does not select the namespace: {}",
                                unmet(selector, namespace_labels)
                            ),
                        ),
                        Err(error) => (false, format!("the apiserver refuses it: {error}")),
                    }
                }
            };
            // The apiserver stores an absent objectSelector as `{}`, which selects everything.
            let object_selector = hook.object_selector.as_ref();
            if passes && object_selector.is_some_and(|s| !selector::is_empty(s)) {
                reason.push_str("; its objectSelector must select the object too");
            }
            Passage {
                configuration: hook.configuration.clone(),
                webhook: hook.name.clone(),
                path: hook.path.clone(),
                rules: hook.rules.iter().map(rule_text).collect(),
                passes,
                reason,
            }
        })
        .collect()
}

/// A rule for namespaced objects (or any scope).
fn namespaced(rule: &RuleWithOperations) -> bool {
    matches!(rule.scope.as_deref(), None | Some("*") | Some("Namespaced"))
}

fn rule_text(rule: &RuleWithOperations) -> String {
    format!(
        "{} {}",
        rule.operations.as_deref().unwrap_or_default().join(","),
        rule.resources.as_deref().unwrap_or_default().join(",")
    )
}

/// The requirements of `selector` the labels do not meet, each as `key op [values]`.
fn unmet(selector: &LabelSelector, labels: &Labels) -> String {
    let mut unmet = Vec::new();
    for (key, value) in selector.match_labels.iter().flatten() {
        if labels.get(key) != Some(value) {
            unmet.push(format!("{key}={value}"));
        }
    }
    for requirement in selector.match_expressions.iter().flatten() {
        let single = LabelSelector {
            match_labels: None,
            match_expressions: Some(vec![requirement.clone()]),
        };
        if !selector::matches(&single, Some(labels), "").unwrap_or(false) {
            let values = requirement.values.as_deref().unwrap_or_default().join(", ");
            unmet.push(format!(
                "{} {} [{values}]",
                requirement.key, requirement.operator
            ));
        }
    }
    unmet.join("; ")
}
