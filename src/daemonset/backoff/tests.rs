use super::*;

fn at(seconds: i64) -> Timestamp {
    Timestamp::from_second(1_000_000 + seconds).unwrap()
}

#[test]
fn doubles_from_one_second_to_fifteen_minutes() {
    let mut backoff = FailedPodBackoff::default();
    let k = key("uid", 3, "n1");
    assert_eq!(k, "uid/3/n1");
    assert_eq!(backoff.remaining(&k, at(0)), None);
    let mut now = 0;
    let mut windows = Vec::new();
    for _ in 0..12 {
        backoff.advance(&k, at(now));
        windows.push(backoff.window(&k).as_secs());
        now += backoff.window(&k).as_secs() as i64;
    }
    assert_eq!(windows, [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 900, 900]);
}

#[test]
fn inside_the_window_the_rest_of_it_is_left() {
    let mut backoff = FailedPodBackoff::default();
    backoff.advance("k", at(0));
    backoff.advance("k", at(1));
    assert_eq!(backoff.window("k"), Duration::from_secs(2));
    assert_eq!(backoff.remaining("k", at(1)), Some(Duration::from_secs(2)));
    assert_eq!(backoff.remaining("k", at(2)), Some(Duration::from_secs(1)));
    assert_eq!(backoff.remaining("k", at(3)), None);
    assert_eq!(backoff.remaining("other", at(2)), None);
}

#[test]
fn a_quiet_key_starts_over_and_is_collected() {
    let mut backoff = FailedPodBackoff::default();
    for second in 0..5 {
        backoff.advance("k", at(second));
    }
    assert_eq!(backoff.window("k"), Duration::from_secs(16));
    let later = at(4 + 30 * 60 + 1);
    backoff.collect_garbage(at(4 + 30 * 60));
    assert_eq!(
        backoff.len(),
        1,
        "exactly twice the maximum is not yet expired"
    );
    assert_eq!(backoff.remaining("k", later), None);
    backoff.advance("k", later);
    assert_eq!(backoff.window("k"), INITIAL);
    backoff.collect_garbage(later + SignedDuration::from_secs(30 * 60 + 1));
    assert!(backoff.is_empty());
}
