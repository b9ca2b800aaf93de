use super::*;
use crate::migrate::plan::{Finding, Step};

#[test]
fn the_text_report_numbers_the_steps_and_says_when_blocked() {
    let plan = Plan {
        findings: vec![Finding::StoredVersionNotServed {
            crd: "daemonsets.apps.kruise.io".into(),
            versions: vec!["v2".into()],
        }],
        steps: vec![Step::ScaleManagerToZero {
            deployment: "kruise-system/kruise-controller-manager".into(),
        }],
        blocked: true,
    };
    let text = text_report(&plan);
    assert!(
        text.contains("  - daemonsets.apps.kruise.io: status.storedVersions holds v2"),
        "{text}"
    );
    assert!(
        text.contains("  1. scale kruise-system/kruise-controller-manager to 0"),
        "{text}"
    );
    assert!(text.ends_with("--apply takes no step until the findings above are resolved"));
}

#[test]
fn an_empty_plan_says_there_is_nothing_to_do() {
    assert_eq!(
        text_report(&Plan::default()),
        "Findings: none\nSteps: none (nothing to do)"
    );
}
