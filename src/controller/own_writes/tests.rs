use super::*;

#[test]
fn a_round_behind_the_last_write_waits_until_the_cache_shows_it() {
    let mut writes = OwnWrites::default();
    let t0 = Instant::now();
    assert_eq!(
        writes.behind("ns/web", Some("10"), t0),
        None,
        "nothing written"
    );
    writes.wrote("ns/web", Some("12"), t0);
    let later = t0 + Duration::from_secs(2);
    assert_eq!(
        writes.behind("ns/web", Some("10"), later),
        Some(TIMEOUT - Duration::from_secs(2))
    );
    assert_eq!(writes.behind("ns/other", Some("1"), later), None);
    // The cache shows the write (or anything newer): the record goes.
    assert_eq!(writes.behind("ns/web", Some("12"), later), None);
    assert_eq!(writes.behind("ns/web", Some("10"), later), None);
    writes.wrote("ns/web", Some("20"), t0);
    assert_eq!(writes.behind("ns/web", Some("25"), later), None);
    assert!(writes.by_key.is_empty());
}

#[test]
fn an_older_answer_never_lowers_the_record() {
    let mut writes = OwnWrites::default();
    let t0 = Instant::now();
    writes.wrote("web", Some("30"), t0);
    writes.wrote("web", Some("29"), t0);
    assert!(writes.behind("web", Some("29"), t0).is_some());
    writes.wrote("web", Some("31"), t0);
    assert!(writes.behind("web", Some("30"), t0).is_some());
}

#[test]
fn a_lost_event_stalls_nothing_for_ever() {
    let mut writes = OwnWrites::default();
    let t0 = Instant::now();
    writes.wrote("web", Some("30"), t0);
    assert!(writes.behind("web", Some("10"), t0 + TIMEOUT).is_none());
    assert!(writes.by_key.is_empty());
}

#[test]
fn versions_that_are_not_numbers_are_not_compared() {
    let mut writes = OwnWrites::default();
    let t0 = Instant::now();
    writes.wrote("web", Some("abc"), t0);
    writes.wrote("web", None, t0);
    assert!(writes.by_key.is_empty());
    writes.wrote("web", Some("30"), t0);
    assert_eq!(writes.behind("web", Some("x"), t0), None);
    assert_eq!(writes.behind("web", None, t0), None);
}

#[test]
fn records_of_objects_no_round_comes_back_to_are_swept() {
    let mut writes = OwnWrites::default();
    let t0 = Instant::now();
    for i in 0..PRUNE_FLOOR - 1 {
        writes.wrote(&format!("gone-{i}"), Some("5"), t0);
    }
    let later = t0 + TIMEOUT;
    writes.wrote("web", Some("7"), later);
    assert_eq!(writes.by_key.len(), 1);
    assert!(writes.behind("web", Some("6"), later).is_some());
}
