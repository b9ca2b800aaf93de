//! Builders and fixtures shared by the SidecarSet validation tests, which live in `tests/`.

use super::*;
use crate::api::{
    ResourceExprPair, ResourcesExpr, ShareVolumePolicy, SidecarContainer,
    SidecarContainerUpgradeStrategy, SidecarSetBuilder, SidecarSetInjectionStrategy,
    SidecarSetPatchPodMetadata, SourceContainerNameSource, TransferEnvVar,
};
use k8s_openapi::api::core::v1::{
    EmptyDirVolumeSource, HostPathVolumeSource, PersistentVolumeClaimVolumeSource, Volume,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement;

mod conflicts;
mod fuzz;
mod rules;
mod table;

// ----- builders -----------------------------------------------------------------------

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn expression(key: &str, operator: &str, values: &[&str]) -> LabelSelectorRequirement {
    LabelSelectorRequirement {
        key: key.into(),
        operator: operator.into(),
        values: (!values.is_empty()).then(|| values.iter().map(|v| v.to_string()).collect()),
    }
}

fn with_expressions(
    mut selector: LabelSelector,
    expressions: Vec<LabelSelectorRequirement>,
) -> LabelSelector {
    selector.match_expressions = Some(expressions);
    selector
}

/// A sidecar as the defaulting webhook leaves it.
fn sidecar(name: &str) -> SidecarContainer {
    SidecarContainer {
        container: Container {
            name: name.into(),
            image: Some("test-image".into()),
            image_pull_policy: Some("IfNotPresent".into()),
            termination_message_policy: Some("File".into()),
            ..Default::default()
        },
        pod_inject_policy: Some(keys::BEFORE_APP_CONTAINER.into()),
        upgrade_strategy: Some(SidecarContainerUpgradeStrategy {
            upgrade_type: Some(keys::COLD_UPGRADE.into()),
            hot_upgrade_empty_image: None,
        }),
        share_volume_policy: Some(ShareVolumePolicy {
            type_: Some(keys::SHARE_VOLUME_DISABLED.into()),
        }),
        ..Default::default()
    }
}

fn native_sidecar(name: &str) -> SidecarContainer {
    let mut init = sidecar(name);
    init.container.restart_policy = Some("Always".into());
    init
}

fn strategy(type_: &str) -> Option<SidecarSetUpdateStrategy> {
    Some(SidecarSetUpdateStrategy {
        type_: Some(type_.into()),
        ..Default::default()
    })
}

/// The "valid base" of the V table: name `test-sidecarset`, selector `a=b`, one container
/// `test-sidecar`/`test-image`, updateStrategy `NotUpdate`.
fn base() -> SidecarSetBuilder {
    named("test-sidecarset")
}

fn named(name: &str) -> SidecarSetBuilder {
    SidecarSetBuilder::new(name)
        .selector(&[("a", "b")])
        .sidecar(sidecar("test-sidecar"))
        .update_strategy(strategy(keys::NOT_UPDATE))
}

fn canary(set: SidecarSetBuilder, base_name: &str) -> SidecarSetBuilder {
    set.annotation(keys::SIDECARSET_CANARY, "true")
        .annotation(keys::SIDECARSET_BASE, base_name)
}

fn empty_dir(name: &str) -> Volume {
    Volume {
        name: name.into(),
        empty_dir: Some(EmptyDirVolumeSource::default()),
        ..Default::default()
    }
}

fn host_path(name: &str, path: &str) -> Volume {
    Volume {
        name: name.into(),
        host_path: Some(HostPathVolumeSource {
            path: path.into(),
            type_: Some(String::new()),
        }),
        ..Default::default()
    }
}

fn pvc(name: &str, claim: &str) -> Volume {
    Volume {
        name: name.into(),
        persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
            claim_name: claim.into(),
            read_only: None,
        }),
        ..Default::default()
    }
}

fn patch(policy: &str, pairs: &[(&str, &str)]) -> SidecarSetPatchPodMetadata {
    SidecarSetPatchPodMetadata {
        annotations: Some(labels(pairs)),
        patch_policy: Some(policy.into()),
    }
}

fn revision(
    custom_version: Option<&str>,
    revision_name: Option<&str>,
    policy: &str,
) -> Option<SidecarSetInjectionStrategy> {
    Some(SidecarSetInjectionStrategy {
        paused: None,
        revision: Some(SidecarSetInjectRevision {
            custom_version: custom_version.map(Into::into),
            revision_name: revision_name.map(Into::into),
            policy: Some(policy.into()),
        }),
    })
}

fn resources_policy(regex: &str, cpu_limit: Option<&str>) -> Option<ResourcesPolicy> {
    Some(ResourcesPolicy {
        target_containers_mode: "sum".into(),
        target_containers_name_regex: Some(regex.into()),
        resources_expr: Some(ResourcesExpr {
            limits: cpu_limit.map(|cpu| ResourceExprPair {
                cpu: Some(cpu.into()),
                memory: None,
            }),
            requests: None,
        }),
    })
}

fn transfer_env(api_version: Option<&str>, field_path: &str) -> Option<Vec<TransferEnvVar>> {
    Some(vec![TransferEnvVar {
        source_container_name_from: Some(SourceContainerNameSource {
            field_ref: Some(ObjectFieldSelector {
                api_version: api_version.map(Into::into),
                field_path: field_path.into(),
            }),
        }),
        env_name: Some("PROXY".into()),
        ..Default::default()
    }])
}

fn others(sets: Vec<SidecarSet>) -> Vec<Arc<SidecarSet>> {
    sets.into_iter().map(Arc::new).collect()
}

/// The other SidecarSet of the conflict cases: `sidecarset1`, selector `a=b`.
fn other() -> SidecarSetBuilder {
    named("sidecarset1").containers(vec![sidecar("other-sidecar")])
}
