use k8s_openapi::api::core::v1::{Container, EmptyDirVolumeSource, LocalObjectReference, Volume};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::json;

use crate::k8s::history::revision_hash;

use super::*;
use crate::api::{
    SidecarContainer, SidecarSetBuilder, SidecarSetInjectionStrategy, SidecarSetPatchPodMetadata,
    SidecarSetStatus, SidecarSetUpdateStrategy, match_labels,
};
use crate::inject::tests::default_and_hash;

/// A defaulted set with every recorded field, a command Go escapes (`&&`) and quantities Go
/// rewrites.
fn mesh() -> SidecarSet {
    let proxy = SidecarContainer {
        container: Container {
            name: "proxy".into(),
            image: Some("envoy:1.30".into()),
            command: Some(vec!["sh".into(), "-c".into(), "init && run".into()]),
            ..Default::default()
        },
        ..Default::default()
    };
    let cache = Volume {
        name: "cache".into(),
        empty_dir: Some(EmptyDirVolumeSource {
            size_limit: Some(Quantity("1024Mi".into())),
            ..Default::default()
        }),
        ..Default::default()
    };
    let mut set = SidecarSetBuilder::new("mesh")
        .selector(&[("app", "web")])
        .sidecar(proxy)
        .init_container("init-mesh", "busybox:1.36")
        .volumes(vec![cache])
        .patch_pod_metadata(vec![SidecarSetPatchPodMetadata {
            annotations: Some([("mesh/enabled".to_string(), "true".to_string())].into()),
            patch_policy: None,
        }])
        .build();
    set.spec.image_pull_secrets = Some(vec![LocalObjectReference {
        name: "registry".into(),
    }]);
    default_and_hash(&mut set);
    set
}

/// The data OpenKruise stores for [`mesh`]: `getPatch` and `history.HashControllerRevision`
/// (`json.Unmarshal` of the typed encoding into Go maps, `json.Marshal` again, `fnv.New32`) run
/// with Go 1.19 on the set as `runtime.Encode` writes it.
const MESH_DATA: &str = r#"{"spec":{"$patch":"replace","containers":[{"command":["sh","-c","init \u0026\u0026 run"],"image":"envoy:1.30","imagePullPolicy":"IfNotPresent","name":"proxy","podInjectPolicy":"BeforeAppContainer","resources":{},"shareVolumePolicy":{"type":"disabled"},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","upgradeStrategy":{"upgradeType":"ColdUpgrade"}}],"imagePullSecrets":[{"name":"registry"}],"initContainers":[{"image":"busybox:1.36","imagePullPolicy":"IfNotPresent","name":"init-mesh","podInjectPolicy":"AfterAppContainer","resources":{},"shareVolumePolicy":{"type":"disabled"},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","upgradeStrategy":{"upgradeType":"ColdUpgrade"}}],"patchPodMetadata":[{"annotations":{"mesh/enabled":"true"},"patchPolicy":"Retain"}],"volumes":[{"emptyDir":{"sizeLimit":"1Gi"},"name":"cache"}]}}"#;

#[test]
fn data_is_openkruise_bytes() {
    assert_eq!(revision_data(&mesh()), MESH_DATA);
}

#[test]
fn names_are_openkruise_names() {
    assert_eq!(revision_name(&mesh(), 0), "mesh-7768567f89");
    assert_eq!(revision_name(&mesh(), 1), "mesh-7768567f88");
    // Only containers: every other recorded field is Go's nil slice.
    let mut plain = SidecarSetBuilder::new("log-agent")
        .selector(&[("app", "web")])
        .container("log-agent", "fluent/fluent-bit:2.2.2")
        .build();
    default_and_hash(&mut plain);
    assert_eq!(
        revision_data(&plain),
        r#"{"spec":{"$patch":"replace","containers":[{"image":"fluent/fluent-bit:2.2.2","imagePullPolicy":"IfNotPresent","name":"log-agent","podInjectPolicy":"BeforeAppContainer","resources":{},"shareVolumePolicy":{"type":"disabled"},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","upgradeStrategy":{"upgradeType":"ColdUpgrade"}}],"imagePullSecrets":null,"initContainers":null,"patchPodMetadata":null,"volumes":null}}"#
    );
    assert_eq!(revision_name(&plain, 0), "log-agent-5b6d4f69f5");
    assert_eq!(revision_name(&plain, 1), "log-agent-5b6d4f69f4");
    // Empty lists are nil to omitempty too; what the revision does not record changes nothing.
    let mut empty = plain.clone();
    empty.spec.volumes = Some(Vec::new());
    empty.spec.revision_history_limit = Some(3);
    empty.spec.selector = Some(match_labels(&[("app", "other")]));
    assert_eq!(revision_data(&empty), revision_data(&plain));
    assert_eq!(
        revision_hash(&revision_data(&plain), 0),
        "5b6d4f69f5",
        "the name is the set's name and the hash"
    );
}

#[test]
fn quantities_and_go_zero_values_of_volumes() {
    let volume: Volume = serde_json::from_value(json!({
        "name": "info",
        "downwardAPI": {"items": [
            {"path": "cpu", "resourceFieldRef": {"resource": "limits.cpu"}},
            {"path": "mem", "resourceFieldRef": {"resource": "limits.memory", "divisor": "1048576"}}
        ]}
    }))
    .unwrap();
    assert_eq!(
        go_volume(&volume),
        json!({"name": "info", "downwardAPI": {"items": [
            {"path": "cpu", "resourceFieldRef": {"resource": "limits.cpu", "divisor": "0"}},
            {"path": "mem", "resourceFieldRef": {"resource": "limits.memory", "divisor": "1048576"}}
        ]}})
    );
    let projected: Volume =
        serde_json::from_value(json!({"name": "p", "projected": {"defaultMode": 420}})).unwrap();
    assert_eq!(
        go_volume(&projected),
        json!({"name": "p", "projected": {"defaultMode": 420, "sources": null}})
    );
}

fn content(data: &str, hashes: Option<(&str, &str)>) -> RevisionContent {
    RevisionContent {
        name: "mesh-old".into(),
        data: data.to_string(),
        hash: hashes.map(|h| h.0.to_string()),
        hash_without_image: hashes.map(|h| h.1.to_string()),
    }
}

#[test]
fn restore_replaces_the_spec_and_takes_the_revisions_hashes() {
    let mut current = mesh();
    current.metadata.generation = Some(4);
    current.status = Some(SidecarSetStatus {
        latest_revision: Some("mesh-new".into()),
        observed_generation: Some(3),
        ..Default::default()
    });
    let old_data = MESH_DATA.replace("envoy:1.30", "envoy:1.29");
    let restored = restore(&current, &content(&old_data, Some(("h-old", "w-old")))).unwrap();
    assert_eq!(
        restored.containers()[0].container.image.as_deref(),
        Some("envoy:1.29")
    );
    assert_eq!(restored.init_containers().len(), 1);
    assert_eq!(restored.volumes().len(), 1);
    // `$patch: replace`: what the revision does not record is gone from the restored spec.
    assert!(restored.spec.selector.is_none() && restored.spec.update_strategy.is_none());
    assert_eq!(restored.metadata.name, current.metadata.name);
    assert_eq!(restored.annotation(keys::SIDECARSET_HASH), Some("h-old"));
    assert_eq!(
        restored.annotation(keys::SIDECARSET_HASH_WITHOUT_IMAGE),
        Some("w-old")
    );
    let status = restored.status.as_ref().unwrap();
    assert_eq!(status.latest_revision.as_deref(), Some("mesh-old"));
    assert_eq!(stamped_revision(&restored), "mesh-old");

    // Without hash annotations they are computed from the restored spec.
    let restored = restore(&current, &content(&old_data, None)).unwrap();
    assert_eq!(
        restored.annotation(keys::SIDECARSET_HASH),
        Some(sidecarset_hash(&restored.spec).as_str())
    );
    assert_ne!(
        restored.annotation(keys::SIDECARSET_HASH),
        current.annotation(keys::SIDECARSET_HASH)
    );
    // Restoring the set's own data gives the set's own containers and hashes back.
    let same = restore(&current, &content(MESH_DATA, None)).unwrap();
    // (Go writes `resources: {}` where the typed set has none: the same container to Go.)
    assert_eq!(revision_data(&same), revision_data(&current));
    assert_eq!(
        same.annotation(keys::SIDECARSET_HASH),
        current.annotation(keys::SIDECARSET_HASH)
    );

    // Data without the directive replaces only the fields it names.
    let partial = restore(
        &current,
        &content(
            r#"{"spec":{"volumes":null,"imagePullSecrets":[{"name":"other"}]}}"#,
            None,
        ),
    )
    .unwrap();
    assert!(partial.spec.volumes.is_none() && partial.spec.selector.is_some());
    assert_eq!(partial.spec.image_pull_secrets.unwrap()[0].name, "other");
    assert!(restore(&current, &content(r#"{"template":{}}"#, None)).is_err());
}

#[test]
fn the_stamp_is_the_status_once_current_else_the_revision_to_come() {
    let mut set = mesh();
    set.metadata.generation = Some(2);
    assert_eq!(stamped_revision(&set), "", "none registered yet");
    set.status = Some(SidecarSetStatus {
        latest_revision: Some("mesh-stale".into()),
        observed_generation: Some(1),
        collision_count: Some(1),
        ..Default::default()
    });
    assert_eq!(stamped_revision(&set), "mesh-7768567f88");
    set.status.as_mut().unwrap().observed_generation = Some(2);
    assert_eq!(stamped_revision(&set), "mesh-stale");
}

fn revision_set(policy: &str, update: SidecarSetUpdateStrategy) -> SidecarSet {
    SidecarSetBuilder::new("mesh")
        .selector(&[("app", "web")])
        .container("proxy", "envoy:1.30")
        .update_strategy(update)
        .injection_strategy(SidecarSetInjectionStrategy {
            paused: None,
            revision: Some(SidecarSetInjectRevision {
                custom_version: Some("v1".into()),
                revision_name: None,
                policy: Some(policy.into()),
            }),
        })
        .build()
}

fn pick_for(set: &SidecarSet, labels: &[(&str, &str)], draw: f64) -> Result<Pick, PickError> {
    let labels: Labels = labels
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let revision = requested(set).unwrap();
    pick(set, revision, Some(&labels), &|| draw)
}

#[test]
fn always_paused_and_partial() {
    let percent = |p: &str| SidecarSetUpdateStrategy {
        partition: Some(IntOrString::String(p.into())),
        ..Default::default()
    };
    let always = revision_set("Always", percent("0%"));
    assert_eq!(pick_for(&always, &[], 0.99).unwrap(), Pick::History);

    // Partial, no selector: the partition is the share of new pods that keep the revision.
    let partial = revision_set("Partial", percent("30%"));
    assert_eq!(pick_for(&partial, &[], 0.2).unwrap(), Pick::History);
    assert_eq!(pick_for(&partial, &[], 0.3).unwrap(), Pick::History);
    assert_eq!(pick_for(&partial, &[], 0.31).unwrap(), Pick::Latest);
    assert_eq!(
        pick_for(&revision_set("Partial", percent("100%")), &[], 0.999).unwrap(),
        Pick::History
    );
    assert_eq!(
        pick_for(&revision_set("Partial", percent("0%")), &[], 0.5).unwrap(),
        Pick::Latest
    );
    let int = SidecarSetUpdateStrategy {
        partition: Some(IntOrString::Int(3)),
        ..Default::default()
    };
    assert_eq!(
        pick_for(&revision_set("Partial", int), &[], 0.0).unwrap(),
        Pick::Latest
    );
    assert_eq!(
        pick_for(&revision_set("Partial", Default::default()), &[], 0.0).unwrap(),
        Pick::Latest
    );

    // Partial with a selector: pods it does not select keep the revision; selected ones get the
    // latest (a partition cannot be set beside a selector).
    let selected = SidecarSetUpdateStrategy {
        selector: Some(match_labels(&[("canary", "true")])),
        partition: Some(IntOrString::Int(0)),
        ..Default::default()
    };
    let partial = revision_set("Partial", selected.clone());
    assert_eq!(
        pick_for(&partial, &[("app", "web")], 0.0).unwrap(),
        Pick::History
    );
    assert_eq!(
        pick_for(&partial, &[("canary", "true")], 0.0).unwrap(),
        Pick::Latest
    );

    // Paused: the revision, whatever the policy.
    let paused = revision_set(
        "Partial",
        SidecarSetUpdateStrategy {
            paused: Some(true),
            ..selected
        },
    );
    assert_eq!(
        pick_for(&paused, &[("canary", "true")], 0.0).unwrap(),
        Pick::History
    );

    let bad = revision_set("Partial", percent("abc%"));
    assert_eq!(
        pick_for(&bad, &[], 0.0).unwrap_err().to_string(),
        "strconv.ParseFloat: parsing \"abc\": invalid syntax"
    );
    let bad = revision_set("Partial", percent("5"));
    assert_eq!(
        pick_for(&bad, &[], 0.0).unwrap_err().to_string(),
        "invalid type: string is not a percentage"
    );
}

#[test]
fn a_seeded_draw_gives_the_partition_share() {
    let partial = revision_set(
        "Partial",
        SidecarSetUpdateStrategy {
            partition: Some(IntOrString::String("25%".into())),
            ..Default::default()
        },
    );
    let rng = std::cell::RefCell::new(fastrand::Rng::with_seed(43));
    let draw = || rng.borrow_mut().f64();
    let revision = requested(&partial).unwrap();
    let history = (0..4000)
        .filter(|_| pick(&partial, revision, None, &draw).unwrap() == Pick::History)
        .count();
    assert!((900..1100).contains(&history), "{history} of 4000");
}

mod injected {
    use std::collections::BTreeMap;

    use k8s_openapi::api::core::v1::Pod;

    use super::*;
    use crate::inject::sidecar::{InjectError, InjectionContext, inject_sidecars};
    use crate::podmarks::sidecarset::parse_upgrade_specs;

    fn pod(labels: &[(&str, &str)]) -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": "web-0", "namespace": "default",
                "labels": labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<BTreeMap<_, _>>()},
            "spec": {"containers": [{"name": "app", "image": "app:1"}]}
        }))
        .unwrap()
    }

    /// `mesh` now at envoy:2, naming its envoy:1 revision with `policy` and `update`.
    fn sets(
        policy: &str,
        update: SidecarSetUpdateStrategy,
    ) -> (Arc<SidecarSet>, InjectionRevisions) {
        let mut current = revision_set(policy, update);
        current.spec.containers.as_mut().unwrap()[0].container.image = Some("envoy:2".into());
        default_and_hash(&mut current);
        let mut old = current.clone();
        old.spec.containers.as_mut().unwrap()[0].container.image = Some("envoy:1".into());
        default_and_hash(&mut old);
        let content = RevisionContent {
            name: "mesh-old".into(),
            data: revision_data(&old),
            hash: old.annotation(keys::SIDECARSET_HASH).map(Into::into),
            hash_without_image: old
                .annotation(keys::SIDECARSET_HASH_WITHOUT_IMAGE)
                .map(Into::into),
        };
        let restored = restore(&current, &content).unwrap();
        let revisions = InjectionRevisions::from([(
            "mesh".to_string(),
            HistoryRevision::Restored(Arc::new(restored)),
        )]);
        (Arc::new(current), revisions)
    }

    fn inject(
        pod: &mut Pod,
        set: &Arc<SidecarSet>,
        revisions: Option<&InjectionRevisions>,
        draw: f64,
    ) -> Result<bool, InjectError> {
        let sets = [set.clone()];
        let draw = move || draw;
        let context = InjectionContext {
            sidecarsets: &sets,
            namespace_labels: None,
            now: "2026-01-01T00:00:00Z",
            sort_sidecars_by_name: false,
            revisions,
            draw: &draw,
        };
        inject_sidecars(pod, &context)
    }

    fn injected_image(pod: &Pod) -> &str {
        pod.spec.as_ref().unwrap().containers[0]
            .image
            .as_deref()
            .unwrap()
    }

    fn stamp(pod: &Pod) -> (String, String) {
        let annotations = pod.metadata.annotations.as_ref().unwrap();
        let specs = parse_upgrade_specs(&annotations[keys::SIDECARSET_HASH]).unwrap();
        let entry = &specs["mesh"];
        (entry.hash.clone(), entry.controller_revision.clone())
    }

    #[test]
    fn a_pod_gets_the_revision_its_hashes_and_its_name() {
        let (set, revisions) = sets("Always", Default::default());
        let mut web = pod(&[("app", "web")]);
        assert!(inject(&mut web, &set, Some(&revisions), 0.0).unwrap());
        assert_eq!(injected_image(&web), "envoy:1");
        let HistoryRevision::Restored(restored) = &revisions["mesh"] else {
            panic!()
        };
        assert_eq!(
            stamp(&web),
            (
                restored
                    .annotation(keys::SIDECARSET_HASH)
                    .unwrap()
                    .to_string(),
                "mesh-old".to_string()
            )
        );
        assert_ne!(
            restored.annotation(keys::SIDECARSET_HASH),
            set.annotation(keys::SIDECARSET_HASH)
        );
    }

    #[test]
    fn partial_gives_the_partition_share_the_revision() {
        let (set, revisions) = sets(
            "Partial",
            SidecarSetUpdateStrategy {
                partition: Some(IntOrString::String("40%".into())),
                ..Default::default()
            },
        );
        let mut kept = pod(&[("app", "web")]);
        inject(&mut kept, &set, Some(&revisions), 0.39).unwrap();
        assert_eq!(injected_image(&kept), "envoy:1");
        let mut latest = pod(&[("app", "web")]);
        inject(&mut latest, &set, Some(&revisions), 0.41).unwrap();
        assert_eq!(injected_image(&latest), "envoy:2");
        assert_eq!(
            stamp(&latest).0,
            set.annotation(keys::SIDECARSET_HASH).unwrap()
        );
    }

    #[test]
    fn a_revision_that_cannot_be_found_refuses_the_pod() {
        let (set, _) = sets("Partial", Default::default());
        let missing = InjectionRevisions::from([(
            "mesh".to_string(),
            HistoryRevision::Unresolved(r#"ControllerRevision.apps "mesh" not found"#.into()),
        )]);
        let mut web = pod(&[("app", "web")]);
        let error = inject(&mut web, &set, Some(&missing), 0.0).unwrap_err();
        // OpenKruise's words alone, whichever revision the pod would have got.
        assert_eq!(
            error.to_string(),
            r#"ControllerRevision.apps "mesh" not found"#
        );
        // Without a history (a directory) it is missing too.
        let error = inject(&mut web, &set, None, 0.0).unwrap_err();
        assert_eq!(
            error.to_string(),
            r#"ControllerRevision.apps "mesh" not found"#
        );
        // A pod the set does not select is not refused.
        let mut other = pod(&[("app", "other")]);
        assert!(!inject(&mut other, &set, Some(&missing), 0.0).unwrap());
    }
}
