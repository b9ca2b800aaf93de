//! Does a PEM `caBundle` trust a served certificate chain? What the apiserver checks when it
//! calls a webhook, minus the host name (a cert-manager certificate need not name `localhost`).

use std::time::{SystemTime, UNIX_EPOCH};

use rustls::RootCertStore;
use rustls::client::verify_server_cert_signed_by_trust_anchor;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, UnixTime};
use rustls::server::ParsedCertificate;

/// `Ok` when some certificate of `bundle_pem` anchors `chain` (leaf first) at `now`; otherwise why not.
pub fn bundle_trusts(
    bundle_pem: &[u8],
    chain: &[CertificateDer<'_>],
    now: SystemTime,
) -> Result<(), String> {
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(bundle_pem) {
        let cert = cert.map_err(|error| format!("caBundle is not PEM: {error}"))?;
        roots
            .add(cert)
            .map_err(|error| format!("caBundle holds an unusable certificate: {error}"))?;
    }
    if roots.is_empty() {
        return Err("caBundle is empty".to_owned());
    }
    let Some((leaf, intermediates)) = chain.split_first() else {
        return Err("no certificate is served".to_owned());
    };
    let leaf = ParsedCertificate::try_from(leaf).map_err(|error| error.to_string())?;
    let since_epoch = now.duration_since(UNIX_EPOCH).unwrap_or_default();
    verify_server_cert_signed_by_trust_anchor(
        &leaf,
        &roots,
        intermediates,
        UnixTime::since_unix_epoch(since_epoch),
        rustls::crypto::ring::default_provider()
            .signature_verification_algorithms
            .all,
    )
    .map_err(|error| format!("caBundle does not trust the served certificate: {error}"))
}

#[cfg(test)]
mod tests;
