//! SidecarSets the webhooks cannot serve, reported on the sets themselves by the leading
//! replica: the `InjectionFailure` condition and an event when it starts, changes or ends
//! ([`rollout::refusal::injection_failure`] decides). Fed by the catalogue's snapshots
//! ([`super::feed::SidecarSetFeed::refusals`]): every replica computes the same verdicts, only the
//! Lease holder writes them.
//!
//! The condition is written through the status subresource as a merge patch of `conditions`
//! alone, which the rollout's own status writes never carry, guarded against the safety net's
//! writes of the same list ([`super::conditions`]). A set the types cannot read is not in the
//! store: its condition is written as if it had none, and its event is the one the SidecarSet
//! watch already records for it.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::runtime::reflector::{ObjectRef, Store};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::conditions::{ATTEMPTS, ConditionsRead, Written, write_conditions};
use super::{Context, SidecarSetError, api_error, publish_about_set};
use crate::api::{SidecarSet, keys};
use crate::k8s::shared::Shared;
use crate::rollout::refusal::{Refusal, RefusalReason, Refusals, injection_failure};

/// When a write that failed is tried again if nothing else changes.
const RETRY: Duration = Duration::from_secs(30);

/// Reports until `end`: each set of `refusals` gets its condition, each set whose condition this
/// term wrote or that carries one when the term starts is looked at again as refusals change.
pub async fn report(
    context: Arc<Context>,
    mut refusals: watch::Receiver<Arc<Refusals>>,
    store: Store<Shared<SidecarSet>>,
    end: CancellationToken,
) {
    tokio::select! {
        () = end.cancelled() => return,
        ready = store.wait_until_ready() => if ready.is_err() { return },
    }
    // What this term has written: the refusal each condition says (`None`: cleared).
    let mut written: BTreeMap<String, Option<Refusal>> = BTreeMap::new();
    // A term starts from what the sets carry.
    let mut look_again: BTreeSet<String> = store
        .state()
        .iter()
        .filter(|set| !conditions(set).is_empty())
        .map(|set| set.name().to_string())
        .collect();
    loop {
        let current = refusals.borrow_and_update().clone();
        look_again.extend(current.keys().cloned());
        look_again.extend(written.keys().cloned());
        let mut failed = false;
        for name in std::mem::take(&mut look_again) {
            let wanted = current.get(&name).cloned();
            if written.get(&name) == Some(&wanted) {
                continue;
            }
            match write(&context, &store, &name, wanted.as_ref()).await {
                Ok(()) => {
                    written.insert(name, wanted);
                }
                Err(error) => {
                    tracing::warn!(sidecarset = name, %error, "cannot write the InjectionFailure condition; trying again");
                    failed = true;
                    look_again.insert(name);
                }
            }
        }
        let retry = async {
            if failed {
                tokio::time::sleep(RETRY).await
            } else {
                std::future::pending().await
            }
        };
        tokio::select! {
            () = end.cancelled() => return,
            () = retry => {}
            changed = refusals.changed() => if changed.is_err() {
                // No catalogue feeds this process any more: nothing new to report.
                end.cancelled().await;
                return;
            },
        }
    }
}

fn conditions(set: &SidecarSet) -> &[k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition] {
    let conditions = set.status.as_ref().and_then(|s| s.conditions.as_deref());
    let conditions = conditions.unwrap_or(&[]);
    if conditions
        .iter()
        .any(|c| c.type_ == keys::SIDECARSET_INJECTION_FAILURE)
    {
        conditions
    } else {
        &[]
    }
}

/// Makes set `name`'s conditions say `refusal` ([`super::conditions`]).
async fn write(
    context: &Context,
    store: &Store<Shared<SidecarSet>>,
    name: &str,
    refusal: Option<&Refusal>,
) -> Result<(), SidecarSetError> {
    let held = store.get(&ObjectRef::new(name));
    // A set the types refuse is not held: written as if it had no condition, unguarded.
    let first = held
        .as_deref()
        .map(|set| ConditionsRead::of(set))
        .unwrap_or_default();
    let now = Time(Timestamp::now());
    let decide = |read: &ConditionsRead| {
        injection_failure(&read.conditions, refusal, read.generation, &now)
            .map(|change| (change.conditions, change.event))
    };
    let event = match write_conditions(&context.client, name, first, decide).await {
        Ok(Written::Stored { decision, .. }) => decision,
        Ok(Written::Nothing) => return Ok(()),
        Ok(Written::Conflicting) => {
            return Err(SidecarSetError::ConditionConflicts {
                sidecarset: name.to_string(),
                attempts: ATTEMPTS,
            });
        }
        Err(error) => return Err(api_error(format!("sidecarset {name} status"))(error)),
    };
    tracing::info!(
        sidecarset = name,
        reason = refusal.map_or("Served", |r| r.reason.as_str()),
        "InjectionFailure condition written"
    );
    let undecodable = refusal.is_some_and(|r| r.reason == RefusalReason::Undecodable);
    if let Some(set) = held
        && !undecodable
    {
        publish_about_set(context, &set, event).await;
    }
    Ok(())
}
