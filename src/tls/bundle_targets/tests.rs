use super::*;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhook, ServiceReference, ValidatingWebhook,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceConversion, CustomResourceDefinitionSpec, WebhookConversion,
};
use proptest::prelude::*;

fn service(path: Option<&str>) -> WebhookClientConfig {
    WebhookClientConfig {
        service: Some(ServiceReference {
            name: "kruise-webhook-service".into(),
            namespace: "kruise-system".into(),
            path: path.map(String::from),
            port: Some(443),
        }),
        ..WebhookClientConfig::default()
    }
}

fn url(url: &str) -> WebhookClientConfig {
    WebhookClientConfig {
        url: Some(url.into()),
        ..WebhookClientConfig::default()
    }
}

fn mutating(name: &str, config: WebhookClientConfig) -> MutatingWebhook {
    MutatingWebhook {
        name: name.into(),
        client_config: config,
        admission_review_versions: vec!["v1".into()],
        side_effects: "None".into(),
        ..MutatingWebhook::default()
    }
}

fn validating(name: &str, config: WebhookClientConfig) -> ValidatingWebhook {
    ValidatingWebhook {
        name: name.into(),
        client_config: config,
        admission_review_versions: vec!["v1".into()],
        side_effects: "None".into(),
        ..ValidatingWebhook::default()
    }
}

const SERVED: &[&str] = &["/mutate-pod", "/validate-apps-kruise-io-sidecarset"];

#[test]
fn ca_bundle_is_set_on_every_webhook_and_only_when_different() {
    let mut config = MutatingWebhookConfiguration {
        webhooks: Some(vec![
            mutating("a.kb.io", url("https://127.0.0.1:9443/mutate-pod")),
            MutatingWebhook {
                client_config: WebhookClientConfig {
                    ca_bundle: Some(ByteString(b"old".to_vec())),
                    ..service(Some("/mutate-pod"))
                },
                ..mutating("b.kb.io", service(None))
            },
        ]),
        ..MutatingWebhookConfiguration::default()
    };
    assert!(set_ca_bundle(&mut config, b"new"));
    for config in config.client_configs() {
        assert_eq!(config.ca_bundle.as_ref().unwrap().0, b"new");
    }
    assert!(
        !set_ca_bundle(&mut config, b"new"),
        "second pass must be a no-op"
    );
    let mut empty = ValidatingWebhookConfiguration::default();
    assert!(!set_ca_bundle(&mut empty, b"new"));
}

#[test]
fn entry_paths_of_services_and_urls() {
    assert_eq!(entry_path(&service(Some("/validate-pod"))), "/validate-pod");
    assert_eq!(entry_path(&service(None)), "/");
    assert_eq!(
        entry_path(&url("https://127.0.0.1:19443/mutate-pod?timeout=5s")),
        "/mutate-pod"
    );
    assert_eq!(entry_path(&url("https://webhook.example.com")), "/");
    assert_eq!(entry_path(&url("https://[::1]:9443/convert#x")), "/convert");
    assert_eq!(entry_path(&WebhookClientConfig::default()), "/");
}

/// OpenKruise's validating entries after `kubectl apply` of this project's: the ones this server
/// serves stay, in order; the others go, named with their paths.
#[test]
fn unserved_entries_are_removed_and_named() {
    let mut config = ValidatingWebhookConfiguration {
        webhooks: Some(vec![
            validating(
                "vsidecarset.kb.io",
                service(Some("/validate-apps-kruise-io-sidecarset")),
            ),
            validating("vpod.kb.io", service(Some("/validate-pod"))),
            validating("vpodeviction.kb.io", service(Some("/validate-pod"))),
            validating("mpod.kb.io", url("https://127.0.0.1:1/mutate-pod")),
        ]),
        ..ValidatingWebhookConfiguration::default()
    };
    let removed = remove_unserved(&mut config, SERVED);
    assert_eq!(
        removed.iter().map(ToString::to_string).collect::<Vec<_>>(),
        [
            "vpod.kb.io (/validate-pod)",
            "vpodeviction.kb.io (/validate-pod)"
        ]
    );
    let kept: Vec<&str> = config
        .webhooks
        .iter()
        .flatten()
        .map(|w| w.name.as_str())
        .collect();
    assert_eq!(kept, ["vsidecarset.kb.io", "mpod.kb.io"]);
    assert!(remove_unserved(&mut config, SERVED).is_empty());
    let mut none = MutatingWebhookConfiguration::default();
    assert!(remove_unserved(&mut none, SERVED).is_empty());
}

fn crd(conversion: Option<CustomResourceConversion>) -> CustomResourceDefinition {
    CustomResourceDefinition {
        metadata: ObjectMeta {
            name: Some("clonesets.apps.kruise.io".into()),
            resource_version: Some("42".into()),
            ..ObjectMeta::default()
        },
        spec: CustomResourceDefinitionSpec {
            conversion,
            ..CustomResourceDefinitionSpec::default()
        },
        ..CustomResourceDefinition::default()
    }
}

fn webhook_conversion(bundle: Option<&[u8]>) -> CustomResourceConversion {
    CustomResourceConversion {
        strategy: "Webhook".into(),
        webhook: Some(WebhookConversion {
            client_config: Some(ConversionClientConfig {
                ca_bundle: bundle.map(|b| ByteString(b.to_vec())),
                service: None,
                url: None,
            }),
            conversion_review_versions: vec!["v1".into(), "v1beta1".into()],
        }),
    }
}

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

#[test]
fn conversion_webhooks_get_the_bundle_guarded_by_the_version_read() {
    let patch = conversion_bundle_patch(&crd(Some(webhook_conversion(None))), b"PEM").unwrap();
    assert_eq!(
        patch,
        json!({
            "metadata": {"resourceVersion": "42"},
            "spec": {"conversion": {"webhook": {"clientConfig": {"caBundle": "UEVN"}}}},
        })
    );
    assert_eq!(
        conversion_bundle_patch(&crd(Some(webhook_conversion(Some(b"PEM")))), b"PEM"),
        None,
        "current already"
    );
    let none = CustomResourceConversion {
        strategy: "None".into(),
        webhook: None,
    };
    assert_eq!(conversion_bundle_patch(&crd(Some(none)), b"PEM"), None);
    assert_eq!(conversion_bundle_patch(&crd(None), b"PEM"), None);
}

fn path() -> impl Strategy<Value = Option<&'static str>> {
    prop_oneof![
        Just(None),
        Just(Some("/mutate-pod")),
        Just(Some("/validate-apps-kruise-io-sidecarset")),
        Just(Some("/validate-pod")),
        Just(Some("/validate-apps-kruise-io-v1alpha1-workloadspread")),
    ]
}

proptest! {
    /// Whatever a configuration holds: what stays is served, what goes is not, nothing else
    /// changes, and a second pass removes nothing.
    #[test]
    fn removal_keeps_exactly_the_served_entries(paths in proptest::collection::vec(path(), 0..8)) {
        let webhooks: Vec<MutatingWebhook> = paths
            .iter()
            .enumerate()
            .map(|(i, p)| mutating(&format!("w{i}.kb.io"), service(*p)))
            .collect();
        let mut config = MutatingWebhookConfiguration {
            webhooks: Some(webhooks.clone()),
            ..MutatingWebhookConfiguration::default()
        };
        let removed = remove_unserved(&mut config, SERVED);
        let kept = config.webhooks.clone().unwrap_or_default();
        prop_assert_eq!(kept.len() + removed.len(), webhooks.len());
        let expected: Vec<MutatingWebhook> = webhooks
            .iter()
            .filter(|w| SERVED.contains(&entry_path(&w.client_config).as_str()))
            .cloned()
            .collect();
        prop_assert_eq!(kept, expected);
        prop_assert!(removed.iter().all(|r| !SERVED.contains(&r.path.as_str())));
        prop_assert!(remove_unserved(&mut config, SERVED).is_empty());
    }
}
