use super::*;
use crate::tls::reloader::ReloadableCert;
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
