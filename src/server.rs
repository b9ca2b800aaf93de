//! Accept loops for the HTTPS admission port and the plain-HTTP admin port.
//!
//! Hand-rolled on tokio-rustls + hyper-util so each connection gets: TCP_NODELAY, its own task (a
//! slow handshake never blocks `accept`), a TLS handshake deadline, the deadlines of
//! [`connection`] (a request head counted from its first byte, the HTTP/2 preface, an idle time
//! longer than the apiserver's), a place under the connection cap, and a shutdown that loses no
//! request:
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
//!
//! At the connection cap the server stops accepting: new connections wait in the kernel's listen
//! queue until one closes, and no connection being served is cut to make room.

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
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio::time::{Instant, timeout};
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

pub mod connection;

pub use connection::ConnectionDeadlines;
use connection::{Activity, DeadlineIo, Protocol};

/// A client must finish the TLS handshake within this time.
const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
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
/// A connection sent a GOAWAY (HTTP/2) or closed for idleness (HTTP/1.1) that is still not done
/// after this long is dropped: its peer does not read.
const IDLE_CLOSE_GRACE: Duration = Duration::from_secs(10);
/// Connections the admin port serves at once: probes and scrapes need a handful.
pub const ADMIN_MAX_CONNECTIONS: usize = 128;
/// At the connection cap, the warning is repeated at most this often.
const CAP_WARNING_INTERVAL: Duration = Duration::from_secs(60);
/// How long a plain-HTTP client gets to read our 400 answer before the socket is closed.
const PLAIN_HTTP_LINGER: Duration = Duration::from_secs(2);

/// First byte of every TLS connection: a handshake record.
const TLS_HANDSHAKE_RECORD: u8 = 0x16;
const PLAIN_HTTP_BODY: &str = "Client sent an HTTP request to an HTTPS server.\n";

/// How a port serves its connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServeOptions {
    /// After the shutdown token fires, keep accepting and serving this long (the shutdown delay).
    pub accept_for: Duration,
    /// Connections served at once; more wait in the listen queue.
    pub max_connections: usize,
    pub deadlines: ConnectionDeadlines,
}

impl ServeOptions {
    /// At most `max_connections` at once, the default deadlines, no shutdown delay.
    pub fn new(max_connections: usize) -> Self {
        ServeOptions {
            accept_for: Duration::ZERO,
            max_connections,
            deadlines: ConnectionDeadlines::default(),
        }
    }
}

/// Serves `router` over TLS. Once `shutdown` fires, keeps accepting and serving for
/// `options.accept_for`, then drains as described in the module documentation and returns when
/// every connection is gone.
///
/// The HTTP version follows ALPN: `h2` gets HTTP/2, anything else (including no ALPN) HTTP/1.1.
/// A plain-HTTP request on this port is answered with `400 Bad Request` and closed.
pub async fn serve_https(
    listener: TcpListener,
    tls: Arc<rustls::ServerConfig>,
    router: Router,
    shutdown: CancellationToken,
    options: ServeOptions,
) -> io::Result<()> {
    serve(
        listener,
        Some(TlsAcceptor::from(tls)),
        router,
        shutdown,
        options,
    )
    .await
}

/// Serves `router` over plain HTTP/1.1 (the admin port), at most [`ADMIN_MAX_CONNECTIONS`] at
/// once; once `shutdown` fires, stops accepting at once and drains like [`serve_https`].
pub async fn serve_http(
    listener: TcpListener,
    router: Router,
    shutdown: CancellationToken,
) -> io::Result<()> {
    let options = ServeOptions::new(ADMIN_MAX_CONNECTIONS);
    serve(listener, None, router, shutdown, options).await
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
    deadlines: ConnectionDeadlines,
}

async fn serve(
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    router: Router,
    shutdown: CancellationToken,
    options: ServeOptions,
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
        deadlines: options.deadlines,
    });
    let places = Arc::new(Semaphore::new(options.max_connections));
    let mut connections = JoinSet::new();
    let accept_for = options.accept_for;
    let stop_accepting = async {
        shutdown.cancelled().await;
        if !accept_for.is_zero() {
            tracing::info!(%local_addr, ?accept_for, "shutting down: still accepting for the shutdown delay");
            tokio::time::sleep(accept_for).await;
        }
    };
    tokio::pin!(stop_accepting);

    let mut last_cap_warning: Option<Instant> = None;

    loop {
        // A place first, then a connection: at the cap, connections wait in the listen queue.
        let place = match places.clone().try_acquire_owned() {
            Ok(place) => place,
            Err(_) => {
                if last_cap_warning.is_none_or(|at| at.elapsed() >= CAP_WARNING_INTERVAL) {
                    last_cap_warning = Some(Instant::now());
                    tracing::warn!(
                        %local_addr,
                        max_connections = options.max_connections,
                        "connection limit reached; new connections wait until one closes"
                    );
                }
                tokio::select! {
                    biased;
                    () = &mut stop_accepting => break,
                    place = places.clone().acquire_owned() => place.expect("the semaphore is never closed"),
                }
            }
        };
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
        let context = context.clone();
        connections.spawn(async move {
            handle_connection(context, stream, peer).await;
            drop(place);
        });
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
    // hyper's header-read timeout would also close idle connections; `connection` keeps the
    // request-head deadline instead.
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(None)
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
        serve_http_connection(&context, Protocol::Http1, stream, peer).await;
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
    serve_http_connection(&context, protocol, tls_stream, peer).await;
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
    io: I,
    peer: SocketAddr,
) where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (builder, go_away) = match protocol {
        Protocol::Http1 => (&context.http1, &context.close_idle),
        Protocol::Http2 => (&context.http2, &context.closing),
    };
    let activity = Activity::new(protocol, context.deadlines);
    let io = TokioIo::new(DeadlineIo::new(io, activity.clone()));
    let closing = context.closing.clone();
    let requests = activity.clone();
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
        })
        .map_future(move |answer| {
            let in_flight = requests.request_started();
            async move {
                let answer = answer.await;
                drop(in_flight);
                answer
            }
        });
    let connection = builder.serve_connection(io, TowerToHyperService::new(service));
    tokio::pin!(connection);
    let idle_check = tokio::time::sleep(activity.idle_timeout());
    tokio::pin!(idle_check);
    let outcome = loop {
        tokio::select! {
            outcome = connection.as_mut() => break outcome,
            () = go_away.cancelled() => {
                // HTTP/1.1: closes an idle connection, or the busy one after its answer.
                // HTTP/2: GOAWAY; open streams finish.
                connection.as_mut().graceful_shutdown();
                break connection.await;
            }
            () = idle_check.as_mut() => {
                // The idle deadline only moves later while the connection is used: check again
                // then, or close now.
                let now = Instant::now();
                match activity.idle_deadline() {
                    Some(deadline) if deadline <= now => {
                        tracing::debug!(%peer, ?protocol, "closing an idle connection");
                        connection.as_mut().graceful_shutdown();
                        break timeout(IDLE_CLOSE_GRACE, connection.as_mut())
                            .await
                            .unwrap_or(Ok(()));
                    }
                    Some(deadline) => idle_check.as_mut().reset(deadline),
                    None => idle_check.as_mut().reset(now + activity.idle_timeout()),
                }
            }
        }
    };
    if let Err(error) = outcome {
        tracing::debug!(%peer, %error, "connection closed with an error");
    }
}

#[cfg(test)]
mod tests;
