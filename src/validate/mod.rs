//! Pure validators: each returns every Kubernetes-style field error it finds.

pub mod field;
pub mod pod;
pub mod sidecarset;
