use std::cell::Cell;

use kube::core::Status;

use super::*;

fn api_error(code: u16) -> kube::Error {
    kube::Error::Api(Box::new(Status::failure("refused", "").with_code(code)))
}

#[tokio::test]
async fn starts_over_until_done_and_stops_at_the_bound() {
    let calls = Cell::new(0);
    let done_on_third = retry_on_conflict(5, (), |()| {
        calls.set(calls.get() + 1);
        let n = calls.get();
        async move {
            Ok::<_, ()>(if n == 3 {
                Attempt::Done(n)
            } else {
                Attempt::Again(())
            })
        }
    })
    .await;
    assert_eq!(done_on_third, Ok(Some(3)));
    assert_eq!(calls.get(), 3);

    calls.set(0);
    let never = retry_on_conflict(4, (), |()| {
        calls.set(calls.get() + 1);
        async { Ok::<Attempt<()>, ()>(Attempt::Again(())) }
    })
    .await;
    assert_eq!(never, Ok(None));
    assert_eq!(calls.get(), 4);
}

#[tokio::test]
async fn each_attempt_starts_from_what_the_one_before_handed_on() {
    let mut seen = Vec::new();
    let done = retry_on_conflict(5, 10, |from: i32| {
        seen.push(from);
        async move {
            Ok::<_, ()>(if from == 12 {
                Attempt::Done(from * 2)
            } else {
                Attempt::Again(from + 1)
            })
        }
    })
    .await;
    assert_eq!(done, Ok(Some(24)));
    assert_eq!(seen, [10, 11, 12]);
}

#[tokio::test]
async fn an_error_ends_the_retries() {
    let calls = Cell::new(0);
    let failed = retry_on_conflict(5, (), |()| {
        calls.set(calls.get() + 1);
        async { Err::<Attempt<()>, _>("boom") }
    })
    .await;
    assert_eq!(failed, Err("boom"));
    assert_eq!(calls.get(), 1);
}

#[test]
fn only_a_conflict_starts_over() {
    assert!(matches!(again_on_conflict(Ok(7)), Ok(Attempt::Done(7))));
    assert!(matches!(
        again_on_conflict::<()>(Err(api_error(409))),
        Ok(Attempt::Again(()))
    ));
    assert!(matches!(
        again_on_conflict::<()>(Err(api_error(404))),
        Err(kube::Error::Api(_))
    ));
}
