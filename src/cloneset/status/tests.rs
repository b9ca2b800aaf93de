use super::*;

#[test]
fn only_generation_counters_revisions_and_selector_are_written_on_their_own() {
    let old = CloneSetStatus {
        observed_generation: Some(2),
        replicas: 3,
        expected_updated_replicas: Some(3),
        update_revision: Some("web-1".into()),
        current_revision: Some("web-1".into()),
        collision_count: Some(0),
        label_selector: Some("app=web".into()),
        ..CloneSetStatus::default()
    };
    let with = |change: fn(&mut CloneSetStatus)| {
        let mut next = old.clone();
        change(&mut next);
        changed(Some(&old), &next)
    };
    assert!(!with(|_| {}));
    assert!(!with(|s| s.collision_count = Some(1)));
    assert!(!with(|s| {
        record_failure(s, "FailedScale", "quota", Timestamp::UNIX_EPOCH);
        record_failure(s, "FailedUpdate", "refused", Timestamp::UNIX_EPOCH);
    }));
    assert!(!with(|s| s.observed_generation = Some(1)));
    assert!(with(|s| s.observed_generation = Some(3)));
    assert!(with(|s| s.replicas = 2));
    assert!(with(|s| s.ready_replicas = 1));
    assert!(with(|s| s.available_replicas = 1));
    assert!(with(|s| s.updated_replicas = 1));
    assert!(with(|s| s.updated_ready_replicas = 1));
    assert!(with(|s| s.updated_available_replicas = 1));
    assert!(with(|s| s.expected_updated_replicas = Some(2)));
    assert!(with(|s| s.update_revision = Some("web-2".into())));
    assert!(with(|s| s.current_revision = Some("web-2".into())));
    assert!(with(|s| s.label_selector = None));
    // Nothing written yet: any status with a revision is news.
    assert!(changed(None, &old));
}
