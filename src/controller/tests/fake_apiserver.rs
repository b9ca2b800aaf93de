//! A fake apiserver for the controller shells' tests, in the shape of kube-rs controller-rs's
//! `fixtures.rs`: a tower-test mock service behind a real [`kube::Client`], and a [`Scenario`]
//! that expects the requests of one reconcile in order (method, path, query, patch kind, the
//! essentials of the body), answers each, and fails naming the expected and the received request.
//! Once every client is dropped it also checks that no request followed the last expected one.
//!
//! ```ignore
//! let mut scenario = Scenario::new();
//! scenario
//!     .expect(Method::GET, "/api/v1/namespaces/default/configmaps/web-barrier")
//!     .reply(not_found("configmaps", "web-barrier"));
//! let (client, server) = scenario.start();
//! let result = reconcile(..., client).await;   // every clone of `client` dropped afterwards
//! server.finish().await;                        // panics with the first mismatch
//! ```

use std::fmt;
use std::hash::Hash;
use std::time::Duration;

use axum::http::{Method, Request, Response, StatusCode, header};
use k8s_openapi::api::apps::v1::ControllerRevision;
use kube::client::Body;
use kube::runtime::events::Reporter;

use crate::controller::events::EventRecorder;
use kube::runtime::reflector::{self, Store, store::Writer};
use kube::runtime::watcher;
use serde_json::{Value, json};
use tokio::task::JoinHandle;

type Handle = tower_test::mock::Handle<Request<Body>, Response<Body>>;

/// How long the scenario waits for a request (or for the clients to go) before failing.
const WAIT: Duration = Duration::from_secs(5);

/// A request as the fake apiserver received it.
#[derive(Debug, Clone)]
pub struct Received {
    pub method: Method,
    pub path: String,
    /// Decoded `key=value` pairs in the order sent (empty pairs left out).
    pub query: Vec<(String, String)>,
    pub content_type: Option<String>,
    /// The body as JSON; `Null` when empty.
    pub body: Value,
}

impl fmt::Display for Received {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.method, self.path)?;
        if !self.query.is_empty() {
            let query: Vec<String> = self.query.iter().map(|(k, v)| format!("{k}={v}")).collect();
            write!(f, "?{}", query.join("&"))?;
        }
        if let Some(kind) = &self.content_type {
            write!(f, " ({kind})")?;
        }
        if !self.body.is_null() {
            write!(f, " {}", self.body)?;
        }
        Ok(())
    }
}

type BodyCheck = Box<dyn FnOnce(&Value) -> Result<(), String> + Send>;
type Answer = Box<dyn FnOnce(&Received) -> (StatusCode, Value) + Send>;

/// One expected request and its answer.
pub struct Exchange {
    method: Method,
    path: String,
    query: Vec<(String, String)>,
    content_type: Option<&'static str>,
    body_checks: Vec<(String, BodyCheck)>,
    answer: Option<Answer>,
}

impl fmt::Display for Exchange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.method, self.path)?;
        if !self.query.is_empty() {
            let query: Vec<String> = self.query.iter().map(|(k, v)| format!("{k}={v}")).collect();
            write!(f, "?{}", query.join("&"))?;
        }
        if let Some(kind) = self.content_type {
            write!(f, " ({kind})")?;
        }
        for (what, _) in &self.body_checks {
            write!(f, " [{what}]")?;
        }
        Ok(())
    }
}

pub const JSON: &str = "application/json";
pub const MERGE_PATCH: &str = "application/merge-patch+json";
pub const JSON_PATCH: &str = "application/json-patch+json";
pub const STRATEGIC_PATCH: &str = "application/strategic-merge-patch+json";

impl Exchange {
    /// The query must be exactly these pairs, in this order (by default: no query).
    pub fn query(&mut self, pairs: &[(&str, &str)]) -> &mut Self {
        self.query = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        self
    }

    /// The request's `Content-Type` (the patch kind for a PATCH).
    pub fn content_type(&mut self, kind: &'static str) -> &mut Self {
        self.content_type = Some(kind);
        self
    }

    /// The body holds `expected`: every key of an object with an included value, arrays of the
    /// same length element by element, scalars equal.
    pub fn body_includes(&mut self, expected: Value) -> &mut Self {
        let what = format!("body includes {expected}");
        self.body_checks
            .push((what, Box::new(move |body| includes(body, &expected, ""))));
        self
    }

    /// A check of the body named `what`, returning why it fails.
    pub fn body_satisfies(
        &mut self,
        what: &str,
        check: impl FnOnce(&Value) -> Result<(), String> + Send + 'static,
    ) -> &mut Self {
        self.body_checks.push((what.to_string(), Box::new(check)));
        self
    }

    /// Answers with this status and JSON.
    pub fn reply(&mut self, (status, body): (StatusCode, Value)) {
        self.answer = Some(Box::new(move |_| (status, body)));
    }

    /// Answers from what was received (an echo of a create, a patch applied to a stored object).
    pub fn reply_with(
        &mut self,
        answer: impl FnOnce(&Received) -> (StatusCode, Value) + Send + 'static,
    ) {
        self.answer = Some(Box::new(answer));
    }

    fn check(&mut self, received: &Received) -> Result<(), String> {
        if received.method != self.method || !path_matches(&self.path, &received.path) {
            return Err("method or path differ".into());
        }
        if received.query != self.query {
            return Err(format!(
                "query {:?}, expected {:?}",
                received.query, self.query
            ));
        }
        if let Some(kind) = self.content_type
            && received.content_type.as_deref() != Some(kind)
        {
            return Err(format!(
                "content type {:?}, expected {kind}",
                received.content_type
            ));
        }
        for (what, check) in self.body_checks.drain(..) {
            check(&received.body).map_err(|why| format!("{what}: {why}"))?;
        }
        Ok(())
    }
}

/// The requests one reconcile is expected to make, in order.
#[derive(Default)]
pub struct Scenario {
    exchanges: Vec<Exchange>,
}

impl Scenario {
    pub fn new() -> Self {
        Self::default()
    }

    /// Expects `method path` next; refine with the returned exchange and give its answer.
    pub fn expect(&mut self, method: Method, path: impl Into<String>) -> &mut Exchange {
        self.exchanges.push(Exchange {
            method,
            path: path.into(),
            query: Vec::new(),
            content_type: None,
            body_checks: Vec::new(),
            answer: None,
        });
        self.exchanges.last_mut().expect("just pushed")
    }

    /// The exchange expected last (to give its answer after a helper described it).
    pub fn last(&mut self) -> &mut Exchange {
        self.exchanges.last_mut().expect("an expected request")
    }

    /// Expects an event (events.k8s.io/v1) of `type_` and `reason` about `regarding` (kind, name)
    /// in `namespace`, answered as created.
    pub fn event(
        &mut self,
        namespace: &str,
        regarding: (&str, &str),
        type_: &str,
        reason: &str,
    ) -> &mut Exchange {
        let exchange = self.expect(
            Method::POST,
            format!("/apis/events.k8s.io/v1/namespaces/{namespace}/events"),
        );
        exchange.content_type(JSON).body_includes(json!({
            "type": type_,
            "reason": reason,
            "regarding": {"kind": regarding.0, "name": regarding.1, "namespace": namespace},
        }));
        exchange.reply_with(created("1"));
        exchange
    }

    /// An event about a cluster-scoped object (`kind`, `name`): through the core `v1` API, in
    /// the `default` namespace ([`crate::controller::events`]).
    pub fn cluster_event(
        &mut self,
        regarding: (&str, &str),
        type_: &str,
        reason: &str,
    ) -> &mut Exchange {
        let exchange = self.expect(Method::POST, "/api/v1/namespaces/default/events");
        exchange.content_type(JSON).body_includes(json!({
            "type": type_,
            "reason": reason,
            "involvedObject": {"kind": regarding.0, "name": regarding.1},
        }));
        exchange.reply_with(created("1"));
        exchange
    }

    /// A client whose requests this scenario answers.
    pub fn start(self) -> (kube::Client, FakeApiServer) {
        let (service, handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
        let client = kube::Client::new(service, "default");
        let task = tokio::spawn(serve(handle, self.exchanges));
        (client, FakeApiServer { task })
    }
}

/// The running scenario.
pub struct FakeApiServer {
    task: JoinHandle<Vec<Received>>,
}

impl FakeApiServer {
    /// Waits until every expected request came and every client is dropped; panics with the
    /// scenario's own message when a request differed, was missing or came in excess. Returns
    /// what was received.
    pub async fn finish(self) -> Vec<Received> {
        match tokio::time::timeout(WAIT * 2, self.task).await {
            Err(_) => panic!("fake apiserver: scenario still running (a client not dropped?)"),
            Ok(Err(error)) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
            Ok(Err(error)) => panic!("fake apiserver: {error}"),
            Ok(Ok(received)) => received,
        }
    }
}

fn history(received: &[Received]) -> String {
    if received.is_empty() {
        return "  (none)".into();
    }
    received
        .iter()
        .enumerate()
        .map(|(i, r)| format!("  {}. {r}", i + 1))
        .collect::<Vec<_>>()
        .join("\n")
}

async fn next(
    handle: &mut Handle,
    waiting_for: &str,
) -> Option<(Received, tower_test::mock::SendResponse<Response<Body>>)> {
    let (request, respond) = tokio::time::timeout(WAIT, handle.next_request())
        .await
        .unwrap_or_else(|_| {
            panic!("fake apiserver: no request within {WAIT:?} while waiting for {waiting_for}")
        })?;
    let (parts, body) = request.into_parts();
    let bytes = body
        .collect_bytes()
        .await
        .expect("fake apiserver: request body");
    let body = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()))
    };
    let received = Received {
        method: parts.method,
        path: parts.uri.path().to_string(),
        query: parts.uri.query().map(decode_query).unwrap_or_default(),
        content_type: parts
            .headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string),
        body,
    };
    Some((received, respond))
}

async fn serve(mut handle: Handle, exchanges: Vec<Exchange>) -> Vec<Received> {
    let mut received = Vec::new();
    let total = exchanges.len();
    for (index, mut exchange) in exchanges.into_iter().enumerate() {
        let n = index + 1;
        let Some((request, respond)) = next(&mut handle, &format!("request {n}")).await else {
            panic!(
                "fake apiserver: request {n} of {total} never came.\n expected: {exchange}\n received before:\n{}",
                history(&received)
            );
        };
        if let Err(why) = exchange.check(&request) {
            panic!(
                "fake apiserver: request {n} of {total} is not the expected one ({why}).\n expected: {exchange}\n received: {request}\n received before:\n{}",
                history(&received)
            );
        }
        let answer = exchange
            .answer
            .take()
            .unwrap_or_else(|| panic!("fake apiserver: no answer given for {exchange}"));
        let (status, body) = answer(&request);
        let response = Response::builder()
            .status(status)
            .header(header::CONTENT_TYPE, JSON)
            .body(Body::from(serde_json::to_vec(&body).expect("answer")))
            .expect("response");
        respond.send_response(response);
        received.push(request);
    }
    if let Some((extra, _)) = next(&mut handle, "the clients to be dropped").await {
        panic!(
            "fake apiserver: unexpected request {} after the scenario's {total}: {extra}\n received before:\n{}",
            total + 1,
            history(&received)
        );
    }
    received
}

/// `expected` with `*` standing for any one segment (a name the reconcile made up).
fn path_matches(expected: &str, actual: &str) -> bool {
    let expected: Vec<&str> = expected.split('/').collect();
    let actual: Vec<&str> = actual.split('/').collect();
    expected.len() == actual.len()
        && expected
            .iter()
            .zip(&actual)
            .all(|(e, a)| *e == "*" && !a.is_empty() || e == a)
}

fn decode_query(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (percent_decode(key), percent_decode(value))
        })
        .collect()
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                match u8::from_str_radix(hex, 16) {
                    Ok(byte) => {
                        out.push(byte);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            other => out.push(other),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Whether `actual` holds `expected` (see [`Exchange::body_includes`]); the error names the path.
pub fn includes(actual: &Value, expected: &Value, at: &str) -> Result<(), String> {
    match (actual, expected) {
        (Value::Object(actual), Value::Object(expected)) => {
            for (key, wanted) in expected {
                let path = format!("{at}/{key}");
                match actual.get(key) {
                    Some(value) => includes(value, wanted, &path)?,
                    None if wanted.is_null() => {}
                    None => return Err(format!("{path} missing, expected {wanted}")),
                }
            }
            Ok(())
        }
        (Value::Array(actual), Value::Array(expected)) => {
            if actual.len() != expected.len() {
                return Err(format!(
                    "{at}: {} elements, expected {}: {}",
                    actual.len(),
                    expected.len(),
                    Value::Array(actual.clone())
                ));
            }
            for (i, (a, e)) in actual.iter().zip(expected).enumerate() {
                includes(a, e, &format!("{at}/{i}"))?;
            }
            Ok(())
        }
        (actual, expected) if actual == expected => Ok(()),
        (actual, expected) => Err(format!("{at}: {actual}, expected {expected}")),
    }
}

/// The operations of a JSON patch as `op path` lines, in order.
pub fn patch_operations(body: &Value) -> Vec<String> {
    body.as_array()
        .into_iter()
        .flatten()
        .map(|op| {
            format!(
                "{} {}",
                op["op"].as_str().unwrap_or("?"),
                op["path"].as_str().unwrap_or("?")
            )
        })
        .collect()
}

/// The value a JSON patch sets at `path` (the last operation there).
pub fn patch_value<'a>(body: &'a Value, path: &str) -> Option<&'a Value> {
    body.as_array()?
        .iter()
        .rev()
        .find(|op| op["path"] == path)
        .and_then(|op| op.get("value"))
}

pub fn ok(body: Value) -> (StatusCode, Value) {
    (StatusCode::OK, body)
}

/// The apiserver's `Status` answer for a failure.
pub fn failure(code: u16, reason: &str, message: &str) -> (StatusCode, Value) {
    (
        StatusCode::from_u16(code).expect("status code"),
        json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {},
            "status": "Failure", "message": message, "reason": reason, "code": code
        }),
    )
}

pub fn not_found(resource: &str, name: &str) -> (StatusCode, Value) {
    failure(404, "NotFound", &format!("{resource} \"{name}\" not found"))
}

pub fn conflict(resource: &str, name: &str) -> (StatusCode, Value) {
    failure(
        409,
        "Conflict",
        &format!(
            "Operation cannot be fulfilled on {resource} \"{name}\": the object has been modified; please apply your changes to the latest version and try again"
        ),
    )
}

/// A create's answer: the object sent, with the apiserver's uid and resourceVersion.
pub fn created(resource_version: &str) -> impl FnOnce(&Received) -> (StatusCode, Value) + Send {
    let resource_version = resource_version.to_string();
    move |received| {
        let mut object = received.body.clone();
        let name = object["metadata"]["name"]
            .as_str()
            .unwrap_or("")
            .to_string();
        object["metadata"]["uid"] = json!(format!("uid-{name}"));
        object["metadata"]["resourceVersion"] = json!(resource_version);
        (StatusCode::CREATED, object)
    }
}

/// A patch's answer: the patch (JSON or merge, by content type) applied to `stored`, at
/// `resource_version`.
pub fn patched(
    stored: Value,
    resource_version: &str,
) -> impl FnOnce(&Received) -> (StatusCode, Value) + Send {
    let resource_version = resource_version.to_string();
    move |received| {
        let mut object = stored;
        match received.content_type.as_deref() {
            Some(JSON_PATCH) => {
                let patch: json_patch::Patch =
                    serde_json::from_value(received.body.clone()).expect("a JSON patch");
                if let Err(error) = json_patch::patch(&mut object, &patch) {
                    return failure(422, "Invalid", &error.to_string());
                }
            }
            _ => json_patch::merge(&mut object, &received.body),
        }
        object["metadata"]["resourceVersion"] = json!(resource_version);
        (StatusCode::OK, object)
    }
}

/// A list answer.
pub fn list(kind: &str, api_version: &str, items: Vec<Value>) -> (StatusCode, Value) {
    ok(json!({
        "kind": kind, "apiVersion": api_version,
        "metadata": {"resourceVersion": "1"},
        "items": items
    }))
}

/// A reflector store holding `objects` and marked ready (the initial list done), and its writer
/// for later changes.
pub fn store_of<K>(objects: impl IntoIterator<Item = K>) -> (Store<K>, Writer<K>)
where
    K: reflector::Lookup + Clone + 'static,
    K::DynamicType: Default + Eq + Hash + Clone,
{
    let (store, mut writer) = reflector::store::<K>();
    writer.apply_watcher_event(&watcher::Event::Init);
    for object in objects {
        writer.apply_watcher_event(&watcher::Event::InitApply(object));
    }
    writer.apply_watcher_event(&watcher::Event::InitDone);
    (store, writer)
}

/// The answer to a ControllerRevision list: `history` as stored.
pub fn revision_list(history: &[ControllerRevision]) -> (StatusCode, Value) {
    list(
        "ControllerRevisionList",
        "apps/v1",
        history
            .iter()
            .map(|r| serde_json::to_value(r).expect("a revision serializes"))
            .collect(),
    )
}

/// Expects the status merge patch of the workload at `path` (its object path), its body
/// including `status`; answers with `stored` at `resource_version`.
pub fn expect_status(
    scenario: &mut Scenario,
    path: &str,
    status: Value,
    stored: Value,
    resource_version: &'static str,
) {
    scenario
        .expect(Method::PATCH, format!("{path}/status"))
        .content_type(MERGE_PATCH)
        .body_includes(json!({ "status": status }))
        .reply_with(patched(stored, resource_version));
}

/// The context of a workload controller (CloneSet, Advanced StatefulSet, Advanced DaemonSet)
/// under test: `pods` and their `summaries` cached, no expectations yet.
pub fn workload_context(
    client: kube::Client,
    pods: Store<k8s_openapi::api::core::v1::Pod>,
    summaries: Store<crate::podmarks::PodSummary>,
) -> std::sync::Arc<crate::controller::workload::Context> {
    std::sync::Arc::new(crate::controller::workload::Context {
        client: client.clone(),
        pods,
        summaries,
        recorder: test_recorder(client),
        expectations: Default::default(),
        metrics: std::sync::Arc::new(crate::metrics::Metrics::new()),
    })
}

/// `Ok` when `holds`, else the error `why` says (for `body_satisfies` checks).
pub fn check(holds: bool, why: impl FnOnce() -> String) -> Result<(), String> {
    if holds { Ok(()) } else { Err(why()) }
}

/// `stored` with the JSON patch `body` applied.
pub fn applied(stored: &Value, body: &Value) -> Result<Value, String> {
    let patch: json_patch::Patch =
        serde_json::from_value(body.clone()).map_err(|e| e.to_string())?;
    let mut object = stored.clone();
    json_patch::patch(&mut object, &patch).map_err(|e| e.to_string())?;
    Ok(object)
}

/// A claim's write of `pod`: a JSON patch guarded by its resourceVersion that changes only its
/// ownerReferences, which then include `owners`.
pub fn expect_owners_patch<'a>(
    scenario: &'a mut Scenario,
    path: &str,
    pod: &k8s_openapi::api::core::v1::Pod,
    owners: Value,
) -> &'a mut Exchange {
    let stored = serde_json::to_value(pod).unwrap();
    let name = pod.metadata.name.clone().unwrap();
    let guard = pod.metadata.resource_version.clone().unwrap();
    scenario
        .expect(Method::PATCH, format!("{path}/{name}"))
        .content_type(JSON_PATCH)
        .body_satisfies("guarded, changes only the ownerReferences", move |body| {
            check(
                body[0]
                    == json!({"op": "replace", "path": "/metadata/resourceVersion", "value": guard}),
                || format!("first operation {}", body[0]),
            )?;
            let paths = patch_operations(body);
            check(
                paths
                    .iter()
                    .skip(1)
                    .all(|p| p.contains("/metadata/ownerReferences")),
                || format!("operations {paths:?}"),
            )?;
            let after = applied(&stored, body)?;
            includes(&after["metadata"]["ownerReferences"], &owners, "/ownerReferences")
        })
}

/// One reconcile of `set` by the workload shell of `seam` over `pods` (held whole) and
/// `summaries` (every pod's), against `scenario`: what it returned and the expectations it
/// left. The shell, and so every client, is dropped before the scenario is checked: a request in
/// excess fails the test.
pub async fn reconcile_workload<S: crate::controller::workload::Seam>(
    set: &S::Set,
    seam: S,
    (pods, summaries): (
        Store<k8s_openapi::api::core::v1::Pod>,
        Store<crate::podmarks::PodSummary>,
    ),
    scenario: Scenario,
) -> (
    Result<kube::runtime::controller::Action, crate::controller::workload::WorkloadError>,
    crate::controller::expectations::Expectations,
) {
    use crate::controller::workload::{Shell, reconcile};
    let (client, server) = scenario.start();
    let context = workload_context(client, pods, summaries);
    let shell = std::sync::Arc::new(Shell { context, seam });
    let result = reconcile(std::sync::Arc::new(set.clone()), shell.clone()).await;
    let shell = std::sync::Arc::into_inner(shell).expect("the reconcile kept no shell");
    let mut context =
        std::sync::Arc::into_inner(shell.context).expect("the reconcile kept no context");
    let expectations = std::mem::take(context.expectations.get_mut().unwrap());
    drop(context);
    server.finish().await;
    (result, expectations)
}

/// The event recorder of a controller under test (instance `test`).
pub fn test_recorder(client: kube::Client) -> EventRecorder {
    let reporter = Reporter {
        controller: crate::controller::CONTROLLER_NAME.into(),
        instance: Some("test".into()),
    };
    EventRecorder::new(client, reporter)
}

#[cfg(test)]
mod tests;
