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
