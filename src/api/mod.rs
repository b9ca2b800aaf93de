//! The Kubernetes types this project owns, and the well-known keys of its wire contract.

pub mod cloneset;
pub mod daemonset;
pub mod keys;
pub(crate) mod schema;
pub mod sidecarset;
pub mod statefulset;

pub use sidecarset::*;

#[cfg(test)]
mod sidecarset_builder;
#[cfg(test)]
pub use sidecarset_builder::{SidecarSetBuilder, match_labels};

#[cfg(test)]
mod workload_builder;
#[cfg(test)]
pub use workload_builder::{CloneSetBuilder, DaemonSetBuilder, PodBuilder, StatefulSetBuilder};
