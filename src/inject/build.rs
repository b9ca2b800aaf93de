//! What one `SidecarContainer` becomes in a pod: the container itself (env, shared mounts and
//! devices, transferred env, SidecarSet volumes), or the two copies of a hot-upgrade sidecar.
//! Everything is read from the pod as it was before this request's injection.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::LazyLock;

use k8s_openapi::api::core::v1::{
    Container, EnvVar, EnvVarSource, ObjectFieldSelector, Pod, Volume, VolumeDevice, VolumeMount,
};
use regex::Regex;

use crate::api::{SidecarContainer, SidecarSet, TransferEnvVar, keys};
use crate::k8s::names::{is_qualified_name, parse_subscripted_field_path};
use crate::podmarks::sidecarset::hot_upgrade_version_annotations;

/// The pod's own containers as sources for shared mounts and transferred env.
pub(super) struct AppContainers<'p> {
    pod: &'p Pod,
    /// `spec.containers` that were not themselves injected (no `IS_INJECTED=true`).
    sharing: Vec<&'p Container>,
}

impl<'p> AppContainers<'p> {
    pub(super) fn new(pod: &'p Pod) -> Self {
        let containers = pod
            .spec
            .as_ref()
            .map(|s| s.containers.as_slice())
            .unwrap_or(&[]);
        let sharing = containers.iter().filter(|c| !was_injected(c)).collect();
        AppContainers { pod, sharing }
    }

    /// The pod as it was before this request's injection.
    pub(super) fn pod(&self) -> &'p Pod {
        self.pod
    }

    /// Whether the pod declares a volume of this name (the pod's own volume wins).
    fn has_volume(&self, name: &str) -> bool {
        let volumes = self.pod.spec.as_ref().and_then(|s| s.volumes.as_deref());
        volumes.unwrap_or(&[]).iter().any(|v| v.name == name)
    }

    /// The `transferEnv` source `container/name`: the last literal env entry of that name in the
    /// last `spec.containers` entry of that name, as OpenKruise's map-building does.
    fn env_source(&self, container: &str, name: &str) -> Option<&'p EnvVar> {
        let containers = self.pod.spec.as_ref()?.containers.iter();
        containers
            .rev()
            .filter(|c| c.name == container)
            .find_map(|c| c.env.iter().flatten().rev().find(|e| e.name == name))
    }
}

/// A previously injected sidecar carries `IS_INJECTED=true` (its first such env entry decides).
fn was_injected(container: &Container) -> bool {
    container
        .env
        .iter()
        .flatten()
        .find(|e| e.name == keys::ENV_IS_INJECTED)
        .is_some_and(|e| e.value.as_deref() == Some("true"))
}

static SUBPATH_VAR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\$\(([-._a-zA-Z][-._a-zA-Z0-9]*)\)").expect("static regex compiles")
});

/// Builds the container that `sidecar` becomes in `pod`, collecting the SidecarSet volumes it
/// references into `volumes`.
pub(super) fn build_sidecar(
    sidecar: &SidecarContainer,
    set: &SidecarSet,
    app: &AppContainers<'_>,
    volumes: &mut Vec<Volume>,
) -> Container {
    let mut container = sidecar.container.clone();
    // OpenKruise's Container.Resources is a struct, so every injected container carries at least
    // `resources: {}` whatever the SidecarSet says (spec §7.7, §13.0).
    container.resources.get_or_insert_with(Default::default);

    // Shared mounts and the env their subPathExpr needs, borrowed from the pod until kept.
    let mut shared_mounts: Vec<&VolumeMount> = Vec::new();
    let mut subpath_envs: Vec<&EnvVar> = Vec::new();
    if sidecar.shares_volumes() {
        for app_container in &app.sharing {
            for mount in app_container.volume_mounts.iter().flatten() {
                shared_mounts.push(mount);
                for var in mount
                    .sub_path_expr
                    .as_deref()
                    .map(|expr| SUBPATH_VAR.captures_iter(expr))
                    .into_iter()
                    .flatten()
                {
                    if let Some(env) = app_container
                        .env
                        .iter()
                        .flatten()
                        .find(|e| e.name == var[1])
                    {
                        subpath_envs.push(env);
                    }
                }
            }
        }
    }
    let transferred = transfer_env(sidecar.transfer_env.as_deref().unwrap_or(&[]), app);

    // Volumes for the sidecar's own mounts, then its own devices. The pod's own volume of the
    // same name wins, and so does one collected earlier, so neither is copied again.
    let own_volume_names = container
        .volume_mounts
        .iter()
        .flatten()
        .map(|m| m.name.as_str())
        .chain(
            container
                .volume_devices
                .iter()
                .flatten()
                .map(|d| d.name.as_str()),
        );
    for name in own_volume_names {
        if app.has_volume(name) || volumes.iter().any(|v| v.name == name) {
            continue;
        }
        if let Some(volume) = set.volumes().iter().find(|v| v.name == name) {
            volumes.push(volume.clone());
        }
    }

    // Mounts: own first, then shared ones whose path is still free.
    if !shared_mounts.is_empty() {
        let mut taken: NameSet<'_> = mount_paths(&container)
            .chain(device_paths(&container))
            .collect();
        let added: Vec<VolumeMount> = shared_mounts
            .into_iter()
            .filter(|m| taken.insert(&m.mount_path))
            .cloned()
            .collect();
        container
            .volume_mounts
            .get_or_insert_with(Vec::new)
            .extend(added);
    }

    // Env: own, IS_INJECTED, then transferred and subPathExpr env whose names are still free.
    let added: Vec<EnvVar> = {
        let transferred_names: NameSet<'_> = transferred.iter().map(|e| e.name.as_str()).collect();
        let mut present: NameSet<'_> = container
            .env
            .iter()
            .flatten()
            .map(|e| e.name.as_str())
            .chain([keys::ENV_IS_INJECTED])
            .collect();
        let extra = subpath_envs
            .into_iter()
            .filter(|e| !transferred_names.contains(e.name.as_str()));
        transferred
            .into_iter()
            .chain(extra)
            .filter(|e| present.insert(&e.name))
            .cloned()
            .collect()
    };
    let env = container.env.get_or_insert_with(Vec::new);
    env.reserve(1 + added.len());
    env.push(literal_env(keys::ENV_IS_INJECTED, "true"));
    env.extend(added);

    // Devices: own first, then shared ones whose path is still free.
    if sidecar.shares_volume_devices() {
        let mut taken: NameSet<'_> = device_paths(&container)
            .chain(mount_paths(&container))
            .collect();
        let shared: Vec<VolumeDevice> = app
            .sharing
            .iter()
            .flat_map(|c| c.volume_devices.iter().flatten())
            .filter(|d| taken.insert(&d.device_path))
            .cloned()
            .collect();
        if !shared.is_empty() {
            container
                .volume_devices
                .get_or_insert_with(Vec::new)
                .extend(shared);
        }
    }
    container
}

fn mount_paths(container: &Container) -> impl Iterator<Item = &str> {
    container
        .volume_mounts
        .iter()
        .flatten()
        .map(|m| m.mount_path.as_str())
}

fn device_paths(container: &Container) -> impl Iterator<Item = &str> {
    container
        .volume_devices
        .iter()
        .flatten()
        .map(|d| d.device_path.as_str())
}

/// A set of borrowed names. The sets injection builds (mount paths, env names of one container)
/// hold a handful of entries, where comparing is cheaper than hashing; a set that grows past
/// [`NameSet::LINEAR_LIMIT`] switches to hashing, so a pod with thousands of them stays linear.
#[derive(Default)]
pub(super) struct NameSet<'a> {
    listed: Vec<&'a str>,
    hashed: HashSet<&'a str>,
}

impl<'a> NameSet<'a> {
    const LINEAR_LIMIT: usize = 16;

    pub(super) fn contains(&self, name: &str) -> bool {
        self.listed.contains(&name) || self.hashed.contains(name)
    }

    /// Adds `name`; false when it was already there.
    pub(super) fn insert(&mut self, name: &'a str) -> bool {
        if self.contains(name) {
            return false;
        }
        if self.listed.len() < Self::LINEAR_LIMIT {
            self.listed.push(name);
        } else {
            self.hashed.insert(name);
        }
        true
    }
}

impl<'a> FromIterator<&'a str> for NameSet<'a> {
    fn from_iter<I: IntoIterator<Item = &'a str>>(names: I) -> Self {
        let mut set = NameSet::default();
        names.into_iter().for_each(|name| {
            set.insert(name);
        });
        set
    }
}

fn literal_env(name: &str, value: &str) -> EnvVar {
    EnvVar {
        name: name.to_string(),
        value: Some(value.to_string()),
        value_from: None,
    }
}

/// Env vars copied from pod containers by `transferEnv`, in entry order, names sorted per entry.
fn transfer_env<'p>(entries: &[TransferEnvVar], app: &AppContainers<'p>) -> Vec<&'p EnvVar> {
    let mut result = Vec::new();
    for entry in entries {
        let source = match entry
            .source_container_name_from
            .as_ref()
            .and_then(|from| from.field_ref.as_ref())
        {
            Some(field_ref) => match source_name_from_field(field_ref, app.pod) {
                Some(name) => name,
                None => continue,
            },
            None => entry.source_container_name.clone().unwrap_or_default(),
        };
        let names: BTreeSet<&str> = entry
            .env_name
            .as_deref()
            .filter(|n| !n.is_empty())
            .into_iter()
            .chain(entry.env_names.iter().flatten().map(String::as_str))
            .collect();
        for name in names {
            if let Some(var) = app.env_source(&source, name) {
                result.push(var);
            }
        }
    }
    result
}

/// Resolves `sourceContainerNameFrom.fieldRef` against the pod's labels or annotations.
/// Unsupported paths (including `metadata.name`) resolve to nothing, and the entry is skipped.
fn source_name_from_field(field_ref: &ObjectFieldSelector, pod: &Pod) -> Option<String> {
    let (kind, key) = parse_subscripted_field_path(&field_ref.field_path)?;
    let map = match kind {
        "metadata.annotations" if is_qualified_name(&key.to_lowercase()) => {
            pod.metadata.annotations.as_ref()
        }
        "metadata.labels" if is_qualified_name(&key) => pod.metadata.labels.as_ref(),
        _ => return None,
    };
    Some(map.and_then(|m| m.get(&key)).cloned().unwrap_or_default())
}

/// The two copies of a hot-upgrade sidecar: `<name>-1` working, `<name>-2` idle.
pub(super) fn hot_upgrade_pair(
    built: Container,
    sidecar: &SidecarContainer,
    annotations: &mut BTreeMap<String, String>,
    working: &mut BTreeMap<String, String>,
) -> Vec<Container> {
    let name = sidecar.name();
    let empty_image = sidecar
        .upgrade_strategy
        .as_ref()
        .and_then(|s| s.hot_upgrade_empty_image.clone());
    let mut copies = Vec::with_capacity(2);
    for (suffix, image, working_copy) in [
        ("-1", built.image.clone(), true),
        ("-2", empty_image, false),
    ] {
        let mut copy = built.clone();
        copy.name = format!("{name}{suffix}");
        copy.image = image;
        let env = copy.env.get_or_insert_with(Vec::new);
        for (env_name, prefix) in [
            (
                keys::ENV_SIDECARSET_VERSION,
                keys::SIDECARSET_VERSION_PREFIX,
            ),
            (
                keys::ENV_SIDECARSET_VERSION_ALT,
                keys::SIDECARSET_VERSION_ALT_PREFIX,
            ),
        ] {
            env.push(EnvVar {
                name: env_name.to_string(),
                value: None,
                value_from: Some(EnvVarSource {
                    field_ref: Some(ObjectFieldSelector {
                        api_version: None,
                        field_path: format!("metadata.annotations['{prefix}{}']", copy.name),
                    }),
                    ..Default::default()
                }),
            });
        }
        annotations.extend(hot_upgrade_version_annotations(&copy.name, working_copy));
        copies.push(copy);
    }
    working.insert(name.to_string(), format!("{name}-1"));
    copies
}

#[cfg(test)]
mod tests;
