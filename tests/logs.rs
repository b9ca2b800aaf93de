//! The server's plain-format log, as `kubectl logs` or a file sees it: no terminal, so no colour
//! codes.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn free_port() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
}

fn ready(admin: SocketAddr) -> bool {
    let Ok(mut stream) = TcpStream::connect_timeout(&admin, Duration::from_millis(200)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    if stream
        .write_all(b"GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .is_err()
    {
        return false;
    }
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer.starts_with("HTTP/1.1 200")
}

#[test]
fn plain_logs_carry_no_colour_codes_when_not_on_a_terminal() {
    let certs = tempfile::tempdir().expect("tempdir");
    let log_path = certs.path().join("server.log");
    let log = std::fs::File::create(&log_path).expect("log file");
    let (https, admin) = (free_port(), free_port());
    let mut child = Command::new(env!("CARGO_BIN_EXE_kruise-webhook"))
        .args(["serve", "--listen", &https.to_string()])
        .args(["--admin-listen", &admin.to_string()])
        .arg("--cert-dir")
        .arg(certs.path())
        .args(["--log-format", "plain"])
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("start kruise-webhook");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !ready(admin) {
        assert!(Instant::now() < deadline, "server did not become ready");
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    let text = std::fs::read_to_string(&log_path).expect("log");
    assert!(
        text.contains("INFO"),
        "the server logged at info level: {text}"
    );
    assert!(
        !text.contains('\u{1b}'),
        "no ANSI escape codes in a log file: {text:?}"
    );
}
