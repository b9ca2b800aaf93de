//! kruise-webhook: OpenKruise-compatible admission webhooks (SidecarSet injection, container launch
//! priority, SidecarSet defaulting) in one small binary.
//!
//! Data flows one way: bytes → AdmissionReview → typed object → pure function → new object → JSON
//! patch → response. The pure cores (`inject`, `rollout`) never see sockets, clients or files.

pub mod admin;
pub mod admission;
pub mod api;
pub mod app;
pub mod barrier;
pub mod cli;
pub mod cloneset;
pub mod controller;
pub mod convert;
pub mod crds;
pub mod daemonset;
pub mod defaults;
pub mod explain;
pub mod inject;
pub mod inplace;
pub mod k8s;
pub mod metrics;
pub mod migrate;
pub mod nodeagent;
pub mod open_files;
pub mod plan;
pub mod podmarks;
pub mod priority;
pub mod rollout;
pub mod server;
pub mod signal;
pub mod source;
pub mod statefulset;
pub mod tls;
pub mod updatesort;
pub mod validate;
pub mod workload;
pub mod yaml;
