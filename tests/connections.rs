//! The webhook port's connections as the kube-apiserver and a hostile pod see them, against the
//! real binary: keep-alive reuse by a client that behaves like Go's net/http, and a flood of
//! connections that never send the HTTP/2 preface.
//!
//! The apiserver (Go, HTTP/1.1 for webhooks) keeps a pooled connection up to 90 s idle and does not
//! retry a POST that finds its connection closed by the server; a background reader removes a
//! connection from the pool once it has seen the server's close. So a request is lost exactly when
//! the server closes an idle connection while the client is sending on it.

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/pod-web-log-agent.json"
);

fn free_port() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
}

/// A running `kruise-webhook serve` with the embedded SidecarSets, killed on drop.
struct Server {
    child: Child,
    https: SocketAddr,
    admin: SocketAddr,
    cert_dir: tempfile::TempDir,
}

impl Server {
    /// Starts the server; with `soft_open_files`, under that soft limit on open files (as a
    /// container runtime would start it).
    async fn start(soft_open_files: Option<u64>) -> Server {
        let cert_dir = tempfile::tempdir().expect("tempdir");
        let (https, admin) = (free_port(), free_port());
        let mut command = match soft_open_files {
            Some(limit) => {
                let mut shell = Command::new("sh");
                shell.args(["-c", &format!("ulimit -Sn {limit} && exec \"$@\""), "sh"]);
                shell.arg(env!("CARGO_BIN_EXE_kruise-webhook"));
                shell
            }
            None => Command::new(env!("CARGO_BIN_EXE_kruise-webhook")),
        };
        let child = command
            .args(["serve", "--listen", &https.to_string()])
            .args([
                "--admin-listen",
                &admin.to_string(),
                "--shutdown-delay",
                "0",
            ])
            .arg("--cert-dir")
            .arg(cert_dir.path())
            .env("KRUISE_WEBHOOK_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start kruise-webhook");
        let server = Server {
            child,
            https,
            admin,
            cert_dir,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while admin_get(server.admin, "/readyz").await != Ok(200) {
            assert!(Instant::now() < deadline, "server did not become ready");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        server
    }

    fn ca(&self) -> PathBuf {
        self.cert_dir.path().join("ca.crt")
    }

    /// The running server's soft and hard limits on open files, from /proc.
    fn open_files_limits(&self) -> (String, String) {
        let limits = std::fs::read_to_string(format!("/proc/{}/limits", self.child.id()))
            .expect("/proc/<pid>/limits");
        let line = limits
            .lines()
            .find(|l| l.starts_with("Max open files"))
            .expect("Max open files");
        let mut values = line.split_whitespace().skip(3);
        (values.next().unwrap().into(), values.next().unwrap().into())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// GET on the admin port with a fresh client: the status, or why there was none within 2 s.
async fn admin_get(admin: SocketAddr, path: &str) -> Result<u16, String> {
    reqwest::Client::new()
        .get(format!("http://{admin}{path}"))
        .timeout(Duration::from_secs(2))
        .send()
        .await
        .map(|r| r.status().as_u16())
        .map_err(|e| format!("{e:?}"))
}

fn tls_connector(ca: &Path, alpn: &[u8]) -> TlsConnector {
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_file(ca).expect("ca.crt"))
        .unwrap();
    let mut config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    config.alpn_protocols = vec![alpn.to_vec()];
    TlsConnector::from(Arc::new(config))
}

async fn tls_connect(
    connector: &TlsConnector,
    addr: SocketAddr,
) -> std::io::Result<TlsStream<TcpStream>> {
    let tcp = TcpStream::connect(addr).await?;
    connector
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
}

/// One pooled HTTP/1.1 keep-alive connection, used as Go's transport uses it.
struct PooledConnection {
    stream: TlsStream<TcpStream>,
}

impl PooledConnection {
    async fn open(connector: &TlsConnector, addr: SocketAddr) -> std::io::Result<Self> {
        Ok(PooledConnection {
            stream: tls_connect(connector, addr).await?,
        })
    }

    /// Whether the server's close has already arrived: Go's reader goroutine would have taken the
    /// connection out of the pool, and the request would go on a new one.
    async fn closed_by_server(&mut self) -> bool {
        let mut byte = [0_u8; 1];
        match tokio::time::timeout(Duration::ZERO, self.stream.read(&mut byte)).await {
            Err(_still_open) => false,
            Ok(Ok(0)) | Ok(Err(_)) => true,
            Ok(Ok(_)) => panic!("the server sent bytes on an idle connection"),
        }
    }

    /// Posts an AdmissionReview as the apiserver does; the answer's body, or why there is none.
    async fn post(&mut self, path: &str, body: &[u8]) -> Result<Vec<u8>, String> {
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: localhost\r\nUser-Agent: kube-apiserver-admission\r\n\
             Content-Type: application/json\r\nAccept: application/json, */*\r\n\
             Content-Length: {}\r\n\r\n",
            body.len()
        );
        let mut request = head.into_bytes();
        request.extend_from_slice(body);
        self.stream
            .write_all(&request)
            .await
            .map_err(|e| format!("writing: {e}"))?;
        let read = tokio::time::timeout(Duration::from_secs(10), self.read_answer()).await;
        read.map_err(|_| "no answer within 10 s".to_string())?
    }

    async fn read_answer(&mut self) -> Result<Vec<u8>, String> {
        let mut received = Vec::new();
        let mut chunk = [0_u8; 16 * 1024];
        let head_end = loop {
            if let Some(end) = received.windows(4).position(|w| w == b"\r\n\r\n") {
                break end + 4;
            }
            match self.stream.read(&mut chunk).await {
                Ok(0) => return Err(format!("closed after {} bytes", received.len())),
                Ok(n) => received.extend_from_slice(&chunk[..n]),
                Err(e) => return Err(format!("reading: {e}")),
            }
        };
        let head = String::from_utf8_lossy(&received[..head_end]).to_ascii_lowercase();
        if !head.starts_with("http/1.1 200 ") {
            return Err(format!("answer: {head}"));
        }
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .ok_or_else(|| format!("no content-length: {head}"))?;
        while received.len() < head_end + length {
            match self.stream.read(&mut chunk).await {
                Ok(0) => return Err("closed in the body".into()),
                Ok(n) => received.extend_from_slice(&chunk[..n]),
                Err(e) => return Err(format!("reading the body: {e}")),
            }
        }
        Ok(received[head_end..].to_vec())
    }
}

fn review_body() -> Vec<u8> {
    std::fs::read(FIXTURE).expect("fixture")
}

fn assert_allowed(answer: &[u8]) {
    let review: serde_json::Value = serde_json::from_slice(answer).expect("AdmissionReview");
    assert_eq!(review["response"]["allowed"], true, "{review}");
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Reuse {
    /// Sent on the pooled connection and answered.
    Served,
    /// The server had closed the connection before the client reused it: a new one would be
    /// dialled, nothing is lost.
    ClosedWhileIdle,
    /// Sent and not answered: with the apiserver, a failed webhook call.
    Failed(String),
}

/// One keep-alive connection: a request, `gap` of silence, then the next request exactly at the
/// gap.
async fn reuse_after(connector: &TlsConnector, addr: SocketAddr, gap: Duration) -> Reuse {
    let body = review_body();
    let mut connection = PooledConnection::open(connector, addr)
        .await
        .expect("connect");
    let first = connection
        .post("/mutate-pod?timeout=10s", &body)
        .await
        .expect("first request");
    assert_allowed(&first);
    tokio::time::sleep(gap).await;
    if connection.closed_by_server().await {
        return Reuse::ClosedWhileIdle;
    }
    match connection.post("/mutate-pod?timeout=10s", &body).await {
        Ok(answer) => {
            assert_allowed(&answer);
            Reuse::Served
        }
        Err(error) => Reuse::Failed(error),
    }
}

/// The server used to close a keep-alive connection idle for 5.000 s; a client sending its next
/// request at that moment lost it. 200 connections, each reused once after a gap swept from
/// 4.950 s to 5.050 s in 0.5 ms steps, all at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_gaps_across_the_old_five_second_close_lose_no_request() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let server = Server::start(None).await;
    let connector = tls_connector(&server.ca(), b"http/1.1");
    let gaps: Vec<Duration> = (0..200)
        .map(|step| Duration::from_micros(4_950_000 + step * 500))
        .collect();
    let tasks: Vec<_> = gaps
        .iter()
        .map(|&gap| {
            let connector = connector.clone();
            let addr = server.https;
            tokio::spawn(async move { reuse_after(&connector, addr, gap).await })
        })
        .collect();
    let mut outcomes = Vec::new();
    for (gap, task) in gaps.iter().zip(tasks) {
        outcomes.push((*gap, task.await.expect("client task")));
    }
    let served = outcomes.iter().filter(|(_, o)| *o == Reuse::Served).count();
    let closed = outcomes
        .iter()
        .filter(|(_, o)| *o == Reuse::ClosedWhileIdle)
        .count();
    let failed: Vec<_> = outcomes
        .iter()
        .filter(|(_, o)| matches!(o, Reuse::Failed(_)))
        .collect();
    eprintln!(
        "idle sweep 4.950-5.050 s: {} requests, {served} served on the pooled connection, \
         {closed} found it closed (new connection), {} failed",
        outcomes.len(),
        failed.len()
    );
    assert!(failed.is_empty(), "lost requests: {failed:?}");
    assert_eq!(served, gaps.len(), "idle connections were closed");
}

/// The kube-apiserver closes a pooled connection after 90 s idle; the server keeps it longer, so
/// the client always closes first.
#[tokio::test]
async fn a_connection_idle_for_95_seconds_is_still_served() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let server = Server::start(None).await;
    let connector = tls_connector(&server.ca(), b"http/1.1");
    let outcome = reuse_after(&connector, server.https, Duration::from_secs(95)).await;
    assert_eq!(outcome, Reuse::Served);
}

/// Connections from a pod that can reach the port: TLS with ALPN h2, then never the HTTP/2
/// preface. More of them than the default soft limit of 1024 open files the server is started
/// with: probes and /mutate-pod keep answering, and the server closes every one of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_connections_without_the_http2_preface_is_survived_and_closed() {
    const FLOOD: usize = 1100;
    let _ = rustls::crypto::ring::default_provider().install_default();
    // This process holds the flood's client ends.
    kruise_webhook::open_files::raise_soft_limit().expect("raise the test's own limit");
    let server = Server::start(Some(1024)).await;
    let (soft, hard) = server.open_files_limits();
    eprintln!("server started with a soft limit of 1024 open files: now {soft} (hard {hard})");

    let connector = tls_connector(&server.ca(), b"h2");
    let opening = Arc::new(tokio::sync::Semaphore::new(32));
    let flood_started = Instant::now();
    let tasks: Vec<_> = (0..FLOOD)
        .map(|_| {
            let (connector, opening, addr) = (connector.clone(), opening.clone(), server.https);
            tokio::spawn(async move {
                let _turn = opening.acquire().await.unwrap();
                let connect = tls_connect(&connector, addr);
                match tokio::time::timeout(Duration::from_secs(10), connect).await {
                    Ok(Ok(stream)) => Ok((stream, Instant::now())),
                    Ok(Err(error)) => Err(format!("{error}")),
                    Err(_) => Err("TLS handshake not answered within 10 s".to_string()),
                }
            })
        })
        .collect();
    let mut flood = Vec::new();
    let mut refused = Vec::new();
    for task in tasks {
        match task.await.unwrap() {
            Ok(connection) => flood.push(connection),
            Err(error) => refused.push(error),
        }
    }
    eprintln!(
        "{} of {FLOOD} flood connections open after {:?}; first refusal: {:?}",
        flood.len(),
        flood_started.elapsed(),
        refused.first()
    );

    // While every flood connection is open.
    for path in ["/livez", "/readyz", "/metrics"] {
        assert_eq!(admin_get(server.admin, path).await, Ok(200), "{path}");
    }
    let webhook = tls_connector(&server.ca(), b"http/1.1");
    let answer = tokio::time::timeout(Duration::from_secs(5), async {
        let mut connection = PooledConnection::open(&webhook, server.https).await?;
        Ok::<_, std::io::Error>(connection.post("/mutate-pod", &review_body()).await)
    })
    .await;
    let answer = answer.expect("/mutate-pod not answered within 5 s during the flood");
    assert_allowed(&answer.expect("connect").expect("/mutate-pod"));
    assert!(refused.is_empty(), "{} connections refused", refused.len());
    assert_eq!(soft, hard, "the server's soft limit was not raised");

    // Every flood connection is closed by the server (not by this test).
    let closing: Vec<_> = flood
        .into_iter()
        .map(|(mut stream, opened)| {
            tokio::spawn(async move {
                // The server's own HTTP/2 SETTINGS come first; then the close (an error when it
                // comes without TLS close_notify).
                let mut received = Vec::new();
                let read = tokio::time::timeout(
                    Duration::from_secs(30),
                    stream.read_to_end(&mut received),
                );
                match read.await {
                    Ok(_closed) => Ok(opened.elapsed()),
                    Err(_) => Err("still open after 30 s".to_string()),
                }
            })
        })
        .collect();
    let mut open_for = Vec::new();
    for task in closing {
        open_for.push(task.await.unwrap().expect("flood connection"));
    }
    let longest = open_for.iter().max().unwrap();
    eprintln!("flood connections closed by the server; the longest after {longest:?}");
    for path in ["/livez", "/readyz"] {
        assert_eq!(admin_get(server.admin, path).await, Ok(200), "{path}");
    }
}
