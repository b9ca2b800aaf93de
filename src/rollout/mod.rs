//! The pure SidecarSet rollout planner: which pods a SidecarSet matches, its status, which pods
//! one reconcile round upgrades (strategy, order, partition, unavailability budget), and what is
//! written to an upgraded pod. No I/O and no clock: the controller shell passes pods (as shared
//! handles, never copied on the read path) and `now`, and performs the writes. The planner reads
//! pods through [`PodView`], so it decides the same on a full `Pod` and on the compact
//! [`PodSummary`] the controller caches for it. [`round`] turns a round's plan into the work the
//! controller executes (status, pods, events, when to look again); [`engine`] decides how an
//! upgrade of several launch priorities goes through the in-place engine; [`missing`] finds the
//! pods a SidecarSet selects that lack its containers (the controller's safety net).

pub mod engine;
pub mod history;
pub mod missing;
pub mod plan;
pub mod pod_state;
pub mod refusal;
pub mod round;
pub mod upgrade;

pub use engine::{UpgradeRoute, engine_revision, upgrade_route};
pub use plan::{
    Halt, RolloutError, RoundPlan, compute_status, facts_of, matched_pods, plan_round,
    upgrade_order,
};
pub use pod_state::{PodFacts, SidecarSetView, pod_facts};
pub use round::{PlannedEvent, RoundActions, Subject, round_actions};
pub use upgrade::{
    ImageChange, PodUpgrade, UpgradeError, reset_idle_copies, upgradable_condition, upgrade_pod,
    with_upgradable_condition,
};
