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
        let body = base64_simd::STANDARD.encode_to_string(cert.as_ref());
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
mod tests;
