//! The connection deadlines and the connection cap, with short deadlines so they run in seconds.

use super::*;

const HEAD: Duration = Duration::from_millis(400);
const PREFACE: Duration = Duration::from_millis(400);
const IDLE: Duration = Duration::from_millis(1500);
/// Slack for timers and scheduling on a loaded machine.
const SLACK: Duration = Duration::from_millis(500);

/// A server with the short deadlines above, its CA's PEM, and the directory of its certificate
/// (kept until the test ends).
async fn start_with_short_deadlines() -> (TestServer, Vec<u8>, tempfile::TempDir) {
    install_ring();
    let temp = tempfile::tempdir().unwrap();
    let (ca_pem, resolver) = generated_cert(temp.path(), "webhook.test");
    let options = ServeOptions {
        deadlines: ConnectionDeadlines {
            request_head: HEAD,
            http2_preface: PREFACE,
            idle: IDLE,
        },
        ..ServeOptions::new(TEST_MAX_CONNECTIONS)
    };
    (start_https_with(resolver, options).await, ca_pem, temp)
}

/// Waits up to `limit` for the server to close the connection; `false` if it is still open.
async fn closed_within<S: AsyncRead + Unpin>(stream: &mut S, limit: Duration) -> bool {
    let mut buffer = [0_u8; 256];
    loop {
        match timeout(limit, stream.read(&mut buffer)).await {
            Err(_still_open) => return false,
            Ok(Ok(0)) | Ok(Err(_)) => return true,
            // HTTP/2 frames the server sends before closing.
            Ok(Ok(_)) => continue,
        }
    }
}

async fn stop(server: TestServer) {
    server.shutdown.cancel();
    timeout(Duration::from_secs(5), server.task)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn an_idle_http1_connection_outlives_the_head_deadline_and_closes_after_the_idle_time() {
    let (server, ca_pem, _temp) = start_with_short_deadlines().await;
    let mut connection = raw_tls_client(server.addr, &ca_pem, &[b"http/1.1"]).await;
    assert!(
        get_over(&mut connection, "/hello")
            .await
            .starts_with("HTTP/1.1 200 OK")
    );

    // Idle for three head deadlines: still open, and the next request is served on it.
    tokio::time::sleep(HEAD * 3).await;
    assert!(!closed_within(&mut connection, Duration::ZERO).await);
    assert!(
        get_over(&mut connection, "/hello")
            .await
            .starts_with("HTTP/1.1 200 OK")
    );
    let answered = tokio::time::Instant::now();

    // Closed once idle for the idle time, not before.
    assert!(closed_within(&mut connection, IDLE + SLACK).await);
    assert!(answered.elapsed() >= IDLE - Duration::from_millis(50));
    stop(server).await;
}

#[tokio::test]
async fn a_request_head_is_due_a_deadline_after_its_first_byte() {
    let (server, ca_pem, _temp) = start_with_short_deadlines().await;
    let mut connection = raw_tls_client(server.addr, &ca_pem, &[b"http/1.1"]).await;
    assert!(
        get_over(&mut connection, "/hello")
            .await
            .starts_with("HTTP/1.1 200 OK")
    );
    tokio::time::sleep(HEAD * 2).await;

    // Half a head, then nothing: a slow client is cut a head deadline after its first byte.
    connection
        .write_all(b"GET /hello HTTP/1.1\r\n")
        .await
        .unwrap();
    let first_byte = tokio::time::Instant::now();
    assert!(closed_within(&mut connection, HEAD + SLACK).await);
    assert!(first_byte.elapsed() >= HEAD - Duration::from_millis(50));
    stop(server).await;
}

#[tokio::test]
async fn http2_without_its_preface_is_closed_at_the_deadline() {
    let (server, ca_pem, _temp) = start_with_short_deadlines().await;

    let mut silent = raw_tls_client(server.addr, &ca_pem, &[b"h2"]).await;
    let opened = tokio::time::Instant::now();
    assert!(closed_within(&mut silent, PREFACE + SLACK).await);
    assert!(opened.elapsed() >= PREFACE - Duration::from_millis(50));

    // Part of the preface is not enough.
    let mut partial = raw_tls_client(server.addr, &ca_pem, &[b"h2"]).await;
    partial.write_all(b"PRI * HTTP/2.0\r\n").await.unwrap();
    assert!(closed_within(&mut partial, PREFACE + SLACK).await);
    stop(server).await;
}

/// The client preface and an empty SETTINGS frame.
const HTTP2_CLIENT_START: &[u8] =
    b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00";
const FRAME_GOAWAY: u8 = 0x7;

/// Reads HTTP/2 frames until a GOAWAY; the time it took, or `None` if the connection closed or
/// `limit` passed first.
async fn wait_for_goaway<S: AsyncRead + Unpin>(
    stream: &mut S,
    limit: Duration,
) -> Option<Duration> {
    let started = tokio::time::Instant::now();
    let read_frames = async {
        let mut header = [0_u8; 9];
        loop {
            stream.read_exact(&mut header).await.ok()?;
            let length = u32::from_be_bytes([0, header[0], header[1], header[2]]) as usize;
            let mut payload = vec![0_u8; length];
            stream.read_exact(&mut payload).await.ok()?;
            if header[3] == FRAME_GOAWAY {
                return Some(started.elapsed());
            }
        }
    };
    timeout(limit, read_frames).await.ok().flatten()
}

#[tokio::test]
async fn an_idle_http2_connection_gets_a_goaway_and_its_client_moves_on() {
    let (server, ca_pem, _temp) = start_with_short_deadlines().await;

    let mut connection = raw_tls_client(server.addr, &ca_pem, &[b"h2"]).await;
    connection.write_all(HTTP2_CLIENT_START).await.unwrap();
    let after = wait_for_goaway(&mut connection, IDLE + SLACK)
        .await
        .expect("no GOAWAY on an idle HTTP/2 connection");
    assert!(
        after >= IDLE - Duration::from_millis(50),
        "GOAWAY after {after:?}"
    );
    // (This client does not answer the GOAWAY's PING; the server would drop it after a grace.)
    drop(connection);

    // A real client: a request, the idle time, and the next request on a new connection.
    let h2 = client(&ca_pem).build().unwrap();
    let url = format!("https://localhost:{}/hello", server.addr.port());
    let first = h2.get(&url).send().await.unwrap();
    assert_eq!(first.version(), reqwest::Version::HTTP_2);
    assert_eq!(first.text().await.unwrap(), "hello");
    tokio::time::sleep(IDLE + SLACK).await;
    assert_eq!(
        h2.get(&url).send().await.unwrap().text().await.unwrap(),
        "hello"
    );
    stop(server).await;
}

#[tokio::test]
async fn at_the_connection_cap_new_connections_wait_and_served_ones_keep_working() {
    install_ring();
    let temp = tempfile::tempdir().unwrap();
    let (ca_pem, resolver) = generated_cert(temp.path(), "webhook.test");
    let server = start_https_with(resolver, ServeOptions::new(2)).await;
    let mut first = raw_tls_client(server.addr, &ca_pem, &[b"http/1.1"]).await;
    let mut second = raw_tls_client(server.addr, &ca_pem, &[b"http/1.1"]).await;
    for connection in [&mut first, &mut second] {
        assert!(
            get_over(connection, "/hello")
                .await
                .starts_with("HTTP/1.1 200 OK")
        );
    }

    // A third connection is not accepted (its handshake is not answered) while two are open.
    let third = {
        let (addr, ca_pem) = (server.addr, ca_pem.clone());
        tokio::spawn(async move { raw_tls_client(addr, &ca_pem, &[b"http/1.1"]).await })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!third.is_finished(), "a connection over the cap was served");
    // The connections being served keep working.
    for connection in [&mut first, &mut second] {
        assert!(
            get_over(connection, "/hello")
                .await
                .starts_with("HTTP/1.1 200 OK")
        );
    }

    // One closes: the waiting connection is accepted and served.
    drop(first);
    let mut third = timeout(Duration::from_secs(5), third)
        .await
        .expect("the waiting connection was not accepted after one closed")
        .unwrap();
    assert!(
        get_over(&mut third, "/hello")
            .await
            .starts_with("HTTP/1.1 200 OK")
    );
    assert!(
        get_over(&mut second, "/hello")
            .await
            .starts_with("HTTP/1.1 200 OK")
    );
    stop(server).await;
}
