use super::*;

#[test]
fn the_soft_limit_is_raised_to_the_hard_limit() {
    let hard = getrlimit(Resource::Nofile).maximum;
    // Start from Linux's default soft limit when the hard limit allows it (raising the soft
    // limit back is always allowed).
    let start = hard.map_or(1024, |hard| hard.min(1024));
    setrlimit(
        Resource::Nofile,
        Rlimit {
            current: Some(start),
            maximum: hard,
        },
    )
    .unwrap();
    let raised = raise_soft_limit().unwrap();
    assert_eq!(raised.before, Some(start));
    assert_eq!(raised.after, hard);
    assert_eq!(soft_limit(), hard);
    // A second call finds nothing to raise.
    let again = raise_soft_limit().unwrap();
    assert_eq!(
        again,
        SoftLimit {
            before: hard,
            after: hard
        }
    );
}
