//! The Advanced StatefulSet controller's pure core (OpenKruise `pkg/controller/statefulset`).

pub mod events;
pub mod identity;
pub mod ordinals;
pub mod pod;
pub mod retention;
pub mod scale;
pub mod shared;
pub mod status;
pub mod update;
