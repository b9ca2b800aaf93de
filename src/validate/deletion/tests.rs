use super::*;
use proptest::prelude::*;

fn labels(value: &str) -> BTreeMap<String, String> {
    BTreeMap::from([(DELETION_PROTECTION_LABEL.to_string(), value.to_string())])
}

fn crd() -> CustomResources {
    CustomResources {
        group: "example.com".into(),
        version: "v1".into(),
        plural: "widgets".into(),
        kind: "Widget".into(),
    }
}

fn namespace() -> Guarded {
    Guarded::Namespace {
        name: "shop".into(),
    }
}

const ALWAYS: &str =
    "forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Always";

#[test]
fn always_refuses_every_guarded_kind() {
    for guarded in [
        Guarded::Workload { replicas: Some(0) },
        Guarded::AlwaysOnly,
        namespace(),
        Guarded::CustomResourceDefinition(crd()),
    ] {
        assert_eq!(
            verdict(Some(&labels("Always")), false, guarded.clone()),
            Verdict::Refuse(ALWAYS.into()),
            "{guarded:?}"
        );
    }
}

#[test]
fn cascading_workloads_are_refused_while_replicas_remain() {
    let cascading = labels("Cascading");
    assert_eq!(
        verdict(Some(&cascading), false, Guarded::Workload { replicas: Some(2) }),
        Verdict::Refuse(
            "forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Cascading and replicas 2>0"
                .into()
        )
    );
    for replicas in [Some(0), None] {
        assert_eq!(
            verdict(Some(&cascading), false, Guarded::Workload { replicas }),
            Verdict::Allow
        );
    }
    // Services and Ingresses know Always only.
    assert_eq!(
        verdict(Some(&cascading), false, Guarded::AlwaysOnly),
        Verdict::Allow
    );
}

#[test]
fn cascading_namespaces_and_crds_need_a_count() {
    let cascading = labels("Cascading");
    assert_eq!(
        verdict(Some(&cascading), false, namespace()),
        Verdict::Count(namespace())
    );
    assert_eq!(
        verdict(
            Some(&cascading),
            false,
            Guarded::CustomResourceDefinition(crd())
        ),
        Verdict::Count(Guarded::CustomResourceDefinition(crd()))
    );
}

#[test]
fn namespace_counts_decide_in_openkruises_order() {
    let contents = |pods: Result<usize, &str>, claims: Result<usize, &str>| NamespaceContents {
        active_pods: pods.map_err(String::from),
        bound_claims: claims.map_err(String::from),
    };
    assert_eq!(namespace_refusal(&contents(Ok(0), Ok(0))), None);
    assert_eq!(
        namespace_refusal(&contents(Ok(3), Err("slow"))).as_deref(),
        Some(
            "forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Cascading and active pods 3>0"
        )
    );
    assert_eq!(
        namespace_refusal(&contents(Err("timed out after 3s"), Ok(1))).as_deref(),
        Some("forbidden by ResourcesProtectionDeletion for list pods error: timed out after 3s")
    );
    assert_eq!(
        namespace_refusal(&contents(Ok(0), Ok(2))).as_deref(),
        Some(
            "forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Cascading and \"Bound\" status pvc 2>0"
        )
    );
    assert_eq!(
        namespace_refusal(&contents(Ok(0), Err("forbidden"))).as_deref(),
        Some("forbidden by ResourcesProtectionDeletion for list pvc error: forbidden")
    );
}

#[test]
fn crd_counts_decide() {
    assert_eq!(custom_resources_refusal(&crd(), &Ok(0)), None);
    assert_eq!(
        custom_resources_refusal(&crd(), &Ok(4)).as_deref(),
        Some(
            "forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Cascading and active CRs 4>0"
        )
    );
    assert_eq!(
        custom_resources_refusal(&crd(), &Err("timed out after 3s".into())).as_deref(),
        Some("failed to list CRs of example.com/v1, Kind=WidgetList: timed out after 3s")
    );
}

#[test]
fn bound_claims() {
    assert!(is_bound_claim(Some("Bound"), false));
    assert!(!is_bound_claim(Some("Bound"), true));
    for phase in [None, Some("Pending"), Some("Lost")] {
        assert!(!is_bound_claim(phase, false), "{phase:?}");
    }
}

fn guarded() -> impl Strategy<Value = Guarded> {
    prop_oneof![
        proptest::option::of(-3i32..5).prop_map(|replicas| Guarded::Workload { replicas }),
        Just(Guarded::AlwaysOnly),
        Just(namespace()),
        Just(Guarded::CustomResourceDefinition(crd())),
    ]
}

proptest! {
    /// An object being deleted, or without the label's two values, is never held back nor
    /// counted; `Always` is refused without a count whatever the kind.
    #[test]
    fn only_the_two_values_of_a_live_object_protect(
        value in prop_oneof![Just("Always".to_string()), Just("Cascading".to_string()), "[A-Za-z]{0,10}"],
        deleting: bool,
        guarded in guarded(),
    ) {
        let decided = verdict(Some(&labels(&value)), deleting, guarded.clone());
        if deleting || (value != "Always" && value != "Cascading") {
            prop_assert_eq!(decided, Verdict::Allow);
        } else if value == "Always" {
            prop_assert_eq!(decided, Verdict::Refuse(ALWAYS.into()));
        } else if let Verdict::Count(counted) = decided {
            prop_assert_eq!(&counted, &guarded);
            let counted_kind = matches!(counted, Guarded::Namespace { .. } | Guarded::CustomResourceDefinition(_));
            prop_assert!(counted_kind);
        }
        prop_assert_eq!(verdict(None, deleting, guarded), Verdict::Allow);
    }
}
