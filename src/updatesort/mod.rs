//! Update order and budgets for every planner (OpenKruise `pkg/util/updatesort` and the
//! partition / maxUnavailable / maxSurge arithmetic): the SidecarSet rollout, the CloneSet, the
//! Advanced StatefulSet and the Advanced DaemonSet all take their order and counts from here.
//! Pure, on the pods' [`crate::podmarks::PodView`].
//!
//! - [`order`]: Kubernetes' active-pods order, `priorityStrategy`, then `scatterStrategy`
//!   ([`order::priority_and_scatter`]);
//! - [`flat_key`]: the same default order as flat keys, for large candidate lists;
//! - [`scatter`]: `scatterStrategy` itself;
//! - [`budget`]: partition and unavailability counts, with each kind's rounding.

pub mod budget;
pub mod flat_key;
pub mod order;
pub mod scatter;
