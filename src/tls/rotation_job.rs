//! `kruise-webhook certs`: the thin kube shell around [`crate::tls::secret_plan`]. Reads the
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
//!
//! [`spawn_bundle_check`] is the read-only counterpart for `serve --external-certs`: it never
//! writes, it only reports webhooks whose `caBundle` does not trust the served certificate.

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

use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio::time::MissedTickBehavior;
use tokio_util::sync::CancellationToken;

use crate::cli::CertsArgs;
use crate::k8s::retry::{Attempt, again_on_conflict, retry_on_conflict};
use crate::metrics::Metrics;
use crate::tls::reloader::ReloadableCert;
use crate::tls::secret_plan::{self, Policy, SecretData};
use crate::tls::trust::bundle_trusts;

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
    Rotation(#[from] secret_plan::RotationError),
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

    let (client, secrets, what, ips) = (&client, &secrets, &what, &ips);
    let missing = retry_on_conflict(ATTEMPTS, (), |()| async move {
        let existing = secrets
            .get_opt(&args.secret_name)
            .await
            .map_err(kube_error("read", what))?;
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
        let plan = secret_plan::plan(&current, &policy)?;
        for action in &plan.actions {
            tracing::info!(secret = %what, "{action}");
        }

        // Bundle first: see the module documentation.
        let missing = publish_all(client, args, &plan.bundle).await?;

        let Some(data) = plan.data else {
            tracing::info!(secret = %what, "certificates are current; Secret unchanged");
            return Ok::<_, CertsError>(Attempt::Done(missing));
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
        // A create that met a Secret made meanwhile is a conflict too (409 AlreadyExists).
        let written = again_on_conflict(written).map_err(kube_error("write", what))?;
        match written {
            Attempt::Done(()) => tracing::info!(secret = %what, "Secret written"),
            Attempt::Again(()) => {
                tracing::info!(secret = %what, "Secret changed concurrently; planning again");
            }
        }
        Ok(written.map(|()| missing))
    })
    .await?;
    match missing {
        Some(missing) => finish(missing),
        None => Err(CertsError::Contended { what: what.clone() }),
    }
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
    for name in &args.configurations.mutating {
        let what = format!("MutatingWebhookConfiguration {name}");
        if publish(&mutating, name, &what, bundle).await? == Published::Missing {
            missing.push(what);
        }
    }
    let validating: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
    for name in &args.configurations.validating {
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
    let published = retry_on_conflict(ATTEMPTS, (), |()| async move {
        let Some(mut object) = api.get_opt(name).await.map_err(kube_error("read", what))? else {
            tracing::warn!("{what} not found; its caBundle cannot be set");
            return Ok::<_, CertsError>(Attempt::Done(Published::Missing));
        };
        if !set_ca_bundle(&mut object, bundle) {
            return Ok(Attempt::Done(Published::Unchanged));
        }
        let replaced = api.replace(name, &PostParams::default(), &object).await;
        let replaced = again_on_conflict(replaced).map_err(kube_error("update", what))?;
        if let Attempt::Done(_) = replaced {
            tracing::info!("{what}: caBundle updated");
        }
        Ok(replaced.map(|_| Published::Updated))
    })
    .await?;
    published.ok_or_else(|| CertsError::Contended {
        what: what.to_owned(),
    })
}

/// The webhook configurations `serve --external-certs` checks.
#[derive(Clone, Debug)]
pub struct CheckedConfigurations {
    pub mutating: Vec<String>,
    pub validating: Vec<String>,
}

/// Every `interval`, checks that each webhook of the configured configurations has a `caBundle`
/// that trusts the certificate `serving` holds; logs each mismatch and publishes their count.
/// Read-only: whoever injects the bundle (cert-manager's cainjector, the `certs` job) owns it.
pub fn spawn_bundle_check(
    client: Client,
    configurations: CheckedConfigurations,
    serving: Arc<ReloadableCert>,
    metrics: Arc<Metrics>,
    interval: Duration,
    shutdown: CancellationToken,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut ticker = tokio::time::interval(interval);
        ticker.set_missed_tick_behavior(MissedTickBehavior::Delay);
        let mutating: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
        let validating: Api<ValidatingWebhookConfiguration> = Api::all(client);
        loop {
            tokio::select! {
                () = shutdown.cancelled() => return,
                _ = ticker.tick() => {}
            }
            let chain = serving.current().cert.clone();
            let mut mismatches = 0;
            let mut complete = true;
            for name in &configurations.mutating {
                let what = format!("MutatingWebhookConfiguration {name}");
                match check_one(&mutating, name, &what, &chain).await {
                    Some(count) => mismatches += count,
                    None => complete = false,
                }
            }
            for name in &configurations.validating {
                let what = format!("ValidatingWebhookConfiguration {name}");
                match check_one(&validating, name, &what, &chain).await {
                    Some(count) => mismatches += count,
                    None => complete = false,
                }
            }
            // A failed read says nothing about the bundle; keep the last count then.
            if complete || mismatches > 0 {
                metrics.set_ca_bundle_mismatches(mismatches);
            }
        }
    })
}

/// Mismatching webhooks of one configuration, or `None` when it could not be read.
async fn check_one<K>(
    api: &Api<K>,
    name: &str,
    what: &str,
    chain: &[rustls::pki_types::CertificateDer<'static>],
) -> Option<usize>
where
    K: kube::Resource + ClientConfigs + Clone + DeserializeOwned + std::fmt::Debug,
{
    let mut object = match api.get_opt(name).await {
        Ok(Some(object)) => object,
        Ok(None) => {
            tracing::warn!("{what} not found; its caBundle cannot be checked");
            return None;
        }
        Err(error) => {
            tracing::warn!(%error, "{what}: cannot read it to check its caBundle");
            return None;
        }
    };
    let now = SystemTime::now();
    let mut mismatches = 0;
    for (index, config) in object.client_configs().into_iter().enumerate() {
        let bundle = config
            .ca_bundle
            .as_ref()
            .map(|b| b.0.as_slice())
            .unwrap_or_default();
        if let Err(reason) = bundle_trusts(bundle, chain, now) {
            tracing::warn!("{what}: webhook #{index}: {reason}");
            mismatches += 1;
        }
    }
    Some(mismatches)
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

#[cfg(test)]
mod tests;
