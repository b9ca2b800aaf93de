use super::*;
use std::sync::atomic::{AtomicUsize, Ordering};

#[test]
fn a_deferred_pod_is_built_once_on_first_read() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let mut listed = Pod::default();
    listed.metadata.name = Some("web-0".into());
    let after = PodAfter::deferred(
        Arc::new(listed),
        Arc::new(move |p: &Pod| {
            counter.fetch_add(1, Ordering::SeqCst);
            let mut p = p.clone();
            p.metadata.uid = Some("changed".into());
            p
        }),
    );
    let copy = after.duplicate();
    assert!(!after.is_built());
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    assert_eq!(after.metadata.uid.as_deref(), Some("changed"));
    assert_eq!(after.metadata.name.as_deref(), Some("web-0"));
    assert!(after.is_built());
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    let pod: Pod = after.clone();
    assert_eq!(pod.metadata.uid.as_deref(), Some("changed"));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert!(!copy.is_built());
    assert_eq!(copy, after);
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert_eq!(format!("{copy:?}"), format!("{pod:?}"));
}
