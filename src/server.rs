//! Accept loops for the HTTPS admission port and the plain-HTTP admin port.
//!
//! Hand-rolled on tokio-rustls + hyper-util so each connection gets: TCP_NODELAY, its own task (a
//! slow handshake never blocks `accept`), a TLS handshake deadline, an HTTP/1.1 header-read
//! deadline, and graceful shutdown that also closes *idle* keep-alive connections — the apiserver
//! keeps reusing pooled connections to a terminating pod otherwise (kubernetes#127335).

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::{GracefulShutdown, Watcher};
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
/// After shutdown, in-flight requests get this long before remaining connections are dropped;
/// fits in the default 30 s `terminationGracePeriodSeconds`.
const SHUTDOWN_DEADLINE: Duration = Duration::from_secs(25);
/// Pause after a failed `accept` (e.g. out of file descriptors) so the loop does not spin.
const ACCEPT_ERROR_BACKOFF: Duration = Duration::from_millis(100);
/// How long a plain-HTTP client gets to read our 400 answer before the socket is closed.
const PLAIN_HTTP_LINGER: Duration = Duration::from_secs(2);

/// First byte of every TLS connection: a handshake record.
const TLS_HANDSHAKE_RECORD: u8 = 0x16;
const PLAIN_HTTP_BODY: &str = "Client sent an HTTP request to an HTTPS server.\n";

/// Serves `router` over TLS until `shutdown` fires, then stops accepting, lets in-flight requests
/// finish, closes idle connections and returns once every connection is gone (or after 25 s).
///
/// The HTTP version follows ALPN: `h2` gets HTTP/2, anything else (including no ALPN) HTTP/1.1.
/// A plain-HTTP request on this port is answered with `400 Bad Request` and closed.
pub async fn serve_https(
    listener: TcpListener,
    tls: Arc<rustls::ServerConfig>,
    router: Router,
    shutdown: CancellationToken,
) -> io::Result<()> {
    serve(listener, Some(TlsAcceptor::from(tls)), router, shutdown).await
}

/// Serves `router` over plain HTTP/1.1 (the admin port), with the same shutdown behaviour as
/// [`serve_https`].
pub async fn serve_http(
    listener: TcpListener,
    router: Router,
    shutdown: CancellationToken,
) -> io::Result<()> {
    serve(listener, None, router, shutdown).await
}

/// What every connection task needs; shared behind one `Arc`.
struct ServerContext {
    tls: Option<TlsAcceptor>,
    router: Router,
    http1: auto::Builder<TokioExecutor>,
    http2: auto::Builder<TokioExecutor>,
    shutdown: CancellationToken,
}

async fn serve(
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    router: Router,
    shutdown: CancellationToken,
) -> io::Result<()> {
    let local_addr = listener.local_addr()?;
    let (http1, http2) = http_builders();
    let context = Arc::new(ServerContext {
        tls,
        router,
        http1,
        http2,
        shutdown: shutdown.clone(),
    });
    let graceful = GracefulShutdown::new();
    let mut connections = JoinSet::new();

    loop {
        let (stream, peer) = tokio::select! {
            biased;
            () = shutdown.cancelled() => break,
            // Reap finished connection tasks so the set does not grow without bound.
            Some(finished) = connections.join_next(), if !connections.is_empty() => {
                if let Err(error) = finished {
                    tracing::warn!(%error, "connection task failed");
                }
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
        // The watcher is taken here, before the task runs, so a shutdown that happens while the
        // task is still in its TLS handshake is not missed.
        let watcher = graceful.watcher();
        connections.spawn(handle_connection(context.clone(), stream, peer, watcher));
    }

    // Closing the listener makes the kernel refuse new connections right away.
    drop(listener);
    tracing::info!(
        %local_addr,
        open_connections = graceful.count(),
        "stopped accepting; draining connections"
    );
    match timeout(SHUTDOWN_DEADLINE, graceful.shutdown()).await {
        Ok(()) => tracing::info!(%local_addr, "all connections closed"),
        Err(_) => tracing::warn!(
            %local_addr,
            remaining = connections.len(),
            "connections still open after the shutdown deadline; dropping them"
        ),
    }
    connections.shutdown().await;
    Ok(())
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

async fn handle_connection(
    context: Arc<ServerContext>,
    stream: TcpStream,
    peer: SocketAddr,
    watcher: Watcher,
) {
    // Admission answers are small single writes; don't let Nagle hold them back.
    if let Err(error) = stream.set_nodelay(true) {
        tracing::debug!(%peer, %error, "cannot set TCP_NODELAY");
    }
    let Some(acceptor) = &context.tls else {
        serve_http_connection(
            &context.http1,
            &context.router,
            TokioIo::new(stream),
            peer,
            watcher,
        )
        .await;
        return;
    };

    let handshake = timeout(TLS_HANDSHAKE_TIMEOUT, accept_tls(acceptor, stream, peer));
    let tls_stream = tokio::select! {
        // A connection still handshaking at shutdown has sent no request yet: just drop it.
        () = context.shutdown.cancelled() => return,
        outcome = handshake => match outcome {
            Ok(Some(tls_stream)) => tls_stream,
            Ok(None) => return,
            Err(_elapsed) => {
                tracing::debug!(%peer, "TLS handshake timed out");
                return;
            }
        },
    };
    let builder = match tls_stream.get_ref().1.alpn_protocol() {
        Some(b"h2") => &context.http2,
        _ => &context.http1,
    };
    serve_http_connection(
        builder,
        &context.router,
        TokioIo::new(tls_stream),
        peer,
        watcher,
    )
    .await;
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
    builder: &auto::Builder<TokioExecutor>,
    router: &Router,
    io: TokioIo<I>,
    peer: SocketAddr,
    watcher: Watcher,
) where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    // Handlers can ask for the peer address with axum's `ConnectInfo<SocketAddr>` extractor.
    let service = router
        .clone()
        .map_request(move |mut request: hyper::Request<Incoming>| {
            request.extensions_mut().insert(ConnectInfo(peer));
            request
        });
    let connection = builder.serve_connection(io, TowerToHyperService::new(service));
    if let Err(error) = watcher.watch(connection).await {
        tracing::debug!(%peer, %error, "connection closed with an error");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tls::certgen::ensure_cert_dir;
    use crate::tls::resolver::{ReloadableCert, server_config};
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
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let shutdown = CancellationToken::new();
        let task = tokio::spawn(serve_https(
            listener,
            server_config(resolver),
            test_router(),
            shutdown.clone(),
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
        // The idle connection is closed promptly (well before the 5 s header timeout).
        let closed_within = tokio::time::Instant::now();
        assert_eq!(read_until_closed(&mut idle).await, "");
        assert!(closed_within.elapsed() < Duration::from_secs(2));
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
