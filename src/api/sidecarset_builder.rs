//! How tests build a SidecarSet in code:
//! `SidecarSetBuilder::new("mesh").selector(&[("app", "web")]).container("envoy", "envoy:1").build()`.
//! Unit tests import it from `crate::api`; the integration tests include this file through
//! `tests/support/`, so it names the API types only as `super::…`.
//!
//! Nothing is defaulted: the set holds exactly what the test states. Setters that take a field
//! accept the value or an `Option` (`None` clears it), so a case can start from a shared base and
//! say only what it changes.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, Volume};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::{
    SidecarContainer, SidecarSet, SidecarSetInjectionStrategy, SidecarSetPatchPodMetadata,
    SidecarSetSpec, SidecarSetStatus, SidecarSetUpdateStrategy,
};

#[derive(Clone, Debug)]
pub struct SidecarSetBuilder(SidecarSet);

impl SidecarSetBuilder {
    pub fn new(name: &str) -> Self {
        Self(SidecarSet::new(name, SidecarSetSpec::default()))
    }

    /// `spec.selector` matching these labels.
    pub fn selector(self, labels: &[(&str, &str)]) -> Self {
        self.label_selector(match_labels(labels))
    }

    /// `spec.selector` as given (expressions, empty, or `None`).
    pub fn label_selector(mut self, selector: impl Into<Option<LabelSelector>>) -> Self {
        self.0.spec.selector = selector.into();
        self
    }

    /// Pins the set to one namespace as v1alpha1's `spec.namespace` does once converted: a
    /// `namespaceSelector` on the namespace's name label. `None` leaves the selector as it is.
    pub fn namespace<'a>(mut self, namespace: impl Into<Option<&'a str>>) -> Self {
        if let Some(namespace) = namespace.into() {
            self.0.spec.namespace_selector = Some(match_labels(&[(
                super::keys::NAMESPACE_NAME_LABEL,
                namespace,
            )]));
        }
        self
    }

    /// `spec.customVersion`.
    pub fn custom_version<'a>(mut self, version: impl Into<Option<&'a str>>) -> Self {
        self.0.spec.custom_version = version.into().map(Into::into);
        self
    }

    pub fn namespace_selector(mut self, selector: impl Into<Option<LabelSelector>>) -> Self {
        self.0.spec.namespace_selector = selector.into();
        self
    }

    /// Appends a sidecar with only a name and an image.
    pub fn container(self, name: &str, image: &str) -> Self {
        self.sidecar(plain_sidecar(name, image))
    }

    /// Appends an init container with only a name and an image.
    pub fn init_container(mut self, name: &str, image: &str) -> Self {
        let init_containers = self.0.spec.init_containers.get_or_insert_default();
        init_containers.push(plain_sidecar(name, image));
        self
    }

    /// Appends a sidecar to `spec.containers`.
    pub fn sidecar(mut self, sidecar: SidecarContainer) -> Self {
        self.0.spec.containers.get_or_insert_default().push(sidecar);
        self
    }

    /// Replaces `spec.containers`.
    pub fn containers(mut self, sidecars: impl Into<Option<Vec<SidecarContainer>>>) -> Self {
        self.0.spec.containers = sidecars.into();
        self
    }

    /// Replaces `spec.initContainers`.
    pub fn init_containers(mut self, sidecars: impl Into<Option<Vec<SidecarContainer>>>) -> Self {
        self.0.spec.init_containers = sidecars.into();
        self
    }

    pub fn volumes(mut self, volumes: impl Into<Option<Vec<Volume>>>) -> Self {
        self.0.spec.volumes = volumes.into();
        self
    }

    pub fn update_strategy(
        mut self,
        strategy: impl Into<Option<SidecarSetUpdateStrategy>>,
    ) -> Self {
        self.0.spec.update_strategy = strategy.into();
        self
    }

    pub fn injection_strategy(
        mut self,
        strategy: impl Into<Option<SidecarSetInjectionStrategy>>,
    ) -> Self {
        self.0.spec.injection_strategy = strategy.into();
        self
    }

    pub fn patch_pod_metadata(
        mut self,
        patches: impl Into<Option<Vec<SidecarSetPatchPodMetadata>>>,
    ) -> Self {
        self.0.spec.patch_pod_metadata = patches.into();
        self
    }

    pub fn annotation(mut self, key: &str, value: &str) -> Self {
        let annotations = self.0.metadata.annotations.get_or_insert_default();
        annotations.insert(key.into(), value.into());
        self
    }

    pub fn label(mut self, key: &str, value: &str) -> Self {
        let labels = self.0.metadata.labels.get_or_insert_default();
        labels.insert(key.into(), value.into());
        self
    }

    pub fn generation(mut self, generation: i64) -> Self {
        self.0.metadata.generation = Some(generation);
        self
    }

    pub fn resource_version(mut self, version: &str) -> Self {
        self.0.metadata.resource_version = Some(version.into());
        self
    }

    pub fn status(mut self, status: SidecarSetStatus) -> Self {
        self.0.status = Some(status);
        self
    }

    pub fn build(self) -> SidecarSet {
        self.0
    }
}

fn plain_sidecar(name: &str, image: &str) -> SidecarContainer {
    SidecarContainer {
        container: Container {
            name: name.into(),
            image: Some(image.into()),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// A selector of exactly these labels.
pub fn match_labels(labels: &[(&str, &str)]) -> LabelSelector {
    LabelSelector {
        match_labels: Some(
            labels
                .iter()
                .map(|(key, value)| (key.to_string(), value.to_string()))
                .collect::<BTreeMap<_, _>>(),
        ),
        match_expressions: None,
    }
}
