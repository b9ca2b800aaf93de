use super::*;
use rcgen::{CertificateParams, KeyPair};
use std::sync::Mutex;

struct TestPair {
    cert_pem: String,
    key_pem: String,
}

fn self_signed(name: &str, valid_for_days: i64) -> TestPair {
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(vec![name.to_owned()]).unwrap();
    let now = x509_parser::time::ASN1Time::now().timestamp();
    params.not_before = x509_parser::time::ASN1Time::from_timestamp(now - 7200)
        .unwrap()
        .to_datetime();
    params.not_after = x509_parser::time::ASN1Time::from_timestamp(now + valid_for_days * 86_400)
        .unwrap()
        .to_datetime();
    let cert = params.self_signed(&key).unwrap();
    TestPair {
        cert_pem: cert.pem(),
        key_pem: key.serialize_pem(),
    }
}

fn leaf_der(serving: &ReloadableCert) -> Vec<u8> {
    serving.current().cert[0].to_vec()
}

#[test]
fn loads_a_pair_and_reports_expiry() {
    let pair = self_signed("a.example", 10);
    let serving =
        ReloadableCert::from_pem(pair.cert_pem.as_bytes(), pair.key_pem.as_bytes()).unwrap();
    let left = serving
        .not_after()
        .duration_since(SystemTime::now())
        .unwrap();
    assert!(left > Duration::from_secs(9 * 86_400) && left <= Duration::from_secs(10 * 86_400));
    assert!(serving.is_serving(pair.cert_pem.as_bytes(), pair.key_pem.as_bytes()));
}

#[test]
fn refuses_bad_pairs_and_keeps_serving_the_old_one() {
    let old = self_signed("old.example", 10);
    let new = self_signed("new.example", 10);
    let expired = self_signed("expired.example", -1);
    let serving =
        ReloadableCert::from_pem(old.cert_pem.as_bytes(), old.key_pem.as_bytes()).unwrap();
    let served_before = leaf_der(&serving);

    let mismatched = serving.reload_from_pem(new.cert_pem.as_bytes(), old.key_pem.as_bytes());
    assert!(
        matches!(mismatched, Err(LoadError::KeyMismatch(_))),
        "{mismatched:?}"
    );

    let garbage = serving.reload_from_pem(b"not a pem", old.key_pem.as_bytes());
    assert!(
        matches!(garbage, Err(LoadError::NoCertificate)),
        "{garbage:?}"
    );

    let no_key = serving.reload_from_pem(new.cert_pem.as_bytes(), b"");
    assert!(matches!(no_key, Err(LoadError::KeyPem(_))), "{no_key:?}");

    let truncated = &new.cert_pem[..new.cert_pem.len() / 2];
    let broken = serving.reload_from_pem(truncated.as_bytes(), new.key_pem.as_bytes());
    assert!(broken.is_err(), "{broken:?}");

    let stale = serving.reload_from_pem(expired.cert_pem.as_bytes(), expired.key_pem.as_bytes());
    assert!(matches!(stale, Err(LoadError::Expired { .. })), "{stale:?}");

    assert_eq!(leaf_der(&serving), served_before);
    assert!(serving.is_serving(old.cert_pem.as_bytes(), old.key_pem.as_bytes()));

    serving
        .reload_from_pem(new.cert_pem.as_bytes(), new.key_pem.as_bytes())
        .unwrap();
    assert_ne!(leaf_der(&serving), served_before);
    assert!(serving.is_serving(new.cert_pem.as_bytes(), new.key_pem.as_bytes()));
}

#[test]
fn reload_from_missing_files_keeps_the_old_pair() {
    let pair = self_signed("a.example", 10);
    let serving =
        ReloadableCert::from_pem(pair.cert_pem.as_bytes(), pair.key_pem.as_bytes()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let result =
        serving.reload_from_files(&dir.path().join("tls.crt"), &dir.path().join("tls.key"));
    assert!(matches!(result, Err(LoadError::Read { .. })), "{result:?}");
    assert!(serving.is_serving(pair.cert_pem.as_bytes(), pair.key_pem.as_bytes()));
}

#[test]
fn server_config_offers_h2_and_http11() {
    let pair = self_signed("a.example", 10);
    let serving =
        ReloadableCert::from_pem(pair.cert_pem.as_bytes(), pair.key_pem.as_bytes()).unwrap();
    let config = server_config(Arc::new(serving));
    assert_eq!(
        config.alpn_protocols,
        vec![b"h2".to_vec(), b"http/1.1".to_vec()]
    );
}

/// Lays files out the way the kubelet does for a Secret volume: `tls.crt -> ..data/tls.crt`,
/// `..data -> ..<version>`, and an update swaps the `..data` symlink.
fn publish_secret_version(dir: &Path, version: &str, pair: (&[u8], &[u8])) {
    let version_dir = dir.join(version);
    std::fs::create_dir(&version_dir).unwrap();
    std::fs::write(version_dir.join("tls.crt"), pair.0).unwrap();
    std::fs::write(version_dir.join("tls.key"), pair.1).unwrap();
    let staging = dir.join("..data_tmp");
    std::os::unix::fs::symlink(version, &staging).unwrap();
    std::fs::rename(&staging, dir.join("..data")).unwrap();
    for name in ["tls.crt", "tls.key"] {
        let link = dir.join(name);
        if std::fs::symlink_metadata(&link).is_err() {
            std::os::unix::fs::symlink(Path::new("..data").join(name), &link).unwrap();
        }
    }
}

async fn wait_for<T>(outcomes: &Mutex<Vec<T>>, count: usize) {
    for _ in 0..200 {
        if outcomes.lock().unwrap().len() >= count {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("timed out waiting for {count} reload outcomes");
}

#[tokio::test]
async fn zero_interval_disables_polling() {
    let pair = self_signed("a.example", 10);
    let serving = Arc::new(
        ReloadableCert::from_pem(pair.cert_pem.as_bytes(), pair.key_pem.as_bytes()).unwrap(),
    );
    let shutdown = CancellationToken::new();
    let task = spawn_reloader(
        serving,
        PathBuf::from("/nonexistent/tls.crt"),
        PathBuf::from("/nonexistent/tls.key"),
        Duration::ZERO,
        shutdown.clone(),
        |outcome| panic!("unexpected reload outcome {outcome:?}"),
    );
    tokio::time::sleep(Duration::from_millis(30)).await;
    shutdown.cancel();
    task.await.unwrap();
}

#[tokio::test]
async fn reloader_follows_secret_symlink_swaps_and_reports_refusals_once() {
    let dir = tempfile::tempdir().unwrap();
    let first = self_signed("first.example", 10);
    let second = self_signed("second.example", 10);
    publish_secret_version(
        dir.path(),
        "..v1",
        (first.cert_pem.as_bytes(), first.key_pem.as_bytes()),
    );
    let cert_path = dir.path().join("tls.crt");
    let key_path = dir.path().join("tls.key");
    let serving = Arc::new(ReloadableCert::from_files(&cert_path, &key_path).unwrap());

    let outcomes = Arc::new(Mutex::new(Vec::<Result<SystemTime, String>>::new()));
    let shutdown = CancellationToken::new();
    let recorded = outcomes.clone();
    let task = spawn_reloader(
        serving.clone(),
        cert_path,
        key_path,
        Duration::from_millis(10),
        shutdown.clone(),
        move |outcome| {
            recorded
                .lock()
                .unwrap()
                .push(outcome.map_err(|error| error.to_string()));
        },
    );

    // Unchanged files: nothing to report.
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(outcomes.lock().unwrap().is_empty());

    publish_secret_version(
        dir.path(),
        "..v2",
        (second.cert_pem.as_bytes(), second.key_pem.as_bytes()),
    );
    wait_for(&outcomes, 1).await;
    assert!(outcomes.lock().unwrap()[0].is_ok());
    assert!(serving.is_serving(second.cert_pem.as_bytes(), second.key_pem.as_bytes()));

    // A mismatched pair is refused, reported once, and the second pair stays in service.
    publish_secret_version(
        dir.path(),
        "..v3",
        (first.cert_pem.as_bytes(), second.key_pem.as_bytes()),
    );
    wait_for(&outcomes, 2).await;
    tokio::time::sleep(Duration::from_millis(60)).await;
    {
        let outcomes = outcomes.lock().unwrap();
        assert_eq!(outcomes.len(), 2, "{outcomes:?}");
        let error = outcomes[1].as_ref().unwrap_err();
        assert!(error.contains("does not belong"), "{error}");
    }
    assert!(serving.is_serving(second.cert_pem.as_bytes(), second.key_pem.as_bytes()));

    shutdown.cancel();
    task.await.unwrap();
}
