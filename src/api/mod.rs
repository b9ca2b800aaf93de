//! The Kubernetes types this project owns, and the well-known keys of its wire contract.

pub mod keys;
pub mod sidecarset;

pub use sidecarset::*;
