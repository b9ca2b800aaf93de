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
mod tests {
    use super::*;
    use crate::tls::secret_plan::{self, CA_CERT_KEY, CERT_KEY, Policy, SecretData};
    use std::time::Duration;

    fn issued() -> SecretData {
        let policy = Policy {
            now: SystemTime::now(),
            cert_validity: Duration::from_secs(30 * 86_400),
            renew_before: Duration::from_secs(86_400),
            ca_validity: Duration::from_secs(365 * 86_400),
            ca_renew_before: Duration::from_secs(60 * 86_400),
            ca_overlap: Duration::from_secs(3600),
            dns_names: vec!["webhook.example".to_owned()],
            ip_sans: Vec::new(),
            force_renew: false,
            force_rotate_ca: false,
        };
        secret_plan::plan(&SecretData::new(), &policy)
            .unwrap()
            .data
            .unwrap()
    }

    fn chain(data: &SecretData) -> Vec<CertificateDer<'static>> {
        CertificateDer::pem_slice_iter(&data[CERT_KEY])
            .map(Result::unwrap)
            .collect()
    }

    #[test]
    fn matching_other_and_broken_bundles() {
        let ours = issued();
        let theirs = issued();
        let now = SystemTime::now();
        assert_eq!(
            bundle_trusts(&ours[CA_CERT_KEY], &chain(&ours), now),
            Ok(())
        );
        let error = bundle_trusts(&theirs[CA_CERT_KEY], &chain(&ours), now).unwrap_err();
        assert!(error.contains("does not trust"), "{error}");
        // Both CAs, in either order (an overlap bundle).
        let mut both = theirs[CA_CERT_KEY].clone();
        both.extend_from_slice(&ours[CA_CERT_KEY]);
        assert_eq!(bundle_trusts(&both, &chain(&ours), now), Ok(()));
        assert!(bundle_trusts(b"", &chain(&ours), now).is_err());
        assert!(bundle_trusts(&ours[CA_CERT_KEY], &[], now).is_err());
        // After the certificate expired, not even its own CA trusts it.
        let later = now + Duration::from_secs(40 * 86_400);
        assert!(bundle_trusts(&ours[CA_CERT_KEY], &chain(&ours), later).is_err());
    }
}
