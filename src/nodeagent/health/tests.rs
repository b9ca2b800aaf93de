use super::*;

#[test]
fn ready_once_connected_and_counting_restarts_and_reconciles() {
    let health = AgentHealth::new();
    assert_eq!(
        health.unmet_conditions(),
        ["container runtime not connected"]
    );
    health.set_runtime_connected(true);
    assert!(health.unmet_conditions().is_empty());
    health.record_restart();
    health.controller.observe_reconcile(
        "kruise-daemon-containermeta",
        true,
        std::time::Duration::from_millis(2),
    );
    let text = health.encode();
    assert!(
        text.contains("\nkruise_webhook_node_agent_container_restarts_total 1\n"),
        "{text}"
    );
    assert!(
            text.contains(
                r#"kruise_webhook_controller_reconciles_total{controller="kruise-daemon-containermeta"} 1"#
            ),
            "{text}"
        );
    assert!(text.ends_with("# EOF\n"));
}
