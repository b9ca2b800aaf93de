use super::*;
use crate::daemonset::node::TaintEffect;
use crate::daemonset::tests::fixtures::*;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

fn named(set: &DaemonSet) -> &str {
    set.metadata.name.as_deref().unwrap()
}

#[test]
fn new_changed_and_unchanged_nodes() {
    let mut selective = agent();
    selective.metadata.name = Some("selective".into());
    selective.spec.template.spec.as_mut().unwrap().node_selector =
        Some([("role".to_string(), "agent".to_string())].into());
    let mut canary = agent();
    canary.metadata.name = Some("canary".into());
    rolling(&mut canary).selector = Some(LabelSelector {
        match_labels: Some([("canary".to_string(), "true".to_string())].into()),
        ..Default::default()
    });
    let sets = [agent(), selective, canary];
    fn names(found: Vec<&DaemonSet>) -> Vec<&str> {
        found.into_iter().map(named).collect()
    }

    let plain = node("n1");
    assert_eq!(names(concerned(&sets, None, &plain)), ["agent", "canary"]);
    assert!(concerned(&sets, Some(&plain), &plain).is_empty());
    let agent_node = labelled("n1", &[("role", "agent")]);
    assert_eq!(
        names(concerned(&sets, Some(&plain), &agent_node)),
        ["selective"]
    );
    let canary_node = labelled("n1", &[("canary", "true")]);
    assert_eq!(
        names(concerned(&sets, Some(&plain), &canary_node)),
        ["canary"]
    );
    // A label no one reads: nothing.
    let other = labelled("n1", &[("team", "x")]);
    assert!(concerned(&sets, Some(&plain), &other).is_empty());
    // A NoSchedule taint: (true, true) becomes (false, true) for all that ran there.
    let tainted = tainted("n1", "k", TaintEffect::NoSchedule);
    assert_eq!(
        names(concerned(&sets, Some(&plain), &tainted)),
        ["agent", "canary"]
    );
}
