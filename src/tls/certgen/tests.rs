use super::*;
use crate::tls::reloader::ReloadableCert;

const DAY: Duration = Duration::from_secs(24 * 60 * 60);

struct Snapshot {
    ca_cert: Vec<u8>,
    ca_key: Vec<u8>,
    cert: Vec<u8>,
    key: Vec<u8>,
}

fn snapshot(dir: &Path) -> Snapshot {
    let read = |name: &str| fs::read(dir.join(name)).unwrap();
    Snapshot {
        ca_cert: read(CA_CERT_FILE),
        ca_key: read(CA_KEY_FILE),
        cert: read(CERT_FILE),
        key: read(KEY_FILE),
    }
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|name| (*name).to_owned()).collect()
}

fn sans_of(cert_path: &Path) -> Vec<String> {
    let der = CertificateDer::from_pem_file(cert_path).unwrap();
    let (_, cert) = x509_parser::parse_x509_certificate(&der).unwrap();
    let san = cert.subject_alternative_name().unwrap().unwrap();
    san.value
        .general_names
        .iter()
        .map(|name| match name {
            GeneralName::DNSName(name) => (*name).to_owned(),
            GeneralName::IPAddress(bytes) => ip_from_bytes(bytes).unwrap().to_string(),
            other => format!("{other:?}"),
        })
        .collect()
}

/// The serving certificate must verify against the CA written next to it.
fn assert_chains_to_ca(files: &CertFiles, name: &str) {
    let mut roots = RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_file(&files.ca).unwrap())
        .unwrap();
    let verifier = WebPkiServerVerifier::builder_with_provider(
        Arc::new(roots),
        Arc::new(rustls::crypto::ring::default_provider()),
    )
    .build()
    .unwrap();
    let leaf = CertificateDer::from_pem_file(&files.cert).unwrap();
    verifier
        .verify_server_cert(
            &leaf,
            &[],
            &ServerName::try_from(name.to_owned()).unwrap(),
            &[],
            UnixTime::now(),
        )
        .unwrap();
}

#[test]
fn generates_ca_and_serving_cert_with_requested_sans() {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path().join("nested/certs");
    let ip: IpAddr = "10.0.0.7".parse().unwrap();
    let files = ensure_cert_dir(
        &dir,
        &names(&["webhook.kruise-system.svc", "Webhook.Example"]),
        &[ip],
        30 * DAY,
    )
    .unwrap();

    assert!(files.issued);
    assert_eq!(files.cert, dir.join(CERT_FILE));
    let sans = sans_of(&files.cert);
    for expected in [
        "localhost",
        "webhook.kruise-system.svc",
        "webhook.example",
        "127.0.0.1",
        "::1",
        "10.0.0.7",
    ] {
        assert!(
            sans.iter().any(|san| san == expected),
            "{expected} missing from {sans:?}"
        );
    }
    let left = files.not_after.duration_since(SystemTime::now()).unwrap();
    assert!(left > 29 * DAY && left <= 30 * DAY, "{left:?}");

    assert_chains_to_ca(&files, "webhook.kruise-system.svc");
    assert_chains_to_ca(&files, "127.0.0.1");
    // The written pair loads as the served certificate with the same expiry.
    let serving = ReloadableCert::from_files(&files.cert, &files.key).unwrap();
    assert_eq!(serving.not_after(), files.not_after);

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |path: &Path| fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&files.key), 0o600);
        assert_eq!(mode(&dir.join(CA_KEY_FILE)), 0o600);
        assert_eq!(mode(&files.cert), 0o644);
    }
    // No temporary files left behind.
    let leftovers: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .filter(|name| name.to_string_lossy().starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn reuses_good_files_byte_for_byte() {
    let temp = tempfile::tempdir().unwrap();
    let dns = names(&["svc.example"]);
    let first = ensure_cert_dir(temp.path(), &dns, &[], 30 * DAY).unwrap();
    let before = snapshot(temp.path());

    let second = ensure_cert_dir(temp.path(), &dns, &[], 30 * DAY).unwrap();
    assert!(!second.issued);
    assert_eq!(second.not_after, first.not_after);
    let after = snapshot(temp.path());
    assert_eq!(after.ca_cert, before.ca_cert);
    assert_eq!(after.ca_key, before.ca_key);
    assert_eq!(after.cert, before.cert);
    assert_eq!(after.key, before.key);

    // A subset of the names (and the implicit loopback ones) is still covered.
    let third = ensure_cert_dir(temp.path(), &names(&["localhost"]), &[], 30 * DAY).unwrap();
    assert!(!third.issued);
}

#[test]
fn renews_expired_or_nearly_expired_serving_cert_but_keeps_the_ca() {
    let temp = tempfile::tempdir().unwrap();
    let dns = names(&["svc.example"]);
    // Issued 40 days ago for 30 days: expired now.
    ensure_cert_dir_at(
        temp.path(),
        &dns,
        &[],
        30 * DAY,
        SystemTime::now() - 40 * DAY,
    )
    .unwrap();
    let before = snapshot(temp.path());

    let files = ensure_cert_dir(temp.path(), &dns, &[], 30 * DAY).unwrap();
    assert!(files.issued);
    let after = snapshot(temp.path());
    assert_eq!(after.ca_cert, before.ca_cert, "a still-valid CA is reused");
    assert_eq!(after.ca_key, before.ca_key);
    assert_ne!(after.cert, before.cert);
    assert_ne!(after.key, before.key);
    assert_chains_to_ca(&files, "svc.example");

    // Issued 25 days ago for 30 days: valid, but under a third of its life is left.
    let temp = tempfile::tempdir().unwrap();
    ensure_cert_dir_at(
        temp.path(),
        &dns,
        &[],
        30 * DAY,
        SystemTime::now() - 25 * DAY,
    )
    .unwrap();
    let files = ensure_cert_dir(temp.path(), &dns, &[], 30 * DAY).unwrap();
    assert!(files.issued);

    // Issued 5 days ago for 30 days: reused.
    let temp = tempfile::tempdir().unwrap();
    ensure_cert_dir_at(
        temp.path(),
        &dns,
        &[],
        30 * DAY,
        SystemTime::now() - 5 * DAY,
    )
    .unwrap();
    let files = ensure_cert_dir(temp.path(), &dns, &[], 30 * DAY).unwrap();
    assert!(!files.issued);
}

#[test]
fn reissues_when_the_key_does_not_match() {
    let temp = tempfile::tempdir().unwrap();
    ensure_cert_dir(temp.path(), &[], &[], 30 * DAY).unwrap();
    let before = snapshot(temp.path());
    let stray_key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256).unwrap();
    fs::write(temp.path().join(KEY_FILE), stray_key.serialize_pem()).unwrap();

    let files = ensure_cert_dir(temp.path(), &[], &[], 30 * DAY).unwrap();
    assert!(files.issued);
    let after = snapshot(temp.path());
    assert_eq!(after.ca_cert, before.ca_cert);
    assert_ne!(after.cert, before.cert);
    ReloadableCert::from_files(&files.cert, &files.key).unwrap();
}

#[test]
fn reissues_when_a_requested_san_is_missing() {
    let temp = tempfile::tempdir().unwrap();
    ensure_cert_dir(temp.path(), &names(&["a.example"]), &[], 30 * DAY).unwrap();
    let before = snapshot(temp.path());

    let extra_ip: IpAddr = "192.0.2.1".parse().unwrap();
    let files = ensure_cert_dir(
        temp.path(),
        &names(&["a.example", "b.example"]),
        &[],
        30 * DAY,
    )
    .unwrap();
    assert!(files.issued);
    assert!(sans_of(&files.cert).contains(&"b.example".to_owned()));
    let files =
        ensure_cert_dir(temp.path(), &names(&["a.example"]), &[extra_ip], 30 * DAY).unwrap();
    assert!(files.issued);
    assert!(sans_of(&files.cert).contains(&"192.0.2.1".to_owned()));
    assert_eq!(snapshot(temp.path()).ca_cert, before.ca_cert);
}

#[test]
fn regenerates_everything_when_the_ca_is_gone_or_broken() {
    let temp = tempfile::tempdir().unwrap();
    ensure_cert_dir(temp.path(), &[], &[], 30 * DAY).unwrap();
    let before = snapshot(temp.path());

    // A serving cert signed by a CA that is no longer there must not be reused.
    fs::remove_file(temp.path().join(CA_CERT_FILE)).unwrap();
    fs::remove_file(temp.path().join(CA_KEY_FILE)).unwrap();
    let files = ensure_cert_dir(temp.path(), &[], &[], 30 * DAY).unwrap();
    assert!(files.issued);
    let after = snapshot(temp.path());
    assert_ne!(after.ca_cert, before.ca_cert);
    assert_ne!(after.cert, before.cert);
    assert_chains_to_ca(&files, "localhost");

    // A CA key that does not belong to the CA certificate.
    let stray_key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256).unwrap();
    fs::write(temp.path().join(CA_KEY_FILE), stray_key.serialize_pem()).unwrap();
    let files = ensure_cert_dir(temp.path(), &[], &[], 30 * DAY).unwrap();
    assert!(files.issued);
    assert_ne!(snapshot(temp.path()).ca_cert, after.ca_cert);
    assert_chains_to_ca(&files, "localhost");

    // Garbage in the serving cert.
    fs::write(temp.path().join(CERT_FILE), b"garbage").unwrap();
    let files = ensure_cert_dir(temp.path(), &[], &[], 30 * DAY).unwrap();
    assert!(files.issued);
    assert_chains_to_ca(&files, "localhost");
}

#[test]
fn unusable_input_is_an_error_not_a_panic() {
    let temp = tempfile::tempdir().unwrap();
    let result = ensure_cert_dir(temp.path(), &[], &[], Duration::MAX);
    assert!(matches!(result, Err(CertError::Validity(_))), "{result:?}");

    let result = ensure_cert_dir(temp.path(), &names(&["bücher.example"]), &[], 30 * DAY);
    assert!(matches!(result, Err(CertError::Generate(_))), "{result:?}");

    let file = temp.path().join("not-a-dir");
    fs::write(&file, b"").unwrap();
    let result = ensure_cert_dir(&file, &[], &[], 30 * DAY);
    assert!(matches!(result, Err(CertError::Io { .. })), "{result:?}");
}

#[test]
fn renewal_margin_is_a_third_of_the_lifetime_capped_at_30_days() {
    let start = UNIX_EPOCH + 1000 * DAY;
    // 3-day certificate: renew in its last day.
    assert!(!renewal_due(
        start,
        start + 3 * DAY,
        start + 2 * DAY - Duration::from_secs(1)
    ));
    assert!(renewal_due(
        start,
        start + 3 * DAY,
        start + 2 * DAY + Duration::from_secs(1)
    ));
    // 1-year certificate: renew in its last 30 days.
    assert!(!renewal_due(start, start + 365 * DAY, start + 334 * DAY));
    assert!(renewal_due(start, start + 365 * DAY, start + 336 * DAY));
    // Expired.
    assert!(renewal_due(start, start + DAY, start + 2 * DAY));
}
