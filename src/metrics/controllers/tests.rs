use super::*;
use prometheus_client::encoding::text::encode;

#[test]
fn reconciles_errors_and_timeouts_are_counted_by_controller() {
    let mut registry = Registry::with_prefix("kruise_webhook");
    let metrics = ControllerMetrics::register(&mut registry);
    metrics.observe_reconcile("cloneset-controller", true, Duration::from_millis(3));
    metrics.observe_reconcile("cloneset-controller", false, Duration::from_millis(40));
    metrics.observe_reconcile("sidecarset-controller", true, Duration::from_micros(500));
    metrics.expectation_timeouts("cloneset-controller").inc();
    let running = metrics.reconcile_started("cloneset-controller");
    drop(metrics.reconcile_started("cloneset-controller"));
    metrics.set_leading(true);
    metrics.observe_api_wait(Duration::from_millis(20));
    metrics.reconcile_failed("daemonset-controller", "api_409");
    let mut text = String::new();
    encode(&mut text, &registry).unwrap();
    for line in [
        r#"kruise_webhook_controller_reconciles_total{controller="cloneset-controller"} 2"#,
        r#"kruise_webhook_controller_reconciles_total{controller="sidecarset-controller"} 1"#,
        r#"kruise_webhook_controller_reconcile_errors_total{controller="cloneset-controller"} 1"#,
        r#"kruise_webhook_controller_reconcile_duration_seconds_count{controller="cloneset-controller"} 2"#,
        r#"kruise_webhook_controller_reconcile_duration_seconds_bucket{le="0.005",controller="cloneset-controller"} 1"#,
        r#"kruise_webhook_controller_expectation_timeouts_total{controller="cloneset-controller"} 1"#,
        "kruise_webhook_controller_leading 1",
        r#"kruise_webhook_controller_reconciles_in_flight{controller="cloneset-controller"} 1"#,
        "kruise_webhook_controller_api_wait_seconds_count 1",
        r#"kruise_webhook_controller_reconcile_failures_total{controller="daemonset-controller",reason="api_409"} 1"#,
    ] {
        assert!(text.contains(line), "missing {line:?} in:\n{text}");
    }
    assert!(!text.contains(r#"reconcile_errors_total{controller="sidecarset-controller"}"#));
    drop(running);
}
