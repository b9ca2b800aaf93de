use super::*;

const SECOND: Duration = Duration::from_secs(1);

fn deadlines() -> ConnectionDeadlines {
    ConnectionDeadlines::default()
}

#[test]
fn the_first_http1_head_is_due_from_the_handshake() {
    let opened = Instant::now();
    let phase = Phase::new(Protocol::Http1, opened);
    assert_eq!(
        read_deadline(&phase, &deadlines()),
        Some(opened + 5 * SECOND)
    );
    assert_eq!(idle_deadline(&phase, &deadlines()), None);
}

#[test]
fn an_http1_head_is_counted_from_its_first_byte_not_from_the_idle_start() {
    let opened = Instant::now();
    let mut phase = Phase::new(Protocol::Http1, opened);
    phase.on_read(300, opened + SECOND);
    phase.on_request_start();
    // Serving: reads (the body) may wait, and the connection is not idle.
    assert_eq!(read_deadline(&phase, &deadlines()), None);
    assert_eq!(idle_deadline(&phase, &deadlines()), None);
    phase.on_read(4096, opened + 2 * SECOND);
    assert_eq!(read_deadline(&phase, &deadlines()), None);

    let answered = opened + 3 * SECOND;
    phase.on_request_end(answered);
    // Idle: no read deadline, closed only after the idle time.
    assert_eq!(read_deadline(&phase, &deadlines()), None);
    assert_eq!(
        idle_deadline(&phase, &deadlines()),
        Some(answered + 120 * SECOND)
    );

    // The next head starts 100 s later: due 5 s after its first byte, and no longer idle.
    let first_byte = answered + 100 * SECOND;
    phase.on_read(10, first_byte);
    assert_eq!(
        read_deadline(&phase, &deadlines()),
        Some(first_byte + 5 * SECOND)
    );
    assert_eq!(idle_deadline(&phase, &deadlines()), None);
    // More bytes of the same head do not move the deadline.
    phase.on_read(10, first_byte + 4 * SECOND);
    assert_eq!(
        read_deadline(&phase, &deadlines()),
        Some(first_byte + 5 * SECOND)
    );
    phase.on_request_start();
    assert_eq!(read_deadline(&phase, &deadlines()), None);
}

#[test]
fn the_idle_time_outlasts_the_apiservers_idle_close() {
    assert!(deadlines().idle > 90 * SECOND);
    assert!(deadlines().request_head < deadlines().idle);
}

#[test]
fn overlapping_requests_end_the_idle_time_only_when_the_last_ends() {
    let opened = Instant::now();
    let mut phase = Phase::new(Protocol::Http2, opened);
    phase.on_read(HTTP2_PREFACE_LEN as usize, opened);
    phase.on_request_start();
    phase.on_request_start();
    phase.on_request_end(opened + SECOND);
    assert_eq!(idle_deadline(&phase, &deadlines()), None);
    phase.on_request_end(opened + 2 * SECOND);
    assert_eq!(
        idle_deadline(&phase, &deadlines()),
        Some(opened + 122 * SECOND)
    );
}

#[test]
fn http2_needs_its_preface_in_time_and_then_only_idles() {
    let opened = Instant::now();
    let mut phase = Phase::new(Protocol::Http2, opened);
    let preface_due = Some(opened + 10 * SECOND);
    assert_eq!(read_deadline(&phase, &deadlines()), preface_due);
    // Part of the preface is not enough.
    phase.on_read(23, opened + SECOND);
    assert_eq!(read_deadline(&phase, &deadlines()), preface_due);
    phase.on_read(1, opened + 2 * SECOND);
    assert_eq!(read_deadline(&phase, &deadlines()), None);
    // HTTP/2 has no head phase: a connection without streams is idle since it opened.
    assert_eq!(phase.head_started, None);
    assert_eq!(
        idle_deadline(&phase, &deadlines()),
        Some(opened + 120 * SECOND)
    );
}

#[tokio::test]
async fn a_request_guard_ends_the_request_when_dropped() {
    let activity = Activity::new(Protocol::Http2, deadlines());
    let before = activity.idle_deadline().unwrap();
    let in_flight = activity.request_started();
    assert_eq!(activity.idle_deadline(), None);
    tokio::time::sleep(Duration::from_millis(5)).await;
    drop(in_flight);
    assert!(activity.idle_deadline().unwrap() > before);
}
