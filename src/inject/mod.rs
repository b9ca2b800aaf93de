//! The pure core: SidecarSet hashes, sidecar injection, container launch priority.
//! Nothing in here performs I/O.

pub mod gojson;
pub mod hash;
pub mod launch_priority;
pub mod quantity;
pub mod selector;
pub mod sidecar;
