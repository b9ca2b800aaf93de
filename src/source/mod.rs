//! Where SidecarSets and Namespaces come from, and the immutable snapshot the webhooks read.
//!
//! A [`Catalogue`] is built once per change and published through an `ArcSwap`; a request loads
//! one `Arc<Catalogue>` and borrows from it, so the SidecarSet list is never copied per request.

pub mod dir;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use arc_swap::ArcSwap;

use crate::api::{SidecarSet, keys};
use crate::inject::selector::Labels;

/// An immutable snapshot of everything injection needs to know about the cluster.
#[derive(Debug, Default)]
pub struct Catalogue {
    /// Namespace-pinned SidecarSets first, then the others; by name within each group.
    sidecarsets: Vec<Arc<SidecarSet>>,
    /// Labels of known Namespaces.
    namespaces: HashMap<String, Labels>,
    /// Without a cluster, a namespace nobody declared is taken to exist with only the
    /// `kubernetes.io/metadata.name` label every Kubernetes ≥ 1.21 namespace carries.
    assume_undeclared_namespaces: bool,
}

impl Catalogue {
    pub fn new(
        mut sidecarsets: Vec<Arc<SidecarSet>>,
        namespaces: HashMap<String, Labels>,
        assume_undeclared_namespaces: bool,
    ) -> Self {
        sidecarsets.sort_by(|a, b| {
            (!is_namespace_pinned(a), a.name()).cmp(&(!is_namespace_pinned(b), b.name()))
        });
        Catalogue {
            sidecarsets,
            namespaces,
            assume_undeclared_namespaces,
        }
    }

    pub fn sidecarsets(&self) -> &[Arc<SidecarSet>] {
        &self.sidecarsets
    }

    pub fn get(&self, name: &str) -> Option<&Arc<SidecarSet>> {
        self.sidecarsets.iter().find(|s| s.name() == name)
    }

    /// Labels of namespace `name`, if it is known (or assumed, see the field's comment).
    pub fn namespace_labels(&self, name: &str) -> Option<std::borrow::Cow<'_, Labels>> {
        if let Some(labels) = self.namespaces.get(name) {
            return Some(std::borrow::Cow::Borrowed(labels));
        }
        self.assume_undeclared_namespaces.then(|| {
            std::borrow::Cow::Owned(BTreeMap::from([(
                keys::NAMESPACE_NAME_LABEL.to_string(),
                name.to_string(),
            )]))
        })
    }
}

/// OpenKruise indexes SidecarSets that name their namespace and consults them first.
fn is_namespace_pinned(set: &SidecarSet) -> bool {
    if set.spec.namespace.as_deref().is_some_and(|n| !n.is_empty()) {
        return true;
    }
    let Some(selector) = &set.spec.namespace_selector else {
        return false;
    };
    selector
        .match_labels
        .as_ref()
        .is_some_and(|m| m.contains_key(keys::NAMESPACE_NAME_LABEL))
        || selector
            .match_expressions
            .iter()
            .flatten()
            .any(|e| e.key == keys::NAMESPACE_NAME_LABEL && e.operator == "In")
}

/// The shared, swappable catalogue handle.
pub type SharedCatalogue = Arc<ArcSwap<Catalogue>>;

pub fn shared(catalogue: Catalogue) -> SharedCatalogue {
    Arc::new(ArcSwap::from_pointee(catalogue))
}
