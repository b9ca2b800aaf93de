//! Rotation under load: the real `kruise-webhook serve --external-certs` keeps answering while its
//! mounted certificate is replaced ten times (one of them a CA rotation), the way the kubelet
//! updates a Secret volume. Keep-alive and fresh-connection clients trust the published bundle
//! (old and new CA, as the apiserver does during the overlap); not one request may fail, and a
//! fresh handshake must see each new certificate within a few reload intervals; a broken update
//! at the end is refused while the last good certificate keeps serving.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use kruise_webhook::tls::secret_plan::{
    self, BUNDLE_KEY, CA_CERT_KEY, CERT_KEY, KEY_KEY, Policy, SecretData,
};
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/pod-web-log-agent.json"
);
const EXAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/examples");
const RELOAD_INTERVAL: Duration = Duration::from_millis(200);
/// A fresh handshake must present the new certificate within this many reload intervals (one poll
/// normally suffices; a poll that catches the swap half-done waits for the next; the rest is slack
/// for a busy 2-core CI machine).
const MAX_INTERVALS_TO_SEE_NEW_CERT: u32 = 8;
const ROTATIONS: usize = 10;
/// The rotation (1-based) that also replaces the CA.
const CA_ROTATION: usize = 5;
const KEEP_ALIVE_CLIENTS: usize = 3;
const FRESH_CLIENTS: usize = 2;

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
}

/// The Secret's contents for every step, computed up front with the `certs` job's planner.
fn secret_versions() -> Vec<SecretData> {
    let mut policy = Policy {
        now: SystemTime::now(),
        cert_validity: Duration::from_secs(30 * 86_400),
        renew_before: Duration::from_secs(86_400),
        ca_validity: Duration::from_secs(365 * 86_400),
        ca_renew_before: Duration::from_secs(60 * 86_400),
        ca_overlap: Duration::from_secs(3600),
        dns_names: vec!["localhost".to_owned()],
        ip_sans: Vec::new(),
        force_renew: false,
        force_rotate_ca: false,
    };
    let mut versions = vec![plan_data(&SecretData::new(), &policy)];
    for step in 1..=ROTATIONS {
        policy.force_renew = step != CA_ROTATION;
        policy.force_rotate_ca = step == CA_ROTATION;
        let next = plan_data(versions.last().expect("a version"), &policy);
        versions.push(next);
    }
    versions
}

fn plan_data(current: &SecretData, policy: &Policy) -> SecretData {
    secret_plan::plan(current, policy)
        .expect("plan")
        .data
        .expect("a change")
}

/// Writes one version the way the kubelet updates a Secret volume: a new hidden directory, an
/// atomic swap of the `..data` symlink, stable `tls.crt -> ..data/tls.crt` links, old dir removed.
fn publish(dir: &Path, version: usize, data: &SecretData) {
    let name = format!("..v{version}");
    let version_dir = dir.join(&name);
    std::fs::create_dir(&version_dir).expect("version dir");
    for key in [CERT_KEY, KEY_KEY, CA_CERT_KEY, BUNDLE_KEY] {
        std::fs::write(version_dir.join(key), &data[key]).expect("write");
    }
    let staging = dir.join("..data_tmp");
    std::os::unix::fs::symlink(&name, &staging).expect("symlink");
    std::fs::rename(&staging, dir.join("..data")).expect("swap ..data");
    for key in [CERT_KEY, KEY_KEY, CA_CERT_KEY, BUNDLE_KEY] {
        let link = dir.join(key);
        if std::fs::symlink_metadata(&link).is_err() {
            std::os::unix::fs::symlink(Path::new("..data").join(key), &link).expect("link");
        }
    }
    if version > 0 {
        std::fs::remove_dir_all(dir.join(format!("..v{}", version - 1))).expect("remove old");
    }
}

fn leaf_der(data: &SecretData) -> Vec<u8> {
    CertificateDer::from_pem_slice(&data[CERT_KEY])
        .expect("leaf")
        .to_vec()
}

fn client(roots: &[CertificateDer<'static>], https: SocketAddr, fresh: bool) -> reqwest::Client {
    let mut store = rustls::RootCertStore::empty();
    for root in roots {
        store.add(root.clone()).expect("root");
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("protocol versions")
        .with_root_certificates(store)
        .with_no_client_auth();
    // A resumed session skips the certificate; the apiserver (Go's default client) never resumes.
    tls.resumption = rustls::client::Resumption::disabled();
    let mut builder = reqwest::Client::builder()
        .use_preconfigured_tls(tls)
        .resolve("localhost", https)
        .http1_only()
        .tls_info(true)
        .timeout(Duration::from_secs(10));
    if fresh {
        // No pooling: every request opens a connection and does a full handshake.
        builder = builder.pool_max_idle_per_host(0);
    }
    builder.build().expect("client")
}

/// Posts the fixture; returns the leaf certificate the server presented, or why it failed.
async fn post(client: &reqwest::Client, url: &str, body: &[u8]) -> Result<Vec<u8>, String> {
    let response = client
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_vec())
        .send()
        .await
        .map_err(|e| format!("request: {e:?}"))?;
    let status = response.status();
    let peer = response
        .extensions()
        .get::<reqwest::tls::TlsInfo>()
        .and_then(|info| info.peer_certificate())
        .map(<[u8]>::to_vec)
        .ok_or("no peer certificate")?;
    let answer: serde_json::Value = response.json().await.map_err(|e| format!("body: {e}"))?;
    if status != 200
        || answer["response"]["allowed"] != true
        || !answer["response"]["patch"].is_string()
    {
        return Err(format!("status {status}: {answer}"));
    }
    Ok(peer)
}

fn http_get(addr: SocketAddr, path: &str) -> Option<String> {
    use std::io::{Read, Write};
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(1)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    response.starts_with("HTTP/1.1 200").then_some(response)
}

#[derive(Default)]
struct Tally {
    ok: AtomicU64,
    failed: AtomicU64,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rotation_under_load_loses_no_request() {
    let started = Instant::now();
    let versions = secret_versions();
    let roots: Vec<CertificateDer<'static>> = {
        let mut cas: Vec<Vec<u8>> = versions.iter().map(|v| v[CA_CERT_KEY].clone()).collect();
        cas.dedup();
        assert_eq!(cas.len(), 2, "one CA rotation");
        cas.iter()
            .map(|pem| CertificateDer::from_pem_slice(pem).expect("CA"))
            .collect()
    };

    let certs = tempfile::tempdir().expect("tempdir");
    publish(certs.path(), 0, &versions[0]);
    let sidecarsets = tempfile::tempdir().expect("tempdir");
    for entry in std::fs::read_dir(EXAMPLES).expect("examples") {
        let path = entry.expect("entry").path();
        if !path.is_file() {
            continue; // deploy/examples/workloads holds no SidecarSets
        }
        std::fs::copy(
            &path,
            sidecarsets.path().join(path.file_name().expect("name")),
        )
        .expect("copy");
    }
    let (https, admin) = (free_port(), free_port());
    let _server = Server(
        Command::new(env!("CARGO_BIN_EXE_kruise-webhook"))
            .args(["serve", "--external-certs", "--listen", &https.to_string()])
            .args([
                "--admin-listen",
                &admin.to_string(),
                "--reload-interval",
                "200ms",
            ])
            .arg("--cert-dir")
            .arg(certs.path())
            .arg("--sidecarsets")
            .arg(sidecarsets.path())
            // No cluster: the caBundle check stays off.
            .env("KUBECONFIG", "/nonexistent/kubeconfig")
            .env_remove("KUBERNETES_SERVICE_HOST")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start kruise-webhook"),
    );
    let ready_by = Instant::now() + Duration::from_secs(30);
    while http_get(admin, "/readyz").is_none() {
        assert!(Instant::now() < ready_by, "server did not become ready");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let url = format!("https://localhost:{}/mutate-pod?timeout=10s", https.port());
    let body = Arc::new(std::fs::read(FIXTURE).expect("fixture"));
    let stop = Arc::new(AtomicBool::new(false));
    let keep_alive = Arc::new(Tally::default());
    let fresh = Arc::new(Tally::default());
    let mut tasks = Vec::new();
    for index in 0..KEEP_ALIVE_CLIENTS + FRESH_CLIENTS {
        let is_fresh = index >= KEEP_ALIVE_CLIENTS;
        let client = client(&roots, https, is_fresh);
        let tally = if is_fresh {
            fresh.clone()
        } else {
            keep_alive.clone()
        };
        let (url, body, stop) = (url.clone(), body.clone(), stop.clone());
        tasks.push(tokio::spawn(async move {
            let mut leaves = Vec::<Vec<u8>>::new();
            let mut errors = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                match post(&client, &url, &body).await {
                    Ok(leaf) => {
                        tally.ok.fetch_add(1, Ordering::Relaxed);
                        if !leaves.contains(&leaf) {
                            leaves.push(leaf);
                        }
                    }
                    Err(error) => {
                        tally.failed.fetch_add(1, Ordering::Relaxed);
                        errors.push(error);
                    }
                }
            }
            (is_fresh, leaves, errors)
        }));
    }

    // Rotate while the load runs; after each swap, probe with fresh handshakes.
    let probe = client(&roots, https, true);
    let mut slowest = Duration::ZERO;
    for (step, version) in versions.iter().enumerate().skip(1) {
        tokio::time::sleep(RELOAD_INTERVAL * 2).await;
        let published = Instant::now();
        publish(certs.path(), step, version);
        let expected = leaf_der(version);
        loop {
            let seen = post(&probe, &url, &body).await.expect("probe request");
            if seen == expected {
                break;
            }
            assert!(
                published.elapsed() < RELOAD_INTERVAL * MAX_INTERVALS_TO_SEE_NEW_CERT,
                "rotation {step}: new certificate not served after {:?}",
                published.elapsed()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        slowest = slowest.max(published.elapsed());
    }
    // A broken update (key of another version) is refused; the last good pair stays in service.
    let mut broken = versions[ROTATIONS].clone();
    broken.insert(KEY_KEY.to_owned(), versions[1][KEY_KEY].clone());
    publish(certs.path(), ROTATIONS + 1, &broken);
    tokio::time::sleep(RELOAD_INTERVAL * 4).await;
    let served = post(&probe, &url, &body)
        .await
        .expect("probe after a broken update");
    assert_eq!(
        served,
        leaf_der(&versions[ROTATIONS]),
        "broken pair was served"
    );
    stop.store(true, Ordering::Relaxed);

    let first_leaf = leaf_der(&versions[0]);
    let last_leaf = leaf_der(versions.last().expect("last"));
    for task in tasks {
        let (is_fresh, leaves, errors) = task.await.expect("load task");
        assert!(errors.is_empty(), "failed requests: {errors:?}");
        if is_fresh {
            // Fresh handshakes went along with the rotations.
            assert!(
                leaves.len() > 1,
                "a fresh client saw only {} certificate",
                leaves.len()
            );
            assert!(leaves.contains(&last_leaf));
        } else {
            // An open keep-alive connection keeps the certificate it started with.
            assert_eq!(
                leaves,
                vec![first_leaf.clone()],
                "keep-alive connection was disturbed"
            );
        }
    }
    let (kept, kept_failed) = (
        keep_alive.ok.load(Ordering::Relaxed),
        keep_alive.failed.load(Ordering::Relaxed),
    );
    let (new, new_failed) = (
        fresh.ok.load(Ordering::Relaxed),
        fresh.failed.load(Ordering::Relaxed),
    );
    assert_eq!(kept_failed + new_failed, 0);
    assert!(
        kept > 0 && new > 0,
        "no load: {kept} keep-alive, {new} fresh"
    );

    let metrics = http_get(admin, "/metrics").expect("metrics");
    assert!(
        metrics.contains(&format!("tls_certificate_reloads_total {ROTATIONS}\n")),
        "{metrics}"
    );
    assert!(
        metrics.contains("tls_certificate_reload_failures_total 1\n"),
        "{metrics}"
    );
    eprintln!(
        "rotation under load: {ROTATIONS} rotations (CA at #{CA_ROTATION}); {kept} keep-alive and \
         {new} fresh-connection requests, 0 failed; new certificate seen after at most {slowest:?}; \
         {:?} in all",
        started.elapsed()
    );
}
