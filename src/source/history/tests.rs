use k8s_openapi::api::apps::v1::ControllerRevision;

use super::*;
use crate::api::{SidecarSetBuilder, SidecarSetInjectionStrategy};
use crate::defaults::sidecarset::default_and_hash;
use crate::inject::revision::revision_data;
use crate::rollout::history::candidate;

fn set(name: &str, image: &str) -> SidecarSet {
    sidecar_set(name, "proxy", image)
}

fn sidecar_set(name: &str, container: &str, image: &str) -> SidecarSet {
    let mut set = SidecarSetBuilder::new(name)
        .selector(&[("app", "web")])
        .container(container, image)
        .build();
    set.metadata.uid = Some(format!("uid-{name}"));
    default_and_hash(&mut set);
    set
}

fn injecting(mut set: SidecarSet, revision_name: Option<&str>, custom: Option<&str>) -> SidecarSet {
    set.spec.injection_strategy = Some(SidecarSetInjectionStrategy {
        paused: None,
        revision: Some(SidecarSetInjectRevision {
            revision_name: revision_name.map(Into::into),
            custom_version: custom.map(Into::into),
            policy: Some("Always".into()),
        }),
    });
    set
}

/// A revision of `set` as the apiserver sends it.
fn stored(set: &SidecarSet, number: i64, custom_version: Option<&str>) -> ControllerRevision {
    let mut revision = candidate(set, "kruise-system", number, 0);
    revision.metadata.uid = Some(format!("rev-{number}-{}", set.name()));
    revision.metadata.resource_version = Some(number.to_string());
    if let Some(version) = custom_version {
        let labels = revision.metadata.labels.get_or_insert_default();
        labels.insert(keys::SIDECARSET_CUSTOM_VERSION.into(), version.into());
    }
    revision
}

fn watched(revision: &ControllerRevision) -> Lenient<WatchedRevision> {
    let json = serde_json::to_string(revision).unwrap();
    serde_json::from_str(&json).unwrap()
}

fn listed(index: &mut RevisionIndex, revisions: &[ControllerRevision]) {
    index.apply(Event::Init);
    for revision in revisions {
        index.apply(Event::InitApply(watched(revision)));
    }
    assert_eq!(index.apply(Event::InitDone), None);
}

fn image(set: &SidecarSet) -> &str {
    set.containers()[0].container.image.as_deref().unwrap()
}

/// A revision as OpenKruise stores it: its data bytes (Go's escaping and key order), its labels
/// and annotations. Held, it is the one the set's own revision would be: found and reused.
#[test]
fn a_revision_openkruise_wrote_is_the_sets_own() {
    let current = sidecar_set("log-agent", "log-agent", "fluent/fluent-bit:2.2.2");
    let name = crate::inject::revision::revision_name(&current, 0);
    let text = format!(
        r#"{{"apiVersion":"apps/v1","kind":"ControllerRevision","metadata":{{"name":"{name}","namespace":"kruise-system","uid":"u1","resourceVersion":"9","labels":{{"controller.kubernetes.io/hash":"5b6d4f69f5","kruise.io/sidecarset-name":"log-agent"}},"annotations":{{"kruise.io/sidecarset-hash":"{h}","kruise.io/sidecarset-hash-without-image":"{w}"}},"ownerReferences":[{{"apiVersion":"apps.kruise.io/v1beta1","kind":"SidecarSet","name":"log-agent","uid":"uid-log-agent","controller":true,"blockOwnerDeletion":true}}]}},"data":{data},"revision":1}}"#,
        h = current.annotation(keys::SIDECARSET_HASH).unwrap(),
        w = current
            .annotation(keys::SIDECARSET_HASH_WITHOUT_IMAGE)
            .unwrap(),
        data = r#"{"spec":{"$patch":"replace","containers":[{"image":"fluent/fluent-bit:2.2.2","imagePullPolicy":"IfNotPresent","name":"log-agent","podInjectPolicy":"BeforeAppContainer","resources":{},"shareVolumePolicy":{"type":"disabled"},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","upgradeStrategy":{"upgradeType":"ColdUpgrade"}}],"imagePullSecrets":null,"initContainers":null,"patchPodMetadata":null,"volumes":null}}"#,
    );
    assert_eq!(name, "log-agent-5b6d4f69f5");
    let mut index = RevisionIndex::default();
    listed(&mut index, &[]);
    index.apply(Event::Apply(serde_json::from_str(&text).unwrap()));
    let history = index.history_of(&current);
    assert_eq!(history.len(), 1);
    let plan = crate::rollout::history::plan_history(
        &current,
        &history.iter().collect::<Vec<_>>(),
        &[] as &[std::sync::Arc<k8s_openapi::api::core::v1::Pod>],
        "kruise-system",
    );
    assert_eq!(
        plan.latest,
        crate::rollout::history::Latest::Reuse { name: name.clone() }
    );
    assert_eq!(history[0].digest, data_digest(&revision_data(&current)));
}

#[test]
fn the_content_is_kept_for_the_sets_that_inject_a_revision() {
    let (v1, v2) = (set("mesh", "envoy:1"), set("mesh", "envoy:2"));
    let other = set("other", "busybox:1");
    let (r1, r2) = (
        stored(&v1, 1, Some("stable")),
        stored(&v2, 2, Some("canary")),
    );
    let mut index = RevisionIndex::default();
    listed(
        &mut index,
        &[r1.clone(), r2.clone(), stored(&other, 1, None)],
    );
    assert!(index.is_synced());
    assert_eq!(index.len(), 3);
    // Nothing injects a revision: only summaries are held, and nothing is missing.
    assert!(index.missing_content().is_empty());
    let by_version = injecting(v2.clone(), None, Some("stable"));
    let Some(Err(pending)) = index.resolve(&by_version) else {
        panic!()
    };
    assert!(pending.pending);

    // mesh starts injecting a revision: its revisions' content is to be read again.
    index.set_wanted([("mesh", requested(&by_version).unwrap())]);
    let mut names = [
        r1.metadata.name.clone().unwrap(),
        r2.metadata.name.clone().unwrap(),
    ];
    names.sort();
    assert_eq!(index.missing_content(), names);
    for revision in [&r1, &r2] {
        assert_eq!(
            index
                .add_content(WatchedRevision::from_object(revision))
                .as_deref(),
            Some("mesh")
        );
    }
    assert!(index.missing_content().is_empty());
    let restored = index.resolve(&by_version).unwrap().unwrap();
    assert_eq!(image(&restored), "envoy:1");
    assert_eq!(
        restored.status.unwrap().latest_revision,
        r1.metadata.name.clone()
    );
    // A revision arriving now keeps its content.
    let v3 = set("mesh", "envoy:3");
    index.apply(Event::Apply(watched(&stored(&v3, 3, Some("stable")))));
    assert_eq!(
        image(&index.resolve(&by_version).unwrap().unwrap()),
        "envoy:3"
    );
    // By name, across sets too (OpenKruise GETs the name in the namespace).
    let by_name = injecting(other.clone(), r2.metadata.name.as_deref(), None);
    index.set_wanted([("other", requested(&by_name).unwrap())]);
    assert_eq!(image(&index.resolve(&by_name).unwrap().unwrap()), "envoy:2");
    // mesh no longer injects one: its other revisions' content is let go.
    assert!(index.resolve(&by_version).unwrap().unwrap_err().pending);
}

#[test]
fn missing_revisions_answer_as_openkruise() {
    let mut index = RevisionIndex::default();
    listed(&mut index, &[]);
    let current = set("mesh", "envoy:1");
    let by_name = injecting(current.clone(), Some("mesh-gone"), None);
    let by_version = injecting(current.clone(), None, Some("v9"));
    assert_eq!(
        index.resolve(&by_name).unwrap().unwrap_err(),
        Unresolved {
            message: r#"controllerrevisions.apps "mesh-gone" not found"#.into(),
            pending: false
        }
    );
    assert_eq!(
        index.resolve(&by_version).unwrap().unwrap_err().message,
        r#"ControllerRevision.apps "mesh" not found"#
    );
    assert!(index.resolve(&current).is_none());
    assert!(index.find(&by_name, requested(&by_name).unwrap()).is_err());
    let r1 = stored(&current, 1, Some("v9"));
    index.apply(Event::Apply(watched(&r1)));
    assert!(
        index
            .find(&by_version, requested(&by_version).unwrap())
            .is_ok()
    );
    // Deleted: missing again.
    index.apply(Event::Delete(watched(&r1)));
    assert!(
        index
            .find(&by_version, requested(&by_version).unwrap())
            .is_err()
    );
    assert!(index.is_empty());
}

#[test]
fn a_relist_replaces_the_history_once_complete() {
    let (v1, v2) = (set("mesh", "envoy:1"), set("mesh", "envoy:2"));
    let mut index = RevisionIndex::default();
    listed(&mut index, &[stored(&v1, 1, None)]);
    index.apply(Event::Init);
    index.apply(Event::InitApply(watched(&stored(&v2, 2, None))));
    // Until the list completes the old view serves.
    assert_eq!(index.history_of(&v1).len(), 1);
    assert_eq!(index.history_of(&v1)[0].number, 1);
    index.apply(Event::InitDone);
    assert_eq!(index.history_of(&v1)[0].number, 2);
    // A renumbered revision (a rollback) replaces its earlier reading.
    let mut renumbered = stored(&v2, 5, None);
    renumbered.metadata.uid = stored(&v2, 2, None).metadata.uid;
    index.apply(Event::Apply(watched(&renumbered)));
    let history = index.history_of(&v1);
    assert_eq!((history.len(), history[0].number), (1, 5));
}
