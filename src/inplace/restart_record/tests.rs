use super::*;

fn status(name: &str, id: &str, restarts: i32) -> ContainerStatus {
    ContainerStatus {
        name: name.into(),
        container_id: Some(id.into()),
        restart_count: restarts,
        ..Default::default()
    }
}

#[test]
fn first_record_of_a_revision_wins_and_another_revision_replaces_it() {
    let mut pod = Pod::default();
    let now = Timestamp::UNIX_EPOCH;
    record_patch(&mut pod, "r1", now, &[status("main", "containerd://a", 0)]);
    record_patch(&mut pod, "r1", now, &[status("main", "containerd://b", 1)]);
    let record = read_record(&pod).unwrap();
    assert_eq!(record.containers["main"].container_id, "containerd://a");
    record_patch(&mut pod, "r2", now, &[status("main", "containerd://b", 1)]);
    let record = read_record(&pod).unwrap();
    assert_eq!(record.revision, "r2");
    assert_eq!(record.containers["main"].restart_count, 1);
}

#[test]
fn a_restart_is_a_new_container_id_or_a_higher_count() {
    let start = ContainerStart::of(&status("main", "containerd://a", 2));
    assert!(!start.restarted_in(&status("main", "containerd://a", 2)));
    assert!(start.restarted_in(&status("main", "containerd://b", 2)));
    assert!(start.restarted_in(&status("main", "containerd://a", 3)));
    // A status without an ID yet (container being created) is not a restart by itself.
    assert!(!start.restarted_in(&status("main", "", 2)));
}
