use super::*;

#[test]
fn lowering_a_thread_leaves_the_others_alone() {
    let before = this_thread_nice().unwrap();
    let lowered = std::thread::spawn(|| {
        let nice = lower_this_thread(BACKGROUND_NICENESS).unwrap();
        let child = std::thread::spawn(|| this_thread_nice().unwrap())
            .join()
            .unwrap();
        (nice, this_thread_nice().unwrap(), child)
    })
    .join()
    .unwrap();
    let expected = (before + BACKGROUND_NICENESS).min(LOWEST_PRIORITY);
    assert_eq!(
        lowered,
        (expected, expected, expected),
        "the thread and the one it started"
    );
    assert_eq!(this_thread_nice().unwrap(), before, "the caller's thread");
}

#[test]
fn never_beyond_the_lowest_priority() {
    let nice = std::thread::spawn(|| {
        lower_this_thread(LOWEST_PRIORITY).unwrap();
        lower_this_thread(BACKGROUND_NICENESS).unwrap()
    })
    .join()
    .unwrap();
    assert_eq!(nice, LOWEST_PRIORITY);
}
