//! `kruise-webhook certs`: the thin kube shell around [`crate::tls::rotation`]. Reads the
//! certificate Secret, asks the pure planner what it must hold, publishes the CA bundle in the
//! webhook configurations, then writes the Secret — each write only when something differs, so
//! a run with nothing to do makes no write at all.
//!
//! Order matters during a CA rotation: the bundle (old + new CA) reaches the webhook
//! configurations *before* the Secret carries a certificate of the new CA, so the apiserver
//! already trusts the new CA when the first server reloads. A run that fails between the two
//! writes leaves an extra trusted CA in the bundle, which the next run replaces.
//!
//! Webhook configurations are selected by name (flags). No CRD of this project uses a
//! conversion webhook, so no CRD is touched.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::SystemTime;

use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration, WebhookClientConfig,
};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{ObjectMeta, PostParams};
use kube::{Api, Client};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::cli::CertsArgs;
use crate::tls::rotation::{self, Policy, SecretData};

/// Attempts when another writer changed an object between our read and our write.
const ATTEMPTS: usize = 5;

#[derive(Debug, thiserror::Error)]
pub enum CertsError {
    #[error("no usable cluster configuration: {0}")]
    Config(#[source] kube::Error),
    #[error("{action} {what}: {source}")]
    Kube {
        action: &'static str,
        what: String,
        #[source]
        source: kube::Error,
    },
    #[error(transparent)]
    Rotation(#[from] rotation::RotationError),
    #[error("{what} kept changing under us; gave up after {ATTEMPTS} attempts")]
    Contended { what: String },
    #[error("webhook configurations not found (their caBundle cannot be set): {0}")]
    MissingConfigurations(String),
}

/// What happened to one webhook configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Published {
    Unchanged,
    Updated,
    Missing,
}

pub async fn run(args: &CertsArgs) -> Result<(), CertsError> {
    let client = Client::try_default().await.map_err(CertsError::Config)?;
    let mut ips: Vec<IpAddr> = vec![Ipv4Addr::LOCALHOST.into(), Ipv6Addr::LOCALHOST.into()];
    ips.extend(args.tls_ips.iter().copied());
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &args.namespace);
    let what = format!("Secret {}/{}", args.namespace, args.secret_name);

    for _ in 0..ATTEMPTS {
        let existing = secrets
            .get_opt(&args.secret_name)
            .await
            .map_err(kube_error("read", &what))?;
        let current = existing.as_ref().map(secret_data).unwrap_or_default();
        let policy = Policy {
            now: SystemTime::now(),
            cert_validity: args.cert_validity,
            renew_before: args.renew_before,
            ca_validity: args.ca_validity,
            ca_renew_before: args.ca_renew_before,
            ca_overlap: args.ca_overlap,
            dns_names: args.certificate_dns_names(),
            ip_sans: ips.clone(),
            force_renew: args.force_renew,
            force_rotate_ca: args.force_rotate_ca,
        };
        let plan = rotation::plan(&current, &policy)?;
        for action in &plan.actions {
            tracing::info!(secret = %what, "{action}");
        }

        // Bundle first: see the module documentation.
        let missing = publish_all(&client, args, &plan.bundle).await?;

        let Some(data) = plan.data else {
            tracing::info!(secret = %what, "certificates are current; Secret unchanged");
            return finish(missing);
        };
        let written = match existing {
            None => secrets
                .create(&PostParams::default(), &new_secret(args, data))
                .await
                .map(drop),
            Some(mut secret) => {
                // The read resourceVersion stays: a concurrent writer makes this a conflict.
                secret.data = Some(to_byte_strings(data));
                secret.string_data = None;
                secrets
                    .replace(&args.secret_name, &PostParams::default(), &secret)
                    .await
                    .map(drop)
            }
        };
        match written {
            Ok(()) => {
                tracing::info!(secret = %what, "Secret written");
                return finish(missing);
            }
            Err(kube::Error::Api(status)) if status.is_conflict() || status.is_already_exists() => {
                tracing::info!(secret = %what, "Secret changed concurrently; planning again");
            }
            Err(source) => return Err(kube_error("write", &what)(source)),
        }
    }
    Err(CertsError::Contended { what })
}

fn finish(missing: Vec<String>) -> Result<(), CertsError> {
    if missing.is_empty() {
        Ok(())
    } else {
        Err(CertsError::MissingConfigurations(missing.join(", ")))
    }
}

/// Sets `caBundle` in every configured webhook configuration; returns the ones that do not exist.
async fn publish_all(
    client: &Client,
    args: &CertsArgs,
    bundle: &[u8],
) -> Result<Vec<String>, CertsError> {
    let mut missing = Vec::new();
    let mutating: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
    for name in &args.mutating_configurations {
        let what = format!("MutatingWebhookConfiguration {name}");
        if publish(&mutating, name, &what, bundle).await? == Published::Missing {
            missing.push(what);
        }
    }
    let validating: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
    for name in &args.validating_configurations {
        let what = format!("ValidatingWebhookConfiguration {name}");
        if publish(&validating, name, &what, bundle).await? == Published::Missing {
            missing.push(what);
        }
    }
    Ok(missing)
}

/// Webhook configurations: the client configs whose `caBundle` this job owns.
pub trait ClientConfigs {
    fn client_configs(&mut self) -> Vec<&mut WebhookClientConfig>;
}

impl ClientConfigs for MutatingWebhookConfiguration {
    fn client_configs(&mut self) -> Vec<&mut WebhookClientConfig> {
        self.webhooks
            .iter_mut()
            .flatten()
            .map(|webhook| &mut webhook.client_config)
            .collect()
    }
}

impl ClientConfigs for ValidatingWebhookConfiguration {
    fn client_configs(&mut self) -> Vec<&mut WebhookClientConfig> {
        self.webhooks
            .iter_mut()
            .flatten()
            .map(|webhook| &mut webhook.client_config)
            .collect()
    }
}

/// Sets `bundle` as the `caBundle` of every webhook of one configuration (a pure step).
/// Returns whether anything changed.
pub fn set_ca_bundle<K: ClientConfigs>(object: &mut K, bundle: &[u8]) -> bool {
    let mut changed = false;
    for config in object.client_configs() {
        if config.ca_bundle.as_ref().map(|b| b.0.as_slice()) != Some(bundle) {
            config.ca_bundle = Some(ByteString(bundle.to_vec()));
            changed = true;
        }
    }
    changed
}

async fn publish<K>(
    api: &Api<K>,
    name: &str,
    what: &str,
    bundle: &[u8],
) -> Result<Published, CertsError>
where
    K: kube::Resource + ClientConfigs + Clone + DeserializeOwned + Serialize + std::fmt::Debug,
{
    for _ in 0..ATTEMPTS {
        let Some(mut object) = api.get_opt(name).await.map_err(kube_error("read", what))? else {
            tracing::warn!("{what} not found; its caBundle cannot be set");
            return Ok(Published::Missing);
        };
        if !set_ca_bundle(&mut object, bundle) {
            return Ok(Published::Unchanged);
        }
        match api.replace(name, &PostParams::default(), &object).await {
            Ok(_) => {
                tracing::info!("{what}: caBundle updated");
                return Ok(Published::Updated);
            }
            Err(kube::Error::Api(status)) if status.is_conflict() => continue,
            Err(source) => return Err(kube_error("update", what)(source)),
        }
    }
    Err(CertsError::Contended {
        what: what.to_owned(),
    })
}

fn secret_data(secret: &Secret) -> SecretData {
    secret
        .data
        .iter()
        .flatten()
        .map(|(key, value)| (key.clone(), value.0.clone()))
        .collect()
}

fn to_byte_strings(data: SecretData) -> BTreeMap<String, ByteString> {
    data.into_iter()
        .map(|(key, value)| (key, ByteString(value)))
        .collect()
}

fn new_secret(args: &CertsArgs, data: SecretData) -> Secret {
    Secret {
        metadata: ObjectMeta {
            name: Some(args.secret_name.clone()),
            namespace: Some(args.namespace.clone()),
            labels: Some(BTreeMap::from([(
                "app.kubernetes.io/managed-by".to_owned(),
                "kruise-webhook-certs".to_owned(),
            )])),
            ..ObjectMeta::default()
        },
        type_: Some("Opaque".to_owned()),
        data: Some(to_byte_strings(data)),
        ..Secret::default()
    }
}

fn kube_error(action: &'static str, what: &str) -> impl FnOnce(kube::Error) -> CertsError {
    let what = what.to_owned();
    move |source| CertsError::Kube {
        action,
        what,
        source,
    }
}
