use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::inject::sidecar::{InjectionContext, inject_sidecars};
use crate::podmarks::PodSummary;

/// A sidecar of the generated sets: its name, hot-upgraded, a native sidecar.
type Sidecar = (&'static str, bool, bool);

fn sidecar_json((name, hot, native): Sidecar) -> Value {
    let mut sidecar = json!({"name": name, "image": format!("{name}:v1")});
    if hot {
        sidecar["upgradeStrategy"] =
            json!({"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": "empty:v1"});
    }
    if native {
        sidecar["restartPolicy"] = json!("Always");
    }
    sidecar
}

fn mesh(containers: &[Sidecar], init_containers: &[Sidecar]) -> SidecarSet {
    serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "SidecarSet",
        "metadata": {"name": "mesh"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "containers": containers.iter().copied().map(sidecar_json).collect::<Vec<_>>(),
            "initContainers": init_containers.iter().copied().map(sidecar_json).collect::<Vec<_>>(),
        }
    }))
    .unwrap()
}

fn pod(name: &str, namespace: &str, containers: &[&str]) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": namespace, "uid": format!("{name}-uid"),
            "labels": {"app": "web"}},
        "spec": {"containers": containers.iter().map(|c| json!({"name": c, "image": "app:v1"}))
            .collect::<Vec<_>>()},
    }))
    .unwrap()
}

/// `pod` as the webhook injects it with `set`.
fn injected(mut pod: Pod, set: &SidecarSet) -> Pod {
    let context = InjectionContext {
        sidecarsets: &[Arc::new(set.clone())],
        namespace_labels: None,
        now: "2026-11-29T00:00:00Z",
        sort_sidecars_by_name: false,
        revisions: None,
        draw: &crate::inject::sidecar::random_draw,
    };
    inject_sidecars(&mut pod, &context).unwrap();
    pod
}

fn check(set: &SidecarSet, pods: &[Pod]) -> MissingSidecars {
    let pods: Vec<Arc<Pod>> = pods.iter().cloned().map(Arc::new).collect();
    let verdict = missing_sidecars(set, &[], &pods, |_| None).unwrap();
    // The controller reads summaries: they decide alike.
    let summaries: Vec<Arc<PodSummary>> =
        pods.iter().map(|p| Arc::new(PodSummary::of(p))).collect();
    assert_eq!(
        missing_sidecars(set, &[], &summaries, |_| None).unwrap(),
        verdict
    );
    verdict
}

#[test]
fn a_pod_never_injected_is_reported_with_every_container_it_lacks() {
    let set = mesh(
        &[("proxy", false, false), ("envoy", true, false)],
        &[("init", false, false)],
    );
    let verdict = check(&set, &[pod("web-0", "shop", &["app"])]);
    assert_eq!(verdict.count(), 1);
    assert_eq!(verdict.names(), ["shop/web-0"]);
    assert_eq!(verdict.pods[0].uid, "web-0-uid");
    assert_eq!(
        verdict.pods[0].reason,
        MissingReason::NeverInjected {
            missing: ["envoy-1", "envoy-2", "proxy", "init"]
                .map(String::from)
                .to_vec()
        }
    );
}

#[test]
fn an_injected_pod_is_not_reported_and_one_missing_a_new_container_is() {
    let old = mesh(&[("proxy", false, false)], &[]);
    let pod = injected(pod("web-0", "shop", &["app"]), &old);
    assert_eq!(check(&old, std::slice::from_ref(&pod)).count(), 0);
    // The set gained a container since: the pod records the set and carries `proxy` only.
    let grown = mesh(&[("proxy", false, false), ("log", false, false)], &[]);
    let verdict = check(&grown, &[pod]);
    assert_eq!(
        verdict.pods[0].reason,
        MissingReason::OtherContainers {
            missing: vec!["log".into()],
            carried: vec!["proxy".into()]
        }
    );
    assert_eq!(
        verdict.pods[0].reason.describe(),
        "injected with other containers: the pod lacks log and carries proxy"
    );
}

#[test]
fn a_pod_recording_the_set_but_carrying_none_of_its_containers_was_injected_with_others() {
    let old = mesh(&[("proxy", false, false)], &[]);
    let pod = injected(pod("web-0", "shop", &["app"]), &old);
    let renamed = mesh(&[("envoy", false, false)], &[]);
    let verdict = check(&renamed, &[pod]);
    assert_eq!(
        verdict.pods[0].reason,
        MissingReason::OtherContainers {
            missing: vec!["envoy".into()],
            carried: vec![]
        }
    );
}

#[test]
fn a_cold_sidecar_turned_hot_needs_both_copies() {
    let cold = mesh(&[("proxy", false, false)], &[]);
    let pod = injected(pod("web-0", "shop", &["app"]), &cold);
    let hot = mesh(&[("proxy", true, false)], &[]);
    let verdict = check(&hot, &[pod]);
    assert_eq!(
        verdict.pods[0].reason.missing(),
        ["proxy-1".to_string(), "proxy-2".to_string()]
    );
}

#[test]
fn only_active_selected_pods_in_selected_namespaces_are_looked_at() {
    let mut set = mesh(&[("proxy", false, false)], &[]);
    set.spec.namespace_selector =
        Some(serde_json::from_value(json!({"matchLabels": {"mesh": "on"}})).unwrap());
    let mut other_labels = pod("other-0", "shop", &["app"]);
    other_labels.metadata.labels = Some(BTreeMap::from([("app".into(), "db".into())]));
    let mut finished = pod("done-0", "shop", &["app"]);
    finished.status = Some(serde_json::from_value(json!({"phase": "Succeeded"})).unwrap());
    let mut deleting = pod("gone-0", "shop", &["app"]);
    deleting.metadata.deletion_timestamp = Some(Time(Timestamp::UNIX_EPOCH));
    let pods: Vec<Arc<Pod>> = [
        pod("web-0", "shop", &["app"]),
        pod("web-0", "elsewhere", &["app"]),
        pod("web-1", "unknown", &["app"]),
        other_labels,
        finished,
        deleting,
    ]
    .into_iter()
    .map(Arc::new)
    .collect();
    let on = crate::k8s::selector::namespace_labels(
        "shop".into(),
        Some(BTreeMap::from([("mesh".into(), "on".into())])),
    );
    let off = crate::k8s::selector::namespace_labels("elsewhere".into(), None);
    let labels = |ns: &str| match ns {
        "shop" => Some(&on),
        "elsewhere" => Some(&off),
        _ => None,
    };
    let verdict = missing_sidecars(&set, &[], &pods, labels).unwrap();
    assert_eq!(verdict.names(), ["shop/web-0"]);
}

#[test]
fn empty_or_nil_selectors_paused_injection_and_sets_without_containers_report_nothing() {
    let pods = [pod("web-0", "shop", &["app"])];
    let mut empty = mesh(&[("proxy", false, false)], &[]);
    empty.spec.selector = Some(Default::default());
    assert_eq!(check(&empty, &pods), MissingSidecars::default());
    empty.spec.selector = None;
    assert_eq!(check(&empty, &pods), MissingSidecars::default());

    let mut paused = mesh(&[("proxy", false, false)], &[]);
    paused.spec.injection_strategy = Some(serde_json::from_value(json!({"paused": true})).unwrap());
    let verdict = check(&paused, &pods);
    assert!(verdict.paused);
    assert_eq!(verdict.count(), 0);

    let volumes_only = mesh(&[], &[]);
    assert_eq!(check(&volumes_only, &pods), MissingSidecars::default());
}

#[test]
fn a_pod_a_canary_selects_is_the_canarys_to_check() {
    let base = mesh(&[("proxy", false, false)], &[]);
    let mut canary = mesh(&[("proxy", false, false)], &[]);
    canary.metadata.name = Some("mesh-canary".into());
    canary.spec.selector =
        Some(serde_json::from_value(json!({"matchLabels": {"canary": "true"}})).unwrap());
    let annotations = [
        (keys::SIDECARSET_CANARY, "true"),
        (keys::SIDECARSET_BASE, "mesh"),
    ];
    canary.metadata.annotations = Some(
        annotations
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    );
    let mut in_canary = pod("web-0", "shop", &["app"]);
    in_canary
        .metadata
        .labels
        .get_or_insert_default()
        .insert("canary".into(), "true".into());
    let pods: Vec<Arc<Pod>> = [in_canary, pod("web-1", "shop", &["app"])]
        .into_iter()
        .map(Arc::new)
        .collect();
    let verdict = missing_sidecars(&base, &[&canary], &pods, |_| None).unwrap();
    assert_eq!(verdict.names(), ["shop/web-1"]);
    assert_eq!(
        missing_sidecars(&canary, &[], &pods, |_| None)
            .unwrap()
            .names(),
        ["shop/web-0"]
    );
}

#[test]
fn names_are_sorted_by_namespace_then_name() {
    let set = mesh(&[("proxy", false, false)], &[]);
    let pods = [
        pod("b", "two", &["app"]),
        pod("a", "two", &["app"]),
        pod("z", "one", &["app"]),
    ];
    assert_eq!(check(&set, &pods).names(), ["one/z", "two/a", "two/b"]);
}

fn verdict_of(names: &[&str]) -> MissingSidecars {
    MissingSidecars {
        paused: false,
        pods: names
            .iter()
            .map(|name| MissingPod {
                namespace: "shop".into(),
                name: name.to_string(),
                uid: String::new(),
                reason: MissingReason::NeverInjected {
                    missing: vec!["proxy".into()],
                },
            })
            .collect(),
    }
}

fn at(second: i64) -> Time {
    Time(Timestamp::from_second(second).unwrap())
}

#[test]
fn the_condition_names_the_count_and_the_first_pods_and_changes_only_when_its_text_does() {
    let other = Condition {
        type_: keys::SIDECARSET_INJECTION_FAILURE.into(),
        status: "True".into(),
        reason: "Invalid".into(),
        message: "m".into(),
        observed_generation: None,
        last_transition_time: at(1),
    };
    let seven = verdict_of(&["a", "b", "c", "d", "e", "f", "g"]);
    let written =
        pods_missing_condition(std::slice::from_ref(&other), &seven, Some(3), &at(10)).unwrap();
    assert_eq!(written[0], other);
    let condition = &written[1];
    assert_eq!(condition.type_, "PodsMissingSidecars");
    assert_eq!(condition.status, "True");
    assert_eq!(condition.reason, "SidecarsMissing");
    assert_eq!(
        condition.message,
        "7 pods lack its sidecars: shop/a (never injected), shop/b (never injected), shop/c (never injected), shop/d (never injected), shop/e (never injected) and 2 more; a pod gets them only when recreated through the webhook"
    );
    assert_eq!(condition.observed_generation, Some(3));
    // Said already: nothing to write.
    assert_eq!(
        pods_missing_condition(&written, &seven, Some(4), &at(20)),
        None
    );
    // Another count: a new message, the same transition.
    let one = verdict_of(&["a"]);
    let moved = pods_missing_condition(&written, &one, Some(3), &at(20)).unwrap();
    assert!(
        moved[1]
            .message
            .starts_with("1 pod lacks its sidecars: shop/a")
    );
    assert_eq!(moved[1].last_transition_time, at(10));
    // None left: False, from now.
    let none = pods_missing_condition(&moved, &verdict_of(&[]), Some(3), &at(30)).unwrap();
    assert_eq!(
        (none[1].status.as_str(), none[1].reason.as_str()),
        ("False", "AllPodsInjected")
    );
    assert_eq!(none[1].last_transition_time, at(30));
    let paused = MissingSidecars {
        paused: true,
        pods: vec![],
    };
    let paused = pods_missing_condition(&none, &paused, Some(3), &at(40)).unwrap();
    assert_eq!(paused[1].reason, "InjectionPaused");
    assert_eq!(paused[1].last_transition_time, at(30));
    assert_eq!(paused.len(), 2);
}

#[test]
fn the_event_names_the_set_and_the_reason() {
    let verdict = verdict_of(&["a"]);
    let event = missing_event("mesh", &verdict.pods[0]);
    assert_eq!(event.about, Subject::Pod);
    assert_eq!(event.type_, EventType::Warning);
    assert_eq!(event.reason, "SidecarsMissing");
    assert_eq!(
        event.note,
        "sidecarset mesh selects this pod, which lacks its sidecars: never injected: the pod has none of its containers (proxy) and records no injection of it; it gets them only when recreated through the webhook"
    );
}

fn sidecar() -> impl Strategy<Value = Sidecar> {
    (
        prop::sample::select(vec!["proxy", "envoy", "app", "log"]),
        any::<bool>(),
        any::<bool>(),
    )
}

fn sidecars() -> impl Strategy<Value = Vec<Sidecar>> {
    // Names unique within a list, as validation holds them.
    prop::collection::vec(sidecar(), 0..4).prop_map(|mut list| {
        let mut seen = std::collections::BTreeSet::new();
        list.retain(|(name, _, _)| seen.insert(*name));
        list
    })
}

proptest! {
    /// A pod the webhook injected with the set never lacks its sidecars; the same pod not
    /// injected lacks them exactly when the set adds a container its own do not name; and an
    /// injected pod that lost any one of them is reported.
    #[test]
    fn the_injectors_pods_are_never_reported(
        containers in sidecars(),
        init_containers in sidecars(),
        app in prop::collection::vec(prop::sample::select(vec!["app", "proxy", "web", "envoy-1"]), 1..3),
        dropped in any::<prop::sample::Index>(),
    ) {
        let mut app = app;
        app.dedup();
        let set = mesh(&containers, &init_containers);
        let expected = ExpectedContainers::of(&set);
        let bare = pod("web-0", "shop", &app);
        let injected = injected(bare.clone(), &set);
        prop_assert_eq!(check(&set, std::slice::from_ref(&injected)).count(), 0);

        let lacking = expected.containers.iter().any(|c| !app.contains(&c.as_str()))
            || !expected.init_containers.is_empty();
        let verdict = check(&set, &[bare]);
        prop_assert_eq!(verdict.count(), usize::from(lacking));

        // The injected pod with one of the set's containers taken away.
        let names: Vec<(bool, &String)> = expected.containers.iter().map(|n| (false, n))
            .chain(expected.init_containers.iter().map(|n| (true, n))).collect();
        if !names.is_empty() {
            let (init, name) = names[dropped.index(names.len())];
            let mut lost = injected.clone();
            let spec = lost.spec.as_mut().unwrap();
            if init {
                spec.init_containers.as_mut().unwrap().retain(|c| &c.name != name);
            } else {
                spec.containers.retain(|c| &c.name != name);
            }
            let verdict = check(&set, &[lost]);
            prop_assert_eq!(verdict.count(), 1);
            let is_other = matches!(verdict.pods[0].reason, MissingReason::OtherContainers { .. });
            prop_assert!(is_other);
            prop_assert_eq!(verdict.pods[0].reason.missing(), std::slice::from_ref(name));
        }
    }
}
