//! Defaults, applied the way OpenKruise's mutating webhooks apply them, with no I/O: the
//! SidecarSet's (then its hashes, which are computed on the defaulted form) in [`sidecarset`],
//! the Kruise workloads' and their pod templates' in [`workload`]. Kubernetes' container, probe
//! and volume defaults live in [`sidecarset`] and are shared by both.

pub mod sidecarset;
pub mod workload;
