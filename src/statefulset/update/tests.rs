use super::*;
use crate::statefulset::ordinals::{ReplicaRange, Reserved};
use crate::statefulset::pod::{Availability, Phase};
use crate::workload::lifecycle::LifecycleState as Lifecycle;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Did {
    Delete(String),
    Update(String),
    Wait(u64),
}
use Did::*;

struct Recorder<'a> {
    names: &'a [String],
    did: Vec<Did>,
    /// Pods whose deletion the preDelete hook holds; pods updated in place.
    held: Vec<&'a str>,
    in_place: bool,
    /// Higher first under the priority strategy.
    weights: Vec<(&'a str, i32)>,
    failing: Option<&'a str>,
}

impl Hands for Recorder<'_> {
    type Error = String;
    fn delete(&mut self, position: usize) -> Result<bool, String> {
        self.did.push(Delete(self.names[position].clone()));
        Ok(!self.held.contains(&self.names[position].as_str()))
    }
    fn update(&mut self, position: usize) -> Result<Updated, String> {
        let name = self.names[position].clone();
        if Some(name.as_str()) == self.failing {
            return Err(format!(
                "find strategy is InPlaceOnly but Pod {name} can not update in-place"
            ));
        }
        self.did.push(Update(name.clone()));
        Ok(if self.in_place {
            Updated::InPlace
        } else if self.held.contains(&name.as_str()) {
            Updated::PreDeleting
        } else {
            Updated::Deleted
        })
    }
    fn wait(&mut self, after: Duration) {
        self.did.push(Wait(after.as_secs()));
    }
    fn priority(&self, a: Option<usize>, b: Option<usize>) -> Ordering {
        let weight = |p: Option<usize>| {
            p.and_then(|p| {
                self.weights
                    .iter()
                    .find(|(n, _)| *n == self.names[p])
                    .map(|(_, w)| *w)
            })
            .unwrap_or(0)
        };
        weight(b).cmp(&weight(a))
    }
}

fn old() -> StatefulPodFacts {
    StatefulPodFacts {
        phase: Phase::Running,
        terminating: false,
        lifecycle: Lifecycle::Normal,
        running_ready: true,
        healthy: true,
        availability: Availability::Available,
        at_update: false,
        at_current: true,
        names_update: false,
        specified_delete: false,
    }
}

fn new() -> StatefulPodFacts {
    StatefulPodFacts {
        at_update: true,
        at_current: false,
        names_update: true,
        ..old()
    }
}

fn unhealthy(f: StatefulPodFacts) -> StatefulPodFacts {
    StatefulPodFacts {
        running_ready: false,
        healthy: false,
        availability: Availability::No,
        ..f
    }
}

struct Case<'a> {
    replicas: i64,
    reserved: Vec<i32>,
    pods: Vec<(String, StatefulPodFacts)>,
    partition: i64,
    max_unavailable: i64,
    unordered: bool,
    incomplete: Vec<&'a str>,
    held: Vec<&'a str>,
    in_place: bool,
    weights: Vec<(&'a str, i32)>,
    failing: Option<&'a str>,
}

impl<'a> Case<'a> {
    fn new(replicas: i64, pods: Vec<(&str, StatefulPodFacts)>) -> Self {
        Case {
            replicas,
            reserved: vec![],
            pods: pods.into_iter().map(|(n, f)| (n.to_string(), f)).collect(),
            partition: 0,
            max_unavailable: 1,
            unordered: false,
            incomplete: vec![],
            held: vec![],
            in_place: false,
            weights: vec![],
            failing: None,
        }
    }

    fn run(&self) -> (Result<Taken, String>, Vec<Did>) {
        let reserved: Vec<_> = self
            .reserved
            .iter()
            .map(|n| k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(*n))
            .collect();
        let range = ReplicaRange::new(0, self.replicas, Reserved::of(Some(&reserved))).unwrap();
        let names: Vec<String> = self.pods.iter().map(|(n, _)| n.clone()).collect();
        let facts: Vec<StatefulPodFacts> = self.pods.iter().map(|(_, f)| *f).collect();
        let slots = Slots::of("web", range, names.iter().map(String::as_str));
        let complete = |p: usize| !self.incomplete.contains(&names[p].as_str());
        let new_pod_updated = |_: usize| true;
        let rolling = Rolling {
            slots: &slots,
            facts: &facts,
            update_complete: &complete,
            new_pod_updated: &new_pod_updated,
            replicas: self.replicas,
            partition: self.partition,
            max_unavailable: self.max_unavailable,
            unordered: self.unordered,
        };
        let mut hands = Recorder {
            names: &names,
            did: vec![],
            held: self.held.clone(),
            in_place: self.in_place,
            weights: self.weights.clone(),
            failing: self.failing,
        };
        let taken = rolling.run(&mut hands);
        (taken, hands.did)
    }
}

fn all(n: usize, f: StatefulPodFacts) -> Vec<(String, StatefulPodFacts)> {
    (0..n).map(|i| (format!("web-{i}"), f)).collect()
}

fn case(replicas: i64, pods: Vec<(String, StatefulPodFacts)>) -> Case<'static> {
    let mut c = Case::new(replicas, vec![]);
    c.pods = pods;
    c
}

#[test]
fn highest_first_down_to_the_partition_one_at_a_time() {
    // AS-8: R 5, partition 2: web-4 first.
    let mut c = case(5, all(5, old()));
    c.partition = 2;
    c.in_place = true;
    let (taken, did) = c.run();
    assert_eq!(did, vec![Update("web-4".into())]);
    assert_eq!(
        taken,
        Ok(Taken {
            current: 1,
            updated: 0
        })
    );
    // web-4 updated but not yet ready: it holds the budget, web-3 waits.
    let mut pods = all(5, old());
    pods[4].1 = unhealthy(new());
    let mut c = case(5, pods);
    c.partition = 2;
    assert_eq!(c.run().1, vec![]);
    // Ready again: web-3, then (next rounds) web-2, never web-1.
    let mut pods = all(5, old());
    pods[4].1 = new();
    pods[3].1 = new();
    pods[2].1 = new();
    let mut c = case(5, pods);
    c.partition = 2;
    assert_eq!(c.run(), (Ok(Taken::default()), vec![]));
}

#[test]
fn an_incomplete_in_place_update_or_min_ready_wait_counts_as_unavailable() {
    let mut pods = all(3, old());
    pods[2].1 = new();
    let mut c = case(3, pods.clone());
    c.incomplete = vec!["web-2"];
    assert_eq!(c.run().1, vec![]);
    pods[2].1.availability = Availability::After(Duration::from_secs(9));
    let c = case(3, pods);
    assert_eq!(c.run().1, vec![Wait(9)]);
}

#[test]
fn unhealthy_old_pods_are_updated_for_free_and_below_the_partition_count() {
    // web-0 unhealthy below the partition takes the budget of 1: healthy web-2 waits.
    let mut pods = all(3, old());
    pods[0].1 = unhealthy(old());
    let mut c = case(3, pods.clone());
    c.partition = 1;
    assert_eq!(c.run().1, vec![]);
    // Unhealthy web-2 is updated although web-0 is unavailable; web-1 then waits.
    pods[2].1 = unhealthy(old());
    let mut c = case(3, pods);
    c.partition = 1;
    assert_eq!(c.run().1, vec![Update("web-2".into())]);
}

#[test]
fn max_unavailable_lets_several_go_at_once() {
    // AS-11: R 5, ReCreate, maxUnavailable 2: web-4 and web-3.
    let mut c = case(5, all(5, old()));
    c.max_unavailable = 2;
    let (taken, did) = c.run();
    assert_eq!(did, vec![Update("web-4".into()), Update("web-3".into())]);
    assert_eq!(taken.unwrap().current, 2);
    // A missing slot (being recreated) counts against the budget.
    let mut pods = all(5, old());
    pods.remove(4);
    pods.remove(3);
    let mut c = case(5, pods);
    c.max_unavailable = 2;
    assert_eq!(c.run().1, vec![]);
}

#[test]
fn held_deletions_do_not_lower_the_counters() {
    let mut c = case(2, all(2, old()));
    c.held = vec!["web-1"];
    let (taken, did) = c.run();
    assert_eq!(did, vec![Update("web-1".into())]);
    assert_eq!(taken, Ok(Taken::default()));
}

#[test]
fn specified_deletes_come_first_and_ignore_the_partition() {
    let mut pods = all(4, old());
    pods[0].1.specified_delete = true;
    pods[3].1 = new();
    pods[3].1.specified_delete = true;
    let mut c = case(4, pods.clone());
    c.partition = 3;
    c.max_unavailable = 2;
    let (taken, did) = c.run();
    assert_eq!(did, vec![Delete("web-3".into()), Delete("web-0".into())]);
    assert_eq!(
        taken,
        Ok(Taken {
            current: 1,
            updated: 1
        })
    );
    // Budget 1: web-3 goes, web-0 is skipped (not stopped at), nothing else updated.
    let mut c = case(4, pods);
    c.partition = 0;
    let (_, did) = c.run();
    assert_eq!(did, vec![Delete("web-3".into())]);
}

#[test]
fn terminating_pods_are_left_to_finish() {
    let mut pods = all(2, old());
    pods[1].1.terminating = true;
    pods[1].1.healthy = false;
    let c = case(2, pods);
    assert_eq!(c.run().1, vec![]);
}

#[test]
fn reserved_slots_are_not_updated_and_the_partition_is_an_index() {
    // R 3, reserve [1]: slots 0, 2, 3; partition 2 → only index 3 (web-3) and index 2 (web-2)?
    // maxUpdate = 3 - 2 = 1: web-3 only.
    let pods = vec![
        ("web-0".to_string(), old()),
        ("web-2".to_string(), old()),
        ("web-3".to_string(), old()),
    ];
    let mut c = case(3, pods);
    c.reserved = vec![1];
    c.partition = 2;
    c.max_unavailable = 3;
    assert_eq!(c.run().1, vec![Update("web-3".into())]);
}

#[test]
fn unordered_update_by_priority() {
    // AS-15: R 5, partition 2, web-1 and web-3 weighted, maxUnavailable 2 → web-3, web-1.
    let mut c = case(5, all(5, old()));
    c.partition = 2;
    c.unordered = true;
    c.max_unavailable = 2;
    c.weights = vec![("web-1", 10), ("web-3", 10)];
    assert_eq!(
        c.run().1,
        vec![Update("web-3".into()), Update("web-1".into())]
    );
    // Updated pods first in the cut: with web-4 updated, only two more of the waiting.
    let mut pods = all(5, old());
    pods[4].1 = new();
    let mut c = case(5, pods);
    c.partition = 2;
    c.unordered = true;
    c.max_unavailable = 5;
    c.weights = vec![("web-0", 1)];
    assert_eq!(
        c.run().1,
        vec![Update("web-0".into()), Update("web-3".into())]
    );
}

#[test]
fn a_partition_at_or_above_replicas_updates_nothing_and_errors_end_the_phase() {
    let mut c = case(3, all(3, old()));
    c.partition = 3;
    assert_eq!(c.run().1, vec![]);
    let mut c = case(3, all(3, old()));
    c.max_unavailable = 3;
    c.failing = Some("web-1");
    let (taken, did) = c.run();
    assert_eq!(
        taken,
        Err("find strategy is InPlaceOnly but Pod web-1 can not update in-place".into())
    );
    assert_eq!(did, vec![Update("web-2".into())]);
}
