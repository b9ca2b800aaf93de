//! PVC names, reuse and clean-up, alone and through the planner over a few rounds.

use crate::cloneset::ListedPod;
use crate::workload::Workload;
use crate::workload::pvc::mount;
use std::collections::BTreeSet;
use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{Pod, PodStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::cloneset::{Plan, Snapshot, plan_with_claims, revision};

fn cloneset(replicas: i32, claims: Value, scale_strategy: Value) -> CloneSet {
    serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "cs", "namespace": "ns", "uid": "cs-uid", "generation": 1},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "cs"}},
            "template": {
                "metadata": {"labels": {"app": "cs"}},
                "spec": {
                    "containers": [{"name": "main", "image": "main:v1",
                                    "volumeMounts": [{"name": "data", "mountPath": "/data"}]}],
                    "volumes": [
                        {"name": "data", "emptyDir": {}},
                        {"name": "config", "configMap": {"name": "cfg"}}
                    ]
                }
            },
            "volumeClaimTemplates": claims,
            "scaleStrategy": scale_strategy
        }
    }))
    .unwrap()
}

fn data_template() -> Value {
    json!([{
        "metadata": {"name": "data", "labels": {"tier": "storage"}},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    }])
}

fn with_data(replicas: i32) -> CloneSet {
    cloneset(replicas, data_template(), json!({}))
}

/// A pod of the CloneSet with instance id `id`; `state`: "active", "finished" or "terminating".
fn pod_with(id: &str, state: &str) -> Arc<Pod> {
    let mut pod: Pod = serde_json::from_value(json!({
        "metadata": {
            "name": format!("cs-{id}"), "namespace": "ns", "uid": format!("uid-{id}"),
            "labels": {"app": "cs", INSTANCE_ID: id}
        },
        "spec": {"containers": [{"name": "main", "image": "main:v1"}]},
        "status": {"phase": if state == "finished" { "Failed" } else { "Running" }}
    }))
    .unwrap();
    if state == "terminating" {
        pod.metadata.deletion_timestamp = Some(Time(Timestamp::UNIX_EPOCH));
    }
    Arc::new(pod)
}

/// A listed PVC of id `id` owned by the CloneSet.
fn claim(template: &str, id: &str, terminating: bool) -> ObjectMeta {
    let set = with_data(1);
    ObjectMeta {
        name: Some(claim_name(template, &set, id)),
        namespace: Some("ns".into()),
        resource_version: Some("7".into()),
        labels: Some([("app".into(), "cs".into()), (INSTANCE_ID.into(), id.into())].into()),
        owner_references: Some(vec![set.owner_reference()]),
        deletion_timestamp: terminating.then_some(Time(Timestamp::UNIX_EPOCH)),
        ..Default::default()
    }
}

fn create(pod: Arc<Pod>) -> Action {
    Action::CreatePod {
        pod: Box::new(Pod::clone(&pod)),
        revision: "cs-1".into(),
    }
}

fn delete(name: &str) -> Action {
    Action::DeletePod { name: name.into() }
}

fn refs(claims: &[ObjectMeta]) -> Vec<&ObjectMeta> {
    claims.iter().collect()
}

#[test]
fn a_claim_is_the_template_named_for_the_cloneset_and_id_labelled_and_owned() {
    let set = with_data(1);
    let claims = claims_for(&set, "x2b4d");
    assert_eq!(claims.len(), 1);
    let claim = &claims[0];
    assert_eq!(claim.metadata.name.as_deref(), Some("data-cs-x2b4d"));
    assert_eq!(claim.metadata.namespace.as_deref(), Some("ns"));
    let labels = claim.metadata.labels.as_ref().unwrap();
    assert_eq!(labels.get("tier").map(String::as_str), Some("storage"));
    assert_eq!(labels.get("app").map(String::as_str), Some("cs"));
    assert_eq!(labels.get(INSTANCE_ID).map(String::as_str), Some("x2b4d"));
    assert_eq!(labels.len(), 3);
    let owners = claim.metadata.owner_references.as_ref().unwrap();
    assert_eq!(owners.len(), 1);
    assert_eq!(owners[0].kind, "CloneSet");
    assert_eq!(owners[0].uid, "cs-uid");
    assert_eq!(owners[0].controller, Some(true));
    assert_eq!(owners[0].block_owner_deletion, Some(true));
    assert_eq!(
        serde_json::to_value(&claim.spec).unwrap(),
        json!({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}})
    );
}

#[test]
fn every_template_gives_a_claim_and_a_volume_in_template_order() {
    let set = cloneset(
        1,
        json!([{"metadata": {"name": "logs"}, "spec": {}}, {"metadata": {"name": "data"}, "spec": {}}]),
        json!({}),
    );
    let names: Vec<String> = claims_for(&set, "abcde")
        .into_iter()
        .map(|c| c.metadata.name.unwrap())
        .collect();
    assert_eq!(names, ["logs-cs-abcde", "data-cs-abcde"]);
    let mut spec = set.spec.template.spec.clone().unwrap();
    mount(&set, &mut spec, "abcde");
    let volumes = serde_json::to_value(&spec.volumes).unwrap();
    assert_eq!(
        volumes,
        json!([
            {"name": "logs", "persistentVolumeClaim": {"claimName": "logs-cs-abcde"}},
            {"name": "data", "persistentVolumeClaim": {"claimName": "data-cs-abcde"}},
            {"name": "config", "configMap": {"name": "cfg"}}
        ])
    );
}

#[test]
fn without_templates_there_are_no_claims_and_the_volumes_stay() {
    let set = cloneset(1, Value::Null, json!({}));
    assert!(claims_for(&set, "abcde").is_empty());
    let mut spec = set.spec.template.spec.clone().unwrap();
    let before = spec.clone();
    mount(&set, &mut spec, "abcde");
    assert_eq!(spec, before);
    let plan = plan(
        &set,
        &[pod_with("aaaaa", "active")],
        &[],
        &[create(pod_with("bbbbb", "active")), delete("cs-aaaaa")],
    );
    assert!(plan.is_empty(), "{plan:?}");
}

#[test]
fn a_new_pod_gets_only_the_claims_that_do_not_exist() {
    let set = cloneset(
        1,
        json!([{"metadata": {"name": "logs"}, "spec": {}}, {"metadata": {"name": "data"}, "spec": {}}]),
        json!({}),
    );
    let listed = [claim("data", "bbbbb", false)];
    let plan = plan(
        &set,
        &[] as &[Pod],
        &refs(&listed),
        &[create(pod_with("bbbbb", "active"))],
    );
    let created: Vec<&str> = plan.create["cs-bbbbb"]
        .iter()
        .map(|c| c.metadata.name.as_deref().unwrap())
        .collect();
    assert_eq!(created, ["logs-cs-bbbbb"]);
}

#[test]
fn ids_of_claims_no_pod_uses_are_reused_first() {
    let set = with_data(3);
    let pods = [pod_with("aaaaa", "active")];
    let listed = [claim("data", "aaaaa", false), claim("data", "bbbbb", false)];
    let mut ids = InstanceIds::new(&set, &pods, &refs(&listed));
    let mut rng = fastrand::Rng::with_seed(1);
    assert_eq!(ids.next(&mut rng), "bbbbb");
    let fresh = ids.next(&mut rng);
    assert!(!["aaaaa", "bbbbb"].contains(&fresh.as_str()));
    assert_eq!(fresh.len(), 5);
    assert!(fresh.bytes().all(|b| ID_ALPHABET.contains(&b)), "{fresh}");
}

#[test]
fn finished_pods_keep_their_ids_and_terminating_ones_hand_them_on_last() {
    let set = with_data(3);
    let pods = [
        pod_with("fffff", "finished"),
        pod_with("ttttt", "terminating"),
    ];
    let listed = [
        claim("data", "ttttt", false),
        claim("data", "fffff", false),
        claim("data", "zzzzz", false),
    ];
    let mut ids = InstanceIds::new(&set, &pods, &refs(&listed));
    let mut rng = fastrand::Rng::with_seed(1);
    let drawn: Vec<String> = (0..3).map(|_| ids.next(&mut rng)).collect();
    assert_eq!(drawn[..2], ["zzzzz", "ttttt"]);
    assert!(!["fffff", "ttttt", "zzzzz"].contains(&drawn[2].as_str()));
}

#[test]
fn terminating_claims_are_neither_reused_nor_drawn_again() {
    let set = with_data(1);
    let rng = fastrand::Rng::with_seed(3);
    let first = InstanceIds::new(&set, &[] as &[Pod], &[]).next(&mut rng.clone());
    let listed = [claim("data", &first, true)];
    let next = InstanceIds::new(&set, &[] as &[Pod], &refs(&listed)).next(&mut rng.clone());
    assert_ne!(next, first);
}

#[test]
fn disabled_reuse_draws_fresh_ids() {
    let set = cloneset(1, data_template(), json!({"disablePVCReuse": true}));
    let listed = [claim("data", "bbbbb", false)];
    let mut ids = InstanceIds::new(&set, &[] as &[Pod], &refs(&listed));
    assert_ne!(ids.next(&mut fastrand::Rng::with_seed(1)), "bbbbb");
}

#[test]
fn a_deleted_pod_takes_the_claims_of_its_id_along() {
    let set = with_data(1);
    let pods = [pod_with("aaaaa", "active"), pod_with("bbbbb", "active")];
    let listed = [
        claim("data", "aaaaa", false),
        claim("logs", "aaaaa", false),
        claim("data", "bbbbb", false),
        claim("old", "aaaaa", true),
    ];
    let plan = plan(&set, &pods, &refs(&listed), &[delete("cs-aaaaa")]);
    assert_eq!(
        plan.delete_with_pod["cs-aaaaa"],
        ["data-cs-aaaaa", "logs-cs-aaaaa"]
    );
    assert_eq!(plan.delete_with_pod.len(), 1);
    assert!(plan.delete.is_empty() && plan.hand_over.is_empty());
}

#[test]
fn with_reuse_claims_of_vanished_pods_wait_for_a_new_pod() {
    let set = with_data(1);
    let listed = [claim("data", "ggggg", false)];
    assert!(plan(&set, &[] as &[Pod], &refs(&listed), &[]).is_empty());
}

#[test]
fn disabled_reuse_deletes_orphans_and_hands_claims_of_inactive_pods_to_them() {
    let set = cloneset(3, data_template(), json!({"disablePVCReuse": true}));
    let pods = [
        pod_with("aaaaa", "active"),
        pod_with("fffff", "finished"),
        pod_with("ttttt", "terminating"),
    ];
    let listed = [
        claim("data", "aaaaa", false),
        claim("data", "fffff", false),
        claim("data", "ttttt", false),
        claim("data", "ggggg", false),
        claim("data", "hhhhh", true),
    ];
    let plan = plan(&set, &pods, &refs(&listed), &[]);
    assert_eq!(plan.delete, ["data-cs-ggggg"]);
    let handed: Vec<(&str, &str)> = plan
        .hand_over
        .iter()
        .map(|h| (h.claim.as_str(), h.pod.as_str()))
        .collect();
    assert_eq!(
        handed,
        [("data-cs-fffff", "cs-fffff"), ("data-cs-ttttt", "cs-ttttt")]
    );
    let first = &plan.hand_over[0];
    assert_eq!(first.resource_version.as_deref(), Some("7"));
    assert_eq!(first.owner_references.len(), 1);
    let owner = &first.owner_references[0];
    assert_eq!(
        (
            owner.api_version.as_str(),
            owner.kind.as_str(),
            owner.name.as_str(),
            owner.uid.as_str()
        ),
        ("v1", "Pod", "cs-fffff", "uid-fffff")
    );
    assert_eq!(owner.controller, Some(true));
}

// --- through the planner ------------------------------------------------------------------------

/// A CloneSet, its pods and PVCs, applying what the planner says as the apiserver would.
struct Cluster {
    set: CloneSet,
    history: Vec<ControllerRevision>,
    pods: Vec<Arc<Pod>>,
    claims: Vec<ObjectMeta>,
    rng: fastrand::Rng,
    uid: u64,
}

impl Cluster {
    fn new(set: CloneSet) -> Cluster {
        Cluster {
            set,
            history: Vec::new(),
            pods: Vec::new(),
            claims: Vec::new(),
            rng: fastrand::Rng::with_seed(11),
            uid: 0,
        }
    }

    fn round(&mut self) -> Plan {
        let update = match revision::update_revision(&self.set, &self.history, 0).unwrap() {
            revision::UpdateRevision::Latest { name }
            | revision::UpdateRevision::Renumber { name, .. } => name,
            revision::UpdateRevision::Create(r) => {
                let name = r.metadata.name.clone().unwrap();
                self.history.push(*r);
                name
            }
        };
        let listed = refs(&self.claims);
        let pods: Vec<ListedPod> = self.pods.iter().cloned().map(ListedPod::whole).collect();
        let snapshot = Snapshot {
            cloneset: &self.set,
            pods: &pods,
            history: &self.history,
            update_revision: &update,
            collision_count: 0,
            now: Timestamp::from_second(1_700_000_000).unwrap(),
        };
        let plan = plan_with_claims(&snapshot, &listed, &mut self.rng).unwrap();
        self.apply(&plan);
        plan
    }

    fn apply(&mut self, plan: &Plan) {
        let claims = &plan.extra.claims;
        self.claims
            .retain(|c| !claims.delete.contains(c.name.as_ref().unwrap()));
        for action in &plan.actions {
            match action {
                Action::CreatePod { pod, .. } => {
                    let name = pod.metadata.name.clone().unwrap();
                    for claim in claims.create.get(&name).into_iter().flatten() {
                        assert!(
                            !self.claims.iter().any(|c| c.name == claim.metadata.name),
                            "claim created twice"
                        );
                        self.claims.push(claim.metadata.clone());
                    }
                    let mut pod = Pod::clone(pod);
                    self.uid += 1;
                    pod.metadata.uid = Some(format!("pod-{}", self.uid));
                    pod.status = Some(PodStatus {
                        phase: Some("Pending".into()),
                        ..Default::default()
                    });
                    self.pods.push(Arc::new(pod));
                }
                Action::DeletePod { name } => {
                    self.pods.retain(|p| pod::name(p) != name);
                    let gone = claims
                        .delete_with_pod
                        .get(name)
                        .cloned()
                        .unwrap_or_default();
                    self.claims
                        .retain(|c| !gone.contains(c.name.as_ref().unwrap()));
                }
                Action::WritePod { .. } | Action::Event(_) => {}
                other => panic!("a CloneSet plans no {other:?}"),
            }
        }
    }

    fn id_of(&self, pod: &str) -> String {
        let p = self.pods.iter().find(|p| pod::name(p) == pod).unwrap();
        pod::label(p, INSTANCE_ID).unwrap().to_string()
    }

    fn claim_names(&self) -> BTreeSet<String> {
        self.claims
            .iter()
            .map(|c| c.name.clone().unwrap())
            .collect()
    }

    fn pod_names(&self) -> Vec<String> {
        self.pods.iter().map(|p| pod::name(p).to_string()).collect()
    }
}

#[test]
fn a_recreated_pod_gets_its_claim_back_and_scale_in_removes_the_claim() {
    let mut cluster = Cluster::new(with_data(2));
    let plan = cluster.round();
    assert_eq!(plan.extra.claims.create.len(), 2);
    let pods = cluster.pod_names();
    let expected: BTreeSet<String> = pods.iter().map(|p| format!("data-{p}")).collect();
    assert_eq!(cluster.claim_names(), expected);
    for p in &cluster.pods {
        let spec = serde_json::to_value(p.spec.as_ref().unwrap()).unwrap();
        assert_eq!(
            spec["volumes"][0],
            json!({"name": "data", "persistentVolumeClaim": {"claimName": format!("data-{}", pod::name(p))}})
        );
        assert_eq!(
            spec["volumes"].as_array().unwrap().len(),
            2,
            "emptyDir data replaced"
        );
    }
    let again = cluster.round();
    assert!(again.extra.claims.is_empty(), "{:?}", again.extra.claims);
    assert!(
        !again
            .actions
            .iter()
            .any(|a| matches!(a, Action::CreatePod { .. } | Action::DeletePod { .. })),
        "no more pods"
    );

    // A pod deleted behind the controller's back: its replacement takes the id and the claim.
    let gone = pods[0].clone();
    let id = cluster.id_of(&gone);
    cluster.pods.retain(|p| pod::name(p) != gone);
    let plan = cluster.round();
    assert!(
        plan.extra.claims.is_empty(),
        "nothing to create: {:?}",
        plan.extra.claims
    );
    assert!(cluster.pod_names().contains(&gone));
    assert_eq!(cluster.id_of(&gone), id);
    assert_eq!(cluster.claim_names(), expected);

    // Scale in: the removed pod's claim goes with it.
    cluster.set.spec.replicas = Some(1);
    let plan = cluster.round();
    let deleted: Vec<&String> = plan.extra.claims.delete_with_pod.keys().collect();
    assert_eq!(deleted.len(), 1);
    assert_eq!(cluster.pods.len(), 1);
    let kept = cluster.pod_names();
    assert_eq!(cluster.claim_names(), [format!("data-{}", kept[0])].into());
}

#[test]
fn without_templates_the_planner_plans_no_claims() {
    let mut cluster = Cluster::new(cloneset(3, Value::Null, json!({})));
    let plan = cluster.round();
    assert_eq!(plan.actions.len(), 3);
    assert!(plan.extra.claims.is_empty());
    for p in &cluster.pods {
        assert_eq!(
            p.spec.as_ref().unwrap().volumes,
            cluster.set.spec.template.spec.as_ref().unwrap().volumes
        );
    }
}

proptest! {
    /// Over any mix of pods and PVCs: new ids are distinct, never those of an active or finished
    /// pod, and reused only from live PVCs (never with disablePVCReuse); the PVCs planned for
    /// deletion never belong to an active pod that stays.
    #[test]
    fn ids_and_deletions_stay_safe(
        pods in prop::collection::vec((0usize..6, 0u8..3), 0..6),
        claims in prop::collection::vec((0usize..6, any::<bool>()), 0..8),
        disable in any::<bool>(),
        wanted in 0usize..6,
        deleted in prop::collection::vec(0usize..6, 0..3),
        seed in any::<u64>(),
    ) {
        let id = |i: usize| ["bbbbb", "ccccc", "ddddd", "fffff", "ggggg", "hhhhh"][i].to_string();
        let set = cloneset(3, data_template(), json!({"disablePVCReuse": disable}));
        let states = ["active", "finished", "terminating"];
        let mut pods: Vec<Arc<Pod>> = pods
            .iter()
            .map(|(i, s)| pod_with(&id(*i), states[usize::from(*s)]))
            .collect();
        let mut names = BTreeSet::new();
        pods.retain(|p| names.insert(pod::name(p).to_string()));
        let listed: Vec<ObjectMeta> = claims.iter().map(|(i, t)| claim("data", &id(*i), *t)).collect();
        let listed = refs(&listed);
        let blocked: BTreeSet<String> = pods
            .iter()
            .filter(|p| p.metadata.deletion_timestamp.is_none())
            .map(|p| pod::label(p, INSTANCE_ID).unwrap().to_string())
            .collect();
        let live: BTreeSet<String> = listed
            .iter()
            .filter(|c| c.deletion_timestamp.is_none())
            .map(|c| id_of(c).unwrap().to_string())
            .collect();
        let known: BTreeSet<String> = (0..6).map(id).collect();
        let mut ids = InstanceIds::new(&set, &pods, &listed);
        let mut rng = fastrand::Rng::with_seed(seed);
        let drawn: Vec<String> = (0..wanted).map(|_| ids.next(&mut rng)).collect();
        let distinct: BTreeSet<&String> = drawn.iter().collect();
        prop_assert_eq!(distinct.len(), drawn.len());
        for d in &drawn {
            prop_assert!(!blocked.contains(d), "{} is taken", d);
            if known.contains(d) {
                prop_assert!(!disable && live.contains(d), "{} reused", d);
            }
        }

        let actions: Vec<Action> = deleted.iter().map(|i| delete(&format!("cs-{}", id(*i)))).collect();
        let plan = plan(&set, &pods, &listed, &actions);
        let staying: BTreeSet<String> = pods
            .iter()
            .filter(pod::is_active)
            .map(|p| pod::name(p).to_string())
            .filter(|n| !actions.iter().any(|a| matches!(a, Action::DeletePod { name } if name == n)))
            .collect();
        let doomed: Vec<&String> = plan
            .delete
            .iter()
            .chain(plan.delete_with_pod.values().flatten())
            .chain(plan.hand_over.iter().map(|h| &h.claim))
            .collect();
        for name in doomed {
            let owner = format!("cs-{}", &name[name.len() - 5..]);
            prop_assert!(!staying.contains(&owner), "{} of a staying pod", name);
        }
        if !disable {
            prop_assert!(plan.delete.is_empty() && plan.hand_over.is_empty());
        }
    }
}
