use super::*;

fn owner(api_version: &str, controller: Option<bool>) -> OwnerReference {
    OwnerReference {
        api_version: api_version.into(),
        kind: "CloneSet".into(),
        name: "web".into(),
        uid: api_version.into(),
        controller,
        ..Default::default()
    }
}

#[test]
fn the_controller_is_the_reference_marked_controller() {
    let meta = ObjectMeta {
        owner_references: Some(vec![
            owner("v1", None),
            owner("apps.kruise.io/v1alpha1", Some(false)),
            owner("apps.kruise.io/v1beta1", Some(true)),
        ]),
        ..Default::default()
    };
    assert_eq!(controller_of(&meta).unwrap().uid, "apps.kruise.io/v1beta1");
    assert_eq!(controller_of(&ObjectMeta::default()), None);
}

#[test]
fn the_group_is_the_api_version_before_its_slash() {
    assert!(in_group(
        &owner("apps.kruise.io/v1beta1", None),
        "apps.kruise.io"
    ));
    assert!(!in_group(&owner("apps/v1", None), "apps.kruise.io"));
    assert!(in_group(&owner("v1", None), "v1"));
}
