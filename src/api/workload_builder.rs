//! How tests build the workloads and their pods in code, in the style of
//! [`super::SidecarSetBuilder`]:
//! `CloneSetBuilder::new("web").replicas(3).image("nginx:1").build()`,
//! `PodBuilder::new("web-0").labels(&[("app", "web")]).owner(&set.owner_reference()).running().build()`.
//!
//! A new workload holds what every controller test needs and no more: namespace `default`, uid
//! `<name>-uid`, generation 1, selector and template labels `app: <name>`, one container `main`
//! (image `main:v1`). Every other field is unset until a setter says otherwise.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Container, ContainerStatus, PersistentVolumeClaim, Pod, PodCondition, PodSpec, PodStatus,
    PodTemplateSpec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    LabelSelector, ObjectMeta, OwnerReference, Time,
};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::jiff::Timestamp;

use super::cloneset::{CloneSet, CloneSetSpec, Lifecycle};
use super::daemonset::{DaemonSet, DaemonSetSpec};
use super::statefulset::{StatefulSet, StatefulSetSpec};

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn template(app: &str, image: &str) -> PodTemplateSpec {
    PodTemplateSpec {
        metadata: Some(ObjectMeta {
            labels: Some(labels(&[("app", app)])),
            ..ObjectMeta::default()
        }),
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "main".into(),
                image: Some(image.into()),
                ..Container::default()
            }],
            ..PodSpec::default()
        }),
    }
}

fn selector(app: &str) -> LabelSelector {
    LabelSelector {
        match_labels: Some(labels(&[("app", app)])),
        match_expressions: None,
    }
}

fn base_meta(meta: &mut ObjectMeta, name: &str) {
    meta.namespace = Some("default".into());
    meta.uid = Some(format!("{name}-uid"));
    meta.generation = Some(1);
}

/// Setters every workload builder has: metadata and the pod template.
macro_rules! workload_setters {
    () => {
        pub fn namespace(mut self, namespace: &str) -> Self {
            self.0.metadata.namespace = Some(namespace.into());
            self
        }
        pub fn uid(mut self, uid: &str) -> Self {
            self.0.metadata.uid = Some(uid.into());
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
        pub fn annotation(mut self, key: &str, value: &str) -> Self {
            self.0
                .metadata
                .annotations
                .get_or_insert_default()
                .insert(key.into(), value.into());
            self
        }
        /// The image of the template's first container.
        pub fn image(mut self, image: &str) -> Self {
            if let Some(spec) = self.0.spec.template.spec.as_mut() {
                spec.containers[0].image = Some(image.into());
            }
            self
        }
        pub fn template(mut self, template: PodTemplateSpec) -> Self {
            self.0.spec.template = template;
            self
        }
        pub fn label_selector(mut self, selector: impl Into<Option<LabelSelector>>) -> Self {
            self.0.spec.selector = selector.into();
            self
        }
        pub fn lifecycle(mut self, lifecycle: impl Into<Option<Lifecycle>>) -> Self {
            self.0.spec.lifecycle = lifecycle.into();
            self
        }
        pub fn revision_history_limit(mut self, limit: i32) -> Self {
            self.0.spec.revision_history_limit = Some(limit);
            self
        }
    };
}

#[derive(Clone, Debug)]
pub struct CloneSetBuilder(CloneSet);

impl CloneSetBuilder {
    pub fn new(name: &str) -> Self {
        let spec = CloneSetSpec {
            selector: Some(selector(name)),
            template: template(name, "main:v1"),
            ..CloneSetSpec::default()
        };
        let mut set = CloneSet::new(name, spec);
        base_meta(&mut set.metadata, name);
        Self(set)
    }

    workload_setters!();

    pub fn replicas(mut self, replicas: i32) -> Self {
        self.0.spec.replicas = Some(replicas);
        self
    }
    /// `updateStrategy.type`.
    pub fn update_type(mut self, type_: &str) -> Self {
        self.0.spec.update_strategy.type_ = Some(type_.into());
        self
    }
    pub fn max_unavailable(mut self, value: IntOrString) -> Self {
        self.0.spec.update_strategy.max_unavailable = Some(value);
        self
    }
    pub fn partition(mut self, value: IntOrString) -> Self {
        self.0.spec.update_strategy.partition = Some(value);
        self
    }
    pub fn min_ready_seconds(mut self, seconds: i32) -> Self {
        self.0.spec.min_ready_seconds = Some(seconds);
        self
    }
    /// Appends a volume claim template with only a name.
    pub fn volume_claim_template(mut self, name: &str) -> Self {
        self.0
            .spec
            .volume_claim_templates
            .get_or_insert_default()
            .push(named_claim(name));
        self
    }
    pub fn build(self) -> CloneSet {
        self.0
    }
}

#[derive(Clone, Debug)]
pub struct StatefulSetBuilder(StatefulSet);

impl StatefulSetBuilder {
    pub fn new(name: &str) -> Self {
        let spec = StatefulSetSpec {
            selector: Some(selector(name)),
            template: template(name, "main:v1"),
            ..StatefulSetSpec::default()
        };
        let mut set = StatefulSet::new(name, spec);
        base_meta(&mut set.metadata, name);
        Self(set)
    }

    workload_setters!();

    pub fn replicas(mut self, replicas: i32) -> Self {
        self.0.spec.replicas = Some(replicas);
        self
    }
    pub fn service_name(mut self, name: &str) -> Self {
        self.0.spec.service_name = Some(name.into());
        self
    }
    /// `podManagementPolicy`.
    pub fn pod_management_policy(mut self, policy: &str) -> Self {
        self.0.spec.pod_management_policy = Some(policy.into());
        self
    }
    /// `rollingUpdate.partition`.
    pub fn partition(mut self, partition: i32) -> Self {
        self.rolling_update().partition = Some(partition);
        self
    }
    /// `rollingUpdate.maxUnavailable`.
    pub fn max_unavailable(mut self, value: IntOrString) -> Self {
        self.rolling_update().max_unavailable = Some(value);
        self
    }
    /// `rollingUpdate.podUpdatePolicy`.
    pub fn pod_update_policy(mut self, policy: &str) -> Self {
        self.rolling_update().pod_update_policy = Some(policy.into());
        self
    }
    pub fn min_ready_seconds(mut self, seconds: i32) -> Self {
        self.rolling_update().min_ready_seconds = Some(seconds);
        self
    }
    /// Appends a volume claim template with only a name.
    pub fn volume_claim_template(mut self, name: &str) -> Self {
        self.0
            .spec
            .volume_claim_templates
            .get_or_insert_default()
            .push(named_claim(name));
        self
    }
    fn rolling_update(&mut self) -> &mut super::statefulset::RollingUpdateStatefulSetStrategy {
        self.0
            .spec
            .update_strategy
            .rolling_update
            .get_or_insert_default()
    }
    pub fn build(self) -> StatefulSet {
        self.0
    }
}

#[derive(Clone, Debug)]
pub struct DaemonSetBuilder(DaemonSet);

impl DaemonSetBuilder {
    pub fn new(name: &str) -> Self {
        let spec = DaemonSetSpec {
            selector: Some(selector(name)),
            template: template(name, "main:v1"),
            ..DaemonSetSpec::default()
        };
        let mut set = DaemonSet::new(name, spec);
        base_meta(&mut set.metadata, name);
        Self(set)
    }

    workload_setters!();

    /// `updateStrategy.type`.
    pub fn update_type(mut self, type_: &str) -> Self {
        self.0.spec.update_strategy.type_ = Some(type_.into());
        self
    }
    /// `rollingUpdate.maxUnavailable`.
    pub fn max_unavailable(mut self, value: IntOrString) -> Self {
        self.rolling_update().max_unavailable = Some(value);
        self
    }
    /// `rollingUpdate.maxSurge`.
    pub fn max_surge(mut self, value: IntOrString) -> Self {
        self.rolling_update().max_surge = Some(value);
        self
    }
    /// `rollingUpdate.partition`.
    pub fn partition(mut self, value: IntOrString) -> Self {
        self.rolling_update().partition = Some(value);
        self
    }
    pub fn min_ready_seconds(mut self, seconds: i32) -> Self {
        self.0.spec.min_ready_seconds = Some(seconds);
        self
    }
    fn rolling_update(&mut self) -> &mut super::daemonset::RollingUpdateDaemonSet {
        self.0
            .spec
            .update_strategy
            .rolling_update
            .get_or_insert_default()
    }
    pub fn build(self) -> DaemonSet {
        self.0
    }
}

fn named_claim(name: &str) -> PersistentVolumeClaim {
    PersistentVolumeClaim {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        ..PersistentVolumeClaim::default()
    }
}

/// A pod as a workload's controller sees it. `new` gives only the name and namespace `default`.
#[derive(Clone, Debug)]
pub struct PodBuilder(Pod);

impl PodBuilder {
    pub fn new(name: &str) -> Self {
        Self(Pod {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some("default".into()),
                ..ObjectMeta::default()
            },
            ..Pod::default()
        })
    }

    pub fn namespace(mut self, namespace: &str) -> Self {
        self.0.metadata.namespace = Some(namespace.into());
        self
    }
    pub fn uid(mut self, uid: &str) -> Self {
        self.0.metadata.uid = Some(uid.into());
        self
    }
    pub fn resource_version(mut self, version: &str) -> Self {
        self.0.metadata.resource_version = Some(version.into());
        self
    }
    pub fn created(mut self, at: Timestamp) -> Self {
        self.0.metadata.creation_timestamp = Some(Time(at));
        self
    }
    /// Adds these labels.
    pub fn labels(mut self, pairs: &[(&str, &str)]) -> Self {
        self.0
            .metadata
            .labels
            .get_or_insert_default()
            .extend(labels(pairs));
        self
    }
    pub fn annotation(mut self, key: &str, value: &str) -> Self {
        self.0
            .metadata
            .annotations
            .get_or_insert_default()
            .insert(key.into(), value.into());
        self
    }
    /// Appends an ownerReference.
    pub fn owner(mut self, owner: &OwnerReference) -> Self {
        self.0
            .metadata
            .owner_references
            .get_or_insert_default()
            .push(owner.clone());
        self
    }
    /// Appends a container with only a name and an image.
    pub fn container(mut self, name: &str, image: &str) -> Self {
        self.0
            .spec
            .get_or_insert_default()
            .containers
            .push(Container {
                name: name.into(),
                image: Some(image.into()),
                ..Container::default()
            });
        self
    }
    pub fn node(mut self, node: &str) -> Self {
        self.0.spec.get_or_insert_default().node_name = Some(node.into());
        self
    }
    pub fn phase(mut self, phase: &str) -> Self {
        self.0.status.get_or_insert_default().phase = Some(phase.into());
        self
    }
    /// Running on `node-1`, Ready since `since`, every container started with its spec image
    /// (imageID `id-<image>`).
    pub fn running_ready(mut self, since: Timestamp) -> Self {
        self = self.node("node-1").phase("Running");
        let statuses = self
            .0
            .spec
            .iter()
            .flat_map(|s| &s.containers)
            .map(|c| {
                let image = c.image.clone().unwrap_or_default();
                ContainerStatus {
                    name: c.name.clone(),
                    image_id: format!("id-{image}"),
                    image,
                    ready: true,
                    ..ContainerStatus::default()
                }
            })
            .collect();
        let status: &mut PodStatus = self.0.status.get_or_insert_default();
        status.container_statuses = Some(statuses);
        status.conditions = Some(vec![PodCondition {
            type_: "Ready".into(),
            status: "True".into(),
            last_transition_time: Some(Time(since)),
            ..PodCondition::default()
        }]);
        self
    }
    pub fn build(self) -> Pod {
        self.0
    }
}

#[cfg(test)]
mod tests;
