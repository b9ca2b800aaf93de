//! SIGTERM under load: the real binary, 16 keep-alive HTTP/1.1 clients and 4 HTTP/2 clients
//! posting a pod review to /mutate-pod, and a SIGTERM in the middle.
//!
//! A failure is a request that was sent and not answered with a 200 and a complete body. A
//! request that could not be sent because no connection could be opened (the listener is
//! closed) is not a failure — except during the shutdown delay, when new connections must be
//! served.

use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/pod-web-log-agent.json"
);
const HTTP1_CLIENTS: usize = 16;
const HTTP2_CLIENTS: usize = 4;
const ROUNDS: usize = 3;
/// Requests served before the signal, so every client holds a warm connection.
const WARM_UP_REQUESTS: usize = 200;
/// Slack for the signal's delivery and for timers on a loaded machine: checks that must hold
/// "during the delay" stop this long before its end.
const DELAY_MARGIN: Duration = Duration::from_millis(300);

/// Time the server gets to see the signal after `kill` returned.
const SIGNAL_DELIVERY: Duration = Duration::from_millis(100);

/// The scenarios start a server each and load the machine; one at a time keeps them honest.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

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
    _cert_dir: tempfile::TempDir,
    ca: Vec<u8>,
}

impl Server {
    /// The delay is passed through the environment so that a binary without the flag still
    /// starts (and shows how it loses requests).
    async fn start(shutdown_delay: &str) -> Server {
        let cert_dir = tempfile::tempdir().expect("tempdir");
        let (https, admin) = (free_port(), free_port());
        let child = Command::new(env!("CARGO_BIN_EXE_kruise-webhook"))
            .args([
                "serve",
                "--listen",
                &https.to_string(),
                "--admin-listen",
                &admin.to_string(),
            ])
            .arg("--cert-dir")
            .arg(cert_dir.path())
            .env("KRUISE_WEBHOOK_SHUTDOWN_DELAY", shutdown_delay)
            .env("KRUISE_WEBHOOK_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start kruise-webhook");
        let admin_client = reqwest::Client::new();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            assert!(Instant::now() < deadline, "server did not become ready");
            let ready = admin_client
                .get(format!("http://{admin}/readyz"))
                .send()
                .await
                .is_ok_and(|r| r.status() == 200);
            if ready {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let ca = std::fs::read(cert_dir.path().join("ca.crt")).expect("ca.crt");
        Server {
            child,
            https,
            admin,
            _cert_dir: cert_dir,
            ca,
        }
    }

    fn client(&self, http1_only: bool) -> reqwest::Client {
        let builder = reqwest::Client::builder()
            .add_root_certificate(reqwest::Certificate::from_pem(&self.ca).expect("CA PEM"))
            .resolve("localhost", self.https)
            .timeout(Duration::from_secs(10))
            .pool_idle_timeout(Duration::from_secs(60));
        let builder = if http1_only {
            builder.http1_only()
        } else {
            builder
        };
        builder.build().expect("client")
    }

    fn url(&self) -> String {
        format!("https://localhost:{}/mutate-pod", self.https.port())
    }

    fn send_sigterm(&self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill");
        assert!(status.success(), "kill -TERM failed");
    }

    async fn wait_for_exit(&mut self, limit: Duration) -> ExitStatus {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "server did not exit within {limit:?} of SIGTERM"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What happened to one request.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Outcome {
    /// 200 with a complete AdmissionReview body.
    Served,
    /// No connection could be opened (refused, or cut during the TLS handshake): never sent.
    NotConnected,
    /// Sent, and not answered properly.
    Failed(String),
}

async fn post_once(client: &reqwest::Client, url: &str, body: &'static [u8]) -> Outcome {
    let response = match client
        .post(url)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
    {
        Ok(response) => response,
        Err(error) if error.is_connect() => return Outcome::NotConnected,
        Err(error) => return Outcome::Failed(format!("{error:?}")),
    };
    let status = response.status();
    match response.bytes().await {
        Ok(bytes) if status == 200 && bytes.starts_with(b"{") => Outcome::Served,
        Ok(bytes) => Outcome::Failed(format!(
            "status {status}: {}",
            String::from_utf8_lossy(&bytes)
        )),
        Err(error) => Outcome::Failed(format!("reading the answer: {error:?}")),
    }
}

/// One request's outcome and when it started, relative to the signal (negative: before).
#[derive(Debug, Clone)]
struct Record {
    client: String,
    started_after_signal: Option<Duration>,
    outcome: Outcome,
}

struct Load {
    stop: Arc<AtomicBool>,
    served: Arc<AtomicUsize>,
    signalled_at: Arc<Mutex<Option<Instant>>>,
    tasks: Vec<tokio::task::JoinHandle<Vec<Record>>>,
}

impl Load {
    fn start(server: &Server, body: &'static [u8]) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let served = Arc::new(AtomicUsize::new(0));
        let signalled_at = Arc::new(Mutex::new(None::<Instant>));
        let clients = (0..HTTP1_CLIENTS)
            .map(|i| (format!("http1-{i}"), server.client(true)))
            .chain((0..HTTP2_CLIENTS).map(|i| (format!("h2-{i}"), server.client(false))));
        let tasks = clients
            .map(|(name, client)| {
                let (stop, served, signalled_at) =
                    (stop.clone(), served.clone(), signalled_at.clone());
                let url = server.url();
                tokio::spawn(async move {
                    let mut records = Vec::new();
                    while !stop.load(Ordering::Acquire) {
                        let started = Instant::now();
                        let outcome = post_once(&client, &url, body).await;
                        let signal = *signalled_at.lock().unwrap();
                        if outcome == Outcome::Served {
                            served.fetch_add(1, Ordering::Relaxed);
                        } else if outcome == Outcome::NotConnected {
                            // The listener is closed; do not spin.
                            tokio::time::sleep(Duration::from_millis(20)).await;
                        }
                        records.push(Record {
                            client: name.clone(),
                            started_after_signal: signal
                                .and_then(|at| started.checked_duration_since(at)),
                            outcome,
                        });
                    }
                    records
                })
            })
            .collect();
        Load {
            stop,
            served,
            signalled_at,
            tasks,
        }
    }

    async fn finish(self) -> Vec<Record> {
        self.stop.store(true, Ordering::Release);
        let mut records = Vec::new();
        for task in self.tasks {
            records.extend(task.await.expect("client task"));
        }
        records
    }
}

/// Requests on fresh connections (a new client each), one every 100 ms until `until` after the
/// signal.
async fn new_connection_probes(
    server: &Server,
    body: &'static [u8],
    until: Duration,
) -> Vec<Record> {
    let started = Instant::now();
    let mut records = Vec::new();
    while started.elapsed() < until {
        let at = started.elapsed();
        let outcome = post_once(&server.client(true), &server.url(), body).await;
        records.push(Record {
            client: "new-connection".into(),
            started_after_signal: Some(at),
            outcome,
        });
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    records
}

/// /readyz answers (status, or the error) every 100 ms until `until` after the signal, leaving
/// out the first [`SIGNAL_DELIVERY`] (`kill` returns before the server has seen the signal).
async fn readyz_probes(admin: SocketAddr, until: Duration) -> Vec<Result<u16, String>> {
    let client = reqwest::Client::new();
    let started = Instant::now();
    let mut answers = Vec::new();
    tokio::time::sleep(SIGNAL_DELIVERY).await;
    while started.elapsed() < until {
        let answer = client
            .get(format!("http://{admin}/readyz"))
            .timeout(Duration::from_secs(2))
            .send()
            .await
            .map(|r| r.status().as_u16())
            .map_err(|e| format!("{e:?}"));
        answers.push(answer);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    answers
}

struct RoundReport {
    served_before_signal: usize,
    served_after_signal: usize,
    failed: Vec<Record>,
    not_connected_during_delay: Vec<Record>,
    probes: Vec<Record>,
    readyz: Vec<Result<u16, String>>,
    exit: ExitStatus,
    exited_after: Duration,
}

impl RoundReport {
    fn summary(&self) -> String {
        let probes_served = self
            .probes
            .iter()
            .filter(|r| r.outcome == Outcome::Served)
            .count();
        let readyz_503 = self.readyz.iter().filter(|r| **r == Ok(503)).count();
        let mut text = format!(
            "served {} before and {} after the signal; {} failed; {} refused during the delay; \
             new connections during the delay: {probes_served}/{} served; /readyz during the \
             delay: {readyz_503}/{} answered 503; exit {:?} after {:?}",
            self.served_before_signal,
            self.served_after_signal,
            self.failed.len(),
            self.not_connected_during_delay.len(),
            self.probes.len(),
            self.readyz.len(),
            self.exit,
            self.exited_after,
        );
        for record in self.failed.iter().take(3) {
            text.push_str(&format!(
                "\n  {} failed {:?} after the signal: {:?}",
                record.client, record.started_after_signal, record.outcome
            ));
        }
        if let Some(other) = self.readyz.iter().find(|r| **r != Ok(503)) {
            text.push_str(&format!("\n  /readyz: {other:?}"));
        }
        text
    }
}

async fn sigterm_under_load(delay: Duration) -> RoundReport {
    static BODY: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    let body: &'static [u8] =
        BODY.get_or_init(|| std::fs::read(Path::new(FIXTURE)).expect("fixture"));

    let mut server = Server::start(&format!("{}ms", delay.as_millis())).await;
    let load = Load::start(&server, body);
    let warm_up_deadline = Instant::now() + Duration::from_secs(30);
    while load.served.load(Ordering::Relaxed) < WARM_UP_REQUESTS {
        assert!(Instant::now() < warm_up_deadline, "load did not get going");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }

    let signalled = Instant::now();
    *load.signalled_at.lock().unwrap() = Some(signalled);
    server.send_sigterm();
    let during_delay = delay.saturating_sub(DELAY_MARGIN);
    let (probes, readyz) = tokio::join!(
        new_connection_probes(&server, body, during_delay),
        readyz_probes(server.admin, during_delay),
    );
    let exit = server.wait_for_exit(Duration::from_secs(30)).await;
    let exited_after = signalled.elapsed();
    let records = load.finish().await;

    let in_delay = |r: &Record| r.started_after_signal.is_some_and(|at| at < during_delay);
    RoundReport {
        served_before_signal: records
            .iter()
            .filter(|r| r.outcome == Outcome::Served && r.started_after_signal.is_none())
            .count(),
        served_after_signal: records
            .iter()
            .filter(|r| r.outcome == Outcome::Served && r.started_after_signal.is_some())
            .count(),
        failed: records
            .iter()
            .chain(&probes)
            .filter(|r| matches!(r.outcome, Outcome::Failed(_)))
            .cloned()
            .collect(),
        not_connected_during_delay: records
            .iter()
            .chain(&probes)
            .filter(|r| r.outcome == Outcome::NotConnected && in_delay(r))
            .cloned()
            .collect(),
        probes,
        readyz,
        exit,
        exited_after,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_with_a_delay_loses_nothing_and_keeps_accepting() {
    let _serial = ONE_AT_A_TIME.lock().await;
    let delay = Duration::from_secs(2);
    for round in 1..=ROUNDS {
        let report = sigterm_under_load(delay).await;
        let summary = report.summary();
        eprintln!("delay {delay:?}, round {round}: {summary}");
        assert!(report.exit.success(), "round {round}: {summary}");
        assert!(report.failed.is_empty(), "round {round}: {summary}");
        assert!(
            report.not_connected_during_delay.is_empty(),
            "round {round}: {summary}"
        );
        assert!(
            !report.probes.is_empty() && report.probes.iter().all(|r| r.outcome == Outcome::Served),
            "round {round}: new connections during the delay must be served: {summary}"
        );
        assert!(
            !report.readyz.is_empty() && report.readyz.iter().all(|r| *r == Ok(503)),
            "round {round}: /readyz must answer 503 during the delay: {summary}"
        );
        assert!(
            report.served_after_signal > report.probes.len(),
            "round {round}: the load clients must keep being served after the signal: {summary}"
        );
        assert!(
            report.exited_after >= delay,
            "round {round}: exited before the delay was over: {summary}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_without_a_delay_answers_every_request_already_sent() {
    let _serial = ONE_AT_A_TIME.lock().await;
    for round in 1..=ROUNDS {
        let report = sigterm_under_load(Duration::ZERO).await;
        let summary = report.summary();
        eprintln!("delay 0, round {round}: {summary}");
        assert!(report.exit.success(), "round {round}: {summary}");
        assert!(report.failed.is_empty(), "round {round}: {summary}");
        assert!(
            report.exited_after < Duration::from_secs(5),
            "round {round}: {summary}"
        );
    }
}
