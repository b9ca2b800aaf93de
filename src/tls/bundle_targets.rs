//! What the `certs` job keeps trusting this server, as pure steps over the objects it read: the
//! `caBundle` of every entry of the webhook configurations ([`set_ca_bundle`]), the entries of those
//! configurations this server does not serve, removed ([`remove_unserved`]), and the `caBundle` of
//! a CRD's conversion webhook ([`conversion_bundle_patch`]).

use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration, WebhookClientConfig,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, WebhookClientConfig as ConversionClientConfig,
};
use serde_json::{Value, json};

/// Webhook configurations: their entries, by name with their client config.
pub trait WebhookEntries {
    fn client_configs(&mut self) -> Vec<&mut WebhookClientConfig>;
    /// Keeps the entries `keep` accepts (given each entry's name and client config).
    fn retain_entries(&mut self, keep: &mut dyn FnMut(&str, &WebhookClientConfig) -> bool);
}

/// The two configuration kinds hold their entries alike (`webhooks`, each with `name` and
/// `client_config`).
macro_rules! webhook_entries {
    ($kind:ty) => {
        impl WebhookEntries for $kind {
            fn client_configs(&mut self) -> Vec<&mut WebhookClientConfig> {
                self.webhooks
                    .iter_mut()
                    .flatten()
                    .map(|webhook| &mut webhook.client_config)
                    .collect()
            }

            fn retain_entries(&mut self, keep: &mut dyn FnMut(&str, &WebhookClientConfig) -> bool) {
                if let Some(webhooks) = &mut self.webhooks {
                    webhooks.retain(|webhook| keep(&webhook.name, &webhook.client_config));
                }
            }
        }
    };
}

webhook_entries!(MutatingWebhookConfiguration);
webhook_entries!(ValidatingWebhookConfiguration);

/// Sets `bundle` as the `caBundle` of every webhook of one configuration. Returns whether
/// anything changed.
pub fn set_ca_bundle<K: WebhookEntries>(object: &mut K, bundle: &[u8]) -> bool {
    let mut changed = false;
    for config in object.client_configs() {
        if config.ca_bundle.as_ref().map(|b| b.0.as_slice()) != Some(bundle) {
            config.ca_bundle = Some(ByteString(bundle.to_vec()));
            changed = true;
        }
    }
    changed
}

/// An entry removed from a configuration: its name and the path it pointed at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemovedEntry {
    pub name: String,
    pub path: String,
}

impl std::fmt::Display for RemovedEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.name, self.path)
    }
}

/// The path the apiserver calls for an entry: the Service's `path` (`/` when unset), or the path
/// of its `url` (without query).
pub fn entry_path(config: &WebhookClientConfig) -> String {
    if let Some(service) = &config.service {
        return service.path.clone().unwrap_or_else(|| "/".to_string());
    }
    let url = config.url.as_deref().unwrap_or("");
    let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    let path = after_scheme
        .find('/')
        .map_or("/", |start| &after_scheme[start..]);
    path.split(['?', '#']).next().unwrap_or("/").to_string()
}

/// Removes every entry whose path is not in `served`: once its `caBundle` names this server, the
/// apiserver would send it requests this server answers with 404, and `failurePolicy: Fail`
/// would refuse them all. Returns what was removed, in order.
pub fn remove_unserved<K: WebhookEntries>(object: &mut K, served: &[&str]) -> Vec<RemovedEntry> {
    let mut removed = Vec::new();
    object.retain_entries(&mut |name, config| {
        let path = entry_path(config);
        let keep = served.contains(&path.as_str());
        if !keep {
            removed.push(RemovedEntry {
                name: name.to_string(),
                path,
            });
        }
        keep
    });
    removed
}

/// The client config of a CRD's conversion webhook, when it converts through one.
pub fn conversion_client_config(crd: &CustomResourceDefinition) -> Option<&ConversionClientConfig> {
    let conversion = crd.spec.conversion.as_ref()?;
    if conversion.strategy != "Webhook" {
        return None;
    }
    conversion.webhook.as_ref()?.client_config.as_ref()
}

/// The merge patch that sets `bundle` as the `caBundle` of a CRD's conversion webhook, guarded by
/// the resourceVersion read (a concurrent writer makes it a conflict); `None` when the CRD has no
/// conversion webhook or already carries the bundle.
pub fn conversion_bundle_patch(crd: &CustomResourceDefinition, bundle: &[u8]) -> Option<Value> {
    let config = conversion_client_config(crd)?;
    if config.ca_bundle.as_ref().map(|b| b.0.as_slice()) == Some(bundle) {
        return None;
    }
    let encoded = serde_json::to_value(ByteString(bundle.to_vec())).ok()?;
    Some(json!({
        "metadata": {"resourceVersion": crd.metadata.resource_version},
        "spec": {"conversion": {"webhook": {"clientConfig": {"caBundle": encoded}}}},
    }))
}

#[cfg(test)]
mod tests;
