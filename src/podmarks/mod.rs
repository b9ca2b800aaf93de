//! What Kruise writes on a pod, in one room: the SidecarSet hash, injected-list and hot-upgrade
//! annotations ([`codec`], with the predicates over a pod in [`sidecarset`]), the workload
//! in-place update state ([`inplace_state`]), the shared `KruisePodReady` condition
//! ([`kruise_ready`]), and the one way every planner reads them
//! ([`PodView`], on a full pod or on the compact [`PodSummary`]).
//!
//! Inside, the modules import in one direction: [`fields`] and [`codec`] know no view; [`view`]
//! reads through them; [`summary`] implements the view; [`sidecarset`] asks the view.
//! Pure: no I/O, no clock. Imports only [`crate::api`] and [`crate::k8s`].

pub mod codec;
pub mod fields;
pub mod inplace_state;
pub mod kruise_ready;
pub mod sidecarset;
pub mod summary;
pub mod view;

pub use summary::{EngineOwner, PodSummary};
pub use view::{
    ContainerView, EngineProgress, HashAnnotation, PlannerAnnotation, PodView, RecordedHashes,
    StatusView, UpgradableView,
};
