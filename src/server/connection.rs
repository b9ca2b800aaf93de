//! What a connection is doing, and the deadlines that follow from it.
//!
//! hyper's own HTTP/1.1 header-read timeout starts whenever it waits for a request, so it also
//! closes idle keep-alive connections — at the moment a client may be sending its next request on
//! one. Here the phases are told apart, as Go's net/http does:
//!
//! - **Reading a head** (HTTP/1.1): counted from the head's first byte (for the first request of a
//!   connection, from the end of the TLS handshake); a head not complete within
//!   [`ConnectionDeadlines::request_head`] fails the read and the connection closes.
//! - **Preface** (HTTP/2): the client's 24-byte preface must arrive within
//!   [`ConnectionDeadlines::http2_preface`] of the handshake.
//! - **Idle**: no request in flight and no head begun. After [`ConnectionDeadlines::idle`] an
//!   HTTP/1.1 connection is closed and an HTTP/2 one gets a GOAWAY. The idle time is longer than
//!   the kube-apiserver's own idle close (90 s), so for it the client always closes first.
//!
//! [`Activity`] holds the phase; [`DeadlineIo`] (the read side) and the service wrapper (requests
//! in flight) update it, and the pure functions [`read_deadline`] and [`idle_deadline`] turn it
//! into instants.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

/// Length of the HTTP/2 client connection preface (`PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n`).
pub const HTTP2_PREFACE_LEN: u64 = 24;

/// How long a connection may stay in each phase before it is closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionDeadlines {
    /// HTTP/1.1: a request head must be complete this long after its first byte.
    pub request_head: Duration,
    /// HTTP/2: the client preface must arrive this long after the TLS handshake (Go's servers
    /// allow 10 s).
    pub http2_preface: Duration,
    /// A connection with no request in flight for this long is closed (HTTP/1.1) or sent a GOAWAY
    /// (HTTP/2). Longer than the 90 s after which the kube-apiserver closes an idle connection.
    pub idle: Duration,
}

impl Default for ConnectionDeadlines {
    fn default() -> Self {
        ConnectionDeadlines {
            request_head: Duration::from_secs(5),
            http2_preface: Duration::from_secs(10),
            idle: Duration::from_secs(120),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    Http1,
    Http2,
}

/// One connection's phase, as the deadlines need it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Phase {
    pub protocol: Protocol,
    /// When the connection was handed to HTTP (after the TLS handshake).
    pub opened: Instant,
    /// Bytes read so far (after TLS), saturating.
    pub bytes_read: u64,
    /// Requests whose answer is not yet handed back.
    pub in_flight: usize,
    /// When the last request in flight was answered (or the connection opened).
    pub idle_since: Instant,
    /// HTTP/1.1: when the first byte of a request head not yet complete was read.
    pub head_started: Option<Instant>,
}

impl Phase {
    pub fn new(protocol: Protocol, opened: Instant) -> Self {
        Phase {
            protocol,
            opened,
            bytes_read: 0,
            in_flight: 0,
            idle_since: opened,
            // The client opened the connection to send a request: the first head is due now.
            head_started: (protocol == Protocol::Http1).then_some(opened),
        }
    }

    /// `bytes` more were read at `now`.
    pub fn on_read(&mut self, bytes: usize, now: Instant) {
        self.bytes_read = self.bytes_read.saturating_add(bytes as u64);
        if self.protocol == Protocol::Http1 && self.in_flight == 0 && self.head_started.is_none() {
            self.head_started = Some(now);
        }
    }

    /// A request head is complete and handed to the service.
    pub fn on_request_start(&mut self) {
        self.in_flight += 1;
        self.head_started = None;
    }

    /// The service answered (or dropped) a request at `now`.
    pub fn on_request_end(&mut self, now: Instant) {
        self.in_flight = self.in_flight.saturating_sub(1);
        if self.in_flight == 0 {
            self.idle_since = now;
        }
    }
}

/// When a read that finds no data must fail: a head or preface that is late. `None`: the read
/// may wait (idle, serving a request, or past the preface).
pub fn read_deadline(phase: &Phase, deadlines: &ConnectionDeadlines) -> Option<Instant> {
    match phase.protocol {
        Protocol::Http1 if phase.in_flight > 0 => None,
        Protocol::Http1 => phase
            .head_started
            .map(|start| start + deadlines.request_head),
        Protocol::Http2 if phase.bytes_read < HTTP2_PREFACE_LEN => {
            Some(phase.opened + deadlines.http2_preface)
        }
        Protocol::Http2 => None,
    }
}

/// When the connection counts as idle for too long, if nothing changes before. `None` while a
/// request is in flight or a head is being read.
pub fn idle_deadline(phase: &Phase, deadlines: &ConnectionDeadlines) -> Option<Instant> {
    (phase.in_flight == 0 && phase.head_started.is_none())
        .then(|| phase.idle_since + deadlines.idle)
}

/// The phase shared by the connection's reader, its service and its supervisor.
#[derive(Debug)]
pub struct Activity {
    phase: Mutex<Phase>,
    deadlines: ConnectionDeadlines,
}

impl Activity {
    pub fn new(protocol: Protocol, deadlines: ConnectionDeadlines) -> Arc<Self> {
        Arc::new(Activity {
            phase: Mutex::new(Phase::new(protocol, Instant::now())),
            deadlines,
        })
    }

    fn phase(&self) -> MutexGuard<'_, Phase> {
        // The phase is plain data; a panic elsewhere cannot leave it half-updated.
        self.phase
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Marks a request in flight until the returned guard is dropped.
    pub fn request_started(self: &Arc<Self>) -> RequestInFlight {
        self.phase().on_request_start();
        RequestInFlight {
            activity: self.clone(),
        }
    }

    pub fn idle_deadline(&self) -> Option<Instant> {
        idle_deadline(&self.phase(), &self.deadlines)
    }

    pub fn idle_timeout(&self) -> Duration {
        self.deadlines.idle
    }

    fn on_read(&self, bytes: usize) {
        self.phase().on_read(bytes, Instant::now());
    }

    fn read_deadline(&self) -> Option<Instant> {
        read_deadline(&self.phase(), &self.deadlines)
    }
}

/// A request being served; ends (and may start the idle time) when dropped, answered or not.
#[derive(Debug)]
pub struct RequestInFlight {
    activity: Arc<Activity>,
}

impl Drop for RequestInFlight {
    fn drop(&mut self) {
        self.activity.phase().on_request_end(Instant::now());
    }
}

/// The connection's stream, which records what it reads and fails a read that waits past
/// [`read_deadline`].
pub struct DeadlineIo<I> {
    inner: I,
    activity: Arc<Activity>,
    /// Armed at the current read deadline while a read waits.
    timer: Pin<Box<Sleep>>,
    armed_for: Option<Instant>,
}

impl<I> DeadlineIo<I> {
    pub fn new(inner: I, activity: Arc<Activity>) -> Self {
        DeadlineIo {
            inner,
            activity,
            timer: Box::pin(tokio::time::sleep(Duration::ZERO)),
            armed_for: None,
        }
    }
}

impl<I: AsyncRead + Unpin> AsyncRead for DeadlineIo<I> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        let before = buf.filled().len();
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                let read = buf.filled().len() - before;
                if read > 0 {
                    this.activity.on_read(read);
                }
                this.armed_for = None;
                return Poll::Ready(Ok(()));
            }
            Poll::Ready(Err(error)) => return Poll::Ready(Err(error)),
            Poll::Pending => {}
        }
        let Some(deadline) = this.activity.read_deadline() else {
            this.armed_for = None;
            return Poll::Pending;
        };
        if this.armed_for != Some(deadline) {
            this.timer.as_mut().reset(deadline);
            this.armed_for = Some(deadline);
        }
        ready!(this.timer.as_mut().poll(cx));
        Poll::Ready(Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "request head or HTTP/2 preface not received in time",
        )))
    }
}

impl<I: AsyncWrite + Unpin> AsyncWrite for DeadlineIo<I> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests;
