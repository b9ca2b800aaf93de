//! CloneSet `v1alpha1` (the working and storage version here) ↔ `v1beta1` (OpenKruise's main
//! branch, whose next release stores it), as its `cloneset_conversion.go`:
//!
//! - `updateStrategy.type` `ReCreate`, `InPlaceIfPossible`, `InPlaceOnly` ↔ `type: RollingUpdate`
//!   with that `rollingUpdate.podUpdatePolicy`; `OnDelete` stays; `partition`, `maxUnavailable`,
//!   `maxSurge`, `paused`, the priority and scatter strategies and `inPlaceUpdateStrategy` move
//!   under `rollingUpdate`;
//! - `scaleStrategy.disablePVCReuse` ↔ `enablePVCReuse`, inverted (reuse is v1alpha1's default and
//!   not v1beta1's);
//! - the label [`EXCLUDE_PREPARING_DELETE_LABEL`] ↔ `scaleStrategy.excludePreparingDelete`;
//! - the image pre-download annotations ↔ `inPlaceUpdateStrategy.imagePreDownload*`.
//!
//! Where OpenKruise's conversion drops or duplicates (an `OnDelete` strategy's settings, the
//! label and annotations kept beside the fields, `excludePreparingDelete` not written back), this
//! one keeps and moves, so that both directions round-trip: the cases that still do not are in
//! `docs/conversion.md`.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::Served;
use crate::api::cloneset::{
    CloneSet, CloneSetScaleStrategy, CloneSetSpec, CloneSetUpdateStrategy, InPlaceUpdateStrategy,
    RECREATE, v1beta1,
};

/// v1alpha1's `scaleStrategy.excludePreparingDelete`: the label set to `"true"`.
pub const EXCLUDE_PREPARING_DELETE_LABEL: &str =
    "apps.kruise.io/cloneset-scaling-exclude-preparing-delete";
/// v1alpha1's `inPlaceUpdateStrategy.imagePreDownloadParallelism`.
pub const IMAGE_PRE_DOWNLOAD_PARALLELISM: &str = "apps.kruise.io/image-predownload-parallelism";
/// v1alpha1's `inPlaceUpdateStrategy.imagePreDownloadTimeoutSeconds`.
pub const IMAGE_PRE_DOWNLOAD_TIMEOUT_SECONDS: &str =
    "apps.kruise.io/image-predownload-timeout-seconds";
/// v1alpha1's `inPlaceUpdateStrategy.imagePreDownloadMinUpdatedReadyPods`.
pub const IMAGE_PRE_DOWNLOAD_MIN_UPDATED_READY_PODS: &str =
    "apps.kruise.io/image-predownload-min-updated-ready-pods";

type Map = Option<BTreeMap<String, String>>;

/// Removes `key` from `map` and gives its value, if `parse` takes it (a value it does not take
/// stays where it is); an emptied map becomes `None`.
fn take<T>(map: &mut Map, key: &str, parse: impl FnOnce(&str) -> Option<T>) -> Option<T> {
    let value = parse(map.as_ref()?.get(key)?)?;
    if let Some(entries) = map {
        entries.remove(key);
        if entries.is_empty() {
            *map = None;
        }
    }
    Some(value)
}

/// Go's `intstr.Parse`: an integer if the text is one, else the text.
fn int_or_string(text: &str) -> Option<IntOrString> {
    (!text.is_empty()).then(|| match text.parse::<i32>() {
        Ok(n) => IntOrString::Int(n),
        Err(_) => IntOrString::String(text.to_string()),
    })
}

fn int32(text: &str) -> Option<i32> {
    text.parse().ok()
}

/// OpenKruise's `ConvertTo` (v1alpha1 → v1beta1), the label and annotations moved into fields.
pub fn to_v1beta1(old: CloneSet) -> v1beta1::CloneSet {
    let CloneSet {
        mut metadata,
        spec,
        status,
    } = old;
    let exclude_preparing_delete =
        take(&mut metadata.labels, EXCLUDE_PREPARING_DELETE_LABEL, |v| {
            (v == "true").then_some(true)
        });
    let annotations = &mut metadata.annotations;
    let parallelism = take(annotations, IMAGE_PRE_DOWNLOAD_PARALLELISM, int_or_string);
    let timeout = take(annotations, IMAGE_PRE_DOWNLOAD_TIMEOUT_SECONDS, int32);
    let min_pods = take(
        annotations,
        IMAGE_PRE_DOWNLOAD_MIN_UPDATED_READY_PODS,
        int32,
    );

    let strategy = spec.update_strategy;
    let (type_, pod_update_policy) = match strategy.type_.as_deref() {
        None | Some("") => (None, None),
        Some(v1beta1::ON_DELETE) => (Some(v1beta1::ON_DELETE.to_string()), None),
        // ReCreate, InPlaceIfPossible, InPlaceOnly; an unknown type too, for the validator to
        // refuse by name.
        Some(policy) => (
            Some(v1beta1::ROLLING_UPDATE.to_string()),
            Some(policy.to_string()),
        ),
    };
    let mut in_place = strategy
        .in_place_update_strategy
        .map(|s| v1beta1::InPlaceUpdateStrategy {
            grace_period_seconds: s.grace_period_seconds,
            ..Default::default()
        });
    if parallelism.is_some() || timeout.is_some() || min_pods.is_some() {
        let in_place = in_place.get_or_insert_default();
        in_place.image_pre_download_parallelism = parallelism;
        in_place.image_pre_download_timeout_seconds = timeout;
        in_place.image_pre_download_min_updated_ready_pods = min_pods;
    }
    let rolling = v1beta1::RollingUpdateCloneSetStrategy {
        partition: strategy.partition,
        max_unavailable: strategy.max_unavailable,
        max_surge: strategy.max_surge,
        pod_update_policy,
        paused: strategy.paused,
        priority_strategy: strategy.priority_strategy,
        scatter_strategy: strategy.scatter_strategy,
        in_place_update_strategy: in_place,
    };
    let scale = spec.scale_strategy;
    v1beta1::CloneSet {
        metadata,
        spec: v1beta1::CloneSetSpec {
            replicas: spec.replicas,
            selector: spec.selector,
            template: spec.template,
            volume_claim_templates: spec.volume_claim_templates,
            scale_strategy: v1beta1::CloneSetScaleStrategy {
                pods_to_delete: scale.pods_to_delete,
                max_unavailable: scale.max_unavailable,
                // Reuse unless disabled; v1beta1 spells the default (no reuse) by leaving it out.
                enable_pvc_reuse: (scale.disable_pvc_reuse != Some(true)).then_some(true),
                exclude_preparing_delete,
            },
            update_strategy: v1beta1::CloneSetUpdateStrategy {
                type_,
                rolling_update: (rolling != Default::default()).then_some(rolling),
            },
            revision_history_limit: spec.revision_history_limit,
            min_ready_seconds: spec.min_ready_seconds,
            lifecycle: spec.lifecycle,
            progress_deadline_seconds: spec.progress_deadline_seconds,
        },
        status,
    }
}

/// OpenKruise's `ConvertFrom` (v1beta1 → v1alpha1), `excludePreparingDelete` written back as the
/// label.
pub fn to_v1alpha1(new: v1beta1::CloneSet) -> CloneSet {
    let v1beta1::CloneSet {
        mut metadata,
        spec,
        status,
    } = new;
    let scale = spec.scale_strategy;
    match scale.exclude_preparing_delete {
        Some(true) => {
            metadata.labels.get_or_insert_default().insert(
                EXCLUDE_PREPARING_DELETE_LABEL.to_string(),
                "true".to_string(),
            );
        }
        Some(false) => {
            take(&mut metadata.labels, EXCLUDE_PREPARING_DELETE_LABEL, |_| {
                Some(())
            });
        }
        None => {}
    }
    let strategy = spec.update_strategy;
    let rolling = strategy.rolling_update.unwrap_or_default();
    let type_ = match (strategy.type_.as_deref(), rolling.pod_update_policy) {
        (Some(v1beta1::ON_DELETE), _) => Some(v1beta1::ON_DELETE.to_string()),
        (None | Some(""), None) => None,
        (None | Some("") | Some(v1beta1::ROLLING_UPDATE), Some(policy)) => Some(policy),
        (Some(v1beta1::ROLLING_UPDATE), None) => Some(RECREATE.to_string()),
        // An unknown type, for the validator to refuse by name.
        (Some(other), _) => Some(other.to_string()),
    };
    let mut in_place_update_strategy = None;
    if let Some(in_place) = rolling.in_place_update_strategy {
        let annotations = metadata.annotations.get_or_insert_default();
        let mut annotate = |key: &str, value: Option<String>| {
            if let Some(value) = value {
                annotations.insert(key.to_string(), value);
            }
        };
        let downloads = in_place.image_pre_download_parallelism.is_some()
            || in_place.image_pre_download_timeout_seconds.is_some()
            || in_place.image_pre_download_min_updated_ready_pods.is_some();
        annotate(
            IMAGE_PRE_DOWNLOAD_PARALLELISM,
            in_place.image_pre_download_parallelism.map(|p| match p {
                IntOrString::Int(n) => n.to_string(),
                IntOrString::String(s) => s,
            }),
        );
        annotate(
            IMAGE_PRE_DOWNLOAD_TIMEOUT_SECONDS,
            in_place
                .image_pre_download_timeout_seconds
                .map(|n| n.to_string()),
        );
        annotate(
            IMAGE_PRE_DOWNLOAD_MIN_UPDATED_READY_PODS,
            in_place
                .image_pre_download_min_updated_ready_pods
                .map(|n| n.to_string()),
        );
        if metadata
            .annotations
            .as_ref()
            .is_some_and(BTreeMap::is_empty)
        {
            metadata.annotations = None;
        }
        // The downloads alone were an `inPlaceUpdateStrategy` only because v1beta1 nests them.
        if in_place.grace_period_seconds.is_some() || !downloads {
            in_place_update_strategy = Some(InPlaceUpdateStrategy {
                grace_period_seconds: in_place.grace_period_seconds,
            });
        }
    }
    CloneSet {
        metadata,
        spec: CloneSetSpec {
            replicas: spec.replicas,
            selector: spec.selector,
            template: spec.template,
            volume_claim_templates: spec.volume_claim_templates,
            scale_strategy: CloneSetScaleStrategy {
                pods_to_delete: scale.pods_to_delete,
                max_unavailable: scale.max_unavailable,
                disable_pvc_reuse: (scale.enable_pvc_reuse != Some(true)).then_some(true),
            },
            update_strategy: CloneSetUpdateStrategy {
                type_,
                partition: rolling.partition,
                max_unavailable: rolling.max_unavailable,
                max_surge: rolling.max_surge,
                paused: rolling.paused,
                priority_strategy: rolling.priority_strategy,
                scatter_strategy: rolling.scatter_strategy,
                in_place_update_strategy,
            },
            revision_history_limit: spec.revision_history_limit,
            min_ready_seconds: spec.min_ready_seconds,
            lifecycle: spec.lifecycle,
            progress_deadline_seconds: spec.progress_deadline_seconds,
        },
        status,
    }
}

impl Served for v1beta1::CloneSet {
    type Working = CloneSet;
    fn into_working(self) -> CloneSet {
        to_v1alpha1(self)
    }
    fn from_working(working: CloneSet) -> Self {
        to_v1beta1(working)
    }
}

#[cfg(test)]
mod tests;
