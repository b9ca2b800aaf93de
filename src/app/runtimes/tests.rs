use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;

use super::*;
use crate::priority::{BACKGROUND_NICENESS, this_thread_nice};

#[test]
fn controller_threads_run_at_a_lower_priority_than_admission_threads() {
    let process = this_thread_nice().unwrap();
    let controllers = controllers().unwrap();
    let admission = admission().unwrap();
    let worker = controllers.block_on(controllers.spawn(async { this_thread_nice().unwrap() }));
    let blocking = controllers.block_on(controllers.spawn_blocking(|| this_thread_nice().unwrap()));
    let lowered = (process + BACKGROUND_NICENESS).min(19);
    assert_eq!(worker.unwrap(), lowered, "a controller worker");
    assert_eq!(blocking.unwrap(), lowered, "a controller blocking thread");
    let admission_worker =
        admission.block_on(admission.spawn(async { this_thread_nice().unwrap() }));
    assert_eq!(admission_worker.unwrap(), process, "an admission worker");
    assert_eq!(
        this_thread_nice().unwrap(),
        process,
        "the thread that built them"
    );
}

/// Every worker of the controllers' runtime held by a task that does not yield (a reconcile
/// storm at its worst): a task on the admission runtime, timer included, still runs to its end,
/// while a task spawned on the controllers' runtime meanwhile waits for a free worker.
#[test]
fn admission_runs_while_every_controller_worker_is_held() {
    let controllers = controllers().unwrap();
    let admission = admission().unwrap();
    let workers = controllers.metrics().num_workers();
    let held = Arc::new(Barrier::new(workers + 1));
    let released = Arc::new(Barrier::new(workers + 1));
    for _ in 0..workers {
        let (held, released) = (held.clone(), released.clone());
        controllers.spawn(async move {
            held.wait();
            released.wait();
        });
    }
    held.wait();
    let queued = Arc::new(AtomicBool::new(false));
    let queued_ran = {
        let queued = queued.clone();
        controllers.spawn(async move { queued.store(true, Ordering::SeqCst) })
    };

    let answered = admission.block_on(admission.spawn(async {
        tokio::time::sleep(Duration::from_millis(1)).await;
        "answered"
    }));
    assert_eq!(answered.unwrap(), "answered");
    assert!(
        !queued.load(Ordering::SeqCst),
        "every controller worker was held while admission ran"
    );

    released.wait();
    controllers.block_on(queued_ran).unwrap();
    assert!(queued.load(Ordering::SeqCst));
}
