//! Which DaemonSets a Node event concerns (upstream `nodeEventHandler`): a new node concerns
//! those that should run a pod on it; a changed node those for which it now should or should not
//! run or keep a pod, or whose `rollingUpdate.selector` now chooses it differently; a deleted
//! node none (its pods go with it, and unscheduled ones are deleted on the next round).

use super::node::NodeSummary;
use super::placement::{Placement, selected_for_update};
use crate::api::daemonset::DaemonSet;

/// The DaemonSets of `sets` concerned by a node going from `old` (`None`: new) to `new`.
pub fn concerned<'a>(
    sets: impl IntoIterator<Item = &'a DaemonSet>,
    old: Option<&NodeSummary>,
    new: &NodeSummary,
) -> Vec<&'a DaemonSet> {
    if old == Some(new) {
        return Vec::new();
    }
    sets.into_iter()
        .filter(|set| {
            let placement = Placement::of(set);
            match old {
                None => placement.fit(new).should_run,
                Some(old) => {
                    placement.fit(old) != placement.fit(new)
                        || selected_for_update(set, old) != selected_for_update(set, new)
                }
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
