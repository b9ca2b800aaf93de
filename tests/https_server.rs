//! The real binary, serving real HTTPS on loopback, driven by real clients (reqwest and curl).

use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Pod;
use serde_json::{Value, json};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
const EXAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/examples");

/// A running `kruise-webhook serve`, killed on drop.
struct Server {
    child: Child,
    https: SocketAddr,
    admin: SocketAddr,
    cert_dir: PathBuf,
    sidecarsets: tempfile::TempDir,
    /// Owns the certificate directory unless the test does.
    _owned_cert_dir: Option<tempfile::TempDir>,
}

fn free_port() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
}

impl Server {
    fn start() -> Server {
        let owned = tempfile::tempdir().expect("tempdir");
        let mut server = Self::start_in(owned.path());
        server._owned_cert_dir = Some(owned);
        server
    }

    fn start_in(cert_dir: &Path) -> Server {
        let sidecarsets = tempfile::tempdir().expect("tempdir");
        for entry in std::fs::read_dir(EXAMPLES).expect("examples") {
            let path = entry.expect("entry").path();
            if !path.is_file() {
                continue; // deploy/examples/workloads holds no SidecarSets
            }
            std::fs::copy(&path, sidecarsets.path().join(path.file_name().unwrap())).expect("copy");
        }
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
            .arg(cert_dir)
            .arg("--sidecarsets")
            .arg(sidecarsets.path())
            .args(["--reload-interval", "200ms", "--baseline-route"])
            // Tests stop the server at once; the delay is tested in tests/shutdown.rs.
            .args(["--shutdown-delay", "0"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start kruise-webhook");
        let server = Server {
            child,
            https,
            admin,
            cert_dir: cert_dir.to_path_buf(),
            sidecarsets,
            _owned_cert_dir: None,
        };
        server.wait_ready();
        server
    }

    fn wait_ready(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if http_get(self.admin, "/readyz").is_some_and(|(status, _)| status == 200) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("server did not become ready");
    }

    fn ca(&self) -> PathBuf {
        self.cert_dir.join("ca.crt")
    }

    fn url(&self, path: &str) -> String {
        format!("https://localhost:{}{path}", self.https.port())
    }

    fn client(&self) -> reqwest::Client {
        let ca = std::fs::read(self.ca()).expect("ca.crt");
        reqwest::Client::builder()
            .add_root_certificate(reqwest::Certificate::from_pem(&ca).expect("CA PEM"))
            .resolve("localhost", self.https)
            .build()
            .expect("client")
    }

    fn terminate(mut self) -> std::process::ExitStatus {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "server did not exit after SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Minimal HTTP/1.1 GET over a plain socket, for the admin port.
fn http_get(addr: SocketAddr, path: &str) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(1)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut response = String::new();
    std::io::Read::read_to_string(&mut stream, &mut response).ok()?;
    let status = response.split_whitespace().nth(1)?.parse().ok()?;
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())?;
    Some((status, body))
}

fn fixture(name: &str) -> Value {
    let text = std::fs::read_to_string(Path::new(FIXTURES).join(name)).expect("fixture");
    serde_json::from_str(&text).expect("fixture JSON")
}

/// Applies the review response's patch to the request object, as the apiserver does.
fn patched_object(request: &Value, response: &Value) -> Value {
    let mut object = request["request"]["object"].clone();
    if let Some(patch) = response["response"]["patch"].as_str() {
        assert_eq!(response["response"]["patchType"], "JSONPatch");
        let bytes = base64_simd::STANDARD
            .decode_to_vec(patch)
            .expect("base64 patch");
        let ops: json_patch::Patch = serde_json::from_slice(&bytes).expect("JSON patch");
        json_patch::patch(&mut object, &ops).expect("patch applies to the raw object");
    }
    object
}

async fn post_review(client: &reqwest::Client, url: &str, body: &Value) -> Value {
    let response = client
        .post(url)
        .header("content-type", "application/json")
        .json(body)
        .send()
        .await
        .expect("request");
    assert_eq!(response.status(), 200);
    response.json().await.expect("JSON review")
}

#[tokio::test]
async fn injects_the_example_sidecar_over_https() {
    let server = Server::start();
    let client = server.client();
    let review = fixture("pod-web-log-agent.json");
    let answer = post_review(&client, &server.url("/mutate-pod?timeout=10s"), &review).await;
    assert_eq!(answer["apiVersion"], "admission.k8s.io/v1");
    assert_eq!(answer["kind"], "AdmissionReview");
    assert_eq!(answer["response"]["uid"], review["request"]["uid"]);
    assert_eq!(answer["response"]["allowed"], true);

    let pod: Pod = serde_json::from_value(patched_object(&review, &answer)).expect("a Pod");
    let spec = pod.spec.expect("spec");
    let names: Vec<_> = spec.containers.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, vec!["app", "log-agent"]);
    let agent = &spec.containers[1];
    let env: Vec<_> = agent
        .env
        .iter()
        .flatten()
        .map(|e| (e.name.as_str(), e.value.as_deref().unwrap_or("")))
        .collect();
    assert_eq!(env, vec![("IS_INJECTED", "true"), ("TZ", "Europe/Berlin")]);
    let mounts: Vec<_> = agent
        .volume_mounts
        .iter()
        .flatten()
        .map(|m| (m.name.as_str(), m.mount_path.as_str()))
        .collect();
    assert_eq!(
        mounts,
        vec![
            ("log-agent-config", "/fluent-bit/etc"),
            ("logs", "/var/log/app"),
            (
                "kube-api-access-x7k2p",
                "/var/run/secrets/kubernetes.io/serviceaccount"
            ),
        ]
    );
    let volumes: Vec<_> = spec
        .volumes
        .iter()
        .flatten()
        .map(|v| v.name.as_str())
        .collect();
    assert_eq!(
        volumes,
        vec!["logs", "kube-api-access-x7k2p", "log-agent-config"]
    );
    let annotations = pod.metadata.annotations.expect("annotations");
    assert_eq!(
        annotations["kruise.io/sidecarset-injected-list"],
        "log-agent"
    );
    let hashes: Value = serde_json::from_str(&annotations["kruise.io/sidecarset-hash"]).unwrap();
    assert_eq!(hashes["log-agent"]["sidecarList"], json!(["log-agent"]));
    assert_eq!(hashes["log-agent"]["hash"].as_str().map(str::len), Some(64));
    assert!(annotations.contains_key("kruise.io/sidecarset-hash-without-image"));
}

#[tokio::test]
async fn curl_posts_a_fixture_and_gets_a_patch() {
    let server = Server::start();
    let output = Command::new("curl")
        .args([
            "--silent",
            "--show-error",
            "--fail",
            "--http1.1",
            "--cacert",
        ])
        .arg(server.ca())
        .args(["-H", "Content-Type: application/json", "--data-binary"])
        .arg(format!("@{FIXTURES}/pod-web-log-agent.json"))
        .arg(server.url("/mutate-pod?timeout=10s"))
        .output()
        .expect("curl runs");
    assert!(
        output.status.success(),
        "curl: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let answer: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    let review = fixture("pod-web-log-agent.json");
    let pod = patched_object(&review, &answer);
    assert_eq!(pod["spec"]["containers"][1]["name"], "log-agent");
    assert_eq!(
        pod["spec"]["containers"][1]["env"][1],
        json!({"name": "TZ", "value": "Europe/Berlin"})
    );
}

#[tokio::test]
async fn keep_alive_http2_versions_and_dry_run() {
    let server = Server::start();
    let client = server.client();
    // Many requests over one pooled HTTP/2 (ALPN) connection, each answered.
    for _ in 0..20 {
        let answer = post_review(
            &client,
            &server.url("/mutate-pod"),
            &fixture("pod-no-match.json"),
        )
        .await;
        assert_eq!(answer["response"]["allowed"], true);
        assert!(answer["response"].get("patch").is_none());
    }
    // HTTP/1.1 keep-alive, the way the apiserver talks.
    let http1 = reqwest::Client::builder()
        .add_root_certificate(
            reqwest::Certificate::from_pem(&std::fs::read(server.ca()).unwrap()).unwrap(),
        )
        .resolve("localhost", server.https)
        .http1_only()
        .build()
        .unwrap();
    for _ in 0..20 {
        let answer = post_review(
            &http1,
            &server.url("/mutate-pod?timeout=5s"),
            &fixture("pod-shop-proxy-priority.json"),
        )
        .await;
        assert!(answer["response"]["patch"].is_string());
    }
    // A v1beta1 review is answered in v1beta1.
    let answer = post_review(
        &client,
        &server.url("/mutate-pod"),
        &fixture("pod-shop-v1beta1-review.json"),
    )
    .await;
    assert_eq!(answer["apiVersion"], "admission.k8s.io/v1beta1");
    // Dry run: the same answer (apart from the pod's name, which is fixed here).
    let dry = fixture("pod-web-dry-run.json");
    let answer = post_review(&client, &server.url("/mutate-pod"), &dry).await;
    let pod = patched_object(&dry, &answer);
    assert_eq!(pod["spec"]["containers"][1]["name"], "log-agent");
}

#[tokio::test]
async fn bad_input_gets_clear_answers_and_the_server_keeps_serving() {
    let server = Server::start();
    let client = server.client();
    let post = |path: &'static str, content_type: &'static str, body: Vec<u8>| {
        let client = client.clone();
        let url = server.url(path);
        async move {
            let response = client
                .post(url)
                .header("content-type", content_type)
                .body(body)
                .send()
                .await
                .expect("request");
            let status = response.status().as_u16();
            (status, response.text().await.unwrap_or_default())
        }
    };
    let json = "application/json";

    let (status, body) = post("/mutate-pod", json, b"this is not json".to_vec()).await;
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("not a JSON AdmissionReview"), "{body}");

    let (status, body) = post(
        "/mutate-pod",
        "text/plain",
        fixture_bytes("pod-web-log-agent.json"),
    )
    .await;
    assert_eq!(status, 415, "{body}");

    let (status, body) = post(
        "/mutate-pod",
        json,
        br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}"#.to_vec(),
    )
    .await;
    assert_eq!(status, 400);
    assert!(body.contains("no request"), "{body}");

    let mut null_object = fixture("pod-web-log-agent.json");
    null_object["request"]["object"] = Value::Null;
    let (status, body) = post(
        "/mutate-pod",
        json,
        serde_json::to_vec(&null_object).unwrap(),
    )
    .await;
    assert_eq!(status, 200);
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(answer["response"]["uid"], null_object["request"]["uid"]);
    assert_eq!(answer["response"]["allowed"], false);
    assert!(
        answer["response"]["status"]["message"]
            .as_str()
            .unwrap()
            .contains("request.object: Required value")
    );

    let mut deployment = fixture("pod-web-log-agent.json");
    deployment["request"]["kind"] = json!({"group": "apps", "version": "v1", "kind": "Deployment"});
    let (_, body) = post(
        "/mutate-pod",
        json,
        serde_json::to_vec(&deployment).unwrap(),
    )
    .await;
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(answer["response"]["allowed"], false);
    assert!(
        answer["response"]["status"]["message"]
            .as_str()
            .unwrap()
            .contains("Deployment.apps"),
        "{body}"
    );

    let mut wrong_type = fixture("pod-web-log-agent.json");
    wrong_type["request"]["object"]["spec"]["containers"] = json!("nginx");
    let (_, body) = post(
        "/mutate-pod",
        json,
        serde_json::to_vec(&wrong_type).unwrap(),
    )
    .await;
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(answer["response"]["allowed"], false);
    assert_eq!(answer["response"]["status"]["code"], 400);
    assert!(
        answer["response"]["status"]["message"]
            .as_str()
            .unwrap()
            .starts_with("request.object.spec.containers"),
        "{body}"
    );

    let (_, body) = post("/mutate-pod", json, fixture_bytes("pod-bad-priority.json")).await;
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(answer["response"]["allowed"], false);
    assert!(
        answer["response"]["status"]["message"]
            .as_str()
            .unwrap()
            .contains("\"helper\""),
        "{body}"
    );

    let huge = vec![b' '; 10 * 1024 * 1024];
    let (status, _) = post("/mutate-pod", json, huge).await;
    assert_eq!(status, 413);

    let (status, _) = post("/nope", json, fixture_bytes("pod-no-match.json")).await;
    assert_eq!(status, 404);

    // Plain HTTP on the TLS port.
    let mut plain = TcpStream::connect(server.https).unwrap();
    plain
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    write!(
        plain,
        "POST /mutate-pod HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{{}}"
    )
    .unwrap();
    let mut answer = String::new();
    let _ = std::io::Read::read_to_string(&mut plain, &mut answer);
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer:?}");

    // Still serving.
    let answer = post_review(
        &client,
        &server.url("/mutate-pod"),
        &fixture("pod-web-log-agent.json"),
    )
    .await;
    assert_eq!(answer["response"]["allowed"], true);
}

fn fixture_bytes(name: &str) -> Vec<u8> {
    std::fs::read(Path::new(FIXTURES).join(name)).expect("fixture")
}

#[tokio::test]
async fn sidecarset_webhook_defaults_and_hashes() {
    let server = Server::start();
    let review = fixture("sidecarset-create.json");
    let answer = post_review(
        &server.client(),
        &server.url("/mutate-apps-kruise-io-sidecarset"),
        &review,
    )
    .await;
    let set = patched_object(&review, &answer);
    let annotations = &set["metadata"]["annotations"];
    // The spec's golden example (§13.0): defaults then hashes, byte-identical to OpenKruise.
    assert_eq!(
        annotations["kruise.io/sidecarset-hash"],
        "dzw7fx282v47vxxddxb4d44448bcvz2875xx89x4bcxww8f9xf9ff4d45v22vc4c"
    );
    assert_eq!(
        annotations["kruise.io/sidecarset-hash-without-image"],
        "v4497x7v99fdbcd9dfvcc2xd759zcv27fxb4c68fd9f8b52b4f77c72ff988cwbd"
    );
    assert_eq!(
        set["spec"]["updateStrategy"],
        json!({"type": "RollingUpdate", "partition": 0, "maxUnavailable": 1})
    );
    assert_eq!(
        set["spec"]["volumes"][1],
        json!({"name": "unused", "emptyDir": {}})
    );
    // Running it again on its own output changes nothing.
    let mut again = review.clone();
    again["request"]["object"] = set;
    let answer = post_review(
        &server.client(),
        &server.url("/mutate-apps-kruise-io-sidecarset"),
        &again,
    )
    .await;
    assert!(answer["response"].get("patch").is_none(), "{answer}");
}

/// The workload webhooks: defaults stored by the mutating ones, OpenKruise's status codes and
/// Kubernetes-style messages from the validating ones, on the defaulted form of the object.
#[tokio::test]
async fn workload_webhooks_default_validate_and_protect() {
    let server = Server::start();
    let client = server.client();

    // A CloneSet as users write it: the mutating webhook fills OpenKruise's defaults ...
    let review = fixture("cloneset-create.json");
    let answer = post_review(
        &client,
        &server.url("/mutate-apps-kruise-io-cloneset"),
        &review,
    )
    .await;
    let set = patched_object(&review, &answer);
    assert_eq!(set["spec"]["updateStrategy"]["partition"], 0);
    assert_eq!(set["spec"]["updateStrategy"]["maxUnavailable"], 1, "kept");
    assert_eq!(set["spec"]["updateStrategy"]["maxSurge"], 0);
    assert_eq!(
        set["spec"]["updateStrategy"]["inPlaceUpdateStrategy"],
        json!({})
    );
    assert_eq!(set["spec"]["revisionHistoryLimit"], 10);
    assert_eq!(set["spec"]["template"]["spec"]["restartPolicy"], "Always");
    assert_eq!(
        set["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"],
        "IfNotPresent"
    );
    // ... and the validating webhook accepts it, with or without them.
    for object in [review["request"]["object"].clone(), set] {
        let mut request = review.clone();
        request["request"]["object"] = object;
        let answer = post_review(
            &client,
            &server.url("/validate-apps-kruise-io-cloneset?timeout=10s"),
            &request,
        )
        .await;
        assert_eq!(answer["response"]["allowed"], true, "{answer}");
    }

    // Deletion protection: 403 with OpenKruise's message.
    let review = fixture("cloneset-delete-protected.json");
    let answer = post_review(
        &client,
        &server.url("/validate-apps-kruise-io-cloneset"),
        &review,
    )
    .await;
    assert_eq!(answer["response"]["allowed"], false);
    assert_eq!(answer["response"]["status"]["code"], 403);
    assert_eq!(
        answer["response"]["status"]["message"],
        "forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Always"
    );

    // Every field error in one answer, 422, Kubernetes' wording.
    let review = fixture("statefulset-bad-retention.json");
    let answer = post_review(
        &client,
        &server.url("/validate-apps-kruise-io-statefulset"),
        &review,
    )
    .await;
    assert_eq!(answer["response"]["allowed"], false);
    assert_eq!(answer["response"]["status"]["code"], 422);
    let message = answer["response"]["status"]["message"].as_str().unwrap();
    assert!(
        message.contains(
            r#"spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: "Keep": supported values: "Retain", "Delete""#
        ),
        "{message}"
    );
    assert!(
        message.contains("spec.updateStrategy.rollingUpdate.maxUnavailable"),
        "{message}"
    );

    // A DaemonSet refused at creation gets OpenKruise's 500; the deprecated `Surging` type is
    // turned into `Standard` with a surge by defaulting, so the fixture itself passes.
    let review = fixture("daemonset-create.json");
    let answer = post_review(
        &client,
        &server.url("/validate-apps-kruise-io-daemonset"),
        &review,
    )
    .await;
    assert_eq!(answer["response"]["allowed"], true, "{answer}");
    let mut bad = review.clone();
    bad["request"]["object"]["spec"]["lifecycle"]["inPlaceUpdate"] = json!({});
    let answer = post_review(
        &client,
        &server.url("/validate-apps-kruise-io-daemonset"),
        &bad,
    )
    .await;
    assert_eq!(answer["response"]["allowed"], false, "{answer}");
    assert_eq!(answer["response"]["status"]["code"], 500);
    assert_eq!(
        answer["response"]["status"]["message"],
        "spec.lifecycle.inPlaceUpdate: Forbidden: inPlaceUpdate hook has not supported yet"
    );

    // A request of another kind is a misconfigured rule: 400, naming the kind.
    let answer = post_review(
        &client,
        &server.url("/validate-apps-kruise-io-daemonset"),
        &review_of_kind(&review, "CloneSet"),
    )
    .await;
    assert_eq!(answer["response"]["status"]["code"], 400);
    assert!(
        answer["response"]["status"]["message"]
            .as_str()
            .unwrap()
            .contains("Kind=CloneSet")
    );
}

fn review_of_kind(review: &Value, kind: &str) -> Value {
    let mut review = review.clone();
    review["request"]["kind"]["kind"] = json!(kind);
    review
}

#[tokio::test]
async fn admin_endpoints_and_metrics() {
    let server = Server::start();
    assert_eq!(http_get(server.admin, "/livez").map(|r| r.0), Some(200));
    assert_eq!(http_get(server.admin, "/readyz").map(|r| r.0), Some(200));
    post_review(
        &server.client(),
        &server.url("/mutate-pod"),
        &fixture("pod-web-log-agent.json"),
    )
    .await;
    let (status, metrics) = http_get(server.admin, "/metrics").expect("metrics");
    assert_eq!(status, 200);
    assert!(metrics.contains("admission_requests_total"), "{metrics}");
    assert!(metrics.contains("webhook=\"mutate-pod\""), "{metrics}");
    assert!(metrics.contains("result=\"patched\""), "{metrics}");
    assert!(
        metrics.contains("admission_duration_seconds_bucket"),
        "{metrics}"
    );
    assert!(
        metrics.trim_end().ends_with("# EOF"),
        "OpenMetrics ends with # EOF"
    );
}

#[tokio::test]
async fn sidecarset_directory_changes_apply_without_restart() {
    let server = Server::start();
    let client = server.client();
    let review = fixture("pod-no-match.json");
    let answer = post_review(&client, &server.url("/mutate-pod"), &review).await;
    assert!(answer["response"].get("patch").is_none());

    std::fs::write(
        server.sidecarsets.path().join("api.yaml"),
        "apiVersion: apps.kruise.io/v1alpha1\nkind: SidecarSet\nmetadata: {name: api-helper}\n\
         spec:\n  selector: {matchLabels: {app: api}}\n  containers: [{name: helper, image: busybox:1.36}]\n",
    )
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let answer = post_review(&client, &server.url("/mutate-pod"), &review).await;
        if answer["response"]["patch"].is_string() {
            let pod = patched_object(&review, &answer);
            assert_eq!(pod["spec"]["containers"][0]["name"], "helper");
            break;
        }
        assert!(Instant::now() < deadline, "new SidecarSet not picked up");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A SidecarSet file read while it is rewritten in place (emptied, cut short) keeps its last good
/// version in service: its pods keep their sidecar, and `sidecarset_files_stale` says so.
#[tokio::test]
async fn a_sidecarset_file_rewritten_in_place_keeps_injecting() {
    let server = Server::start();
    let client = server.client();
    let review = fixture("pod-web-log-agent.json");
    let injected = |answer: &Value| {
        let pod = patched_object(&review, answer);
        let containers = pod["spec"]["containers"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        containers.iter().any(|c| c["name"] == "log-agent")
    };
    assert!(injected(
        &post_review(&client, &server.url("/mutate-pod"), &review).await
    ));

    let path = server.sidecarsets.path().join("log-agent.yaml");
    let good = std::fs::read_to_string(&path).unwrap();
    let stale_files = |count: u32| {
        let metrics = http_get(server.admin, "/metrics").map(|(_, body)| body);
        metrics.is_some_and(|m| m.contains(&format!("sidecarset_files_stale {count}\n")))
    };
    // Cut where what is left does not load: a truncation that leaves a valid SidecarSet cannot
    // be told from an edit.
    let cut_before = |text: &str| &good[..good.find(text).expect("in the example")];
    for torn in ["", cut_before("spec:"), cut_before(": TZ")] {
        std::fs::write(&path, torn).unwrap();
        // Every pod admitted meanwhile, before the reload and after it, gets the sidecar.
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let answer = post_review(&client, &server.url("/mutate-pod"), &review).await;
            let noticed = stale_files(1);
            assert!(
                injected(&answer),
                "sidecar lost while the file reads {torn:?}"
            );
            if noticed {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the torn file was not noticed: {torn:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let answer = post_review(&client, &server.url("/mutate-pod"), &review).await;
        assert!(
            injected(&answer),
            "sidecar lost while the file reads {torn:?}"
        );
        // Back to good between the torn versions, so each one is a change.
        std::fs::write(&path, &good).unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while !stale_files(0) {
            assert!(
                Instant::now() < deadline,
                "the good file was not taken back"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

// Multi-threaded, so the clients' connection tasks keep running (and answer HTTP/2 pings) while
// the test thread waits for the server to exit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn certificates_are_reused_and_sigterm_exits_cleanly() {
    let certs = tempfile::tempdir().unwrap();
    let server = Server::start_in(certs.path());
    let cert = std::fs::read(certs.path().join("tls.crt")).unwrap();
    // Idle keep-alive connections (HTTP/2 and HTTP/1.1) must not hold the shutdown up.
    let h2 = server.client();
    post_review(
        &h2,
        &server.url("/mutate-pod"),
        &fixture("pod-no-match.json"),
    )
    .await;
    let http1 = reqwest::Client::builder()
        .add_root_certificate(
            reqwest::Certificate::from_pem(&std::fs::read(server.ca()).unwrap()).unwrap(),
        )
        .resolve("localhost", server.https)
        .http1_only()
        .build()
        .unwrap();
    post_review(
        &http1,
        &server.url("/mutate-pod"),
        &fixture("pod-no-match.json"),
    )
    .await;
    let started = Instant::now();
    let status = server.terminate();
    assert!(status.success(), "exit status {status:?}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "shutdown took {:?} with idle keep-alive connections open",
        started.elapsed()
    );
    let again = Server::start_in(certs.path());
    let reused = std::fs::read(certs.path().join("tls.crt")).unwrap();
    assert_eq!(cert, reused, "a valid certificate is reused on restart");
    drop(again);
}
