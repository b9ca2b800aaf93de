//! Pure validators: each returns every Kubernetes-style field error it finds.

pub mod cloneset;
pub mod daemonset;
pub mod deletion;
pub mod field;
pub mod pod;
pub mod sidecarset;
pub mod statefulset;
pub mod workload;
