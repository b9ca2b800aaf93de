use super::*;
use crate::statefulset::ordinals::{ReplicaRange, Reserved};
use crate::statefulset::pod::{Availability, Phase};
use crate::workload::lifecycle::LifecycleState as Lifecycle;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Did {
    Create(i64),
    Delete(String),
    Claims(String),
    Refresh(String),
    Identity(String),
    Condemned(String),
    Wait(u64),
}

/// Records what the phase asks for; answers from its settings.
struct Recorder<'a> {
    names: &'a [&'a str],
    slots: &'a Slots,
    did: Vec<Did>,
    /// Slot ordinals whose creation a stale claim blocks.
    blocked: Vec<i64>,
    /// Pods whose deletion writes nothing (already PreparingDelete, hook holding).
    held: Vec<&'a str>,
    /// A pod whose identity fix fails.
    failing: Option<&'a str>,
}

impl<'a> Recorder<'a> {
    fn new(names: &'a [&'a str], slots: &'a Slots) -> Self {
        Recorder {
            names,
            slots,
            did: Vec::new(),
            blocked: Vec::new(),
            held: Vec::new(),
            failing: None,
        }
    }
    fn name(&self, position: usize) -> String {
        self.names[position].to_string()
    }
}

impl Hands for Recorder<'_> {
    type Error = String;
    fn creation_blocked(&mut self, index: usize) -> bool {
        self.blocked.contains(&self.slots.ordinal_at(index))
    }
    fn create(&mut self, index: usize) -> Result<(), String> {
        self.did.push(Did::Create(self.slots.ordinal_at(index)));
        Ok(())
    }
    fn delete(&mut self, position: usize) -> Result<bool, String> {
        let held = self.held.contains(&self.names[position]);
        if !held {
            self.did.push(Did::Delete(self.name(position)));
        }
        Ok(!held)
    }
    fn create_missing_claims(&mut self, position: usize) -> Result<(), String> {
        self.did.push(Did::Claims(self.name(position)));
        Ok(())
    }
    fn refresh(&mut self, position: usize) -> Result<(), String> {
        self.did.push(Did::Refresh(self.name(position)));
        Ok(())
    }
    fn enforce_identity(&mut self, position: usize) -> Result<(), String> {
        if self.failing == Some(self.names[position]) {
            return Err(format!("cannot fix {}", self.names[position]));
        }
        self.did.push(Did::Identity(self.name(position)));
        Ok(())
    }
    fn fix_condemned_claims(&mut self, position: usize) -> Result<(), String> {
        self.did.push(Did::Condemned(self.name(position)));
        Ok(())
    }
    fn wait(&mut self, after: Duration) {
        self.did.push(Did::Wait(after.as_secs()));
    }
}

fn ready() -> StatefulPodFacts {
    StatefulPodFacts {
        phase: Phase::Running,
        terminating: false,
        lifecycle: Lifecycle::Normal,
        running_ready: true,
        healthy: true,
        availability: Availability::Available,
        at_update: true,
        at_current: true,
        names_update: true,
        specified_delete: false,
    }
}

fn pending() -> StatefulPodFacts {
    StatefulPodFacts {
        phase: Phase::Pending,
        running_ready: false,
        healthy: false,
        availability: Availability::No,
        ..ready()
    }
}

fn terminating() -> StatefulPodFacts {
    StatefulPodFacts {
        terminating: true,
        healthy: false,
        ..ready()
    }
}

fn failed() -> StatefulPodFacts {
    StatefulPodFacts {
        phase: Phase::Failed,
        running_ready: false,
        healthy: false,
        availability: Availability::No,
        ..ready()
    }
}

fn waiting(seconds: u64) -> StatefulPodFacts {
    StatefulPodFacts {
        availability: Availability::After(Duration::from_secs(seconds)),
        ..ready()
    }
}

fn pre_deleting() -> StatefulPodFacts {
    StatefulPodFacts {
        lifecycle: Lifecycle::PreparingDelete,
        healthy: false,
        availability: Availability::No,
        ..ready()
    }
}

/// One phase over `pods` (name, facts) of a set of `replicas` with `reserved` ordinals.
struct Case<'a> {
    replicas: i64,
    reserved: Vec<i32>,
    pods: Vec<(&'a str, StatefulPodFacts)>,
    monotonic: bool,
    max_unavailable: Option<i64>,
    blocked: Vec<i64>,
    held: Vec<&'a str>,
    failing: Option<&'a str>,
}

impl<'a> Case<'a> {
    fn ordered(replicas: i64, pods: Vec<(&'a str, StatefulPodFacts)>) -> Self {
        Case {
            replicas,
            reserved: Vec::new(),
            pods,
            monotonic: true,
            max_unavailable: None,
            blocked: Vec::new(),
            held: Vec::new(),
            failing: None,
        }
    }
    fn parallel(replicas: i64, pods: Vec<(&'a str, StatefulPodFacts)>) -> Self {
        Case {
            monotonic: false,
            ..Case::ordered(replicas, pods)
        }
    }

    fn run(&self) -> (Result<Flow, String>, Vec<Did>) {
        let reserved: Vec<IntOrString> =
            self.reserved.iter().map(|n| IntOrString::Int(*n)).collect();
        let range = ReplicaRange::new(0, self.replicas, Reserved::of(Some(&reserved))).unwrap();
        let names: Vec<&str> = self.pods.iter().map(|(n, _)| *n).collect();
        let facts: Vec<StatefulPodFacts> = self.pods.iter().map(|(_, f)| *f).collect();
        let slots = Slots::of("web", range, names.iter().copied());
        let mut hands = Recorder::new(&names, &slots);
        hands.blocked = self.blocked.clone();
        hands.held = self.held.clone();
        hands.failing = self.failing;
        let flow = Scale {
            slots: &slots,
            facts: &facts,
            monotonic: self.monotonic,
            max_unavailable: self.max_unavailable,
        }
        .run(&mut hands);
        (flow, hands.did)
    }
}

fn names(did: &[Did]) -> Vec<String> {
    did.iter().map(|d| format!("{d:?}")).collect()
}

use Did::*;

#[test]
fn ordered_ready_creates_the_lowest_missing_pod_and_stops() {
    let (flow, did) = Case::ordered(3, vec![]).run();
    assert_eq!((flow, did), (Ok(Flow::Stop), vec![Create(0)]));
    // AS-1 round 2: web-0 pending: its claims, its refresh, then the round waits for it.
    let (flow, did) = Case::ordered(3, vec![("web-0", pending())]).run();
    assert_eq!(
        (flow, did),
        (
            Ok(Flow::Stop),
            vec![Claims("web-0".into()), Refresh("web-0".into())]
        )
    );
    // AS-1 round 3: web-0 ready: web-1 is made.
    let (flow, did) = Case::ordered(3, vec![("web-0", ready())]).run();
    assert_eq!(
        (flow, did),
        (
            Ok(Flow::Stop),
            vec![Refresh("web-0".into()), Identity("web-0".into()), Create(1)]
        )
    );
    // All there and ready: on to the update.
    let pods = vec![("web-0", ready()), ("web-1", ready())];
    let (flow, _) = Case::ordered(2, pods).run();
    assert_eq!(flow, Ok(Flow::Continue));
}

#[test]
fn ordered_ready_waits_for_min_ready_seconds_and_terminating_pods() {
    let (flow, did) = Case::ordered(2, vec![("web-0", waiting(7))]).run();
    assert_eq!(
        (flow, did),
        (Ok(Flow::Stop), vec![Refresh("web-0".into()), Wait(7)])
    );
    let (flow, did) = Case::ordered(2, vec![("web-0", terminating())]).run();
    assert_eq!((flow, did), (Ok(Flow::Stop), vec![]));
    // A gap below a ready pod is filled first.
    let (_, did) = Case::ordered(3, vec![("web-1", ready())]).run();
    assert_eq!(did, vec![Create(0)]);
}

#[test]
fn reserved_ordinals_are_skipped() {
    // AS-7: R 3, reserve [1]: web-0, web-2, web-3.
    let mut case = Case::ordered(3, vec![("web-0", ready())]);
    case.reserved = vec![1];
    let (_, did) = case.run();
    assert_eq!(
        did,
        vec![Refresh("web-0".into()), Identity("web-0".into()), Create(2)]
    );
    let mut case = Case::parallel(3, vec![]);
    case.reserved = vec![1];
    assert_eq!(case.run().1, vec![Create(0), Create(2), Create(3)]);
}

#[test]
fn failed_pods_are_deleted_and_stop_an_ordered_round() {
    let pods = vec![("web-0", ready()), ("web-1", failed())];
    let (flow, did) = Case::ordered(3, pods.clone()).run();
    assert_eq!(
        (flow, did),
        (
            Ok(Flow::Stop),
            vec![
                Refresh("web-0".into()),
                Identity("web-0".into()),
                Delete("web-1".into())
            ]
        )
    );
    // Parallel goes on to the next slot.
    let (flow, did) = Case::parallel(3, pods).run();
    assert_eq!(flow, Ok(Flow::Continue));
    assert_eq!(did.last(), Some(&Create(2)));
    // A failed pod already terminating is waited for.
    let mut gone = failed();
    gone.terminating = true;
    let (_, did) = Case::ordered(2, vec![("web-0", gone)]).run();
    assert!(did.is_empty());
}

#[test]
fn a_stale_claim_blocks_creation() {
    let mut case = Case::ordered(2, vec![("web-0", ready())]);
    case.blocked = vec![1];
    let (flow, did) = case.run();
    assert_eq!(flow, Ok(Flow::Stop));
    assert!(!did.contains(&Create(1)));
    let mut case = Case::parallel(3, vec![]);
    case.blocked = vec![1];
    assert_eq!(case.run().1, vec![Create(0), Create(2)]);
}

#[test]
fn parallel_scale_out_within_scale_max_unavailable() {
    // AS-12: R 0→5, maxUnavailable 2.
    let mut case = Case::parallel(5, vec![]);
    case.max_unavailable = Some(2);
    assert_eq!(case.run().1, vec![Create(0), Create(1)]);
    // Both pending: both spend the budget, nothing is made.
    let mut case = Case::parallel(5, vec![("web-0", pending()), ("web-1", pending())]);
    case.max_unavailable = Some(2);
    let (flow, did) = case.run();
    assert_eq!(flow, Ok(Flow::Continue));
    assert_eq!(
        did,
        vec![
            Claims("web-0".into()),
            Refresh("web-0".into()),
            Identity("web-0".into()),
            Claims("web-1".into()),
            Refresh("web-1".into())
        ]
    );
    // web-0 available: web-1 spends one, web-2 is made and spends the last.
    let mut case = Case::parallel(5, vec![("web-0", ready()), ("web-1", pending())]);
    case.max_unavailable = Some(2);
    let did = case.run().1;
    assert_eq!(did.last(), Some(&Create(2)));
    assert!(!did.contains(&Create(3)));
    // Without the budget every missing pod is made in one round.
    let mut case = Case::parallel(4, vec![("web-0", pending()), ("web-2", terminating())]);
    case.max_unavailable = None;
    let did = case.run().1;
    assert_eq!(
        did.iter().filter(|d| matches!(d, Create(_))).count(),
        2,
        "{did:?}"
    );
}

#[test]
fn ordered_scale_in_deletes_the_highest_condemned_pod_once_all_are_ready() {
    // AS-2: 5 → 3.
    let pods = vec![
        ("web-0", ready()),
        ("web-1", ready()),
        ("web-2", ready()),
        ("web-3", ready()),
        ("web-4", ready()),
    ];
    let (flow, did) = Case::ordered(3, pods.clone()).run();
    assert_eq!(flow, Ok(Flow::Stop));
    assert_eq!(
        names(&did[6..]),
        names(&[
            Condemned("web-4".into()),
            Condemned("web-3".into()),
            Delete("web-4".into())
        ])
    );
    // web-4 terminating: wait.
    let mut going = pods.clone();
    going[4].1 = terminating();
    let (flow, did) = Case::ordered(3, going).run();
    assert_eq!(flow, Ok(Flow::Stop));
    assert!(!did.iter().any(|d| matches!(d, Delete(_))));
    // Parallel: all condemned at once.
    let did = Case::parallel(3, pods).run().1;
    let deleted: Vec<&Did> = did.iter().filter(|d| matches!(d, Delete(_))).collect();
    assert_eq!(
        deleted,
        vec![&Delete("web-4".into()), &Delete("web-3".into())]
    );
}

#[test]
fn an_unhealthy_condemned_pod_is_deleted_only_if_it_is_the_first_unhealthy() {
    let base = vec![("web-0", ready()), ("web-1", ready())];
    // web-3 not ready, web-2 ready: web-3 is the first unhealthy: deleted.
    let mut pods = base.clone();
    pods.push(("web-2", ready()));
    pods.push(("web-3", pending()));
    let did = Case::ordered(2, pods).run().1;
    assert_eq!(did.last(), Some(&Delete("web-3".into())));
    // web-3 not ready and web-2 not ready: web-2 is first; web-3 (visited first) blocks.
    let mut pods = base.clone();
    pods.push(("web-2", pending()));
    pods.push(("web-3", pending()));
    let (flow, did) = Case::ordered(2, pods).run();
    assert_eq!(flow, Ok(Flow::Stop));
    assert!(!did.iter().any(|d| matches!(d, Delete(_))));
    // Ready but not yet available long enough: wait.
    let mut pods = base.clone();
    pods.push(("web-2", pending()));
    pods.push(("web-3", waiting(4)));
    let (_, did) = Case::ordered(2, pods).run();
    assert_eq!(did.last(), Some(&Wait(4)));
    // AS-13: a held PreparingDelete pod writes nothing and does not stop the round.
    let mut pods = base.clone();
    pods.push(("web-2", pre_deleting()));
    let mut case = Case::ordered(2, pods);
    case.held = vec!["web-2"];
    assert_eq!(case.run().0, Ok(Flow::Continue));
}

#[test]
fn errors_end_the_round() {
    let mut case = Case::ordered(2, vec![("web-0", ready()), ("web-1", ready())]);
    case.failing = Some("web-0");
    let (flow, did) = case.run();
    assert_eq!(flow, Err("cannot fix web-0".into()));
    assert_eq!(did, vec![Refresh("web-0".into())]);
}

#[test]
fn the_budget_counts_down_to_a_break() {
    let mut budget = Budget(Some(2));
    assert!(!budget.spend());
    assert!(budget.spend());
    assert!(budget.spend());
    let mut none = Budget(None);
    assert!(!none.spend());
}
