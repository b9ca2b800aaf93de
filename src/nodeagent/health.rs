//! What the node agent tells its probes and scrapes (served on `--admin-listen` by the process,
//! [`crate::app::node_agent`]): its reconciles as a controller, the containers it restarted, and
//! whether it is connected to the container runtime.

use std::sync::atomic::{AtomicBool, Ordering};

use prometheus_client::metrics::counter::Counter;
use prometheus_client::registry::Registry;

use crate::metrics::{ControllerMetrics, PREFIX};

#[derive(Debug)]
pub struct AgentHealth {
    registry: Registry,
    /// The agent's reconciles, counted as the controller `kruise-daemon-containermeta`.
    pub controller: ControllerMetrics,
    restarts: Counter,
    runtime_connected: AtomicBool,
}

impl Default for AgentHealth {
    fn default() -> Self {
        Self::new()
    }
}

impl AgentHealth {
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix(PREFIX);
        let controller = ControllerMetrics::register(&mut registry);
        let restarts = Counter::default();
        registry.register(
            "node_agent_container_restarts",
            "Containers the node agent stopped so that the kubelet starts them with the env their pod's metadata gives",
            restarts.clone(),
        );
        AgentHealth {
            registry,
            controller,
            restarts,
            runtime_connected: AtomicBool::new(false),
        }
    }

    pub fn record_restart(&self) {
        self.restarts.inc();
    }

    pub fn set_runtime_connected(&self, connected: bool) {
        self.runtime_connected.store(connected, Ordering::Release);
    }

    /// Why the agent is not ready; empty when it is.
    pub fn unmet_conditions(&self) -> Vec<&'static str> {
        if self.runtime_connected.load(Ordering::Acquire) {
            Vec::new()
        } else {
            vec!["container runtime not connected"]
        }
    }

    /// Every metric in the OpenMetrics text format.
    pub fn encode(&self) -> String {
        let mut text = String::with_capacity(2048);
        if let Err(error) = prometheus_client::encoding::text::encode(&mut text, &self.registry) {
            tracing::warn!(%error, "encoding metrics failed");
        }
        text
    }
}

#[cfg(test)]
mod tests;
