use super::*;
use crate::api::StatefulSetBuilder;

#[test]
fn a_claim_name_gives_back_its_suffix() {
    assert_eq!(claim_suffix("data-web-2", "data", "web"), Some("2"));
    assert_eq!(claim_suffix("data-web-", "data", "web"), Some(""));
    assert_eq!(claim_suffix("data-web2-2", "data", "web"), None);
    assert_eq!(claim_suffix("logs-web-2", "data", "web"), None);
    assert_eq!(claim_suffix("data-web", "data", "web"), None);
    for (template, workload, suffix) in [("a", "b-c", "1"), ("a-b", "c", "x-1"), ("", "", "")] {
        let name = claim_name(template, workload, suffix);
        assert_eq!(claim_suffix(&name, template, workload), Some(suffix));
    }
}

#[test]
fn a_statefulset_ordinal_names_and_mounts_its_claims() {
    let set = StatefulSetBuilder::new("web")
        .namespace("ns")
        .volume_claim_template("data")
        .build();
    let claims = claims_for(&set, "2", &[], None);
    assert_eq!(claims.len(), 1);
    assert_eq!(claims[0].metadata.name.as_deref(), Some("data-web-2"));
    assert_eq!(claims[0].metadata.namespace.as_deref(), Some("ns"));
    assert_eq!(claims[0].metadata.labels.as_ref().unwrap()["app"], "web");
    assert!(claims[0].metadata.owner_references.is_none());
    let mut spec = PodSpec::default();
    mount(&set, &mut spec, "2");
    let volumes = spec.volumes.unwrap();
    assert_eq!(volumes[0].name, "data");
    assert_eq!(
        volumes[0]
            .persistent_volume_claim
            .as_ref()
            .unwrap()
            .claim_name,
        "data-web-2"
    );
}
