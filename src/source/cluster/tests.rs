use super::*;
use crate::api::{SidecarSetBuilder, keys};
use kube::core::ObjectMeta;
use kube::core::PartialObjectMetaExt;

/// A SidecarSet as the watch delivers it to the catalogue.
fn sidecarset(name: &str, container: &str, app: &str) -> WatchedSidecarSet {
    let set = SidecarSetBuilder::new(name)
        .resource_version("1")
        .selector(&[("app", app)])
        .container(container, "busybox:1")
        .build();
    as_admitted(serde_json::from_value(serde_json::to_value(set).unwrap()).unwrap())
}

fn malformed(name: &str) -> WatchedSidecarSet {
    as_admitted(
        serde_json::from_value(serde_json::json!({
            "apiVersion": "apps.kruise.io/v1beta1",
            "kind": "SidecarSet",
            "metadata": {"name": name},
            "spec": {"selector": {"matchLabels": {"app": "x"}}, "containers": "not-a-list"}
        }))
        .unwrap(),
    )
}

fn namespace(name: &str, labels: &[(&str, &str)]) -> PartialObjectMeta<Namespace> {
    ObjectMeta {
        name: Some(name.to_string()),
        labels: Some(
            labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        ),
        ..ObjectMeta::default()
    }
    .into_response_partial()
}

fn names(snapshot: &Snapshot) -> Vec<&str> {
    snapshot
        .catalogue
        .sidecarsets()
        .iter()
        .map(|s| s.name())
        .collect()
}

/// Lists `sets` and `namespaces` as the initial sync of both watches.
fn synced(
    sets: Vec<WatchedSidecarSet>,
    namespaces: Vec<PartialObjectMeta<Namespace>>,
) -> ClusterState {
    let mut state = ClusterState::default();
    state.sidecarset_event(Event::Init);
    for set in sets {
        state.sidecarset_event(Event::InitApply(set));
    }
    state.sidecarset_event(Event::InitDone);
    state.namespace_event(Event::Init);
    for namespace in namespaces {
        state.namespace_event(Event::InitApply(namespace));
    }
    state.namespace_event(Event::InitDone);
    state
}

#[test]
fn no_snapshot_until_both_watches_have_listed() {
    let mut state = ClusterState::default();
    assert!(!state.sidecarset_event(Event::Init));
    assert!(!state.sidecarset_event(Event::InitApply(sidecarset("a", "s", "x"))));
    assert!(state.snapshot().is_none());
    assert!(state.sidecarset_event(Event::InitDone));
    assert!(state.snapshot().is_none(), "namespaces not listed yet");
    state.namespace_event(Event::Init);
    assert!(state.namespace_event(Event::InitDone));
    assert!(state.is_synced());
    let snapshot = state.snapshot().unwrap();
    assert_eq!(names(&snapshot), vec!["a"]);
}

#[test]
fn sidecarsets_are_defaulted_and_hashed_like_the_webhook_does() {
    let mut state = synced(vec![sidecarset("a", "s", "x")], vec![]);
    let snapshot = state.snapshot().unwrap();
    let set = &snapshot.catalogue.sidecarsets()[0];
    assert_eq!(
        set.annotation(keys::SIDECARSET_HASH).map(str::len),
        Some(64)
    );
    assert_eq!(
        set.annotation(keys::SIDECARSET_HASH_WITHOUT_IMAGE)
            .map(str::len),
        Some(64)
    );
    assert_eq!(
        set.containers()[0].pod_inject_policy.as_deref(),
        Some(keys::BEFORE_APP_CONTAINER)
    );
}

#[test]
fn malformed_and_conflicting_sidecarsets_are_refused_the_rest_kept() {
    let mut state = synced(
        vec![
            sidecarset("b-conflict", "same", "x"),
            malformed("broken"),
            sidecarset("a-first", "same", "x"),
            sidecarset("c-other", "other", "y"),
        ],
        vec![],
    );
    let snapshot = state.snapshot().unwrap();
    assert_eq!(names(&snapshot), vec!["a-first", "c-other"]);
    assert_eq!(snapshot.refused, 2);
    let refused: BTreeMap<_, _> = snapshot.newly_refused.into_iter().collect();
    assert!(
        refused["broken"].starts_with("spec.containers: invalid type"),
        "{refused:?}"
    );
    assert!(refused["b-conflict"].contains("a-first"), "{refused:?}");

    // Unrelated changes do not report the same refusals again.
    assert!(state.sidecarset_event(Event::Apply(sidecarset("d", "d", "z"))));
    let snapshot = state.snapshot().unwrap();
    assert!(
        snapshot.newly_refused.is_empty(),
        "{:?}",
        snapshot.newly_refused
    );
    assert_eq!(snapshot.refused, 2);

    // Fixing the malformed one brings it in.
    state.sidecarset_event(Event::Apply(sidecarset("broken", "fixed", "q")));
    let snapshot = state.snapshot().unwrap();
    assert_eq!(names(&snapshot), vec!["a-first", "broken", "c-other", "d"]);
    assert_eq!(snapshot.refused, 1);
}

#[test]
fn apply_and_delete_update_the_view() {
    let mut state = synced(vec![sidecarset("a", "s", "x")], vec![]);
    assert!(state.sidecarset_event(Event::Apply(sidecarset("b", "t", "x"))));
    assert_eq!(names(&state.snapshot().unwrap()), vec!["a", "b"]);
    assert!(state.sidecarset_event(Event::Delete(sidecarset("a", "s", "x"))));
    assert_eq!(names(&state.snapshot().unwrap()), vec!["b"]);
    // Deleting what is not there changes nothing.
    assert!(!state.sidecarset_event(Event::Delete(sidecarset("a", "s", "x"))));
}

#[test]
fn a_relist_keeps_the_last_view_until_complete_then_replaces_it() {
    let mut state = synced(
        vec![sidecarset("a", "s", "x"), sidecarset("b", "t", "x")],
        vec![namespace("shop", &[("env", "prod")])],
    );
    // The watch restarted (e.g. after a lost connection and an expired resourceVersion).
    assert!(!state.sidecarset_event(Event::Init));
    assert!(!state.sidecarset_event(Event::InitApply(sidecarset("b", "t", "x"))));
    assert_eq!(names(&state.snapshot().unwrap()), vec!["a", "b"]);
    // "a" was deleted while disconnected: gone once the relist completes.
    assert!(state.sidecarset_event(Event::InitDone));
    assert_eq!(names(&state.snapshot().unwrap()), vec!["b"]);
    assert_eq!(
        state
            .snapshot()
            .unwrap()
            .catalogue
            .namespace_labels("shop")
            .unwrap()["env"],
        "prod"
    );
}

#[test]
fn namespace_labels_feed_the_catalogue() {
    let mut state = synced(
        vec![],
        vec![
            namespace("shop", &[("env", "prod")]),
            namespace("other", &[(keys::NAMESPACE_NAME_LABEL, "other")]),
        ],
    );
    let snapshot = state.snapshot().unwrap();
    let shop = snapshot.catalogue.namespace_labels("shop").unwrap();
    assert_eq!(shop["env"], "prod");
    // Added for apiservers older than 1.21.
    assert_eq!(shop[keys::NAMESPACE_NAME_LABEL], "shop");
    assert_eq!(snapshot.catalogue.namespace_count(), 2);

    assert!(state.namespace_event(Event::Apply(namespace("shop", &[("env", "dev")]))));
    let snapshot = state.snapshot().unwrap();
    assert_eq!(
        snapshot.catalogue.namespace_labels("shop").unwrap()["env"],
        "dev"
    );
    assert!(state.namespace_event(Event::Delete(namespace("shop", &[]))));
    let snapshot = state.snapshot().unwrap();
    assert_eq!(snapshot.catalogue.namespace_count(), 1);
    // Not (yet) watched: assumed to exist with only its name label.
    let assumed = snapshot.catalogue.namespace_labels("shop").unwrap();
    assert_eq!(assumed.len(), 1);
    assert_eq!(assumed[keys::NAMESPACE_NAME_LABEL], "shop");
}

#[test]
fn namespace_only_changes_reuse_the_accepted_sidecarsets() {
    let mut state = synced(vec![sidecarset("a", "s", "x")], vec![]);
    let first = state.snapshot().unwrap();
    state.namespace_event(Event::Apply(namespace("shop", &[])));
    let second = state.snapshot().unwrap();
    assert!(Arc::ptr_eq(
        &first.catalogue.sidecarsets()[0],
        &second.catalogue.sidecarsets()[0]
    ));
}

/// `set` as the controller's status write leaves it: a new resourceVersion and a status.
fn status_written(set: &WatchedSidecarSet, version: &str) -> WatchedSidecarSet {
    let Lenient::Decoded(set) = set else {
        panic!("a decoded SidecarSet")
    };
    let mut written = set.arc().as_ref().clone();
    written.metadata.resource_version = Some(version.into());
    written.status = Some(crate::api::SidecarSetStatus {
        observed_generation: Some(1),
        ..Default::default()
    });
    Lenient::Decoded(Box::new(written.into()))
}

#[test]
fn status_writes_change_no_snapshot_until_enough_older_readings_are_held() {
    let count = MIN_NEWER_READINGS + 10;
    let sets: Vec<_> = (0..count)
        .map(|i| sidecarset(&format!("s{i:04}"), &format!("c{i}"), &format!("app{i}")))
        .collect();
    let mut state = synced(sets.clone(), vec![]);
    let first = state.snapshot().unwrap();
    let mut written = Vec::new();
    for (i, set) in sets.iter().enumerate().take(MIN_NEWER_READINGS) {
        let newer = status_written(set, "2");
        written.push(newer.clone());
        let due = state.sidecarset_event(Event::Apply(newer));
        assert_eq!(due, i + 1 == MIN_NEWER_READINGS, "write {i}");
    }
    let second = state.snapshot().unwrap();
    assert!(!Arc::ptr_eq(&first.catalogue, &second.catalogue));
    assert_eq!(names(&first), names(&second));
    // The new snapshot holds the newest readings (the ones the controller's store shares), and
    // nothing was judged again.
    for (held, newer) in second.catalogue.sidecarsets().iter().zip(&written) {
        let Lenient::Decoded(newer) = newer else {
            unreachable!()
        };
        assert!(Arc::ptr_eq(held, newer.arc()));
    }
    assert!(second.newly_refused.is_empty());
    // Once let go, the count starts again.
    assert!(!state.sidecarset_event(Event::Apply(status_written(&sets[count - 1], "3"))));
}

mod history {
    use super::*;
    use crate::api::{SidecarSetInjectRevision, SidecarSetInjectionStrategy};
    use crate::inject::revision::{HistoryRevision, revision_data};
    use crate::rollout::history::candidate;
    use crate::rollout::refusal::RefusalReason;
    use crate::source::history::{SharedRevisions, shared};

    /// `mesh` at `image`, defaulted and hashed as the watch holds it, naming `revision` (by name)
    /// to inject when given.
    fn mesh(image: &str, revision: Option<&str>) -> SidecarSet {
        let mut set = SidecarSetBuilder::new("mesh")
            .resource_version(image)
            .selector(&[("app", "web")])
            .container("proxy", image)
            .build();
        set.metadata.uid = Some("mesh-uid".into());
        set.spec.injection_strategy = revision.map(|name| SidecarSetInjectionStrategy {
            paused: None,
            revision: Some(SidecarSetInjectRevision {
                revision_name: Some(name.into()),
                ..Default::default()
            }),
        });
        crate::defaults::sidecarset::default_and_hash(&mut set);
        set
    }

    fn watched(set: &SidecarSet) -> WatchedSidecarSet {
        as_admitted(serde_json::from_value(serde_json::to_value(set).unwrap()).unwrap())
    }

    fn revision(set: &SidecarSet, number: i64) -> Lenient<WatchedRevision> {
        let revision = candidate(set, "kruise-system", number, 0);
        serde_json::from_value(serde_json::to_value(&revision).unwrap()).unwrap()
    }

    fn synced_with_history(sets: Vec<WatchedSidecarSet>) -> (ClusterState, SharedRevisions) {
        let history = shared();
        let mut state = ClusterState::with_history(history.clone());
        state.sidecarset_event(Event::Init);
        for set in sets {
            state.sidecarset_event(Event::InitApply(set));
        }
        state.sidecarset_event(Event::InitDone);
        state.namespace_event(Event::Init);
        state.namespace_event(Event::InitDone);
        assert!(state.snapshot().is_none(), "the history has not listed");
        (state, history)
    }

    fn restored_image(snapshot: &Snapshot) -> Option<String> {
        match snapshot.catalogue.injection_revisions()?.get("mesh")? {
            HistoryRevision::Restored(set) => set.containers()[0].container.image.clone(),
            _ => None,
        }
    }

    /// A set naming a revision that does not exist is served (its pods are refused) and reported;
    /// once the revision is watched it resolves, the report clears, and the webhook would inject
    /// the revision's containers.
    #[test]
    fn a_missing_revision_is_reported_until_it_appears() {
        let v1 = mesh("envoy:1", None);
        let name = crate::inject::revision::revision_name(&v1, 0);
        let (mut state, history) =
            synced_with_history(vec![watched(&mesh("envoy:2", Some(&name)))]);
        state.revision_event(Event::Init);
        assert!(state.revision_event(Event::InitDone));
        let snapshot = state.snapshot().unwrap();
        assert_eq!(names(&snapshot), ["mesh"], "served: its pods are refused");
        let refusal = &snapshot.refusals["mesh"];
        assert_eq!(refusal.reason, RefusalReason::RevisionNotFound);
        assert_eq!(
            refusal.message,
            format!("controllerrevisions.apps \"{name}\" not found")
        );
        assert_eq!(snapshot.newly_refused.len(), 1);

        // The revision appears (the set names it: its content is kept on the way in).
        assert!(state.revision_event(Event::Apply(revision(&v1, 1))));
        let snapshot = state.snapshot().unwrap();
        assert!(snapshot.refusals.is_empty());
        assert_eq!(restored_image(&snapshot).as_deref(), Some("envoy:1"));
        assert!(state.missing_content().is_empty());

        // A revision of another set changes nothing the catalogue uses.
        assert!(!state.revision_event(Event::Apply(revision(&sidecar("other"), 1))));
        assert_eq!(history.read().unwrap().len(), 2);
    }

    fn sidecar(name: &str) -> SidecarSet {
        let mut set = mesh("busybox:1", None);
        set.metadata.name = Some(name.into());
        set
    }

    /// A set that starts naming a revision listed before: its content is read again, and pods are
    /// refused as still being read meanwhile, without a report.
    #[test]
    fn a_set_that_starts_naming_a_revision_has_it_read_again() {
        let v1 = mesh("envoy:1", None);
        let (mut state, _) = synced_with_history(vec![watched(&mesh("envoy:2", None))]);
        state.revision_event(Event::Init);
        state.revision_event(Event::InitApply(revision(&v1, 1)));
        state.revision_event(Event::InitDone);
        assert!(
            state
                .snapshot()
                .unwrap()
                .catalogue
                .injection_revisions()
                .unwrap()
                .is_empty()
        );
        let name = crate::inject::revision::revision_name(&v1, 0);
        assert!(state.sidecarset_event(Event::Apply(watched(&mesh("envoy:2", Some(&name))))));
        assert_eq!(state.missing_content(), std::slice::from_ref(&name));
        let snapshot = state.snapshot().unwrap();
        assert!(snapshot.refusals.is_empty());
        assert!(matches!(
            snapshot.catalogue.injection_revisions().unwrap()["mesh"],
            HistoryRevision::Pending(_)
        ));
        let stored = candidate(&v1, "kruise-system", 1, 0);
        assert!(state.revision_content(WatchedRevision::from_object(&stored)));
        assert_eq!(
            restored_image(&state.snapshot().unwrap()).as_deref(),
            Some("envoy:1")
        );
        assert_eq!(
            revision_data(&v1),
            crate::k8s::history::stored_data(&stored),
            "the data read back is the set's"
        );
    }

    /// Each reason a set is not served is reported with it: the validating webhook's refusal, a
    /// set the types cannot read.
    #[test]
    fn refusals_carry_their_reason() {
        let (mut state, _) = synced_with_history(vec![
            sidecarset("a", "proxy", "x"),
            sidecarset("b", "proxy", "x"),
            malformed("c"),
        ]);
        state.revision_event(Event::Init);
        state.revision_event(Event::InitDone);
        let snapshot = state.snapshot().unwrap();
        assert_eq!(names(&snapshot), ["a"]);
        assert_eq!(snapshot.refusals["b"].reason, RefusalReason::Invalid);
        assert_eq!(snapshot.refusals["c"].reason, RefusalReason::Undecodable);
        // b fixed: no longer reported.
        state.sidecarset_event(Event::Apply(sidecarset("b", "other", "y")));
        let snapshot = state.snapshot().unwrap();
        assert_eq!(snapshot.refusals.keys().collect::<Vec<_>>(), ["c"]);
    }
}
