use super::*;

// ---------------------------------------------------------------------------------------------
// E. Conflicts with other SidecarSets

/// Whether some pod could match both selectors, by OpenKruise's deliberately rough test: two
/// selectors are disjoint when one pins a key to values the other cannot have (see
/// [`is_disjoint`]); otherwise they overlap.
pub fn selectors_overlap(a: &LabelSelector, b: &LabelSelector) -> bool {
    !(is_disjoint(a, b) || is_disjoint(b, a))
}

/// Two SidecarSets that may select the same pod must not both inject a container (or init
/// container) of the same name, define a shared volume name differently, or fight over an
/// annotation where either side overwrites it.
pub(super) fn validate_conflicts(set: &SidecarSet, others: &[Arc<SidecarSet>]) -> Vec<FieldError> {
    let spec = Path::new("spec");
    let canary_base = set.canary_base();
    let empty = LabelSelector::default();
    let selector = set.spec.selector.as_ref().unwrap_or(&empty);
    let own_namespaces = namespace_selector(set);

    // Later SidecarSets win a name, as upstream fills one map per kind.
    let mut init_owners: BTreeMap<&str, &SidecarSet> = BTreeMap::new();
    let mut container_owners: BTreeMap<&str, &SidecarSet> = BTreeMap::new();
    let mut volume_owners: BTreeMap<&str, &SidecarSet> = BTreeMap::new();
    let mut annotation_owners: BTreeMap<&str, (&str, &str)> = BTreeMap::new();
    for other in others.iter().map(Arc::as_ref) {
        if other.name() == set.name() || canary_base == Some(other.name()) {
            continue;
        }
        let namespaces_disjoint = match (&own_namespaces, namespace_selector(other)) {
            (Some(own), Some(theirs)) => !selectors_overlap(own, &theirs),
            _ => false,
        };
        let pods_overlap =
            selectors_overlap(selector, other.spec.selector.as_ref().unwrap_or(&empty));
        if namespaces_disjoint || !pods_overlap {
            continue;
        }
        for container in other.init_containers() {
            init_owners.insert(container.name(), other);
        }
        for container in other.containers() {
            container_owners.insert(container.name(), other);
        }
        for volume in other.volumes() {
            volume_owners.insert(volume.name.as_str(), other);
        }
        for patch in other.spec.patch_pod_metadata.iter().flatten() {
            let policy = patch.patch_policy.as_deref().unwrap_or("");
            if policy == keys::PATCH_POLICY_RETAIN {
                continue;
            }
            for key in patch.annotations.iter().flat_map(BTreeMap::keys) {
                annotation_owners.insert(key.as_str(), (other.name(), policy));
            }
        }
    }

    let mut errors = Vec::new();
    let containers_path = spec.child("containers");
    for (own, owners) in [
        (set.init_containers(), &init_owners),
        (set.containers(), &container_owners),
    ] {
        for container in own {
            let name = container.name();
            if let Some(other) = owners.get(name) {
                errors.push(FieldError::invalid(
                    &containers_path,
                    name,
                    format!("container {name} already exist in {}", other.name()),
                ));
            }
        }
    }
    for volume in set.volumes() {
        let Some(other) = volume_owners.get(volume.name.as_str()) else {
            continue;
        };
        let theirs = other.volumes().iter().find(|v| v.name == volume.name);
        if theirs != Some(volume) {
            errors.push(FieldError::invalid(
                &spec.child("volumes"),
                volume.name.as_str(),
                format!(
                    "volume {} is in conflict with sidecarset {}",
                    volume.name,
                    other.name()
                ),
            ));
        }
    }
    for patch in set.spec.patch_pod_metadata.iter().flatten() {
        let policy = patch.patch_policy.as_deref().unwrap_or("");
        if policy == keys::PATCH_POLICY_RETAIN {
            continue;
        }
        for key in patch.annotations.iter().flat_map(BTreeMap::keys) {
            let Some(&(other, other_policy)) = annotation_owners.get(key.as_str()) else {
                continue;
            };
            if policy == keys::PATCH_POLICY_OVERWRITE
                || other_policy == keys::PATCH_POLICY_OVERWRITE
            {
                errors.push(FieldError::invalid(
                    &spec.child("patchPodMetadata"),
                    key.as_str(),
                    format!("annotation {key} is in conflict with sidecarset {other}"),
                ));
            }
        }
    }
    errors
}

/// What a pinned key's value list holds for "any value" (`Exists`). A literal `ALL` label value
/// reads the same, as upstream's does.
pub const ANY_VALUE: &str = "ALL";

/// The keys a selector pins, as the overlap test reads it (the first argument of
/// [`is_disjoint`]): `matchLabels` k=v gives k → [v], `In` adds its values, `Exists` makes
/// k → [[`ANY_VALUE`]]; `NotIn` and `DoesNotExist` pin nothing.
pub fn pinned_values(selector: &LabelSelector) -> BTreeMap<&str, Vec<&str>> {
    let mut pinned: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (key, value) in selector.match_labels.iter().flatten() {
        pinned.insert(key.as_str(), vec![value.as_str()]);
    }
    for requirement in selector.match_expressions.iter().flatten() {
        let values = requirement.values.iter().flatten().map(String::as_str);
        match requirement.operator.as_str() {
            "In" => pinned
                .entry(requirement.key.as_str())
                .or_default()
                .extend(values),
            "Exists" => {
                pinned.insert(requirement.key.as_str(), vec![ANY_VALUE]);
            }
            _ => {}
        }
    }
    pinned
}

/// Whether `first` pins some key to values `second` cannot take. From `first`: `matchLabels`
/// k=v gives k → [v], `In` adds its values, `Exists` makes k → [ALL]; `NotIn` and
/// `DoesNotExist` are ignored. `second` is then disjoint on a pinned key (without ALL) where its
/// label or `In` values miss the list, where its `NotIn` covers the whole list, where it requires
/// `Exists` on a key `first` does not pin, or `DoesNotExist` on one it does.
pub(super) fn is_disjoint(first: &LabelSelector, second: &LabelSelector) -> bool {
    let pinned = pinned_values(first);
    let any_value = |values: &[&str]| values.contains(&ANY_VALUE);
    for (key, value) in second.match_labels.iter().flatten() {
        if let Some(values) = pinned.get(key.as_str())
            && !any_value(values)
            && !values.contains(&value.as_str())
        {
            return true;
        }
    }
    for requirement in second.match_expressions.iter().flatten() {
        let pinned_values = pinned.get(requirement.key.as_str());
        let theirs: Vec<&str> = requirement
            .values
            .iter()
            .flatten()
            .map(String::as_str)
            .collect();
        let disjoint = match requirement.operator.as_str() {
            "In" => pinned_values.is_some_and(|values| {
                !any_value(values) && !theirs.iter().any(|v| values.contains(v))
            }),
            "NotIn" => {
                pinned_values.is_some_and(|values| values.iter().all(|v| theirs.contains(v)))
            }
            "Exists" => pinned_values.is_none(),
            "DoesNotExist" => pinned_values.is_some(),
            _ => false,
        };
        if disjoint {
            return true;
        }
    }
    false
}
