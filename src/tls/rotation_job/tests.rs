use super::*;
use k8s_openapi::api::admissionregistration::v1::MutatingWebhook;

fn webhook(name: &str, bundle: Option<&[u8]>) -> MutatingWebhook {
    MutatingWebhook {
        name: name.to_owned(),
        client_config: WebhookClientConfig {
            ca_bundle: bundle.map(|b| ByteString(b.to_vec())),
            url: Some("https://127.0.0.1:9443/mutate-pod".to_owned()),
            ..WebhookClientConfig::default()
        },
        admission_review_versions: vec!["v1".to_owned()],
        side_effects: "None".to_owned(),
        ..MutatingWebhook::default()
    }
}

#[test]
fn ca_bundle_is_set_on_every_webhook_and_only_when_different() {
    let mut config = MutatingWebhookConfiguration {
        webhooks: Some(vec![
            webhook("a.kb.io", None),
            webhook("b.kb.io", Some(b"old")),
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
