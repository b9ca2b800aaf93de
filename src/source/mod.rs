//! Where SidecarSets and Namespaces come from, and the immutable snapshot the webhooks read.
//!
//! A [`Catalogue`] is built once per change and published through an `ArcSwap`; a request loads
//! one `Arc<Catalogue>` and borrows from it, so the SidecarSet list is never copied per request.

pub mod acceptance;
pub mod cluster;
mod conflict_index;
pub mod dir;
pub mod history;
pub mod watch;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use arc_swap::ArcSwap;

use crate::api::{SidecarSet, keys};
use crate::inject::candidates::MatchIndex;
use crate::inject::prepared::PreparedSidecarSets;
use crate::inject::revision::InjectionRevisions;
use crate::k8s::selector::{Labels, add_name_label};
use crate::validate::sidecarset::{NoHistory, RevisionHistory};
use history::SharedRevisions;

/// An immutable snapshot of everything injection needs to know about the cluster.
#[derive(Debug, Default)]
pub struct Catalogue {
    /// Namespace-pinned SidecarSets first, then the others; by name within each group.
    sidecarsets: Vec<Arc<SidecarSet>>,
    /// The injection work that depends only on these SidecarSets, done once per snapshot.
    prepared: PreparedSidecarSets,
    /// `sidecarsets` by what a pod they match must carry.
    match_index: MatchIndex,
    /// Labels of known Namespaces.
    namespaces: HashMap<String, Labels>,
    /// Without a cluster, a namespace nobody declared is taken to exist with only the
    /// `kubernetes.io/metadata.name` label every Kubernetes ≥ 1.21 namespace carries.
    assume_undeclared_namespaces: bool,
    /// What the SidecarSets that name a revision to inject resolved to.
    revisions: InjectionRevisions,
    /// The watched revision history (cluster mode), for the validating webhook.
    history: Option<SharedRevisions>,
}

impl Catalogue {
    pub fn new(
        sidecarsets: Vec<Arc<SidecarSet>>,
        namespaces: HashMap<String, Labels>,
        assume_undeclared_namespaces: bool,
    ) -> Self {
        Self::next(None, sidecarsets, namespaces, assume_undeclared_namespaces)
    }

    /// A catalogue of these SidecarSets reusing what `previous` prepared for those it held too.
    pub fn next(
        previous: Option<&Catalogue>,
        mut sidecarsets: Vec<Arc<SidecarSet>>,
        mut namespaces: HashMap<String, Labels>,
        assume_undeclared_namespaces: bool,
    ) -> Self {
        // Whatever the source, every namespace is matched with its name label.
        for (name, labels) in &mut namespaces {
            add_name_label(name, labels);
        }
        // Stable: SidecarSets given in name order (as the sources give them) stay in it, at the
        // cost of one pass.
        sidecarsets.sort_by(|a, b| {
            (!is_namespace_pinned(a), a.name()).cmp(&(!is_namespace_pinned(b), b.name()))
        });
        Catalogue {
            prepared: PreparedSidecarSets::new(&sidecarsets, previous.map(|p| &p.prepared)),
            match_index: MatchIndex::new(&sidecarsets),
            sidecarsets,
            namespaces,
            assume_undeclared_namespaces,
            revisions: InjectionRevisions::new(),
            history: None,
        }
    }

    /// This catalogue with what its SidecarSets that name a revision resolved to, and the
    /// history they were resolved against.
    pub fn with_history(
        mut self,
        revisions: InjectionRevisions,
        history: Option<SharedRevisions>,
    ) -> Self {
        self.revisions = revisions;
        self.history = history;
        self
    }

    /// What the SidecarSets that name a revision inject; `None` without a history (directory
    /// mode), where every such revision is missing.
    pub fn injection_revisions(&self) -> Option<&InjectionRevisions> {
        self.history.as_ref().map(|_| &self.revisions)
    }

    /// Runs `f` with the revision history the validating webhook checks revisions against: the
    /// watched one, or none.
    pub fn with_revision_history<R>(&self, f: impl FnOnce(&dyn RevisionHistory) -> R) -> R {
        match &self.history {
            Some(history) => {
                let index = history::read(history);
                f(&*index)
            }
            None => f(&NoHistory),
        }
    }

    pub fn sidecarsets(&self) -> &[Arc<SidecarSet>] {
        &self.sidecarsets
    }

    pub fn prepared(&self) -> &PreparedSidecarSets {
        &self.prepared
    }

    pub fn match_index(&self) -> &MatchIndex {
        &self.match_index
    }

    /// Number of Namespaces whose labels are known (declared or watched).
    pub fn namespace_count(&self) -> usize {
        self.namespaces.len()
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

/// A SidecarSet that [`acceptance::accept_all`] refused, with where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused<O> {
    pub origin: O,
    pub name: String,
    pub message: String,
}

/// Validates defaulted SidecarSets the way the validating webhook would, each against those
/// accepted before it, in name order: of two conflicting SidecarSets the same one always wins,
/// whatever order they were read or watched in. A second SidecarSet of an accepted name is refused
/// as a duplicate naming the first one's origin.
///
/// The rule, stated pairwise: each SidecarSet against every one accepted before it. The
/// catalogue applies it through [`acceptance::Acceptance`]; this is the oracle its property
/// tests compare with.
#[cfg(test)]
pub fn accept_in_name_order<O: std::fmt::Display>(
    mut candidates: Vec<(Arc<SidecarSet>, O)>,
) -> (Vec<Arc<SidecarSet>>, Vec<Refused<O>>) {
    candidates.sort_by(|a, b| a.0.name().cmp(b.0.name()));
    let mut accepted: Vec<Arc<SidecarSet>> = Vec::with_capacity(candidates.len());
    let mut origins: HashMap<String, O> = HashMap::new();
    let mut refused = Vec::new();
    for (set, origin) in candidates {
        let name = set.name().to_string();
        if let Some(first) = origins.get(&name) {
            let message =
                format!("metadata.name: Duplicate value: {name:?}: already defined in {first}");
            refused.push(Refused {
                origin,
                name,
                message,
            });
            continue;
        }
        let errors = crate::validate::sidecarset::validate_sidecarset(&set, None, &accepted);
        if errors.is_empty() {
            origins.insert(name, origin);
            accepted.push(set);
        } else {
            refused.push(Refused {
                origin,
                name,
                message: crate::validate::field::aggregate(&errors),
            });
        }
    }
    (accepted, refused)
}

#[cfg(test)]
mod tests;
