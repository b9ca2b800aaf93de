//! Defaults, applied the way OpenKruise's mutating webhooks apply them, with no I/O: the
//! SidecarSet's (then its hashes, which are computed on the defaulted form) in [`sidecarset`],
//! the Kruise workloads' and their pod templates' in [`workload`]. Kubernetes' container, probe
//! and volume defaults, which both apply, live in [`pod`].

pub mod pod;
pub mod sidecarset;
pub mod workload;
