use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::http::{Response, StatusCode};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::ObjectMeta;
use kube::client::Body;
use serde_json::json;

use super::*;
use crate::controller::tests::fake_apiserver::store_of;

type Mock = tower_test::mock::Mock<Request<Body>, Response<Body>>;
type Handle = tower_test::mock::Handle<Request<Body>, Response<Body>>;

fn limits(qps: u32, burst: u32, max_in_flight: usize) -> ApiLimits {
    ApiLimits {
        qps: NonZeroU32::new(qps).unwrap(),
        burst: NonZeroU32::new(burst).unwrap(),
        max_in_flight,
        concurrent_reconciles: 2,
    }
}

/// A kube client whose requests go through `budget` (ending with `term`) to a mock apiserver.
fn budgeted_client(budget: &ApiBudget, term: CancellationToken) -> (kube::Client, Handle) {
    let (service, handle): (Mock, Handle) = tower_test::mock::pair();
    let client = kube::Client::new(budget.layer(term).layer(service), "default");
    (client, handle)
}

/// Answers every request with an empty ConfigMap, counting them, until the clients go.
fn answer_all(mut handle: Handle) -> tokio::task::JoinHandle<usize> {
    tokio::spawn(async move {
        let mut answered = 0;
        while let Some((_, respond)) = handle.next_request().await {
            let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}});
            respond.send_response(
                Response::builder()
                    .status(StatusCode::OK)
                    .body(Body::from(serde_json::to_vec(&body).unwrap()))
                    .unwrap(),
            );
            answered += 1;
        }
        answered
    })
}

async fn get(client: &kube::Client) -> Result<ConfigMap, kube::Error> {
    kube::Api::<ConfigMap>::namespaced(client.clone(), "default")
        .get("a")
        .await
}

#[tokio::test]
async fn the_burst_passes_at_once_and_the_rest_at_the_rate() {
    let budget = ApiBudget::new(&limits(40, 5, 64), ControllerMetrics::default());
    let (client, handle) = budgeted_client(&budget, CancellationToken::new());
    let server = answer_all(handle);
    let started = Instant::now();
    for _ in 0..5 {
        get(&client).await.unwrap();
    }
    let burst_took = started.elapsed();
    for _ in 0..20 {
        get(&client).await.unwrap();
    }
    let all_took = started.elapsed();
    drop(client);
    assert_eq!(server.await.unwrap(), 25);
    // A lower bound only: the 20 requests past the burst need 20 tokens at 40 a second.
    assert!(
        all_took >= Duration::from_millis(450),
        "25 requests with a burst of 5 at 40/s took only {all_took:?}"
    );
    assert!(
        burst_took < all_took / 2,
        "the burst ({burst_took:?}) was paced like the rest ({all_took:?})"
    );
}

#[tokio::test]
async fn every_client_of_the_budget_shares_one_bucket() {
    let budget = ApiBudget::new(&limits(20, 2, 64), ControllerMetrics::default());
    let (first, first_handle) = budgeted_client(&budget, CancellationToken::new());
    let (second, second_handle) = budgeted_client(&budget, CancellationToken::new());
    let servers = (answer_all(first_handle), answer_all(second_handle));
    let started = Instant::now();
    let requests = (0..6).map(|i| {
        let client = if i % 2 == 0 {
            first.clone()
        } else {
            second.clone()
        };
        async move { get(&client).await.unwrap() }
    });
    futures::future::join_all(requests).await;
    let took = started.elapsed();
    drop((first, second));
    assert_eq!(servers.0.await.unwrap() + servers.1.await.unwrap(), 6);
    // Two clients with a bucket each would pass all six within their bursts at once.
    assert!(
        took >= Duration::from_millis(180),
        "6 requests of two clients with one burst of 2 at 20/s took only {took:?}"
    );
}

#[tokio::test]
async fn requests_beyond_the_in_flight_bound_wait_for_an_answer() {
    let budget = ApiBudget::new(&limits(1000, 1000, 2), ControllerMetrics::default());
    let (client, mut handle) = budgeted_client(&budget, CancellationToken::new());
    let requests: Vec<_> = (0..5)
        .map(|_| {
            let client = client.clone();
            tokio::spawn(async move { get(&client).await })
        })
        .collect();
    let mut held = Vec::new();
    for _ in 0..2 {
        let (_, respond) = tokio::time::timeout(Duration::from_secs(5), handle.next_request())
            .await
            .expect("two requests reach the apiserver")
            .unwrap();
        held.push(respond);
    }
    let third = tokio::time::timeout(Duration::from_millis(300), handle.next_request()).await;
    assert!(
        third.is_err(),
        "a third request was sent with two in flight"
    );
    // One answer frees one slot.
    let respond = held.pop().unwrap();
    respond.send_response(
        Response::builder()
            .status(StatusCode::OK)
            .body(Body::from(
                serde_json::to_vec(
                    &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}),
                )
                .unwrap(),
            ))
            .unwrap(),
    );
    let third = tokio::time::timeout(Duration::from_secs(5), handle.next_request()).await;
    assert!(third.is_ok(), "the freed slot was not used");
    for request in requests {
        request.abort();
    }
}

#[tokio::test]
async fn once_the_term_ends_nothing_is_sent() {
    // A bucket that is empty after one request and refills only after ten seconds.
    let budget = ApiBudget::new(
        &ApiLimits {
            qps: NonZeroU32::MIN,
            ..limits(1, 1, 64)
        },
        ControllerMetrics::default(),
    );
    let term = CancellationToken::new();
    let (client, handle) = budgeted_client(&budget, term.clone());
    let server = answer_all(handle);
    get(&client).await.unwrap();
    let waiting = tokio::spawn({
        let client = client.clone();
        async move { get(&client).await }
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    let ended = Instant::now();
    term.cancel();
    let refused = tokio::time::timeout(Duration::from_secs(2), waiting)
        .await
        .expect("the waiting request ends with the term, not with its token")
        .unwrap();
    assert!(refused.is_err(), "{refused:?}");
    assert!(ended.elapsed() < Duration::from_secs(2));
    assert!(
        get(&client).await.is_err(),
        "a request after the term was sent"
    );
    drop(client);
    assert_eq!(
        server.await.unwrap(),
        1,
        "only the request of the term was sent"
    );
}

fn configmap(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            ..Default::default()
        },
        ..Default::default()
    }
}

#[derive(Debug, thiserror::Error)]
#[error("never")]
struct Never;

/// A term around a client that no test request reaches.
fn term_for_tests(limits: ApiLimits, end: CancellationToken) -> (Term, ControllerMetrics) {
    let (service, _handle): (Mock, Handle) = tower_test::mock::pair();
    let metrics = ControllerMetrics::default();
    let term = Term::new(
        kube::Client::new(service, "default"),
        limits,
        "replica-1",
        metrics.clone(),
        end,
    );
    (term, metrics)
}

/// A controller over `names`, every one of them triggering one reconcile.
fn controller_over(names: &[&str]) -> Controller<ConfigMap> {
    let objects: Vec<ConfigMap> = names.iter().map(|n| configmap(n)).collect();
    let (store, _writer) = store_of(objects.clone());
    let triggers =
        futures::stream::iter(objects.into_iter().map(Ok)).chain(futures::stream::pending());
    // The writer must outlive the controller's reads; the store keeps what it holds.
    std::mem::forget(_writer);
    Controller::for_stream(triggers, store)
}

#[tokio::test]
async fn reconciles_run_at_most_the_bound_at_once_and_are_counted() {
    let end = CancellationToken::new();
    let (term, metrics) = term_for_tests(limits(1000, 1000, 64), end.clone());
    struct Seen {
        running: AtomicUsize,
        most: AtomicUsize,
        done: Mutex<Vec<String>>,
    }
    let seen = Arc::new(Seen {
        running: AtomicUsize::new(0),
        most: AtomicUsize::new(0),
        done: Mutex::new(Vec::new()),
    });
    let names = ["a", "b", "c", "d", "e", "f"];
    let run = term.run(
        "test-controller",
        controller_over(&names),
        |object: Arc<ConfigMap>, seen: Arc<Seen>| async move {
            let now = seen.running.fetch_add(1, Ordering::SeqCst) + 1;
            seen.most.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(50)).await;
            seen.running.fetch_sub(1, Ordering::SeqCst);
            seen.done
                .lock()
                .unwrap()
                .push(object.metadata.name.clone().unwrap());
            Ok::<_, Never>(Action::await_change())
        },
        |_, _, _| Action::await_change(),
        seen.clone(),
    );
    let ender = async {
        while seen.done.lock().unwrap().len() < names.len() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        end.cancel();
    };
    tokio::time::timeout(Duration::from_secs(10), futures::future::join(run, ender))
        .await
        .expect("the controller stops once its term ends");
    assert_eq!(
        seen.most.load(Ordering::SeqCst),
        2,
        "two reconciles at once"
    );
    assert_eq!(metrics.reconciles("test-controller"), 6);
    assert_eq!(metrics.reconcile_errors("test-controller"), 0);
}

#[tokio::test(start_paused = true)]
async fn a_reconcile_still_running_at_the_end_of_the_term_is_cancelled_after_the_grace() {
    let end = CancellationToken::new();
    let (term, _) = term_for_tests(limits(1000, 1000, 64), end.clone());
    let started = Arc::new(AtomicUsize::new(0));
    let finished = Arc::new(AtomicUsize::new(0));
    let run = term.run(
        "test-controller",
        controller_over(&["stuck"]),
        {
            let (started, finished) = (started.clone(), finished.clone());
            move |_: Arc<ConfigMap>, _: Arc<()>| {
                let (started, finished) = (started.clone(), finished.clone());
                async move {
                    started.fetch_add(1, Ordering::SeqCst);
                    // A reconcile that would take an hour (say, waiting on a slow apiserver).
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                    finished.fetch_add(1, Ordering::SeqCst);
                    Ok::<_, Never>(Action::await_change())
                }
            }
        },
        |_, _, _| Action::await_change(),
        Arc::new(()),
    );
    let ended_at = async {
        while started.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        end.cancel();
        tokio::time::Instant::now()
    };
    let (_, ended_at) = futures::future::join(run, ended_at).await;
    let stopped_after = ended_at.elapsed();
    assert_eq!(
        finished.load(Ordering::SeqCst),
        0,
        "the reconcile was cancelled"
    );
    assert!(
        stopped_after >= STOP_GRACE && stopped_after < STOP_GRACE + Duration::from_secs(1),
        "stopped {stopped_after:?} after the end of the term (grace {STOP_GRACE:?})"
    );
}

#[test]
fn events_carry_the_controllers_own_component_and_the_replica() {
    let end = CancellationToken::new();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let _guard = runtime.enter();
    let (term, _) = term_for_tests(limits(1, 1, 1), end);
    let reporter = term.reporter("cloneset-controller");
    assert_eq!(reporter.controller, "cloneset-controller");
    assert_eq!(reporter.instance.as_deref(), Some("replica-1"));
}

/// The client every term gets: kube's own stack from a cluster configuration, under the budget.
#[tokio::test]
async fn a_client_built_from_a_cluster_configuration_ends_with_its_term() {
    let budget = ApiBudget::new(&limits(1000, 1000, 4), ControllerMetrics::default());
    let term = CancellationToken::new();
    // Nothing listens on the discard port: the request is sent and refused by the host.
    let config = kube::Config::new("http://127.0.0.1:9".parse().unwrap());
    let client = budget.client(config, term.clone()).unwrap();
    let refused = get(&client).await.unwrap_err().to_string();
    assert!(!refused.contains("term is over"), "{refused}");
    term.cancel();
    let ended = get(&client).await.unwrap_err().to_string();
    assert!(ended.contains("term is over"), "{ended}");
}
