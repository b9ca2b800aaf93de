use super::*;
use crate::daemonset::tests::fixtures::*;

#[test]
fn surge_and_unavailable_round_up_only_for_rolling_updates() {
    let mut set = agent();
    rolling(&mut set).max_unavailable = percent("30%");
    rolling(&mut set).max_surge = percent("10%");
    assert_eq!(max_unavailable(&set, 4), Ok(2));
    assert_eq!(max_surge(&set, 4), Ok(1));
    assert!(allows_surge(&set));
    set.spec.update_strategy.type_ = Some("OnDelete".into());
    assert_eq!(max_unavailable(&set, 4), Ok(0));
    assert!(!allows_surge(&set));
    let mut set = agent();
    rolling(&mut set).max_unavailable = None;
    assert_eq!(max_unavailable(&set, 4), Ok(0));
    rolling(&mut set).max_surge = percent("x");
    assert!(max_surge(&set, 4).is_err());
    assert!(!allows_surge(&set));
}

#[test]
fn partition_and_burst_round_down_against_the_previous_desired_count() {
    let mut set = agent();
    assert_eq!(partition(&set, 3), None);
    rolling(&mut set).partition = percent("50%");
    assert_eq!(partition(&set, 3), Some(Ok(1)));
    assert_eq!(partition(&set, 0), Some(Ok(0)));
    rolling(&mut set).partition = percent("5");
    assert!(matches!(partition(&set, 3), Some(Err(_))));

    assert_eq!(burst_replicas(&set, 0), 250);
    set.spec.burst_replicas = None;
    assert_eq!(burst_replicas(&set, 0), DEFAULT_BURST_REPLICAS as usize);
    set.spec.burst_replicas = percent("50%");
    assert_eq!(burst_replicas(&set, 0), 0, "nothing the first round");
    assert_eq!(burst_replicas(&set, 5), 2);
    set.spec.burst_replicas = percent("oops");
    assert_eq!(burst_replicas(&set, 5), 0);
}

#[test]
fn paused_and_progressive_creation() {
    let mut set = agent();
    assert!(!paused(&set) && !creates_progressively(&set));
    rolling(&mut set).paused = Some(true);
    assert!(paused(&set));
    // v1alpha1's annotation is converted into the field; on v1beta1 it is not read.
    set.metadata.annotations = Some(
        [(
            "daemonset.kruise.io/progressive-create-pod".to_string(),
            "true".to_string(),
        )]
        .into(),
    );
    assert!(!creates_progressively(&set));
    set.spec.scale_strategy = Some(crate::api::daemonset::DaemonSetScaleStrategy {
        partitioned_scaling: Some(true),
    });
    assert!(creates_progressively(&set));
}
