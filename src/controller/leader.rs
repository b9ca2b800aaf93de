//! Leader election with a `coordination.k8s.io/v1` Lease, client-go style: the holder renews every
//! few seconds; anyone may take the lease once `renewTime + leaseDurationSeconds` has passed; a
//! leader that cannot renew within its renew deadline steps down before others may take over.
//!
//! [`decide`] is the whole policy; [`Elector`] only reads and writes the Lease.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::api::{Api, ObjectMeta, PostParams};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::k8s::retry::is_conflict;

/// Timings, client-go's defaults scaled to the brief: 15 s lease, renew every 5 s.
#[derive(Debug, Clone)]
pub struct LeaseConfig {
    pub name: String,
    pub namespace: String,
    pub identity: String,
    pub lease_duration: Duration,
    pub renew_period: Duration,
    /// A leader that has not renewed for this long stops acting (shorter than the lease, so it
    /// stops before anyone else can start).
    pub renew_deadline: Duration,
}

impl LeaseConfig {
    pub fn new(
        name: impl Into<String>,
        namespace: impl Into<String>,
        identity: impl Into<String>,
    ) -> Self {
        LeaseConfig {
            name: name.into(),
            namespace: namespace.into(),
            identity: identity.into(),
            lease_duration: Duration::from_secs(15),
            renew_period: Duration::from_secs(5),
            renew_deadline: Duration::from_secs(10),
        }
    }
}

/// The parts of a Lease the decision reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LeaseView<'a> {
    pub holder: Option<&'a str>,
    pub renew_time: Option<Timestamp>,
    pub duration_seconds: Option<i32>,
}

impl<'a> LeaseView<'a> {
    pub fn of(lease: &'a Lease) -> Self {
        let spec = lease.spec.as_ref();
        LeaseView {
            holder: spec
                .and_then(|s| s.holder_identity.as_deref())
                .filter(|h| !h.is_empty()),
            renew_time: spec
                .and_then(|s| s.renew_time.as_ref().or(s.acquire_time.as_ref()))
                .map(|t| t.0),
            duration_seconds: spec.and_then(|s| s.lease_duration_seconds),
        }
    }
}

/// What to do with the Lease now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaseDecision {
    /// We hold it: write a new renewTime.
    Renew,
    /// Free or expired: take it (a new holder, acquireTime and a transition).
    Acquire,
    /// Someone else holds a live lease.
    Follow { holder_expires: Timestamp },
}

/// Whether `identity` should take, keep or leave the lease at `now`. A lease without a duration
/// is treated as having `default_duration`.
pub fn decide(
    lease: &LeaseView<'_>,
    identity: &str,
    now: Timestamp,
    default_duration: Duration,
) -> LeaseDecision {
    let Some(holder) = lease.holder else {
        return LeaseDecision::Acquire;
    };
    if holder == identity {
        return LeaseDecision::Renew;
    }
    let Some(renewed) = lease.renew_time else {
        return LeaseDecision::Acquire;
    };
    let duration = lease
        .duration_seconds
        .filter(|s| *s > 0)
        .map(|s| SignedDuration::from_secs(i64::from(s)))
        .unwrap_or_else(|| SignedDuration::try_from(default_duration).unwrap_or_default());
    let expires = renewed.saturating_add(duration).unwrap_or(renewed);
    if now > expires {
        LeaseDecision::Acquire
    } else {
        LeaseDecision::Follow {
            holder_expires: expires,
        }
    }
}

/// The Lease after `decision` by `identity` (`None` for [`LeaseDecision::Follow`]).
pub fn next_lease(
    current: &Lease,
    decision: LeaseDecision,
    config: &LeaseConfig,
    now: Timestamp,
) -> Option<Lease> {
    let mut next = current.clone();
    let spec = next.spec.get_or_insert_with(LeaseSpec::default);
    let duration = i32::try_from(config.lease_duration.as_secs()).unwrap_or(i32::MAX);
    match decision {
        LeaseDecision::Follow { .. } => return None,
        LeaseDecision::Renew => {
            spec.renew_time = Some(MicroTime(now));
            spec.lease_duration_seconds = Some(duration);
        }
        LeaseDecision::Acquire => {
            spec.holder_identity = Some(config.identity.clone());
            spec.acquire_time = Some(MicroTime(now));
            spec.renew_time = Some(MicroTime(now));
            spec.lease_duration_seconds = Some(duration);
            spec.lease_transitions = Some(spec.lease_transitions.unwrap_or(0).saturating_add(1));
        }
    }
    Some(next)
}

#[derive(Debug, thiserror::Error)]
pub enum LeaseError {
    #[error("lease {namespace}/{name}: {source}")]
    Api {
        namespace: String,
        name: String,
        source: kube::Error,
    },
}

/// Runs the election until `shutdown`, publishing leadership on the returned channel, and
/// releases the lease on the way out if held.
pub struct Elector {
    api: Api<Lease>,
    config: LeaseConfig,
}

impl Elector {
    pub fn new(client: kube::Client, config: LeaseConfig) -> Self {
        Elector {
            api: Api::namespaced(client, &config.namespace),
            config,
        }
    }

    pub async fn run(self, leading: watch::Sender<bool>, shutdown: CancellationToken) {
        let mut last_renewal: Option<tokio::time::Instant> = None;
        loop {
            match self.try_once().await {
                Ok(true) => last_renewal = Some(tokio::time::Instant::now()),
                Ok(false) => last_renewal = None,
                Err(error) => tracing::warn!(%error, "lease round failed"),
            }
            let is_leader =
                last_renewal.is_some_and(|at| at.elapsed() < self.config.renew_deadline);
            leading.send_if_modified(|current| {
                let changed = *current != is_leader;
                *current = is_leader;
                changed
            });
            // Followers poll at the same period: a dead leader is noticed within one lease.
            tokio::select! {
                () = shutdown.cancelled() => break,
                () = tokio::time::sleep(self.config.renew_period) => {}
            }
        }
        let was_leader = *leading.borrow();
        leading.send_replace(false);
        if was_leader && let Err(error) = self.release().await {
            tracing::warn!(%error, "releasing the lease failed; it expires on its own");
        }
    }

    fn error(&self, source: kube::Error) -> LeaseError {
        LeaseError::Api {
            namespace: self.config.namespace.clone(),
            name: self.config.name.clone(),
            source,
        }
    }

    /// One read-decide-write round. `Ok(true)`: we hold the lease now.
    pub async fn try_once(&self) -> Result<bool, LeaseError> {
        let now = Timestamp::now();
        let current = match self.api.get_opt(&self.config.name).await {
            Ok(Some(lease)) => lease,
            Ok(None) => {
                let empty = Lease {
                    metadata: ObjectMeta {
                        name: Some(self.config.name.clone()),
                        namespace: Some(self.config.namespace.clone()),
                        ..Default::default()
                    },
                    spec: Some(LeaseSpec::default()),
                };
                let Some(lease) = next_lease(&empty, LeaseDecision::Acquire, &self.config, now)
                else {
                    return Ok(false);
                };
                return match self.api.create(&PostParams::default(), &lease).await {
                    Ok(_) => Ok(true),
                    // Another replica wrote first: it holds the lease; the next round reads it.
                    Err(error) if is_conflict(&error) => Ok(false),
                    Err(source) => Err(self.error(source)),
                };
            }
            Err(source) => return Err(self.error(source)),
        };
        let decision = decide(
            &LeaseView::of(&current),
            &self.config.identity,
            now,
            self.config.lease_duration,
        );
        let Some(lease) = next_lease(&current, decision, &self.config, now) else {
            return Ok(false);
        };
        // The resourceVersion read above makes this a compare-and-swap.
        match self
            .api
            .replace(&self.config.name, &PostParams::default(), &lease)
            .await
        {
            Ok(_) => Ok(true),
            Err(error) if is_conflict(&error) => Ok(false),
            Err(source) => Err(self.error(source)),
        }
    }

    /// Hands the lease back so a successor does not wait for it to expire.
    async fn release(&self) -> Result<(), LeaseError> {
        let Some(mut lease) = self
            .api
            .get_opt(&self.config.name)
            .await
            .map_err(|e| self.error(e))?
        else {
            return Ok(());
        };
        let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
        if spec.holder_identity.as_deref() != Some(self.config.identity.as_str()) {
            return Ok(());
        }
        spec.holder_identity = None;
        spec.lease_duration_seconds = Some(1);
        spec.renew_time = Some(MicroTime(Timestamp::now()));
        self.api
            .replace(&self.config.name, &PostParams::default(), &lease)
            .await
            .map_err(|e| self.error(e))?;
        Ok(())
    }
}

/// This replica's identity: the pod name (`POD_NAME`, else `HOSTNAME`) plus a random suffix, so
/// a restarted process never mistakes its predecessor's lease for its own.
pub fn default_identity() -> String {
    let base = std::env::var("POD_NAME")
        .or_else(|_| std::env::var("HOSTNAME"))
        .unwrap_or_else(|_| "kruise-webhook".into());
    let suffix: String = (0..6).map(|_| fastrand::alphanumeric()).collect();
    format!("{base}_{}", suffix.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    const LEASE: Duration = Duration::from_secs(15);

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(1_700_000_000 + seconds).unwrap()
    }

    fn view(holder: Option<&str>, renewed: Option<i64>, duration: Option<i32>) -> LeaseView<'_> {
        LeaseView {
            holder,
            renew_time: renewed.map(at),
            duration_seconds: duration,
        }
    }

    #[test]
    fn free_lease_is_taken() {
        assert_eq!(
            decide(&view(None, None, None), "me", at(0), LEASE),
            LeaseDecision::Acquire
        );
        assert_eq!(
            decide(&view(None, Some(0), Some(15)), "me", at(1), LEASE),
            LeaseDecision::Acquire
        );
    }

    #[test]
    fn own_lease_is_renewed_even_if_expired() {
        assert_eq!(
            decide(&view(Some("me"), Some(0), Some(15)), "me", at(100), LEASE),
            LeaseDecision::Renew
        );
    }

    #[test]
    fn live_foreign_lease_is_followed_until_it_expires() {
        let lease = view(Some("other"), Some(0), Some(15));
        assert_eq!(
            decide(&lease, "me", at(15), LEASE),
            LeaseDecision::Follow {
                holder_expires: at(15)
            }
        );
        assert_eq!(decide(&lease, "me", at(16), LEASE), LeaseDecision::Acquire);
    }

    #[test]
    fn missing_or_zero_duration_uses_the_default() {
        let lease = view(Some("other"), Some(0), None);
        assert!(matches!(
            decide(&lease, "me", at(10), LEASE),
            LeaseDecision::Follow { .. }
        ));
        assert_eq!(decide(&lease, "me", at(16), LEASE), LeaseDecision::Acquire);
        let zero = view(Some("other"), Some(0), Some(0));
        assert!(matches!(
            decide(&zero, "me", at(10), LEASE),
            LeaseDecision::Follow { .. }
        ));
    }

    #[test]
    fn released_lease_expires_after_one_second() {
        let lease = view(Some("other"), Some(0), Some(1));
        assert_eq!(decide(&lease, "me", at(2), LEASE), LeaseDecision::Acquire);
    }

    #[test]
    fn foreign_holder_without_renew_time_is_taken() {
        assert_eq!(
            decide(&view(Some("other"), None, Some(15)), "me", at(0), LEASE),
            LeaseDecision::Acquire
        );
    }

    #[test]
    fn view_treats_empty_holder_as_free_and_falls_back_to_acquire_time() {
        let lease = Lease {
            spec: Some(LeaseSpec {
                holder_identity: Some(String::new()),
                acquire_time: Some(MicroTime(at(3))),
                ..Default::default()
            }),
            ..Default::default()
        };
        let v = LeaseView::of(&lease);
        assert_eq!(v.holder, None);
        assert_eq!(v.renew_time, Some(at(3)));
    }

    #[test]
    fn acquire_counts_a_transition_and_renew_does_not() {
        let config = LeaseConfig::new("l", "ns", "me");
        let current = Lease {
            spec: Some(LeaseSpec {
                holder_identity: Some("other".into()),
                lease_transitions: Some(4),
                acquire_time: Some(MicroTime(at(0))),
                ..Default::default()
            }),
            ..Default::default()
        };
        let taken = next_lease(&current, LeaseDecision::Acquire, &config, at(20)).unwrap();
        let spec = taken.spec.as_ref().unwrap();
        assert_eq!(spec.holder_identity.as_deref(), Some("me"));
        assert_eq!(spec.lease_transitions, Some(5));
        assert_eq!(spec.acquire_time, Some(MicroTime(at(20))));
        assert_eq!(spec.lease_duration_seconds, Some(15));

        let renewed = next_lease(&taken, LeaseDecision::Renew, &config, at(25)).unwrap();
        let spec = renewed.spec.as_ref().unwrap();
        assert_eq!(spec.lease_transitions, Some(5));
        assert_eq!(spec.acquire_time, Some(MicroTime(at(20))));
        assert_eq!(spec.renew_time, Some(MicroTime(at(25))));
        assert!(
            next_lease(
                &taken,
                LeaseDecision::Follow {
                    holder_expires: at(0)
                },
                &config,
                at(25)
            )
            .is_none()
        );
    }
}
