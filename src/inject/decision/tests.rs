//! Each filter of the decision answers with its own reason.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Container, PodSpec, PodStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    LabelSelector, LabelSelectorRequirement, ObjectMeta, Time,
};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::*;
use crate::api::{
    SidecarSetBuilder, SidecarSetInjectRevision, SidecarSetInjectionStrategy,
    SidecarSetUpdateStrategy, keys, match_labels,
};

fn pod(labels: &[(&str, &str)]) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some("web-1".into()),
            namespace: Some("shop".into()),
            labels: match_labels(labels).match_labels,
            ..Default::default()
        },
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "app".into(),
                image: Some("app:1".into()),
                ..Default::default()
            }],
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn set(name: &str) -> SidecarSetBuilder {
    SidecarSetBuilder::new(name)
        .selector(&[("app", "web")])
        .container(name, "sidecar:1")
}

fn shop() -> Labels {
    BTreeMap::from([
        (keys::NAMESPACE_NAME_LABEL.to_string(), "shop".to_string()),
        ("team".to_string(), "a".to_string()),
    ])
}

/// The verdicts for `pod` against `sets`, by name: `Ok(chosen set's name)` when it injects,
/// `Err(reason code or error text)` when not.
fn verdicts(
    pod: &Pod,
    sets: Vec<SidecarSet>,
    namespace: Option<&Labels>,
    revisions: Option<&InjectionRevisions>,
) -> Vec<(String, Result<Option<RevisionChoice>, String>)> {
    let sets: Vec<Arc<SidecarSet>> = sets.into_iter().map(Arc::new).collect();
    let ctx = InjectionContext {
        sidecarsets: &sets,
        namespace_labels: namespace,
        now: "2026-11-29T00:00:00Z",
        sort_sidecars_by_name: false,
        revisions,
        draw: &|| 0.5,
    };
    decide(pod, &ctx)
        .verdicts
        .into_iter()
        .map(|(set, verdict)| {
            let outcome = match verdict {
                Verdict::Injects { revision, .. } => Ok(revision),
                Verdict::Skipped(skip) => Err(skip.code().to_string()),
                Verdict::Refuses(error) => Err(error.to_string()),
            };
            (set.name().to_string(), outcome)
        })
        .collect()
}

fn reason_of(pod: &Pod, set: SidecarSet, namespace: Option<&Labels>) -> String {
    let mut all = verdicts(pod, vec![set], namespace, None);
    match all.remove(0).1 {
        Ok(_) => "injects".to_string(),
        Err(reason) => reason,
    }
}

#[test]
fn a_selected_pod_gets_the_set() {
    let web = pod(&[("app", "web")]);
    assert_eq!(
        reason_of(&web, set("log").build(), Some(&shop())),
        "injects"
    );
}

#[test]
fn each_filter_gives_its_reason() {
    let web = pod(&[("app", "web")]);
    let paused = set("log")
        .injection_strategy(SidecarSetInjectionStrategy {
            paused: Some(true),
            revision: None,
        })
        .build();
    assert_eq!(reason_of(&web, paused, Some(&shop())), "InjectionPaused");

    let pinned = set("log").namespace_selector(match_labels(&[("team", "b")]));
    assert_eq!(
        reason_of(&web, pinned.clone().build(), Some(&shop())),
        "NamespaceNotSelected"
    );
    assert_eq!(reason_of(&web, pinned.build(), None), "NamespaceUnknown");

    let unselective = set("log").label_selector(None).build();
    assert_eq!(reason_of(&web, unselective, Some(&shop())), "NoPodSelector");
    let empty = set("log").label_selector(LabelSelector::default()).build();
    assert_eq!(reason_of(&web, empty, Some(&shop())), "EmptyPodSelector");

    let other = pod(&[("app", "db")]);
    assert_eq!(
        reason_of(&other, set("log").build(), Some(&shop())),
        "PodNotSelected"
    );
}

#[test]
fn a_finished_or_terminating_pod_gets_nothing() {
    let mut finished = pod(&[("app", "web")]);
    finished.status = Some(PodStatus {
        phase: Some("Succeeded".into()),
        ..Default::default()
    });
    assert_eq!(
        reason_of(&finished, set("log").build(), Some(&shop())),
        "PodNotActive"
    );
    let mut terminating = pod(&[("app", "web")]);
    terminating.metadata.deletion_timestamp = Some(Time(jiff::Timestamp::UNIX_EPOCH));
    assert_eq!(
        reason_of(&terminating, set("log").build(), Some(&shop())),
        "PodNotActive"
    );
}

#[test]
fn a_canary_replaces_its_base() {
    let web = pod(&[("app", "web")]);
    let canary = set("log-canary")
        .annotation(keys::SIDECARSET_CANARY, "true")
        .annotation(keys::SIDECARSET_BASE, "log")
        .build();
    let all = verdicts(&web, vec![set("log").build(), canary], Some(&shop()), None);
    assert_eq!(all[0].1, Err("CanaryBaseReplaced".to_string()));
    assert!(all[1].1.is_ok());

    // A canary that does not match the pod leaves its base in place.
    let unmatched = set("log-canary")
        .selector(&[("app", "db")])
        .annotation(keys::SIDECARSET_CANARY, "true")
        .annotation(keys::SIDECARSET_BASE, "log")
        .build();
    let all = verdicts(
        &web,
        vec![set("log").build(), unmatched],
        Some(&shop()),
        None,
    );
    assert!(all[0].1.is_ok());
    assert_eq!(all[1].1, Err("PodNotSelected".to_string()));
}

#[test]
fn a_broken_selector_refuses_the_pod_naming_the_set_and_field() {
    let web = pod(&[("app", "web")]);
    let broken = set("log")
        .label_selector(LabelSelector {
            match_expressions: Some(vec![LabelSelectorRequirement {
                key: "app".into(),
                operator: "Near".into(),
                values: None,
            }]),
            match_labels: None,
        })
        .build();
    let reason = reason_of(&web, broken, Some(&shop()));
    assert!(
        reason.starts_with("sidecarset log: spec.selector.matchExpressions[0].operator"),
        "{reason}"
    );
}

fn naming_a_revision(policy: &str, partition: Option<IntOrString>) -> SidecarSet {
    set("mesh")
        .update_strategy(SidecarSetUpdateStrategy {
            partition,
            ..Default::default()
        })
        .injection_strategy(SidecarSetInjectionStrategy {
            paused: None,
            revision: Some(SidecarSetInjectRevision {
                revision_name: Some("mesh-abc".into()),
                custom_version: None,
                policy: Some(policy.into()),
            }),
        })
        .build()
}

#[test]
fn a_missing_revision_refuses_the_pod() {
    let web = pod(&[("app", "web")]);
    let reason = reason_of(&web, naming_a_revision("Always", None), Some(&shop()));
    assert!(reason.contains("mesh-abc"), "{reason}");
    let unresolved = InjectionRevisions::from([(
        "mesh".to_string(),
        HistoryRevision::Unresolved("the revision is gone".into()),
    )]);
    let all = verdicts(
        &web,
        vec![naming_a_revision("Always", None)],
        Some(&shop()),
        Some(&unresolved),
    );
    assert_eq!(all[0].1, Err("the revision is gone".to_string()));
}

#[test]
fn the_revision_choice_says_why() {
    let web = pod(&[("app", "web")]);
    let restored = |set: &SidecarSet| {
        InjectionRevisions::from([(
            "mesh".to_string(),
            HistoryRevision::Restored(Arc::new(set.clone())),
        )])
    };
    let always = naming_a_revision("Always", None);
    let all = verdicts(
        &web,
        vec![always.clone()],
        Some(&shop()),
        Some(&restored(&always)),
    );
    assert_eq!(
        all[0].1,
        Ok(Some(RevisionChoice {
            pick: Pick::History,
            why: PickReason::PolicyAlways
        }))
    );
    let partial = naming_a_revision("Partial", Some(IntOrString::String("30%".into())));
    let all = verdicts(
        &web,
        vec![partial.clone()],
        Some(&shop()),
        Some(&restored(&partial)),
    );
    // The draw of 0.5 is above 30 %: the latest.
    assert_eq!(
        all[0].1,
        Ok(Some(RevisionChoice {
            pick: Pick::Latest,
            why: PickReason::Drawn { probability: 0.3 }
        }))
    );
}

/// Admission's list is the decision's injected sets, and its error the decision's first refusal.
#[test]
fn admission_takes_the_decision() {
    let web = pod(&[("app", "web")]);
    let sets: Vec<Arc<SidecarSet>> = vec![
        Arc::new(set("a").build()),
        Arc::new(set("b").selector(&[("app", "db")]).build()),
        Arc::new(set("c").build()),
    ];
    let ctx = InjectionContext {
        sidecarsets: &sets,
        namespace_labels: Some(&shop()),
        now: "2026-11-29T00:00:00Z",
        sort_sidecars_by_name: false,
        revisions: None,
        draw: &|| 0.5,
    };
    let names: Vec<&str> = matching_sidecarsets(&web, &ctx)
        .unwrap()
        .iter()
        .map(|s| s.name())
        .collect();
    assert_eq!(names, ["a", "c"]);
    assert!(decide(&web, &ctx).refusal().is_none());
}
