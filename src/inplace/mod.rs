//! The in-place update engine: pure functions that decide how a running pod moves to a new
//! revision without being recreated, in OpenKruise's wire format.
//!
//! - [`calculate`]: can the change be applied in place at all (only images, plus template
//!   metadata), and what exactly changes.
//! - [`step`]: given the pod as it is now, the one write to make next — readiness gate False,
//!   grace period, batches in container launch priority order, completion, gate True.
//! - [`state`], [`batch`], [`completion`], [`conditions`], [`metadata_patch`], [`restart_record`]: the pieces.
//!
//! Nothing here knows about SidecarSets or CloneSets, reads a clock, or talks to the apiserver:
//! callers pass `now` in and send the returned pod themselves.

pub mod batch;
pub mod calculate;
pub mod completion;
pub mod conditions;
pub mod env_hash;
pub mod metadata_patch;
pub mod restart_record;
/// The engine's state annotations live with the other pod marks.
pub use crate::podmarks::inplace_state as state;
pub mod step;

pub use calculate::{CalculateOptions, EnvFromMetadata, NotInPlace, Revision, calculate_spec};
pub use completion::{ContainerHasher, Incomplete, NoRuntimeHashes, pod_update_completed};
pub use state::{InPlaceUpdateState, UpdateSpec};
pub use step::{
    BatchKind, EngineError, EngineOptions, SIDECARSET_ENGINE, Step, Write, at_rest, at_rest_each,
    in_flight_revision, next_step, refresh, start_update, start_update_owned, update_in_flight,
};
