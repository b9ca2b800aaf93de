use super::*;
use crate::api::SidecarSet;
use crate::api::SidecarSetBuilder;

#[test]
fn clones_share_the_object_until_one_is_changed() {
    let one: Shared<SidecarSet> = SidecarSetBuilder::new("a").build().into();
    let mut two = one.clone();
    assert!(Arc::ptr_eq(one.arc(), two.arc()));
    two.meta_mut().resource_version = Some("2".into());
    assert!(!Arc::ptr_eq(one.arc(), two.arc()));
    assert_eq!(one.meta().resource_version, None);
    assert_eq!(two.meta().resource_version.as_deref(), Some("2"));
    assert_eq!(Shared::<SidecarSet>::kind(&()), "SidecarSet");
}

#[test]
fn decodes_as_the_object_does() {
    let json = serde_json::to_value(SidecarSetBuilder::new("a").build()).unwrap();
    let shared: Shared<SidecarSet> = serde_json::from_value(json.clone()).unwrap();
    let plain: SidecarSet = serde_json::from_value(json).unwrap();
    assert_eq!(
        serde_json::to_value(&*shared).unwrap(),
        serde_json::to_value(&plain).unwrap()
    );
}
