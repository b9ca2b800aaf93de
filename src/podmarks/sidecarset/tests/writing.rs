//! The hash annotations written from prepared entries are the typed ones, byte for byte, and
//! so are their JSON string literals.

use super::super::*;
use proptest::prelude::*;

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z0-9-]{0,8}",
        Just("q\"uote\\back/slash".to_string()),
        Just("tab\tnew\nline\u{1}\u{1f}\u{7f}".to_string()),
        Just("ünï€😀".to_string()),
    ]
}

fn spec() -> impl Strategy<Value = UpgradeSpec> {
    (
        text(),
        text(),
        prop::option::of(prop::collection::vec(text(), 0..3)),
        text(),
    )
        .prop_map(|(name, hash, list, revision)| UpgradeSpec {
            update_timestamp: None,
            hash,
            sidecar_set_name: name,
            sidecar_list: list,
            controller_revision: revision,
        })
}

proptest! {
    #[test]
    fn prepared_hash_annotation_is_the_typed_one(
        specs in prop::collection::vec(spec(), 0..4),
        now in prop_oneof![Just("2026-11-22T10:00:00Z".to_string()), text()],
    ) {
        let prepared: Vec<PreparedUpgradeSpec> =
            specs.iter().map(|spec| PreparedUpgradeSpec::new(spec).unwrap()).collect();
        let mut entries: Vec<&PreparedUpgradeSpec> = prepared.iter().collect();
        entries.sort_by(|a, b| a.name().cmp(b.name()));
        let typed: BTreeMap<String, UpgradeSpec> = specs
            .iter()
            .map(|spec| {
                let spec = UpgradeSpec { update_timestamp: Some(now.clone()), ..spec.clone() };
                (spec.sidecar_set_name.clone(), spec)
            })
            .collect();
        match prepared_hash_annotation(&entries, &now) {
            Some(written) => {
                prop_assert_eq!(&written.value, &hash_annotation(&typed));
                prop_assert_eq!(written.literal, serde_json::to_string(&written.value).unwrap());
            }
            // Only refused for names that repeat.
            None => prop_assert!(typed.len() < specs.len()),
        }
    }
}

#[test]
fn injected_list_merges_sorted_and_unique() {
    assert_eq!(injected_list(None, ["b", "a", "b"]), "a,b");
    assert_eq!(injected_list(Some("c,a"), ["b"]), "a,b,c");
    // An empty existing value is one empty name, as it always was.
    assert_eq!(injected_list(Some(""), ["a"]), ",a");
}

#[test]
fn hot_upgrade_versions() {
    assert_eq!(
        hot_upgrade_version_annotations("proxy-1", true),
        [
            (
                "version.sidecarset.kruise.io/proxy-1".to_string(),
                "1".to_string()
            ),
            (
                "versionalt.sidecarset.kruise.io/proxy-1".to_string(),
                "0".to_string()
            ),
        ]
    );
    assert_eq!(hot_upgrade_version_annotations("proxy-2", false)[0].1, "0");
}
