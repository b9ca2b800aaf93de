//! SidecarSet injection into a pod at CREATE, with OpenKruise's semantics.
//!
//! The entry point [`inject_sidecars`] mutates an owned pod and reports whether anything changed.
//! Everything it looks at on the pod (shared mounts, transferEnv sources) is read from the pod as
//! it was *before* any SidecarSet of this request was applied: sidecars added by one SidecarSet are
//! invisible to the next, exactly as upstream.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Container, LocalObjectReference, Pod, Volume};

use super::build::{AppContainers, NameSet, build_sidecar, hot_upgrade_pair};
use super::prepared::{KnownJson, PreparedSidecarSets, upgrade_spec};
use super::resources_policy::sidecar_resources;
use super::revision::{self, HistoryRevision, InjectionRevisions, Pick, PickError};
use crate::api::{SidecarContainer, SidecarSet, keys};
use crate::k8s::history::injection_revision_not_found;
use crate::k8s::selector::{self, Labels, SelectorError};
use crate::podmarks::sidecarset::{
    UpgradeSpec, WrittenAnnotation, hash_annotation, injected_list, parse_upgrade_specs,
    prepared_hash_annotation, working_containers, working_containers_annotation,
};

/// Everything injection needs besides the pod. Borrowed, so a request never copies the catalogue.
pub struct InjectionContext<'a> {
    /// SidecarSets in catalogue order (namespace-pinned first, then by name).
    pub sidecarsets: &'a [Arc<SidecarSet>],
    /// Labels of the pod's Namespace object, if the Namespace is known.
    pub namespace_labels: Option<&'a Labels>,
    /// Admission time as RFC 3339 UTC with second precision, written into the hash annotations.
    pub now: &'a str,
    /// OpenKruise's `EnableSortSidecarContainerByName` gate: sort injected containers by name.
    pub sort_sidecars_by_name: bool,
    /// What the SidecarSets that name a revision to inject resolved to; `None` without a
    /// history, where every such revision is missing.
    pub revisions: Option<&'a InjectionRevisions>,
    /// Uniform in [0, 1): the chance under `Partial` ([`revision::pick`]); seeded in tests.
    pub draw: &'a dyn Fn() -> f64,
}

/// The draw of production: the thread's random source.
pub fn random_draw() -> f64 {
    fastrand::f64()
}

/// Why a pod cannot be injected. Each message names the object and field at fault.
#[derive(Debug, thiserror::Error)]
pub enum InjectError {
    #[error("sidecarset {sidecarset}: {source}")]
    Selector {
        sidecarset: String,
        source: SelectorError,
    },
    #[error("pod({pod}) invalid annotations[{key}] value {value}, unmarshal failed: {message}")]
    InvalidHashAnnotation {
        pod: String,
        key: &'static str,
        value: String,
        message: String,
    },
    #[error(
        "sidecarset {sidecarset}: spec.patchPodMetadata: cannot merge annotation {key}: {message}"
    )]
    PatchPodMetadata {
        sidecarset: String,
        key: String,
        message: String,
    },
    #[error("sidecarset {sidecarset}: {field}: {message}")]
    ResourcesPolicy {
        sidecarset: String,
        /// `spec.containers[i].resourcesPolicy` or `spec.initContainers[i].resourcesPolicy`.
        field: String,
        message: String,
    },
    /// The revision `injectionStrategy.revision` names cannot be injected: OpenKruise's
    /// lookup error, as its webhook answers.
    #[error("{0}")]
    Revision(String),
    #[error("sidecarset {sidecarset}: spec.updateStrategy.partition: {message}")]
    Partition { sidecarset: String, message: String },
}

/// Is the pod still running or about to run? Finished and terminating pods are left alone.
pub fn is_active(pod: &Pod) -> bool {
    crate::podmarks::PodView::is_active(pod)
}

/// Namespace used for matching: the pod's, or `default` when the request left it empty.
pub fn pod_namespace(pod: &Pod) -> &str {
    match pod.metadata.namespace.as_deref() {
        Some(ns) if !ns.is_empty() => ns,
        _ => "default",
    }
}

/// The SidecarSets that apply to `pod`, in catalogue order, canary bases removed.
pub fn matching_sidecarsets<'a>(
    pod: &Pod,
    ctx: &InjectionContext<'a>,
) -> Result<Vec<&'a SidecarSet>, InjectError> {
    let mut kept = Vec::new();
    for set in ctx.sidecarsets {
        if set.injection_paused() || !namespace_matches(set, ctx.namespace_labels)? {
            continue;
        }
        let Some(pod_selector) = &set.spec.selector else {
            continue;
        };
        if selector::is_empty(pod_selector) {
            continue;
        }
        let selected =
            selector::matches(pod_selector, pod.metadata.labels.as_ref(), "spec.selector")
                .map_err(|source| InjectError::Selector {
                    sidecarset: set.name().to_string(),
                    source,
                })?;
        if !selected {
            continue;
        }
        kept.push(suitable_revision(set, pod, ctx)?);
    }
    let bases: NameSet<'_> = kept.iter().filter_map(|s| s.canary_base()).collect();
    kept.retain(|s| !bases.contains(s.name()));
    Ok(kept)
}

/// A `namespaceSelector` needs the Namespace's labels to be known; they carry the name label
/// `kubernetes.io/metadata.name` even where a pre-1.21 apiserver left it out
/// ([`crate::k8s::selector::namespace_labels`]), so a set pinned to one namespace (v1alpha1's
/// `spec.namespace`, converted) matches it there too.
pub fn namespace_matches(
    set: &SidecarSet,
    namespace_labels: Option<&Labels>,
) -> Result<bool, InjectError> {
    let Some(namespace_selector) = &set.spec.namespace_selector else {
        return Ok(true);
    };
    let Some(labels) = namespace_labels else {
        return Ok(false);
    };
    selector::matches(namespace_selector, Some(labels), "spec.namespaceSelector").map_err(
        |source| InjectError::Selector {
            sidecarset: set.name().to_string(),
            source,
        },
    )
}

/// The set a new pod gets of `set`: itself, or the revision its `injectionStrategy.revision`
/// names (OpenKruise's `getSuitableRevisionSidecarSet` at CREATE). A revision that cannot be
/// found refuses the pod, whichever the pod would have got.
fn suitable_revision<'a>(
    set: &'a Arc<SidecarSet>,
    pod: &Pod,
    ctx: &InjectionContext<'a>,
) -> Result<&'a SidecarSet, InjectError> {
    let Some(requested) = revision::requested(set) else {
        return Ok(set);
    };
    let restored = match ctx.revisions.and_then(|r| r.get(set.name())) {
        Some(HistoryRevision::Restored(restored)) => restored,
        Some(HistoryRevision::Unresolved(message) | HistoryRevision::Pending(message)) => {
            return Err(InjectError::Revision(message.clone()));
        }
        None => {
            let message = injection_revision_not_found(requested, set.name());
            return Err(InjectError::Revision(message));
        }
    };
    let picked = revision::pick(set, requested, pod.metadata.labels.as_ref(), ctx.draw);
    match picked {
        Ok(Pick::History) => Ok(restored),
        Ok(Pick::Latest) => Ok(set),
        Err(PickError::Selector(source)) => Err(InjectError::Selector {
            sidecarset: set.name().to_string(),
            source,
        }),
        Err(PickError::Partition(message)) => Err(InjectError::Partition {
            sidecarset: set.name().to_string(),
            message,
        }),
    }
}

/// Injects every matching SidecarSet into `pod`. Returns whether the pod changed.
pub fn inject_sidecars(pod: &mut Pod, ctx: &InjectionContext<'_>) -> Result<bool, InjectError> {
    inject_prepared(pod, ctx, None).map(|injection| injection.changed)
}

/// What [`inject_prepared`] did to a pod.
#[derive(Debug, Default)]
pub struct Injection<'a> {
    /// Whether the pod changed.
    pub changed: bool,
    /// JSON text already written for values put into the pod, for the patch.
    pub known: KnownJson<'a>,
}

/// [`inject_sidecars`] using the work `prepared` when the catalogue was built (`None`: every
/// value written from its typed form, the reference): the same pod, and the JSON text it already
/// holds for what it added.
pub fn inject_prepared<'a>(
    pod: &mut Pod,
    ctx: &InjectionContext<'a>,
    prepared: Option<&'a PreparedSidecarSets>,
) -> Result<Injection<'a>, InjectError> {
    if !is_active(pod) {
        return Ok(Injection::default());
    }
    let sets = matching_sidecarsets(pod, ctx)?;
    if sets.is_empty() {
        return Ok(Injection::default());
    }
    let metadata_changed = apply_patch_pod_metadata(pod, &sets)?;
    let mut known = KnownJson::default();
    let plan = plan_injection(pod, &sets, ctx.now, prepared, &mut known)?;
    if plan.containers.is_empty() && plan.init_containers.is_empty() {
        return Ok(Injection {
            changed: metadata_changed,
            known: KnownJson::default(),
        });
    }
    plan.apply(pod, ctx.sort_sidecars_by_name);
    Ok(Injection {
        changed: true,
        known,
    })
}

// ---------------------------------------------------------------------------------------------
// patchPodMetadata

pub fn apply_patch_pod_metadata(pod: &mut Pod, sets: &[&SidecarSet]) -> Result<bool, InjectError> {
    let mut changed = false;
    for set in sets {
        for patch in set.spec.patch_pod_metadata.iter().flatten() {
            let policy = patch
                .patch_policy
                .as_deref()
                .unwrap_or(keys::PATCH_POLICY_RETAIN);
            for (key, value) in patch.annotations.iter().flatten() {
                let annotations = pod.metadata.annotations.get_or_insert_with(BTreeMap::new);
                let existing = annotations.get(key);
                let new_value =
                    match policy {
                        "" | keys::PATCH_POLICY_RETAIN if existing.is_none() => value.clone(),
                        keys::PATCH_POLICY_OVERWRITE => value.clone(),
                        keys::PATCH_POLICY_MERGE_PATCH_JSON => match existing {
                            Some(old) if !old.is_empty() => merge_json_annotation(old, value)
                                .map_err(|message| InjectError::PatchPodMetadata {
                                    sidecarset: set.name().to_string(),
                                    key: key.clone(),
                                    message,
                                })?,
                            // The first value is stored verbatim, as upstream does.
                            _ => value.clone(),
                        },
                        _ => continue,
                    };
                if existing != Some(&new_value) {
                    annotations.insert(key.clone(), new_value);
                    changed = true;
                }
            }
        }
    }
    Ok(changed)
}

/// RFC 7386 merge of two JSON documents held in annotation strings, re-serialized compactly with
/// sorted keys.
fn merge_json_annotation(existing: &str, patch: &str) -> Result<String, String> {
    let mut target: serde_json::Value =
        serde_json::from_str(existing).map_err(|e| format!("existing value is not JSON: {e}"))?;
    let patch: serde_json::Value =
        serde_json::from_str(patch).map_err(|e| format!("patch value is not JSON: {e}"))?;
    json_patch::merge(&mut target, &patch);
    serde_json::to_string(&target).map_err(|e| e.to_string())
}

// ---------------------------------------------------------------------------------------------
// Planning: what each SidecarSet contributes, computed against the untouched pod.

#[derive(Default)]
struct InjectionPlan {
    containers: Vec<(Container, bool)>,
    init_containers: Vec<(Container, bool)>,
    volumes: Vec<Volume>,
    image_pull_secrets: Vec<LocalObjectReference>,
    annotations: BTreeMap<String, String>,
}

impl InjectionPlan {
    /// Adds what `sidecar` (the `index`th of its list) becomes in the pod (two copies for a hot
    /// upgrade), each with its placement, to the init containers or the containers, collecting
    /// the volumes it needs. Returns whether it was injected for a hot upgrade.
    fn add_sidecar(
        &mut self,
        (init_container, index): (bool, usize),
        sidecar: &SidecarContainer,
        set: &SidecarSet,
        app: &AppContainers<'_>,
        sidecar_names: &HashSet<&str>,
        hot_upgrade_working: &mut BTreeMap<String, String>,
    ) -> Result<bool, InjectError> {
        // Only a native sidecar keeps running, so only it can be hot-upgraded among init containers.
        let hot_upgrade =
            sidecar.is_hot_upgrade() && (!init_container || sidecar.is_native_sidecar());
        let mut built = build_sidecar(sidecar, set, app, &mut self.volumes);
        if let Some(policy) = &sidecar.resources_policy {
            // Computed before a hot upgrade copies the container: both copies get them.
            let resources = sidecar_resources(policy, app.pod(), sidecar_names).map_err(|e| {
                let list = if init_container {
                    "initContainers"
                } else {
                    "containers"
                };
                InjectError::ResourcesPolicy {
                    sidecarset: set.name().to_string(),
                    field: format!("spec.{list}[{index}].resourcesPolicy"),
                    message: e.0,
                }
            })?;
            built.resources = Some(resources);
        }
        let before = goes_before(sidecar);
        let target = if init_container {
            &mut self.init_containers
        } else {
            &mut self.containers
        };
        if hot_upgrade {
            let pair = hot_upgrade_pair(built, sidecar, &mut self.annotations, hot_upgrade_working);
            target.extend(pair.into_iter().map(|copy| (copy, before)));
        } else {
            target.push((built, before));
        }
        Ok(hot_upgrade)
    }
}

/// Where a sidecar goes when the pod has no container of the same name.
fn goes_before(sidecar: &SidecarContainer) -> bool {
    sidecar.pod_inject_policy() == keys::BEFORE_APP_CONTAINER
}

fn plan_injection<'a>(
    pod: &Pod,
    sets: &[&'a SidecarSet],
    now: &str,
    prepared: Option<&'a PreparedSidecarSets>,
    known: &mut KnownJson<'a>,
) -> Result<InjectionPlan, InjectError> {
    let annotation = |key: &str| crate::podmarks::sidecarset::annotation(pod, key);
    // Only sets with a container get an entry in the hash annotations.
    let injecting: Vec<&SidecarSet> = sets
        .iter()
        .copied()
        .filter(|set| !set.init_containers().is_empty() || !set.containers().is_empty())
        .collect();
    let mut plan = InjectionPlan::default();
    match prepared.and_then(|prepared| prepared_hash_annotations(pod, &injecting, prepared, now)) {
        Some([hash, without_image]) => {
            for (key, written) in [
                (keys::SIDECARSET_HASH, hash),
                (keys::SIDECARSET_HASH_WITHOUT_IMAGE, without_image),
            ] {
                known.strings.push((written.value.clone(), written.literal));
                plan.annotations.insert(key.to_string(), written.value);
            }
        }
        None => {
            let [hash, without_image] = typed_hash_annotations(pod, &injecting, now)?;
            plan.annotations
                .insert(keys::SIDECARSET_HASH.to_string(), hash);
            plan.annotations.insert(
                keys::SIDECARSET_HASH_WITHOUT_IMAGE.to_string(),
                without_image,
            );
        }
    }
    let mut hot_upgrade_working = working_containers(pod);

    let app = AppContainers::new(pod);
    // No container of a matched SidecarSet is a target of a resourcesPolicy.
    let sidecar_names: HashSet<&str> = sets
        .iter()
        .flat_map(|set| set.init_containers().iter().chain(set.containers()))
        .map(SidecarContainer::name)
        .collect();
    let mut hot_upgrade_injected = false;
    for set in sets {
        for (init_container, list) in [(true, set.init_containers()), (false, set.containers())] {
            for (index, sidecar) in list.iter().enumerate() {
                hot_upgrade_injected |= plan.add_sidecar(
                    (init_container, index),
                    sidecar,
                    set,
                    &app,
                    &sidecar_names,
                    &mut hot_upgrade_working,
                )?;
            }
        }
        plan.image_pull_secrets
            .extend(set.spec.image_pull_secrets.iter().flatten().cloned());
        if let Some(prepared) = prepared.and_then(|prepared| prepared.get(set)) {
            known.add_volumes(set, prepared);
        }
    }

    plan.annotations.insert(
        keys::SIDECARSET_INJECTED_LIST.to_string(),
        injected_list(
            annotation(keys::SIDECARSET_INJECTED_LIST),
            sets.iter().map(|set| set.name()),
        ),
    );
    if hot_upgrade_injected {
        plan.annotations.insert(
            keys::SIDECARSET_WORKING_HOTUPGRADE_CONTAINER.to_string(),
            working_containers_annotation(&hot_upgrade_working),
        );
    }
    Ok(plan)
}

/// The hash annotations of a pod that carries none yet, from the entries prepared for the
/// catalogue; `None` when the typed path must write them (the pod carries one, or a SidecarSet
/// was not prepared).
fn prepared_hash_annotations(
    pod: &Pod,
    injecting: &[&SidecarSet],
    prepared: &PreparedSidecarSets,
    now: &str,
) -> Option<[WrittenAnnotation; 2]> {
    let annotation = |key: &str| crate::podmarks::sidecarset::annotation(pod, key);
    if annotation(keys::SIDECARSET_HASH).is_some()
        || annotation(keys::SIDECARSET_HASH_WITHOUT_IMAGE).is_some()
    {
        return None;
    }
    let mut hash = Vec::with_capacity(injecting.len());
    let mut without_image = Vec::with_capacity(injecting.len());
    for set in injecting {
        let prepared = prepared.get(set)?;
        hash.push(prepared.hash.as_ref()?);
        without_image.push(prepared.hash_without_image.as_ref()?);
    }
    hash.sort_by(|a, b| a.name().cmp(b.name()));
    without_image.sort_by(|a, b| a.name().cmp(b.name()));
    Some([
        prepared_hash_annotation(&hash, now)?,
        prepared_hash_annotation(&without_image, now)?,
    ])
}

/// The hash annotations written from their typed entries: those the pod carries, updated with
/// the entries of the SidecarSets injected now. The reference for the prepared path.
fn typed_hash_annotations(
    pod: &Pod,
    injecting: &[&SidecarSet],
    now: &str,
) -> Result<[String; 2], InjectError> {
    // Only needed for an error message.
    let pod_id = || {
        let name = pod.metadata.name.as_deref();
        let name = name.or(pod.metadata.generate_name.as_deref()).unwrap_or("");
        format!("{}/{name}", pod_namespace(pod))
    };
    let parse_hashes = |key: &'static str| match crate::podmarks::sidecarset::annotation(pod, key) {
        None => Ok(BTreeMap::new()),
        Some(value) => {
            parse_upgrade_specs(value).map_err(|message| InjectError::InvalidHashAnnotation {
                pod: pod_id(),
                key,
                value: value.to_string(),
                message,
            })
        }
    };
    let mut hashes = parse_hashes(keys::SIDECARSET_HASH)?;
    let mut hashes_without_image = parse_hashes(keys::SIDECARSET_HASH_WITHOUT_IMAGE)?;
    for set in injecting {
        record_upgrade_spec(
            &mut hashes,
            upgrade_spec(set, keys::SIDECARSET_HASH, Some(now)),
        );
        record_upgrade_spec(
            &mut hashes_without_image,
            upgrade_spec(set, keys::SIDECARSET_HASH_WITHOUT_IMAGE, Some(now)),
        );
    }
    Ok([
        hash_annotation(&hashes),
        hash_annotation(&hashes_without_image),
    ])
}

/// Stores the entry of one SidecarSet. An entry that differs only by its timestamp is kept as it
/// is, so that running the webhook again on its own output (reinvocation) changes nothing.
fn record_upgrade_spec(specs: &mut BTreeMap<String, UpgradeSpec>, spec: UpgradeSpec) {
    if let Some(existing) = specs.get(&spec.sidecar_set_name) {
        let same_but_time = UpgradeSpec {
            update_timestamp: existing.update_timestamp.clone(),
            ..spec.clone()
        };
        if existing.update_timestamp.is_some() && same_but_time == *existing {
            return;
        }
    }
    specs.insert(spec.sidecar_set_name.clone(), spec);
}

// ---------------------------------------------------------------------------------------------
// Applying the plan

impl InjectionPlan {
    fn apply(mut self, pod: &mut Pod, sort_sidecars_by_name: bool) {
        let spec = pod.spec.get_or_insert_with(Default::default);

        self.init_containers.sort_by(|a, b| a.0.name.cmp(&b.0.name));
        if !self.init_containers.is_empty() {
            let existing = spec.init_containers.take().unwrap_or_default();
            spec.init_containers = Some(merge_containers(existing, self.init_containers));
        }
        if sort_sidecars_by_name {
            self.containers.sort_by(|a, b| a.0.name.cmp(&b.0.name));
        }
        if !self.containers.is_empty() {
            let existing = std::mem::take(&mut spec.containers);
            spec.containers = merge_containers(existing, self.containers);
        }

        // Already without the names the pod or an earlier SidecarSet holds (see build_sidecar).
        if !self.volumes.is_empty() {
            let volumes = spec.volumes.get_or_insert_with(Vec::new);
            // A Volume is a 3 KiB struct: grow the list by exactly what is added.
            volumes.reserve_exact(self.volumes.len());
            volumes.extend(self.volumes);
        }

        if let Some(secrets) =
            merge_pull_secrets(spec.image_pull_secrets.take(), self.image_pull_secrets)
        {
            spec.image_pull_secrets = Some(secrets);
        }

        pod.metadata
            .annotations
            .get_or_insert_with(BTreeMap::new)
            .extend(self.annotations);
    }
}

/// Same-name pod containers are replaced in place; the rest go before or after the pod's own.
fn merge_containers(
    mut existing: Vec<Container>,
    sidecars: Vec<(Container, bool)>,
) -> Vec<Container> {
    let mut before = Vec::new();
    let own = existing.len();
    existing.reserve(sidecars.len());
    for (sidecar, goes_before) in sidecars {
        // Only the pod's own containers are replaced, never a sidecar added just before.
        if let Some(slot) = existing[..own].iter_mut().find(|c| c.name == sidecar.name) {
            *slot = sidecar;
        } else if goes_before {
            before.push(sidecar);
        } else {
            existing.push(sidecar);
        }
    }
    if !before.is_empty() {
        existing.splice(0..0, before);
    }
    existing
}

/// The pod's secrets deduplicated by name, then the SidecarSets' new ones. `None` keeps an absent
/// field absent.
fn merge_pull_secrets(
    pod_secrets: Option<Vec<LocalObjectReference>>,
    added: Vec<LocalObjectReference>,
) -> Option<Vec<LocalObjectReference>> {
    if pod_secrets.is_none() && added.is_empty() {
        return None;
    }
    let mut seen = HashSet::new();
    let merged: Vec<LocalObjectReference> = pod_secrets
        .into_iter()
        .flatten()
        .chain(added)
        .filter(|s| seen.insert(s.name.clone()))
        .collect();
    Some(merged)
}
