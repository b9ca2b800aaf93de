//! Accept loops for the HTTPS admission port and the plain-HTTP admin port.
//!
//! Hand-rolled on tokio-rustls + hyper-util so each connection gets: TCP_NODELAY, its own task (a
//! slow handshake never blocks `accept`), a TLS handshake deadline, an HTTP/1.1 header-read
//! deadline, and a shutdown that loses no request:
//!
//! 1. For `accept_for` after the shutdown token fires, nothing changes: endpoints and kube-proxy
//!    keep sending new connections to a terminating pod for a few seconds, and the apiserver does
//!    not retry a webhook call that found the port closed.
//! 2. Then the listener closes. HTTP/1.1 answers carry `Connection: close` from now on, so a
//!    connection in use closes right after an answer, never under a request the client already
//!    sent. HTTP/2 connections get a GOAWAY that lets their open streams finish.
//! 3. HTTP/1.1 connections that stayed idle for [`IDLE_GRACE`] are closed — the apiserver keeps
//!    reusing pooled connections to a terminating pod otherwise (kubernetes#127335) — and the
//!    server returns once every connection is gone, or after [`DRAIN_DEADLINE`].

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use axum::http::{HeaderValue, header};
use axum::response::Response;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;
use tokio::time::timeout;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

/// A client must finish the TLS handshake within this time.
const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// An HTTP/1.1 client must send a complete request head within this time. hyper starts the clock
/// whenever it waits for a request, so this is also how long an idle keep-alive connection lives.
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(5);
/// HTTP/2 pings detect dead peers on long-lived connections.
const HTTP2_KEEP_ALIVE_INTERVAL: Duration = Duration::from_secs(30);
const HTTP2_KEEP_ALIVE_TIMEOUT: Duration = Duration::from_secs(10);
/// After the listener closes, an HTTP/1.1 connection that sends nothing for this long is closed.
/// A client in the middle of a request/answer exchange gets its `Connection: close` answer well
/// within it, so only connections nobody is using are closed under a possible request.
pub const IDLE_GRACE: Duration = Duration::from_secs(1);
/// After the idle connections are closed, in-flight requests get this long before the remaining
/// connections are dropped. Webhook calls time out after 5 s on the apiserver's side.
pub const DRAIN_DEADLINE: Duration = Duration::from_secs(10);
/// Pause after a failed `accept` (e.g. out of file descriptors) so the loop does not spin.
const ACCEPT_ERROR_BACKOFF: Duration = Duration::from_millis(100);
/// How long a plain-HTTP client gets to read our 400 answer before the socket is closed.
const PLAIN_HTTP_LINGER: Duration = Duration::from_secs(2);

/// First byte of every TLS connection: a handshake record.
const TLS_HANDSHAKE_RECORD: u8 = 0x16;
const PLAIN_HTTP_BODY: &str = "Client sent an HTTP request to an HTTPS server.\n";

/// Serves `router` over TLS. Once `shutdown` fires, keeps accepting and serving for `accept_for`,
/// then drains as described in the module documentation and returns when every connection is
/// gone.
///
/// The HTTP version follows ALPN: `h2` gets HTTP/2, anything else (including no ALPN) HTTP/1.1.
/// A plain-HTTP request on this port is answered with `400 Bad Request` and closed.
pub async fn serve_https(
    listener: TcpListener,
    tls: Arc<rustls::ServerConfig>,
    router: Router,
    shutdown: CancellationToken,
    accept_for: Duration,
) -> io::Result<()> {
    serve(
        listener,
        Some(TlsAcceptor::from(tls)),
        router,
        shutdown,
        accept_for,
    )
    .await
}

/// Serves `router` over plain HTTP/1.1 (the admin port); once `shutdown` fires, stops accepting
/// at once and drains like [`serve_https`].
pub async fn serve_http(
    listener: TcpListener,
    router: Router,
    shutdown: CancellationToken,
) -> io::Result<()> {
    serve(listener, None, router, shutdown, Duration::ZERO).await
}

/// What every connection task needs; shared behind one `Arc`.
struct ServerContext {
    tls: Option<TlsAcceptor>,
    router: Router,
    http1: auto::Builder<TokioExecutor>,
    http2: auto::Builder<TokioExecutor>,
    /// Fires when the listener closes: HTTP/1.1 answers carry `Connection: close` from then on,
    /// HTTP/2 connections get a GOAWAY.
    closing: CancellationToken,
    /// Fires [`IDLE_GRACE`] later: HTTP/1.1 connections still open are closed (if idle) or
    /// closed after their current answer.
    close_idle: CancellationToken,
}

async fn serve(
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    router: Router,
    shutdown: CancellationToken,
    accept_for: Duration,
) -> io::Result<()> {
    let local_addr = listener.local_addr()?;
    let (http1, http2) = http_builders();
    let context = Arc::new(ServerContext {
        tls,
        router,
        http1,
        http2,
        closing: CancellationToken::new(),
        close_idle: CancellationToken::new(),
    });
    let mut connections = JoinSet::new();
    let stop_accepting = async {
        shutdown.cancelled().await;
        if !accept_for.is_zero() {
            tracing::info!(%local_addr, ?accept_for, "shutting down: still accepting for the shutdown delay");
            tokio::time::sleep(accept_for).await;
        }
    };
    tokio::pin!(stop_accepting);

    loop {
        let (stream, peer) = tokio::select! {
            biased;
            () = &mut stop_accepting => break,
            // Reap finished connection tasks so the set does not grow without bound.
            Some(finished) = connections.join_next(), if !connections.is_empty() => {
                log_task_failure(finished);
                continue;
            }
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    tracing::warn!(%local_addr, %error, "accept failed");
                    tokio::time::sleep(ACCEPT_ERROR_BACKOFF).await;
                    continue;
                }
            },
        };
        connections.spawn(handle_connection(context.clone(), stream, peer));
    }

    // Closing the listener makes the kernel refuse new connections right away.
    drop(listener);
    context.closing.cancel();
    tracing::info!(
        %local_addr,
        open_connections = connections.len(),
        "stopped accepting; draining connections"
    );
    if !all_finished(&mut connections, IDLE_GRACE).await {
        context.close_idle.cancel();
        if all_finished(&mut connections, DRAIN_DEADLINE).await {
            tracing::info!(%local_addr, "all connections closed");
        } else {
            tracing::warn!(
                %local_addr,
                remaining = connections.len(),
                "connections still open after the drain deadline; dropping them"
            );
        }
    }
    connections.shutdown().await;
    Ok(())
}

/// Waits up to `limit` for every connection task to end; `true` when none is left.
async fn all_finished(connections: &mut JoinSet<()>, limit: Duration) -> bool {
    let drained = async {
        while let Some(finished) = connections.join_next().await {
            log_task_failure(finished);
        }
    };
    timeout(limit, drained).await.is_ok()
}

fn log_task_failure(finished: Result<(), tokio::task::JoinError>) {
    if let Err(error) = finished {
        tracing::warn!(%error, "connection task failed");
    }
}

/// One auto builder pinned to HTTP/1.1 and one pinned to HTTP/2. Pinning skips hyper-util's
/// version sniffing, which has no read deadline of its own.
fn http_builders() -> (auto::Builder<TokioExecutor>, auto::Builder<TokioExecutor>) {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .keep_alive(true);
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(HTTP2_KEEP_ALIVE_INTERVAL)
        .keep_alive_timeout(HTTP2_KEEP_ALIVE_TIMEOUT);
    (builder.clone().http1_only(), builder.http2_only())
}

async fn handle_connection(context: Arc<ServerContext>, stream: TcpStream, peer: SocketAddr) {
    // Admission answers are small single writes; don't let Nagle hold them back.
    if let Err(error) = stream.set_nodelay(true) {
        tracing::debug!(%peer, %error, "cannot set TCP_NODELAY");
    }
    let Some(acceptor) = &context.tls else {
        serve_http_connection(&context, Protocol::Http1, TokioIo::new(stream), peer).await;
        return;
    };

    // A connection accepted before the listener closed finishes its handshake even if the
    // listener closes meanwhile: its client is about to send a request. One still silent when
    // idle connections are closed has sent none.
    let handshake = timeout(TLS_HANDSHAKE_TIMEOUT, accept_tls(acceptor, stream, peer));
    let tls_stream = tokio::select! {
        () = context.close_idle.cancelled() => return,
        outcome = handshake => match outcome {
            Ok(Some(tls_stream)) => tls_stream,
            Ok(None) => return,
            Err(_elapsed) => {
                tracing::debug!(%peer, "TLS handshake timed out");
                return;
            }
        },
    };
    let protocol = match tls_stream.get_ref().1.alpn_protocol() {
        Some(b"h2") => Protocol::Http2,
        _ => Protocol::Http1,
    };
    serve_http_connection(&context, protocol, TokioIo::new(tls_stream), peer).await;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Protocol {
    Http1,
    Http2,
}

/// Peeks at the first byte, answers plain HTTP with a 400, and runs the TLS handshake otherwise.
async fn accept_tls(
    acceptor: &TlsAcceptor,
    stream: TcpStream,
    peer: SocketAddr,
) -> Option<tokio_rustls::server::TlsStream<TcpStream>> {
    let mut first = [0_u8; 1];
    match stream.peek(&mut first).await {
        Ok(0) => return None,
        Ok(_) => {}
        Err(error) => {
            tracing::debug!(%peer, %error, "connection failed before the TLS handshake");
            return None;
        }
    }
    match first[0] {
        TLS_HANDSHAKE_RECORD => {}
        // Every HTTP/1.x method starts with an upper-case ASCII letter.
        byte if byte.is_ascii_uppercase() => {
            tracing::debug!(%peer, "plain HTTP on the TLS port; answering 400");
            reject_plain_http(stream).await;
            return None;
        }
        byte => {
            tracing::debug!(%peer, first_byte = byte, "not a TLS client; closing");
            return None;
        }
    }
    match acceptor.accept(stream).await {
        Ok(tls_stream) => Some(tls_stream),
        Err(error) => {
            tracing::debug!(%peer, %error, "TLS handshake failed");
            None
        }
    }
}

/// Answers like Go's net/http does, so `curl http://…:443` gets a message instead of garbage.
async fn reject_plain_http(mut stream: TcpStream) {
    let response = format!(
        "HTTP/1.1 400 Bad Request\r\n\
         Content-Type: text/plain; charset=utf-8\r\n\
         Content-Length: {}\r\n\
         Connection: close\r\n\
         \r\n\
         {PLAIN_HTTP_BODY}",
        PLAIN_HTTP_BODY.len()
    );
    let answer = async {
        stream.write_all(response.as_bytes()).await?;
        stream.shutdown().await?;
        // Read (and discard) the request until the client closes: closing a socket with unread
        // data sends a reset, which can destroy the answer before the client has read it.
        let mut discard = [0_u8; 1024];
        while stream.read(&mut discard).await? > 0 {}
        Ok::<_, io::Error>(())
    };
    let _ = timeout(PLAIN_HTTP_LINGER, answer).await;
}

async fn serve_http_connection<I>(
    context: &ServerContext,
    protocol: Protocol,
    io: TokioIo<I>,
    peer: SocketAddr,
) where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (builder, go_away) = match protocol {
        Protocol::Http1 => (&context.http1, &context.close_idle),
        Protocol::Http2 => (&context.http2, &context.closing),
    };
    let closing = context.closing.clone();
    // Handlers can ask for the peer address with axum's `ConnectInfo<SocketAddr>` extractor.
    let service = context
        .router
        .clone()
        .map_request(move |mut request: hyper::Request<Incoming>| {
            request.extensions_mut().insert(ConnectInfo(peer));
            request
        })
        .map_response(move |mut response: Response| {
            // hyper closes an HTTP/1.1 connection after an answer that says so; the client
            // knows not to send another request on it. (HTTP/2 forbids the header.)
            if protocol == Protocol::Http1 && closing.is_cancelled() {
                response
                    .headers_mut()
                    .insert(header::CONNECTION, HeaderValue::from_static("close"));
            }
            response
        });
    let connection = builder.serve_connection(io, TowerToHyperService::new(service));
    tokio::pin!(connection);
    let outcome = tokio::select! {
        outcome = connection.as_mut() => outcome,
        () = go_away.cancelled() => {
            // HTTP/1.1: closes an idle connection, or the busy one after its answer.
            // HTTP/2: GOAWAY; open streams finish.
            connection.as_mut().graceful_shutdown();
            connection.await
        }
    };
    if let Err(error) = outcome {
        tracing::debug!(%peer, %error, "connection closed with an error");
    }
}

#[cfg(test)]
mod tests {
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

    async fn start_https(resolver: Arc<ReloadableCert>) -> TestServer {
        start_https_accepting_for(resolver, Duration::ZERO).await
    }

    async fn start_https_accepting_for(
        resolver: Arc<ReloadableCert>,
        accept_for: Duration,
    ) -> TestServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let shutdown = CancellationToken::new();
        let task = tokio::spawn(serve_https(
            listener,
            server_config(resolver),
            test_router(),
            shutdown.clone(),
            accept_for,
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

    async fn get_over(
        stream: &mut tokio_rustls::client::TlsStream<TcpStream>,
        path: &str,
    ) -> String {
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
        let _ = timeout(HEADER_READ_TIMEOUT * 2, silent.read_to_end(&mut buffer))
            .await
            .expect("silent connection was not closed");
        assert!(started.elapsed() >= HEADER_READ_TIMEOUT - Duration::from_millis(500));

        server.shutdown.cancel();
        server.task.await.unwrap().unwrap();
    }
}
