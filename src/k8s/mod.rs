//! The ground floor: Kubernetes and Go-compatibility helpers that every other module may use.
//! Nothing here knows about injection, rollouts, validation or I/O; it imports only the wire
//! types and keys of [`crate::api`]. [`retry`] is the one conflict-retry loop every shell uses.

pub mod go_text;
pub mod gojson;
pub mod intstr;
pub mod lenient;
pub mod names;
pub mod quantity;
pub mod retry;
pub mod selector;
pub mod shared;
