//! The safety net: each reconcile of a SidecarSet reports the pods it selects that lack its
//! containers ([`rollout::missing`] decides) in three places, and rewrites no pod:
//! - its `PodsMissingSidecars` condition, written only when its text changes, beside the refusal
//!   reporter's `InjectionFailure` without undoing it ([`super::conditions`]);
//! - the gauge `kruise_webhook_sidecarset_pods_missing_sidecars{sidecarset}`, dropped once the
//!   set is gone ([`forget_deleted`]) or the term ends;
//! - one Warning event per pod and set, named after both ([`EventRecorder::record_once`]), so
//!   neither a later reconcile nor another term tells it twice while it lasts.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use jiff::Timestamp;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::runtime::reflector::{ObjectRef, Store};
use tokio_util::sync::CancellationToken;

use super::conditions::{ATTEMPTS, ConditionsRead, Written, write_conditions};
use super::{Context, SidecarSetError, api_error, kube_event};
use crate::api::SidecarSet;
use crate::k8s::selector::Labels;
use crate::k8s::shared::Shared;
use crate::podmarks::PodSummary;
use crate::rollout::missing::pods_missing_condition;
use crate::rollout::missing::{MissingPod, MissingSidecars, missing_event, missing_sidecars};

#[cfg(doc)]
use super::super::events::EventRecorder;

/// How often the series and memory of SidecarSets that are gone are dropped.
const FORGET_EVERY: Duration = Duration::from_secs(10);

/// The pods this term told about, by uid, per SidecarSet: those still lacking its containers.
#[derive(Debug, Default)]
pub struct Told(Mutex<BTreeMap<String, BTreeSet<String>>>);

impl Told {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, BTreeSet<String>>> {
        // A panic while holding it leaves a set of uids: still a sane answer.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Checks `set` (as stored) over the pods and namespaces the round read, and reports.
pub(super) async fn check(
    context: &Context,
    set: &SidecarSet,
    summaries: &[Arc<PodSummary>],
    namespaces: &BTreeMap<String, Labels>,
) -> Result<(), SidecarSetError> {
    let name = set.name();
    let held: Vec<Arc<Shared<SidecarSet>>> = context
        .canaries
        .canaries_of(name)
        .iter()
        .filter_map(|canary| context.sidecarsets.get(&ObjectRef::new(canary)))
        .collect();
    let canaries: Vec<&SidecarSet> = held.iter().map(|s| -> &SidecarSet { s }).collect();
    let verdict = missing_sidecars(set, &canaries, summaries, |ns| namespaces.get(ns))?;
    context
        .metrics
        .set_pods_missing_sidecars(name, verdict.count());
    tell_pods(context, name, &verdict).await;
    write_condition(context, set, &verdict).await
}

/// One Warning event on each pod not told about yet; pods no longer lacking the containers are
/// forgotten, so that they are told again should they lack them again.
async fn tell_pods(context: &Context, sidecarset: &str, verdict: &MissingSidecars) {
    let untold: Vec<&MissingPod> = {
        let mut told = context.told.lock();
        let told = told.entry(sidecarset.to_string()).or_default();
        told.retain(|uid| verdict.pods.iter().any(|pod| pod.uid == *uid));
        verdict
            .pods
            .iter()
            .filter(|pod| !told.contains(&pod.uid))
            .collect()
    };
    for pod in untold {
        tracing::warn!(
            sidecarset,
            pod = pod.key(),
            reason = pod.reason.describe(),
            "pod lacks the sidecars of a SidecarSet that selects it"
        );
        let reference = ObjectReference {
            api_version: Some("v1".into()),
            kind: Some("Pod".into()),
            name: Some(pod.name.clone()),
            namespace: Some(pod.namespace.clone()),
            uid: Some(pod.uid.clone()).filter(|uid| !uid.is_empty()),
            ..ObjectReference::default()
        };
        let event = kube_event(missing_event(sidecarset, pod));
        let cause = format!("{sidecarset}/{}", pod.uid);
        if context
            .recorder
            .record_once(&reference, &event, &cause)
            .await
        {
            let mut told = context.told.lock();
            told.entry(sidecarset.to_string())
                .or_default()
                .insert(pod.uid.clone());
        }
    }
}

/// Writes the condition when its text changes ([`conditions`](super::conditions)).
async fn write_condition(
    context: &Context,
    set: &SidecarSet,
    verdict: &MissingSidecars,
) -> Result<(), SidecarSetError> {
    let name = set.name();
    let now = Time(Timestamp::now());
    let decide = |read: &ConditionsRead| {
        pods_missing_condition(&read.conditions, verdict, read.generation, &now).map(|c| (c, ()))
    };
    let written = write_conditions(&context.client, name, ConditionsRead::of(set), decide).await;
    match written.map_err(api_error(format!("sidecarset {name} status")))? {
        Written::Stored {
            resource_version, ..
        } => {
            tracing::info!(
                sidecarset = name,
                missing = verdict.count(),
                "PodsMissingSidecars condition written"
            );
            let mut own_writes = context.lock_own_writes();
            own_writes.wrote(name, resource_version.as_deref(), Instant::now());
            Ok(())
        }
        Written::Nothing => Ok(()),
        Written::Conflicting => Err(SidecarSetError::ConditionConflicts {
            sidecarset: name.to_string(),
            attempts: ATTEMPTS,
        }),
    }
}

/// Until `end`: drops the gauge series and the memory of the SidecarSets `store` no longer holds.
pub async fn forget_deleted(
    context: Arc<Context>,
    store: Store<Shared<SidecarSet>>,
    end: CancellationToken,
) {
    loop {
        tokio::select! {
            () = end.cancelled() => return,
            () = tokio::time::sleep(FORGET_EVERY) => {}
        }
        forget_all_but(&context, &store);
    }
}

/// Drops what is kept about every SidecarSet `store` does not hold. Looks up only the sets
/// something is kept about, not every set the store holds: this runs every [`FORGET_EVERY`]
/// whether anything changed or not, and an idle process must not walk 50,000 sets for it.
pub(super) fn forget_all_but(context: &Context, store: &Store<Shared<SidecarSet>>) {
    forget(context, |name| store.get(&ObjectRef::new(name)).is_some());
}

/// Drops every series and memory at the end of a term: the next leader reports.
pub(super) fn forget_everything(context: &Context) {
    forget(context, |_| false);
}

fn forget(context: &Context, keep: impl Fn(&str) -> bool) {
    let gone: Vec<String> = {
        let mut told = context.told.lock();
        let gone = told.keys().filter(|name| !keep(name)).cloned().collect();
        told.retain(|name, _| keep(name));
        gone
    };
    for name in gone {
        context.metrics.forget_pods_missing_sidecars(&name);
    }
}
