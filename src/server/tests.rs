use super::*;
use crate::tls::certgen::ensure_cert_dir;
use crate::tls::reloader::{ReloadableCert, server_config};
use axum::routing::{get, post};
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use std::path::Path;
use tokio::task::JoinHandle;

struct TestServer {
    addr: SocketAddr,
    shutdown: CancellationToken,
    task: JoinHandle<io::Result<()>>,
}

fn install_ring() {
    // main does this; reqwest's rustls also needs a process default. Already set is fine.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

fn test_router() -> Router {
    Router::new()
        .route("/hello", get(|| async { "hello" }))
        .route(
            "/peer",
            get(|ConnectInfo(peer): ConnectInfo<SocketAddr>| async move { peer.to_string() }),
        )
        .route(
            "/slow",
            post(|| async {
                tokio::time::sleep(Duration::from_millis(500)).await;
                "done"
            }),
        )
}

/// Room for every test's connections; the cap has its own test.
const TEST_MAX_CONNECTIONS: usize = 64;

async fn start_https(resolver: Arc<ReloadableCert>) -> TestServer {
    start_https_with(resolver, ServeOptions::new(TEST_MAX_CONNECTIONS)).await
}

async fn start_https_accepting_for(
    resolver: Arc<ReloadableCert>,
    accept_for: Duration,
) -> TestServer {
    let options = ServeOptions {
        accept_for,
        ..ServeOptions::new(TEST_MAX_CONNECTIONS)
    };
    start_https_with(resolver, options).await
}

async fn start_https_with(resolver: Arc<ReloadableCert>, options: ServeOptions) -> TestServer {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let shutdown = CancellationToken::new();
    let task = tokio::spawn(serve_https(
        listener,
        server_config(resolver),
        test_router(),
        shutdown.clone(),
        options,
    ));
    TestServer {
        addr,
        shutdown,
        task,
    }
}

fn client(ca_pem: &[u8]) -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(ca_pem).unwrap())
        .pool_idle_timeout(Duration::from_secs(60))
}

fn generated_cert(dir: &Path, name: &str) -> (Vec<u8>, Arc<ReloadableCert>) {
    let files = ensure_cert_dir(
        dir,
        &[name.to_owned()],
        &[],
        Duration::from_secs(86_400 * 30),
    )
    .unwrap();
    let resolver = ReloadableCert::from_files(&files.cert, &files.key).unwrap();
    (std::fs::read(&files.ca).unwrap(), Arc::new(resolver))
}

/// Reads whatever the server sends until it closes the connection.
async fn read_until_closed<S: AsyncRead + Unpin>(stream: &mut S) -> String {
    let mut received = Vec::new();
    // A close without TLS close_notify surfaces as UnexpectedEof; closed is closed.
    let _ = timeout(Duration::from_secs(5), stream.read_to_end(&mut received))
        .await
        .expect("server did not close the connection");
    String::from_utf8_lossy(&received).into_owned()
}

/// A raw TLS client, so tests can see exactly when the server closes a connection and which
/// certificate it presented.
async fn raw_tls_client(
    addr: SocketAddr,
    ca_pem: &[u8],
    alpn: &[&[u8]],
) -> tokio_rustls::client::TlsStream<TcpStream> {
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(ca_pem).unwrap())
        .unwrap();
    let mut config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let tcp = TcpStream::connect(addr).await.unwrap();
    let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
    connector.connect(name, tcp).await.unwrap()
}

fn served_leaf(stream: &tokio_rustls::client::TlsStream<TcpStream>) -> Vec<u8> {
    stream.get_ref().1.peer_certificates().unwrap()[0].to_vec()
}

async fn get_over(stream: &mut tokio_rustls::client::TlsStream<TcpStream>, path: &str) -> String {
    let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    // The test routes answer with short bodies; one read per response is enough here.
    let mut buffer = vec![0_u8; 4096];
    let read = timeout(Duration::from_secs(5), stream.read(&mut buffer))
        .await
        .unwrap()
        .unwrap();
    String::from_utf8_lossy(&buffer[..read]).into_owned()
}

#[tokio::test]
async fn https_serves_http11_with_keep_alive_and_h2() {
    install_ring();
    let temp = tempfile::tempdir().unwrap();
    let (ca_pem, resolver) = generated_cert(temp.path(), "webhook.test");
    let server = start_https(resolver).await;

    // HTTP/1.1: two requests from one client reuse one connection (same client port).
    let http1 = client(&ca_pem).http1_only().build().unwrap();
    let url = |path: &str| format!("https://localhost:{}{path}", server.addr.port());
    let first = http1.get(url("/peer")).send().await.unwrap();
    assert_eq!(first.status(), 200);
    assert_eq!(first.version(), reqwest::Version::HTTP_11);
    let first_peer = first.text().await.unwrap();
    let second_peer = http1
        .get(url("/peer"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(
        first_peer, second_peer,
        "keep-alive connection was not reused"
    );

    // HTTP/2 negotiated through ALPN.
    let h2 = client(&ca_pem).build().unwrap();
    let response = h2.get(url("/hello")).send().await.unwrap();
    assert_eq!(response.version(), reqwest::Version::HTTP_2);
    assert_eq!(response.text().await.unwrap(), "hello");

    server.shutdown.cancel();
    timeout(Duration::from_secs(5), server.task)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn plain_http_on_the_tls_port_gets_a_400() {
    install_ring();
    let temp = tempfile::tempdir().unwrap();
    let (_, resolver) = generated_cert(temp.path(), "webhook.test");
    let server = start_https(resolver).await;

    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream
        .write_all(b"GET /hello HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .await
        .unwrap();
    let answer = read_until_closed(&mut stream).await;
    assert!(
        answer.starts_with("HTTP/1.1 400 Bad Request\r\n"),
        "{answer:?}"
    );
    assert!(answer.contains("\r\nConnection: close\r\n"), "{answer:?}");
    assert!(answer.contains("\r\nContent-Length: 48\r\n"), "{answer:?}");
    assert!(
        answer.ends_with("\r\n\r\nClient sent an HTTP request to an HTTPS server.\n"),
        "{answer:?}"
    );

    // reqwest sees a well-formed response too.
    let response = reqwest::Client::new()
        .get(format!("http://127.0.0.1:{}/hello", server.addr.port()))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);

    // Garbage that is neither TLS nor HTTP is just closed, and the server keeps serving.
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream.write_all(&[0x00, 0x01, 0x02]).await.unwrap();
    assert_eq!(read_until_closed(&mut stream).await, "");

    server.shutdown.cancel();
    server.task.await.unwrap().unwrap();
}

#[tokio::test]
async fn shutdown_closes_idle_keep_alive_connections_and_finishes_in_flight_requests() {
    install_ring();
    let temp = tempfile::tempdir().unwrap();
    let (ca_pem, resolver) = generated_cert(temp.path(), "webhook.test");
    let server = start_https(resolver).await;

    // An idle keep-alive connection that has served one request.
    let mut idle = raw_tls_client(server.addr, &ca_pem, &[b"http/1.1"]).await;
    let answer = get_over(&mut idle, "/hello").await;
    assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");

    // A request that is still running when shutdown starts.
    let in_flight = {
        let http1 = client(&ca_pem).http1_only().build().unwrap();
        let url = format!("https://localhost:{}/slow", server.addr.port());
        tokio::spawn(async move { http1.post(url).send().await.unwrap().text().await })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;

    server.shutdown.cancel();
    // The idle connection is closed after the idle grace (well before the 5 s header
    // timeout), not at once: a request could be on its way.
    let closed_within = tokio::time::Instant::now();
    assert_eq!(read_until_closed(&mut idle).await, "");
    assert!(closed_within.elapsed() >= IDLE_GRACE - Duration::from_millis(50));
    assert!(closed_within.elapsed() < IDLE_GRACE + Duration::from_secs(1));
    // The in-flight request still completes.
    assert_eq!(in_flight.await.unwrap().unwrap(), "done");
    // And the server returns once every connection is gone.
    timeout(Duration::from_secs(5), server.task)
        .await
        .expect("serve_https did not return after shutdown")
        .unwrap()
        .unwrap();
    // The port is closed.
    assert!(TcpStream::connect(server.addr).await.is_err());
}

#[tokio::test]
async fn new_connections_are_served_during_the_delay_and_refused_after_it() {
    install_ring();
    let temp = tempfile::tempdir().unwrap();
    let (ca_pem, resolver) = generated_cert(temp.path(), "webhook.test");
    let delay = Duration::from_millis(600);
    let server = start_https_accepting_for(resolver, delay).await;
    let url = format!("https://localhost:{}/hello", server.addr.port());

    let cancelled_at = tokio::time::Instant::now();
    server.shutdown.cancel();
    tokio::time::sleep(Duration::from_millis(200)).await;
    // A fresh client: a new connection, accepted and served as usual.
    let fresh = client(&ca_pem).http1_only().build().unwrap();
    let response = fresh.get(&url).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.text().await.unwrap(), "hello");

    timeout(Duration::from_secs(5), server.task)
        .await
        .expect("serve_https did not return after the delay")
        .unwrap()
        .unwrap();
    assert!(cancelled_at.elapsed() >= delay);
    assert!(TcpStream::connect(server.addr).await.is_err());
}

#[tokio::test]
async fn a_request_on_an_idle_connection_after_the_listener_closed_is_answered_then_closed() {
    install_ring();
    let temp = tempfile::tempdir().unwrap();
    let (ca_pem, resolver) = generated_cert(temp.path(), "webhook.test");
    let server = start_https(resolver).await;
    let mut connection = raw_tls_client(server.addr, &ca_pem, &[b"http/1.1"]).await;
    let answer = get_over(&mut connection, "/hello").await;
    assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
    assert!(!answer.to_ascii_lowercase().contains("connection: close"));

    server.shutdown.cancel();
    // The client sends its next request while the server drains: it is answered, with
    // `Connection: close`, and only then is the connection closed.
    tokio::time::sleep(IDLE_GRACE / 3).await;
    assert!(
        TcpStream::connect(server.addr).await.is_err(),
        "listener still open"
    );
    let answer = get_over(&mut connection, "/hello").await;
    assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
    assert!(
        answer
            .to_ascii_lowercase()
            .contains("\r\nconnection: close\r\n"),
        "{answer}"
    );
    assert!(answer.ends_with("hello"), "{answer}");
    assert_eq!(read_until_closed(&mut connection).await, "");
    timeout(Duration::from_secs(5), server.task)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn http2_streams_open_at_shutdown_finish_after_the_goaway() {
    install_ring();
    let temp = tempfile::tempdir().unwrap();
    let (ca_pem, resolver) = generated_cert(temp.path(), "webhook.test");
    let server = start_https(resolver).await;
    let h2 = client(&ca_pem).build().unwrap();
    let url = |path: &str| format!("https://localhost:{}{path}", server.addr.port());
    let warm = h2.get(url("/hello")).send().await.unwrap();
    assert_eq!(warm.version(), reqwest::Version::HTTP_2);

    let in_flight = {
        let (h2, url) = (h2.clone(), url("/slow"));
        tokio::spawn(async move { h2.post(url).send().await.unwrap().text().await })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    let cancelled_at = tokio::time::Instant::now();
    server.shutdown.cancel();
    assert_eq!(in_flight.await.unwrap().unwrap(), "done");
    timeout(Duration::from_secs(5), server.task)
        .await
        .expect("serve_https did not return after the stream finished")
        .unwrap()
        .unwrap();
    // The GOAWAY closes the connection once its stream is done; no idle grace for HTTP/2.
    assert!(cancelled_at.elapsed() < IDLE_GRACE);
}

#[tokio::test]
async fn swapped_certificate_is_used_by_new_connections_only() {
    install_ring();
    let temp = tempfile::tempdir().unwrap();
    let (ca_pem, resolver) = generated_cert(temp.path(), "webhook.test");
    let server = start_https(resolver.clone()).await;

    let mut existing = raw_tls_client(server.addr, &ca_pem, &[b"http/1.1"]).await;
    let old_leaf = served_leaf(&existing);
    assert!(
        get_over(&mut existing, "/hello")
            .await
            .starts_with("HTTP/1.1 200 OK")
    );

    // Issue a new serving certificate from the same CA (a missing SAN forces a reissue).
    let files = ensure_cert_dir(
        temp.path(),
        &["webhook.test".to_owned(), "renewed.test".to_owned()],
        &[],
        Duration::from_secs(86_400 * 30),
    )
    .unwrap();
    assert!(files.issued);
    resolver.reload_from_files(&files.cert, &files.key).unwrap();

    let fresh = raw_tls_client(server.addr, &ca_pem, &[b"http/1.1"]).await;
    let new_leaf = served_leaf(&fresh);
    assert_ne!(
        new_leaf, old_leaf,
        "a new connection must see the new certificate"
    );
    assert_eq!(new_leaf, resolver.current().cert[0].to_vec());

    // The connection opened before the swap keeps working with its original certificate.
    assert!(
        get_over(&mut existing, "/hello")
            .await
            .starts_with("HTTP/1.1 200 OK")
    );
    assert_eq!(served_leaf(&existing), old_leaf);

    server.shutdown.cancel();
    server.task.await.unwrap().unwrap();
}

#[tokio::test]
async fn plain_http_server_serves_and_shuts_down() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let shutdown = CancellationToken::new();
    let task = tokio::spawn(serve_http(listener, test_router(), shutdown.clone()));

    let client = reqwest::Client::new();
    let response = client
        .get(format!("http://{addr}/hello"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.text().await.unwrap(), "hello");

    shutdown.cancel();
    timeout(Duration::from_secs(5), task)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn silent_tls_clients_are_dropped_after_the_header_timeout() {
    install_ring();
    let temp = tempfile::tempdir().unwrap();
    let (ca_pem, resolver) = generated_cert(temp.path(), "webhook.test");
    let server = start_https(resolver).await;

    // Handshake done, then nothing: hyper's header-read deadline closes the connection.
    let mut silent = raw_tls_client(server.addr, &ca_pem, &[b"http/1.1"]).await;
    let started = tokio::time::Instant::now();
    let mut buffer = Vec::new();
    let head_deadline = ConnectionDeadlines::default().request_head;
    let _ = timeout(head_deadline * 2, silent.read_to_end(&mut buffer))
        .await
        .expect("silent connection was not closed");
    assert!(started.elapsed() >= head_deadline - Duration::from_millis(500));

    server.shutdown.cancel();
    server.task.await.unwrap().unwrap();
}

mod deadlines;
