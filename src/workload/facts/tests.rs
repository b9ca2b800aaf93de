use super::*;
use crate::api::keys;
use crate::inplace::{self, Step, state};
use crate::workload::lifecycle::{NORMAL, PREPARING_DELETE, UPDATED};
use crate::workload::listed::summarize;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::core::v1::{
    Container, ContainerStatus, PodCondition, PodReadinessGate, PodSpec, PodStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use std::collections::BTreeMap;

fn at(second: i64) -> Timestamp {
    Timestamp::from_second(second).unwrap()
}

/// Pods over the combinations the predicates distinguish.
fn pods() -> Vec<Pod> {
    let mut out = Vec::new();
    for lifecycle in ["", NORMAL, UPDATED, PREPARING_DELETE, "Strange", "-"] {
        for phase in ["Running", "Pending"] {
            for ready in [None, Some("True"), Some("False")] {
                for gate in [None, Some("True"), Some("False")] {
                    for revision in ["web-abc", "abc", "web-old"] {
                        let mut labels = BTreeMap::new();
                        if lifecycle != "-" {
                            labels.insert(
                                crate::workload::lifecycle::LIFECYCLE_STATE.to_string(),
                                lifecycle.into(),
                            );
                        }
                        labels.insert(keys::CONTROLLER_REVISION_HASH.into(), revision.into());
                        if revision == "abc" {
                            labels.insert(pod::SPECIFIED_DELETE.into(), "true".into());
                        }
                        // Further variations, spread over the combinations above.
                        let variant = out.len();
                        if (variant / 8) % 2 == 0 {
                            labels.insert(pod::POD_TEMPLATE_HASH.into(), "abc".into());
                        }
                        let mut conditions = Vec::new();
                        if let Some(status) = ready {
                            conditions.push(PodCondition {
                                type_: keys::CONDITION_READY.into(),
                                status: status.into(),
                                last_transition_time: Some(Time(at(100))),
                                ..Default::default()
                            });
                        }
                        if let Some(status) = gate {
                            conditions.push(PodCondition {
                                type_: keys::INPLACE_UPDATE_READY.into(),
                                status: status.into(),
                                ..Default::default()
                            });
                        }
                        let mut p = Pod::default();
                        p.metadata.name = Some(format!("p{}", out.len()));
                        p.metadata.labels = Some(labels);
                        let mut annotations = BTreeMap::new();
                        if gate == Some("False") && (variant / 28) % 2 == 0 {
                            annotations
                                .insert(keys::INPLACE_UPDATE_GRACE.to_string(), "{}".to_string());
                        }
                        let state = r#"{"revision":"web-abc"}"#;
                        // A batch still to come; a batch whose image has not changed yet (the
                        // pod's status records the same image ID); an unreadable state.
                        let next =
                            r#"{"revision":"web-abc","nextContainerImages":{"main":"main:v2"}}"#;
                        let waiting = r#"{"revision":"web-abc","updateImages":true,"lastContainerStatuses":{"main":{"imageID":"sha256:old"}}}"#;
                        let key = keys::INPLACE_UPDATE_STATE;
                        match (variant / 2) % 7 {
                            1 => annotations.insert(key.into(), state.into()),
                            2 => annotations
                                .insert(keys::INPLACE_UPDATE_STATE_LEGACY.into(), state.into()),
                            3 => annotations.insert(key.into(), "".into()),
                            4 => annotations.insert(key.into(), next.into()),
                            5 => annotations.insert(key.into(), waiting.into()),
                            6 => annotations.insert(key.into(), "{".into()),
                            _ => None,
                        };
                        p.metadata.annotations = Some(annotations);
                        let mut spec = PodSpec {
                            containers: vec![Container {
                                name: "main".into(),
                                image: Some("main:v2".into()),
                                ..Default::default()
                            }],
                            ..Default::default()
                        };
                        if variant % 2 == 0 {
                            spec.readiness_gates = Some(vec![PodReadinessGate {
                                condition_type: keys::INPLACE_UPDATE_READY.into(),
                            }]);
                        }
                        p.spec = Some(spec);
                        // Half the pods run the new image already, half still the old one.
                        let (image, image_id) =
                            [("main:v1", "sha256:old"), ("main:v2", "sha256:new")]
                                [(variant / 14) % 2];
                        p.status = Some(PodStatus {
                            phase: Some(phase.into()),
                            conditions: Some(conditions),
                            container_statuses: Some(vec![ContainerStatus {
                                name: "main".into(),
                                image: image.into(),
                                image_id: image_id.into(),
                                ..Default::default()
                            }]),
                            ..Default::default()
                        });
                        out.push(p);
                    }
                }
            }
        }
    }
    out
}

#[test]
fn facts_answer_what_the_predicates_answer() {
    let named = vec!["p7".to_string()];
    for min_ready in [0, 10, 1_000] {
        let now = at(200);
        for p in pods() {
            let scheme = RevisionScheme::CLONESET;
            let facts = PodFacts::of(&summarize(&p), scheme, "web-abc", &named, min_ready, now);
            let name = pod::name(&p);
            assert_eq!(facts.ready, pod::is_ready(&p, now), "{name}");
            assert_eq!(
                facts.available,
                pod::is_available(&p, min_ready, now),
                "{name} minReady {min_ready}"
            );
            assert_eq!(
                facts.at_update_revision,
                scheme.pod_at(&p, "web-abc"),
                "{name}"
            );
            assert_eq!(
                facts.specified_delete,
                pod::is_specified_delete(&p, &named),
                "{name}"
            );
            assert_eq!(facts.pre_deleting(), pod::is_pre_deleting(&p), "{name}");
            assert_eq!(facts.has_grace, state::has_grace(&p), "{name}");
            assert_eq!(
                facts.lifecycle == LifecycleState::Updated,
                pod::lifecycle(&p) == UPDATED
            );
            // At rest exactly when the engine, at any time, has nothing to do and sees no
            // update in flight (a grace period is never at rest, even while it runs).
            for time in [now, at(0), at(1_000_000)] {
                let step = inplace::next_step(&p, None, &crate::workload::engine::ENGINE, time);
                let idle = state::read_grace(&p).is_none()
                    && matches!(step, Ok(Step::Idle))
                    && inplace::in_flight_revision(&p).is_none();
                assert_eq!(facts.engine_idle, idle, "{name} at {time}: {step:?}");
            }
            assert_eq!(
                facts.missing_template_hash,
                pod::label(&p, pod::POD_TEMPLATE_HASH).is_none()
                    && pod::label(&p, keys::CONTROLLER_REVISION_HASH).is_some(),
                "{name}"
            );
        }
    }
}
