//! `kruise-webhook node-agent`: one process per node that lets env values read from pod metadata
//! change in place (OpenKruise's kruise-daemon container-meta agent).
//!
//! The kubelet resolves an env `fieldRef` on `metadata.labels['k']` / `metadata.annotations['k']`
//! only when it starts a container, and never restarts one because the pod's metadata changed.
//! The agent records, per running container, the hash of the env values it was started with
//! (`apps.kruise.io/runtime-containers-meta`); while an in-place update is in progress and the
//! pod's metadata gives a container a different hash, it stops that container through CRI, and
//! the kubelet starts it again with the new values. The in-place engine reads the record to tell
//! when the step is done.
//!
//! - [`decide`]: pure decisions (which pods, the record, which containers to stop).
//! - [`cri`]: the runtime client (CRI v1 over the runtime's unix socket).
//! - [`agent`]: the watch and the writes.
//! - [`health`]: its metrics and readiness, for the probes of its DaemonSet.

pub mod agent;
pub mod command;
pub mod cri;
pub mod decide;
pub mod health;
