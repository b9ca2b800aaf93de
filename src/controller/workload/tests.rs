use std::time::Duration;

use super::*;

#[test]
fn one_rule_says_when_to_look_again() {
    let after = |outcome| requeue(outcome);
    assert_eq!(
        after(Outcome::CachesNotReady),
        Requeue::requeue(Duration::from_secs(1))
    );
    assert_eq!(
        after(Outcome::Waiting(Duration::from_secs(3))),
        Requeue::requeue(Duration::from_secs(3))
    );
    assert_eq!(
        after(Outcome::Waiting(Duration::from_secs(300))),
        Requeue::requeue(Duration::from_secs(15))
    );
    assert_eq!(
        after(Outcome::Conflict),
        Requeue::requeue(Duration::from_secs(1))
    );
    assert_eq!(after(Outcome::InvalidSpec), Requeue::await_change());
    assert_eq!(
        after(Outcome::Failed),
        Requeue::requeue(Duration::from_secs(10))
    );
    let done = |requeue_after, unfinished| Outcome::Done {
        requeue_after,
        unfinished,
    };
    assert_eq!(
        after(done(Some(Duration::from_secs(4)), false)),
        Requeue::requeue(Duration::from_secs(4))
    );
    assert_eq!(
        after(done(Some(Duration::from_secs(40)), false)),
        Requeue::requeue(Duration::from_secs(15))
    );
    assert_eq!(
        after(done(None, true)),
        Requeue::requeue(Duration::from_secs(15))
    );
    assert_eq!(after(done(None, false)), Requeue::await_change());
}

#[test]
fn owners_name_a_kind_by_group_and_kind_only() {
    use crate::api::cloneset::CloneSet;
    use crate::api::statefulset::StatefulSet;
    let owner = |kind: &str, api: &str| OwnerReference {
        api_version: api.into(),
        kind: kind.into(),
        name: "web".into(),
        uid: "u".into(),
        controller: Some(true),
        block_owner_deletion: None,
    };
    assert!(names_kind::<CloneSet>(&owner(
        "CloneSet",
        "apps.kruise.io/v1beta1"
    )));
    assert!(names_kind::<StatefulSet>(&owner(
        "StatefulSet",
        "apps.kruise.io/v1alpha1"
    )));
    assert!(!names_kind::<StatefulSet>(&owner("StatefulSet", "apps/v1")));
    assert!(!names_kind::<CloneSet>(&owner(
        "StatefulSet",
        "apps.kruise.io/v1beta1"
    )));
    let meta = ObjectMeta {
        namespace: Some("ns".into()),
        owner_references: Some(vec![owner("StatefulSet", "apps.kruise.io/v1beta1")]),
        ..ObjectMeta::default()
    };
    assert_eq!(
        controlling::<StatefulSet>(&meta),
        Some(ObjectRef::new("web").within("ns"))
    );
    assert_eq!(controlling::<CloneSet>(&meta), None);
}

#[tokio::test]
async fn a_failed_reconcile_is_counted_by_controller_and_reason() {
    use crate::api::DaemonSetBuilder;
    use crate::controller::daemonset::DaemonSetSeam;
    use crate::controller::tests::fake_apiserver::{Scenario, store_of, workload_context};
    let (client, server) = Scenario::new().start();
    let (pods, _pods) = store_of::<Pod>([]);
    let (summaries, _summaries) = store_of::<PodSummary>([]);
    let (nodes, _nodes) = store_of::<k8s_openapi::api::core::v1::Node>([]);
    let shell = Arc::new(Shell {
        context: workload_context(client, pods, summaries),
        seam: DaemonSetSeam::new(nodes),
    });
    let set = Arc::new(DaemonSetBuilder::new("agent").build());
    let conflict = WorkloadError::Api(ApiError {
        what: "pod agent-x".into(),
        source: kube::Error::Api(
            kube::core::Status::failure("the object has been modified", "Conflict")
                .with_code(409)
                .boxed(),
        ),
    });
    let plan = WorkloadError::Plan(crate::workload::PlanError::Unplannable("x".into()));
    for error in [&conflict, &conflict, &plan] {
        let again = error_policy(set.clone(), error, shell.clone());
        assert_eq!(again, Requeue::requeue(Duration::from_secs(5)));
    }
    let text = shell.context.metrics.encode();
    for line in [
        r#"controller_reconcile_failures_total{controller="daemonset-controller",reason="api_409"} 2"#,
        r#"controller_reconcile_failures_total{controller="daemonset-controller",reason="plan"} 1"#,
    ] {
        assert!(text.contains(line), "missing {line:?} in:\n{text}");
    }
    drop(shell);
    server.finish().await;
}

/// A span's name and its fields' names and values.
type SpanRecord = (String, Vec<(String, String)>);

/// The spans opened while it is the default subscriber.
#[derive(Clone, Default)]
struct SpanFields(Arc<std::sync::Mutex<Vec<SpanRecord>>>);

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for SpanFields {
    fn on_new_span(
        &self,
        attrs: &tracing::span::Attributes<'_>,
        _id: &tracing::span::Id,
        _ctx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        struct Fields(Vec<(String, String)>);
        impl tracing::field::Visit for Fields {
            fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
                self.0.push((field.name().into(), format!("{value:?}")));
            }
            fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
                self.0.push((field.name().into(), value.into()));
            }
        }
        let mut fields = Fields(Vec::new());
        attrs.record(&mut fields);
        let name = attrs.metadata().name().to_string();
        self.0.lock().unwrap().push((name, fields.0));
    }
}

#[tokio::test]
async fn every_reconcile_runs_in_a_span_naming_its_kind_namespace_and_name() {
    use crate::api::DaemonSetBuilder;
    use crate::controller::daemonset::DaemonSetSeam;
    use crate::controller::tests::fake_apiserver::{Scenario, store_of, workload_context};
    use tracing_subscriber::layer::SubscriberExt;
    let spans = SpanFields::default();
    let _default =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(spans.clone()));
    let (client, server) = Scenario::new().start();
    let (pods, _pods) = store_of::<Pod>([]);
    let (summaries, _summaries) = store_of::<PodSummary>([]);
    let (nodes, _nodes) = store_of::<k8s_openapi::api::core::v1::Node>([]);
    let context = workload_context(client, pods, summaries);
    // A create not shown yet: the round waits, sending nothing.
    context
        .lock_expectations()
        .expect_create("default/agent", "agent-x");
    let shell = Arc::new(Shell {
        context,
        seam: DaemonSetSeam::new(nodes),
    });
    let set = Arc::new(DaemonSetBuilder::new("agent").build());
    reconcile(set, shell.clone()).await.unwrap();
    drop(shell);
    server.finish().await;
    let spans = spans.0.lock().unwrap().clone();
    let fields = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    assert!(
        spans.contains(&(
            "reconcile".into(),
            fields(&[
                ("kind", "DaemonSet"),
                ("namespace", "default"),
                ("name", "agent")
            ])
        )),
        "{spans:?}"
    );
}
