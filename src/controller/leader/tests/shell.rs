//! The Elector's reads and writes against the fake apiserver, with holders whose clocks disagree
//! with this replica's: expiry is judged by when this replica saw the Lease last change.

use axum::http::Method;
use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use super::super::*;
use crate::controller::tests::fake_apiserver::{Scenario, ok, patched};

const PATH: &str =
    "/apis/coordination.k8s.io/v1/namespaces/kruise-system/leases/kruise-webhook-controller";

fn lease(holder: &str, renewed: Timestamp, duration: i32, version: &str) -> Value {
    json!({
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {
            "name": "kruise-webhook-controller",
            "namespace": "kruise-system",
            "resourceVersion": version,
        },
        "spec": {
            "holderIdentity": holder,
            "leaseDurationSeconds": duration,
            "acquireTime": MicroTime(renewed),
            "renewTime": MicroTime(renewed),
            "leaseTransitions": 1,
        }
    })
}

fn elector(client: kube::Client) -> Elector {
    Elector::new(
        client,
        LeaseConfig::new("kruise-webhook-controller", "kruise-system", "me"),
    )
}

#[tokio::test]
async fn a_live_lease_whose_holder_runs_an_hour_behind_is_not_taken() {
    // The holder renews every two seconds, by a clock an hour behind this replica's.
    let behind = Timestamp::now() - SignedDuration::from_hours(1);
    let mut scenario = Scenario::new();
    scenario
        .expect(Method::GET, PATH)
        .reply(ok(lease("other", behind, 15, "10")));
    scenario.expect(Method::GET, PATH).reply(ok(lease(
        "other",
        behind + SignedDuration::from_secs(2),
        15,
        "11",
    )));
    let (client, server) = scenario.start();
    let mut elector = elector(client);
    assert!(!elector.try_once().await.unwrap(), "took a live lease");
    assert!(!elector.try_once().await.unwrap(), "took a live lease");
    drop(elector);
    // A write to the Lease would be a request the scenario does not expect.
    server.finish().await;
}

#[tokio::test]
async fn a_dead_holder_whose_clock_runs_an_hour_ahead_loses_the_lease_once_it_stops_changing() {
    let ahead = Timestamp::now() + SignedDuration::from_hours(1);
    let stored = lease("other", ahead, 1, "20");
    let mut scenario = Scenario::new();
    scenario.expect(Method::GET, PATH).reply(ok(stored.clone()));
    scenario.expect(Method::GET, PATH).reply(ok(stored.clone()));
    scenario
        .expect(Method::PUT, PATH)
        .body_includes(json!({
            "metadata": {"resourceVersion": "20"},
            "spec": {"holderIdentity": "me", "leaseTransitions": 2}
        }))
        .reply_with(patched(stored, "21"));
    let (client, server) = scenario.start();
    let mut elector = elector(client);
    assert!(!elector.try_once().await.unwrap(), "took a lease seen once");
    // Unchanged for longer than its one-second duration, by this replica's clock.
    tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
    assert!(
        elector.try_once().await.unwrap(),
        "did not take the dead holder's lease"
    );
    drop(elector);
    server.finish().await;
}

/// The leader's apiserver stops answering (requests hang, no error): leadership goes false when
/// the renew deadline passes, not when a request finally fails.
#[tokio::test]
async fn a_leader_whose_apiserver_hangs_steps_down_at_the_renew_deadline() {
    use axum::http::{Request, Response, StatusCode};
    use kube::client::Body;
    use std::time::Duration;
    use tokio::sync::watch;
    use tokio_util::sync::CancellationToken;

    let (service, mut handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    let mut config = LeaseConfig::new("kruise-webhook-controller", "kruise-system", "me");
    config.lease_duration = Duration::from_secs(3);
    config.renew_deadline = Duration::from_secs(1);
    config.renew_period = Duration::from_millis(200);
    let deadline = config.renew_deadline;
    let elector = Elector::new(kube::Client::new(service, "default"), config);
    let (leading_tx, mut leading) = watch::channel(false);
    let stop = CancellationToken::new();
    let election = tokio::spawn(elector.run(leading_tx, stop.clone()));

    let answer = |status: StatusCode, body: Value| {
        Response::builder()
            .status(status)
            .body(Body::from(serde_json::to_vec(&body).unwrap()))
            .unwrap()
    };
    // No Lease yet: it is created, held by this replica.
    let (_, respond) = handle.next_request().await.expect("the Lease is read");
    let (status, body) =
        crate::controller::tests::fake_apiserver::not_found("leases", "kruise-webhook-controller");
    respond.send_response(answer(status, body));
    let (request, respond) = handle.next_request().await.expect("the Lease is created");
    let sent = request.into_body().collect_bytes().await.unwrap();
    let mut created: Value = serde_json::from_slice(&sent).unwrap();
    created["metadata"]["resourceVersion"] = json!("1");
    respond.send_response(answer(StatusCode::CREATED, created));
    tokio::time::timeout(Duration::from_secs(2), leading.wait_for(|l| *l))
        .await
        .expect("leads after creating the Lease")
        .unwrap();
    let led_at = std::time::Instant::now();

    // From now on every request is taken and never answered.
    let hang = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Some(exchange) = handle.next_request().await {
            held.push(exchange);
        }
    });
    tokio::time::timeout(Duration::from_secs(5), leading.wait_for(|l| !*l))
        .await
        .expect("stepped down while its requests hang")
        .unwrap();
    let led_for = led_at.elapsed();
    assert!(
        led_for < deadline + Duration::from_millis(400),
        "led {led_for:?} without a renewal (deadline {deadline:?})"
    );
    assert!(
        led_for > deadline - Duration::from_millis(400),
        "stepped down after {led_for:?}, before the deadline {deadline:?}"
    );
    stop.cancel();
    tokio::time::timeout(Duration::from_secs(2), election)
        .await
        .expect("the election stops")
        .unwrap();
    hang.abort();
}

/// The apiserver is gone for longer than the renew deadline, then answers again: the replica
/// steps down at the deadline, keeps asking, and leads again once the Lease it still holds can be
/// renewed (client-go's elector goes back to acquiring; a replica that gave up would never lead
/// again).
#[tokio::test]
async fn a_leader_that_missed_its_deadline_leads_again_once_the_apiserver_answers() {
    use axum::http::{Request, Response, StatusCode};
    use kube::client::Body;
    use std::time::Duration;
    use tokio::sync::watch;
    use tokio_util::sync::CancellationToken;

    let (service, mut handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    let mut config = LeaseConfig::new("kruise-webhook-controller", "kruise-system", "me");
    config.lease_duration = Duration::from_secs(3);
    config.renew_deadline = Duration::from_secs(1);
    config.renew_period = Duration::from_millis(200);
    let health = std::sync::Arc::new(LeaseHealth::new());
    let metrics = crate::metrics::Metrics::new();
    let elector = Elector::new(kube::Client::new(service, "default"), config)
        .reporting(health.clone(), metrics.controllers.clone());
    let (leading_tx, mut leading) = watch::channel(false);
    let stop = CancellationToken::new();
    let election = tokio::spawn(elector.run(leading_tx, stop.clone()));

    let answer = |status: StatusCode, body: &Value| {
        Response::builder()
            .status(status)
            .body(Body::from(serde_json::to_vec(body).unwrap()))
            .unwrap()
    };
    // The Lease as stored: created by this replica, then rewritten by each renewal.
    let (_, respond) = handle.next_request().await.expect("the Lease is read");
    let (status, body) =
        crate::controller::tests::fake_apiserver::not_found("leases", "kruise-webhook-controller");
    respond.send_response(answer(status, &body));
    let (request, respond) = handle.next_request().await.expect("the Lease is created");
    let sent = request.into_body().collect_bytes().await.unwrap();
    let mut stored: Value = serde_json::from_slice(&sent).unwrap();
    stored["metadata"]["resourceVersion"] = json!("1");
    respond.send_response(answer(StatusCode::CREATED, &stored));
    tokio::time::timeout(Duration::from_secs(2), leading.wait_for(|l| *l))
        .await
        .expect("leads after creating the Lease")
        .unwrap();

    // The outage: every request is taken and never answered, for three deadlines.
    let outage = Duration::from_secs(3);
    let outage_ends = tokio::time::Instant::now() + outage;
    let mut held = Vec::new();
    loop {
        let exchange = tokio::select! {
            exchange = handle.next_request() => exchange.expect("the elector keeps asking"),
            () = tokio::time::sleep_until(outage_ends) => break,
        };
        held.push(exchange);
    }
    assert!(
        !*leading.borrow(),
        "still leading after an outage of {outage:?}"
    );
    assert!(
        held.len() >= 5,
        "{} requests during the outage: the elector stopped asking",
        held.len()
    );
    drop(held);
    assert!(
        health
            .describe(std::time::Instant::now())
            .starts_with("lease: not leading"),
        "{}",
        health.describe(std::time::Instant::now())
    );

    // The apiserver answers again: reads get the stored Lease, writes replace it.
    let serve = tokio::spawn(async move {
        let mut version = 1;
        while let Some((request, respond)) = handle.next_request().await {
            if request.method() == Method::GET {
                respond.send_response(answer(StatusCode::OK, &stored));
            } else {
                let sent = request.into_body().collect_bytes().await.unwrap();
                stored = serde_json::from_slice(&sent).unwrap();
                version += 1;
                stored["metadata"]["resourceVersion"] = json!(version.to_string());
                respond.send_response(answer(StatusCode::OK, &stored));
            }
        }
    });
    tokio::time::timeout(Duration::from_secs(2), leading.wait_for(|l| *l))
        .await
        .expect("leads again once the apiserver answers")
        .unwrap();
    assert!(
        health
            .describe(std::time::Instant::now())
            .starts_with("lease: leading"),
        "{}",
        health.describe(std::time::Instant::now())
    );
    // A few more rounds: the Lease taken back is renewed as before.
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert!(
        *leading.borrow(),
        "stepped down again with the apiserver answering"
    );
    let text = metrics.encode();
    for outcome in ["acquired", "failed", "renewed"] {
        assert!(
            text.contains(&format!(
                "kruise_webhook_controller_lease_rounds_total{{outcome=\"{outcome}\"}}"
            )),
            "{outcome} not counted:\n{text}"
        );
    }
    stop.cancel();
    tokio::time::timeout(Duration::from_secs(3), election)
        .await
        .expect("the election stops")
        .unwrap();
    serve.abort();
}
