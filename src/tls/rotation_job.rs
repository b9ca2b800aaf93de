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
//! Webhook configurations and CRDs are selected by name (flags). In the same write as the
//! bundle, every entry of the configurations whose path this server does not serve is removed
//! (an OpenKruise install's `vpod.kb.io` and the like, which `kubectl apply` leaves in place), and
//! said: a log line and a Warning event on the configuration. A CRD's conversion webhook gets the
//! bundle too, when the CRD converts through one ([`super::bundle_targets`] decides each write).
//!
//! [`spawn_bundle_check`] is the read-only counterpart for `serve --external-certs`: it never
//! writes, it only reports webhooks (and conversion webhooks) whose `caBundle` does not trust the
//! served certificate.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::SystemTime;

use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::api::core::v1::{Event, ObjectReference, Secret};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{ObjectMeta, Patch, PatchParams, PostParams};
use kube::runtime::events::EventType;
use kube::{Api, Client};
use serde::Serialize;
use serde::de::DeserializeOwned;

use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio::time::MissedTickBehavior;
use tokio_util::sync::CancellationToken;

use crate::cli::CertsArgs;
use crate::k8s::event::{CLUSTER_EVENT_NAMESPACE, cluster_scoped_event};
use crate::k8s::retry::{Attempt, again_on_conflict, retry_on_conflict};
use crate::metrics::Metrics;
use crate::tls::bundle_targets::{
    RemovedEntry, WebhookEntries, conversion_bundle_patch, conversion_client_config,
    remove_unserved, set_ca_bundle,
};
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

/// Component of the events this job records.
const COMPONENT: &str = "kruise-webhook-certs";
/// Reason of the event on a configuration whose unserved entries were removed.
pub const REASON_UNSERVED_REMOVED: &str = "UnservedWebhooksRemoved";

/// One run of the job. `served` is every path this server answers (`admission::SERVED_PATHS`):
/// entries of the configurations pointing elsewhere are removed.
pub async fn run(args: &CertsArgs, served: &[&str]) -> Result<(), CertsError> {
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
        let missing = publish_all(client, args, &plan.bundle, served).await?;

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

/// Sets `caBundle` in every configured webhook configuration (removing the entries this server
/// does not serve) and CRD conversion webhook; returns the configurations that do not exist.
async fn publish_all(
    client: &Client,
    args: &CertsArgs,
    bundle: &[u8],
    served: &[&str],
) -> Result<Vec<String>, CertsError> {
    let mut missing = Vec::new();
    let mutating: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
    for name in &args.configurations.webhooks.mutating {
        let what = format!("MutatingWebhookConfiguration {name}");
        if edit(client, &mutating, name, &what, Some(bundle), served)
            .await?
            .0
            == Published::Missing
        {
            missing.push(what);
        }
    }
    let validating: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
    for name in &args.configurations.webhooks.validating {
        let what = format!("ValidatingWebhookConfiguration {name}");
        if edit(client, &validating, name, &what, Some(bundle), served)
            .await?
            .0
            == Published::Missing
        {
            missing.push(what);
        }
    }
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    for name in &args.configurations.crds {
        publish_conversion(&crds, name, bundle).await?;
    }
    Ok(missing)
}

/// A webhook configuration as the job reads and writes it (either kind).
pub trait Configuration:
    kube::Resource<DynamicType = ()>
    + WebhookEntries
    + Clone
    + DeserializeOwned
    + Serialize
    + std::fmt::Debug
{
}

impl<K> Configuration for K where
    K: kube::Resource<DynamicType = ()>
        + WebhookEntries
        + Clone
        + DeserializeOwned
        + Serialize
        + std::fmt::Debug
{
}

/// Removes from one webhook configuration the entries this server does not serve, as every run
/// of the job does, without touching any `caBundle` (`kruise-webhook migrate --apply`, before
/// the install). Returns what was removed; `None` when the configuration does not exist.
pub async fn remove_unserved_entries<K: Configuration>(
    client: &Client,
    api: &Api<K>,
    name: &str,
    served: &[&str],
) -> Result<Option<Vec<RemovedEntry>>, CertsError> {
    let what = format!("{} {name}", K::kind(&()));
    let (published, removed) = edit(client, api, name, &what, None, served).await?;
    Ok((published != Published::Missing).then_some(removed))
}

/// One configuration read, its unserved entries removed and (with `bundle`) its `caBundle` set,
/// written only when something changed; the removal is logged and recorded as an event.
async fn edit<K: Configuration>(
    client: &Client,
    api: &Api<K>,
    name: &str,
    what: &str,
    bundle: Option<&[u8]>,
    served: &[&str],
) -> Result<(Published, Vec<RemovedEntry>), CertsError> {
    let published = retry_on_conflict(ATTEMPTS, (), |()| async move {
        let Some(mut object) = api.get_opt(name).await.map_err(kube_error("read", what))? else {
            if bundle.is_some() {
                tracing::warn!("{what} not found; its caBundle cannot be set");
            }
            return Ok::<_, CertsError>(Attempt::Done((Published::Missing, Vec::new())));
        };
        let removed = remove_unserved(&mut object, served);
        let bundle_set = bundle.is_some_and(|bundle| set_ca_bundle(&mut object, bundle));
        if !bundle_set && removed.is_empty() {
            return Ok(Attempt::Done((Published::Unchanged, removed)));
        }
        let replaced = api.replace(name, &PostParams::default(), &object).await;
        let replaced = again_on_conflict(replaced).map_err(kube_error("update", what))?;
        if let Attempt::Done(written) = &replaced {
            if bundle_set {
                tracing::info!("{what}: caBundle updated");
            }
            if !removed.is_empty() {
                report_removed(client, written, what, &removed).await;
            }
        }
        Ok(replaced.map(|_| (Published::Updated, removed)))
    })
    .await?;
    published.ok_or_else(|| CertsError::Contended {
        what: what.to_owned(),
    })
}

/// Says which entries were removed: a log line, and a Warning event on the configuration (a
/// courtesy: an event that cannot be recorded is logged, the run goes on).
async fn report_removed<K>(client: &Client, written: &K, what: &str, removed: &[RemovedEntry])
where
    K: kube::Resource<DynamicType = ()>,
{
    let listed: Vec<String> = removed.iter().map(ToString::to_string).collect();
    let message = format!(
        "removed {} webhook(s) whose path this server does not serve (their requests would be refused): {}",
        removed.len(),
        listed.join(", ")
    );
    tracing::warn!(removed = %listed.join(", "), "{what}: {message}");
    let events: Api<Event> = Api::namespaced(client.clone(), CLUSTER_EVENT_NAMESPACE);
    if let Err(error) = events
        .create(&PostParams::default(), &removal_event(written, message))
        .await
    {
        tracing::warn!(%error, "{what}: the event saying so could not be recorded");
    }
}

/// A Warning event about the cluster-scoped configuration `object`, saying what was removed.
fn removal_event<K: kube::Resource<DynamicType = ()>>(object: &K, message: String) -> Event {
    let meta = object.meta();
    let reference = ObjectReference {
        api_version: Some(K::api_version(&()).into_owned()),
        kind: Some(K::kind(&()).into_owned()),
        name: meta.name.clone(),
        uid: meta.uid.clone(),
        resource_version: meta.resource_version.clone(),
        ..ObjectReference::default()
    };
    let event = kube::runtime::events::Event {
        type_: EventType::Warning,
        reason: REASON_UNSERVED_REMOVED.to_owned(),
        note: Some(message),
        action: REASON_UNSERVED_REMOVED.to_owned(),
        secondary: None,
    };
    cluster_scoped_event(COMPONENT, &reference, &event, jiff::Timestamp::now())
}

/// Sets the bundle in a CRD's conversion webhook, when it has one; a CRD that does not exist is
/// left to whoever installs it (the next run finds it).
async fn publish_conversion(
    api: &Api<CustomResourceDefinition>,
    name: &str,
    bundle: &[u8],
) -> Result<(), CertsError> {
    let what = format!("CustomResourceDefinition {name}");
    let what = &what;
    let done = retry_on_conflict(ATTEMPTS, (), |()| async move {
        let Some(crd) = api.get_opt(name).await.map_err(kube_error("read", what))? else {
            tracing::warn!(
                "{what} not found; the caBundle of its conversion webhook cannot be set"
            );
            return Ok::<_, CertsError>(Attempt::Done(()));
        };
        let Some(patch) = conversion_bundle_patch(&crd, bundle) else {
            return Ok(Attempt::Done(()));
        };
        let patched = api
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await;
        let patched = again_on_conflict(patched).map_err(kube_error("patch", what))?;
        if let Attempt::Done(_) = patched {
            tracing::info!("{what}: caBundle of the conversion webhook updated");
        }
        Ok(patched.map(drop))
    })
    .await?;
    done.ok_or_else(|| CertsError::Contended { what: what.clone() })
}

/// The webhook configurations and CRDs `serve --external-certs` checks.
#[derive(Clone, Debug)]
pub struct CheckedConfigurations {
    pub mutating: Vec<String>,
    pub validating: Vec<String>,
    pub crds: Vec<String>,
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
        let validating: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
        let crds: Api<CustomResourceDefinition> = Api::all(client);
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
            for name in &configurations.crds {
                match check_conversion(&crds, name, &chain).await {
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
    K: kube::Resource + WebhookEntries + Clone + DeserializeOwned + std::fmt::Debug,
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

/// 1 when a CRD's conversion webhook does not trust the served certificate, 0 when it does or the
/// CRD converts without one; `None` when it could not be read.
async fn check_conversion(
    api: &Api<CustomResourceDefinition>,
    name: &str,
    chain: &[rustls::pki_types::CertificateDer<'static>],
) -> Option<usize> {
    let what = format!("CustomResourceDefinition {name}");
    let crd = match api.get_opt(name).await {
        Ok(Some(crd)) => crd,
        Ok(None) => {
            tracing::warn!(
                "{what} not found; the caBundle of its conversion webhook cannot be checked"
            );
            return None;
        }
        Err(error) => {
            tracing::warn!(%error, "{what}: cannot read it to check its conversion webhook's caBundle");
            return None;
        }
    };
    let Some(config) = conversion_client_config(&crd) else {
        return Some(0);
    };
    let bundle = config
        .ca_bundle
        .as_ref()
        .map(|b| b.0.as_slice())
        .unwrap_or_default();
    match bundle_trusts(bundle, chain, SystemTime::now()) {
        Ok(()) => Some(0),
        Err(reason) => {
            tracing::warn!("{what}: conversion webhook: {reason}");
            Some(1)
        }
    }
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
