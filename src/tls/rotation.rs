//! What the `certs` job decides, without any I/O: given the data of the certificate Secret, the
//! clock and the thresholds, either "nothing to do" or the new Secret data, and always the
//! `caBundle` to publish in the webhook configurations.
//!
//! The rules:
//!
//! - **Serving certificate** (`tls.crt`/`tls.key`): re-issued when missing, broken (unparsable,
//!   key not belonging to the certificate), not signed by the current CA, not covering every
//!   wanted name, or within `renew_before` of its expiry — or when forced.
//! - **CA** (`ca.crt`/`ca.key`): replaced when missing, broken, or within
//!   `max(ca_renew_before, cert_validity)` of its expiry (it must outlive every certificate it
//!   signs) — or when forced. A new CA always comes with a new serving certificate.
//! - **Overlap**: a replaced CA certificate moves to `ca-previous.crt` and stays in the bundle
//!   next to the new one (newest first), because servers keep presenting a certificate of the old CA until
//!   their mounted Secret is refreshed and reloaded. The previous CAs are dropped once the
//!   serving certificate in the Secret is signed by the current CA **and** the current CA was
//!   created at least `ca_overlap` ago (time enough for every server to have reloaded), or
//!   individually once they have expired (a certificate they signed is useless by then).
//! - **Idempotent**: data that already satisfies all of this is returned unchanged
//!   ([`Plan::data`] is `None`), so the shell writes nothing.
//!
//! The bundle is `ca.crt` followed by `ca-previous.crt`; it is also stored as `ca-bundle.crt`
//! so servers and scripts can read the set of trusted CAs next to the certificate. The keys
//! OpenKruise uses for the same files (`ca-cert.pem`, `ca-key.pem`, `cert.pem`, `key.pem`) are
//! written as copies, and read when ours are missing, so a Secret left by OpenKruise is
//! taken over (a CA whose key cannot be loaded is replaced, with the usual overlap).

use std::collections::BTreeMap;
use std::fmt;
use std::net::IpAddr;
use std::time::{Duration, SystemTime};

use base64::Engine as _;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

use super::certgen::{
    self, CLOCK_SKEW_ALLOWANCE, Ca, CertError, WantedNames, check_leaf, generate_ca,
    issue_serving_cert, parse_ca,
};

pub const CA_CERT_KEY: &str = "ca.crt";
pub const CA_KEY_KEY: &str = "ca.key";
pub const CERT_KEY: &str = "tls.crt";
pub const KEY_KEY: &str = "tls.key";
pub const PREVIOUS_CA_KEY: &str = "ca-previous.crt";
pub const BUNDLE_KEY: &str = "ca-bundle.crt";

/// OpenKruise's names for the same data: (theirs, ours).
const OPENKRUISE_ALIASES: [(&str, &str); 4] = [
    ("ca-cert.pem", CA_CERT_KEY),
    ("ca-key.pem", CA_KEY_KEY),
    ("cert.pem", CERT_KEY),
    ("key.pem", KEY_KEY),
];

/// The `data` of the certificate Secret.
pub type SecretData = BTreeMap<String, Vec<u8>>;

/// Thresholds and names; see the module documentation for how they are used.
#[derive(Clone, Debug)]
pub struct Policy {
    pub now: SystemTime,
    /// Lifetime of a new serving certificate.
    pub cert_validity: Duration,
    /// Re-issue the serving certificate when less than this is left.
    pub renew_before: Duration,
    /// Lifetime of a new CA.
    pub ca_validity: Duration,
    /// Replace the CA when less than this (or less than `cert_validity`) is left.
    pub ca_renew_before: Duration,
    /// How long a replaced CA stays in the bundle after its successor was created.
    pub ca_overlap: Duration,
    pub dns_names: Vec<String>,
    pub ip_sans: Vec<IpAddr>,
    pub force_renew: bool,
    pub force_rotate_ca: bool,
}

/// What a run decided.
#[derive(Debug)]
pub struct Plan {
    /// The new Secret data, or `None` when the current data needs no change.
    pub data: Option<SecretData>,
    /// The PEM bundle every webhook configuration's `caBundle` must hold.
    pub bundle: Vec<u8>,
    /// What changed and why, for the log.
    pub actions: Vec<Action>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// A new CA was generated; the reason the old one (if any) was not kept.
    NewCa(String),
    /// A new serving certificate was issued; the reason.
    NewCert(String),
    /// Previous CAs removed from the bundle; how many and why.
    DroppedPreviousCas(usize, &'static str),
    /// Only derived keys (bundle, aliases) were rewritten.
    Rewritten,
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::NewCa(reason) => write!(f, "new CA ({reason})"),
            Action::NewCert(reason) => write!(f, "new serving certificate ({reason})"),
            Action::DroppedPreviousCas(count, reason) => {
                write!(
                    f,
                    "dropped {count} previous CA(s) from the bundle ({reason})"
                )
            }
            Action::Rewritten => write!(f, "derived keys rewritten"),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum RotationError {
    #[error("invalid thresholds: {0}")]
    Policy(String),
    #[error(transparent)]
    Generate(#[from] CertError),
}

/// Decides what the Secret must hold now; see the module documentation.
pub fn plan(current: &SecretData, policy: &Policy) -> Result<Plan, RotationError> {
    check_policy(policy)?;
    let now = policy.now;
    let wanted = WantedNames::new(&policy.dns_names, &policy.ip_sans);
    let mut actions = Vec::new();
    let mut previous = parse_bundle(get(current, PREVIOUS_CA_KEY));

    // The CA: keep it, or replace it and remember the old certificate for the overlap.
    let ca_cert_pem = get(current, CA_CERT_KEY);
    let kept_ca = match parse_ca(
        ca_cert_pem.unwrap_or_default(),
        get(current, CA_KEY_KEY).unwrap_or_default(),
    ) {
        Ok(_) if policy.force_rotate_ca => Err("rotation forced".to_owned()),
        Ok(ca) if ca_due(&ca, policy) => Err(format!(
            "expires within {}",
            human(policy.ca_renew_before.max(policy.cert_validity))
        )),
        Ok(ca) => Ok(ca),
        Err(_) if ca_cert_pem.is_none() => Err("none stored".to_owned()),
        Err(reason) => Err(reason),
    };
    let (ca, ca_pem, ca_key_pem, ca_created_now) = match kept_ca {
        Ok(ca) => {
            let cert_pem = ca_cert_pem.unwrap_or_default().to_vec();
            let key_pem = get(current, CA_KEY_KEY).unwrap_or_default().to_vec();
            (ca, cert_pem, key_pem, false)
        }
        Err(reason) => {
            // The old CA may have signed what servers present right now: keep trusting it.
            if let Some(old) = ca_cert_pem.and_then(|pem| CertificateDer::from_pem_slice(pem).ok())
            {
                previous.insert(0, old);
            }
            let ca_lifetime = policy.ca_validity;
            let (ca, cert_pem, key_pem) = generate_ca(now, ca_lifetime)?;
            actions.push(Action::NewCa(reason));
            (ca, cert_pem.into_bytes(), key_pem.into_bytes(), true)
        }
    };

    // The serving certificate.
    let cert_pem = get(current, CERT_KEY).unwrap_or_default();
    let key_pem = get(current, KEY_KEY).unwrap_or_default();
    let reissue = if ca_created_now {
        Some("new CA".to_owned())
    } else if policy.force_renew {
        Some("renewal forced".to_owned())
    } else {
        match check_leaf(cert_pem, key_pem, &ca, &wanted, now) {
            Err(reason) => Some(reason),
            Ok((_, not_after)) if left(not_after, now) < policy.renew_before => {
                Some(format!("expires within {}", human(policy.renew_before)))
            }
            Ok(_) => None,
        }
    };
    let (cert_pem, key_pem) = match reissue {
        Some(reason) => {
            let (cert, key, _) = issue_serving_cert(&ca, &wanted, policy.cert_validity, now)?;
            actions.push(Action::NewCert(reason));
            (cert.into_bytes(), key.into_bytes())
        }
        None => (cert_pem.to_vec(), key_pem.to_vec()),
    };

    // The overlap: previous CAs stay until the current one has been in service long enough.
    let before = previous.len();
    previous.retain(|cert| cert.as_ref() != ca.cert_der.as_ref());
    dedup(&mut previous);
    previous.retain(|cert| not_after(cert).is_some_and(|expiry| expiry > now));
    if previous.len() < before {
        let dropped = before - previous.len();
        // Not an action worth a line when the only "drop" was parsing noise of equal certs.
        actions.push(Action::DroppedPreviousCas(dropped, "expired or duplicate"));
    }
    // The CA's notBefore is backdated by the skew allowance; add it back to get its creation.
    let ca_created = ca.not_before + CLOCK_SKEW_ALLOWANCE;
    let overlap_over = !ca_created_now
        && now
            .duration_since(ca_created)
            .is_ok_and(|age| age >= policy.ca_overlap);
    if !previous.is_empty() && overlap_over {
        actions.push(Action::DroppedPreviousCas(
            previous.len(),
            "the serving certificate is signed by the current CA and the overlap has passed",
        ));
        previous.clear();
    }

    let previous_pem = encode_bundle(&previous);
    let mut bundle = encode_bundle(std::slice::from_ref(&ca.cert_der));
    bundle.extend_from_slice(&previous_pem);

    let mut data = current.clone();
    data.insert(CA_CERT_KEY.to_owned(), ca_pem);
    data.insert(CA_KEY_KEY.to_owned(), ca_key_pem);
    data.insert(CERT_KEY.to_owned(), cert_pem);
    data.insert(KEY_KEY.to_owned(), key_pem);
    if previous_pem.is_empty() {
        data.remove(PREVIOUS_CA_KEY);
    } else {
        data.insert(PREVIOUS_CA_KEY.to_owned(), previous_pem);
    }
    data.insert(BUNDLE_KEY.to_owned(), bundle.clone());
    for (theirs, ours) in OPENKRUISE_ALIASES {
        let value = data.get(ours).cloned().unwrap_or_default();
        data.insert(theirs.to_owned(), value);
    }

    if &data == current {
        return Ok(Plan {
            data: None,
            bundle,
            actions: Vec::new(),
        });
    }
    if actions.is_empty() {
        actions.push(Action::Rewritten);
    }
    Ok(Plan {
        data: Some(data),
        bundle,
        actions,
    })
}

fn check_policy(policy: &Policy) -> Result<(), RotationError> {
    let invalid = |message: String| Err(RotationError::Policy(message));
    if policy.renew_before >= policy.cert_validity {
        return invalid(format!(
            "renew-before ({}) must be shorter than the certificate validity ({}), or every run renews",
            human(policy.renew_before),
            human(policy.cert_validity)
        ));
    }
    let ca_margin = policy.ca_renew_before.max(policy.cert_validity);
    if ca_margin >= policy.ca_validity {
        return invalid(format!(
            "the CA validity ({}) must exceed both ca-renew-before ({}) and the certificate validity ({}), or every run replaces the CA",
            human(policy.ca_validity),
            human(policy.ca_renew_before),
            human(policy.cert_validity)
        ));
    }
    Ok(())
}

fn ca_due(ca: &Ca, policy: &Policy) -> bool {
    left(ca.not_after, policy.now) < policy.ca_renew_before.max(policy.cert_validity)
}

/// Our key, or OpenKruise's name for it.
fn get<'a>(data: &'a SecretData, key: &str) -> Option<&'a [u8]> {
    data.get(key)
        .or_else(|| {
            OPENKRUISE_ALIASES
                .iter()
                .find(|(_, ours)| *ours == key)
                .and_then(|(theirs, _)| data.get(*theirs))
        })
        .map(Vec::as_slice)
        .filter(|value| !value.is_empty())
}

fn left(until: SystemTime, now: SystemTime) -> Duration {
    until.duration_since(now).unwrap_or_default()
}

/// The certificates of a PEM bundle; blocks that do not parse are dropped.
fn parse_bundle(pem: Option<&[u8]>) -> Vec<CertificateDer<'static>> {
    CertificateDer::pem_slice_iter(pem.unwrap_or_default())
        .filter_map(Result::ok)
        .filter(|cert| not_after(cert).is_some())
        .collect()
}

fn not_after(cert: &CertificateDer<'_>) -> Option<SystemTime> {
    let (_, parsed) = x509_parser::parse_x509_certificate(cert).ok()?;
    Some(certgen::validity(&parsed).1)
}

fn dedup(certs: &mut Vec<CertificateDer<'static>>) {
    let mut seen = std::collections::BTreeSet::new();
    certs.retain(|cert| seen.insert(cert.as_ref().to_vec()));
}

/// PEM, 64 columns, LF line ends: one canonical form, so re-encoding never looks like a change.
pub fn encode_bundle(certs: &[CertificateDer<'_>]) -> Vec<u8> {
    let mut out = String::new();
    for cert in certs {
        out.push_str("-----BEGIN CERTIFICATE-----\n");
        let body = base64::engine::general_purpose::STANDARD.encode(cert.as_ref());
        for line in body.as_bytes().chunks(64) {
            out.push_str(&String::from_utf8_lossy(line));
            out.push('\n');
        }
        out.push_str("-----END CERTIFICATE-----\n");
    }
    out.into_bytes()
}

fn human(duration: Duration) -> String {
    const DAY: u64 = 24 * 3600;
    let seconds = duration.as_secs();
    if seconds >= DAY && seconds.is_multiple_of(DAY) {
        format!("{}d", seconds / DAY)
    } else {
        format!("{seconds}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tls::resolver::ReloadableCert;
    use rcgen::{KeyPair, PKCS_ECDSA_P256_SHA256};
    use rustls::RootCertStore;
    use rustls::client::WebPkiServerVerifier;
    use rustls::client::danger::ServerCertVerifier;
    use rustls::pki_types::{ServerName, UnixTime};
    use std::sync::Arc;
    use std::time::UNIX_EPOCH;

    const DAY: Duration = Duration::from_secs(24 * 3600);
    const HOUR: Duration = Duration::from_secs(3600);

    fn policy(now: SystemTime) -> Policy {
        Policy {
            now,
            cert_validity: 30 * DAY,
            renew_before: 10 * DAY,
            ca_validity: 365 * DAY,
            ca_renew_before: 60 * DAY,
            ca_overlap: HOUR,
            dns_names: vec!["svc.ns.svc".to_owned()],
            ip_sans: Vec::new(),
            force_renew: false,
            force_rotate_ca: false,
        }
    }

    fn apply(current: &SecretData, policy: &Policy) -> (SecretData, Plan) {
        let plan = plan(current, policy).unwrap();
        let data = plan.data.clone().unwrap_or_else(|| current.clone());
        (data, plan)
    }

    fn certs_in(pem: &[u8]) -> Vec<Vec<u8>> {
        CertificateDer::pem_slice_iter(pem)
            .map(|cert| cert.unwrap().to_vec())
            .collect()
    }

    fn der(pem: &[u8]) -> Vec<u8> {
        certs_in(pem).remove(0)
    }

    /// What the apiserver does with the published bundle: verify the served certificate.
    fn bundle_trusts(bundle: &[u8], cert_pem: &[u8], name: &str, now: SystemTime) -> bool {
        let mut roots = RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(bundle) {
            roots.add(cert.unwrap()).unwrap();
        }
        let verifier = WebPkiServerVerifier::builder_with_provider(
            Arc::new(roots),
            Arc::new(rustls::crypto::ring::default_provider()),
        )
        .build()
        .unwrap();
        let leaf = CertificateDer::from_pem_slice(cert_pem).unwrap();
        let since_epoch = now.duration_since(UNIX_EPOCH).unwrap();
        verifier
            .verify_server_cert(
                &leaf,
                &[],
                &ServerName::try_from(name.to_owned()).unwrap(),
                &[],
                UnixTime::since_unix_epoch(since_epoch),
            )
            .is_ok()
    }

    fn has_new_ca(plan: &Plan) -> bool {
        plan.actions
            .iter()
            .any(|action| matches!(action, Action::NewCa(_)))
    }

    fn new_cert_reason(plan: &Plan) -> Option<&str> {
        plan.actions.iter().find_map(|action| match action {
            Action::NewCert(reason) => Some(reason.as_str()),
            _ => None,
        })
    }

    #[test]
    fn creates_everything_then_changes_nothing() {
        let t0 = SystemTime::now();
        let (data, first) = apply(&SecretData::new(), &policy(t0));
        assert!(has_new_ca(&first));
        assert_eq!(new_cert_reason(&first), Some("new CA"));
        for key in [
            CA_CERT_KEY,
            CA_KEY_KEY,
            CERT_KEY,
            KEY_KEY,
            BUNDLE_KEY,
            "ca-cert.pem",
            "ca-key.pem",
            "cert.pem",
            "key.pem",
        ] {
            assert!(data.contains_key(key), "{key} missing");
        }
        assert!(!data.contains_key(PREVIOUS_CA_KEY));
        assert_eq!(data["cert.pem"], data[CERT_KEY]);
        assert_eq!(certs_in(&first.bundle), vec![der(&data[CA_CERT_KEY])]);
        assert_eq!(data[BUNDLE_KEY], first.bundle);
        for name in ["svc.ns.svc", "localhost", "127.0.0.1"] {
            assert!(bundle_trusts(&first.bundle, &data[CERT_KEY], name, t0));
        }
        ReloadableCert::from_pem(&data[CERT_KEY], &data[KEY_KEY]).unwrap();

        // Nothing to do: no new data, the same bundle, also a little later.
        let second = plan(&data, &policy(t0)).unwrap();
        assert!(second.data.is_none(), "{:?}", second.actions);
        assert!(second.actions.is_empty());
        assert_eq!(second.bundle, first.bundle);
        let later = plan(&data, &policy(t0 + 5 * DAY)).unwrap();
        assert!(later.data.is_none(), "{:?}", later.actions);
    }

    #[test]
    fn serving_certificate_is_renewed_at_the_threshold_and_the_ca_kept() {
        let t0 = SystemTime::now();
        let (data, _) = apply(&SecretData::new(), &policy(t0));
        // 30-day certificate, renewed when less than 10 days are left.
        let kept = plan(&data, &policy(t0 + 19 * DAY)).unwrap();
        assert!(kept.data.is_none(), "{:?}", kept.actions);

        let (renewed, plan) = apply(&data, &policy(t0 + 21 * DAY));
        assert_eq!(
            plan.actions,
            vec![Action::NewCert("expires within 10d".to_owned())]
        );
        assert_eq!(renewed[CA_CERT_KEY], data[CA_CERT_KEY]);
        assert_eq!(renewed[CA_KEY_KEY], data[CA_KEY_KEY]);
        assert_eq!(renewed[BUNDLE_KEY], data[BUNDLE_KEY]);
        assert_ne!(renewed[CERT_KEY], data[CERT_KEY]);
        assert!(bundle_trusts(
            &plan.bundle,
            &renewed[CERT_KEY],
            "svc.ns.svc",
            t0 + 21 * DAY
        ));

        // Forced renewal: a new certificate from the same CA.
        let mut forced = policy(t0);
        forced.force_renew = true;
        let (_, plan) = apply(&data, &forced);
        assert_eq!(
            plan.actions,
            vec![Action::NewCert("renewal forced".to_owned())]
        );
    }

    #[test]
    fn ca_is_renewed_well_before_expiry_with_an_overlapping_bundle() {
        let t0 = SystemTime::now();
        let (data, _) = apply(&SecretData::new(), &policy(t0));
        let old_ca = der(&data[CA_CERT_KEY]);
        let old_cert = data[CERT_KEY].clone();

        // 365-day CA, replaced when less than 60 days are left.
        let t1 = t0 + 306 * DAY;
        let (rotated, plan) = apply(&data, &policy(t1));
        assert!(has_new_ca(&plan), "{:?}", plan.actions);
        let new_ca = der(&rotated[CA_CERT_KEY]);
        assert_ne!(new_ca, old_ca);
        assert_eq!(certs_in(&rotated[PREVIOUS_CA_KEY]), vec![old_ca.clone()]);
        // New CA first, then the old one; both trusted.
        assert_eq!(certs_in(&plan.bundle), vec![new_ca.clone(), old_ca.clone()]);
        assert_eq!(rotated[BUNDLE_KEY], plan.bundle);
        assert!(bundle_trusts(
            &plan.bundle,
            &rotated[CERT_KEY],
            "svc.ns.svc",
            t1
        ));
        // A server that has not reloaded yet still presents a certificate the bundle trusts.
        assert!(bundle_trusts(
            &plan.bundle,
            &old_cert,
            "svc.ns.svc",
            t0 + DAY
        ));

        // Within the overlap: nothing changes.
        let during = plan_at(&rotated, t1 + HOUR / 2);
        assert!(during.data.is_none(), "{:?}", during.actions);
        assert_eq!(certs_in(&during.bundle).len(), 2);

        // After it: the old CA leaves the bundle, once; the certificate stays.
        let (settled, plan) = apply(&rotated, &policy(t1 + 2 * HOUR));
        assert!(matches!(
            plan.actions.as_slice(),
            [Action::DroppedPreviousCas(1, _)]
        ));
        assert_eq!(certs_in(&plan.bundle), vec![new_ca]);
        assert!(!settled.contains_key(PREVIOUS_CA_KEY));
        assert_eq!(settled[CERT_KEY], rotated[CERT_KEY]);
        assert!(plan_at(&settled, t1 + 3 * HOUR).data.is_none());
    }

    fn plan_at(data: &SecretData, now: SystemTime) -> Plan {
        plan(data, &policy(now)).unwrap()
    }

    #[test]
    fn forced_rotations_keep_every_ca_a_server_may_still_present() {
        let t0 = SystemTime::now();
        let (data, _) = apply(&SecretData::new(), &policy(t0));
        let first_ca = der(&data[CA_CERT_KEY]);
        let mut forced = policy(t0);
        forced.force_rotate_ca = true;
        let (second, plan) = apply(&data, &forced);
        assert!(has_new_ca(&plan));
        let second_ca = der(&second[CA_CERT_KEY]);
        // Rotating again inside the overlap keeps both older CAs.
        let (third, plan) = apply(&second, &forced);
        let third_ca = der(&third[CA_CERT_KEY]);
        assert_eq!(
            certs_in(&plan.bundle),
            vec![third_ca.clone(), second_ca, first_ca]
        );
        // Both drop together once the newest has been in service for the overlap.
        let plan = plan_at(&third, t0 + 2 * HOUR);
        assert_eq!(certs_in(&plan.bundle), vec![third_ca]);
    }

    #[test]
    fn expired_previous_cas_are_dropped_even_within_the_overlap() {
        let t0 = SystemTime::now();
        let mut short = policy(t0);
        short.ca_validity = 100 * DAY;
        short.ca_renew_before = 35 * DAY;
        short.ca_overlap = 1000 * DAY;
        let (data, _) = apply(&SecretData::new(), &short);
        short.now = t0 + 66 * DAY;
        let (rotated, plan) = apply(&data, &short);
        assert!(has_new_ca(&plan));
        assert_eq!(certs_in(&plan.bundle).len(), 2);

        short.now = t0 + 101 * DAY;
        let (after, plan) = apply(&rotated, &short);
        assert!(!has_new_ca(&plan), "{:?}", plan.actions);
        assert!(
            plan.actions
                .contains(&Action::DroppedPreviousCas(1, "expired or duplicate")),
            "{:?}",
            plan.actions
        );
        assert_eq!(certs_in(&plan.bundle), vec![der(&rotated[CA_CERT_KEY])]);
        assert!(!after.contains_key(PREVIOUS_CA_KEY));
    }

    #[test]
    fn a_mismatched_key_is_never_kept() {
        let t0 = SystemTime::now();
        let (data, _) = apply(&SecretData::new(), &policy(t0));
        let stray = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256).unwrap();

        // Serving key that does not belong to the certificate: re-issued from the same CA.
        let mut broken = data.clone();
        broken.insert(KEY_KEY.to_owned(), stray.serialize_pem().into_bytes());
        let (fixed, plan) = apply(&broken, &policy(t0));
        let reason = new_cert_reason(&plan).unwrap();
        assert!(reason.contains("does not belong"), "{reason}");
        assert!(!has_new_ca(&plan));
        assert_eq!(fixed[CA_CERT_KEY], data[CA_CERT_KEY]);
        ReloadableCert::from_pem(&fixed[CERT_KEY], &fixed[KEY_KEY]).unwrap();
        assert_eq!(fixed["key.pem"], fixed[KEY_KEY]);

        // CA key that does not belong to the CA: a new CA, the old certificate kept for overlap.
        let mut broken = data.clone();
        broken.insert(CA_KEY_KEY.to_owned(), stray.serialize_pem().into_bytes());
        let (fixed, plan) = apply(&broken, &policy(t0));
        assert!(
            plan.actions.iter().any(|action| matches!(
                action, Action::NewCa(reason) if reason.contains("does not belong")
            )),
            "{:?}",
            plan.actions
        );
        assert_eq!(
            certs_in(&fixed[PREVIOUS_CA_KEY]),
            vec![der(&data[CA_CERT_KEY])]
        );
        assert!(bundle_trusts(
            &plan.bundle,
            &data[CERT_KEY],
            "svc.ns.svc",
            t0
        ));
        assert!(bundle_trusts(
            &plan.bundle,
            &fixed[CERT_KEY],
            "svc.ns.svc",
            t0
        ));

        // A certificate signed by another CA (e.g. copied from elsewhere) is replaced.
        let (other, _) = apply(&SecretData::new(), &policy(t0));
        let mut foreign = data.clone();
        foreign.insert(CERT_KEY.to_owned(), other[CERT_KEY].clone());
        foreign.insert(KEY_KEY.to_owned(), other[KEY_KEY].clone());
        let (fixed, plan) = apply(&foreign, &policy(t0));
        assert!(new_cert_reason(&plan).unwrap().contains("does not verify"));
        assert!(bundle_trusts(
            &plan.bundle,
            &fixed[CERT_KEY],
            "svc.ns.svc",
            t0
        ));
    }

    #[test]
    fn a_new_name_gets_a_new_certificate() {
        let t0 = SystemTime::now();
        let (data, _) = apply(&SecretData::new(), &policy(t0));
        let mut wider = policy(t0);
        wider.dns_names.push("extra.example".to_owned());
        wider.ip_sans.push("10.1.2.3".parse().unwrap());
        let (renamed, plan) = apply(&data, &wider);
        assert!(new_cert_reason(&plan).unwrap().contains("does not cover"));
        assert!(bundle_trusts(
            &plan.bundle,
            &renamed[CERT_KEY],
            "extra.example",
            t0
        ));
        assert!(super::plan(&renamed, &wider).unwrap().data.is_none());
    }

    #[test]
    fn openkruise_secret_is_taken_over_and_other_keys_survive() {
        let t0 = SystemTime::now();
        let (ours, _) = apply(&SecretData::new(), &policy(t0));
        // Only OpenKruise's key names, plus a key someone else put there.
        let mut theirs: SecretData = OPENKRUISE_ALIASES
            .iter()
            .map(|(their_name, our_name)| ((*their_name).to_owned(), ours[*our_name].clone()))
            .collect();
        theirs.insert("note".to_owned(), b"keep me".to_vec());
        let (adopted, plan) = apply(&theirs, &policy(t0));
        assert_eq!(plan.actions, vec![Action::Rewritten]);
        assert_eq!(adopted[CA_CERT_KEY], ours[CA_CERT_KEY]);
        assert_eq!(adopted[CERT_KEY], ours[CERT_KEY]);
        assert_eq!(adopted["note"], b"keep me");
    }

    #[test]
    fn garbage_is_replaced_and_thresholds_are_checked() {
        let t0 = SystemTime::now();
        let garbage: SecretData = [CA_CERT_KEY, CA_KEY_KEY, CERT_KEY, KEY_KEY, PREVIOUS_CA_KEY]
            .into_iter()
            .map(|key| (key.to_owned(), b"garbage".to_vec()))
            .collect();
        let (data, plan) = apply(&garbage, &policy(t0));
        assert!(has_new_ca(&plan));
        assert!(!data.contains_key(PREVIOUS_CA_KEY));
        assert_eq!(certs_in(&plan.bundle).len(), 1);
        ReloadableCert::from_pem(&data[CERT_KEY], &data[KEY_KEY]).unwrap();

        let mut bad = policy(t0);
        bad.renew_before = bad.cert_validity;
        assert!(matches!(
            plan_result(&bad),
            Err(RotationError::Policy(message)) if message.contains("renew-before")
        ));
        let mut bad = policy(t0);
        bad.ca_validity = bad.cert_validity;
        assert!(matches!(plan_result(&bad), Err(RotationError::Policy(_))));
    }

    fn plan_result(policy: &Policy) -> Result<Plan, RotationError> {
        plan(&SecretData::new(), policy)
    }

    #[test]
    fn bundle_encoding_is_canonical_pem() {
        let (data, plan) = apply(&SecretData::new(), &policy(SystemTime::now()));
        let text = String::from_utf8(plan.bundle.clone()).unwrap();
        assert!(text.starts_with("-----BEGIN CERTIFICATE-----\n"));
        assert!(text.ends_with("-----END CERTIFICATE-----\n"));
        assert!(text.lines().all(|line| line.len() <= 64));
        assert_eq!(certs_in(&plan.bundle), certs_in(&data[CA_CERT_KEY]));
    }

    mod properties {
        use super::*;
        use crate::tls::trust::bundle_trusts;
        use proptest::prelude::*;

        fn leaf_chain(data: &SecretData) -> Vec<CertificateDer<'static>> {
            CertificateDer::pem_slice_iter(&data[CERT_KEY])
                .map(Result::unwrap)
                .collect()
        }

        fn valid_at(data: &SecretData, now: SystemTime) -> bool {
            let chain = leaf_chain(data);
            not_after(&chain[0]).is_some_and(|expiry| expiry > now)
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(24))]

            /// Whatever the sequence of runs (time passing, forced renewals and CA rotations), each
            /// run's bundle trusts the certificate it stores *and* the one servers presented until
            /// then (unless that one has expired), and running again at once changes nothing.
            #[test]
            fn every_run_trusts_old_and_new_certificates(
                steps in proptest::collection::vec((0u32..120, 0u32..48, any::<bool>(), 0u8..4), 1..8)
            ) {
                let mut now = SystemTime::now();
                let (mut data, _) = apply(&SecretData::new(), &policy(now));
                for (days, hours, force_renew, rotate) in steps {
                    now += days * DAY + hours * HOUR;
                    let mut run = policy(now);
                    run.force_renew = force_renew;
                    run.force_rotate_ca = rotate == 0;
                    let (next, plan) = apply(&data, &run);
                    prop_assert_eq!(bundle_trusts(&plan.bundle, &leaf_chain(&next), now), Ok(()));
                    if valid_at(&data, now) {
                        prop_assert_eq!(
                            bundle_trusts(&plan.bundle, &leaf_chain(&data), now),
                            Ok(()),
                            "actions {:?}",
                            plan.actions
                        );
                    }
                    prop_assert_eq!(&next[BUNDLE_KEY], &plan.bundle);
                    let again = super::plan(&next, &policy(now)).unwrap();
                    prop_assert!(again.data.is_none(), "not idempotent: {:?}", again.actions);
                    data = next;
                }
            }
        }
    }
}
