//! The pure core: SidecarSet hashes, sidecar injection, container launch priority.
//! Nothing in here performs I/O.

mod build;
pub mod candidates;
pub mod hash;
pub mod launch_priority;
pub mod prepared;
pub mod resources_policy;
pub mod revision;
pub mod sidecar;

#[cfg(test)]
pub(crate) mod tests;
