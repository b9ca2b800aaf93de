//! Reading an object's owner references as Kubernetes' `metav1.GetControllerOf` does.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

/// The owner reference with `controller: true`, if any (there is at most one; the first wins).
pub fn controller_of(meta: &ObjectMeta) -> Option<&OwnerReference> {
    meta.owner_references
        .iter()
        .flatten()
        .find(|o| o.controller == Some(true))
}

/// Whether `owner` names an object of API group `group`, any version.
pub fn in_group(owner: &OwnerReference, group: &str) -> bool {
    owner.api_version.split('/').next() == Some(group)
}

#[cfg(test)]
mod tests {
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
}
