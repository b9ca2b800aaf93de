//! The planner in a small simulated cluster (apiserver, kubelet, garbage collector), shared by
//! the tests in `tests/`.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod, PodStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::apimachinery::pkg::runtime::RawExtension;
use serde_json::{Value, json};

use super::*;
use crate::api::keys;
use crate::podmarks::PodView;
use crate::workload::pod::{label, lifecycle};
use crate::workload::revision;
use crate::workload::simulation::Cluster;

mod cases;
mod property;

const T0: i64 = 1_700_000_000;

fn at(seconds: i64) -> Timestamp {
    Timestamp::from_second(T0 + seconds).unwrap()
}

fn template(image: &str) -> Value {
    json!({
        "metadata": {"labels": {"app": "web"}},
        "spec": {
            "containers": [{"name": "main", "image": image}],
            "readinessGates": [{"conditionType": "InPlaceUpdateReady"}]
        }
    })
}

/// The release note's shape: `web` in `db`, a `data` claim template, the given spec merged in.
fn statefulset(replicas: i32, spec: Value) -> StatefulSet {
    let mut value = json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": "db", "uid": "set-uid", "generation": 1},
        "spec": {
            "replicas": replicas, "serviceName": "web",
            "selector": {"matchLabels": {"app": "web"}},
            "template": template("nginx:1"),
            "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}}}}],
            "podManagementPolicy": "OrderedReady",
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {
                "partition": 0, "maxUnavailable": 1, "podUpdatePolicy": "ReCreate"}},
            "revisionHistoryLimit": 10
        }
    });
    merge(&mut value["spec"], spec);
    serde_json::from_value(value).unwrap()
}

fn merge(into: &mut Value, from: Value) {
    match (into, from) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                merge(a.entry(k).or_insert(Value::Null), v);
            }
        }
        (slot, value) => *slot = value,
    }
}

/// What the garbage collector deleted, by name.
#[derive(Debug, Default)]
struct Collected {
    claims: Vec<String>,
}

/// The simulated cluster: one set, its pods and claims, its history, a clock, a kubelet and a
/// garbage collector.
struct World {
    set: StatefulSet,
    pods: Vec<Arc<Pod>>,
    claims: BTreeMap<String, Arc<PersistentVolumeClaim>>,
    history: Vec<ControllerRevision>,
    now: i64,
    version: u64,
    uids: u64,
    /// Pods the kubelet leaves alone (never running).
    stuck: Vec<String>,
    collected: Collected,
}

impl World {
    fn new(set: StatefulSet) -> World {
        let mut world = World {
            set,
            pods: Vec::new(),
            claims: BTreeMap::new(),
            history: Vec::new(),
            now: 0,
            version: 1,
            uids: 0,
            stuck: Vec::new(),
            collected: Collected::default(),
        };
        world.sync_revision();
        world
    }

    /// What the shell does before planning: make the update revision exist.
    fn sync_revision(&mut self) -> String {
        let data = revision::revision_data(&self.set.spec.template).unwrap();
        let same = |r: &ControllerRevision| revision::stored_data(r) == data;
        let next = self.history.last().map_or(1, |r| r.revision + 1);
        if self.history.last().is_some_and(same) {
            return self.history.last().unwrap().metadata.name.clone().unwrap();
        }
        if let Some(older) = self.history.iter_mut().rev().find(|r| same(r)) {
            older.revision = next;
            let name = older.metadata.name.clone().unwrap();
            revision::sort_history(&mut self.history);
            return name;
        }
        let name = revision::revision_name("web", &revision::revision_hash(&data, 0));
        let mut r = ControllerRevision::default();
        r.metadata.name = Some(name.clone());
        r.data = Some(RawExtension(serde_json::from_str(&data).unwrap()));
        r.revision = next;
        self.history.push(r);
        name
    }

    fn next_version(&mut self) -> String {
        self.version += 1;
        self.version.to_string()
    }

    fn next_uid(&mut self, kind: &str) -> String {
        self.uids += 1;
        format!("{kind}-uid-{}", self.uids)
    }

    fn listed(&self) -> Vec<ListedPod> {
        self.pods.iter().cloned().map(ListedPod::whole).collect()
    }

    /// One plan over the world as it is; also planned with every pod as a summary only, which
    /// must ask for exactly the pods it acts on and then give the same plan.
    fn plan(&mut self) -> Plan {
        let update = self.sync_revision();
        let whole = self.listed();
        let snapshot = |pods: &[ListedPod]| -> Plan {
            plan(&Snapshot {
                set: &self.set,
                pods,
                claims: &self.claims,
                history: &self.history,
                update_revision: &update,
                collision_count: 0,
                now: at(self.now),
            })
            .unwrap()
        };
        let planned = snapshot(&whole);
        assert!(planned.needs_whole.is_empty());
        let mut summaries: Vec<ListedPod> = whole
            .iter()
            .map(|p| ListedPod::summary(p.summary.clone()))
            .collect();
        let first = snapshot(&summaries);
        for p in &mut summaries {
            if first.needs_whole.iter().any(|n| n == p.name()) {
                p.whole = whole
                    .iter()
                    .find(|w| w.name() == p.name())
                    .unwrap()
                    .whole
                    .clone();
            }
        }
        let mut again = snapshot(&summaries);
        // Reading pods whole may reveal more pods to read (a later step reached).
        while !again.needs_whole.is_empty() {
            for p in &mut summaries {
                if again.needs_whole.iter().any(|n| n == p.name()) {
                    p.whole = whole
                        .iter()
                        .find(|w| w.name() == p.name())
                        .unwrap()
                        .whole
                        .clone();
                }
            }
            again = snapshot(&summaries);
        }
        assert_eq!(again, planned);
        planned
    }

    fn pod_index(&self, name: &str) -> Option<usize> {
        self.pods
            .iter()
            .position(|p| p.metadata.name.as_deref() == Some(name))
    }

    /// Applies a plan as the apiserver would, then lets the garbage collector run.
    fn apply(&mut self, plan: &Plan) {
        for action in &plan.actions {
            match action {
                Action::CreatePvc { pvc: claim, .. } => {
                    let name = claim.metadata.name.clone().unwrap();
                    assert!(!self.claims.contains_key(&name), "claim {name} exists");
                    let mut claim = PersistentVolumeClaim::clone(claim);
                    claim.metadata.uid = Some(self.next_uid("claim"));
                    claim.metadata.resource_version = Some(self.next_version());
                    self.claims.insert(name, Arc::new(claim));
                }
                Action::CreatePod { pod, .. } => {
                    let name = pod.metadata.name.clone().unwrap();
                    assert!(self.pod_index(&name).is_none(), "pod {name} exists");
                    let mut pod = Pod::clone(pod);
                    pod.metadata.uid = Some(self.next_uid("pod"));
                    pod.metadata.resource_version = Some(self.next_version());
                    pod.metadata.creation_timestamp = Some(Time(at(self.now)));
                    pod.status = Some(PodStatus {
                        phase: Some("Pending".into()),
                        ..Default::default()
                    });
                    self.pods.push(Arc::new(pod));
                }
                Action::UpdatePvcOwners {
                    before,
                    owner_references,
                    ..
                } => {
                    let name = before.metadata.name.clone().unwrap();
                    let cached = &self.claims[&name];
                    assert_eq!(
                        cached.metadata.resource_version, before.metadata.resource_version,
                        "conflicting write to claim {name}"
                    );
                    let mut claim = PersistentVolumeClaim::clone(cached);
                    claim.metadata.owner_references = Some(owner_references.clone());
                    claim.metadata.resource_version = Some(self.next_version());
                    self.claims.insert(name, Arc::new(claim));
                }
                Action::DeletePod { name } => {
                    let index = self.pod_index(name).expect("delete of an unknown pod");
                    let mut pod = Pod::clone(&self.pods[index]);
                    pod.metadata.deletion_timestamp = Some(Time(at(self.now)));
                    pod.metadata.resource_version = Some(self.next_version());
                    self.pods[index] = Arc::new(pod);
                }
                Action::WritePod { before, writes, .. } => {
                    let name = before.metadata.name.clone().unwrap();
                    let index = self.pod_index(&name).unwrap();
                    assert_eq!(
                        self.pods[index].metadata.resource_version,
                        before.metadata.resource_version,
                        "conflicting write to {name}"
                    );
                    let mut pod = writes.last().unwrap().pod.clone();
                    pod.metadata.resource_version = Some(self.next_version());
                    self.pods[index] = Arc::new(pod);
                }
                Action::UpdatePod { before, after } => {
                    let name = before.metadata.name.clone().unwrap();
                    let index = self.pod_index(&name).unwrap();
                    assert_eq!(
                        self.pods[index].metadata.resource_version,
                        before.metadata.resource_version,
                        "conflicting write to {name}"
                    );
                    let mut pod = Pod::clone(after);
                    pod.metadata.resource_version = Some(self.next_version());
                    self.pods[index] = Arc::new(pod);
                }
                Action::Event(_) => {}
            }
        }
        if plan.write_status {
            self.set.status = Some(plan.status.clone());
        }
        self.history.retain(|r| {
            !plan
                .revisions_to_delete
                .contains(r.metadata.name.as_ref().unwrap())
        });
    }

    /// Kubelet: terminating pods without finalizers go, the others run their spec images and
    /// report readiness ([`Cluster::kubelet`]); the garbage collector follows.
    fn kubelet(&mut self) {
        self.pods.retain(|p| {
            p.metadata.deletion_timestamp.is_none()
                || p.metadata
                    .finalizers
                    .as_ref()
                    .is_some_and(|f| !f.is_empty())
        });
        let mut cluster = Cluster::new(T0);
        cluster.now = self.now;
        cluster.version = self.version;
        cluster.stuck = self.stuck.clone();
        cluster.pods = std::mem::take(&mut self.pods);
        cluster.kubelet();
        self.version = cluster.version;
        self.pods = cluster.pods;
        self.collect_garbage();
    }

    /// Claims owned by a pod or set that is gone are deleted.
    fn collect_garbage(&mut self) {
        let live: Vec<String> = self
            .pods
            .iter()
            .filter_map(|p| p.metadata.uid.clone())
            .chain(
                self.set
                    .metadata
                    .deletion_timestamp
                    .is_none()
                    .then(|| self.set.metadata.uid.clone().unwrap()),
            )
            .collect();
        let gone: Vec<String> = self
            .claims
            .iter()
            .filter(|(_, c)| {
                c.metadata
                    .owner_references
                    .iter()
                    .flatten()
                    .any(|r| !live.contains(&r.uid))
            })
            .map(|(n, _)| n.clone())
            .collect();
        for name in gone {
            self.claims.remove(&name);
            self.collected.claims.push(name);
        }
    }

    /// One reconcile, then one second of kubelet.
    fn round(&mut self) -> Plan {
        let plan = self.plan();
        self.apply(&plan);
        self.now += 1;
        self.kubelet();
        plan
    }

    /// Rounds until a reconcile writes nothing; the number of rounds it took.
    fn settle(&mut self, max_rounds: usize) -> usize {
        for n in 0..max_rounds {
            let plan = self.round();
            if plan.actions.is_empty() && !plan.write_status {
                return n;
            }
        }
        panic!(
            "no convergence after {max_rounds} rounds: {:#?}",
            self.summary()
        );
    }

    fn summary(&self) -> Vec<(String, String, String, bool)> {
        self.pods
            .iter()
            .map(|p| {
                (
                    p.metadata.name.clone().unwrap(),
                    label(&**p, keys::CONTROLLER_REVISION_HASH)
                        .unwrap_or("")
                        .to_string(),
                    lifecycle(&**p).to_string(),
                    p.metadata.deletion_timestamp.is_some(),
                )
            })
            .collect()
    }

    fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .pods
            .iter()
            .map(|p| p.metadata.name.clone().unwrap())
            .collect();
        names.sort();
        names
    }

    fn pod(&self, name: &str) -> &Pod {
        &self.pods[self.pod_index(name).unwrap()]
    }

    fn set_template(&mut self, template: Value) {
        self.set.spec.template = serde_json::from_value(template).unwrap();
        self.set.metadata.generation = Some(self.set.metadata.generation.unwrap_or(1) + 1);
    }

    fn scale(&mut self, replicas: i32) {
        self.set.spec.replicas = Some(replicas);
        self.set.metadata.generation = Some(self.set.metadata.generation.unwrap_or(1) + 1);
    }

    fn status(&self) -> &crate::api::statefulset::StatefulSetStatus {
        self.set.status.as_ref().unwrap()
    }

    fn owners(&self, claim: &str) -> Vec<String> {
        self.claims[claim]
            .metadata
            .owner_references
            .iter()
            .flatten()
            .map(|r| format!("{}/{}", r.kind, r.name))
            .collect()
    }
}

fn creates(plan: &Plan) -> Vec<&str> {
    plan.actions
        .iter()
        .filter_map(|a| match a {
            Action::CreatePod { pod, .. } => pod.metadata.name.as_deref(),
            _ => None,
        })
        .collect()
}

fn deletes(plan: &Plan) -> Vec<&str> {
    plan.actions
        .iter()
        .filter_map(|a| match a {
            Action::DeletePod { name } => Some(name.as_str()),
            _ => None,
        })
        .collect()
}

fn claim_writes(plan: &Plan) -> Vec<(String, Vec<String>)> {
    plan.actions
        .iter()
        .filter_map(|a| match a {
            Action::UpdatePvcOwners {
                before,
                owner_references,
                ..
            } => Some((
                before.metadata.name.clone().unwrap(),
                owner_references
                    .iter()
                    .map(|r| format!("{}/{}", r.kind, r.name))
                    .collect(),
            )),
            _ => None,
        })
        .collect()
}
